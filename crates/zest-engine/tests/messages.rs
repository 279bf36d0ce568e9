//! Messages: PublishMessage, message catch events, receive tasks, message start events and
//! time to live, checked against Zeebe's record order and correlation rules
//! (docs/design/zeebe-messages.md, sections 2 and 3).

mod support;

use serde_json::json;
use support::*;
use zest_engine::state::Ks;
use zest_protocol::{ErrorType, Intent, Record, RecordType, RecordValue, RejectionType, ValueType};

/// Definitions with a process `body` and message definitions `messages` beside it.
fn defs(process_id: &str, body: &str, messages: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="{process_id}" isExecutable="true">
{body}
  </bpmn:process>
{messages}
</bpmn:definitions>
"#
    )
}

fn message(id: &str, name: &str, correlation_key: &str) -> String {
    format!(
        r#"  <bpmn:message id="{id}" name="{name}">
    <bpmn:extensionElements><zeebe:subscription correlationKey="{correlation_key}" /></bpmn:extensionElements>
  </bpmn:message>"#
    )
}

/// start -> catch (message `paid`, key `=orderId`) -> end
fn catch_process(process_id: &str) -> String {
    defs(
        process_id,
        r#"    <bpmn:startEvent id="start" />
    <bpmn:intermediateCatchEvent id="wait">
      <bpmn:messageEventDefinition messageRef="m" />
    </bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait" />
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end" />"#,
        &message("m", "paid", "=orderId"),
    )
}

/// Every record of a batch as (record type, value type, intent, label).
fn stream(records: &[Record]) -> Vec<(RecordType, ValueType, Intent, String)> {
    records
        .iter()
        .map(|r| (r.record_type, r.value_type, r.intent, label(r)))
        .collect()
}

fn cmd(vt: ValueType, intent: Intent, l: &str) -> (RecordType, ValueType, Intent, String) {
    (RecordType::Command, vt, intent, l.to_string())
}

fn ev(vt: ValueType, intent: Intent, l: &str) -> (RecordType, ValueType, Intent, String) {
    (RecordType::Event, vt, intent, l.to_string())
}

const PI: ValueType = ValueType::ProcessInstance;
const MS: ValueType = ValueType::MessageSubscription;
const PMS: ValueType = ValueType::ProcessMessageSubscription;
const MSG: ValueType = ValueType::Message;
const PE: ValueType = ValueType::ProcessEvent;

