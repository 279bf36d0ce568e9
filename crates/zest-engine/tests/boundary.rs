//! Boundary events (timer, message, error) and error end events: what users see besides the
//! record order (which tests/anchor.rs checks against Zeebe): variables, incidents, and that
//! nothing is left behind in state.

mod support;

use serde_json::json;
use support::*;
use zest_engine::state::Ks;
use zest_protocol::{ErrorType, Intent, ValueType};

/// True when the batch created the variable `name` in scope `scope_key`.
fn created_variable(b: &Batch, name: &str, scope_key: i64) -> bool {
    b.find(ValueType::Variable, Intent::Created).iter().any(|r| {
        matches!(&r.value, zest_protocol::RecordValue::Variable(v) if v.name == name && v.scope_key == scope_key)
    })
}

#[test]
fn a_thrown_error_is_caught_by_the_boundary_event_with_its_variables() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("refunding.bpmn"));
    let pik = h.create_ok("refundingProcess", "");
    let (job, _) = h.activate_one("refunding");
    let b = h.job_cmd(
        job,
        Intent::ThrowError,
        zest_protocol::JobRecord {
            error_code: "refundingError".into(),
            error_message: "card expired".into(),
            variables: r#"{"why":"expired"}"#.into(),
            ..Default::default()
        },
    );
    b.accepted();
    assert!(
        created_variable(&b, "why", pik),
        "the error's variables reach the process scope"
    );
    // the task is terminated without a JOB CANCELED: the caught error ended the job
    assert_eq!(b.count(ValueType::Job, Intent::Canceled), 0);
    assert_eq!(b.count(ValueType::Incident, Intent::Created), 0);
    assert!(b
        .pi_events()
        .ends_with(&pi(&[(Intent::ElementCompleted, "refundingProcess")])));
    assert!(h.job(job).is_none());
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn throw_error_variables_reach_the_scope_through_the_boundary_event() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("error_end.bpmn"));
    let pi = h.create_ok("error_end", "");
    let (job, _) = h.activate_one("work");
    h.complete(job, "").accepted();
    // the error end event in the sub-process terminated it; the catch path runs
    let (after, _) = h.activate_one("after");
    assert!(h
        .element_instances()
        .iter()
        .all(|e| e.record.element_id != "sub"));
    h.set_variables(pi, r#"{"seen":1}"#, false).accepted();
    h.complete(after, "").accepted();
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn an_error_nothing_catches_raises_an_incident() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("refunding.bpmn"));
    let pi = h.create_ok("refundingProcess", "");
    let (job, _) = h.activate_one("refunding");
    let b = h.throw_error(job, "other-code", "no");
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1, "{:?}", b.events());
    assert_eq!(
        incidents[0].1.record.error_type,
        ErrorType::UnhandledErrorEvent
    );
    assert_eq!(
        incidents[0].1.record.error_message,
        "Expected to throw an error event with the code 'other-code' with message 'no', but it was not caught. No error events are available in the scope."
    );
    assert!(h.job(job).is_some(), "the job stays for its incident");
    h.cancel(pi).accepted();
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn an_error_end_event_without_a_catch_raises_an_incident_on_the_end_event() {
    let mut h = Harness::new();
    let xml = anchor_model("error_end.bpmn")
        .replace(
            r#"<bpmn:errorEventDefinition />"#,
            r#"<bpmn:errorEventDefinition errorRef="other" />"#,
        )
        .replace(
            r#"<bpmn:error id="err""#,
            r#"<bpmn:error id="other" errorCode="other" /><bpmn:error id="err""#,
        );
    h.deploy_ok(&xml);
    let pi = h.create_ok("error_end", "");
    let (job, _) = h.activate_one("work");
    h.complete(job, "").accepted();
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    assert_eq!(incidents[0].1.record.element_id, "fail");
    assert_eq!(
        incidents[0].1.record.error_type,
        ErrorType::UnhandledErrorEvent
    );
    h.cancel(pi).accepted();
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn timer_boundary_events_fire_beside_and_instead_of_the_task() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("boundary_timer.bpmn"));
    h.create_ok("boundary_timer", "");
    assert_eq!(h.count(Ks::ElementTimers), 2);
    h.advance(30_000);
    h.run_scheduler();
    // the non-interrupting timer started the reminder; the task still waits
    let (remind, _) = h.activate_one("remind");
    h.complete(remind, "").accepted();
    assert_eq!(h.instance_of("task").state, Intent::ElementActivated);
    h.advance(30_000);
    let fired = h.run_scheduler();
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].count(ValueType::Job, Intent::Canceled), 1);
    assert!(fired[0]
        .pi_events()
        .ends_with(&pi(&[(Intent::ElementCompleted, "boundary_timer")])));
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn completing_the_task_cancels_its_boundary_timers() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("boundary_timer.bpmn"));
    h.create_ok("boundary_timer", "");
    let (job, _) = h.activate_one("work");
    let b = h.complete(job, "");
    assert_eq!(b.count(ValueType::Timer, Intent::Canceled), 2);
    h.advance(3_600_000);
    assert!(h.run_scheduler().is_empty());
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn message_boundary_events_correlate_beside_and_instead_of_the_task() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("boundary_message.bpmn"));
    let pi = h.create_ok("boundary_message", r#"{"orderId":"o-1"}"#);
    // a non-interrupting boundary event takes every message while the task waits
    h.publish("note", "o-1", 0, "", r#"{"n":1}"#).accepted();
    h.publish("note", "o-1", 0, "", r#"{"n":2}"#).accepted();
    assert_eq!(h.variables(pi).get("n"), Some(&json!(2)));
    assert_eq!(h.instance_of("task").state, Intent::ElementActivated);
    h.assert_state_consistent();
    let b = h.publish("cancel", "o-1", 0, "", r#"{"reason":"x"}"#);
    assert_eq!(b.count(ValueType::Job, Intent::Canceled), 1);
    assert!(
        created_variable(&b, "reason", pi),
        "the message's variables reach the process scope"
    );
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn completing_the_task_closes_its_boundary_subscriptions() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("boundary_message.bpmn"));
    h.create_ok("boundary_message", r#"{"orderId":"o-1"}"#);
    let (job, _) = h.activate_one("work");
    h.complete(job, "").accepted();
    h.assert_state_consistent();
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn an_error_that_interrupts_a_scope_while_a_sibling_completes_in_the_same_batch() {
    // the sibling's COMPLETE_ELEMENT comes after the scope's TERMINATE_ELEMENT: it is rejected
    // (Zeebe's message) and the sibling is terminated with its scope; nothing is stuck
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("error_race.bpmn"));
    let b = h.create("error_race", "");
    b.accepted();
    let rejected: Vec<_> = b
        .records
        .iter()
        .filter(|r| r.record_type == zest_protocol::RecordType::CommandRejection)
        .map(|r| (r.intent, label(r), r.rejection_reason.clone()))
        .collect();
    assert_eq!(
        rejected,
        vec![(
            Intent::CompleteElement,
            "manual".to_string(),
            "Expected flow scope instance to be in state 'ELEMENT_ACTIVATED' but was 'ELEMENT_TERMINATING'.".to_string()
        )]
    );
    assert!(b
        .pi_events()
        .ends_with(&pi(&[(Intent::ElementCompleted, "error_race")])));
    h.assert_no_runtime_state();
    h.settle();
}
