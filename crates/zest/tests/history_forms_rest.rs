//! Forms and whole variable values from history through the REST API v2 of a real `zest
//! start`: a finished user task's form is found after its form version's resource was
//! deleted, a start form is the newest version not deleted, a form is a deployed resource with
//! its text; `truncateValues=false` answers the variable searches with whole values.

mod common;

use common::{deploy_rest, http, start, wait_items as wait_for};
use serde_json::{json, Value};

const LINKED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="forms_history" isExecutable="true">
    <bpmn:startEvent id="start">
      <bpmn:extensionElements><zeebe:formDefinition formId="review" /></bpmn:extensionElements>
    </bpmn:startEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="check" />
    <bpmn:userTask id="check" name="Check">
      <bpmn:extensionElements>
        <zeebe:userTask />
        <zeebe:formDefinition formId="review" />
        <zeebe:ioMapping><zeebe:input source="=owner" target="reviewer" /></zeebe:ioMapping>
      </bpmn:extensionElements>
    </bpmn:userTask>
    <bpmn:sequenceFlow id="f2" sourceRef="check" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>"#;

const FORM: &str = include_str!("../../../examples/review.form");

/// Deploys a version of the `review` form: its key.
fn deploy_form(rest: &str, content: &str) -> String {
    let deployed = deploy_rest(rest, "review.form", content.as_bytes());
    deployed["deployments"][0]["form"]["formKey"]
        .as_str()
        .unwrap_or_else(|| panic!("{deployed}"))
        .to_string()
}

fn get(rest: &str, path: &str) -> (u16, Value) {
    http(rest, "GET", path, None)
}

/// Creates an instance whose `owner` is `owner`; its open user task's key.
fn task_of(rest: &str, owner: &str) -> (String, String) {
    let (status, created) = http(
        rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": "forms_history", "variables": {"owner": owner}})),
    );
    assert_eq!(status, 200, "{created}");
    let instance = created["processInstanceKey"].as_str().unwrap().to_string();
    let tasks = wait_for(
        rest,
        "/v2/user-tasks/search",
        json!({"filter": {"processInstanceKey": instance}}),
        1,
    );
    let task = tasks["items"][0]["userTaskKey"]
        .as_str()
        .unwrap()
        .to_string();
    (instance, task)
}

#[test]
fn forms_are_read_from_history_after_their_resources_are_deleted() {
    let node = start("forms-history");
    let rest = node.rest.clone();
    let v1 = deploy_form(&rest, FORM);
    let deployed = deploy_rest(&rest, "forms_history.bpmn", LINKED.as_bytes());
    let process = deployed["deployments"][0]["processDefinition"]["processDefinitionKey"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, task) = task_of(&rest, "ann");
    let (status, body) = http(
        &rest,
        "POST",
        &format!("/v2/user-tasks/{task}/completion"),
        None,
    );
    assert_eq!(status, 204, "{body}");
    let v2_schema = FORM.replace("Comment", "Remarks");
    let v2 = deploy_form(&rest, &v2_schema);

    // the start form: the newest version
    let start_form = format!("/v2/process-definitions/{process}/form");
    let (status, form) = get(&rest, &start_form);
    assert_eq!(status, 200, "{form}");
    assert_eq!(
        (&form["formKey"], &form["version"]),
        (&json!(v2), &json!(2))
    );
    assert_eq!(form["schema"], v2_schema.as_str());

    // the first version's resource deleted: the finished task's form is still found
    let (status, deleted) = http(&rest, "POST", &format!("/v2/resources/{v1}/deletion"), None);
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(
        deleted,
        json!({"resourceKey": v1, "batchOperation": null}),
        "a form's history stays"
    );
    let (status, form) = get(&rest, &format!("/v2/user-tasks/{task}/form"));
    assert_eq!(status, 200, "{form}");
    assert_eq!(
        (&form["formKey"], &form["version"]),
        (&json!(v1), &json!(1))
    );
    assert_eq!(form["formId"], "review");
    assert_eq!(form["schema"], FORM);
    assert_eq!(form["tenantId"], "<default>");

    // a form is a deployed resource, with its text
    let (status, resource) = get(&rest, &format!("/v2/resources/{v1}"));
    assert_eq!(status, 200, "{resource}");
    assert_eq!(resource["resourceId"], "review");
    assert_eq!(resource["resourceName"], "review.form");
    assert_eq!(resource["version"], 1);
    let (status, content) = get(&rest, &format!("/v2/resources/{v2}/content"));
    assert_eq!((status, content.as_str()), (200, Some(v2_schema.as_str())));

    // no version left that is not deleted: no start form
    let (status, _) = http(&rest, "POST", &format!("/v2/resources/{v2}/deletion"), None);
    assert_eq!(status, 200);
    let (status, body) = get(&rest, &start_form);
    assert_eq!(status, 204, "{body}");
    let (status, problem) = get(&rest, "/v2/user-tasks/2251799813685999/form");
    assert_eq!(status, 404, "{problem}");
}

/// The `(name, value, isTruncated)` of a page's variables, by name.
fn values(page: &Value) -> Vec<(String, usize, bool)> {
    let mut out: Vec<(String, usize, bool)> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["value"].as_str().unwrap().chars().count(),
                v["isTruncated"].as_bool().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn truncate_values_false_answers_whole_values() {
    let node = start("truncate-values");
    let rest = node.rest.clone();
    deploy_form(&rest, FORM);
    deploy_rest(&rest, "forms_history.bpmn", LINKED.as_bytes());
    // a JSON string of 9,002 characters with its quotes: past the 8,191 of a preview
    let (instance, task) = task_of(&rest, &"x".repeat(9000));
    let (preview, whole) = (8191, 9002);

    let search = "/v2/variables/search";
    let owner = json!({"filter": {"processInstanceKey": instance, "name": "owner"}});
    let cut = wait_for(&rest, search, owner.clone(), 1);
    assert_eq!(values(&cut), [("owner".into(), preview, true)]);
    let (status, full) = http(
        &rest,
        "POST",
        &format!("{search}?truncateValues=false"),
        Some(owner.clone()),
    );
    assert_eq!(status, 200, "{full}");
    assert_eq!(values(&full), [("owner".into(), whole, false)]);
    let (status, cut) = http(
        &rest,
        "POST",
        &format!("{search}?truncateValues=true"),
        Some(owner),
    );
    assert_eq!(
        (status, values(&cut)),
        (200, vec![("owner".into(), preview, true)])
    );

    let own = format!("/v2/user-tasks/{task}/variables/search");
    let page = wait_for(&rest, &own, json!({}), 1);
    assert_eq!(values(&page), [("reviewer".into(), preview, true)]);
    let (status, page) = http(&rest, "POST", &format!("{own}?truncateValues=false"), None);
    assert_eq!(status, 200, "{page}");
    assert_eq!(values(&page), [("reviewer".into(), whole, false)]);
    let effective = format!("/v2/user-tasks/{task}/effective-variables/search");
    let (status, page) = http(
        &rest,
        "POST",
        &format!("{effective}?truncateValues=false"),
        None,
    );
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        values(&page),
        [
            ("owner".into(), whole, false),
            ("reviewer".into(), whole, false)
        ]
    );

    let (status, problem) = http(&rest, "POST", &format!("{own}?truncateValues=maybe"), None);
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("truncateValues"),
        "{problem}"
    );
}
