//! Signals: what users see besides the record order (tests/anchor.rs checks that against
//! Zeebe): subscriptions are closed with their element, start events follow the latest
//! version, an interrupting boundary event takes one signal.

mod support;

use support::*;
use zest_engine::state::Ks;
use zest_protocol::{Intent, RecordValue, ValueType};

#[test]
fn cancelling_an_instance_closes_its_signal_subscriptions() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("signal.bpmn"));
    let pik = h.create_ok("signal", "");
    assert_eq!(
        h.count(Ks::SignalSubscriptions),
        2,
        "the boundary event's, by name and by owner"
    );
    let b = h.cancel(pik);
    b.accepted();
    assert_eq!(b.count(ValueType::SignalSubscription, Intent::Deleted), 1);
    assert_eq!(h.count(Ks::SignalSubscriptions), 0);
    // a broadcast now reaches nobody
    let b = h.broadcast("note", "{}");
    b.accepted();
    assert_eq!(b.count(ValueType::ProcessEvent, Intent::Triggering), 0);
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn a_new_version_takes_over_the_signal_start_event() {
    let mut h = Harness::new();
    let v1 = h.deploy_ok(&anchor_model("signal_start.bpmn"));
    let xml = anchor_model("signal_start.bpmn").replace(
        r#"<bpmn:endEvent id="end" />"#,
        r#"<bpmn:endEvent id="end" name="v2" />"#,
    );
    let b = h.deploy("signal_start.bpmn", &xml);
    b.accepted();
    let deleted = b.find(ValueType::SignalSubscription, Intent::Deleted);
    assert_eq!(deleted.len(), 1);
    let RecordValue::SignalSubscription(d) = &deleted[0].value else {
        unreachable!()
    };
    assert_eq!(d.process_definition_key, v1);
    // the broadcast starts one instance, of version 2
    let b = h.broadcast("started", r#"{"n":1}"#);
    let activated: Vec<_> = b
        .find(ValueType::ProcessInstance, Intent::ElementActivated)
        .into_iter()
        .filter_map(|r| match &r.value {
            RecordValue::ProcessInstance(p)
                if p.bpmn_element_type == zest_protocol::BpmnElementType::Process =>
            {
                Some(p.version)
            }
            _ => None,
        })
        .collect();
    assert_eq!(activated, vec![2]);
    h.settle();
}

#[test]
fn an_interrupting_signal_boundary_event_takes_the_task_away() {
    let mut h = Harness::new();
    let xml = anchor_model("signal.bpmn").replace(r#"cancelActivity="false""#, "");
    h.deploy_ok(&xml);
    let pik = h.create_ok("signal", "");
    let b = h.broadcast("note", r#"{"why":"stop"}"#);
    b.accepted();
    assert_eq!(b.count(ValueType::Job, Intent::Canceled), 1);
    assert!(h.activate("work", 10).is_empty());
    assert!(
        h.element_instance(pik).is_none(),
        "the instance ended at 'noted'"
    );
    h.assert_no_runtime_state();
    h.settle();
}
