//! Management endpoints: Prometheus `/metrics`, `/health`, `/ready`, `/startup`.

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
        .with_state(broker);
    let _ = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = shutdown.changed().await;
        })
        .await;
}

async fn metrics(State(broker): State<Arc<Broker>>) -> impl IntoResponse {
    broker.refresh_metrics();
    let mut families = broker.metrics.registry.gather();
    families.extend(prometheus::gather());
    let mut buf = Vec::new();
    let _ = prometheus::TextEncoder::new().encode(&families, &mut buf);
    let extra = format!(
        "# HELP zest_disk_bytes Bytes on disk of the embedded store\n# TYPE zest_disk_bytes gauge\nzest_disk_bytes {}\n{}",
        broker.disk_space(),
        process_memory()
    );
    buf.extend_from_slice(extra.as_bytes());
    ([("content-type", "text/plain; version=0.0.4")], buf)
}

fn process_memory() -> String {
    // resident set size from /proc (Linux); absent elsewhere
    let rss = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .map(|pages| pages * 4096);
    match rss {
        Some(b) => format!("# HELP process_resident_memory_bytes Resident memory size in bytes\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes {b}\n"),
        None => String::new(),
    }
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
