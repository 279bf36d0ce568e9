//! Management endpoints: Prometheus `/metrics`, `/health`, `/ready`, `/startup`, and the same
//! under Zeebe's (Spring Boot actuator) paths, which Zeebe users' monitoring expects:
//! `/actuator/prometheus`, `/actuator/health` (with `/liveness`, `/readiness`, `/startup`) and
//! `/actuator/info`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus::Encoder;
use zest_broker::Broker;

pub async fn serve(
    listener: tokio::net::TcpListener,
    broker: Arc<Broker>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let app = Router::new()
        .route("/metrics", get(metrics))
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/startup", get(ready))
        .route("/actuator/prometheus", get(metrics))
        .route("/actuator/health", get(actuator_health))
        .route("/actuator/health/liveness", get(actuator_liveness))
        .route("/actuator/health/readiness", get(actuator_readiness))
        .route("/actuator/health/startup", get(actuator_readiness))
        .route("/actuator/info", get(actuator_info))
        .with_state(broker);
    let _ = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = shutdown.changed().await;
        })
        .await;
}

async fn metrics(State(broker): State<Arc<Broker>>) -> impl IntoResponse {
    broker.refresh_metrics();
    // one registry holds every family (the process collector included), so each family is
    // exposed once, as strict Prometheus parsers require
    let families = broker.metrics.registry.gather();
    let mut buf = Vec::new();
    let _ = prometheus::TextEncoder::new().encode(&families, &mut buf);
    let extra = format!(
        "# HELP zest_disk_bytes Bytes on disk of the embedded store\n# TYPE zest_disk_bytes gauge\nzest_disk_bytes {}\n",
        broker.disk_space(),
    );
    buf.extend_from_slice(extra.as_bytes());
    ([("content-type", "text/plain; version=0.0.4")], buf)
}

async fn health() -> impl IntoResponse {
    (StatusCode::OK, "UP")
}

async fn ready(State(broker): State<Arc<Broker>>) -> impl IntoResponse {
    if broker.is_ready().await {
        (StatusCode::OK, "READY")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "NOT READY")
    }
}

/// Spring Boot's health document: `{"status":"UP"}` with 200, or `{"status":"DOWN"}` with 503.
fn health_document(up: bool) -> (StatusCode, axum::Json<serde_json::Value>) {
    let status = if up { "UP" } else { "DOWN" };
    let code = if up {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, axum::Json(serde_json::json!({ "status": status })))
}

/// The node's overall health: up once its partitions have leaders and have recovered (as
/// Zeebe's broker reports DOWN while a partition is unhealthy).
async fn actuator_health(State(broker): State<Arc<Broker>>) -> impl IntoResponse {
    let up = broker.is_ready().await;
    let (code, axum::Json(mut doc)) = health_document(up);
    doc["groups"] = serde_json::json!(["liveness", "readiness", "startup"]);
    (code, axum::Json(doc))
}

/// Liveness: the process serves requests.
async fn actuator_liveness() -> impl IntoResponse {
    health_document(true)
}

async fn actuator_readiness(State(broker): State<Arc<Broker>>) -> impl IntoResponse {
    health_document(broker.is_ready().await)
}

async fn actuator_info() -> impl IntoResponse {
    axum::Json(serde_json::json!({
        "build": {
            "artifact": "zest",
            "name": "Zest",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "zeebe": {
            "protocolVersion": zest_gateway::GatewayConfig::default().version,
        },
    }))
}
