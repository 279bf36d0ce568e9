//! Event sub-processes: what users see besides the record order (which tests/anchor.rs checks
//! against Zeebe for message, timer, signal, error and escalation start events, interrupting
//! and not, in processes and sub-processes).

mod support;

use support::*;
use zest_protocol::{Intent, ValueType};

const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">
<bpmn:message id="m" name="note"><bpmn:extensionElements><zeebe:subscription correlationKey="=orderId" /></bpmn:extensionElements></bpmn:message>
<bpmn:error id="e" errorCode="no-stock" />
"#;

fn job(id: &str, job_type: &str) -> String {
    format!(
        r#"<bpmn:serviceTask id="{id}"><bpmn:extensionElements><zeebe:taskDefinition type="{job_type}" /></bpmn:extensionElements></bpmn:serviceTask>"#
    )
}

/// An event sub-process `id` whose start event (with `definition`) leads to a job of
/// `job_type`.
fn esp(id: &str, interrupting: bool, definition: &str, job_type: &str) -> String {
    format!(
        r#"<bpmn:subProcess id="{id}" triggeredByEvent="true">
<bpmn:startEvent id="{id}_start" isInterrupting="{interrupting}">{definition}</bpmn:startEvent>
<bpmn:sequenceFlow id="{id}_f1" sourceRef="{id}_start" targetRef="{id}_task" />
{}
<bpmn:sequenceFlow id="{id}_f2" sourceRef="{id}_task" targetRef="{id}_end" />
<bpmn:endEvent id="{id}_end" />
</bpmn:subProcess>"#,
        job(&format!("{id}_task"), job_type)
    )
}

/// A process `p`: start, a job of type `work`, end; plus `extra` (event sub-processes).
fn main_flow(extra: &str) -> String {
    format!(
        r#"{HEAD}<bpmn:process id="p" isExecutable="true">
<bpmn:startEvent id="s" /><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="work" />
{}
<bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="e_end" /><bpmn:endEvent id="e_end" />
{extra}
</bpmn:process></bpmn:definitions>"#,
        job("work", "work")
    )
}

