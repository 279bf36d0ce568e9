//! Ad-hoc sub-processes driven through the REST API v2 of a real `zest start`: the sub-process
//! is found with the element instance search, its activities are activated with
//! `POST /v2/element-instances/ad-hoc-activities/{key}/activation` (with variables, and with
//! `cancelRemainingInstances`, which terminates the flows running so far), the jobs
//! they create are worked over gRPC, and the completion condition ends it. Bad requests are
//! problem details with the right status.

mod common;

use std::time::{Duration, Instant};

use common::{activate_one, connect, create_with_result, http, start};
use serde_json::{json, Value};
use zest_gateway::proto;

const MODEL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="d" targetNamespace="x">
  <bpmn:process id="agent" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="tools" />
    <bpmn:adHocSubProcess id="tools">
      <bpmn:serviceTask id="lookup">
        <bpmn:extensionElements><zeebe:taskDefinition type="lookup" /></bpmn:extensionElements>
      </bpmn:serviceTask>
      <bpmn:serviceTask id="notify">
        <bpmn:extensionElements><zeebe:taskDefinition type="notify" /></bpmn:extensionElements>
      </bpmn:serviceTask>
      <bpmn:completionCondition xsi:type="bpmn:tFormalExpression">=answered = true</bpmn:completionCondition>
    </bpmn:adHocSubProcess>
    <bpmn:sequenceFlow id="f2" sourceRef="tools" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>
"#;

/// The active element instances of `instance` with element id `element_id`, once the search
/// shows `count` of them (history keeps the finished ones too).
fn find(rest: &str, instance: i64, element_id: &str, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, page) = http(
            rest,
            "POST",
            "/v2/element-instances/search",
            Some(
                json!({"filter": {"processInstanceKey": instance.to_string(), "elementId": element_id, "state": "ACTIVE"}}),
            ),
        );
        assert_eq!(status, 200, "{page}");
        let items = page["items"].as_array().cloned().unwrap_or_default();
        if items.len() == count {
            return items;
        }
        assert!(
            Instant::now() < deadline,
            "expected {count} instance(s) of {element_id}, the search shows {page}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn activities_are_activated_over_rest_and_the_completion_condition_ends_the_sub_process() {
    let node = start("ad-hoc-rest");
    let rest = node.rest.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = rt.block_on(connect(&node.gateway));
    rt.block_on(c.deploy_resource(proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "agent.bpmn".into(),
            content: MODEL.as_bytes().to_vec(),
        }],
        tenant_id: String::new(),
    }))
    .expect("the model deploys");
    let result = rt.spawn(create_with_result(
        c.clone(),
        "agent".into(),
        r#"{"answered":false}"#.into(),
    ));
    // no activeElementsCollection: the sub-process waits with nothing active inside
    let deadline = Instant::now() + Duration::from_secs(10);
    let tools = loop {
        let (_, page) = http(
            &rest,
            "POST",
            "/v2/element-instances/search",
            Some(json!({"filter": {"type": "AD_HOC_SUB_PROCESS", "processDefinitionId": "agent"}})),
        );
        if let Some(t) = page["items"].as_array().and_then(|i| i.first()) {
            break t.clone();
        }
        assert!(Instant::now() < deadline, "the ad-hoc sub-process shows up");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(tools["elementId"], "tools");
    assert_eq!(tools["state"], "ACTIVE");
    let key = tools["elementInstanceKey"].as_str().unwrap().to_string();
    let instance: i64 = tools["processInstanceKey"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let activation = format!("/v2/element-instances/ad-hoc-activities/{key}/activation");

    // bad requests first: nothing to activate, an unknown element, a duplicate, a bad key
    for (body, status, says) in [
        (json!({"elements": []}), 400, "No elements provided"),
        (
            json!({"elements": [{"elementId": "nope"}]}),
            404,
            "the given elements [nope] do not exist",
        ),
        (
            json!({"elements": [{"elementId": "lookup"}, {"elementId": "lookup"}]}),
            400,
            "duplicate activities were given",
        ),
    ] {
        let (got, problem) = http(&rest, "POST", &activation, Some(body));
        assert_eq!(got, status, "{problem}");
        assert!(
            problem["detail"].as_str().unwrap_or("").contains(says),
            "{problem}"
        );
    }
    let (got, _) = http(
        &rest,
        "POST",
        "/v2/element-instances/ad-hoc-activities/abc/activation",
        Some(json!({"elements": [{"elementId": "lookup"}]})),
    );
    assert_eq!(got, 400);

    // a flow that the next activation replaces
    let (got, problem) = http(
        &rest,
        "POST",
        &activation,
        Some(json!({"elements": [{"elementId": "notify"}]})),
    );
    assert_eq!(got, 204, "{problem}");
    find(&rest, instance, "notify", 1);

    // activate one activity with a variable of its own; the flows running so far are canceled
    let (got, problem) = http(
        &rest,
        "POST",
        &activation,
        Some(json!({
            "elements": [{"elementId": "lookup", "variables": {"query": "weather"}}],
            "cancelRemainingInstances": true
        })),
    );
    assert_eq!(got, 204, "{problem}");
    find(&rest, instance, "notify", 0);
    find(&rest, instance, "tools#innerInstance", 1);
    let job = rt
        .block_on(activate_one(&mut c, "lookup"))
        .expect("the lookup job is activated");
    let vars: Value = serde_json::from_str(&job.variables).unwrap();
    assert_eq!(vars["query"], "weather");
    // the flow completes with the answer: the completion condition holds, the instance ends
    rt.block_on(c.complete_job(proto::CompleteJobRequest {
        job_key: job.key,
        variables: r#"{"answered":true}"#.into(),
        ..Default::default()
    }))
    .unwrap();
    let r = rt
        .block_on(result)
        .unwrap()
        .expect("the instance completes");
    let vars: Value = serde_json::from_str(&r.variables).unwrap();
    assert_eq!(vars["answered"], true);
    // once it is gone, activating in it is not found
    let (got, problem) = http(
        &rest,
        "POST",
        &activation,
        Some(json!({"elements": [{"elementId": "notify"}]})),
    );
    assert_eq!(got, 404, "{problem}");
}

/// A search pages through the matches in key order and counts them all, whatever the page.
#[tokio::test(flavor = "multi_thread")]
async fn element_instance_search_pages_in_key_order_with_the_total() {
    let node = start("search-paging");
    let mut c = connect(&node.gateway).await;
    common::deploy_one_task(&mut c).await;
    let mut keys = Vec::new();
    for _ in 0..5 {
        keys.push(
            c.create_process_instance(proto::CreateProcessInstanceRequest {
                bpmn_process_id: "benchmark".into(),
                version: -1,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .process_instance_key,
        );
    }
    let rest = node.rest.clone();
    let query = |page: Value| {
        http(
            &rest,
            "POST",
            "/v2/element-instances/search",
            Some(json!({"filter": {"elementId": "task"}, "page": page})),
        )
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while query(json!({})).1["page"]["totalItems"]
        .as_u64()
        .unwrap_or(0)
        < 5
    {
        assert!(
            Instant::now() < deadline,
            "the five tasks show in the search"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, page) = query(json!({"from": 1, "limit": 2}));
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["page"]["totalItems"], 5, "{page}");
    let instances: Vec<i64> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["processInstanceKey"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(instances, keys[1..3], "{page}");
    let (_, past) = query(json!({"from": 10, "limit": 2}));
    assert_eq!(past["items"].as_array().map(|a| a.len()), Some(0));
    assert_eq!(past["page"]["totalItems"], 5);
}
