//! Where the CLI's commands go and how their failures read: the gateway address (zbctl's
//! `--address`, `--host`, `--port`, `ZEEBE_ADDRESS`), timeouts, and one clear line for every
//! error, naming the port it reached when that port is not a gRPC gateway.

use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zest_gateway::proto::gateway_client::GatewayClient;

use super::print::parse_duration;

pub type Client = GatewayClient<crate::credentials::AuthChannel>;

/// How long the CLI waits for a TCP connection (and the HTTP/2 handshake) to the gateway.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The gateway a client command talks to, with zbctl's flags and environment variables.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ConnArgs {
    /// Gateway address host:port (default 127.0.0.1:26500; environment ZEEBE_ADDRESS)
    #[arg(long, env = "ZEEBE_ADDRESS")]
    pub address: Option<String>,
    /// Host part of the gateway address (environment ZEEBE_HOST)
    #[arg(long, env = "ZEEBE_HOST")]
    pub host: Option<String>,
    /// Port part of the gateway address (environment ZEEBE_PORT)
    #[arg(long, env = "ZEEBE_PORT")]
    pub port: Option<u16>,
    /// Timeout of each request, e.g. 300ms, 50s or 1m (default 10s)
    #[arg(long = "requestTimeout", alias = "request-timeout", value_parser = parse_duration)]
    pub request_timeout: Option<Duration>,
    /// Accepted for zbctl's sake: without --certPath the connection is plaintext
    #[arg(long, env = "ZEEBE_INSECURE_CONNECTION")]
    pub insecure: bool,
    /// PEM file of the CA (or the certificate) to trust: connect over TLS (zbctl's --certPath,
    /// environment ZEEBE_CA_CERTIFICATE_PATH)
    #[arg(
        long = "certPath",
        alias = "cert-path",
        env = "ZEEBE_CA_CERTIFICATE_PATH"
    )]
    pub cert_path: Option<PathBuf>,
    /// Output format of commands with a human form: human (default) or json
    #[arg(long, short = 'o')]
    pub output: Option<Output>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Human,
    Json,
}

impl ConnArgs {
    /// These settings, with those given before the command word filling the gaps.
    pub fn or(self, outer: &ConnArgs) -> ConnArgs {
        ConnArgs {
            address: self.address.or_else(|| outer.address.clone()),
            host: self.host.or_else(|| outer.host.clone()),
            port: self.port.or(outer.port),
            request_timeout: self.request_timeout.or(outer.request_timeout),
            insecure: self.insecure || outer.insecure,
            cert_path: self.cert_path.or_else(|| outer.cert_path.clone()),
            output: self.output.or(outer.output),
        }
    }

    /// host:port, as zbctl resolves it: host or port given (flag or environment) win over the
    /// address; a missing part takes the default.
    pub fn target(&self) -> String {
        if self.host.is_some() || self.port.is_some() {
            let host = self.host.as_deref().unwrap_or("127.0.0.1");
            return format!("{host}:{}", self.port.unwrap_or(26500));
        }
        match &self.address {
            Some(a) => {
                let a = a
                    .trim_start_matches("http://")
                    .trim_start_matches("https://")
                    .trim_end_matches('/');
                if a.rsplit_once(':')
                    .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
                {
                    a.to_string()
                } else {
                    format!("{a}:26500")
                }
            }
            None => "127.0.0.1:26500".into(),
        }
    }

    pub fn timeout(&self) -> Duration {
        self.request_timeout.unwrap_or(Duration::from_secs(10))
    }

    pub fn json(&self) -> bool {
        self.output == Some(Output::Json)
    }

    /// A client of the gateway; requests that get no answer within the request timeout fail.
    pub async fn connect(&self) -> Result<Client, CliError> {
        self.connect_with(Some(self.timeout())).await
    }

