//! Zeebe's exporting endpoints on the management port: `POST /actuator/exporting/pause`
//! (`?soft=true`: go on exporting, but keep the log behind what was exported), `POST
//! /actuator/exporting/resume`, `GET /actuator/exporters`, and `POST
//! /actuator/exporters/{id}/disable|enable`. Zest has one exporter, `history`
//! (`zest_broker::export`).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use zest_broker::export::EXPORTER_ID;
use zest_broker::Broker;

pub fn routes(router: Router<Arc<Broker>>) -> Router<Arc<Broker>> {
    router
        .route("/actuator/exporting/pause", post(pause))
        .route("/actuator/exporting/resume", post(resume))
        .route("/actuator/exporters", get(list))
        .route("/actuator/exporters/{id}/disable", post(disable))
        .route("/actuator/exporters/{id}/enable", post(enable))
}

fn no_exporters() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"message": "This node exports nothing: its history is off (--history off)"})),
    )
        .into_response()
}

async fn pause(
    State(broker): State<Arc<Broker>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(e) = broker.exporting() else {
        return no_exporters();
    };
    e.pause(q.get("soft").is_some_and(|s| s == "true"));
    StatusCode::NO_CONTENT.into_response()
}

async fn resume(State(broker): State<Arc<Broker>>) -> Response {
    let Some(e) = broker.exporting() else {
        return no_exporters();
    };
    e.resume();
    StatusCode::NO_CONTENT.into_response()
}

async fn list(State(broker): State<Arc<Broker>>) -> Response {
    let status = match broker.exporting().map(|e| e.state()) {
        None => return Json(json!([])).into_response(),
        Some("PAUSED") => "DISABLED",
        Some(_) => "ENABLED",
    };
    Json(json!([{"exporterId": EXPORTER_ID, "status": status}])).into_response()
}

fn known(id: &str) -> Option<Response> {
    (id != EXPORTER_ID).then(|| {
        (
            StatusCode::NOT_FOUND,
            Json(json!({"message": format!("Expected an exporter with id '{id}'; this node has '{EXPORTER_ID}'")})),
        )
            .into_response()
    })
}

async fn disable(State(broker): State<Arc<Broker>>, Path(id): Path<String>) -> Response {
    if let Some(r) = known(&id) {
        return r;
    }
    pause(State(broker), Query(HashMap::new())).await
}

async fn enable(State(broker): State<Arc<Broker>>, Path(id): Path<String>) -> Response {
    if let Some(r) = known(&id) {
        return r;
    }
    resume(State(broker)).await
}
