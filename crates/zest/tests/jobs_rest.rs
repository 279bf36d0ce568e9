//! Jobs and incidents through the REST API v2 of a real `zest start`, as a Camunda 8.8 Java
//! client's worker uses them: a job is activated (long polling until it appears) with the
//! spec's fields and completed with variables that the awaiting creation answers; a job
//! failed without retries becomes an incident, its retries are set with PATCH, the incident
//! is resolved and the job comes back; a thrown error is caught.

mod common;

use std::time::Duration;

use common::{activate_rest, deploy_rest, http, service_task_bpmn, start};
use serde_json::{json, Value};

/// The incident key of the instance's element, once the element instance search shows it.
fn incident_of(rest: &str, instance: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, page) = http(
            rest,
            "POST",
            "/v2/element-instances/search",
            Some(json!({"filter": {"processInstanceKey": instance, "hasIncident": true}})),
        );
        assert_eq!(status, 200, "{page}");
        if let Some(key) = page["items"][0]["incidentKey"].as_str() {
            return key.to_string();
        }
        assert!(std::time::Instant::now() < deadline, "no incident: {page}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn create(rest: &str, process_id: &str) -> String {
    let (status, created) = http(
        rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": process_id})),
    );
    assert_eq!(status, 200, "{created}");
    created["processInstanceKey"].as_str().unwrap().to_string()
}

fn post(rest: &str, path: &str, body: Value) -> (u16, Value) {
    http(rest, "POST", path, Some(body))
}

#[test]
fn a_job_is_long_polled_and_completed_over_rest() {
    let node = start("jobs-rest");
    let rest = node.rest.clone();
    deploy_rest(&rest, "work.bpmn", &service_task_bpmn("work", "rest-work"));
    // the poll starts before the job exists: long polling hands it over when it appears
    let poll = {
        let rest = rest.clone();
        std::thread::spawn(move || activate_rest(&rest, "rest-work"))
    };
    std::thread::sleep(Duration::from_millis(300));
    let awaited = {
        let rest = rest.clone();
        std::thread::spawn(move || {
            post(
                &rest,
                "/v2/process-instances",
                // int64 as a string of digits, as the JavaScript SDK with strict request
                // validation sends it (Camunda reads both)
                json!({"processDefinitionId": "work", "variables": {"in": 1},
                       "awaitCompletion": true, "requestTimeout": "20000"}),
            )
        })
    };
    let job = poll.join().unwrap().expect("the long poll gets the job");
    for field in [
        "type",
        "processDefinitionId",
        "processDefinitionVersion",
        "elementId",
        "customHeaders",
        "worker",
        "retries",
        "deadline",
        "variables",
        "tenantId",
        "jobKey",
        "processInstanceKey",
        "processDefinitionKey",
        "elementInstanceKey",
        "kind",
        "listenerEventType",
    ] {
        assert!(!job[field].is_null(), "{field} missing: {job}");
    }
    assert_eq!(job["type"], "rest-work");
    assert_eq!(job["worker"], "rest-test");
    assert_eq!(job["kind"], "BPMN_ELEMENT");
    assert_eq!(job["listenerEventType"], "UNSPECIFIED");
    assert_eq!(job["variables"], json!({"in": 1}));
    let key = job["jobKey"].as_str().unwrap();
    let (status, body) = post(
        &rest,
        &format!("/v2/jobs/{key}/completion"),
        json!({"variables": {"out": "done"}}),
    );
    assert_eq!(status, 204, "{body}");
    let (status, done) = awaited.join().unwrap();
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["variables"], json!({"in": 1, "out": "done"}));
    // completing it again: the job is gone
    let (status, problem) = post(&rest, &format!("/v2/jobs/{key}/completion"), json!({}));
    assert_eq!(status, 404, "{problem}");
    // nothing to activate, no long polling: an empty list at once
    let (status, none) = post(
        &rest,
        "/v2/jobs/activation",
        json!({"type": "rest-work", "timeout": 1000, "maxJobsToActivate": 5, "requestTimeout": -1}),
    );
    assert_eq!((status, none), (200, json!({"jobs": []})));
    // the same with its int64 properties as strings
    let (status, none) = post(
        &rest,
        "/v2/jobs/activation",
        json!({"type": "rest-work", "timeout": "1000", "maxJobsToActivate": 5, "requestTimeout": "-1"}),
    );
    assert_eq!((status, none), (200, json!({"jobs": []})));
    // but not text that is no integer
    let (status, problem) = post(
        &rest,
        "/v2/jobs/activation",
        json!({"type": "rest-work", "timeout": "1s", "maxJobsToActivate": 5}),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("timeout"),
        "{problem}"
    );
    // a request without its required properties
    let (status, problem) = post(
        &rest,
        "/v2/jobs/activation",
        json!({"type": "rest-work", "timeout": 1000}),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("maxJobsToActivate"),
        "{problem}"
    );
}

