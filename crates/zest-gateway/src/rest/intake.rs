//! The REST API's requests in the node's [`Intake`]: a place among the requests in progress,
//! and the body's bytes in the gateway's share of the budget, taken before the body is read
//! (by its `Content-Length`; a chunked body frame by frame). A body over the message size is
//! answered 413 at once, one that does not fit 429 (this client's share) or 503 (the node's),
//! and one that stops coming 408, as problem details.

use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;

use super::Problem;
use crate::intake::body::{BoxError, Counted};
use crate::intake::{peer, Intake, Kind, Refusal};

/// `router` with its requests counted in `intake`; `max_body` is the largest body accepted.
pub fn guarded(router: Router, intake: Intake, max_body: usize) -> Router {
    router.layer(axum::middleware::from_fn_with_state(
        (intake, max_body),
        admit,
    ))
}

fn refused(refusal: &Refusal, uri: &axum::http::Uri) -> Response {
    let status = match refusal {
        Refusal::Node(_) => StatusCode::SERVICE_UNAVAILABLE,
        Refusal::Client(_) => StatusCode::TOO_MANY_REQUESTS,
        Refusal::TooSlow(_) => StatusCode::REQUEST_TIMEOUT,
    };
    closing(Problem::new(status, refusal.message(), uri))
}

/// `problem` as the answer of a request whose body is not read to its end: the connection
/// cannot carry another request, so it closes.
fn closing(problem: Problem) -> Response {
    let mut response = problem.into_response();
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

fn as_error(refusal: &Refusal) -> BoxError {
    Box::new(refusal.clone())
}

async fn admit(
    State((intake, max_body)): State<(Intake, usize)>,
    request: Request,
    next: Next,
) -> Response {
    let Some(ip) = peer(request.extensions()) else {
        return next.run(request).await;
    };
    let uri = request.uri().clone();
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if let Some(n) = length.filter(|&n| n > max_body) {
        return closing(Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "Expected the request body to be at most {max_body} bytes (the maximum message \
                 size), but it was {n} bytes"
            ),
            &uri,
        ));
    }
    let held = intake.hold(ip, Kind::Requests, 1).and_then(|place| {
        Ok((
            place,
            intake.hold(ip, Kind::BodyBytes, length.unwrap_or(0))?,
        ))
    });
    let (_place, bytes) = match held {
        Ok(held) => held,
        Err(refusal) => return refused(&refusal, &uri),
    };
    let failed = Arc::new(OnceLock::new());
    let limits = intake.limits().clone();
    let request = request.map(|body| {
        Body::new(Counted::new(
            body,
            bytes,
            &limits,
            length.unwrap_or(max_body),
            failed.clone(),
            as_error,
        ))
    });
    let response = next.run(request).await;
    match failed.get() {
        Some(refusal) => refused(refusal, &uri),
        None => response,
    }
}
