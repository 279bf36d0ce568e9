//! Embedded sub-processes: a scope with its own start event, local variables and tokens.

mod support;

use serde_json::json;
use support::*;
use zest_protocol::{Intent, ValueType};

/// start -> sub( sub_start -> inner (job "inner") -> sub_end ) -> end, with an input mapping
/// `local` on the sub-process and an output mapping `result`.
fn model() -> String {
    process(
        "p",
        &[
            start_event("start"),
            r#"    <bpmn:subProcess id="sub">
      <bpmn:extensionElements>
        <zeebe:ioMapping>
          <zeebe:input source="=x + 1" target="local" />
          <zeebe:output source="=local * 10" target="result" />
        </zeebe:ioMapping>
      </bpmn:extensionElements>
      <bpmn:startEvent id="sub_start" />
      <bpmn:serviceTask id="inner">
        <bpmn:extensionElements><zeebe:taskDefinition type="inner" /></bpmn:extensionElements>
      </bpmn:serviceTask>
      <bpmn:endEvent id="sub_end" />
      <bpmn:sequenceFlow id="s1" sourceRef="sub_start" targetRef="inner" />
      <bpmn:sequenceFlow id="s2" sourceRef="inner" targetRef="sub_end" />
    </bpmn:subProcess>"#
                .to_string(),
            end_event("end"),
            flow("f1", "start", "sub"),
            flow("f2", "sub", "end"),
        ],
    )
}

