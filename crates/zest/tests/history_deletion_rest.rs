//! Camunda 8.9's history deletion through the REST API v2 of a real `zest start`: one finished
//! instance (gone from every search, its variables too; others untouched), 409 for a running
//! one, 404 for an unknown key; the batch by filter with its progress (running instances are
//! items that fail); a decision evaluation's deletion, one and by filter; a process
//! definition's resource deleted with its history (8.9's `deleteHistory`).

mod common;

use std::time::{Duration, Instant};

use common::{activate_rest, deploy_rest, http, service_task_bpmn, start, start_in, start_with};
use serde_json::{json, Value};

fn post(rest: &str, path: &str, body: Value) -> Value {
    let (status, answer) = http(rest, "POST", path, Some(body));
    assert_eq!(status, 200, "{path}: {answer}");
    answer
}

fn total(rest: &str, path: &str, filter: Value) -> i64 {
    let page = post(rest, path, json!({"filter": filter}));
    page["page"]["totalItems"].as_i64().expect("totalItems")
}

/// Waits (up to 20 s) until the search of `path` with `filter` counts `n`.
fn wait_count(rest: &str, path: &str, filter: Value, n: i64) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let found = total(rest, path, filter.clone());
        if found == n {
            return;
        }
        assert!(Instant::now() < until, "{path} {filter}: {found}, not {n}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Creates `n` instances of `process`, each with a variable `n`; their keys.
fn create(rest: &str, process: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let body = json!({"processDefinitionId": process, "variables": {"n": i}});
            let created = post(rest, "/v2/process-instances", body);
            created["processInstanceKey"].as_str().unwrap().to_string()
        })
        .collect()
}

/// Completes one job of `job_type`: the key of the instance it completed.
fn complete_one(rest: &str, job_type: &str) -> String {
    let job = activate_rest(rest, job_type).expect("a job");
    let key = job["jobKey"].as_str().unwrap();
    let (status, answer) = http(
        rest,
        "POST",
        &format!("/v2/jobs/{key}/completion"),
        Some(json!({})),
    );
    assert_eq!(status, 204, "{answer}");
    job["processInstanceKey"].as_str().unwrap().to_string()
}

fn cancel(rest: &str, key: &str) {
    let path = format!("/v2/process-instances/{key}/cancellation");
    let (status, answer) = http(rest, "POST", &path, Some(json!({})));
    assert_eq!(status, 204, "{answer}");
}

/// POST `/v2/{what}/{key}/deletion`: the status and the problem.
fn delete(rest: &str, what: &str, key: &str) -> (u16, Value) {
    http(rest, "POST", &format!("/v2/{what}/{key}/deletion"), None)
}

fn wait_operation(rest: &str, key: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, op) = http(rest, "GET", &format!("/v2/batch-operations/{key}"), None);
        if status == 200 && op["state"] == "COMPLETED" {
            return op;
        }
        assert!(Instant::now() < until, "batch operation {key}: {op}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn items(rest: &str, key: &str) -> Vec<Value> {
    let page = post(
        rest,
        "/v2/batch-operation-items/search",
        json!({"filter": {"batchOperationKey": key}, "page": {"limit": 100}}),
    );
    page["items"].as_array().unwrap().clone()
}

const INSTANCES: &str = "/v2/process-instances/search";
const VARIABLES: &str = "/v2/variables/search";
const ELEMENTS: &str = "/v2/element-instances/search";

