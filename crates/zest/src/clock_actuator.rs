//! Zeebe's clock endpoints on the management port (its `/actuator/clock`, which Camunda
//! Process Test 8.8 calls through the monitoring address to move time on):
//! `GET /actuator/clock` reads the engine's clock, `POST /actuator/clock/pin` pins it at
//! `{"epochMilli": ..}`, `POST /actuator/clock/add` pins it `{"offsetMilli": ..}` past its
//! current time, and `DELETE /actuator/clock` resets it to the system's; each answers the
//! clock as it then reads, `{"epochMilli": .., "instant": ".."}`, as Zeebe does. The same
//! clock as the REST API's `PUT /v2/clock` (`zest_broker::clock`, pinned on this node). Unlike
//! Zeebe, whose `add` leaves a clock that runs on from the new time, an added offset pins it:
//! time then stands still until the next call, as after `PUT /v2/clock`.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use zest_broker::{clock, Broker};

pub fn routes(router: Router<Arc<Broker>>) -> Router<Arc<Broker>> {
    router
        .route("/actuator/clock", get(read).delete(reset))
        .route("/actuator/clock/pin", post(pin))
        .route("/actuator/clock/add", post(add))
}

/// The clock as it reads now.
fn current() -> Response {
    let millis = clock::now_millis();
    let instant = chrono::DateTime::from_timestamp_millis(millis)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default();
    Json(json!({"epochMilli": millis, "instant": instant})).into_response()
}

fn bad_request(detail: String) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"message": detail}))).into_response()
}

/// The integer field `name` of the body, or why not.
fn field(body: &Result<Json<Value>, JsonRejection>, name: &str) -> Result<i64, String> {
    match body {
        Ok(Json(v)) => v
            .get(name)
            .and_then(Value::as_i64)
            .ok_or_else(|| format!("Expected a body with the integer field '{name}', got {v}")),
        Err(e) => Err(format!("Expected a JSON body with '{name}': {e}")),
    }
}

async fn read() -> Response {
    current()
}

async fn reset() -> Response {
    clock::reset();
    current()
}

async fn pin(body: Result<Json<Value>, JsonRejection>) -> Response {
    match field(&body, "epochMilli") {
        Ok(millis) if millis >= 0 => {
            clock::pin(millis);
            current()
        }
        Ok(millis) => bad_request(format!("epochMilli must not be negative, got {millis}")),
        Err(detail) => bad_request(detail),
    }
}

async fn add(body: Result<Json<Value>, JsonRejection>) -> Response {
    match field(&body, "offsetMilli") {
        Ok(offset) => {
            clock::pin(clock::now_millis().saturating_add(offset));
            current()
        }
        Err(detail) => bad_request(detail),
    }
}
