//! The REST API's searches over a large history: fills a store with one-task instances (each
//! with 5 variables, its business key unique; one in a hundred left active with an incident on
//! its task; one in ten with a user task before it, a tenth of those left open; one in ten
//! with a decision evaluated; one in ten with a message subscription, correlated), then times
//! the searches the web UI, Tasklist, c8ctl and the clients make by default, each repeated,
//! and prints p50 and p99.
//!
//! `cargo run --release -p zest-history --example search_scale [instances] [dir] [only]`
//! (default 1,000,000 in a temporary directory; a directory that already holds a store of as
//! many instances is searched as it is, without filling; `only`: the searches whose name
//! holds it). `ZEST_HISTORY_URL=postgres://...`:
//! that PostgreSQL store instead (filled when it holds fewer instances).

use std::time::Instant;

mod common;
use common::{element, record};

use serde_json::{json, Value};
use zest_history::aggregate::Aggregate;
use zest_history::{resources, Conditions, History, Of, Resource};
use zest_protocol::{
    BpmnElementType, DecisionEvaluationRecord, ErrorType, EvaluatedDecisionValue, IncidentRecord,
    Intent, JobRecord, ProcessMessageSubscriptionRecord, Record, RecordValue, UserTaskRecord,
    VariableRecord,
};

/// Keys one instance takes (its elements, job, flows, variables, incident).
const KEYS: i64 = 20;
/// Instances a batch of export holds.
const BATCH: i64 = 200;
/// One instance in this many keeps an open incident (and stays active).
const INCIDENT_EVERY: i64 = 100;
/// One instance in this many has a user task (and one in this many of those keeps it open),
/// a decision evaluated, a message subscription.
const TASK_EVERY: i64 = 10;
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

/// The key of instance `i`.
fn pi_key(i: i64) -> i64 {
    (1 << 51) + 1000 + i * KEYS
}

/// Instance `i`'s user task (key +15, its element +16): created with candidate groups, assigned
/// in one case of two, completed unless `open`.
fn user_task(i: i64, open: bool, push: &mut impl FnMut(i64, Intent, RecordValue)) {
    let pi = pi_key(i);
    let el = || element(pi, "approve", BpmnElementType::UserTask);
    push(pi + 16, Intent::ElementActivating, el());
    let task = |assignee: String| {
        RecordValue::UserTask(Box::new(UserTaskRecord {
            user_task_key: pi + 15,
            assignee,
            candidate_groups: vec![format!("group-{}", i / 100 % 20)],
            priority: (i % 101) as i32,
            element_id: "approve".into(),
            element_instance_key: pi + 16,
            bpmn_process_id: "benchmark".into(),
            process_definition_version: 1,
            process_definition_key: 1,
            process_instance_key: pi,
            tenant_id: "<default>".into(),
            ..UserTaskRecord::command()
        }))
    };
    push(pi + 15, Intent::Creating, task(String::new()));
    push(pi + 15, Intent::Created, task(String::new()));
    // by i / 100: the open tasks (i % 100 == 5) have every attribute too
    let assignee = if i / 100 % 2 == 0 {
        format!("user-{}", i / 100 % 50)
    } else {
        String::new()
    };
    if !assignee.is_empty() {
        push(pi + 15, Intent::Assigned, task(assignee.clone()));
    }
    if open {
        return;
    }
    push(pi + 15, Intent::Completed, task(assignee));
    push(pi + 16, Intent::ElementCompleted, el());
}

/// Instance `i`'s decision evaluated (key +17): one of ten decisions.
fn decision(i: i64, push: &mut impl FnMut(i64, Intent, RecordValue)) {
    let pi = pi_key(i);
    let n = i / TASK_EVERY % 10;
    let (id, key) = (format!("decide-{n}"), 100 + n);
    let evaluated = EvaluatedDecisionValue {
        decision_id: id.clone(),
        decision_name: id.clone(),
        decision_key: key,
        decision_version: 1,
        decision_type: "DECISION_TABLE".into(),
        decision_output: "\"ok\"".into(),
        tenant_id: "<default>".into(),
        ..Default::default()
    };
    let e = DecisionEvaluationRecord {
        decision_key: key,
        decision_id: id,
        decision_version: 1,
        decision_output: "\"ok\"".into(),
        bpmn_process_id: "benchmark".into(),
        process_definition_key: 1,
        process_instance_key: pi,
        element_id: "task".into(),
        element_instance_key: pi + 3,
        evaluated_decisions: vec![evaluated],
        tenant_id: "<default>".into(),
        ..Default::default()
    };
    push(
        pi + 17,
        Intent::Evaluated,
        RecordValue::DecisionEvaluation(Box::new(e)),
    );
}