#[test]
fn a_finished_instance_is_deleted_a_running_one_refused_an_unknown_one_not_found() {
    let node = start("deletion-one");
    let rest = &node.rest;
    deploy_rest(rest, "del.bpmn", &service_task_bpmn("del", "del-task"));
    let keys = create(rest, "del", 3);
    let done = complete_one(rest, "del-task");
    let running: Vec<&String> = keys.iter().filter(|k| **k != done).collect();
    let (kept, still) = (running[0], running[1]);
    cancel(rest, kept);
    for key in [&done, kept] {
        wait_count(rest, VARIABLES, json!({"processInstanceKey": key}), 1);
    }

    let (status, problem) = delete(rest, "process-instances", still);
    assert_eq!(status, 409, "{problem}");
    assert_eq!(problem["title"], "INVALID_STATE", "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("still active"),
        "{problem}"
    );
    let unknown = ((1i64 << 51) + 987_654).to_string();
    let (status, problem) = delete(rest, "process-instances", &unknown);
    assert_eq!(status, 404, "{problem}");
    let (status, problem) = delete(rest, "process-instances", "x1");
    assert_eq!(status, 400, "{problem}");

    let (status, answer) = delete(rest, "process-instances", &done);
    assert_eq!(status, 204, "{answer}");
    wait_count(rest, INSTANCES, json!({"processInstanceKey": done}), 0);
    assert_eq!(
        total(rest, VARIABLES, json!({"processInstanceKey": done})),
        0
    );
    assert_eq!(
        total(rest, ELEMENTS, json!({"processInstanceKey": done})),
        0
    );
    let (status, _) = http(rest, "GET", &format!("/v2/process-instances/{done}"), None);
    assert_eq!(status, 404);
    // the others are untouched, finished or running
    assert_eq!(
        total(rest, INSTANCES, json!({"processDefinitionId": "del"})),
        2
    );
    for key in [kept, still] {
        assert_eq!(
            total(rest, VARIABLES, json!({"processInstanceKey": key})),
            1
        );
        assert!(total(rest, ELEMENTS, json!({"processInstanceKey": key})) > 0);
    }
    // deleted already: history no longer knows it
    let (status, problem) = delete(rest, "process-instances", &done);
    assert_eq!(status, 404, "{problem}");
}

