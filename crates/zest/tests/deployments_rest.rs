//! Deployments, resources and decisions through the REST API v2 of a real `zest start`, as
//! c8ctl and Camunda's Java client send them: a BPMN, a DMN and a form deployed in one
//! multipart request answer their keys (as strings), the decision evaluates, a resource is
//! deleted, and bad requests are 400 problems that say what is wrong.

mod common;

use common::{http, http_with, multipart, start};
use serde_json::{json, Value};

fn deploy(rest: &str, files: &[(&str, &[u8])]) -> (u16, Value) {
    let (content_type, body) = multipart(files, &[]);
    http_with(rest, "POST", "/v2/deployments", &content_type, &body)
}

fn entries<'a>(answer: &'a Value, kind: &str) -> Vec<&'a Value> {
    answer["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d.get(kind))
        .collect()
}

#[test]
fn a_bpmn_a_dmn_and_a_form_deploy_over_multipart_and_the_decision_evaluates() {
    let node = start("deployments-rest");
    let rest = node.rest.clone();
    let (status, answer) = deploy(
        &rest,
        &[
            (
                "user_tasks.bpmn",
                include_bytes!("../../../tests/compat/testdata/user_tasks.bpmn"),
            ),
            (
                "pricing.dmn",
                include_bytes!("../../../tests/compat/testdata/pricing.dmn"),
            ),
            (
                "review.form",
                include_bytes!("../../../tests/compat/testdata/review.form"),
            ),
        ],
    );
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer["deploymentKey"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
            > 0
    );
    assert_eq!(answer["tenantId"], "<default>");
    let process = entries(&answer, "processDefinition")[0];
    assert_eq!(process["processDefinitionId"], "user_tasks");
    assert_eq!(process["processDefinitionVersion"], 1);
    assert_eq!(process["resourceName"], "user_tasks.bpmn");
    let process_key = process["processDefinitionKey"]
        .as_str()
        .unwrap()
        .to_string();
    let form = entries(&answer, "form")[0];
    assert_eq!(
        (form["formId"].as_str(), form["version"].as_i64()),
        (Some("review-form"), Some(1))
    );
    let graph = entries(&answer, "decisionRequirements")[0];
    assert_eq!(graph["resourceName"], "pricing.dmn");
    let decision = entries(&answer, "decisionDefinition")
        .into_iter()
        .find(|d| d["decisionDefinitionId"] == "discount")
        .expect("the answer lists the discount decision");
    assert_eq!(
        decision["decisionRequirementsKey"],
        graph["decisionRequirementsKey"]
    );

    // the decision by id, then by key
    let (status, evaluated) = http(
        &rest,
        "POST",
        "/v2/decision-definitions/evaluation",
        Some(
            json!({"decisionDefinitionId": "discount", "variables": {"customer": "gold", "amount": 200}}),
        ),
    );
    assert_eq!(status, 200, "{evaluated}");
    assert_eq!(evaluated["decisionDefinitionId"], "discount");
    assert_eq!(evaluated["output"], "0.2");
    assert_eq!(evaluated["failureMessage"], "");
    let first = &evaluated["evaluatedDecisions"][0];
    assert_eq!(first["matchedRules"][0]["ruleIndex"], 1);
    let (status, by_key) = http(
        &rest,
        "POST",
        "/v2/decision-definitions/evaluation",
        Some(
            json!({"decisionDefinitionKey": decision["decisionDefinitionKey"], "variables": {"customer": "silver", "amount": 10}}),
        ),
    );
    assert_eq!(
        (status, by_key["output"].as_str()),
        (200, Some("0.05")),
        "{by_key}"
    );

    // deleting the process: 200, then the key is gone
    let (status, body) = http(
        &rest,
        "POST",
        &format!("/v2/resources/{process_key}/deletion"),
        None,
    );
    assert_eq!(status, 200, "{body}");
    let (status, problem) = http(
        &rest,
        "POST",
        &format!("/v2/resources/{process_key}/deletion"),
        None,
    );
    assert_eq!(
        (status, problem["title"].as_str()),
        (404, Some("NOT_FOUND")),
        "{problem}"
    );
    assert!(problem["detail"]
        .as_str()
        .unwrap()
        .starts_with("Command 'DELETE' rejected with code 'NOT_FOUND': "));
}

#[test]
fn bad_deployments_and_evaluations_are_400_problems() {
    let node = start("deployments-rest-bad");
    let rest = node.rest.clone();
    let (status, problem) = deploy(&rest, &[]);
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("resources"),
        "{problem}"
    );
    // not multipart at all
    let (status, problem) = http(&rest, "POST", "/v2/deployments", Some(json!({})));
    assert_eq!(
        (status, problem["title"].as_str()),
        (400, Some("INVALID_ARGUMENT")),
        "{problem}"
    );
    // a model that does not parse: the engine's rejection
    let (status, problem) = deploy(&rest, &[("broken.bpmn", b"<not bpmn")]);
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("rejected with code 'INVALID_ARGUMENT'"),
        "{problem}"
    );
    // evaluation: neither id nor key, a wrong type, an unknown decision
    let path = "/v2/decision-definitions/evaluation";
    let (status, problem) = http(&rest, "POST", path, Some(json!({"variables": {}})));
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("decisionDefinitionId"),
        "{problem}"
    );
    let (status, problem) = http(
        &rest,
        "POST",
        path,
        Some(json!({"decisionDefinitionId": 7})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("decisionDefinitionId"),
        "{problem}"
    );
    let (status, problem) = http(
        &rest,
        "POST",
        path,
        Some(json!({"decisionDefinitionId": "nope"})),
    );
    assert_eq!(status, 404, "{problem}");
    let (status, problem) = http(&rest, "POST", "/v2/resources/abc/deletion", None);
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("resourceKey"),
        "{problem}"
    );
    // a key that no deployment can have (resources are deployed on partition 1, so their keys
    // are partition 1's) is not found, not a command the engine took for a distributed one and
    // never answered (a 503 schemathesis found)
    for key in ["5", "2251799813326547", "4503599627370497"] {
        let path = format!("/v2/resources/{key}/deletion");
        let (status, problem) = http(&rest, "POST", &path, None);
        assert_eq!(status, 404, "{path}: {problem}");
        assert_eq!(problem["title"], "NOT_FOUND", "{path}: {problem}");
    }
}
