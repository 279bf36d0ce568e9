//! Batch operations by filter through the REST API v2 of a real `zest start` (Camunda 8.8's
//! `/v2/process-instances/cancellation`, `/incident-resolution`, `/migration`,
//! `/modification` and `/v2/batch-operations/...`): what a user of Operate's bulk actions
//! sees. Each creates instances over REST, acts on some of them by a filter, and watches the
//! operation, its items and the instances in the searches.

mod common;

use std::time::{Duration, Instant};

use common::{deploy_rest, http, service_task_bpmn, start, start_in, start_with};
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

/// Creates `n` instances of `process` with `{"n": i, "group": group(i)}`; their keys.
fn create(
    rest: &str,
    process: &str,
    n: usize,
    group: impl Fn(usize) -> &'static str,
) -> Vec<String> {
    (0..n)
        .map(|i| {
            let body = json!({"processDefinitionId": process,
                              "variables": {"n": i, "group": group(i)}});
            let created = post(rest, "/v2/process-instances", body);
            created["processInstanceKey"].as_str().unwrap().to_string()
        })
        .collect()
}

/// Starts a batch operation: its key.
fn batch(rest: &str, path: &str, body: Value, kind: &str) -> String {
    let created = post(rest, path, body);
    assert_eq!(created["batchOperationType"], kind, "{created}");
    created["batchOperationKey"].as_str().unwrap().to_string()
}

fn operation(rest: &str, key: &str) -> Value {
    let (status, op) = http(rest, "GET", &format!("/v2/batch-operations/{key}"), None);
    assert_eq!(status, 200, "{op}");
    op
}

/// Waits (up to 30 s) until the operation is in `state`.
fn wait_for(rest: &str, key: &str, state: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, op) = http(rest, "GET", &format!("/v2/batch-operations/{key}"), None);
        if status == 200 && op["state"] == state {
            return op;
        }
        assert!(
            Instant::now() < until,
            "batch operation {key} never {state}: {op}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn items(rest: &str, key: &str) -> Vec<Value> {
    let page = post(
        rest,
        "/v2/batch-operation-items/search",
        json!({"filter": {"batchOperationKey": key}, "page": {"limit": 1000}}),
    );
    page["items"].as_array().unwrap().clone()
}

#[test]
fn cancels_the_instances_a_filter_finds_and_no_other() {
    let node = start("batch-cancel");
    let rest = &node.rest;
    deploy_rest(
        rest,
        "batch.bpmn",
        &service_task_bpmn("batch", "batch-task"),
    );
    let keys = create(
        rest,
        "batch",
        50,
        |i| if i % 5 < 3 { "cancel" } else { "keep" },
    );
    let filter = json!({"processDefinitionId": "batch",
                        "variables": [{"name": "group", "value": "\"cancel\""}]});
    let key = batch(
        rest,
        "/v2/process-instances/cancellation",
        json!({"filter": filter}),
        "CANCEL_PROCESS_INSTANCE",
    );
    let done = wait_for(rest, &key, "COMPLETED");
    assert_eq!(done["operationsTotalCount"], 30, "{done}");
    assert_eq!(done["operationsCompletedCount"], 30, "{done}");
    assert_eq!(done["operationsFailedCount"], 0, "{done}");
    assert!(
        done["startDate"].is_string() && done["endDate"].is_string(),
        "{done}"
    );

    let items = items(rest, &key);
    assert_eq!(items.len(), 30);
    assert!(items.iter().all(|i| i["state"] == "COMPLETED"), "{items:?}");
    let canceled: Vec<&str> = keys
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 5 < 3)
        .map(|(_, k)| k.as_str())
        .collect();
    for item in &items {
        let k = item["processInstanceKey"].as_str().unwrap();
        assert!(canceled.contains(&k), "{item} was not to be canceled");
        assert_eq!(item["itemKey"], item["processInstanceKey"]);
        assert_eq!(item["operationType"], "CANCEL_PROCESS_INSTANCE");
    }
    let search = "/v2/process-instances/search";
    let by_state = |state: &str| {
        total(
            rest,
            search,
            json!({"processDefinitionId": "batch", "state": state}),
        )
    };
    assert_eq!(by_state("TERMINATED"), 30);
    assert_eq!(by_state("ACTIVE"), 20);

    let found = post(
        rest,
        "/v2/batch-operations/search",
        json!({"filter": {"operationType": "CANCEL_PROCESS_INSTANCE", "state": "COMPLETED"}}),
    );
    assert_eq!(found["page"]["totalItems"], 1, "{found}");
    assert_eq!(found["items"][0]["batchOperationKey"], key.as_str());
}

