//! `GET /operate/api/figures` on the REST port: the key figures of this node for the web UI's
//! cluster page (`docs/design/ui.md`), read in process from the registry `/metrics` encodes on
//! the management port (another origin for the page, and internal). Counters are given as
//! counters; the page computes rates from its successive polls.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus::proto::MetricFamily;
use serde_json::{json, Value};
use zest_broker::Broker;
use zest_gateway::intake::Intake;

/// The route, to merge with the REST API's and the UI's.
pub fn router(broker: Arc<Broker>, intake: Intake) -> Router {
    Router::new()
        .route("/operate/api/figures", get(figures))
        .with_state((broker, intake))
}

async fn figures(State((broker, intake)): State<(Arc<Broker>, Intake)>) -> impl IntoResponse {
    broker.refresh_metrics();
    crate::management::show_request_bodies(&broker, &intake);
    let families = Families(broker.metrics.registry.gather());
    let partitions: Vec<Value> = broker
        .topology()
        .await
        .iter()
        .map(|p| partition(&families, p))
        .collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let body = json!({
        "nodeId": broker.config().node_id,
        "time": now,
        "partitions": partitions,
        "memory": memory(&families),
    });
    ([("cache-control", "no-store")], axum::Json(body))
}

fn partition(f: &Families, p: &zest_broker::PartitionInfo) -> Value {
    let id = p.partition_id.to_string();
    let of = |name: &str, labels: &[(&str, &str)]| f.sum(name, &id, labels) as u64;
    let instances = |action| {
        of(
            "zeebe_executed_instances_total",
            &[("type", "ROOT_PROCESS_INSTANCE"), ("action", action)],
        )
    };
    // with history off there is no exporter and so no export series
    let export = f.has("zest_exporter_lag_records", &id).then(|| {
        let (sum, count) = f.histogram("zest_export_lag_seconds", &id);
        json!({
            "recordsBehind": of("zest_exporter_lag_records", &[]),
            "exported": of("zeebe_exporter_events_total", &[]),
            "lagSecondsSum": sum,
            "lagCount": count,
        })
    });
    json!({
        "partitionId": p.partition_id,
        "role": if p.is_leader { "leader" } else { "follower" },
        "health": if p.healthy { "healthy" } else { "unhealthy" },
        "processInstances": {
            "activated": instances("activated"),
            "completed": instances("completed"),
            "terminated": instances("terminated"),
        },
        "backpressure": {
            "received": of("zeebe_received_request_count_total", &[]),
            "rejected": of("zeebe_dropped_request_count_total", &[]),
            "limit": of("zeebe_backpressure_requests_limit", &[]),
            "inFlight": of("zeebe_backpressure_inflight_requests_count", &[]),
            "queued": of("zest_queued_commands", &[]),
        },
        "export": export,
    })
}

/// The budget (`--memory-mb`) and its parts, what the counted parts use, and the resident
/// memory the memory guard holds to the budget.
fn memory(f: &Families) -> Value {
    let budget = f.by_label("zest_memory_budget_bytes", "part");
    let used = f.by_label("zest_memory_used_bytes", "part");
    let mut parts: Vec<&String> = budget.keys().filter(|p| *p != "total").collect();
    parts.sort();
    let parts: Vec<Value> = parts
        .into_iter()
        .map(|part| {
            json!({
                "part": part,
                "budgetBytes": budget[part] as u64,
                "usedBytes": used.get(part).map(|b| *b as u64),
            })
        })
        .collect();
    json!({
        "budgetBytes": budget.get("total").map_or(0, |b| *b as u64),
        "usedBytes": used.values().sum::<f64>() as u64,
        "residentBytes": f.by_label("process_resident_memory_bytes", "").get("").map(|b| *b as u64),
        "parts": parts,
    })
}

/// The registry's families, gathered once per answer.
struct Families(Vec<MetricFamily>);

impl Families {
    fn metrics<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a prometheus::proto::Metric> {
        self.0
            .iter()
            .filter(move |f| f.name() == name)
            .flat_map(|f| f.metric.iter())
    }

    fn label<'a>(m: &'a prometheus::proto::Metric, name: &str) -> Option<&'a str> {
        m.label.iter().find(|l| l.name() == name).map(|l| l.value())
    }

    /// The series of `name` for the partition that carry every label of `labels`.
    fn series<'a>(
        &'a self,
        name: &'a str,
        partition: &'a str,
        labels: &'a [(&str, &str)],
    ) -> impl Iterator<Item = &'a prometheus::proto::Metric> {
        self.metrics(name).filter(move |m| {
            Self::label(m, "partition") == Some(partition)
                && labels.iter().all(|(k, v)| Self::label(m, k) == Some(*v))
        })
    }

    fn has(&self, name: &str, partition: &str) -> bool {
        self.series(name, partition, &[]).next().is_some()
    }

    /// The sum of the matching counters or gauges.
    fn sum(&self, name: &str, partition: &str, labels: &[(&str, &str)]) -> f64 {
        self.series(name, partition, labels)
            .map(|m| m.counter.value() + m.gauge.value())
            .sum()
    }

    /// A histogram's sum and count (zero when it has no series).
    fn histogram(&self, name: &str, partition: &str) -> (f64, u64) {
        self.series(name, partition, &[])
            .fold((0.0, 0), |(s, c), m| {
                (s + m.histogram.sample_sum(), c + m.histogram.sample_count())
            })
    }

    /// A gauge family's values by one label (`""` for a family without labels).
    fn by_label(&self, name: &str, label: &str) -> HashMap<String, f64> {
        self.metrics(name)
            .map(|m| {
                let key = Self::label(m, label).unwrap_or_default().to_string();
                (key, m.gauge.value())
            })
            .collect()
    }
}
