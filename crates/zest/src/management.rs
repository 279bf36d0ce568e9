//! Management endpoints: Prometheus `/metrics`, `/health`, `/ready`, `/startup`, and the same
//! under Zeebe's (Spring Boot actuator) paths, which Zeebe users' monitoring expects:
//! `/actuator/prometheus`, `/actuator/health` (with `/liveness`, `/readiness`, `/startup`) and
//! `/actuator/info`; Zeebe's backup API, `/actuator/backupRuntime` (`zest_broker::backup`); and
//! its clock, `/actuator/clock` (`crate::clock_actuator`).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use prometheus::{Encoder, IntGauge, IntGaugeVec, Opts};
use zest_broker::backup::BackupError;
use zest_broker::Broker;

/// Sets `zest_memory_used_bytes{part="request_bodies"}` to what the request bodies being
/// received hold now (the intake counts them; the registry shows them beside the budget's other
/// parts), before the registry is read (`/metrics`, the UI's figures).
pub fn show_request_bodies(broker: &Broker, intake: &zest_gateway::intake::Intake) {
    let bodies = intake.held(zest_gateway::intake::Kind::BodyBytes);
    broker
        .metrics
        .memory_used
        .with_label_values(&["request_bodies"])
        .set(bodies as i64);
}

pub async fn serve(
    listener: tokio::net::TcpListener,
    broker: Arc<Broker>,
    intake: zest_gateway::intake::Intake,
    auth: zest_gateway::auth::Auth,
    tls: Option<zest_cluster::tls::Acceptor>,
    shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let gauges = Gauges::register(&broker.metrics.registry)
        .map_err(|e| tracing::warn!("the disk and allocator gauges are not exposed: {e}"))
        .ok();
    let held = intake.clone();
    let metrics = move |State(broker): State<Arc<Broker>>| {
        show_request_bodies(&broker, &held);
        metrics(broker, gauges.clone())
    };
    let app = Router::new()
        .route("/metrics", get(metrics.clone()))
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/startup", get(ready))
        .route("/actuator/prometheus", get(metrics))
        .route("/actuator/health", get(actuator_health))
        .route("/actuator/health/liveness", get(actuator_liveness))
        .route("/actuator/health/readiness", get(actuator_readiness))
        .route("/actuator/health/startup", get(actuator_readiness))
        .route("/actuator/info", get(actuator_info))
        .route("/actuator/partitions", get(actuator_partitions))
        .route("/actuator/cluster", get(actuator_cluster))
        .route(
            "/actuator/backupRuntime",
            post(backup_take).get(backup_list),
        )
        .route(
            "/actuator/backupRuntime/{id}",
            get(backup_status).delete(backup_delete),
        );
    // with authentication on, everything but the probes and the metrics needs credentials
    let app = crate::clock_actuator::routes(crate::exporting::routes(app))
        .with_state(broker)
        .layer(axum::middleware::from_fn_with_state(
            auth,
            zest_gateway::auth::rest::require,
        ));
    crate::serving::serve(listener, app, intake, tls, shutdown).await;
}

/// The gauges this binary adds to the broker's registry: the store's size on disk and the
/// figures of the allocator it links.
#[derive(Clone)]
struct Gauges {
    disk: IntGauge,
    allocator: IntGaugeVec,
}

impl Gauges {
    fn register(registry: &prometheus::Registry) -> prometheus::Result<Gauges> {
        let disk = IntGauge::new("zest_disk_bytes", "Bytes on disk of the embedded store")?;
        let allocator = IntGaugeVec::new(
            Opts::new(
                "zest_allocator_bytes",
                "Memory of the allocator (jemalloc) by kind",
            ),
            &["kind"],
        )?;
        registry.register(Box::new(disk.clone()))?;
        registry.register(Box::new(allocator.clone()))?;
        Ok(Gauges { disk, allocator })
    }
}

async fn metrics(broker: Arc<Broker>, gauges: Option<Gauges>) -> impl IntoResponse {
    broker.refresh_metrics();
    if let Some(g) = gauges {
        g.disk.set(broker.disk_space() as i64);
        for (kind, bytes) in allocator_figures() {
            g.allocator.with_label_values(&[kind]).set(bytes as i64);
        }
    }
    // one registry holds every family (the process collector included), so each family is
    // exposed once, as strict Prometheus parsers require
    let families = broker.metrics.registry.gather();
    let mut buf = Vec::new();
    let _ = prometheus::TextEncoder::new().encode(&families, &mut buf);
    ([("content-type", "text/plain; version=0.0.4")], buf)
}

/// jemalloc's own figures, so that the resident memory can be told apart: what the program
/// holds (`allocated`), the pages that hold it (`active`, the difference being partly used
/// pages), the pages jemalloc keeps resident (`resident`: active, freed pages not yet returned,
/// and its `metadata`) and address space kept unmapped for reuse (`retained`).
#[cfg(not(feature = "system-alloc"))]
fn allocator_figures() -> Vec<(&'static str, usize)> {
    use tikv_jemalloc_ctl::{epoch, stats};
    if epoch::advance().is_err() {
        return Vec::new();
    }
    [
        ("allocated", stats::allocated::read()),
        ("active", stats::active::read()),
        ("resident", stats::resident::read()),
        ("metadata", stats::metadata::read()),
        ("retained", stats::retained::read()),
    ]
    .into_iter()
    .filter_map(|(kind, bytes)| Some((kind, bytes.ok()?)))
    .collect()
}