#[test]
fn resolves_incidents_migrates_and_modifies_in_bulk() {
    let node = start("batch-more");
    let rest = &node.rest;
    deploy_rest(
        rest,
        "flaky.bpmn",
        &service_task_bpmn("flaky", "flaky-task"),
    );
    create(rest, "flaky", 4, |_| "x");
    // each job fails without retries: an incident per instance
    for _ in 0..4 {
        let job = common::activate_rest(rest, "flaky-task").expect("a job");
        let path = format!("/v2/jobs/{}/failure", job["jobKey"].as_str().unwrap());
        let (status, answer) = http(
            rest,
            "POST",
            &path,
            Some(json!({"retries": 0, "errorMessage": "down"})),
        );
        assert_eq!(status, 204, "{answer}");
    }
    let incidents = "/v2/incidents/search";
    let until = Instant::now() + Duration::from_secs(10);
    while total(rest, incidents, json!({"state": "ACTIVE"})) < 4 {
        assert!(Instant::now() < until, "the four incidents never showed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let key = batch(
        rest,
        "/v2/process-instances/incident-resolution",
        json!({"filter": {"processDefinitionId": "flaky"}}),
        "RESOLVE_INCIDENT",
    );
    let done = wait_for(rest, &key, "COMPLETED");
    assert_eq!(done["operationsCompletedCount"], 4, "{done}");
    assert_eq!(total(rest, incidents, json!({"state": "RESOLVED"})), 4);
    assert_eq!(total(rest, incidents, json!({"state": "ACTIVE"})), 0);
    // the jobs are activatable again (the batch gave each a retry)
    let job = common::activate_rest(rest, "flaky-task").expect("a job again");

    // 8.9: the incidents of one instance, by its key
    let path = format!("/v2/jobs/{}/failure", job["jobKey"].as_str().unwrap());
    let (status, answer) = http(
        rest,
        "POST",
        &path,
        Some(json!({"retries": 0, "errorMessage": "down again"})),
    );
    assert_eq!(status, 204, "{answer}");
    let instance = job["processInstanceKey"].as_str().unwrap().to_string();
    let of_instance = json!({"state": "ACTIVE", "processInstanceKey": instance});
    let until = Instant::now() + Duration::from_secs(10);
    while total(rest, incidents, of_instance.clone()) < 1 {
        assert!(
            Instant::now() < until,
            "the instance's incident never showed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let key = batch(
        rest,
        &format!("/v2/process-instances/{instance}/incident-resolution"),
        json!({}),
        "RESOLVE_INCIDENT",
    );
    let done = wait_for(rest, &key, "COMPLETED");
    assert_eq!(done["operationsCompletedCount"], 1, "{done}");
    assert_eq!(total(rest, incidents, of_instance), 0);
    let (status, problem) = http(
        rest,
        "POST",
        "/v2/process-instances/4503599627370495/incident-resolution",
        None,
    );
    assert_eq!(status, 404, "{problem}");

    // migration: five instances of version 1 to version 2
    deploy_rest(rest, "mig.bpmn", &service_task_bpmn("mig", "mig-a"));
    create(rest, "mig", 5, |_| "x");
    let v2 = deploy_rest(rest, "mig.bpmn", &service_task_bpmn("mig", "mig-b"));
    let target = v2["deployments"][0]["processDefinition"]["processDefinitionKey"].clone();
    let key = batch(
        rest,
        "/v2/process-instances/migration",
        json!({"filter": {"processDefinitionId": "mig", "processDefinitionVersion": 1},
               "migrationPlan": {"targetProcessDefinitionKey": target,
                                 "mappingInstructions": [{"sourceElementId": "task", "targetElementId": "task"}]}}),
        "MIGRATE_PROCESS_INSTANCE",
    );
    let done = wait_for(rest, &key, "COMPLETED");
    assert_eq!(done["operationsCompletedCount"], 5, "{done}");
    let search = "/v2/process-instances/search";
    assert_eq!(
        total(
            rest,
            search,
            json!({"processDefinitionId": "mig", "processDefinitionVersion": 2})
        ),
        5
    );

    // modification: the token moves from the task to the end event, so the instances complete
    let key = batch(
        rest,
        "/v2/process-instances/modification",
        json!({"filter": {"processDefinitionId": "mig"},
               "moveInstructions": [{"sourceElementId": "task", "targetElementId": "end"}]}),
        "MODIFY_PROCESS_INSTANCE",
    );
    let done = wait_for(rest, &key, "COMPLETED");
    assert_eq!(done["operationsCompletedCount"], 5, "{done}");
    let until = Instant::now() + Duration::from_secs(10);
    while total(
        rest,
        search,
        json!({"processDefinitionId": "mig", "state": "COMPLETED"}),
    ) < 5
    {
        assert!(
            Instant::now() < until,
            "the modified instances never completed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The operation is suspended right after it is created: the driver looks for work every
/// 200 ms, so the suspension comes first (were a chunk to slip in before it, the counts
/// asserted below are read, not assumed).
#[test]
fn suspends_resumes_and_cancels_a_batch_operation() {
    let node = start("batch-life");
    let rest = &node.rest;
    deploy_rest(rest, "life.bpmn", &service_task_bpmn("life", "life-task"));
    create(rest, "life", 10, |i| if i < 5 { "a" } else { "b" });
    let search = "/v2/process-instances/search";
    let active = |group: &str| {
        let filter = json!({"processDefinitionId": "life", "state": "ACTIVE",
                            "variables": [{"name": "group", "value": format!("\"{group}\"")}]});
        total(rest, search, filter)
    };
    let filter = json!({"processDefinitionId": "life",
                        "variables": [{"name": "group", "value": "\"a\""}]});
    let key = batch(
        rest,
        "/v2/process-instances/cancellation",
        json!({"filter": filter}),
        "CANCEL_PROCESS_INSTANCE",
    );
    let path = format!("/v2/batch-operations/{key}/suspension");
    let (status, answer) = http(rest, "POST", &path, None);
    assert_eq!(status, 204, "{answer}");
    let suspended = wait_for(rest, &key, "SUSPENDED");
    let left = active("a");
    std::thread::sleep(Duration::from_millis(800));
    let op = operation(rest, &key);
    assert_eq!(op["state"], "SUSPENDED", "{op}");
    assert_eq!(
        op["operationsCompletedCount"], suspended["operationsCompletedCount"],
        "a suspended operation does nothing: {op}"
    );
    assert_eq!(active("a"), left, "a suspended operation cancels nothing");
    // suspending it again is a conflict
    let (status, problem) = http(rest, "POST", &path, None);
    assert_eq!(status, 409, "{problem}");

    let resume = format!("/v2/batch-operations/{key}/resumption");
    let (status, answer) = http(rest, "POST", &resume, None);
    assert_eq!(status, 204, "{answer}");
    wait_for(rest, &key, "COMPLETED");
    assert_eq!(active("a"), 0);
    assert_eq!(active("b"), 5);

    // a canceled operation does no more: suspended first, then canceled
    let filter = json!({"processDefinitionId": "life",
                        "variables": [{"name": "group", "value": "\"b\""}]});
    let key = batch(
        rest,
        "/v2/process-instances/cancellation",
        json!({"filter": filter}),
        "CANCEL_PROCESS_INSTANCE",
    );
    let (status, answer) = http(
        rest,
        "POST",
        &format!("/v2/batch-operations/{key}/suspension"),
        None,
    );
    assert_eq!(status, 204, "{answer}");
    let left = active("b");
    let (status, answer) = http(
        rest,
        "POST",
        &format!("/v2/batch-operations/{key}/cancellation"),
        None,
    );
    assert_eq!(status, 204, "{answer}");
    let canceled = wait_for(rest, &key, "CANCELED");
    assert!(canceled["endDate"].is_string(), "{canceled}");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        active("b"),
        left,
        "a canceled operation cancels nothing more"
    );
    let (status, problem) = http(
        rest,
        "POST",
        &format!("/v2/batch-operations/{key}/resumption"),
        None,
    );
    assert_eq!(status, 404, "a canceled operation is over: {problem}");
    let (status, problem) = http(rest, "POST", "/v2/batch-operations/9/resumption", None);
    assert_eq!(status, 404, "{problem}");
}

/// A batch operation is engine state on partition 1: after a SIGKILL the restarted node still
/// holds it, suspended where it was, and runs it once resumed.
#[test]
fn a_batch_operation_survives_a_sigkill() {
    let node = start("batch-kill");
    deploy_rest(
        &node.rest,
        "kill.bpmn",
        &service_task_bpmn("kill", "kill-task"),
    );
    create(&node.rest, "kill", 10, |_| "x");
    let key = batch(
        &node.rest,
        "/v2/process-instances/cancellation",
        json!({"filter": {"processDefinitionId": "kill"}}),
        "CANCEL_PROCESS_INSTANCE",
    );
    let path = format!("/v2/batch-operations/{key}/suspension");
    let (status, answer) = http(&node.rest, "POST", &path, None);
    assert_eq!(status, 204, "{answer}");
    let node = start_in(node.kill(), &[]);
    let rest = &node.rest;
    let suspended = wait_for(rest, &key, "SUSPENDED");
    let search = "/v2/process-instances/search";
    let active = total(
        rest,
        search,
        json!({"processDefinitionId": "kill", "state": "ACTIVE"}),
    );
    assert_eq!(
        active + suspended["operationsCompletedCount"].as_i64().unwrap(),
        10,
        "{suspended}"
    );
    let resume = format!("/v2/batch-operations/{key}/resumption");
    let (status, answer) = http(rest, "POST", &resume, None);
    assert_eq!(status, 204, "{answer}");
    let done = wait_for(rest, &key, "COMPLETED");
    assert_eq!(done["operationsTotalCount"], 10, "{done}");
    assert_eq!(done["operationsCompletedCount"], 10, "{done}");
    let ended = json!({"processDefinitionId": "kill", "state": "TERMINATED"});
    assert_eq!(total(rest, search, ended), 10);
}

#[test]
fn a_bad_filter_is_a_400_naming_the_field() {
    let node = start("batch-bad");
    let rest = &node.rest;
    let (status, problem) = http(
        rest,
        "POST",
        "/v2/process-instances/cancellation",
        Some(json!({"filter": {"noSuchField": 1}})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("noSuchField"),
        "{problem}"
    );
    let (status, problem) = http(
        rest,
        "POST",
        "/v2/process-instances/modification",
        Some(json!({"filter": {}, "moveInstructions": [{"sourceElementId": "a"}]})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("moveInstructions[0].targetElementId"),
        "{problem}"
    );
    let (status, problem) = http(rest, "GET", "/v2/batch-operations/12", None);
    assert_eq!(status, 404, "{problem}");
}

#[test]
fn without_history_batch_operations_answer_403() {
    let node = start_with("batch-off", &["--history", "off"]);
    for path in [
        "/v2/process-instances/cancellation",
        "/v2/batch-operations/search",
        "/v2/batch-operation-items/search",
    ] {
        let (status, problem) = http(&node.rest, "POST", path, Some(json!({"filter": {}})));
        assert_eq!(status, 403, "{path}: {problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("secondary storage"),
            "{problem}"
        );
    }
}
