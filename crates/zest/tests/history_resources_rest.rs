//! History's user tasks, decisions, messages and deployed resources through the REST API v2 of
//! a real `zest start`: tasks completed and canceled are still found (by state, name, candidate
//! group) and got, with the spec's fields (the task's `name` is its element's), with their own
//! and effective variables; a business rule task's decision instances with their inputs and
//! matched rules, the decision definitions and requirements with their XML; a message's
//! subscription and its correlation; a deployed resource and its text.

mod common;

use common::{deploy_rest, http, start, wait_items as wait_for};
use serde_json::{json, Value};

const BPMN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="ut_history" name="Orders" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="check" />
    <bpmn:userTask id="check" name="Check order">
      <bpmn:extensionElements>
        <zeebe:userTask />
        <zeebe:assignmentDefinition candidateGroups="sales" />
        <zeebe:ioMapping><zeebe:input source="=owner" target="reviewer" /></zeebe:ioMapping>
      </bpmn:extensionElements>
    </bpmn:userTask>
    <bpmn:sequenceFlow id="f2" sourceRef="check" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>"#;

fn create(rest: &str, owner: &str) -> String {
    let (status, created) = http(
        rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": "ut_history", "variables": {"owner": owner}})),
    );
    assert_eq!(status, 200, "{created}");
    created["processInstanceKey"].as_str().unwrap().to_string()
}

fn names_and_values(page: &Value) -> Vec<(String, String)> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

// One story, step by step: two tasks, one completed, one canceled, found again after.
#[test]
fn finished_user_tasks_are_found_in_history_with_their_variables() {
    let node = start("user-tasks-history");
    let rest = node.rest.clone();
    deploy_rest(&rest, "ut_history.bpmn", BPMN.as_bytes());
    let ann = create(&rest, "ann");
    let bob = create(&rest, "bob");

    let open = wait_for(
        &rest,
        "/v2/user-tasks/search",
        json!({"filter": {"processDefinitionId": "ut_history", "state": "CREATED"},
               "sort": [{"field": "creationDate"}]}),
        2,
    );
    let task = &open["items"][0];
    assert_eq!(task["processInstanceKey"], ann.as_str());
    assert_eq!(task["name"], "Check order", "the element's name: {task}");
    assert_eq!(task["elementId"], "check");
    assert_eq!(task["processName"], "Orders");
    assert_eq!(task["candidateGroups"], json!(["sales"]));
    assert_eq!(task["priority"], 50);
    assert!(task["creationDate"].is_string(), "{task}");
    let key = task["userTaskKey"].as_str().unwrap().to_string();
    let other = open["items"][1]["userTaskKey"]
        .as_str()
        .unwrap()
        .to_string();

    // the task's own scope holds its input; the effective ones add the instance's
    let own = wait_for(
        &rest,
        &format!("/v2/user-tasks/{key}/variables/search"),
        json!({}),
        1,
    );
    assert_eq!(
        names_and_values(&own),
        [("reviewer".into(), "\"ann\"".into())]
    );
    let effective = wait_for(
        &rest,
        &format!("/v2/user-tasks/{key}/effective-variables/search"),
        json!({"sort": [{"field": "name"}]}),
        2,
    );
    assert_eq!(
        names_and_values(&effective),
        [
            ("owner".to_string(), "\"ann\"".to_string()),
            ("reviewer".to_string(), "\"ann\"".to_string())
        ]
    );
    let (status, problem) = http(
        &rest,
        "POST",
        &format!("/v2/user-tasks/{key}/variables/search"),
        Some(json!({"filter": {"scopeKey": "1"}})),
    );
    assert_eq!(
        status, 400,
        "only the name filters a task's variables: {problem}"
    );

    let (status, body) = http(
        &rest,
        "POST",
        &format!("/v2/user-tasks/{key}/completion"),
        Some(json!({"variables": {"approved": true}})),
    );
    assert_eq!(status, 204, "{body}");
    let (status, body) = http(
        &rest,
        "POST",
        &format!("/v2/process-instances/{bob}/cancellation"),
        None,
    );
    assert_eq!(status, 204, "{body}");

    let done = wait_for(
        &rest,
        "/v2/user-tasks/search",
        json!({"filter": {"state": "COMPLETED", "name": "Check order", "candidateGroup": "sales"}}),
        1,
    );
    let finished = &done["items"][0];
    assert_eq!(finished["userTaskKey"], key.as_str());
    assert!(finished["completionDate"].is_string(), "{finished}");
    assert_eq!(done["page"]["totalItems"], 1);
    let canceled = wait_for(
        &rest,
        "/v2/user-tasks/search",
        json!({"filter": {"state": "CANCELED"}}),
        1,
    );
    assert_eq!(canceled["items"][0]["userTaskKey"], other.as_str());

    let (status, got) = http(&rest, "GET", &format!("/v2/user-tasks/{key}"), None);
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["state"], "COMPLETED");
    assert_eq!(got["name"], "Check order");
    let (status, problem) = http(&rest, "GET", "/v2/user-tasks/2251799813685999", None);
    assert_eq!(status, 404, "{problem}");
    let (status, problem) = http(
        &rest,
        "POST",
        "/v2/user-tasks/search",
        Some(json!({"sort": [{"field": "elementId"}]})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("elementId"),
        "{problem}"
    );
}

