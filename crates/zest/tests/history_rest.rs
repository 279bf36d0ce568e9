//! History through the REST API v2 of a real `zest start`: instances created, completed and
//! failed to an incident over gRPC are found again by state, incident, variable and key,
//! with their element instances, variables, incidents, jobs, definition and the statistics
//! that colour a diagram, also after the node was SIGKILLed and started again (each record's
//! effect exactly once). Without history the searches answer Camunda's 403.

mod common;

use common::{
    activate_one, complete, connect, create_numbered, deploy_one_task, fail_to_incident, http,
    http_with, search, start, start_in, start_with, total,
};
use serde_json::json;

/// Ten instances: four completed, one with an incident (its job failed without retries), five
/// waiting at their task. Answers the instance keys in creation order.
async fn load(c: &mut common::Client) -> Vec<i64> {
    deploy_one_task(c).await;
    let mut keys = Vec::new();
    for n in 0..10 {
        keys.push(create_numbered(c, n).await);
    }
    for _ in 0..4 {
        let job = activate_one(c, "benchmark-task").await.expect("a job");
        complete(c, job.key).await;
    }
    let job = activate_one(c, "benchmark-task").await.expect("a job");
    fail_to_incident(c, job.key, "card declined").await;
    keys
}

fn check_history(rest: &str) {
    let completed = search(
        rest,
        "/v2/process-instances/search",
        json!({"filter": {"state": "COMPLETED"}}),
    );
    assert_eq!(total(&completed), 4, "{completed}");
    let done = &completed["items"][0];
    assert!(
        done["endDate"].is_string() && done["startDate"].is_string(),
        "{done}"
    );
    assert_eq!(done["processDefinitionId"], "benchmark");

    let active = search(
        rest,
        "/v2/process-instances/search",
        json!({"filter": {"state": "ACTIVE"}}),
    );
    assert_eq!(total(&active), 6);
    let incident = search(
        rest,
        "/v2/process-instances/search",
        json!({"filter": {"hasIncident": true}}),
    );
    assert_eq!(total(&incident), 1, "{incident}");
    let by_variable = search(
        rest,
        "/v2/process-instances/search",
        json!({"filter": {"variables": [{"name": "order", "value": "\"A-7\""}]}}),
    );
    assert_eq!(total(&by_variable), 1, "{by_variable}");

    let key = done["processInstanceKey"].as_str().unwrap().to_string();
    let (status, one) = http(rest, "GET", &format!("/v2/process-instances/{key}"), None);
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["state"], "COMPLETED");
    let elements = search(
        rest,
        "/v2/element-instances/search",
        json!({"filter": {"processInstanceKey": key}, "sort": [{"field": "elementInstanceKey"}]}),
    );
    let states: Vec<(&str, &str)> = elements["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("START_EVENT", "COMPLETED"),
            ("SERVICE_TASK", "COMPLETED"),
            ("END_EVENT", "COMPLETED")
        ],
        "{elements}"
    );
    let variables = search(
        rest,
        "/v2/variables/search",
        json!({"filter": {"processInstanceKey": key}}),
    );
    assert_eq!(total(&variables), 2, "{variables}");
    let flows = http(
        rest,
        "GET",
        &format!("/v2/process-instances/{key}/sequence-flows"),
        None,
    )
    .1;
    assert_eq!(flows["items"].as_array().unwrap().len(), 2, "{flows}");

    let incidents = search(
        rest,
        "/v2/incidents/search",
        json!({"filter": {"state": "ACTIVE"}}),
    );
    assert_eq!(total(&incidents), 1);
    assert_eq!(incidents["items"][0]["errorType"], "JOB_NO_RETRIES");
    assert_eq!(incidents["items"][0]["errorMessage"], "card declined");
    let jobs = search(
        rest,
        "/v2/jobs/search",
        json!({"filter": {"state": "COMPLETED"}}),
    );
    assert_eq!(total(&jobs), 4, "{jobs}");

    let definitions = search(rest, "/v2/process-definitions/search", json!({}));
    assert_eq!(total(&definitions), 1);
    let definition = definitions["items"][0]["processDefinitionKey"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, stats) = http(
        rest,
        "POST",
        &format!("/v2/process-definitions/{definition}/statistics/element-instances"),
        Some(json!({})),
    );
    let task = stats["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["active"].as_i64() > Some(0))
        .expect("the task has active instances")
        .clone();
    assert_eq!(
        (
            task["active"].as_i64(),
            task["incidents"].as_i64(),
            task["completed"].as_i64()
        ),
        (Some(5), Some(1), Some(4)),
        "{stats}"
    );
}