#[test]
fn sub_process_runs_its_own_flow_in_zeebe_order_with_scoped_variables() {
    let mut h = Harness::new();
    h.deploy_ok(&model());
    let created = h.create("p", r#"{"x":1}"#);
    assert_eq!(
        created.pi_events(),
        pi(&[
            (Intent::ElementActivating, "p"),
            (Intent::ElementActivated, "p"),
            (Intent::ElementActivating, "start"),
            (Intent::ElementActivated, "start"),
            (Intent::ElementCompleting, "start"),
            (Intent::ElementCompleted, "start"),
            (Intent::SequenceFlowTaken, "f1"),
            (Intent::ElementActivating, "sub"),
            (Intent::ElementActivated, "sub"),
            (Intent::ElementActivating, "sub_start"),
            (Intent::ElementActivated, "sub_start"),
            (Intent::ElementCompleting, "sub_start"),
            (Intent::ElementCompleted, "sub_start"),
            (Intent::SequenceFlowTaken, "s1"),
            (Intent::ElementActivating, "inner"),
            (Intent::ElementActivated, "inner"),
        ])
    );
    let sub = h.instance_of("sub");
    let inner = h.instance_of("inner");
    assert_eq!(
        inner.parent_key, sub.key,
        "the task lives in the sub-process scope"
    );
    assert_eq!(h.variables(sub.key).get("local"), Some(&json!(2)));
    h.assert_state_consistent();

    // the job sees the sub-process's local variable; its completion variables propagate to the
    // process (or update `local` where it lives)
    let (job_key, job) = h.activate_one("inner");
    assert_eq!(job.element_id, "inner");
    let done = h.complete(job_key, r#"{"local":5,"fromJob":true}"#);
    assert_eq!(
        done.pi_events(),
        pi(&[
            (Intent::ElementCompleting, "inner"),
            (Intent::ElementCompleted, "inner"),
            (Intent::SequenceFlowTaken, "s2"),
            (Intent::ElementActivating, "sub_end"),
            (Intent::ElementActivated, "sub_end"),
            (Intent::ElementCompleting, "sub_end"),
            (Intent::ElementCompleted, "sub_end"),
            (Intent::ElementCompleting, "sub"),
            (Intent::ElementCompleted, "sub"),
            (Intent::SequenceFlowTaken, "f2"),
            (Intent::ElementActivating, "end"),
            (Intent::ElementActivated, "end"),
            (Intent::ElementCompleting, "end"),
            (Intent::ElementCompleted, "end"),
            (Intent::ElementCompleting, "p"),
            (Intent::ElementCompleted, "p"),
        ])
    );
    // `local` was updated in the sub-process scope (5) and its output mapping gives 50; the
    // local variable itself does not leave the sub-process
    let vars: Vec<(String, String)> = done
        .find(ValueType::Variable, Intent::Created)
        .iter()
        .map(|r| match &r.value {
            zest_protocol::RecordValue::Variable(v) => (v.name.clone(), v.value.clone()),
            _ => unreachable!(),
        })
        .collect();
    assert!(
        vars.contains(&("fromJob".into(), "true".into())),
        "{vars:?}"
    );
    assert!(vars.contains(&("result".into(), "50".into())), "{vars:?}");
    assert!(!vars.iter().any(|(n, _)| n == "local"), "{vars:?}");
    h.assert_state_consistent();
    h.assert_replay_matches();
    h.assert_no_runtime_state();
}

#[test]
fn canceling_terminates_the_sub_process_and_its_children() {
    let mut h = Harness::new();
    h.deploy_ok(&model());
    let pi_key = h.create_ok("p", r#"{"x":1}"#);
    let canceled = h.cancel(pi_key);
    assert_eq!(
        canceled.pi_events(),
        pi(&[
            (Intent::ElementTerminating, "p"),
            (Intent::ElementTerminating, "sub"),
            (Intent::ElementTerminating, "inner"),
            (Intent::ElementTerminated, "inner"),
            (Intent::ElementTerminated, "sub"),
            (Intent::ElementTerminated, "p"),
        ])
    );
    assert_eq!(canceled.count(ValueType::Job, Intent::Canceled), 1);
    h.assert_replay_matches();
    h.assert_no_runtime_state();
}

#[test]
fn nested_sub_processes_and_parallel_branches_complete_once_every_token_is_done() {
    let mut h = Harness::new();
    let xml = process(
        "nested",
        &[
            start_event("start"),
            r#"    <bpmn:subProcess id="outer">
      <bpmn:startEvent id="o_start" />
      <bpmn:parallelGateway id="fork" />
      <bpmn:subProcess id="deep">
        <bpmn:startEvent id="d_start" />
        <bpmn:serviceTask id="a"><bpmn:extensionElements><zeebe:taskDefinition type="a" /></bpmn:extensionElements></bpmn:serviceTask>
        <bpmn:sequenceFlow id="d1" sourceRef="d_start" targetRef="a" />
      </bpmn:subProcess>
      <bpmn:serviceTask id="b"><bpmn:extensionElements><zeebe:taskDefinition type="b" /></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:sequenceFlow id="o1" sourceRef="o_start" targetRef="fork" />
      <bpmn:sequenceFlow id="o2" sourceRef="fork" targetRef="deep" />
      <bpmn:sequenceFlow id="o3" sourceRef="fork" targetRef="b" />
    </bpmn:subProcess>"#
                .to_string(),
            end_event("end"),
            flow("f1", "start", "outer"),
            flow("f2", "outer", "end"),
        ],
    );
    h.deploy_ok(&xml);
    let pi_key = h.create_ok("nested", "{}");
    let (a, _) = h.activate_one("a");
    let done_a = h.complete(a, r#"{"a":1}"#);
    // `deep` ends (no outgoing flow, no token left); `outer` still waits for `b`
    assert!(done_a
        .pi_events()
        .contains(&(Intent::ElementCompleted, "deep".to_string())));
    assert!(!done_a
        .pi_events()
        .contains(&(Intent::ElementCompleted, "outer".to_string())));
    h.assert_state_consistent();
    let (b, _) = h.activate_one("b");
    let done_b = h.complete(b, r#"{"b":2}"#);
    assert!(done_b
        .pi_events()
        .contains(&(Intent::ElementCompleted, "nested".to_string())));
    assert!(h.element_instance(pi_key).is_none());
    h.assert_replay_matches();
    h.assert_no_runtime_state();
}