/// Instance `i`'s message subscription on its task (key +18), created and correlated.
fn subscription(i: i64, push: &mut impl FnMut(i64, Intent, RecordValue)) {
    let pi = pi_key(i);
    let m = ProcessMessageSubscriptionRecord {
        subscription_partition_id: 1,
        process_instance_key: pi,
        element_instance_key: pi + 3,
        process_definition_key: 1,
        bpmn_process_id: "benchmark".into(),
        message_name: "payment".into(),
        correlation_key: format!("order-{i}"),
        element_id: "task".into(),
        tenant_id: "<default>".into(),
        ..Default::default()
    };
    let value = || RecordValue::ProcessMessageSubscription(m.clone());
    push(pi + 18, Intent::Created, value());
    push(pi + 18, Intent::Correlated, value());
}

/// Instance `i`'s records: created, its task's job completed (or failed into an incident),
/// completed.
fn instance(i: i64, pos: &mut u64, out: &mut Vec<Record>) {
    let pi = pi_key(i);
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
    match i % TASK_EVERY {
        5 if i % (TASK_EVERY * TASK_EVERY) == 5 => return user_task(i, true, &mut push),
        5 => user_task(i, false, &mut push),
        7 => decision(i, &mut push),
        3 => subscription(i, &mut push),
        _ => {}
    }
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
fn time(name: &str, f: &mut dyn FnMut() -> Value) {
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
        "{name:<48} p50 {:>8.1} ms  p99 {:>8.1} ms  ({found}; {} runs)",
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
    let only = args.next().unwrap_or_default();
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
    let run = |name: &str, f: &mut dyn FnMut() -> Value| {
        if name.contains(only.as_str()) {
            time(name, f)
        }
    };
    for (name, r, q) in searches(instances) {
        run(name, &mut || search(&h, r, q.clone()));
    }
    views(&h, instances, &run);
}

/// A query of `filter` sorted by `sort` (`[field, order]` pairs), 50 a page.
fn query(filter: Value, sort: &[(&str, &str)]) -> Value {
    let sort: Vec<Value> = sort
        .iter()
        .map(|(f, o)| json!({"field": f, "order": o}))
        .collect();
    json!({"filter": filter, "sort": sort, "page": {"limit": 50}})
}

type Search = (&'static str, &'static Resource, Value);

/// The searches of process instances: Operate's and the web UI's views, the dashboard's
/// counts, c8ctl's `list pi` and a client's default (by key).
fn instance_searches() -> Vec<Search> {
    let pi = &resources::PROCESS_INSTANCES;
    let newest = [("startDate", "DESC")];
    let window = json!({"startDate": {"$gte": "2025-01-01T01:00:00Z",
                                      "$lt": "2025-01-01T01:10:00Z"}});
    vec![
        (
            "pi: by process and state",
            pi,
            query(
                json!({"processDefinitionId": "benchmark", "state": "COMPLETED"}),
                &[],
            ),
        ),
        (
            "pi: a definition's completed, newest first",
            pi,
            query(
                json!({"processDefinitionKey": "1", "state": "COMPLETED"}),
                &newest,
            ),
        ),
        (
            "pi: a process id's completed, newest first",
            pi,
            query(
                json!({"processDefinitionId": "benchmark", "state": "COMPLETED"}),
                &newest,
            ),
        ),
        (
            "pi: all, newest first (UI's Instances)",
            pi,
            query(json!({}), &newest),
        ),
        (
            "pi: a definition's, newest first (UI)",
            pi,
            query(json!({"processDefinitionKey": "1"}), &newest),
        ),
        (
            "pi: a process id's, newest first (UI)",
            pi,
            query(json!({"processDefinitionId": "benchmark"}), &newest),
        ),
        (
            "pi: a process id's active, newest first",
            pi,
            query(
                json!({"processDefinitionId": "benchmark", "state": "ACTIVE"}),
                &newest,
            ),
        ),
        (
            "pi: at an element, newest first (a click)",
            pi,
            query(
                json!({"processDefinitionKey": "1", "elementId": "task"}),
                &newest,
            ),
        ),
        (
            "pi: a definition's completed, by key",
            pi,
            query(
                json!({"processDefinitionKey": "1", "state": "COMPLETED"}),
                &[],
            ),
        ),
        (
            "pi: active (c8 list pi), by key",
            pi,
            query(json!({"state": "ACTIVE"}), &[]),
        ),
        (
            "pi: active, newest first",
            pi,
            query(json!({"state": "ACTIVE"}), &newest),
        ),
        (
            "pi: active with incident (dashboard)",
            pi,
            query(json!({"state": "ACTIVE", "hasIncident": true}), &[]),
        ),
        (
            "pi: all, by key (a client's default)",
            pi,
            query(json!({}), &[]),
        ),
        ("pi: by start date (10 min window)", pi, query(window, &[])),
    ]
}

/// The searches of incidents, jobs and element instances (`pi`: a completed instance).
fn incident_job_element_searches(pi: &str) -> Vec<Search> {
    let (inc, job, ei) = (
        &resources::INCIDENTS,
        &resources::JOBS,
        &resources::ELEMENT_INSTANCES,
    );
    vec![
        (
            "inc: active, newest first (UI)",
            inc,
            query(json!({"state": "ACTIVE"}), &[("creationTime", "DESC")]),
        ),
        (
            "inc: active (c8 list inc), by key",
            inc,
            query(json!({"state": "ACTIVE"}), &[]),
        ),
        (
            "inc: active of an error message (UI)",
            inc,
            query(
                json!({"state": "ACTIVE", "errorMessage": "card declined (3)"}),
                &[("creationTime", "DESC")],
            ),
        ),
        (
            "inc: a process's, newest first",
            inc,
            query(
                json!({"processDefinitionId": "benchmark"}),
                &[("creationTime", "DESC")],
            ),
        ),
        (
            "inc: an instance's active (UI)",
            inc,
            query(
                json!({"processInstanceKey": pi_key(0).to_string(), "state": "ACTIVE"}),
                &[("creationTime", "ASC")],
            ),
        ),
        (
            "job: by type and state",
            job,
            query(json!({"type": "benchmark-task", "state": "COMPLETED"}), &[]),
        ),
        (
            "job: by type and state (c8 search jobs)",
            job,
            query(
                json!({"tenantId": "<default>", "type": "benchmark-task", "state": "COMPLETED"}),
                &[],
            ),
        ),
        (
            "job: by type, failed",
            job,
            query(json!({"type": "benchmark-task", "state": "FAILED"}), &[]),
        ),
        (
            "job: an instance's",
            job,
            query(json!({"processInstanceKey": pi}), &[]),
        ),
        (
            "ei: an instance's",
            ei,
            query(json!({"processInstanceKey": pi}), &[]),
        ),
        (
            "ei: a scope's, by start (UI's tree)",
            ei,
            query(
                json!({"elementInstanceScopeKey": pi}),
                &[("startDate", "ASC"), ("elementInstanceKey", "ASC")],
            ),
        ),
        (
            "ei: a definition's at an element",
            ei,
            query(
                json!({"processDefinitionKey": "1", "elementId": "task"}),
                &[],
            ),
        ),
        (
            "ei: a definition's at an element, active",
            ei,
            query(
                json!({"processDefinitionKey": "1", "elementId": "task", "state": "ACTIVE"}),
                &[],
            ),
        ),
        (
            "ei: a definition's at an element, completed",
            ei,
            query(
                json!({"processDefinitionKey": "1", "elementId": "task", "state": "COMPLETED"}),
                &[],
            ),
        ),
    ]
}

/// Tasklist's views and c8ctl's `list ut` (`task_pi`: an instance with a user task).
fn user_task_searches(task_pi: &str) -> Vec<Search> {
    let ut = &resources::USER_TASKS;
    let created = [("creationDate", "DESC")];
    vec![
        (
            "ut: open, newest first (Tasklist)",
            ut,
            query(json!({"state": "CREATED"}), &created),
        ),
        (
            "ut: open (c8 list ut), by key",
            ut,
            query(json!({"state": "CREATED"}), &[]),
        ),
        (
            "ut: assigned to a user, newest first",
            ut,
            query(json!({"state": "CREATED", "assignee": "user-10"}), &created),
        ),
        (
            "ut: unassigned, newest first",
            ut,
            query(
                json!({"state": "CREATED", "assignee": {"$exists": false}}),
                &created,
            ),
        ),
        (
            "ut: open of a candidate group, newest first",
            ut,
            query(
                json!({"state": "CREATED", "candidateGroup": "group-5"}),
                &created,
            ),
        ),
        (
            "ut: open by priority",
            ut,
            query(json!({"state": "CREATED"}), &[("priority", "DESC")]),
        ),
        (
            "ut: completed, newest first",
            ut,
            query(json!({"state": "COMPLETED"}), &created),
        ),
        ("ut: all, newest first", ut, query(json!({}), &created)),
        (
            "ut: an instance's",
            ut,
            query(json!({"processInstanceKey": task_pi}), &[]),
        ),
    ]
}

/// The searches of decision instances, message subscriptions and variables.
fn decision_message_variable_searches(pi: &str) -> Vec<Search> {
    let (di, ms) = (
        &resources::DECISION_INSTANCES,
        &resources::MESSAGE_SUBSCRIPTIONS,
    );
    let var = &resources::VARIABLES;
    vec![
        (
            "di: all, newest first",
            di,
            query(json!({}), &[("evaluationDate", "DESC")]),
        ),
        (
            "di: a decision's, newest first (UI)",
            di,
            query(
                json!({"decisionDefinitionKey": "103"}),
                &[("evaluationDate", "DESC")],
            ),
        ),
        (
            "di: a decision id's, newest first",
            di,
            query(
                json!({"decisionDefinitionId": "decide-3"}),
                &[("evaluationDate", "DESC")],
            ),
        ),
        ("ms: all, by key", ms, query(json!({}), &[])),
        (
            "ms: an instance's",
            ms,
            query(json!({"processInstanceKey": pi_key(3).to_string()}), &[]),
        ),
        (
            "ms: by message name and correlation key",
            ms,
            query(
                json!({"messageName": "payment", "correlationKey": "order-13"}),
                &[],
            ),
        ),
        (
            "var: an instance's, by name (UI)",
            var,
            query(json!({"processInstanceKey": pi}), &[("name", "ASC")]),
        ),
        ("var: a scope's", var, query(json!({"scopeKey": pi}), &[])),
        (
            "var: by name (not a default)",
            var,
            query(json!({"name": "businessKey"}), &[]),
        ),
    ]
}

fn searches(instances: i64) -> Vec<Search> {
    let pi = pi_key(instances / 2 + 1).to_string();
    let task_pi = pi_key(instances / 2 / 10 * 10 + 5).to_string();
    let mut all = instance_searches();
    all.extend(incident_job_element_searches(&pi));
    all.extend(user_task_searches(&task_pi));
    all.extend(decision_message_variable_searches(&pi));
    all
}

/// The views that are not a search: a variable filter, statistics, sequence flows, a deep
/// cursor.
fn views(h: &History, instances: i64, run: &dyn Fn(&str, &mut dyn FnMut() -> Value)) {
    let pi = pi_key(instances / 2 + 1);
    let mut n = 0;
    run("pi: by a variable's value", &mut || {
        n += 7919;
        let key = format!("\"order-{}\"", n % instances);
        let q = json!({"filter": {"variables": [{"name": "businessKey", "value": key}]}});
        search(h, &resources::PROCESS_INSTANCES, q)
    });
    run(
        "pi: one (get)",
        &mut || json!({"items": [h.get(&resources::PROCESS_INSTANCES, pi).unwrap()]}),
    );
    run("stats: a definition's elements", &mut || {
        h.element_statistics(Of::Definition(1), &Value::Null)
            .unwrap()
    });
    run("stats: an instance's elements", &mut || {
        h.element_statistics(Of::Instance(pi), &Value::Null)
            .unwrap()
    });
    run("sequence flows of an instance", &mut || {
        h.sequence_flows(pi).unwrap()
    });
    run("stats: active by definition (dashboard)", &mut || {
        groups(h, Aggregate::DefinitionInstances)
    });
    run("stats: incidents by error (dashboard)", &mut || {
        groups(h, Aggregate::IncidentsByError)
    });
    // a cursor deep in the results: the end cursor of the page at 90 % of them
    let q = json!({"page": {"from": instances * 9 / 10, "limit": 50}});
    let cursor = search(h, &resources::PROCESS_INSTANCES, q)["page"]["endCursor"].clone();
    run("pi: the page after a cursor at 90 %", &mut || {
        let q = json!({"page": {"after": cursor, "limit": 50}});
        search(h, &resources::PROCESS_INSTANCES, q)
    });
}

/// The groups of a statistics request, as items.
fn groups(h: &History, a: Aggregate) -> Value {
    let g = h.aggregate(&a, None).unwrap();
    json!({"items": g.groups.iter().map(|g| json!(g.counts)).collect::<Vec<_>>()})
}
