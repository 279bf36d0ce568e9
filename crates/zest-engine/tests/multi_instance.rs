//! Multi-instance activities: what users see besides the record order (which tests/anchor.rs
//! checks against Zeebe for parallel and sequential tasks, sub-processes, completion
//! conditions, empty collections, boundary events and cancellation).

mod support;

use serde_json::json;
use support::*;
use zest_protocol::{ErrorType, Intent, ValueType};

/// The variables the jobs of `job_type` carry, by item (inputElement `item`).
fn job_items(h: &mut Harness, job_type: &str) -> Vec<(i64, serde_json::Value)> {
    h.activate(job_type, 100)
        .into_iter()
        .map(|(key, job)| {
            let vars: serde_json::Value = serde_json::from_str(&job.variables).unwrap();
            (key, vars)
        })
        .collect()
}

#[test]
fn parallel_instances_see_their_own_item_and_collect_outputs_in_item_order() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("mi_parallel.bpmn"));
    let pik = h.create_ok("mi_parallel", r#"{"items":[5,6,7]}"#);
    let jobs = job_items(&mut h, "work");
    assert_eq!(jobs.len(), 3, "one job per item");
    let seen: Vec<(i64, i64)> = jobs
        .iter()
        .map(|(_, v)| {
            (
                v["item"].as_i64().unwrap(),
                v["loopCounter"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, vec![(5, 1), (6, 2), (7, 3)]);
    // the item and loop counter are local to each inner instance
    let root = h.variables(pik);
    assert!(!root.contains_key("item") && !root.contains_key("loopCounter"));
    // complete out of order: each output lands at its item's index
    for &(key, _) in jobs.iter().rev() {
        h.complete(key, "").accepted();
        h.settle();
    }
    assert!(h.element_instance(pik).is_none(), "the instance completed");
    let out = h.log.iter().rev().find_map(|r| match &r.value {
        zest_protocol::RecordValue::Variable(v) if v.name == "results" && v.scope_key == pik => {
            Some(serde_json::from_str::<serde_json::Value>(&v.value).unwrap())
        }
        _ => None,
    });
    assert_eq!(out, Some(json!([51, 62, 73])));
    h.assert_no_runtime_state();
}

#[test]
fn a_sequential_body_stops_when_its_completion_condition_holds() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("mi_sequential.bpmn"));
    let b = h.create("mi_sequential", "");
    b.accepted();
    // four items, but the condition holds after three
    let scripts = h
        .log
        .iter()
        .filter(|r| {
            r.intent == Intent::ElementCompleted
                && matches!(&r.value, zest_protocol::RecordValue::ProcessInstance(p)
                    if p.bpmn_element_type == zest_protocol::BpmnElementType::ScriptTask)
        })
        .count();
    assert_eq!(scripts, 3);
    let created_out: Vec<String> = h
        .log
        .iter()
        .filter_map(|r| match &r.value {
            zest_protocol::RecordValue::Variable(v) if v.name == "out" => Some(v.value.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(created_out.last().map(String::as_str), Some("[2,4,6,null]"));
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn an_input_collection_that_is_not_a_list_raises_an_incident_until_it_is_fixed() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("mi_parallel.bpmn"));
    let pik = h.create_ok("mi_parallel", r#"{"items":"nope"}"#);
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    let (incident_key, incident) = &incidents[0];
    assert_eq!(incident.record.error_type, ErrorType::ExtractValueError);
    assert_eq!(
        incident.record.error_message,
        "Expected result of the expression 'items' to be 'ARRAY', but was 'STRING'."
    );
    h.set_variables(pik, r#"{"items":[1,2]}"#, false).accepted();
    h.resolve(*incident_key).accepted();
    let jobs = job_items(&mut h, "work");
    assert_eq!(
        jobs.len(),
        2,
        "the body started once the collection was a list"
    );
    for (key, _) in jobs {
        h.complete(key, "").accepted();
    }
    assert!(h.element_instance(pik).is_none());
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn an_error_thrown_in_one_inner_instance_is_caught_on_the_body_and_ends_the_others() {
    let mut h = Harness::new();
    let xml = anchor_model("mi_parallel.bpmn")
        .replace(
            r#"<bpmn:sequenceFlow id="f2""#,
            r#"<bpmn:boundaryEvent id="failed" attachedToRef="task">
      <bpmn:errorEventDefinition errorRef="err" />
    </bpmn:boundaryEvent>
    <bpmn:sequenceFlow id="f3" sourceRef="failed" targetRef="handled" />
    <bpmn:endEvent id="handled" />
    <bpmn:sequenceFlow id="f2""#,
        )
        .replace(
            "</bpmn:process>",
            r#"</bpmn:process>
  <bpmn:error id="err" errorCode="BAD" />"#,
        );
    h.deploy_ok(&xml);
    let pik = h.create_ok("mi_parallel", r#"{"items":[1,2,3]}"#);
    let jobs = job_items(&mut h, "work");
    let b = h.throw_error(jobs[1].0, "BAD", "item 2 failed");
    b.accepted();
    // the two other jobs are canceled with their inner instances, then the body is terminated
    assert_eq!(b.count(ValueType::Job, Intent::Canceled), 2);
    let pis = b.pi_events();
    let body_terminated = pis
        .iter()
        .position(|(i, id)| *i == Intent::ElementTerminated && id == "task")
        .expect("the body is terminated");
    let handled = pis
        .iter()
        .position(|(i, id)| *i == Intent::ElementCompleted && id == "handled")
        .expect("the error path ran");
    assert!(body_terminated < handled);
    assert!(h.element_instance(pik).is_none());
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn a_multi_instance_sub_process_gives_each_child_its_item() {
    let mut h = Harness::new();
    let xml = anchor_model("mi_subprocess.bpmn");
    h.deploy_ok(&xml);
    let pik = h.create_ok("mi_subprocess", "");
    // each inner sub-process waits for the message keyed by its own label
    for label in ["a1", "b2", "c3"] {
        assert!(
            h.log.iter().any(|r| matches!(&r.value,
                zest_protocol::RecordValue::ProcessMessageSubscription(s) if s.correlation_key == label)),
            "a subscription for {label}"
        );
    }
    // numberOfCompletedInstances >= 1: the first message ends the body
    h.publish("go", "c3", 0, "", r#"{"winner":"c"}"#);
    assert!(h.element_instance(pik).is_none());
    assert_eq!(
        h.log
            .iter()
            .filter(|r| r.intent == Intent::ElementTerminated)
            .count(),
        4,
        "two inner sub-processes, each with its catch event"
    );
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn a_completion_condition_that_is_not_boolean_raises_an_incident() {
    let mut h = Harness::new();
    let xml = anchor_model("mi_sequential.bpmn")
        .replace("=numberOfCompletedInstances &gt;= 3", "=\"yes\"");
    h.deploy_ok(&xml);
    h.create_ok("mi_sequential", "");
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    let msg = &incidents[0].1.record.error_message;
    assert!(msg.contains("to be 'BOOLEAN', but was 'STRING'"), "{msg}");
    h.settle();
}

/// Modification inside a parallel multi-instance sub-process: the ancestor chooses the inner
/// instance (the body alone does not), and the element runs there with that item.
#[test]
fn modification_activates_inside_the_inner_instance_its_ancestor_names() {
    use zest_protocol::{
        ActivateInstruction, ProcessInstanceModificationRecord, RecordValue, RejectionType,
    };
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("modify_mi.bpmn"));
    let pik = h.create_ok("modify_mi", "");
    let instances = h.element_instances();
    let body = instances
        .iter()
        .find(|e| e.record.element_id == "sub" && e.parent_key == pik)
        .expect("the body");
    let mut inner: Vec<i64> = instances
        .iter()
        .filter(|e| e.record.element_id == "sub" && e.parent_key == body.key)
        .map(|e| e.key)
        .collect();
    inner.sort();
    assert_eq!(inner.len(), 2);
    let modify = |h: &mut Harness, ancestor: i64| {
        h.client(
            -1,
            zest_protocol::Intent::Modify,
            RecordValue::ProcessInstanceModification(ProcessInstanceModificationRecord {
                process_instance_key: pik,
                activate_instructions: vec![ActivateInstruction {
                    element_id: "b".into(),
                    ancestor_scope_key: ancestor,
                    variable_instructions: Vec::new(),
                }],
                ..Default::default()
            }),
        )
    };
    let reason = modify(&mut h, body.key).rejection(RejectionType::InvalidArgument);
    assert!(
        reason.contains("more than one active instance: 'sub'"),
        "{reason}"
    );
    modify(&mut h, inner[1]).accepted();
    let b = h.instance_of("b");
    assert_eq!(b.parent_key, inner[1]);
    let (_, job) = h.activate_one("mi-b");
    assert_eq!(job.variables, r#"{"item":2,"loopCounter":2}"#);
    h.assert_state_consistent();
}

/// A sequential body reads its input collection again for each item: a collection changed
/// while it runs gives the next items from the new list (Zeebe's behaviour), also when the
/// engine kept the earlier evaluation.
#[test]
fn a_sequential_body_follows_its_input_collection_when_it_changes() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">
  <bpmn:process id="seq" isExecutable="true">
    <bpmn:startEvent id="s" />
    <bpmn:serviceTask id="t">
      <bpmn:extensionElements><zeebe:taskDefinition type="work" /></bpmn:extensionElements>
      <bpmn:multiInstanceLoopCharacteristics isSequential="true">
        <bpmn:extensionElements><zeebe:loopCharacteristics inputCollection="=items" inputElement="item" /></bpmn:extensionElements>
      </bpmn:multiInstanceLoopCharacteristics>
    </bpmn:serviceTask>
    <bpmn:endEvent id="e" />
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t" />
    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e" />
  </bpmn:process>
</bpmn:definitions>"#;
    let mut h = Harness::new();
    h.deploy_ok(xml);
    let pik = h.create_ok("seq", r#"{"items":[1,2]}"#);
    let mut seen = Vec::new();
    for round in 0..4 {
        let jobs = job_items(&mut h, "work");
        if jobs.is_empty() {
            break;
        }
        assert_eq!(jobs.len(), 1, "one item at a time");
        seen.push(jobs[0].1["item"].as_i64().unwrap());
        if round == 0 {
            // the list grows while the body runs
            h.set_variables(pik, r#"{"items":[1,20,30]}"#, false)
                .accepted();
        }
        h.complete(jobs[0].0, "").accepted();
    }
    assert_eq!(seen, vec![1, 20, 30]);
    assert!(h.element_instance(pik).is_none(), "the instance completed");
    h.settle();
}