#[test]
fn a_non_interrupting_message_event_sub_process_runs_once_per_message_beside_the_main_flow() {
    let mut h = Harness::new();
    let message = r#"<bpmn:messageEventDefinition messageRef="m" />"#;
    h.deploy_ok(&main_flow(&esp("on_note", false, message, "note")));
    let pik = h.create_ok("p", r#"{"orderId":"o-1"}"#);
    h.publish("note", "o-1", 0, "", r#"{"first":1}"#).accepted();
    h.publish("note", "o-1", 0, "", r#"{"second":2}"#)
        .accepted();
    // two event sub-process instances run, and the main task is still there
    let notes = h.activate("note", 10);
    assert_eq!(notes.len(), 2);
    // the messages' variables reached the process
    let vars = h.variables(pik);
    assert_eq!(vars.get("first"), Some(&serde_json::json!(1)));
    assert_eq!(vars.get("second"), Some(&serde_json::json!(2)));
    let (work, _) = h.activate_one("work");
    h.complete(work, "").accepted();
    h.settle();
    // the process waits for its running event sub-processes
    assert!(h.element_instance(pik).is_some());
    for (key, _) in notes {
        h.complete(key, "").accepted();
    }
    h.settle();
    assert!(h.element_instance(pik).is_none(), "the process completed");
    h.assert_no_runtime_state();
}

#[test]
fn an_error_from_a_called_process_is_caught_by_the_parents_event_sub_process() {
    let mut h = Harness::new();
    let child = format!(
        r#"{HEAD}<bpmn:process id="child" isExecutable="true">
<bpmn:startEvent id="cs" /><bpmn:sequenceFlow id="c1" sourceRef="cs" targetRef="pick" />
{}
<bpmn:sequenceFlow id="c2" sourceRef="pick" targetRef="ce" /><bpmn:endEvent id="ce" />
</bpmn:process></bpmn:definitions>"#,
        job("pick", "pick")
    );
    let parent = format!(
        r#"{HEAD}<bpmn:process id="parent" isExecutable="true">
<bpmn:startEvent id="ps" /><bpmn:sequenceFlow id="p1" sourceRef="ps" targetRef="fork" />
<bpmn:parallelGateway id="fork" />
<bpmn:sequenceFlow id="p2" sourceRef="fork" targetRef="call" />
<bpmn:sequenceFlow id="p3" sourceRef="fork" targetRef="other" />
<bpmn:callActivity id="call"><bpmn:extensionElements><zeebe:calledElement processId="child" /></bpmn:extensionElements></bpmn:callActivity>
{}
<bpmn:sequenceFlow id="p4" sourceRef="call" targetRef="pe" /><bpmn:endEvent id="pe" />
<bpmn:sequenceFlow id="p5" sourceRef="other" targetRef="pe2" /><bpmn:endEvent id="pe2" />
{}
</bpmn:process></bpmn:definitions>"#,
        job("other", "other"),
        esp(
            "on_error",
            true,
            r#"<bpmn:errorEventDefinition errorRef="e" />"#,
            "refund"
        )
    );
    h.deploy_ok(&child);
    h.deploy_ok(&parent);
    let pik = h.create_ok("parent", "");
    let (pick, _) = h.activate_one("pick");
    h.throw_error(pick, "no-stock", "out of stock").accepted();
    h.settle();
    // the error terminated the called process and the other branch, then the handler ran
    assert!(
        h.activate("other", 1).is_empty(),
        "the parallel branch was terminated"
    );
    let (refund, _) = h.activate_one("refund");
    h.complete(refund, "").accepted();
    h.settle();
    assert!(h.element_instance(pik).is_none(), "the parent completed");
    h.assert_no_runtime_state();
}

#[test]
fn an_interrupting_timer_event_sub_process_in_a_sub_process_lets_the_process_go_on() {
    let mut h = Harness::new();
    let timer = r#"<bpmn:timerEventDefinition><bpmn:timeDuration>=timeout</bpmn:timeDuration></bpmn:timerEventDefinition>"#;
    let xml = format!(
        r#"{HEAD}<bpmn:process id="p" isExecutable="true">
<bpmn:startEvent id="s" /><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="sub" />
<bpmn:subProcess id="sub">
<bpmn:startEvent id="ss" /><bpmn:sequenceFlow id="sf1" sourceRef="ss" targetRef="slow" />
{}
<bpmn:sequenceFlow id="sf2" sourceRef="slow" targetRef="se" /><bpmn:endEvent id="se" />
{}
</bpmn:subProcess>
<bpmn:sequenceFlow id="f2" sourceRef="sub" targetRef="after" />
{}
<bpmn:sequenceFlow id="f3" sourceRef="after" targetRef="pe" /><bpmn:endEvent id="pe" />
</bpmn:process></bpmn:definitions>"#,
        job("slow", "slow"),
        esp("on_timeout", true, timer, "escalate"),
        job("after", "after")
    );
    h.deploy_ok(&xml);
    let pik = h.create_ok("p", r#"{"timeout":"PT10M"}"#);
    h.advance(10 * 60 * 1000);
    h.run_scheduler();
    h.settle();
    assert!(
        h.activate("slow", 1).is_empty(),
        "the slow task was terminated"
    );
    let (escalate, _) = h.activate_one("escalate");
    h.complete(escalate, "").accepted();
    // the sub-process completed through its event sub-process, and the flow goes on
    let (after, _) = h.activate_one("after");
    h.complete(after, "").accepted();
    h.settle();
    assert!(h.element_instance(pik).is_none());
    h.assert_no_runtime_state();
}

#[test]
fn canceling_a_process_closes_its_event_sub_process_subscriptions() {
    let mut h = Harness::new();
    let message = r#"<bpmn:messageEventDefinition messageRef="m" />"#;
    let timer = r#"<bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1H</bpmn:timeCycle></bpmn:timerEventDefinition>"#;
    let extra = format!(
        "{}{}",
        esp("on_note", true, message, "note"),
        esp("hourly", false, timer, "remind")
    );
    h.deploy_ok(&main_flow(&extra));
    let pik = h.create_ok("p", r#"{"orderId":"o-1"}"#);
    h.advance(60 * 60 * 1000);
    h.run_scheduler();
    h.settle();
    assert_eq!(h.activate("remind", 10).len(), 1);
    let batch = h.cancel(pik);
    batch.accepted();
    h.settle();
    assert!(h.element_instance(pik).is_none());
    assert_eq!(
        h.log
            .iter()
            .filter(|r| r.value_type == ValueType::Timer && r.intent == Intent::Canceled)
            .count(),
        1,
        "the next hourly timer was canceled"
    );
    h.assert_no_runtime_state();
}

#[test]
fn bad_event_sub_processes_are_rejected_at_deployment() {
    let mut h = Harness::new();
    let error = r#"<bpmn:errorEventDefinition errorRef="e" />"#;
    let batch = h.deploy("bad.bpmn", &main_flow(&esp("on_error", false, error, "x")));
    let reason = batch.rejection(zest_protocol::RejectionType::InvalidArgument);
    assert!(
        reason.contains("on_error_start") && reason.contains("must be interrupting"),
        "{reason}"
    );
}
