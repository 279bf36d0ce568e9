//! Process instances through the REST API v2 of a real `zest start`: created by id and by
//! key, with `awaitCompletion` answering the completed instance's variables, their variables
//! set, modified, cancelled (204, then 404); malformed, mistyped and incomplete requests are
//! 400 problems naming the property; `/v2/topology` and `/v2/status` answer what clients
//! expect.

mod common;

use common::{activate_rest, deploy_rest, http, service_task_bpmn, start};
use serde_json::{json, Value};

const NONE_BPMN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="straight" isExecutable="true">
    <bpmn:startEvent id="start"><bpmn:outgoing>f1</bpmn:outgoing></bpmn:startEvent>
    <bpmn:endEvent id="end"><bpmn:incoming>f1</bpmn:incoming></bpmn:endEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="end" />
  </bpmn:process>
</bpmn:definitions>"#;

fn create(rest: &str, body: Value) -> (u16, Value) {
    http(rest, "POST", "/v2/process-instances", Some(body))
}

#[test]
fn instances_are_created_awaited_cancelled_and_given_variables_over_rest() {
    let node = start("process-instances-rest");
    let rest = node.rest.clone();
    deploy_rest(&rest, "straight.bpmn", NONE_BPMN.as_bytes());
    let deployed = deploy_rest(
        &rest,
        "waits.bpmn",
        &service_task_bpmn("waits", "pi-rest-task"),
    );
    let key = deployed["deployments"][0]["processDefinition"]["processDefinitionKey"].clone();

    // awaitCompletion: the completed instance with its variables (fetchVariables picks)
    let (status, done) = create(
        &rest,
        json!({"processDefinitionId": "straight", "variables": {"a": 1, "b": "two"},
               "awaitCompletion": true, "fetchVariables": ["a"]}),
    );
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["variables"], json!({"a": 1}));
    assert_eq!(done["processDefinitionId"], "straight");
    assert_eq!(done["processDefinitionVersion"], 1);
    assert!(
        done["processInstanceKey"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
            > 0
    );

    // by key, without waiting: the instance waits at its task
    let (status, created) = create(
        &rest,
        json!({"processDefinitionKey": key, "variables": {"x": 1}}),
    );
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["processDefinitionId"], "waits");
    assert_eq!(created["tenantId"], "<default>");
    let instance = created["processInstanceKey"].as_str().unwrap().to_string();

    // variables on the instance's scope, then seen by the task's job
    let (status, body) = http(
        &rest,
        "PUT",
        &format!("/v2/element-instances/{instance}/variables"),
        Some(json!({"variables": {"y": "set"}})),
    );
    assert_eq!(status, 204, "{body}");
    let job = activate_rest(&rest, "pi-rest-task").expect("the instance's job");
    assert_eq!(job["variables"], json!({"x": 1, "y": "set"}));

    // modified: the task terminated and activated again, with a variable of its own
    let (status, body) = http(
        &rest,
        "POST",
        &format!("/v2/process-instances/{instance}/modification"),
        Some(json!({
            "terminateInstructions": [{"elementInstanceKey": job["elementInstanceKey"]}],
            "activateInstructions": [{"elementId": "task", "variableInstructions": [{"variables": {"z": 2}}]}],
        })),
    );
    assert_eq!(status, 204, "{body}");
    let again = activate_rest(&rest, "pi-rest-task").expect("the task's new job");
    assert_ne!(again["elementInstanceKey"], job["elementInstanceKey"]);
    assert_eq!(again["variables"]["z"], 2);
    let (status, problem) = http(
        &rest,
        "POST",
        &format!("/v2/process-instances/{instance}/modification"),
        Some(json!({"activateInstructions": [{"variableInstructions": []}]})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("activateInstructions[0].elementId"),
        "{problem}"
    );

    // cancelled: 204, then the instance is gone
    let cancel = format!("/v2/process-instances/{instance}/cancellation");
    let (status, body) = http(&rest, "POST", &cancel, None);
    assert_eq!(status, 204, "{body}");
    let (status, problem) = http(&rest, "POST", &cancel, Some(json!({})));
    assert_eq!(
        (status, problem["title"].as_str()),
        (404, Some("NOT_FOUND")),
        "{problem}"
    );
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("Command 'CANCEL' rejected with code 'NOT_FOUND': "),
        "{problem}"
    );
    assert_eq!(problem["instance"], cancel.as_str());

    // an unknown process: 404 from the engine
    let (status, problem) = create(&rest, json!({"processDefinitionId": "nope"}));
    assert_eq!(status, 404, "{problem}");
}

