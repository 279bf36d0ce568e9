//! Models and helpers shared by the engine's behaviour tests (behaviour.rs,
//! jobs_and_commands.rs, engine_properties.rs).

use super::*;
use zest_protocol::{Intent, ProcessInstanceCreationRecord, RecordValue, RejectionType, ValueType};

use Intent::*;

pub const ONE_TASK: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="Definitions_19exoz2" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="benchmark" name="One task process" isExecutable="true">
    <bpmn:startEvent id="start" name="start">
      <bpmn:outgoing>SequenceFlow_0xll35j</bpmn:outgoing>
    </bpmn:startEvent>
    <bpmn:serviceTask id="task" name="task">
      <bpmn:extensionElements>
        <zeebe:taskDefinition type="benchmark-task" />
      </bpmn:extensionElements>
      <bpmn:incoming>SequenceFlow_0xll35j</bpmn:incoming>
      <bpmn:outgoing>SequenceFlow_1wkb5x5</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="SequenceFlow_0xll35j" sourceRef="start" targetRef="task" />
    <bpmn:endEvent id="end" name="end">
      <bpmn:incoming>SequenceFlow_1wkb5x5</bpmn:incoming>
    </bpmn:endEvent>
    <bpmn:sequenceFlow id="SequenceFlow_1wkb5x5" sourceRef="task" targetRef="end" />
  </bpmn:process>
</bpmn:definitions>
"#;

pub const JOB_TYPE: &str = "benchmark-task";

/// A harness with the one-task process deployed.
pub fn deployed_one_task() -> Harness {
    let mut h = Harness::new();
    h.deploy_ok(ONE_TASK);
    h
}

pub fn ev(vt: ValueType, intent: Intent, label: &str) -> (ValueType, Intent, String) {
    (vt, intent, label.to_string())
}

pub fn job_vars(job: &zest_protocol::JobRecord) -> serde_json::Value {
    json(&job.variables)
}

pub fn incident_of(b: &Batch) -> (i64, zest_protocol::IncidentRecord) {
    let created = b.find(ValueType::Incident, Created);
    assert_eq!(
        created.len(),
        1,
        "expected one incident in {:?}",
        b.events()
    );
    let RecordValue::Incident(i) = &created[0].value else {
        unreachable!()
    };
    (created[0].key, i.clone())
}

pub fn typical_payload_without_var2() -> Option<(String, String)> {
    let xml = workload("typical_process.bpmn")?;
    let payload = workload("typical_payload.json")?;
    let mut v = json(&payload);
    v.as_object_mut().unwrap().remove("var2");
    Some((xml, v.to_string()))
}

/// Activates one job of the benchmark type, completes it, and returns the element id.
pub fn work_one(h: &mut Harness) -> (String, Batch) {
    let (key, job) = h.activate_one(JOB_TYPE);
    let b = h.complete(key, "");
    b.accepted();
    (job.element_id, b)
}

pub fn xor_with_default() -> String {
    process(
        "xor",
        &[
            start_event("s"),
            exclusive_gateway_with_default("gw", "toB"),
            service_task("taskA", "a", ""),
            service_task("taskB", "b", ""),
            end_event("endA"),
            end_event("endB"),
            flow("f0", "s", "gw"),
            cond_flow("toA", "gw", "taskA", "= x &gt; 10"),
            flow("toB", "gw", "taskB"),
            flow("fa", "taskA", "endA"),
            flow("fb", "taskB", "endB"),
        ],
    )
}

pub fn parallel_process() -> String {
    process(
        "par",
        &[
            start_event("s"),
            parallel_gateway("fork"),
            service_task("p1", "p1", ""),
            service_task("p2", "p2", ""),
            parallel_gateway("join"),
            end_event("e"),
            flow("f0", "s", "fork"),
            flow("f1", "fork", "p1"),
            flow("f2", "fork", "p2"),
            flow("j1", "p1", "join"),
            flow("j2", "p2", "join"),
            flow("fe", "join", "e"),
        ],
    )
}

pub fn job_key_of(h: &Harness, element_instance_key: i64) -> i64 {
    h.element_instance(element_instance_key).unwrap().job_key
}

/// Runs `f` and asserts the state did not change and the log got exactly [command, rejection].
pub fn assert_rejected(
    h: &mut Harness,
    kind: RejectionType,
    f: impl FnOnce(&mut Harness) -> Batch,
) -> String {
    let before = h.state.map.clone();
    let log_len = h.log.len();
    let b = f(h);
    let reason = b.rejection(kind);
    assert_eq!(h.state.map, before, "a rejected command changed state");
    assert_eq!(h.log.len(), log_len + 2);
    assert_eq!(
        h.log[log_len + 1].source_record_position,
        h.log[log_len].position as i64
    );
    assert!(!reason.is_empty());
    reason
}

pub fn create_awaiting(h: &mut Harness, process_id: &str, vars: &str, fetch: &[&str]) -> Batch {
    h.client(
        -1,
        CreateWithAwaitingResult,
        RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
            bpmn_process_id: process_id.into(),
            version: -1,
            process_definition_key: -1,
            variables: vars.into(),
            fetch_variables: fetch.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }),
    )
}

pub fn creation(process_id: &str, vars: &str) -> RecordValue {
    RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
        bpmn_process_id: process_id.into(),
        version: -1,
        process_definition_key: -1,
        variables: vars.into(),
        ..Default::default()
    })
}

pub fn activation(job_type: &str, max: i32) -> RecordValue {
    RecordValue::JobBatch(zest_protocol::JobBatchRecord {
        job_type: job_type.into(),
        worker: "w".into(),
        timeout: 10_000,
        max_jobs_to_activate: max,
        ..Default::default()
    })
}
