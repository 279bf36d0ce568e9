//! Call activities: what users see besides the record order (which tests/anchor.rs checks
//! against Zeebe: call_activity, call_mapped, call_cancel, call_error).

mod support;

use serde_json::json;
use support::*;
use zest_protocol::{ErrorType, Intent, RecordValue, RejectionType, ValueType};

/// The process instance key of the (single) instance of `process_id` started by a call.
fn child_instance(h: &Harness, process_id: &str) -> zest_protocol::ProcessInstanceRecord {
    h.log
        .iter()
        .find_map(|r| match &r.value {
            RecordValue::ProcessInstance(p)
                if r.intent == Intent::ElementActivating && p.element_id == process_id =>
            {
                Some(p.clone())
            }
            _ => None,
        })
        .expect("a child instance")
}

fn deploy_pair(h: &mut Harness, parent: &str) {
    h.deploy_ok(&anchor_model("call_child.bpmn"));
    h.deploy_ok(&anchor_model(parent));
}

#[test]
fn the_called_process_gets_the_variables_and_hands_its_own_back() {
    let mut h = Harness::new();
    deploy_pair(&mut h, "call_parent.bpmn");
    let pik = h.create_ok("call_parent", r#"{"x":1,"childId":"call_child"}"#);
    let child = child_instance(&h, "call_child");
    assert_eq!(child.parent_process_instance_key, pik);
    assert!(child.parent_element_instance_key > 0);
    let (job, record) = h.activate_one("child_work");
    let vars: serde_json::Value = serde_json::from_str(&record.variables).unwrap();
    // every variable the call activity sees, its input mapping's result included
    assert_eq!(vars, json!({"x": 1, "childId": "call_child", "z": 2}));
    assert_eq!(record.process_instance_key, child.process_instance_key);
    h.complete(job, r#"{"y":2}"#).accepted();
    assert!(h.element_instance(pik).is_none(), "the parent completed");
    let root_vars: Vec<(String, String)> = h
        .log
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::Variable(v) if v.scope_key == pik => {
                Some((v.name.clone(), v.value.clone()))
            }
            _ => None,
        })
        .collect();
    assert!(
        root_vars.contains(&("y".into(), "2".into())),
        "{root_vars:?}"
    );
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn without_propagation_only_mapped_variables_cross() {
    let mut h = Harness::new();
    deploy_pair(&mut h, "call_mapped.bpmn");
    let pik = h.create_ok("call_mapped", r#"{"x":1,"other":true}"#);
    let (job, record) = h.activate_one("child_work");
    let vars: serde_json::Value = serde_json::from_str(&record.variables).unwrap();
    assert_eq!(vars, json!({"only": 1}), "only the input mapping's result");
    h.complete(job, r#"{"y":5}"#).accepted();
    let root: Vec<String> = h
        .log
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::Variable(v) if v.scope_key == pik => Some(v.name.clone()),
            _ => None,
        })
        .collect();
    assert!(root.contains(&"fromChild".to_string()), "{root:?}");
    assert!(!root.contains(&"y".to_string()), "y stays local: {root:?}");
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn a_missing_process_raises_an_incident_resolved_once_it_is_deployed() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("call_parent.bpmn"));
    let pik = h.create_ok("call_parent", r#"{"x":1,"childId":"call_child"}"#);
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    let (key, incident) = &incidents[0];
    assert_eq!(incident.record.error_type, ErrorType::CalledElementError);
    assert_eq!(
        incident.record.error_message,
        "Expected process with BPMN process id 'call_child' to be deployed, but not found."
    );
    h.deploy_ok(&anchor_model("call_child.bpmn"));
    h.resolve(*key).accepted();
    let (job, _) = h.activate_one("child_work");
    h.complete(job, "").accepted();
    assert!(h.element_instance(pik).is_none());
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn only_the_root_instance_can_be_canceled_and_it_takes_the_child_with_it() {
    let mut h = Harness::new();
    deploy_pair(&mut h, "call_parent.bpmn");
    let pik = h.create_ok("call_parent", r#"{"x":1,"childId":"call_child"}"#);
    let child = child_instance(&h, "call_child").process_instance_key;
    let reason = h.cancel(child).rejection(RejectionType::InvalidState);
    assert!(
        reason.contains(&format!("Cancel the root process instance '{pik}' instead")),
        "{reason}"
    );
    let b = h.cancel(pik);
    b.accepted();
    assert_eq!(b.count(ValueType::Job, Intent::Canceled), 1);
    assert!(h.element_instance(child).is_none());
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn an_error_thrown_in_the_called_process_is_caught_on_the_call_activity() {
    let mut h = Harness::new();
    deploy_pair(&mut h, "call_error.bpmn");
    let pik = h.create_ok("call_error", r#"{"x":1,"childId":"call_child"}"#);
    let (job, _) = h.activate_one("child_work");
    let b = h.throw_error(job, "E1", "broken");
    b.accepted();
    let pis = b.pi_events();
    assert!(pis.contains(&(Intent::ElementTerminated, "call_child".to_string())));
    assert!(pis.contains(&(Intent::ElementCompleted, "handled".to_string())));
    assert!(h.element_instance(pik).is_none());
    assert!(h.incidents().is_empty());
    h.assert_no_runtime_state();
    h.settle();
}