#[test]
fn the_batch_deletes_the_finished_instances_a_filter_finds_and_fails_the_running_ones() {
    let node = start("deletion-batch");
    let rest = &node.rest;
    deploy_rest(rest, "bdel.bpmn", &service_task_bpmn("bdel", "bdel-task"));
    deploy_rest(
        rest,
        "other.bpmn",
        &service_task_bpmn("other", "other-task"),
    );
    let keys = create(rest, "bdel", 6);
    let other = create(rest, "other", 1);
    cancel(rest, &other[0]);
    let mut finished: Vec<String> = (0..2).map(|_| complete_one(rest, "bdel-task")).collect();
    let canceled: Vec<String> = keys
        .iter()
        .filter(|k| !finished.contains(k))
        .take(2)
        .cloned()
        .collect();
    for key in canceled {
        cancel(rest, &key);
        finished.push(key);
    }
    wait_count(
        rest,
        INSTANCES,
        json!({"processDefinitionId": "bdel", "state": "ACTIVE"}),
        2,
    );

    let created = post(
        rest,
        "/v2/process-instances/deletion",
        json!({"filter": {"processDefinitionId": "bdel"}}),
    );
    assert_eq!(created["batchOperationType"], "DELETE_PROCESS_INSTANCE");
    let key = created["batchOperationKey"].as_str().unwrap();
    let op = wait_operation(rest, key);
    assert_eq!(op["operationsTotalCount"], 6, "{op}");
    assert_eq!(op["operationsCompletedCount"], 4, "{op}");
    assert_eq!(op["operationsFailedCount"], 2, "{op}");
    let items = items(rest, key);
    assert_eq!(items.len(), 6);
    for item in &items {
        let k = item["processInstanceKey"].as_str().unwrap().to_string();
        assert_eq!(item["operationType"], "DELETE_PROCESS_INSTANCE");
        if finished.contains(&k) {
            assert_eq!(item["state"], "COMPLETED", "{item}");
        } else {
            assert_eq!(item["state"], "FAILED", "{item}");
            let message = item["errorMessage"].as_str().unwrap();
            assert!(message.contains("still active"), "{item}");
        }
    }
    wait_count(rest, INSTANCES, json!({"processDefinitionId": "bdel"}), 2);
    assert_eq!(
        total(
            rest,
            INSTANCES,
            json!({"processDefinitionId": "bdel", "state": "ACTIVE"})
        ),
        2
    );
    for key in &finished {
        assert_eq!(
            total(rest, VARIABLES, json!({"processInstanceKey": key})),
            0
        );
    }
    // another process's finished instance is not the filter's
    assert_eq!(
        total(rest, INSTANCES, json!({"processDefinitionId": "other"})),
        1
    );
    // a bad filter field is named
    let (status, problem) = http(
        rest,
        "POST",
        "/v2/process-instances/deletion",
        Some(json!({"filter": {"noSuchField": 1}})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(problem["detail"].as_str().unwrap().contains("noSuchField"));
}

/// The deletion is a record of the log, not a local DELETE: a node whose history is rebuilt
/// from its log (its SQLite store removed, as a new replica starts with none) exports the
/// instances again and forgets the deleted one again. (With PostgreSQL the store is kept:
/// the restart alone.)
#[test]
fn a_node_exporting_its_log_again_forgets_the_deleted_instance_again() {
    let node = start("deletion-replay");
    let rest = node.rest.clone();
    deploy_rest(&rest, "rdel.bpmn", &service_task_bpmn("rdel", "rdel-task"));
    let keys = create(&rest, "rdel", 2);
    for key in &keys {
        cancel(&rest, key);
    }
    wait_count(&rest, VARIABLES, json!({"processInstanceKey": keys[0]}), 1);
    assert_eq!(delete(&rest, "process-instances", &keys[0]).0, 204);
    wait_count(&rest, INSTANCES, json!({"processDefinitionId": "rdel"}), 1);

    let dir = node.kill();
    let postgres = std::env::var(common::POSTGRES).is_ok_and(|u| !u.is_empty());
    if !postgres {
        assert!(dir.join("history.sqlite").exists(), "{dir:?}");
        for file in ["history.sqlite", "history.sqlite-wal", "history.sqlite-shm"] {
            let _ = std::fs::remove_file(dir.join(file));
        }
    }
    let node = start_in(dir, &[]);
    let rest = &node.rest;
    // the log exported again: the other instance is back, with its variable
    wait_count(rest, VARIABLES, json!({"processInstanceKey": keys[1]}), 1);
    let found = post(
        rest,
        INSTANCES,
        json!({"filter": {"processDefinitionId": "rdel"}}),
    );
    assert_eq!(found["page"]["totalItems"], 1, "{found}");
    assert_eq!(found["items"][0]["processInstanceKey"], keys[1].as_str());
    assert_eq!(
        total(rest, VARIABLES, json!({"processInstanceKey": keys[0]})),
        0
    );
}

/// Evaluates the pricing DMN's `discount` alone: its evaluation key.
fn evaluate(rest: &str, customer: &str) -> String {
    let evaluated = post(
        rest,
        "/v2/decision-definitions/evaluation",
        json!({"decisionDefinitionId": "discount",
               "variables": {"customer": customer, "amount": 200}}),
    );
    evaluated["decisionEvaluationKey"]
        .as_str()
        .unwrap_or_else(|| panic!("{evaluated}"))
        .to_string()
}

#[test]
fn decision_evaluations_are_deleted_one_and_by_filter() {
    let node = start("deletion-decisions");
    let rest = &node.rest;
    let dmn = include_str!("../../../tests/compat/testdata/pricing.dmn");
    deploy_rest(rest, "pricing.dmn", dmn.as_bytes());
    let evaluations: Vec<String> = ["gold", "silver", "gold"]
        .iter()
        .map(|c| evaluate(rest, c))
        .collect();
    let search = "/v2/decision-instances/search";
    let of = |key: &str| json!({"decisionEvaluationKey": key});
    wait_count(rest, search, json!({}), 3);

    let (status, answer) = delete(rest, "decision-instances", &evaluations[0]);
    assert_eq!(status, 204, "{answer}");
    wait_count(rest, search, of(&evaluations[0]), 0);
    assert_eq!(total(rest, search, of(&evaluations[1])), 1);
    let (status, problem) = delete(rest, "decision-instances", &evaluations[0]);
    assert_eq!(status, 404, "{problem}");
    let unknown = ((1i64 << 51) + 987_654).to_string();
    assert_eq!(delete(rest, "decision-instances", &unknown).0, 404);

    // a business rule task's evaluation of `price`, which requires `discount`: two decision
    // instances of one evaluation, each an item, the evaluation deleted once
    let bpmn = include_bytes!("../../../tests/compat/testdata/pricing.bpmn");
    deploy_rest(rest, "pricing.bpmn", bpmn);
    let created = post(
        rest,
        "/v2/process-instances",
        json!({"processDefinitionId": "pricing_process",
               "variables": {"customer": "gold", "amount": 200}}),
    );
    let instance = created["processInstanceKey"].as_str().unwrap();
    wait_count(rest, search, json!({"processInstanceKey": instance}), 2);
    let created = post(
        rest,
        "/v2/decision-instances/deletion",
        json!({"filter": {"processInstanceKey": instance}}),
    );
    let key = created["batchOperationKey"].as_str().unwrap();
    let op = wait_operation(rest, key);
    assert_eq!(
        (&op["operationsTotalCount"], &op["operationsCompletedCount"]),
        (&json!(2), &json!(2)),
        "{op}"
    );
    let mut item_keys: Vec<String> = items(rest, key)
        .iter()
        .map(|i| i["itemKey"].as_str().unwrap().to_string())
        .collect();
    item_keys.dedup();
    assert_eq!(item_keys.len(), 2, "{item_keys:?}");
    wait_count(rest, search, json!({"processInstanceKey": instance}), 0);
    assert_eq!(
        total(rest, INSTANCES, json!({"processInstanceKey": instance})),
        1
    );

    let created = post(
        rest,
        "/v2/decision-instances/deletion",
        json!({"filter": {"decisionDefinitionId": "discount"}}),
    );
    assert_eq!(created["batchOperationType"], "DELETE_DECISION_INSTANCE");
    let key = created["batchOperationKey"].as_str().unwrap();
    let op = wait_operation(rest, key);
    assert_eq!(op["operationsTotalCount"], 2, "{op}");
    assert_eq!(op["operationsCompletedCount"], 2, "{op}");
    // one item per decision instance found (an evaluation of `discount` alone has one)
    let items = items(rest, key);
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(items.iter().all(|i| i["state"] == "COMPLETED"), "{items:?}");
    wait_count(rest, search, json!({}), 0);
}

#[test]
fn without_history_every_deletion_is_refused_with_camundas_403() {
    let node = start_with("deletion-off", &["--history", "off"]);
    let rest = &node.rest;
    let key = ((1i64 << 51) + 5).to_string();
    for (path, body) in [
        (format!("/v2/process-instances/{key}/deletion"), None),
        (format!("/v2/decision-instances/{key}/deletion"), None),
        (
            "/v2/process-instances/deletion".into(),
            Some(json!({"filter": {}})),
        ),
        (
            "/v2/decision-instances/deletion".into(),
            Some(json!({"filter": {}})),
        ),
    ] {
        let (status, problem) = http(rest, "POST", &path, body);
        assert_eq!(status, 403, "{path}: {problem}");
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("secondary storage"), "{path}: {problem}");
    }
}

/// POST `/v2/resources/{key}/deletion` with `body`: the status and the answer.
fn delete_resource(rest: &str, key: &str, body: Value) -> (u16, Value) {
    http(
        rest,
        "POST",
        &format!("/v2/resources/{key}/deletion"),
        Some(body),
    )
}

#[test]
fn a_process_definition_is_deleted_with_its_history() {
    let node = start("deletion-definition");
    let rest = &node.rest;
    let deployed = deploy_rest(rest, "pdel.bpmn", &service_task_bpmn("pdel", "pdel-task"));
    let definition = deployed["deployments"][0]["processDefinition"]["processDefinitionKey"]
        .as_str()
        .unwrap()
        .to_string();
    deploy_rest(
        rest,
        "pkeep.bpmn",
        &service_task_bpmn("pkeep", "pkeep-task"),
    );
    let keys = create(rest, "pdel", 3);
    let kept = create(rest, "pkeep", 1);
    cancel(rest, &kept[0]);
    let done = complete_one(rest, "pdel-task");
    let running: Vec<&String> = keys.iter().filter(|k| **k != done).collect();
    cancel(rest, running[0]);

    // an instance still runs: refused as without the flag, and nothing is created
    let with_history = json!({"deleteHistory": true});
    let (status, problem) = delete_resource(rest, &definition, with_history.clone());
    assert_eq!(status, 409, "{problem}");
    cancel(rest, running[1]);
    let of_definition = json!({"processDefinitionKey": definition});
    wait_count(
        rest,
        INSTANCES,
        json!({"processDefinitionKey": definition, "state": "ACTIVE"}),
        0,
    );

    let (status, answer) = delete_resource(rest, &definition, with_history.clone());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["resourceKey"], definition.as_str());
    let operation = &answer["batchOperation"];
    assert_eq!(operation["batchOperationType"], "DELETE_PROCESS_DEFINITION");
    let key = operation["batchOperationKey"].as_str().unwrap();
    let op = wait_operation(rest, key);
    assert_eq!(op["operationsTotalCount"], 3, "{op}");
    assert_eq!(op["operationsCompletedCount"], 3, "{op}");
    assert_eq!(items(rest, key).len(), 3);
    wait_count(rest, INSTANCES, of_definition.clone(), 0);
    for key in &keys {
        assert_eq!(
            total(rest, VARIABLES, json!({"processInstanceKey": key})),
            0
        );
    }
    // then the definition's own history, once no instance of it is left
    let until = Instant::now() + Duration::from_secs(20);
    let path = format!("/v2/process-definitions/{definition}");
    while http(rest, "GET", &path, None).0 != 404 {
        assert!(Instant::now() < until, "{path} is still found");
        std::thread::sleep(Duration::from_millis(100));
    }
    let found = post(
        rest,
        "/v2/process-definitions/search",
        json!({"filter": {"processDefinitionId": "pdel"}}),
    );
    assert_eq!(found["page"]["totalItems"], 0, "{found}");
    // another process's history is untouched
    assert_eq!(
        total(rest, INSTANCES, json!({"processDefinitionId": "pkeep"})),
        1
    );

    // without the flag, or for another kind of resource: no batch operation
    let kept_definition = post(
        rest,
        "/v2/process-definitions/search",
        json!({"filter": {"processDefinitionId": "pkeep"}}),
    )["items"][0]["processDefinitionKey"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, answer) = delete_resource(rest, &kept_definition, json!({}));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["batchOperation"], Value::Null);
    assert_eq!(
        total(rest, INSTANCES, json!({"processDefinitionId": "pkeep"})),
        1
    );
    let dmn = include_str!("../../../tests/compat/testdata/pricing.dmn");
    let deployed = deploy_rest(rest, "pricing.dmn", dmn.as_bytes());
    let drg = deployed["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|d| d["decisionRequirements"]["decisionRequirementsKey"].as_str())
        .unwrap_or_else(|| panic!("{deployed}"))
        .to_string();
    let (status, answer) = delete_resource(rest, &drg, with_history);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["batchOperation"], Value::Null);
    let (status, problem) = delete_resource(rest, &definition, json!({"deleteHistory": 1}));
    assert_eq!(status, 400, "{problem}");
}
