//! The REST side of authentication (the REST API, the UI's API, the management port): a
//! request needs Basic credentials (OIDC: a bearer token) or, from the web UI, its session cookie. Let in without
//! them: the UI's pages and assets, its login and logout, `POST /v2/setup/user` (which checks
//! itself that no admin exists), and on the management port the probes and `/metrics`.
//!
//! A request that changes state with only a session cookie must also carry `X-Requested-With`
//! (the UI sends it): a form on another site cannot set that header, so a cookie a browser
//! sends along cannot make it change anything. A 401 carries `WWW-Authenticate: Basic`, except
//! to the UI (`X-Requested-With`), whose own login page takes its place of the browser's
//! (`Bearer` with OIDC, where a request needs a bearer token and cookies are not taken).

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method as HttpMethod, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Auth, Denied};
use crate::intake::Peer;
use crate::rest::Problem;

/// Paths any client reaches without credentials.
fn public(method: &HttpMethod, path: &str) -> bool {
    let ui_page = ["/operate", "/tasklist", "/ui/", "/login"]
        .iter()
        .any(|p| path.starts_with(p))
        && !path.starts_with("/operate/api/");
    let probe = [
        "/ready",
        "/health",
        "/startup",
        "/metrics",
        "/actuator/health",
        "/actuator/prometheus",
    ]
    .iter()
    .any(|p| path == *p || path.starts_with(&format!("{p}/")));
    path == "/"
        || path == "/favicon.ico"
        || path == "/logout"
        || (ui_page && (method == HttpMethod::GET || path == "/login"))
        || probe
        || (method == HttpMethod::POST && path == "/v2/setup/user")
}

fn changes_state(method: &HttpMethod) -> bool {
    !matches!(
        *method,
        HttpMethod::GET | HttpMethod::HEAD | HttpMethod::OPTIONS
    )
}

/// The middleware: lets the request in with its [`super::Principal`] in its extensions, or
/// answers 401 (403 for a cookie without `X-Requested-With` on a change, 429 after too many
/// failed tries, 503 while the users cannot be read).
pub async fn require(State(auth): State<Auth>, mut request: Request, next: Next) -> Response {
    if !auth.is_on() || public(request.method(), request.uri().path()) {
        return next.run(request).await;
    }
    let peer = request.extensions().get::<Peer>().map(|p| p.0);
    let from_ui = request.headers().contains_key("x-requested-with");
    let uri = request.uri().clone();
    let over_tls = request.extensions().get::<super::OverTls>().is_some();
    match auth
        .authenticate(request.headers(), peer, true, over_tls)
        .await
    {
        Ok(credentials) => {
            if credentials.by_cookie && changes_state(request.method()) && !from_ui {
                return Problem::titled(
                    StatusCode::FORBIDDEN,
                    "FORBIDDEN",
                    "Expected a request that changes state with a session cookie to carry the X-Requested-With header, but it has none",
                    &uri,
                )
                .into_response();
            }
            let renewed = credentials.renewed.clone();
            request.extensions_mut().insert(credentials.principal);
            let mut response = next.run(request).await;
            if let Some(cookie) = renewed.and_then(|c| HeaderValue::from_str(&c).ok()) {
                response.headers_mut().append(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(denied) => {
            let mut response = refusal(&denied, &uri, from_ui);
            if matches!(auth.method(), super::Method::Oidc(_))
                && response.headers().contains_key(header::WWW_AUTHENTICATE)
            {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"zest\""),
                );
            }
            response
        }
    }
}

/// The answer to a request that is not let in.
pub fn refusal(denied: &Denied, uri: &axum::http::Uri, from_ui: bool) -> Response {
    let (status, title) = match denied {
        Denied::TooManyTries => (StatusCode::TOO_MANY_REQUESTS, "RESOURCE_EXHAUSTED"),
        Denied::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE"),
        Denied::Missing | Denied::Invalid(_) => (StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
    };
    let mut response = Problem::titled(status, title, denied.message(), uri).into_response();
    if status == StatusCode::UNAUTHORIZED && !from_ui {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"zest\", charset=\"UTF-8\""),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pages_probes_login_and_setup_are_public() {
        let get = HttpMethod::GET;
        let post = HttpMethod::POST;
        for (m, p) in [
            (&get, "/operate"),
            (&get, "/operate/processes/1"),
            (&get, "/ui/app/main.js"),
            (&post, "/login"),
            (&post, "/logout"),
            (&post, "/v2/setup/user"),
            (&get, "/metrics"),
            (&get, "/ready"),
            (&get, "/actuator/health/liveness"),
        ] {
            assert!(public(m, p), "{m} {p}");
        }
        for (m, p) in [
            (&get, "/operate/api/figures"),
            (&post, "/v2/process-instances/search"),
            (&get, "/v2/topology"),
            (&get, "/v2/setup/user"),
            (&post, "/actuator/exporting/pause"),
            (&post, "/operate"),
            (&get, "/readyz"),
        ] {
            assert!(!public(m, p), "{m} {p}");
        }
    }
}
