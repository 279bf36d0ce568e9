//! Execution listeners: what users see besides the record order (which tests/anchor.rs checks
//! against Zeebe in the `listeners` and `listeners_more` scenarios).

mod support;

use serde_json::json;
use support::*;
use zest_protocol::{ErrorType, Intent, JobKind, JobListenerEventType, RejectionType, ValueType};

fn listener(event_type: &str, job_type: &str) -> String {
    format!(r#"<zeebe:executionListener eventType="{event_type}" type="{job_type}" />"#)
}

fn listeners(list: &[String]) -> String {
    format!(
        "<zeebe:executionListeners>{}</zeebe:executionListeners>",
        list.join("")
    )
}

/// start -> task `work` (with `task_ext`) -> end, in process `p`.
fn one_task(task_ext: &str) -> String {
    support::one_task("p", "work", "work", task_ext)
}

#[test]
fn start_listener_variables_are_local_and_end_listener_variables_reach_the_scope() {
    let mut h = Harness::new();
    h.deploy_ok(&one_task(&listeners(&[
        listener("start", "before"),
        listener("end", "after"),
    ])));
    let pik = h.create_ok("p", r#"{"x":1}"#);
    let (before, job) = h.activate_one("before");
    assert_eq!(job.element_id, "work");
    // workers see what the job is for
    assert_eq!(
        (job.kind, job.listener_event_type),
        (JobKind::ExecutionListener, JobListenerEventType::Start)
    );
    // the task's own job waits for its start listener
    assert!(h.activate("work", 10).is_empty());
    h.complete(before, r#"{"token":"t-1"}"#).accepted();
    let work_key = h.instance_of("work").key;
    assert_eq!(h.variables(work_key).get("token"), Some(&json!("t-1")));
    assert_eq!(
        h.variables(pik).get("token"),
        None,
        "a start listener's are local"
    );
    let (work, job) = h.activate_one("work");
    assert_eq!(job.variables, r#"{"token":"t-1","x":1}"#);
    assert_eq!(
        (job.kind, job.listener_event_type),
        (JobKind::BpmnElement, JobListenerEventType::Unspecified)
    );
    h.complete(work, r#"{"done":true}"#).accepted();
    let (after, job) = h.activate_one("after");
    assert_eq!(job.element_id, "work");
    assert_eq!(
        (job.kind, job.listener_event_type),
        (JobKind::ExecutionListener, JobListenerEventType::End)
    );
    h.complete(after, r#"{"audited":true}"#).accepted();
    h.settle();
    // the instance completed; the end listener's variable went to the process scope
    let completed = h
        .log
        .iter()
        .filter(|r| r.intent == Intent::ElementCompleted && r.key == pik)
        .count();
    assert_eq!(completed, 1);
    let created: Vec<String> = h
        .log
        .iter()
        .filter_map(|r| match &r.value {
            zest_protocol::RecordValue::Variable(v)
                if r.intent == Intent::Created && v.scope_key == pik =>
            {
                Some(v.name.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(created, ["x", "done", "audited"]);
    h.assert_no_runtime_state();
}

#[test]
fn a_listener_job_cannot_throw_a_bpmn_error() {
    let mut h = Harness::new();
    h.deploy_ok(&one_task(&listeners(&[listener("start", "before")])));
    let pik = h.create_ok("p", "");
    let (key, _) = h.activate_one("before");
    let msg = h
        .throw_error(key, "E1", "boom")
        .rejection(RejectionType::InvalidState);
    assert_eq!(
        msg,
        format!("Cannot throw BPMN error from EXECUTION_LISTENER job with key '{key}', type 'before' and processInstanceKey '{pik}'")
    );
    // the job is still there and completes
    h.complete(key, "").accepted();
    assert_eq!(h.activate("work", 10).len(), 1);
}

#[test]
fn a_listener_job_without_retries_raises_an_execution_listener_incident() {
    let mut h = Harness::new();
    h.deploy_ok(&one_task(&listeners(&[listener("end", "after")])));
    h.create_ok("p", "");
    let (work, _) = h.activate_one("work");
    h.complete(work, "").accepted();
    let (after, _) = h.activate_one("after");
    h.fail(after, 0, "audit service down", 0).accepted();
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    let (incident_key, incident) = &incidents[0];
    assert_eq!(
        incident.record.error_type,
        ErrorType::ExecutionListenerNoRetries
    );
    assert_eq!(incident.record.error_message, "audit service down");
    assert_eq!(incident.record.job_key, after);
    h.update_retries(after, 1).accepted();
    h.resolve(*incident_key).accepted();
    let (again, _) = h.activate_one("after");
    assert_eq!(again, after, "the same listener job is retried");
    h.complete(again, "").accepted();
    h.settle();
    h.assert_no_runtime_state();
}

#[test]
fn a_listener_type_that_fails_to_evaluate_raises_an_incident_and_its_phase_runs_again() {
    let mut h = Harness::new();
    h.deploy_ok(&one_task(&listeners(&[
        listener("start", "first"),
        r#"<zeebe:executionListener eventType="start" type="=kind" />"#.to_string(),
    ])));
    let pik = h.create_ok("p", "");
    let (first, _) = h.activate_one("first");
    h.complete(first, "").accepted();
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    let (incident_key, incident) = &incidents[0];
    assert_eq!(incident.record.error_type, ErrorType::ExtractValueError);
    assert_eq!(incident.record.element_id, "work");
    h.set_variables(pik, r#"{"kind":"second"}"#, false)
        .accepted();
    h.resolve(*incident_key).accepted();
    // as in Zeebe, the start listeners run again from the first one
    let (first, _) = h.activate_one("first");
    h.complete(first, "").accepted();
    let (second, _) = h.activate_one("second");
    h.complete(second, "").accepted();
    assert_eq!(h.activate("work", 10).len(), 1);
}

#[test]
fn canceling_an_instance_waiting_for_a_listener_cancels_the_listener_job() {
    let mut h = Harness::new();
    h.deploy_ok(&one_task(&listeners(&[listener("start", "before")])));
    let pik = h.create_ok("p", "");
    let (before, _) = h.activate_one("before");
    h.cancel(pik).accepted();
    h.settle();
    assert!(h.job(before).is_none());
    let canceled = h
        .log
        .iter()
        .filter(|r| r.value.value_type() == ValueType::Job && r.intent == Intent::Canceled)
        .count();
    assert_eq!(canceled, 1);
    h.assert_no_runtime_state();
}

#[test]
fn process_listeners_run_around_an_instance_started_by_a_message() {
    let mut h = Harness::new();
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">
<bpmn:message id="m" name="order-placed" />
<bpmn:process id="p" isExecutable="true">
<bpmn:extensionElements>{}</bpmn:extensionElements>
<bpmn:startEvent id="s"><bpmn:messageEventDefinition messageRef="m" /></bpmn:startEvent>
<bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="e" />
<bpmn:endEvent id="e" />
</bpmn:process></bpmn:definitions>"#,
        listeners(&[listener("start", "pstart"), listener("end", "pend")])
    );
    h.deploy_ok(&xml);
    h.publish("order-placed", "", 0, "", r#"{"order":7}"#)
        .accepted();
    let (pstart, job) = h.activate_one("pstart");
    let pik = job.process_instance_key;
    h.complete(pstart, r#"{"checked":true}"#).accepted();
    // the message's variables still reach the instance after its start listener
    let vars = h.variables(pik);
    assert_eq!(vars.get("order"), Some(&json!(7)));
    assert_eq!(vars.get("checked"), Some(&json!(true)));
    let (pend, _) = h.activate_one("pend");
    h.complete(pend, "").accepted();
    h.settle();
    assert!(h.element_instance(pik).is_none(), "the instance completed");
    h.assert_no_runtime_state();
}
