//! Who is calling, and how they get in: `GET /v2/authentication/me`, `POST /v2/setup/user`
//! (the first admin, while no user holds the `admin` role; open without credentials), and the
//! web UI's `POST /login` (form or JSON `username`, `password`; a session cookie) and
//! `POST /logout`.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::Call;
use super::users::{new_user, user_json, UserRequest};
use super::{OrProblem, Problem, Rest, Routes};
use crate::auth::Principal;
use crate::intake::Peer;

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/authentication/me", get(me))
        .route("/v2/setup/user", post(setup_user))
        .route("/login", post(login))
        .route("/logout", post(logout))
}

/// `CamundaUserResult`. Without authentication no one is logged in, and everyone may use
/// everything.
async fn me(
    State(rest): State<Rest>,
    principal: Option<Extension<Principal>>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let base = json!({
        "authorizedComponents": ["*"],
        "tenants": [],
        "groups": [],
        "salesPlanType": "",
        "c8Links": {},
    });
    let Value::Object(mut out) = base else {
        unreachable!("an object")
    };
    match principal {
        Some(Extension(p)) => {
            out.insert("username".into(), json!(p.username));
            let display = if p.name.is_empty() {
                &p.username
            } else {
                &p.name
            };
            out.insert("displayName".into(), json!(display));
            out.insert("email".into(), json!(p.email));
            let roles: Vec<&str> = p
                .admin
                .then_some(zest_protocol::ADMIN_ROLE)
                .into_iter()
                .collect();
            out.insert("roles".into(), json!(roles));
            // an OIDC client's token is its own: there is no session to end
            out.insert("canLogout".into(), json!(!p.client));
        }
        None if rest.auth.is_on() => {
            return Err(Problem::titled(
                StatusCode::UNAUTHORIZED,
                "UNAUTHORIZED",
                "Expected an authenticated request, but it has no credentials",
                &uri,
            ))
        }
        None => {
            out.insert("username".into(), Value::Null);
            out.insert("displayName".into(), Value::Null);
            out.insert("email".into(), Value::Null);
            out.insert("roles".into(), json!([]));
            out.insert("canLogout".into(), json!(false));
        }
    }
    Ok(Json(Value::Object(out)))
}

async fn setup_user(
    State(rest): State<Rest>,
    Call { body, uri }: Call<UserRequest>,
) -> Result<(StatusCode, Json<Value>), Problem> {
    // refused before the password is hashed once an admin exists: the endpoint is open to all
    let has_admin = rest
        .broker
        .has_admin()
        .await
        .map_err(|e| Problem::of(e.into(), &uri))?;
    if has_admin {
        return Err(Problem::titled(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "Expected to create an initial admin user, but an admin user already exists",
            &uri,
        ));
    }
    let user = new_user(&rest, body, &uri).await?;
    let created = rest
        .commands
        .create_user(user, true)
        .await
        .or_problem(&uri)?;
    Ok((StatusCode::CREATED, Json(user_json(&created))))
}

#[derive(Deserialize)]
struct LoginRequest {
    username: String,
    password: String,
}

async fn login(
    State(rest): State<Rest>,
    peer: Option<Extension<Peer>>,
    over_tls: Option<Extension<crate::auth::OverTls>>,
    headers: HeaderMap,
    uri: Uri,
    body: Bytes,
) -> Response {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    // a form of another site cannot send JSON or this header: it cannot log a browser in
    if !json && !headers.contains_key("x-requested-with") {
        return Problem::titled(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "Expected a login as JSON, or a form with the X-Requested-With header, but it is a form without it",
            &uri,
        )
        .into_response();
    }
    let parsed: Result<LoginRequest, String> = if json {
        serde_json::from_slice(&body).map_err(|e| e.to_string())
    } else {
        serde_urlencoded::from_bytes(&body).map_err(|e| e.to_string())
    };
    let request = match parsed {
        Ok(r) => r,
        Err(e) => {
            return Problem::bad(
                format!("Expected a login with a username and a password, but {e}"),
                &uri,
            )
            .into_response()
        }
    };
    if !rest.auth.is_on() {
        return StatusCode::NO_CONTENT.into_response();
    }
    let peer = peer.map(|Extension(p)| p.0);
    match rest
        .auth
        .login(&request.username, &request.password, peer)
        .await
    {
        Ok(principal) => {
            let secure = over_tls.is_some()
                || headers
                    .get("x-forwarded-proto")
                    .is_some_and(|v| v == "https");
            let cookie = rest.auth.session_cookie(&principal, secure);
            with_cookie(StatusCode::NO_CONTENT.into_response(), &cookie)
        }
        Err(denied) => crate::auth::rest::refusal(&denied, &uri, true),
    }
}

async fn logout(State(rest): State<Rest>) -> Response {
    with_cookie(
        StatusCode::NO_CONTENT.into_response(),
        &rest.auth.ended_session_cookie(),
    )
}

fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}