/// The first item of `path`'s page for `body`, once there is one.
fn first(rest: &str, path: &str, body: Value) -> Value {
    wait_for(rest, path, body, 1)["items"][0].clone()
}

#[test]
fn decisions_messages_and_resources_are_found_in_history() {
    let node = start("decisions-messages-history");
    let rest = node.rest.clone();
    let dmn = include_str!("../../../tests/compat/testdata/pricing.dmn");
    let deployed = deploy_rest(&rest, "pricing.dmn", dmn.as_bytes());
    let bpmn = include_bytes!("../../../tests/compat/testdata/pricing.bpmn");
    deploy_rest(&rest, "pricing.bpmn", bpmn);
    let receive = include_str!("../../../tests/compat/testdata/receive_message.bpmn")
        .replace("zest_proc", "hist_msg");
    deploy_rest(&rest, "receive.bpmn", receive.as_bytes());

    // decision definitions and requirements, with the DMN XML
    let price = first(
        &rest,
        "/v2/decision-definitions/search",
        json!({"filter": {"decisionDefinitionId": "price"}}),
    );
    assert_eq!(price["name"], "Price");
    assert_eq!(price["version"], 1);
    assert_eq!(price["decisionRequirementsId"], "pricing");
    let defs = wait_for(&rest, "/v2/decision-definitions/search", json!({}), 4);
    assert_eq!(defs["page"]["totalItems"], 4, "each decision once: {defs}");
    let key = price["decisionDefinitionKey"].as_str().unwrap();
    let (status, got) = http(
        &rest,
        "GET",
        &format!("/v2/decision-definitions/{key}"),
        None,
    );
    assert_eq!((status, &got), (200, &price));
    let xml = common::http_get(&rest, &format!("/v2/decision-definitions/{key}/xml"));
    assert!(xml.contains("<decision id=\"price\""), "{xml}");
    let drg = first(&rest, "/v2/decision-requirements/search", json!({}));
    assert_eq!(drg["decisionRequirementsId"], "pricing");
    assert_eq!(drg["decisionRequirementsName"], "Pricing");
    assert_eq!(drg["resourceName"], "pricing.dmn");
    let drg_key = drg["decisionRequirementsKey"].as_str().unwrap();
    assert_eq!(
        drg_key,
        deployed["deployments"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|d| d["decisionRequirements"]["decisionRequirementsKey"].as_str())
            .unwrap()
    );
    let xml = common::http_get(&rest, &format!("/v2/decision-requirements/{drg_key}/xml"));
    assert!(xml.contains("id=\"pricing\""), "{xml}");

    // a business rule task evaluates price, which requires discount: two decision instances
    let (status, created) = http(
        &rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": "pricing_process",
                    "variables": {"customer": "gold", "amount": 200}})),
    );
    assert_eq!(status, 200, "{created}");
    let instance = created["processInstanceKey"].as_str().unwrap().to_string();
    let instances = wait_for(
        &rest,
        "/v2/decision-instances/search",
        json!({"filter": {"processInstanceKey": instance},
               "sort": [{"field": "decisionEvaluationInstanceKey"}]}),
        2,
    );
    let discount = &instances["items"][0];
    assert_eq!(discount["decisionDefinitionId"], "discount");
    assert_eq!(discount["decisionDefinitionType"], "DECISION_TABLE");
    assert_eq!(discount["state"], "EVALUATED");
    assert_eq!(discount["result"], "0.2");
    assert!(discount["elementInstanceKey"].is_string(), "{discount}");
    let price_instance = &instances["items"][1];
    assert_eq!(
        price_instance["decisionDefinitionType"],
        "LITERAL_EXPRESSION"
    );
    assert_eq!(price_instance["result"], "160");
    let id = discount["decisionEvaluationInstanceKey"].as_str().unwrap();
    assert!(id.ends_with("-1"), "{id}");
    let (status, full) = http(&rest, "GET", &format!("/v2/decision-instances/{id}"), None);
    assert_eq!(status, 200, "{full}");
    assert_eq!(full["matchedRules"][0]["ruleId"], "gold_big");
    assert_eq!(
        full["matchedRules"][0]["evaluatedOutputs"][0]["outputValue"],
        "0.2"
    );
    let inputs: Vec<&str> = full["evaluatedInputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["inputValue"].as_str().unwrap())
        .collect();
    assert_eq!(inputs, ["\"gold\"", "200"]);
    let (status, _) = http(&rest, "GET", "/v2/decision-instances/12-x", None);
    assert_eq!(status, 400);
    let (status, _) = http(
        &rest,
        "GET",
        &format!("/v2/decision-instances/{instance}-9"),
        None,
    );
    assert_eq!(status, 404);

    // a message correlated to a waiting receive task
    let (status, created) = http(
        &rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": "hist_msg", "variables": {"orderId": "o-1"}})),
    );
    assert_eq!(status, 200, "{created}");
    let waiting = created["processInstanceKey"].as_str().unwrap().to_string();
    let sub = first(
        &rest,
        "/v2/message-subscriptions/search",
        json!({"filter": {"processInstanceKey": waiting, "messageSubscriptionState": "CREATED"}}),
    );
    assert_eq!(sub["messageName"], "hist_msg-paid");
    assert_eq!(sub["correlationKey"], "o-1");
    assert_eq!(sub["elementId"], "receive");
    let (status, published) = http(
        &rest,
        "POST",
        "/v2/messages/publication",
        Some(json!({"name": "hist_msg-paid", "correlationKey": "o-1"})),
    );
    assert_eq!(status, 200, "{published}");
    let correlated = first(
        &rest,
        "/v2/correlated-message-subscriptions/search",
        json!({"filter": {"processInstanceKey": waiting}}),
    );
    assert_eq!(correlated["messageKey"], published["messageKey"]);
    assert_eq!(correlated["messageName"], "hist_msg-paid");
    assert_eq!(correlated["correlationKey"], "o-1");
    assert_eq!(correlated["elementId"], "receive");
    assert_eq!(correlated["subscriptionKey"], sub["messageSubscriptionKey"]);
    assert_eq!(correlated["partitionId"], 1);
    assert!(correlated["correlationTime"].is_string(), "{correlated}");
    first(
        &rest,
        "/v2/message-subscriptions/search",
        json!({"filter": {"processInstanceKey": waiting, "messageSubscriptionState": "CORRELATED"}}),
    );

    // deployed resources and their text
    let (status, resource) = http(&rest, "GET", &format!("/v2/resources/{drg_key}"), None);
    assert_eq!(status, 200, "{resource}");
    assert_eq!(resource["resourceName"], "pricing.dmn");
    assert_eq!(resource["resourceId"], "pricing");
    // no versionTag: left out (8.8's ResourceResult has it a string, never null)
    assert_eq!(resource.get("versionTag"), None, "{resource}");
    let (status, content) = http(
        &rest,
        "GET",
        &format!("/v2/resources/{drg_key}/content"),
        None,
    );
    assert_eq!((status, content.as_str()), (200, Some(dmn)));
    let pd = first(
        &rest,
        "/v2/process-definitions/search",
        json!({"filter": {"processDefinitionId": "pricing_process"}}),
    );
    let pd_key = pd["processDefinitionKey"].as_str().unwrap();
    let (status, resource) = http(&rest, "GET", &format!("/v2/resources/{pd_key}"), None);
    assert_eq!(status, 200, "{resource}");
    assert_eq!(resource["resourceName"], "pricing.bpmn");
    // the process's XML, read from history as the other definition reads
    let xml = common::http_get(&rest, &format!("/v2/process-definitions/{pd_key}/xml"));
    assert!(xml.contains("id=\"pricing_process\""), "{xml}");
    let (status, _) = http(&rest, "GET", "/v2/resources/2251799813685999", None);
    assert_eq!(status, 404);
}
