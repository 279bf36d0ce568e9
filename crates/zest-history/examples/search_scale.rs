//! The REST API's searches over a large history: fills a store with one-task instances (each
//! with 5 variables, its business key unique; one in a hundred left active with an incident on
//! its task), then times the searches Operate makes, each repeated, and prints p50 and p99.
//!
//! `cargo run --release -p zest-history --example search_scale [instances] [dir]`
//! (default 1,000,000 in a temporary directory; a directory that already holds a store of as
//! many instances is searched as it is, without filling). `ZEST_HISTORY_URL=postgres://...`:
//! that PostgreSQL store instead (filled when it holds fewer instances).

use std::time::Instant;

mod common;
use common::{element, record};

use serde_json::{json, Value};
use zest_history::{resources, Conditions, History, Of, Resource};
use zest_protocol::{
    BpmnElementType, ErrorType, IncidentRecord, Intent, JobRecord, Record, RecordValue,
    VariableRecord,
};

/// Keys one instance takes (its elements, job, flows, variables, incident).
const KEYS: i64 = 20;
/// Instances a batch of export holds.
const BATCH: i64 = 200;
/// One instance in this many keeps an open incident (and stays active).
const INCIDENT_EVERY: i64 = 100;
/// Times each search runs.
const RUNS: usize = 40;

fn variable(pi: i64, name: &str, value: String) -> RecordValue {
    RecordValue::Variable(VariableRecord {
        name: name.into(),
        value,
        scope_key: pi,
        process_instance_key: pi,
        process_definition_key: 1,
        bpmn_process_id: "benchmark".into(),
        tenant_id: "<default>".into(),
    })
}

/// Instance `i`'s records: created, its task's job completed (or failed into an incident),
/// completed.
fn instance(i: i64, pos: &mut u64, out: &mut Vec<Record>) {
    let pi = (1 << 51) + 1000 + i * KEYS;
    let mut push = |key, intent, value| {
        *pos += 1;
        out.push(record(*pos, key, intent, value));
    };
    let vars = [
        ("businessKey", format!("\"order-{i}\"")),
        ("amount", (i % 1000).to_string()),
        ("customer", format!("\"customer-{}\"", i % 5000)),
        ("priority", (i % 3).to_string()),
        (
            "note",
            "\"a value of about forty characters long..\"".to_string(),
        ),
    ];
    for (j, (name, value)) in vars.into_iter().enumerate() {
        push(
            pi + 10 + j as i64,
            Intent::Created,
            variable(pi, name, value),
        );
    }
    let p = || element(pi, "benchmark", BpmnElementType::Process);
    push(pi, Intent::ElementActivating, p());
    push(
        pi + 2,
        Intent::ElementActivating,
        element(pi, "start", BpmnElementType::StartEvent),
    );
    push(
        pi + 2,
        Intent::ElementCompleted,
        element(pi, "start", BpmnElementType::StartEvent),
    );
    push(
        pi + 5,
        Intent::SequenceFlowTaken,
        element(pi, "f1", BpmnElementType::SequenceFlow),
    );
    let task = || element(pi, "task", BpmnElementType::ServiceTask);
    push(pi + 3, Intent::ElementActivating, task());
    let job = JobRecord {
        job_type: "benchmark-task".into(),
        retries: 3,
        element_id: "task".into(),
        element_instance_key: pi + 3,
        process_instance_key: pi,
        bpmn_process_id: "benchmark".into(),
        process_definition_key: 1,
        tenant_id: "<default>".into(),
        ..Default::default()
    };
    push(
        pi + 4,
        Intent::Created,
        RecordValue::Job(Box::new(job.clone())),
    );
    if i % INCIDENT_EVERY == 0 {
        let incident = IncidentRecord {
            error_type: ErrorType::JobNoRetries,
            error_message: format!("card declined ({})", i % 7),
            bpmn_process_id: "benchmark".into(),
            process_definition_key: 1,
            process_instance_key: pi,
            element_id: "task".into(),
            element_instance_key: pi + 3,
            job_key: pi + 4,
            variable_scope_key: pi + 3,
            tenant_id: "<default>".into(),
        };
        push(pi + 4, Intent::Failed, RecordValue::Job(Box::new(job)));
        push(pi + 8, Intent::Created, RecordValue::Incident(incident));
        return;
    }
    push(pi + 4, Intent::Completed, RecordValue::Job(Box::new(job)));
    push(pi + 3, Intent::ElementCompleted, task());
    push(
        pi + 6,
        Intent::SequenceFlowTaken,
        element(pi, "f2", BpmnElementType::SequenceFlow),
    );
    push(
        pi + 7,
        Intent::ElementActivating,
        element(pi, "end", BpmnElementType::EndEvent),
    );
    push(
        pi + 7,
        Intent::ElementCompleted,
        element(pi, "end", BpmnElementType::EndEvent),
    );
    push(pi, Intent::ElementCompleted, p());
}