#[cfg(feature = "system-alloc")]
fn allocator_figures() -> Vec<(&'static str, usize)> {
    Vec::new()
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

/// Zeebe's `GET /actuator/partitions`: this node's partitions by id, with role, health and
/// the position processing reached.
async fn actuator_partitions(State(broker): State<Arc<Broker>>) -> impl IntoResponse {
    let mut doc = serde_json::Map::new();
    for p in broker.topology().await {
        doc.insert(
            p.partition_id.to_string(),
            serde_json::json!({
                "role": if p.is_leader { "LEADER" } else { "FOLLOWER" },
                "processedPosition": p.processed_position,
                "streamProcessorPhase": if p.healthy { "PROCESSING" } else { "PAUSED" },
                "health": { "status": if p.healthy { "HEALTHY" } else { "UNHEALTHY" } },
            }),
        );
    }
    axum::Json(serde_json::Value::Object(doc))
}

/// Zeebe's `GET /actuator/cluster`: the cluster's brokers (those up, as this node knows them)
/// with the partitions each replicates, their state and leader priority (the primary highest).
async fn actuator_cluster(State(broker): State<Arc<Broker>>) -> impl IntoResponse {
    let topology = broker.cluster_topology();
    let brokers: Vec<serde_json::Value> = topology
        .brokers
        .iter()
        .map(|b| {
            let partitions: Vec<serde_json::Value> = b
                .partitions
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "id": p.partition_id,
                        "state": "ACTIVE",
                        "priority": broker.leader_priority(p.partition_id, b.node_id),
                        "config": { "exporting": { "exporters": [] } },
                    })
                })
                .collect();
            serde_json::json!({
                "id": b.node_id,
                "state": "ACTIVE",
                "version": 0,
                "lastUpdatedAt": serde_json::Value::Null,
                "partitions": partitions,
            })
        })
        .collect();
    axum::Json(serde_json::json!({
        "version": 0,
        "brokers": brokers,
        "lastChange": serde_json::Value::Null,
        "pendingChange": serde_json::Value::Null,
        "routing": {
            "version": 0,
            "activePartitions": (1..=topology.partitions_count).collect::<Vec<_>>(),
            "messageCorrelation": {
                "strategy": "HashMod",
                "partitionCount": topology.partitions_count,
            },
        },
    }))
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

fn backup_error(e: BackupError) -> (StatusCode, axum::Json<serde_json::Value>) {
    let code = match &e {
        BackupError::NotConfigured | BackupError::InvalidId(_) => StatusCode::BAD_REQUEST,
        BackupError::Exists(_) | BackupError::NotNewer { .. } | BackupError::Busy(_) => {
            StatusCode::CONFLICT
        }
        BackupError::NotFound(_) => StatusCode::NOT_FOUND,
        BackupError::Io(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (
        code,
        axum::Json(serde_json::json!({ "message": e.to_string() })),
    )
}

/// `POST /actuator/backupRuntime` with `{"backupId": N}`: 202 once the backup is scheduled.
async fn backup_take(
    State(broker): State<Arc<Broker>>,
    body: axum::body::Bytes,
) -> (StatusCode, axum::Json<serde_json::Value>) {
    let id = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("backupId")?.as_i64());
    let Some(id) = id else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({
                "message": "Expected a JSON body with a numeric backupId, e.g. {\"backupId\": 1}"
            })),
        );
    };
    match broker.take_backup(id) {
        Ok(id) => (
            StatusCode::ACCEPTED,
            axum::Json(serde_json::json!({
                "message": format!("A backup with id {id} has been scheduled. Use GET actuator/backupRuntime/{id} to monitor the status.")
            })),
        ),
        Err(e) => backup_error(e),
    }
}

async fn backup_list(State(broker): State<Arc<Broker>>) -> axum::response::Response {
    match broker.backups().list() {
        Ok(list) => axum::Json(list).into_response(),
        Err(e) => backup_error(e).into_response(),
    }
}

async fn backup_status(
    State(broker): State<Arc<Broker>>,
    Path(id): Path<String>,
) -> axum::response::Response {
    let Ok(id) = id.parse::<u64>() else {
        return backup_error(BackupError::InvalidId(-1)).into_response();
    };
    match broker.backups().status(id) {
        Ok(status) => axum::Json(status).into_response(),
        Err(BackupError::NotFound(id)) => (
            StatusCode::NOT_FOUND,
            axum::Json(serde_json::json!({
                "backupId": id,
                "state": "DOES_NOT_EXIST",
                "details": [],
            })),
        )
            .into_response(),
        Err(e) => backup_error(e).into_response(),
    }
}

async fn backup_delete(
    State(broker): State<Arc<Broker>>,
    Path(id): Path<String>,
) -> axum::response::Response {
    let Ok(id) = id.parse::<u64>() else {
        return backup_error(BackupError::InvalidId(-1)).into_response();
    };
    match broker.backups().delete(id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => backup_error(e).into_response(),
    }
}