    /// A client whose requests have no deadline of their own (long-running streams and
    /// workers set one per request).
    pub async fn connect_with(&self, timeout: Option<Duration>) -> Result<Client, CliError> {
        let target = self.target();
        let mut endpoint = crate::tls::endpoint(&target, self.cert_path.as_deref())
            .map_err(|e| CliError::Usage(format!("{e:#}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true);
        if let Some(t) = timeout {
            endpoint = endpoint.timeout(t);
        }
        let channel = tokio::time::timeout(CONNECT_TIMEOUT, endpoint.connect())
            .await
            .map_err(|_| {
                CliError::Connect(format!(
                    "the gateway at {target} did not answer within {CONNECT_TIMEOUT:?}"
                ))
            })?
            .map_err(|e| {
                let cause = root_cause(&e);
                if self.cert_path.is_some() && cause.contains("InvalidContentType") {
                    return CliError::Connect(format!(
                        "the gateway at {target} does not speak TLS: leave --certPath (and \
                         ZEEBE_CA_CERTIFICATE_PATH) out"
                    ));
                }
                CliError::Connect(format!(
                    "cannot connect to the gateway at {target}: {cause} (is `zest start` \
                     running? Set the address with --address or ZEEBE_ADDRESS)"
                ))
            })?;
        Ok(crate::credentials::client(channel)
            .max_decoding_message_size(64 * 1024 * 1024)
            .max_encoding_message_size(64 * 1024 * 1024))
    }

    /// The error of a failed request, in one line.
    pub async fn failed(&self, status: tonic::Status) -> CliError {
        let target = self.target();
        // a TLS port drops a plaintext client: the call fails in its transport
        use tonic::Code::{Cancelled, Internal, Unavailable, Unknown};
        let dropped = matches!(status.code(), Unknown | Unavailable | Internal | Cancelled);
        if dropped && self.cert_path.is_none() && speaks_tls(&target).await {
            return CliError::Connect(format!(
                "the gateway at {target} speaks TLS: give the CA of its certificate with \
                 --certPath (or ZEEBE_CA_CERTIFICATE_PATH)"
            ));
        }
        if let Some(found) = wrong_port(&status, &target).await {
            return CliError::Connect(found);
        }
        if status.code() == tonic::Code::Unavailable && status.message().contains("connect") {
            return CliError::Connect(format!(
                "cannot reach the gateway at {target}: {}",
                status.message()
            ));
        }
        if status.code() == tonic::Code::Cancelled && status.message().contains("Timeout expired") {
            return CliError::Status(tonic::Status::deadline_exceeded(format!(
                "no answer from the gateway at {target} within the request timeout of {:?} \
                 (--requestTimeout)",
                self.timeout()
            )));
        }
        CliError::Status(status)
    }
}

/// What went wrong in a CLI command: printed as one line on stderr, exit status 1.
#[derive(Debug)]
pub enum CliError {
    /// The gateway answered with an error status.
    Status(tonic::Status),
    /// No gateway could be reached (or not a gateway).
    Connect(String),
    /// Bad arguments or input files.
    Usage(String),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // zbctl's form, which scripts written for zbctl look for
            CliError::Status(s) => write!(
                f,
                "rpc error: code = {} desc = {}",
                code_name(s.code()),
                s.message().replace('\n', " ")
            ),
            CliError::Connect(m) | CliError::Usage(m) => f.write_str(m),
        }
    }
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        CliError::Usage(format!("{e:#}"))
    }
}

/// The gRPC status code as Go's grpc names it (`NotFound`), as zbctl prints it.
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "Canceled",
        Unknown => "Unknown",
        InvalidArgument => "InvalidArgument",
        DeadlineExceeded => "DeadlineExceeded",
        NotFound => "NotFound",
        AlreadyExists => "AlreadyExists",
        PermissionDenied => "PermissionDenied",
        ResourceExhausted => "ResourceExhausted",
        FailedPrecondition => "FailedPrecondition",
        Aborted => "Aborted",
        OutOfRange => "OutOfRange",
        Unimplemented => "Unimplemented",
        Internal => "Internal",
        Unavailable => "Unavailable",
        DataLoss => "DataLoss",
        Unauthenticated => "Unauthenticated",
    }
}

fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// A failure that says the address answered, but not as a gRPC gateway (an HTTP/1 server, or
/// an HTTP/2 one without gRPC): says which port it reached and where the gateway is.
async fn wrong_port(status: &tonic::Status, target: &str) -> Option<String> {
    let m = status.message();
    let not_grpc = m.contains("grpc-status header missing")
        || m.contains("invalid compression flag")
        || m.contains("protocol error")
        || m.contains("frame with invalid size")
        || m.contains("connection error");
    if !not_grpc {
        return None;
    }
    let what = match probe_http(target).await {
        Some(Probe::Rest { grpc_port }) => {
            let host = target.rsplit_once(':').map(|(h, _)| h).unwrap_or(target);
            format!(
                "{target} is a Camunda REST API (Zest serves it on 8080 by default), not the \
                 gRPC gateway; the gateway of that node is at {host}:{grpc_port}: use \
                 --address {host}:{grpc_port}"
            )
        }
        Some(Probe::Management) => format!(
            "{target} is Zest's management port (metrics and health, 9600 by default), not \
             the gRPC gateway (26500 by default): use --address with the gateway's port"
        ),
        Some(Probe::OtherHttp) => format!(
            "{target} answers HTTP, but is not a Zeebe gRPC gateway (Zest's listens on 26500 \
             by default): check --address or ZEEBE_ADDRESS"
        ),
        None => format!(
            "{target} answered, but not as a Zeebe gRPC gateway ({m}); Zest's gateway listens \
             on 26500 by default: check --address or ZEEBE_ADDRESS"
        ),
    };
    Some(what)
}

/// Whether `target` is a TLS server: it answers plaintext bytes with a TLS alert record.
async fn speaks_tls(target: &str) -> bool {
    let exchange = async {
        let mut s = tokio::net::TcpStream::connect(target).await.ok()?;
        s.write_all(b"GET / HTTP/1.0\r\n\r\n").await.ok()?;
        let mut head = [0u8; 3];
        s.read_exact(&mut head).await.ok()?;
        // content type 21 (alert), protocol version 3.x
        Some(head[0] == 0x15 && head[1] == 0x03)
    };
    matches!(
        tokio::time::timeout(CONNECT_TIMEOUT, exchange).await,
        Ok(Some(true))
    )
}

enum Probe {
    Rest { grpc_port: u16 },
    Management,
    OtherHttp,
}

/// Asks an HTTP/1 server at `target` what it is: a REST API answers `/v2/topology` (whose
/// brokers carry the gRPC port), Zest's management port answers `/ready`.
async fn probe_http(target: &str) -> Option<Probe> {
    let (code, body) = http_get(target, "/v2/topology").await?;
    if code == 200 {
        let doc: serde_json::Value = serde_json::from_str(&body).ok()?;
        let port = doc["brokers"][0]["port"].as_u64().unwrap_or(26500);
        return Some(Probe::Rest {
            grpc_port: port as u16,
        });
    }
    match http_get(target, "/ready").await {
        Some((_, body)) if body.contains("READY") => Some(Probe::Management),
        _ => Some(Probe::OtherHttp),
    }
}

/// A plain HTTP/1.1 GET: status code and body, or None when the peer does not speak it.
async fn http_get(target: &str, path: &str) -> Option<(u16, String)> {
    let exchange = async {
        let mut s = tokio::net::TcpStream::connect(target).await.ok()?;
        let req = format!("GET {path} HTTP/1.1\r\nHost: {target}\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.ok()?;
        let mut buf = Vec::new();
        s.take(1 << 20).read_to_end(&mut buf).await.ok()?;
        let text = String::from_utf8_lossy(&buf).into_owned();
        let code = text
            .strip_prefix("HTTP/1.")?
            .get(2..5)?
            .parse::<u16>()
            .ok()?;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
        Some((code, body))
    };
    tokio::time::timeout(Duration::from_secs(2), exchange)
        .await
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_follows_zbctls_rules() {
        let c = |address: Option<&str>, host: Option<&str>, port: Option<u16>| ConnArgs {
            address: address.map(String::from),
            host: host.map(String::from),
            port,
            ..ConnArgs::default()
        };
        assert_eq!(c(None, None, None).target(), "127.0.0.1:26500");
        assert_eq!(c(Some("zeebe:26600"), None, None).target(), "zeebe:26600");
        assert_eq!(c(Some("zeebe"), None, None).target(), "zeebe:26500");
        assert_eq!(c(Some("http://h:1/"), None, None).target(), "h:1");
        assert_eq!(c(Some("a:1"), Some("b"), None).target(), "b:26500");
        assert_eq!(c(None, None, Some(7)).target(), "127.0.0.1:7");
    }

    #[test]
    fn status_errors_read_like_zbctls() {
        let e = CliError::Status(tonic::Status::not_found("no such\ninstance"));
        assert_eq!(
            e.to_string(),
            "rpc error: code = NotFound desc = no such instance"
        );
    }
}