#[test]
fn a_failed_job_becomes_an_incident_that_is_resolved_and_errors_are_thrown() {
    let node = start("jobs-rest-incident");
    let rest = node.rest.clone();
    deploy_rest(
        &rest,
        "flaky.bpmn",
        &service_task_bpmn("flaky", "rest-flaky"),
    );
    let instance = create(&rest, "flaky");
    let job = activate_rest(&rest, "rest-flaky").expect("the job");
    let key = job["jobKey"].as_str().unwrap().to_string();
    let (status, body) = post(
        &rest,
        &format!("/v2/jobs/{key}/failure"),
        // what a client leaves unset may come as null
        json!({"retries": 0, "errorMessage": "boom", "retryBackOff": null, "variables": {"tried": true, "none": null}}),
    );
    assert_eq!(status, 204, "{body}");
    let incident = incident_of(&rest, &instance);
    // resolving while the job has no retries leaves it failed: give it one first
    let (status, body) = http(
        &rest,
        "PATCH",
        &format!("/v2/jobs/{key}"),
        Some(json!({"changeset": {"retries": 1}})),
    );
    assert_eq!(status, 204, "{body}");
    let (status, body) = post(
        &rest,
        &format!("/v2/incidents/{incident}/resolution"),
        json!({}),
    );
    assert_eq!(status, 204, "{body}");
    let again = activate_rest(&rest, "rest-flaky").expect("the job is back after the resolution");
    assert_eq!(again["jobKey"], job["jobKey"]);
    assert_eq!(again["variables"]["tried"], true);
    assert!(
        again["variables"].as_object().unwrap().contains_key("none"),
        "a null variable is kept: {again}"
    );
    // an active job's timeout and retries change in one PATCH
    let (status, body) = http(
        &rest,
        "PATCH",
        &format!("/v2/jobs/{key}"),
        Some(json!({"changeset": {"retries": 3, "timeout": 30_000}})),
    );
    assert_eq!(status, 204, "{body}");
    // a BPMN error nobody catches: an incident again (the command itself is accepted)
    let (status, body) = post(
        &rest,
        &format!("/v2/jobs/{key}/error"),
        json!({"errorCode": "E1", "errorMessage": "no catch"}),
    );
    assert_eq!(status, 204, "{body}");
    let (status, problem) = post(
        &rest,
        &format!("/v2/jobs/{key}/error"),
        json!({"errorMessage": "no code"}),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("errorCode"),
        "{problem}"
    );
    // resolving it twice: the second is a 404 rejection
    let (status, _) = post(
        &rest,
        &format!("/v2/incidents/{incident}/resolution"),
        json!({}),
    );
    assert_eq!(status, 404);
    // PATCH with nothing to change
    let (status, problem) = http(
        &rest,
        "PATCH",
        &format!("/v2/jobs/{key}"),
        Some(json!({"changeset": {}})),
    );
    assert_eq!(status, 400, "{problem}");
}