#[test]
fn bad_requests_are_400_problems_naming_the_property() {
    let node = start("process-instances-rest-bad");
    let rest = node.rest.clone();
    let detail = |problem: &Value| problem["detail"].as_str().unwrap_or_default().to_string();
    for (body, names) in [
        (json!({}), "processDefinitionId"),
        (
            json!({"processDefinitionId": "p", "variables": 5}),
            "variables",
        ),
        (
            json!({"processDefinitionId": "p", "variables": [1]}),
            "variables",
        ),
        (json!({"processDefinitionId": 12}), "processDefinitionId"),
        (
            json!({"processDefinitionKey": "12x"}),
            "processDefinitionKey",
        ),
        (
            json!({"processDefinitionId": "p", "awaitCompletion": "yes"}),
            "awaitCompletion",
        ),
        (
            json!({"processDefinitionId": "p", "unknownField": 1}),
            "unknownField",
        ),
        (
            json!({"processDefinitionId": "p", "startInstructions": [{}]}),
            "startInstructions[0].elementId",
        ),
    ] {
        let (status, problem) = create(&rest, body.clone());
        assert_eq!(status, 400, "{body}: {problem}");
        assert_eq!(problem["title"], "INVALID_ARGUMENT", "{problem}");
        assert!(detail(&problem).contains(names), "{body}: {problem}");
    }
    // malformed JSON, no body
    let (status, problem) = common::http_with(
        &rest,
        "POST",
        "/v2/process-instances",
        "application/json",
        b"{\"processDefinitionId\": ",
    );
    assert_eq!(status, 400, "{problem}");
    let (status, problem) = common::http_with(
        &rest,
        "POST",
        "/v2/process-instances",
        "application/json",
        b"",
    );
    assert_eq!(status, 400, "{problem}");
    // bad keys in paths
    for path in [
        "/v2/process-instances/abc/cancellation",
        "/v2/jobs/-1/completion",
        "/v2/incidents/x/resolution",
    ] {
        let (status, problem) = http(&rest, "POST", path, None);
        assert_eq!(status, 400, "{path}: {problem}");
    }
    let (status, problem) = http(
        &rest,
        "PUT",
        "/v2/element-instances/1/variables",
        Some(json!({"local": true})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(detail(&problem).contains("variables"), "{problem}");
    // a key no partition holds: 404 with the engine's wording
    let (status, problem) = http(
        &rest,
        "POST",
        "/v2/process-instances/9223372036854775807/cancellation",
        None,
    );
    assert_eq!(status, 404, "{problem}");
}

#[test]
fn topology_and_status_answer_what_clients_expect() {
    let node = start("cluster-status-rest");
    let rest = node.rest.clone();
    let (status, topology) = http(&rest, "GET", "/v2/topology", None);
    assert_eq!(status, 200, "{topology}");
    let version = topology["gatewayVersion"].as_str().unwrap();
    assert!(version.starts_with("8.8."), "{version}");
    for field in [
        "brokers",
        "clusterSize",
        "partitionsCount",
        "replicationFactor",
        "lastCompletedChangeId",
    ] {
        assert!(!topology[field].is_null(), "{field} missing: {topology}");
    }
    // 8.9 requires it, nullable: the JavaScript SDK 9.x's strict validation fails without it
    assert_eq!(topology.get("clusterId"), Some(&Value::Null), "{topology}");
    // UP once a partition has a healthy leader (at once after READY, or nearly)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while http(&rest, "GET", "/v2/status", None).0 != 204 {
        assert!(std::time::Instant::now() < deadline, "/v2/status never 204");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // no Camunda license, said as a cluster without a license key says it
    let (status, license) = http(&rest, "GET", "/v2/license", None);
    assert_eq!(status, 200, "{license}");
    assert_eq!(license["validLicense"], false, "{license}");
    assert_eq!(license["isCommercial"], false, "{license}");
}

#[test]
fn an_instance_migrates_to_another_version_over_rest() {
    let node = start("process-instances-rest-migrate");
    let rest = node.rest.clone();
    deploy_rest(
        &rest,
        "migrate_v1.bpmn",
        include_bytes!("../../../tests/compat/testdata/migrate_v1.bpmn"),
    );
    let (status, created) = create(&rest, json!({"processDefinitionId": "migrate"}));
    assert_eq!(status, 200, "{created}");
    let instance = created["processInstanceKey"].as_str().unwrap().to_string();
    let v2 = deploy_rest(
        &rest,
        "migrate_v2.bpmn",
        include_bytes!("../../../tests/compat/testdata/migrate_v2.bpmn"),
    );
    let target = v2["deployments"][0]["processDefinition"]["processDefinitionKey"].clone();
    let path = format!("/v2/process-instances/{instance}/migration");
    let (status, problem) = http(
        &rest,
        "POST",
        &path,
        Some(json!({"mappingInstructions": []})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("targetProcessDefinitionKey"),
        "{problem}"
    );
    let (status, body) = http(
        &rest,
        "POST",
        &path,
        Some(json!({"targetProcessDefinitionKey": target,
                    "mappingInstructions": [{"sourceElementId": "sub", "targetElementId": "sub2"},
                                            {"sourceElementId": "a", "targetElementId": "b"}]})),
    );
    assert_eq!(status, 204, "{body}");
    let (status, page) = http(
        &rest,
        "POST",
        "/v2/element-instances/search",
        Some(json!({"filter": {"processInstanceKey": instance, "elementId": "b"}})),
    );
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["page"]["totalItems"], 1, "the task is b now: {page}");
}