fn fill(h: &History, from: i64, instances: i64) {
    let start = Instant::now();
    let mut pos = h.position(1).unwrap().position;
    let mut index = h.position(1).unwrap().next_index;
    let mut i = from;
    while i < instances {
        let mut records = Vec::new();
        for j in i..(i + BATCH).min(instances) {
            instance(j, &mut pos, &mut records);
        }
        i += BATCH;
        index += 1;
        h.export(1, &records, index).unwrap();
        if i % 100_000 == 0 {
            eprintln!("{i} instances in {:.0} s", start.elapsed().as_secs_f64());
        }
    }
    eprintln!(
        "filled {} instances in {:.0} s",
        instances - from,
        start.elapsed().as_secs_f64()
    );
}

fn stored(h: &History) -> i64 {
    h.search(
        &resources::PROCESS_INSTANCES,
        &json!({"page": {"limit": 0}}),
        Conditions::default(),
    )
    .unwrap()["page"]["totalItems"]
        .as_i64()
        .unwrap_or(0)
}

/// Runs `f` [`RUNS`] times; prints its p50 and p99 (ms) and what its last answer counted.
fn time(name: &str, mut f: impl FnMut() -> Value) {
    let mut ms = Vec::with_capacity(RUNS);
    let mut last = Value::Null;
    let started = Instant::now();
    for _ in 0..RUNS {
        let t = Instant::now();
        last = f();
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        // a search of seconds: a few runs tell enough
        if ms.len() >= 5 && started.elapsed().as_secs() > 20 {
            break;
        }
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    let p = |q: f64| ms[((ms.len() as f64 * q).ceil() as usize).saturating_sub(1)];
    let found = last["page"]["totalItems"]
        .as_i64()
        .map(|t| format!("{t} found"))
        .unwrap_or_else(|| format!("{} items", last["items"].as_array().map_or(0, |a| a.len())));
    println!(
        "{name:<44} p50 {:>8.1} ms  p99 {:>8.1} ms  ({found}; {} runs)",
        p(0.5),
        p(0.99),
        ms.len()
    );
}

fn search(h: &History, r: &Resource, q: Value) -> Value {
    h.search(r, &q, Conditions::default()).unwrap()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let instances: i64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("zest-search-scale-{}", std::process::id()))
        });
    std::fs::create_dir_all(&dir).unwrap();
    let h = match std::env::var("ZEST_HISTORY_URL")
        .ok()
        .filter(|u| !u.is_empty())
    {
        Some(url) => History::open_postgres(&url).unwrap(),
        None => History::open(&dir.join("history.sqlite"), 64 << 20).unwrap(),
    };
    let have = stored(&h);
    if have < instances {
        fill(&h, have, instances);
    }
    println!(
        "{} instances in history; each search {RUNS} times:",
        stored(&h)
    );
    let by_state = json!({"filter": {"processDefinitionId": "benchmark", "state": "COMPLETED"},
                          "page": {"limit": 50}});
    time("instances by process and state", || {
        search(&h, &resources::PROCESS_INSTANCES, by_state.clone())
    });
    // Operate's and the web UI's order: newest first
    let newest = |filter: Value| {
        json!({"filter": filter, "sort": [{"field": "startDate", "order": "DESC"}],
               "page": {"limit": 50}})
    };
    let of_definition = newest(json!({"processDefinitionKey": "1", "state": "COMPLETED"}));
    time("a definition's completed instances, newest first", || {
        search(&h, &resources::PROCESS_INSTANCES, of_definition.clone())
    });
    let by_id = newest(json!({"processDefinitionId": "benchmark", "state": "COMPLETED"}));
    time("a process id's completed instances, newest first", || {
        search(&h, &resources::PROCESS_INSTANCES, by_id.clone())
    });
    let all = newest(json!({}));
    time("all instances, newest first", || {
        search(&h, &resources::PROCESS_INSTANCES, all.clone())
    });
    let by_key = json!({"filter": {"processDefinitionKey": "1", "state": "COMPLETED"},
                        "page": {"limit": 50}});
    time("a definition's completed instances, by key", || {
        search(&h, &resources::PROCESS_INSTANCES, by_key.clone())
    });
    let window = json!({"filter": {"startDate": {"$gte": "2025-01-01T01:00:00Z",
                                                 "$lt": "2025-01-01T01:10:00Z"}},
                        "page": {"limit": 50}});
    time("instances by start date (10 min window)", || {
        search(&h, &resources::PROCESS_INSTANCES, window.clone())
    });
    let mut n = 0;
    time("instances by a variable's value", || {
        n += 7919;
        let key = format!("\"order-{}\"", n % instances);
        search(
            &h,
            &resources::PROCESS_INSTANCES,
            json!({"filter": {"variables": [{"name": "businessKey", "value": key}]}}),
        )
    });
    time("active incidents", || {
        search(
            &h,
            &resources::INCIDENTS,
            json!({"filter": {"state": "ACTIVE"}, "page": {"limit": 50}}),
        )
    });
    time("element statistics of the definition", || {
        h.element_statistics(Of::Definition(1), &Value::Null)
            .unwrap()
    });
    // a cursor deep in the results: the end cursor of the page at 90 % of them
    let deep = search(
        &h,
        &resources::PROCESS_INSTANCES,
        json!({"page": {"from": instances * 9 / 10, "limit": 50}}),
    );
    let cursor = deep["page"]["endCursor"].clone();
    time("the page after a cursor at 90 %", || {
        search(
            &h,
            &resources::PROCESS_INSTANCES,
            json!({"page": {"after": cursor, "limit": 50}}),
        )
    });
}
