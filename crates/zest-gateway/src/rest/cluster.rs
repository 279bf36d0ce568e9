//! The cluster: `GET /v2/topology` (Camunda's TopologyResponse), `GET /v2/status` (204
//! while some partition has a healthy leader, 503 otherwise), and the engine's clock:
//! `PUT /v2/clock` pins it, `POST /v2/clock/reset` sets it back to the system's (204 both);
//! `GET /v2/license` (none).

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::Call;
use super::{int64, no_content, required, Problem, Rest, Routes};

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/topology", get(topology))
        .route("/v2/status", get(status))
        .route("/v2/license", get(license))
        .route("/v2/clock", put(pin_clock))
        .route("/v2/clock/reset", post(reset_clock))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct ClockPinRequest {
    #[serde(deserialize_with = "int64")]
    timestamp: Option<i64>,
}

async fn pin_clock(
    State(rest): State<Rest>,
    Call { body: r, uri }: Call<ClockPinRequest>,
) -> Result<StatusCode, Problem> {
    let timestamp = required(r.timestamp, "timestamp", &uri)?;
    no_content(rest.commands.pin_clock(timestamp), &uri)
}

async fn reset_clock(State(rest): State<Rest>) -> StatusCode {
    rest.commands.reset_clock();
    StatusCode::NO_CONTENT
}

async fn topology(State(rest): State<Rest>) -> Json<Value> {
    let topology = rest.broker.cluster_topology();
    // the version clients check (c8ctl parses `^(\d+)\.(\d+)`): Camunda's that Zest speaks
    let version = &rest.commands.config().version;
    let brokers: Vec<Value> = topology
        .brokers
        .iter()
        .map(|b| {
            let (host, port) = crate::host_and_port(&b.address);
            let partitions: Vec<Value> = b
                .partitions
                .iter()
                .map(|p| {
                    json!({
                        "partitionId": p.partition_id,
                        "role": if p.is_leader { "leader" } else { "follower" },
                        "health": if p.healthy { "healthy" } else { "unhealthy" },
                    })
                })
                .collect();
            json!({
                "nodeId": b.node_id,
                "host": host,
                "port": port,
                "partitions": partitions,
                "version": version,
            })
        })
        .collect();
    Json(json!({
        "brokers": brokers,
        "clusterSize": topology.cluster_size,
        "partitionsCount": topology.partitions_count,
        "replicationFactor": topology.replication_factor,
        "gatewayVersion": version,
        // no dynamic cluster changes in Zest: none has completed
        "lastCompletedChangeId": "-1",
        // required (nullable) from 8.9 on: Zest's cluster has no id
        "clusterId": null,
    }))
}

/// Camunda's check: UP when at least one partition has a healthy leader.
async fn status(State(rest): State<Rest>) -> StatusCode {
    let topology = rest.broker.cluster_topology();
    let up = topology
        .brokers
        .iter()
        .flat_map(|b| &b.partitions)
        .any(|p| p.is_leader && p.healthy);
    if up {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

/// `GET /v2/license`: Zest runs under no Camunda license, and says so the way a Camunda
/// cluster without a license key does (Operate shows its non-production notice).
async fn license() -> Json<Value> {
    Json(json!({
        "validLicense": false,
        "licenseType": "unknown",
        "isCommercial": false,
        "expiresAt": null,
    }))
}
