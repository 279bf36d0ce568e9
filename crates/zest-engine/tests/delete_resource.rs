//! DeleteResource for processes: what users see besides the record order (which
//! tests/anchor.rs checks against Zeebe: a rejection while an instance runs, the deletion, and
//! NOT_FOUND for a deleted key).

mod support;

use support::*;
use zest_protocol::{Intent, RecordValue, RejectionType, ValueType};

fn model(message: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">
<bpmn:message id="m" name="{message}" />
<bpmn:process id="p" isExecutable="true">
<bpmn:startEvent id="s"><bpmn:messageEventDefinition messageRef="m" /></bpmn:startEvent>
<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" /><bpmn:endEvent id="e" />
</bpmn:process></bpmn:definitions>"#
    )
}

/// The message names of the open message start event subscriptions.
fn start_subscriptions(h: &Harness) -> Vec<String> {
    let mut open = Vec::new();
    for r in &h.log {
        if let RecordValue::MessageStartEventSubscription(s) = &r.value {
            match r.intent {
                Intent::Created => open.push(s.message_name.clone()),
                Intent::Deleted => open.retain(|n| *n != s.message_name),
                _ => {}
            }
        }
    }
    open
}

#[test]
fn deleting_the_latest_version_brings_back_the_one_before() {
    let mut h = Harness::new();
    h.deploy_ok(&model("first"));
    let v2 = h.deploy_ok(&model("second"));
    assert_eq!(start_subscriptions(&h), vec!["second".to_string()]);
    let v2_key = h
        .log
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::Process(p) if p.version == 2 => Some(p.process_definition_key),
            _ => None,
        })
        .next()
        .expect("version 2");
    assert!(v2 > 0);
    h.delete_resource(v2_key).accepted();
    assert_eq!(
        h.log
            .iter()
            .filter(|r| r.value_type == ValueType::Process && r.intent == Intent::Deleted)
            .count(),
        1
    );
    // version 1 listens again, and instances start from it
    assert_eq!(start_subscriptions(&h), vec!["first".to_string()]);
    h.publish("first", "", 0, "", "").accepted();
    assert_eq!(
        h.log
            .iter()
            .filter(|r| r.intent == Intent::ElementCompleted
                && matches!(&r.value, RecordValue::ProcessInstance(p) if p.element_id == "p" && p.version == 1))
            .count(),
        1
    );
    // a deleted key is gone; the next deployment does not give its version again
    let gone = h.delete_resource(v2_key);
    assert!(gone
        .rejection(RejectionType::NotFound)
        .contains("no resource found with key"));
    h.deploy_ok(&model("third"));
    let versions: Vec<i32> = h
        .log
        .iter()
        .filter(|r| r.intent == Intent::Created)
        .filter_map(|r| match &r.value {
            RecordValue::Process(p) => Some(p.version),
            _ => None,
        })
        .collect();
    assert_eq!(versions, vec![1, 2, 3]);
    h.assert_state_consistent();
}

#[test]
fn deleting_the_only_version_stops_its_start_events() {
    let mut h = Harness::new();
    h.deploy_ok(&model("only"));
    let key = h
        .log
        .iter()
        .find_map(|r| match &r.value {
            RecordValue::Process(p) => Some(p.process_definition_key),
            _ => None,
        })
        .expect("deployed");
    h.delete_resource(key).accepted();
    assert!(start_subscriptions(&h).is_empty());
    let b = h.create("p", "");
    assert!(b.rejection(RejectionType::NotFound).contains("'p'"));
    h.assert_no_runtime_state();
}
