//! Escalation events: what users see besides the record order (which tests/anchor.rs checks
//! against Zeebe for end and intermediate throw events, interrupting, non-interrupting and
//! catch-all boundary events, and escalations nothing catches).

mod support;

use support::*;
use zest_protocol::{Intent, RecordValue};

const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">
<bpmn:escalation id="esc" escalationCode="late" />
"#;

/// The escalations written, as (intent, code, thrown by, caught by).
fn escalations(h: &Harness) -> Vec<(Intent, String, String, String)> {
    h.log
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::Escalation(e) => Some((
                r.intent,
                e.escalation_code.clone(),
                e.throw_element_id.clone(),
                e.catch_element_id.clone(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn an_escalation_in_a_called_process_reaches_the_call_activity() {
    let mut h = Harness::new();
    let child = format!(
        r#"{HEAD}<bpmn:process id="child" isExecutable="true">
<bpmn:startEvent id="cs" /><bpmn:sequenceFlow id="c1" sourceRef="cs" targetRef="raise" />
<bpmn:intermediateThrowEvent id="raise"><bpmn:escalationEventDefinition escalationRef="esc" /></bpmn:intermediateThrowEvent>
<bpmn:sequenceFlow id="c2" sourceRef="raise" targetRef="work" />
<bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="child-work" /></bpmn:extensionElements></bpmn:serviceTask>
<bpmn:sequenceFlow id="c3" sourceRef="work" targetRef="ce" /><bpmn:endEvent id="ce" />
</bpmn:process></bpmn:definitions>"#
    );
    let parent = format!(
        r#"{HEAD}<bpmn:process id="parent" isExecutable="true">
<bpmn:startEvent id="ps" /><bpmn:sequenceFlow id="p1" sourceRef="ps" targetRef="call" />
<bpmn:callActivity id="call"><bpmn:extensionElements><zeebe:calledElement processId="child" /></bpmn:extensionElements></bpmn:callActivity>
<bpmn:boundaryEvent id="heard" cancelActivity="false" attachedToRef="call"><bpmn:escalationEventDefinition escalationRef="esc" /></bpmn:boundaryEvent>
<bpmn:sequenceFlow id="p2" sourceRef="heard" targetRef="notify" />
<bpmn:serviceTask id="notify"><bpmn:extensionElements><zeebe:taskDefinition type="notify" /></bpmn:extensionElements></bpmn:serviceTask>
<bpmn:sequenceFlow id="p3" sourceRef="notify" targetRef="pe2" /><bpmn:endEvent id="pe2" />
<bpmn:sequenceFlow id="p4" sourceRef="call" targetRef="pe" /><bpmn:endEvent id="pe" />
</bpmn:process></bpmn:definitions>"#
    );
    h.deploy_ok(&child);
    h.deploy_ok(&parent);
    let pik = h.create_ok("parent", "");
    assert_eq!(
        escalations(&h),
        vec![(
            Intent::Escalated,
            "late".to_string(),
            "raise".to_string(),
            "heard".to_string()
        )]
    );
    // non-interrupting: the child goes on, and the parent's boundary path runs beside it
    let (notify, _) = h.activate_one("notify");
    let (work, _) = h.activate_one("child-work");
    h.complete(notify, "").accepted();
    h.complete(work, "").accepted();
    h.settle();
    assert!(h.element_instance(pik).is_none(), "the parent completed");
    h.assert_no_runtime_state();
}

#[test]
fn an_escalation_end_event_nothing_catches_completes_its_scope() {
    let mut h = Harness::new();
    let xml = format!(
        r#"{HEAD}<bpmn:process id="p" isExecutable="true">
<bpmn:startEvent id="s" /><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="sub" />
<bpmn:subProcess id="sub"><bpmn:startEvent id="ss" /><bpmn:sequenceFlow id="sf" sourceRef="ss" targetRef="up" />
<bpmn:endEvent id="up"><bpmn:escalationEventDefinition escalationRef="esc" /></bpmn:endEvent></bpmn:subProcess>
<bpmn:sequenceFlow id="f2" sourceRef="sub" targetRef="after" />
<bpmn:serviceTask id="after"><bpmn:extensionElements><zeebe:taskDefinition type="after" /></bpmn:extensionElements></bpmn:serviceTask>
<bpmn:sequenceFlow id="f3" sourceRef="after" targetRef="e" /><bpmn:endEvent id="e" />
</bpmn:process></bpmn:definitions>"#
    );
    h.deploy_ok(&xml);
    let pik = h.create_ok("p", "");
    assert_eq!(
        escalations(&h),
        vec![(
            Intent::NotEscalated,
            "late".to_string(),
            "up".to_string(),
            String::new()
        )]
    );
    let (after, _) = h.activate_one("after");
    h.complete(after, "").accepted();
    assert!(h.element_instance(pik).is_none());
    h.assert_no_runtime_state();
}
