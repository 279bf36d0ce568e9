//! The credentials Zest's own clients (the CLI's commands, `zest bench`) send to a node with
//! `--auth basic`: Basic with the user and password of Camunda's client variables
//! `CAMUNDA_BASIC_AUTH_USERNAME` and `CAMUNDA_BASIC_AUTH_PASSWORD`, on every gRPC call (an
//! interceptor) and REST request. Without them, nothing is sent.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// A channel whose calls carry the credentials.
pub type AuthChannel = InterceptedService<Channel, Basic>;

/// The `Authorization` value to send, if any.
#[derive(Clone, Default)]
pub struct Basic(Option<MetadataValue<Ascii>>);

impl Basic {
    /// From `CAMUNDA_BASIC_AUTH_USERNAME` and `CAMUNDA_BASIC_AUTH_PASSWORD`.
    pub fn from_env() -> Basic {
        let user = std::env::var("CAMUNDA_BASIC_AUTH_USERNAME").ok();
        let password = std::env::var("CAMUNDA_BASIC_AUTH_PASSWORD").unwrap_or_default();
        Basic(
            user.filter(|u| !u.is_empty())
                .and_then(|u| header(&u, &password).parse().ok()),
        )
    }

    /// The header's value, for REST clients.
    pub fn header(&self) -> Option<String> {
        self.0
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
}

fn header(user: &str, password: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{user}:{password}")))
}

impl tonic::service::Interceptor for Basic {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            request.metadata_mut().insert("authorization", v.clone());
        }
        Ok(request)
    }
}

/// A gateway client over `channel` that sends the credentials.
pub fn client(channel: Channel) -> zest_gateway::proto::gateway_client::GatewayClient<AuthChannel> {
    zest_gateway::proto::gateway_client::GatewayClient::with_interceptor(channel, Basic::from_env())
}

#[cfg(test)]
mod tests {
    #[test]
    fn basic_is_user_colon_password_in_base64() {
        assert_eq!(super::header("demo", "demo"), "Basic ZGVtbzpkZW1v");
    }
}