#[test]
fn waiting_catch_event_correlates_a_published_message_in_zeebe_order() {
    let mut h = Harness::new();
    h.deploy_ok(&catch_process("order"));
    let created = h.create("order", r#"{"orderId":"o-1"}"#);
    let s = stream(&created.records);
    let at = s
        .iter()
        .position(|r| *r == ev(PI, Intent::ElementActivating, "wait"))
        .unwrap();
    assert_eq!(
        s[at..].to_vec(),
        vec![
            ev(PI, Intent::ElementActivating, "wait"),
            ev(PMS, Intent::Creating, "paid"),
            cmd(MS, Intent::Create, "paid"),
            ev(PI, Intent::ElementActivated, "wait"),
            ev(MS, Intent::Created, "paid"),
            cmd(PMS, Intent::Create, "paid"),
            ev(PMS, Intent::Created, "paid"),
        ]
    );
    h.settle();
    let pi_key = h.instance_of("order").key;

    // another correlation key or name does nothing
    let other = h.publish("paid", "o-2", 0, "", "{}");
    assert_eq!(
        stream(&other.records)[1..].to_vec(),
        vec![
            ev(MSG, Intent::Published, "paid"),
            ev(MSG, Intent::Expired, "paid")
        ]
    );

    let published = h.publish("paid", "o-1", 0, "", r#"{"amount":42}"#);
    let response = published.accepted();
    assert_eq!(response.value_type, MSG);
    assert_eq!(response.intent, Intent::Published);
    assert_eq!(
        stream(&published.records),
        vec![
            cmd(MSG, Intent::Publish, "paid"),
            ev(MSG, Intent::Published, "paid"),
            ev(MS, Intent::Correlating, "paid"),
            cmd(PMS, Intent::Correlate, "paid"),
            ev(MSG, Intent::Expired, "paid"),
            ev(PMS, Intent::Correlated, "paid"),
            ev(PE, Intent::Triggering, "wait"),
            cmd(PI, Intent::CompleteElement, "wait"),
            cmd(MS, Intent::Correlate, "paid"),
            ev(PI, Intent::ElementCompleting, "wait"),
            ev(PE, Intent::Triggered, "wait"),
            ev(ValueType::Variable, Intent::Created, "amount"),
            ev(PI, Intent::ElementCompleted, "wait"),
            ev(PI, Intent::SequenceFlowTaken, "f2"),
            cmd(PI, Intent::ActivateElement, "end"),
            ev(MS, Intent::Correlated, "paid"),
            ev(PI, Intent::ElementActivating, "end"),
            ev(PI, Intent::ElementActivated, "end"),
            cmd(PI, Intent::CompleteElement, "end"),
            ev(PI, Intent::ElementCompleting, "end"),
            ev(PI, Intent::ElementCompleted, "end"),
            cmd(PI, Intent::CompleteElement, "order"),
            ev(PI, Intent::ElementCompleting, "order"),
            ev(PI, Intent::ElementCompleted, "order"),
        ]
    );
    // the message's variables reach the process scope, the message key is on every record
    let var = published.find(ValueType::Variable, Intent::Created)[0];
    let RecordValue::Variable(v) = &var.value else {
        unreachable!()
    };
    assert_eq!((v.scope_key, v.value.as_str()), (pi_key, "42"));
    let RecordValue::ProcessMessageSubscription(p) =
        &published.find(PMS, Intent::Correlated)[0].value
    else {
        unreachable!()
    };
    assert_eq!(p.message_key, response.key);
    assert_eq!(p.element_id, "wait");
    h.settle();
    h.assert_no_runtime_state();
}

#[test]
fn buffered_message_correlates_when_the_subscription_opens() {
    let mut h = Harness::new();
    h.deploy_ok(&catch_process("order"));
    let published = h.publish("paid", "o-1", 60_000, "", r#"{"amount":7}"#);
    assert_eq!(
        stream(&published.records),
        vec![
            cmd(MSG, Intent::Publish, "paid"),
            ev(MSG, Intent::Published, "paid")
        ]
    );
    let RecordValue::Message(m) = &published.accepted().value else {
        unreachable!()
    };
    assert_eq!(m.deadline, h.now + 60_000);
    h.settle();

    let created = h.create("order", r#"{"orderId":"o-1"}"#);
    let s = stream(&created.records);
    let at = s
        .iter()
        .position(|r| *r == ev(MS, Intent::Created, "paid"))
        .unwrap();
    // no PROCESS_MESSAGE_SUBSCRIPTION CREATE: the message correlates at once
    assert_eq!(
        s[at..at + 6].to_vec(),
        vec![
            ev(MS, Intent::Created, "paid"),
            ev(MS, Intent::Correlating, "paid"),
            cmd(PMS, Intent::Correlate, "paid"),
            ev(PMS, Intent::Correlated, "paid"),
            ev(PE, Intent::Triggering, "wait"),
            cmd(PI, Intent::CompleteElement, "wait"),
        ]
    );
    assert_eq!(created.count(PMS, Intent::Created), 0);
    assert_eq!(created.count(PI, Intent::ElementCompleted), 4);
    h.settle();

    // the message stays buffered, but correlates at most once per process
    h.create("order", r#"{"orderId":"o-1"}"#);
    assert!(h.instance_of("wait").is_active());
    h.settle();
    // ... and it still reaches other processes
    h.deploy_ok(&catch_process("other"));
    let b = h.create("other", r#"{"orderId":"o-1"}"#);
    assert_eq!(b.count(PMS, Intent::Correlated), 1);
    h.settle();

    // after its time to live, the message is removed by the scheduler
    h.advance(60_000);
    let expired = h.run_scheduler();
    assert_eq!(expired.len(), 1);
    assert_eq!(
        stream(&expired[0].records),
        vec![
            cmd(ValueType::MessageBatch, Intent::Expire, ""),
            ev(MSG, Intent::Expired, "paid")
        ]
    );
    assert_eq!(h.count(Ks::Messages), 0);
    assert_eq!(
        h.count(Ks::MessageIndex),
        0,
        "ids and correlation marks go too"
    );
    h.settle();
}

#[test]
fn an_expired_message_no_longer_correlates_even_before_the_scheduler_removes_it() {
    let mut h = Harness::new();
    h.deploy_ok(&catch_process("order"));
    h.publish("paid", "o-1", 1_000, "", "{}").accepted();
    h.advance(1_000);
    let b = h.create("order", r#"{"orderId":"o-1"}"#);
    assert_eq!(b.count(PMS, Intent::Created), 1);
    assert_eq!(b.count(PMS, Intent::Correlated), 0);
    h.settle();
}

#[test]
fn one_message_serves_one_instance_of_a_process() {
    let mut h = Harness::new();
    h.deploy_ok(&catch_process("order"));
    let a = h.create_ok("order", r#"{"orderId":"o-1"}"#);
    let b = h.create_ok("order", r#"{"orderId":"o-1"}"#);
    let first = h.publish("paid", "o-1", 0, "", "{}");
    assert_eq!(first.count(PMS, Intent::Correlated), 1);
    let RecordValue::ProcessMessageSubscription(p) = &first.find(PMS, Intent::Correlated)[0].value
    else {
        unreachable!()
    };
    assert_eq!(p.process_instance_key, a, "the oldest subscription first");
    h.settle();
    let second = h.publish("paid", "o-1", 0, "", "{}");
    let RecordValue::ProcessMessageSubscription(p) = &second.find(PMS, Intent::Correlated)[0].value
    else {
        unreachable!()
    };
    assert_eq!(p.process_instance_key, b);
    h.settle();
    h.assert_no_runtime_state();
}

#[test]
fn message_id_is_unique_while_the_message_is_buffered() {
    let mut h = Harness::new();
    h.publish("paid", "o-1", 10_000, "id-1", "{}").accepted();
    let reason = h
        .publish("paid", "o-1", 10_000, "id-1", "{}")
        .rejection(RejectionType::AlreadyExists);
    assert_eq!(
        reason,
        "Expected to publish a new message with id 'id-1', but a message with that id was already published"
    );
    // another key, name or id is another message
    h.publish("paid", "o-2", 10_000, "id-1", "{}").accepted();
    h.publish("paid", "o-1", 10_000, "id-2", "{}").accepted();
    h.advance(10_000);
    h.run_scheduler();
    h.publish("paid", "o-1", 10_000, "id-1", "{}").accepted();
    // a message that is not buffered gives no protection
    h.publish("now", "k", 0, "x", "{}").accepted();
    h.publish("now", "k", 0, "x", "{}").accepted();
    h.settle();
}

#[test]
fn invalid_messages_are_rejected() {
    let mut h = Harness::new();
    let reason = h
        .publish("", "k", 0, "", "{}")
        .rejection(RejectionType::InvalidArgument);
    assert!(reason.contains("name"), "{reason}");
    let reason = h
        .publish("m", "k", 0, "", "[1]")
        .rejection(RejectionType::InvalidArgument);
    assert!(reason.contains("variables"), "{reason}");
}

#[test]
fn leaving_a_waiting_element_closes_both_sides_of_its_subscription() {
    let mut h = Harness::new();
    h.deploy_ok(&catch_process("order"));
    let pi_key = h.create_ok("order", r#"{"orderId":"o-1"}"#);
    let canceled = h.cancel(pi_key);
    let s = stream(&canceled.records);
    let at = s
        .iter()
        .position(|r| *r == ev(PMS, Intent::Deleting, "paid"))
        .unwrap();
    assert_eq!(
        s[at..].to_vec(),
        vec![
            ev(PMS, Intent::Deleting, "paid"),
            cmd(MS, Intent::Delete, "paid"),
            ev(PI, Intent::ElementTerminated, "wait"),
            ev(PI, Intent::ElementTerminated, "order"),
            ev(MS, Intent::Deleted, "paid"),
            cmd(PMS, Intent::Delete, "paid"),
            ev(PMS, Intent::Deleted, "paid"),
        ]
    );
    h.settle();
    h.assert_no_runtime_state();
    // a later message finds nothing
    let b = h.publish("paid", "o-1", 0, "", "{}");
    assert_eq!(b.count(MS, Intent::Correlating), 0);
}

#[test]
fn receive_task_with_output_mappings_and_a_numeric_correlation_key() {
    let mut h = Harness::new();
    let xml = defs(
        "shipping",
        r#"    <bpmn:startEvent id="start" />
    <bpmn:receiveTask id="receive" messageRef="m">
      <bpmn:extensionElements>
        <zeebe:ioMapping><zeebe:output source="=tracking.code" target="code" /></zeebe:ioMapping>
      </bpmn:extensionElements>
    </bpmn:receiveTask>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="receive" />
    <bpmn:sequenceFlow id="f2" sourceRef="receive" targetRef="end" />"#,
        &message("m", "=&quot;shipped-&quot; + kind", "=orderNo"),
    );
    h.deploy_ok(&xml);
    let pi_key = h.create_ok("shipping", r#"{"orderNo":123.9,"kind":"parcel"}"#);
    let b = h.publish(
        "shipped-parcel",
        "123",
        0,
        "",
        r#"{"tracking":{"code":"X1"},"carrier":"dhl"}"#,
    );
    assert_eq!(b.count(PI, Intent::ElementCompleted), 3);
    // only the output mapping leaves the task
    let created: Vec<_> = b
        .find(ValueType::Variable, Intent::Created)
        .into_iter()
        .map(|r| match &r.value {
            RecordValue::Variable(v) => (v.name.clone(), v.scope_key == pi_key),
            _ => unreachable!(),
        })
        .collect();
    assert!(created.contains(&("code".to_string(), true)), "{created:?}");
    assert!(
        created.contains(&("carrier".to_string(), false)),
        "{created:?}"
    );
    h.settle();
}

#[test]
fn a_correlation_key_that_is_not_a_string_or_number_raises_an_incident() {
    let mut h = Harness::new();
    h.deploy_ok(&catch_process("order"));
    let b = h.create("order", r#"{"orderId":{"id":1}}"#);
    let inc = b.find(ValueType::Incident, Intent::Created);
    assert_eq!(inc.len(), 1);
    let RecordValue::Incident(i) = &inc[0].value else {
        unreachable!()
    };
    assert_eq!(i.error_type, ErrorType::ExtractValueError);
    assert_eq!(
        i.error_message,
        "Failed to extract the correlation key for '=orderId': The value must be either a string or a number, but was OBJECT."
    );
    assert_eq!(b.count(PMS, Intent::Creating), 0);
    h.settle();
    // fix the variable, resolve: the subscription opens and a message completes the instance
    let pi_key = h.instance_of("order").key;
    h.set_variables(pi_key, r#"{"orderId":"o-9"}"#, false);
    let incident_key = inc[0].key;
    let r = h.resolve(incident_key);
    assert_eq!(r.count(PMS, Intent::Created), 1);
    h.settle();
    h.publish("paid", "o-9", 0, "", "{}");
    h.settle();
    h.assert_no_runtime_state();
}

fn start_process(process_id: &str, version_marker: &str) -> String {
    defs(
        process_id,
        &format!(
            r#"    <bpmn:startEvent id="start{version_marker}">
      <bpmn:messageEventDefinition messageRef="m" />
    </bpmn:startEvent>
    <bpmn:serviceTask id="task">
      <bpmn:extensionElements><zeebe:taskDefinition type="work" /></bpmn:extensionElements>
    </bpmn:serviceTask>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start{version_marker}" targetRef="task" />
    <bpmn:sequenceFlow id="f2" sourceRef="task" targetRef="end" />"#
        ),
        r#"  <bpmn:message id="m" name="order-placed" />"#,
    )
}

#[test]
fn message_start_event_creates_an_instance_with_the_message_variables() {
    let mut h = Harness::new();
    let deployed = h.deploy("p.bpmn", &start_process("fulfil", ""));
    deployed.accepted();
    assert_eq!(
        deployed.count(ValueType::MessageStartEventSubscription, Intent::Created),
        1
    );
    // no none start event: CreateProcessInstance is refused
    let reason = h
        .create("fulfil", "{}")
        .rejection(RejectionType::InvalidState);
    assert_eq!(
        reason,
        "Expected to create instance of process with none start event, but there is no such event"
    );

    let b = h.publish("order-placed", "", 0, "", r#"{"orderId":"o-1"}"#);
    let s = stream(&b.records);
    assert_eq!(
        s[..8].to_vec(),
        vec![
            cmd(MSG, Intent::Publish, "order-placed"),
            ev(MSG, Intent::Published, "order-placed"),
            ev(
                ValueType::MessageStartEventSubscription,
                Intent::Correlated,
                "start"
            ),
            ev(PE, Intent::Triggering, "start"),
            cmd(PI, Intent::ActivateElement, "fulfil"),
            ev(MSG, Intent::Expired, "order-placed"),
            ev(PI, Intent::ElementActivating, "fulfil"),
            ev(PI, Intent::ElementActivated, "fulfil"),
        ]
    );
    // as in Zeebe: the start event is activated at once, the message's variables are its
    // local variables and leave it when it completes
    assert_eq!(
        s[8..13].to_vec(),
        vec![
            ev(PE, Intent::Triggered, "start"),
            ev(PI, Intent::ElementActivating, "start"),
            ev(PI, Intent::ElementActivated, "start"),
            ev(ValueType::Variable, Intent::Created, "orderId"),
            cmd(PI, Intent::CompleteElement, "start"),
        ]
    );
    assert_eq!(b.count(ValueType::Job, Intent::Created), 1);
    let pi_key = h.instance_of("fulfil").key;
    assert_eq!(h.variables(pi_key).get("orderId"), Some(&json!("o-1")));
    h.settle();

    // each message starts another instance (no correlation key: no lock)
    let b = h.publish("order-placed", "", 0, "", "{}");
    assert_eq!(b.count(ValueType::Job, Intent::Created), 1);
    h.settle();
}

#[test]
fn a_new_version_replaces_the_message_start_subscription() {
    let mut h = Harness::new();
    let v1 = h.deploy_ok(&start_process("fulfil", ""));
    let b = h.deploy("p.bpmn", &start_process("fulfil", "2"));
    let deleted = b.find(ValueType::MessageStartEventSubscription, Intent::Deleted);
    assert_eq!(deleted.len(), 1);
    let RecordValue::MessageStartEventSubscription(d) = &deleted[0].value else {
        unreachable!()
    };
    assert_eq!(d.process_definition_key, v1);
    assert_eq!(
        b.count(ValueType::MessageStartEventSubscription, Intent::Created),
        1
    );
    let started = h.publish("order-placed", "", 0, "", "{}");
    let RecordValue::MessageStartEventSubscription(c) =
        &started.find(ValueType::MessageStartEventSubscription, Intent::Correlated)[0].value
    else {
        unreachable!()
    };
    assert_eq!(c.start_event_id, "start2", "only the latest version starts");
    // a duplicate deployment changes nothing
    let dup = h.deploy("p.bpmn", &start_process("fulfil", "2"));
    assert_eq!(
        dup.count(ValueType::MessageStartEventSubscription, Intent::Created),
        0
    );
    h.settle();
}

#[test]
fn one_instance_per_correlation_key_at_a_time_and_buffered_messages_start_the_next() {
    let mut h = Harness::new();
    h.deploy_ok(&start_process("fulfil", ""));
    let first = h.publish("order-placed", "customer-1", 60_000, "", r#"{"n":1}"#);
    assert_eq!(first.count(PI, Intent::ElementActivated), 3);
    // the same key waits while the instance runs; another key starts at once
    let second = h.publish("order-placed", "customer-1", 60_000, "", r#"{"n":2}"#);
    assert_eq!(second.count(PI, Intent::ElementActivating), 0);
    let other = h.publish("order-placed", "customer-2", 60_000, "", r#"{"n":3}"#);
    assert_eq!(other.count(PI, Intent::ElementActivating), 3);
    h.settle();

    // finish the first instance: the buffered message starts the next one in the same batch
    let jobs = h.activate("work", 10);
    let (job_key, _) = jobs
        .iter()
        .find(|(_, j)| h.variables(j.process_instance_key).get("n") == Some(&json!(1)))
        .cloned()
        .unwrap();
    let done = h.complete(job_key, "{}");
    assert_eq!(
        done.count(ValueType::MessageStartEventSubscription, Intent::Correlated),
        1
    );
    let started = done.find(PI, Intent::ElementActivated);
    let RecordValue::ProcessInstance(p) = &started.last().unwrap().value else {
        unreachable!()
    };
    assert_eq!(
        h.variables(p.process_instance_key).get("n"),
        Some(&json!(2))
    );
    h.settle();
    // the message that already started an instance never starts another
    let jobs = h.activate("work", 10);
    for (k, _) in jobs {
        let b = h.complete(k, "{}");
        assert_eq!(
            b.count(ValueType::MessageStartEventSubscription, Intent::Correlated),
            0
        );
    }
    h.settle();
}

#[test]
fn message_throw_and_end_events_are_job_workers() {
    let mut h = Harness::new();
    let xml = defs(
        "notify",
        r#"    <bpmn:startEvent id="start" />
    <bpmn:intermediateThrowEvent id="throw">
      <bpmn:extensionElements><zeebe:taskDefinition type="send-mail" /></bpmn:extensionElements>
      <bpmn:messageEventDefinition messageRef="m" />
    </bpmn:intermediateThrowEvent>
    <bpmn:endEvent id="end">
      <bpmn:extensionElements><zeebe:taskDefinition type="send-sms" /></bpmn:extensionElements>
      <bpmn:messageEventDefinition messageRef="m" />
    </bpmn:endEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="throw" />
    <bpmn:sequenceFlow id="f2" sourceRef="throw" targetRef="end" />"#,
        r#"  <bpmn:message id="m" name="note" />"#,
    );
    h.deploy_ok(&xml);
    let pi_key = h.create_ok("notify", "{}");
    let (k, _) = h.activate_one("send-mail");
    h.complete(k, "{}");
    let (k, _) = h.activate_one("send-sms");
    let b = h.complete(k, "{}");
    assert!(b
        .pi_events()
        .contains(&(Intent::ElementCompleted, "notify".to_string())));
    assert!(h.element_instance(pi_key).is_none());
    h.settle();
    h.assert_no_runtime_state();
}

#[test]
fn the_workload_msg_one_task_starts_by_message() {
    let Ok(xml) = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/workloads/msg_one_task.bpmn"
    )) else {
        eprintln!("shared workloads not found; skipped");
        return;
    };
    let mut h = Harness::new();
    h.deploy_ok(&xml);
    let b = h.publish("msg", "a3c4", 0, "", r#"{"x":1}"#);
    assert_eq!(b.count(ValueType::Job, Intent::Created), 1);
    let (k, _) = h.activate_one("benchmark-task");
    h.complete(k, "{}");
    h.settle();
    h.assert_no_runtime_state();
}

/// MESSAGE_CORRELATION CORRELATE with `variables`.
fn correlate(h: &mut Harness, name: &str, correlation_key: &str) -> Batch {
    h.client(
        -1,
        Intent::Correlate,
        RecordValue::MessageCorrelation(zest_protocol::MessageCorrelationRecord {
            name: name.into(),
            correlation_key: correlation_key.into(),
            variables: r#"{"paid":true}"#.into(),
            ..Default::default()
        }),
    )
}

#[test]
fn a_correlated_message_reaches_a_waiting_instance_now_or_is_rejected_and_never_buffered() {
    let mut h = Harness::new();
    h.deploy_ok(&catch_process("order"));
    let instance = h.create_ok("order", r#"{"orderId":"o-1"}"#);
    let b = correlate(&mut h, "paid", "o-1");
    let RecordValue::MessageCorrelation(c) = &b.accepted().value else {
        unreachable!("{:?}", b.accepted())
    };
    assert_eq!(c.process_instance_key, instance);
    assert_eq!(c.message_key, b.accepted().key);
    assert_eq!(b.count(PMS, Intent::Correlated), 1);
    h.settle();
    // nothing waits any more: NOT_FOUND, and the message is not kept for the next instance
    let reason = correlate(&mut h, "paid", "o-1").rejection(RejectionType::NotFound);
    assert_eq!(
        reason,
        "Expected to find subscription for message with name 'paid' and correlation key 'o-1', but none was found."
    );
    let late = h.create("order", r#"{"orderId":"o-1"}"#);
    assert_eq!(late.count(PMS, Intent::Correlated), 0);
    let reason = correlate(&mut h, "", "o-1").rejection(RejectionType::InvalidArgument);
    assert!(reason.contains("name"), "{reason}");
}