#[test]
fn finished_work_is_found_again_through_the_rest_api_also_after_a_kill() {
    let node = start("history-rest");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = rt.block_on(connect(&node.gateway));
    rt.block_on(load(&mut c));
    check_history(&node.rest);

    // a bad filter is a 400 that names the field; an unknown key a 404
    let (status, problem) = http(
        &node.rest,
        "POST",
        "/v2/process-instances/search",
        Some(json!({"filter": {"stat": "ACTIVE"}})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("'stat'"),
        "{problem}"
    );
    let (status, _) = http(
        &node.rest,
        "GET",
        "/v2/process-instances/4503599627370495",
        None,
    );
    assert_eq!(status, 404);

    // SIGKILL and start again: the history is the same, nothing lost or counted twice
    drop(c);
    let dir = node.kill();
    let node = start_in(dir, &[]);
    check_history(&node.rest);
    let mut c = rt.block_on(connect(&node.gateway));
    let more = rt.block_on(create_numbered(&mut c, 99));
    let found = search(
        &node.rest,
        "/v2/process-instances/search",
        json!({"filter": {"processInstanceKey": more.to_string()}}),
    );
    assert_eq!(
        total(&found),
        1,
        "an instance created after the restart is found at once"
    );
}

/// A search body that is not UTF-8 gets a 400 problem (JSON, Camunda's INVALID_ARGUMENT), as
/// any other malformed body, on every search (schemathesis found text/plain answers).
#[test]
fn a_body_that_is_not_utf8_gets_a_400_problem() {
    let node = start("not-utf8");
    for path in [
        "/v2/process-instances/search",
        "/v2/user-tasks/search",
        "/v2/user-tasks/1/variables/search",
        "/v2/correlated-message-subscriptions/search",
        "/v2/decision-definitions/search",
        "/v2/incidents/statistics/process-instances-by-error",
    ] {
        let (status, problem) = http_with(&node.rest, "POST", path, "application/json", b"\xe9^");
        assert_eq!(status, 400, "{path}: {problem}");
        assert_eq!(problem["title"], "INVALID_ARGUMENT", "{path}: {problem}");
        assert_eq!(problem["instance"], path, "{path}: {problem}");
    }
}

#[test]
fn without_history_the_searches_answer_403() {
    let node = start_with("history-off", &["--history", "off"]);
    let (status, problem) = http(
        &node.rest,
        "POST",
        "/v2/process-instances/search",
        Some(json!({})),
    );
    assert_eq!(status, 403, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("secondary storage"),
        "{problem}"
    );
}

/// Camunda 8.9's statistics of active instances (Operate's dashboard) over two partitions:
/// per definition, per version, per incident error and per definition of one error; and
/// FEEL evaluated through `POST /v2/expression/evaluation`.
#[test]
fn the_dashboard_statistics_count_the_active_instances() {
    let node = start_with("history-statistics", &["--partitions", "2"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = rt.block_on(connect(&node.gateway));
    rt.block_on(load(&mut c));
    let rest = &node.rest;

    let by_definition = search(
        rest,
        "/v2/process-definitions/statistics/process-instances",
        json!({}),
    );
    assert_eq!(total(&by_definition), 1, "{by_definition}");
    let item = &by_definition["items"][0];
    assert_eq!(item["processDefinitionId"], "benchmark", "{item}");
    assert_eq!(item["activeInstancesWithoutIncidentCount"], 5, "{item}");
    assert_eq!(item["activeInstancesWithIncidentCount"], 1, "{item}");
    assert_eq!(item["hasMultipleVersions"], false, "{item}");

    let by_version = search(
        rest,
        "/v2/process-definitions/statistics/process-instances-by-version",
        json!({"filter": {"processDefinitionId": "benchmark"},
               "sort": [{"field": "processDefinitionVersion", "order": "DESC"}]}),
    );
    let version = &by_version["items"][0];
    assert_eq!(version["processDefinitionVersion"], 1, "{by_version}");
    assert!(version["processDefinitionKey"].is_string(), "{version}");
    assert_eq!(version["activeInstancesWithoutIncidentCount"], 5);

    let by_error = search(
        rest,
        "/v2/incidents/statistics/process-instances-by-error",
        json!({"sort": [{"field": "activeInstancesWithErrorCount", "order": "DESC"}]}),
    );
    assert_eq!(total(&by_error), 1, "{by_error}");
    let error = &by_error["items"][0];
    assert_eq!(error["errorMessage"], "card declined", "{error}");
    assert_eq!(error["activeInstancesWithErrorCount"], 1);
    let hash = error["errorHashCode"].as_i64().expect("a hash code");
    // Java's String.hashCode of the message, as Operate groups incidents by
    let java_hash = "card declined"
        .encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32));
    assert_eq!(hash, java_hash as i64);

    let of_error = search(
        rest,
        "/v2/incidents/statistics/process-instances-by-definition",
        json!({"filter": {"errorHashCode": hash}}),
    );
    assert_eq!(of_error["items"][0]["processDefinitionId"], "benchmark");
    assert_eq!(of_error["items"][0]["activeInstancesWithErrorCount"], 1);

    // what is wrong is named
    let (status, problem) = http(
        rest,
        "POST",
        "/v2/process-definitions/statistics/process-instances-by-version",
        Some(json!({})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(problem["detail"]
        .as_str()
        .unwrap()
        .contains("filter.processDefinitionId"));
    let (status, problem) = http(
        rest,
        "POST",
        "/v2/incidents/statistics/process-instances-by-error",
        Some(json!({"sort": [{"field": "nope"}]})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(problem["detail"].as_str().unwrap().contains("nope"));

    // FEEL, as the engine evaluates it
    let (status, evaluated) = http(
        rest,
        "POST",
        "/v2/expression/evaluation",
        Some(json!({"expression": "=x + y", "variables": {"x": 10, "y": 20}})),
    );
    assert_eq!(status, 200, "{evaluated}");
    assert_eq!(evaluated["result"], 30);
    assert_eq!(evaluated["warnings"], json!([]));
    let (status, problem) = http(
        rest,
        "POST",
        "/v2/expression/evaluation",
        Some(json!({"expression": "=1 +* 2"})),
    );
    assert_eq!(status, 400, "{problem}");
}
