//! Behaviour tests of the deterministic engine, driven like the broker drives it (see
//! `support::Harness`): every batch is processed, its txn writes dropped, and the committed
//! records applied by a second engine; processing and applying must write the same state.

mod support;

use serde_json::json;
use support::*;
use zest_engine::state::{key_i64, Ks, MemState, StateRead};
use zest_engine::types::{FailedStep, JobState};
use zest_protocol::{
    encode_key, partition_of_key, BpmnElementType, ErrorType, Intent,
    ProcessInstanceCreationRecord, Record, RecordType, RecordValue, RejectionType, ValueType,
};

use Intent::*;

const ONE_TASK: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
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

const JOB_TYPE: &str = "benchmark-task";

/// A harness with the one-task process deployed.
fn one_task() -> Harness {
    let mut h = Harness::new();
    h.deploy_ok(ONE_TASK);
    h
}

fn ev(vt: ValueType, intent: Intent, label: &str) -> (ValueType, Intent, String) {
    (vt, intent, label.to_string())
}

fn job_vars(job: &zest_protocol::JobRecord) -> serde_json::Value {
    json(&job.variables)
}

fn incident_of(b: &Batch) -> (i64, zest_protocol::IncidentRecord) {
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

// =============================================================================================
// 1. one task, end to end

#[test]
fn one_task_process_runs_end_to_end_with_zeebe_record_stream() {
    let mut h = Harness::new();

    // deploy
    let d = h.deploy("one_task.bpmn", ONE_TASK);
    let resp = d.accepted();
    assert_eq!(resp.value_type, ValueType::Deployment);
    assert_eq!(resp.intent, Created);
    let RecordValue::DeploymentResponse(dep) = &resp.value else {
        unreachable!()
    };
    assert_eq!(dep.processes_metadata.len(), 1);
    let meta = &dep.processes_metadata[0];
    assert_eq!(meta.bpmn_process_id, "benchmark");
    assert_eq!(meta.version, 1);
    assert!(!meta.duplicate);
    assert_eq!(meta.resource_name, "one_task.bpmn");
    let pdk = meta.process_definition_key;
    assert_eq!(partition_of_key(pdk), 1);
    assert_eq!(
        d.events(),
        vec![
            ev(ValueType::Process, Created, "benchmark"),
            ev(ValueType::Deployment, Created, "")
        ]
    );

    // create
    let c = h.create("benchmark", "");
    let resp = c.accepted().clone();
    assert_eq!(resp.value_type, ValueType::ProcessInstanceCreation);
    assert_eq!(resp.intent, Created);
    let RecordValue::ProcessInstanceCreation(created) = &resp.value else {
        unreachable!()
    };
    let pi_key = created.process_instance_key;
    assert_eq!(resp.key, pi_key);
    assert_eq!(created.bpmn_process_id, "benchmark");
    assert_eq!(created.version, 1);
    assert_eq!(created.process_definition_key, pdk);
    assert_eq!(partition_of_key(pi_key), 1);
    assert!(pi_key > encode_key(1, 0));

    // the whole log entry, commands included
    let full: Vec<(RecordType, ValueType, Intent, String)> = c
        .records
        .iter()
        .map(|r| (r.record_type, r.value_type, r.intent, label(r)))
        .collect();
    use RecordType::{Command as C, Event as E};
    use ValueType::{Job as J, ProcessInstance as P, ProcessInstanceCreation as PC};
    let s = |x: &str| x.to_string();
    assert_eq!(
        full,
        vec![
            (C, PC, Create, s("benchmark")),
            (C, P, ActivateElement, s("benchmark")),
            (E, PC, Created, s("benchmark")),
            (E, P, ElementActivating, s("benchmark")),
            (E, P, ElementActivated, s("benchmark")),
            (C, P, ActivateElement, s("start")),
            (E, P, ElementActivating, s("start")),
            (E, P, ElementActivated, s("start")),
            (C, P, CompleteElement, s("start")),
            (E, P, ElementCompleting, s("start")),
            (E, P, ElementCompleted, s("start")),
            (E, P, SequenceFlowTaken, s("SequenceFlow_0xll35j")),
            (C, P, ActivateElement, s("task")),
            (E, P, ElementActivating, s("task")),
            (E, J, Created, s("task")),
            (E, P, ElementActivated, s("task")),
        ]
    );
    // records of the instance carry its keys; children point at the process as flow scope
    for r in &c.records {
        if let RecordValue::ProcessInstance(p) = &r.value {
            assert_eq!(p.process_instance_key, pi_key);
            assert_eq!(p.process_definition_key, pdk);
            assert_eq!(p.bpmn_process_id, "benchmark");
            assert_eq!(p.version, 1);
            if p.element_id == "benchmark" {
                assert_eq!(r.key, pi_key);
                assert_eq!(p.flow_scope_key, -1);
                assert_eq!(p.bpmn_element_type, BpmnElementType::Process);
            } else {
                assert_eq!(p.flow_scope_key, pi_key);
                assert_ne!(r.key, pi_key);
            }
        }
    }
    let task_key = c
        .records
        .iter()
        .find(|r| r.intent == ElementActivated && label(r) == "task")
        .unwrap()
        .key;
    let start_type = c
        .records
        .iter()
        .find_map(|r| match &r.value {
            RecordValue::ProcessInstance(p) if p.element_id == "start" => Some(p.bpmn_element_type),
            _ => None,
        })
        .unwrap();
    assert_eq!(start_type, BpmnElementType::StartEvent);
    assert_eq!(
        c.side_effects,
        vec![zest_engine::SideEffect::JobsAvailable(JOB_TYPE.into())]
    );

    // state while waiting: process + task instances, one activatable job
    assert_eq!(h.count(Ks::ElementInstances), 2);
    assert_eq!(
        h.element_instance(task_key).unwrap().state,
        ElementActivated
    );
    assert_eq!(h.count(Ks::Jobs), 1);
    assert_eq!(h.count(Ks::JobsActivatable), 1);

    // activate
    h.advance(10);
    let (job_key, job) = h.activate_one(JOB_TYPE);
    assert_eq!(partition_of_key(job_key), 1);
    assert_eq!(job.job_type, JOB_TYPE);
    assert_eq!(job.worker, "test-worker");
    assert_eq!(job.retries, 3);
    assert_eq!(job.timeout, 300_000);
    assert_eq!(job.deadline, h.now + 300_000);
    assert_eq!(job.element_id, "task");
    assert_eq!(job.element_instance_key, task_key);
    assert_eq!(job.process_instance_key, pi_key);
    assert_eq!(job.bpmn_process_id, "benchmark");
    assert_eq!(job.process_definition_version, 1);
    assert_eq!(job.process_definition_key, pdk);
    assert_eq!(job_vars(&job), json!({}));
    assert_eq!(h.job_state(job_key), Some(JobState::Activated));
    assert_eq!(h.count(Ks::JobsActivatable), 0);
    assert_eq!(h.count(Ks::JobDeadlines), 1);
    // nothing else to activate
    assert!(h.activate(JOB_TYPE, 10).is_empty());

    // complete
    let done = h.complete(job_key, "");
    let resp = done.accepted();
    assert_eq!(
        (resp.value_type, resp.intent, resp.key),
        (ValueType::Job, Completed, job_key)
    );
    assert_eq!(
        done.events(),
        vec![
            ev(J, Completed, "task"),
            ev(ValueType::ProcessEvent, Triggering, "task"),
            ev(P, ElementCompleting, "task"),
            ev(ValueType::ProcessEvent, Triggered, "task"),
            ev(P, ElementCompleted, "task"),
            ev(P, SequenceFlowTaken, "SequenceFlow_1wkb5x5"),
            ev(P, ElementActivating, "end"),
            ev(P, ElementActivated, "end"),
            ev(P, ElementCompleting, "end"),
            ev(P, ElementCompleted, "end"),
            ev(P, ElementCompleting, "benchmark"),
            ev(P, ElementCompleted, "benchmark"),
        ]
    );
    let end_type = done
        .records
        .iter()
        .find_map(|r| match &r.value {
            RecordValue::ProcessInstance(p) if p.element_id == "end" => Some(p.bpmn_element_type),
            _ => None,
        })
        .unwrap();
    assert_eq!(end_type, BpmnElementType::EndEvent);

    h.assert_no_runtime_state();
    assert_eq!(h.count(Ks::Processes), 1);
    assert_eq!(h.unused_keys, 0);
    h.assert_replay_matches();
}

#[test]
fn start_to_end_process_completes_in_the_creation_batch() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "direct",
        &[start_event("s"), end_event("e"), flow("f", "s", "e")],
    ));
    let c = h.create("direct", r#"{"x": 1}"#);
    c.accepted();
    assert_eq!(
        c.pi_events(),
        pi(&[
            (ElementActivating, "direct"),
            (ElementActivated, "direct"),
            (ElementActivating, "s"),
            (ElementActivated, "s"),
            (ElementCompleting, "s"),
            (ElementCompleted, "s"),
            (SequenceFlowTaken, "f"),
            (ElementActivating, "e"),
            (ElementActivated, "e"),
            (ElementCompleting, "e"),
            (ElementCompleted, "e"),
            (ElementCompleting, "direct"),
            (ElementCompleted, "direct"),
        ])
    );
    // the creation variables are created before the process is activated
    let evs = c.events();
    let var_pos = evs.iter().position(|e| e.0 == ValueType::Variable).unwrap();
    let act_pos = evs.iter().position(|e| e.1 == ElementActivating).unwrap();
    assert!(var_pos < act_pos);
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

// =============================================================================================
// 2. the benchmark's typical process

fn typical_payload_without_var2() -> Option<(String, String)> {
    let xml = workload("typical_process.bpmn")?;
    let payload = workload("typical_payload.json")?;
    let mut v = json(&payload);
    v.as_object_mut().unwrap().remove("var2");
    Some((xml, v.to_string()))
}

/// Activates one job of the benchmark type, completes it, and returns the element id.
fn work_one(h: &mut Harness) -> (String, Batch) {
    let (key, job) = h.activate_one(JOB_TYPE);
    let b = h.complete(key, "");
    b.accepted();
    (job.element_id, b)
}

#[test]
fn typical_process_takes_yes_path_with_timers_and_completes_after_ten_jobs() {
    let Some(xml) = workload("typical_process.bpmn") else {
        return;
    };
    let Some(payload) = workload("typical_payload.json") else {
        return;
    };
    let mut h = Harness::new();
    h.deploy_ok(&xml);
    let pi_key = h.create_ok("benchmark", &payload);
    // the payload's 30 variables are in the process scope
    let vars = h.variables(pi_key);
    assert_eq!(vars.len(), 30);
    assert_eq!(vars["var2"], json!(true));
    assert_eq!(
        vars["var4"],
        json!({"var4-1": "value4-1", "var4-2": false, "var4-3": 111})
    );

    let mut done = Vec::new();
    let mut last_batch = None;
    for _ in 0..3 {
        let (id, b) = work_one(&mut h);
        done.push(id);
        last_batch = Some(b);
    }
    assert_eq!(done, ["task1", "task2", "task3"]);
    // after task3: the gateway took `yes` and the timer waits
    let b3 = last_batch.take().unwrap();
    assert_eq!(
        b3.pi_events(),
        pi(&[
            (ElementCompleting, "task3"),
            (ElementCompleted, "task3"),
            (SequenceFlowTaken, "SequenceFlow_1fcsq3j"),
            (ElementActivating, "Gateway_09jrxib"),
            (ElementActivated, "Gateway_09jrxib"),
            (ElementCompleting, "Gateway_09jrxib"),
            (ElementCompleted, "Gateway_09jrxib"),
            (SequenceFlowTaken, "Flow_0z2tud8"),
            (ElementActivating, "timer1"),
            (ElementActivated, "timer1"),
        ])
    );
    let timer_pos = b3
        .events()
        .iter()
        .position(|e| e.0 == ValueType::Timer)
        .unwrap();
    assert_eq!(
        b3.events()[timer_pos - 1],
        ev(ValueType::ProcessInstance, ElementActivating, "timer1")
    );
    assert_eq!(
        b3.events()[timer_pos + 1],
        ev(ValueType::ProcessInstance, ElementActivated, "timer1")
    );
    let timers: Vec<&Record> = b3
        .records
        .iter()
        .filter(|r| r.value_type == ValueType::Timer && r.intent == Created)
        .collect();
    assert_eq!(timers.len(), 1);
    let RecordValue::Timer(t) = &timers[0].value else {
        unreachable!()
    };
    let timer1 = h.instance_of("timer1");
    assert_eq!(t.due_date, h.now + 60_000);
    assert_eq!(t.target_element_id, "timer1");
    assert_eq!(t.element_instance_key, timer1.key);
    assert_eq!(t.process_instance_key, pi_key);
    assert_eq!(t.repetitions, 1);
    assert_eq!(timer1.timer_key, timers[0].key);
    assert_eq!(h.count(Ks::TimerDueDates), 1);
    // nothing to do while the timer waits
    assert!(h.activate(JOB_TYPE, 10).is_empty());
    h.advance(59_999);
    assert!(h.run_scheduler().is_empty(), "the timer is not due yet");
    h.advance(1);
    let fired = h.run_scheduler();
    assert_eq!(fired.len(), 1);
    assert_eq!(
        fired[0].events(),
        vec![
            ev(ValueType::Timer, Triggered, "timer1"),
            ev(ValueType::ProcessEvent, Triggering, "timer1"),
            ev(ValueType::ProcessInstance, ElementCompleting, "timer1"),
            ev(ValueType::ProcessEvent, Triggered, "timer1"),
            ev(ValueType::ProcessInstance, ElementCompleted, "timer1"),
            ev(
                ValueType::ProcessInstance,
                SequenceFlowTaken,
                "SequenceFlow_1izpkmf"
            ),
            ev(ValueType::ProcessInstance, ElementActivating, "task4"),
            ev(ValueType::Job, Created, "task4"),
            ev(ValueType::ProcessInstance, ElementActivated, "task4"),
        ]
    );
    assert_eq!(h.count(Ks::Timers), 0);
    assert_eq!(h.count(Ks::TimerDueDates), 0);
    // a second trigger of the same timer is rejected (it no longer exists)
    let again = h.internal(timers[0].key, Trigger, RecordValue::Timer(t.clone()));
    assert_eq!(again.returned[1].record_type, RecordType::CommandRejection);
    assert_eq!(again.returned[1].rejection_type, RejectionType::NotFound);

    for _ in 0..3 {
        let (id, _) = work_one(&mut h);
        done.push(id);
    }
    // timer2
    assert!(h.activate(JOB_TYPE, 10).is_empty());
    assert_eq!(h.instance_of("timer2").state, ElementActivated);
    h.advance(60_000);
    let fired = h.run_scheduler();
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].count(ValueType::Timer, Triggered), 1);
    for _ in 0..4 {
        let (id, b) = work_one(&mut h);
        done.push(id);
        last_batch = Some(b);
    }
    assert_eq!(
        done,
        [
            "task1", "task2", "task3", "task4", "task5", "task6", "task7", "task8", "task9",
            "task10"
        ]
    );
    let tail = last_batch.unwrap().pi_events();
    assert_eq!(
        tail[tail.len() - 2..].to_vec(),
        pi(&[
            (ElementCompleting, "benchmark"),
            (ElementCompleted, "benchmark")
        ])
    );
    assert_eq!(
        h.log
            .iter()
            .filter(|r| r.is_event() && r.value_type == ValueType::Job && r.intent == Created)
            .count(),
        10
    );
    h.assert_no_runtime_state();
    assert_eq!(h.unused_keys, 0);
    h.assert_replay_matches();
}

#[test]
fn typical_process_without_var2_raises_condition_incident_then_takes_no_path() {
    let Some((xml, payload)) = typical_payload_without_var2() else {
        return;
    };
    let mut h = Harness::new();
    h.deploy_ok(&xml);
    let pi_key = h.create_ok("benchmark", &payload);
    work_one(&mut h);
    work_one(&mut h);
    let (_, b) = work_one(&mut h);
    // the gateway stays ACTIVATING with an incident
    let (incident_key, inc) = incident_of(&b);
    assert_eq!(inc.error_type, ErrorType::ConditionError);
    assert_eq!(inc.element_id, "Gateway_09jrxib");
    assert_eq!(inc.process_instance_key, pi_key);
    assert_eq!(inc.bpmn_process_id, "benchmark");
    assert_eq!(inc.job_key, -1);
    let gw = h.instance_of("Gateway_09jrxib");
    assert_eq!(inc.element_instance_key, gw.key);
    assert_eq!(inc.variable_scope_key, gw.key);
    assert_eq!(gw.state, ElementActivating);
    let tail = b.pi_events();
    assert_eq!(
        tail.last().unwrap(),
        &(ElementActivating, "Gateway_09jrxib".to_string())
    );
    assert!(!inc.error_message.is_empty());
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    assert!(matches!(
        incidents[0].1.failed_step,
        FailedStep::ActivateElement
    ));

    // resolving without fixing the cause raises a new incident
    let r = h.resolve(incident_key);
    r.accepted();
    assert_eq!(
        r.events()
            .into_iter()
            .map(|e| (e.0, e.1))
            .collect::<Vec<_>>(),
        vec![
            (ValueType::Incident, Resolved),
            (ValueType::Incident, Created)
        ]
    );
    let (incident_key2, _) = incident_of(&r);
    assert_ne!(incident_key2, incident_key);
    assert_eq!(h.incidents().len(), 1);

    // fix: var2 = false on the process instance, then resolve
    let u = h.set_variables(pi_key, r#"{"var2": false}"#, false);
    u.accepted();
    let mut evs = u.events();
    evs.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(
        evs,
        vec![
            ev(ValueType::Variable, Created, "var2"),
            ev(ValueType::VariableDocument, Updated, ""),
        ]
    );
    assert_eq!(h.variables(pi_key)["var2"], json!(false));
    let r = h.resolve(incident_key2);
    let resp = r.accepted();
    assert_eq!(
        (resp.value_type, resp.intent, resp.key),
        (ValueType::Incident, Resolved, incident_key2)
    );
    assert_eq!(
        r.pi_events(),
        pi(&[
            (ElementActivated, "Gateway_09jrxib"),
            (ElementCompleting, "Gateway_09jrxib"),
            (ElementCompleted, "Gateway_09jrxib"),
            (SequenceFlowTaken, "Flow_11ozwsi"),
            (ElementActivating, "Event_1bcf2he"),
            (ElementActivated, "Event_1bcf2he"),
            (ElementCompleting, "Event_1bcf2he"),
            (ElementCompleted, "Event_1bcf2he"),
            (ElementCompleting, "benchmark"),
            (ElementCompleted, "benchmark"),
        ])
    );
    assert_eq!(
        h.log
            .iter()
            .filter(|r| r.is_event() && r.value_type == ValueType::Job && r.intent == Created)
            .count(),
        3
    );
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

// =============================================================================================
// 3. gateways

fn xor_with_default() -> String {
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

#[test]
fn exclusive_gateway_takes_condition_or_default_flow() {
    let mut h = Harness::new();
    h.deploy_ok(&xor_with_default());

    let c = h.create("xor", r#"{"x": 20}"#);
    c.accepted();
    let evs = c.pi_events();
    let gw_part: Vec<(Intent, String)> = evs
        .iter()
        .skip_while(|e| e.1 != "gw")
        .take(5)
        .cloned()
        .collect();
    assert_eq!(
        gw_part,
        pi(&[
            (ElementActivating, "gw"),
            (ElementActivated, "gw"),
            (ElementCompleting, "gw"),
            (ElementCompleted, "gw"),
            (SequenceFlowTaken, "toA"),
        ])
    );
    assert_eq!(h.activate("a", 10).len(), 1);
    assert!(h.activate("b", 10).is_empty());

    let c = h.create("xor", r#"{"x": 5}"#);
    assert!(c
        .pi_events()
        .contains(&(SequenceFlowTaken, "toB".to_string())));
    assert!(h.activate("a", 10).is_empty());
    let jobs = h.activate("b", 10);
    assert_eq!(jobs.len(), 1);

    // a missing variable makes the condition null, not false: as in Zeebe, an incident
    // (EXTRACT_VALUE_ERROR, with FEEL-scala's warnings), not the default flow
    let c = h.create("xor", "");
    assert!(!c
        .pi_events()
        .contains(&(SequenceFlowTaken, "toB".to_string())));
    assert_eq!(c.count(ValueType::Incident, Created), 1);
    let (_, incident) = h.incidents().pop().unwrap();
    assert_eq!(incident.record.error_type, ErrorType::ExtractValueError);
    assert_eq!(
        incident.record.error_message,
        "Expected result of the expression 'x > 10' to be 'BOOLEAN', but was 'NULL'. \
         The evaluation reported the following warnings:\n\
         [NO_VARIABLE_FOUND] No variable found with name 'x'\n\
         [NOT_COMPARABLE] Can't compare 'null' with '10'"
    );
    assert!(h.activate("b", 10).is_empty());

    // complete the default-path job: the instance ends at endB
    let b = h.complete(jobs[0].0, "");
    assert!(b.pi_events().ends_with(&pi(&[
        (ElementCompleting, "xor"),
        (ElementCompleted, "xor")
    ])));
    assert!(b
        .pi_events()
        .contains(&(ElementCompleted, "endB".to_string())));
    h.assert_replay_matches();
}

fn parallel_process() -> String {
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

#[test]
fn parallel_gateway_forks_two_jobs_and_joins_after_both_complete() {
    let mut h = Harness::new();
    h.deploy_ok(&parallel_process());
    let pi_key = h.create_ok("par", "");
    let created = h
        .log
        .iter()
        .rev()
        .take_while(|r| r.intent != Create)
        .cloned()
        .collect::<Vec<_>>();
    let mut created = created;
    created.reverse();
    let evs = events(&created);
    let fork_part: Vec<_> = evs.iter().skip_while(|e| e.2 != "fork").cloned().collect();
    use ValueType::{Job as J, ProcessInstance as P};
    assert_eq!(
        fork_part,
        vec![
            ev(P, ElementActivating, "fork"),
            ev(P, ElementActivated, "fork"),
            ev(P, ElementCompleting, "fork"),
            ev(P, ElementCompleted, "fork"),
            // Zeebe takes a fork's flows last to first
            ev(P, SequenceFlowTaken, "f2"),
            ev(P, SequenceFlowTaken, "f1"),
            ev(P, ElementActivating, "p2"),
            ev(J, Created, "p2"),
            ev(P, ElementActivated, "p2"),
            ev(P, ElementActivating, "p1"),
            ev(J, Created, "p1"),
            ev(P, ElementActivated, "p1"),
        ]
    );
    let (k1, _) = h.activate_one("p1");
    let (k2, _) = h.activate_one("p2");

    // first branch arrives: the join waits
    let b = h.complete(k1, "");
    assert_eq!(
        b.pi_events(),
        pi(&[
            (ElementCompleting, "p1"),
            (ElementCompleted, "p1"),
            (SequenceFlowTaken, "j1"),
        ])
    );
    let process = h
        .element_instance(pi_key)
        .expect("the process is still active");
    assert_eq!(process.state, ElementActivated);
    assert_eq!(process.active_children, 1);
    assert_eq!(process.join_tokens.len(), 1);

    // second branch arrives: the join activates and the process completes
    let b = h.complete(k2, "");
    assert_eq!(
        b.pi_events(),
        pi(&[
            (ElementCompleting, "p2"),
            (ElementCompleted, "p2"),
            (SequenceFlowTaken, "j2"),
            (ElementActivating, "join"),
            (ElementActivated, "join"),
            (ElementCompleting, "join"),
            (ElementCompleted, "join"),
            (SequenceFlowTaken, "fe"),
            (ElementActivating, "e"),
            (ElementActivated, "e"),
            (ElementCompleting, "e"),
            (ElementCompleted, "e"),
            (ElementCompleting, "par"),
            (ElementCompleted, "par"),
        ])
    );
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn parallel_branches_ending_separately_complete_the_process_once() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "split",
        &[
            start_event("s"),
            parallel_gateway("fork"),
            service_task("p1", "p1", ""),
            service_task("p2", "p2", ""),
            end_event("e1"),
            end_event("e2"),
            flow("f0", "s", "fork"),
            flow("f1", "fork", "p1"),
            flow("f2", "fork", "p2"),
            flow("g1", "p1", "e1"),
            flow("g2", "p2", "e2"),
        ],
    ));
    let pi_key = h.create_ok("split", "");
    let (k1, _) = h.activate_one("p1");
    let (k2, _) = h.activate_one("p2");
    let b = h.complete(k1, "");
    assert!(!b
        .pi_events()
        .contains(&(ElementCompleted, "split".to_string())));
    assert!(h.element_instance(pi_key).is_some());
    let b = h.complete(k2, "");
    assert!(b.pi_events().ends_with(&pi(&[
        (ElementCompleting, "split"),
        (ElementCompleted, "split")
    ])));
    h.assert_no_runtime_state();
}

// =============================================================================================
// 4. variables

fn two_tasks() -> String {
    process(
        "two",
        &[
            start_event("s"),
            service_task("t1", "v1", ""),
            service_task("t2", "v2", ""),
            end_event("e"),
            flow("f0", "s", "t1"),
            flow("f1", "t1", "t2"),
            flow("f2", "t2", "e"),
        ],
    )
}

#[test]
fn creation_variables_reach_jobs_and_fetch_variables_filters_them() {
    let mut h = Harness::new();
    h.deploy_ok(&two_tasks());
    let pi1 = h.create_ok("two", r#"{"a": 1, "b": "x", "c": {"d": [1, 2]}}"#);
    let pi2 = h.create_ok("two", r#"{"a": 2, "b": "y"}"#);
    let vars = h.variables(pi1);
    assert_eq!(vars.len(), 3);
    assert_eq!(vars["c"], json!({"d": [1, 2]}));

    let jobs = h.activate_with("v1", 1, 1000, &["a", "c", "missing"]);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].1.process_instance_key, pi1);
    assert_eq!(job_vars(&jobs[0].1), json!({"a": 1, "c": {"d": [1, 2]}}));

    let jobs2 = h.activate_with("v1", 5, 1000, &[]);
    assert_eq!(jobs2.len(), 1);
    assert_eq!(jobs2[0].1.process_instance_key, pi2);
    assert_eq!(job_vars(&jobs2[0].1), json!({"a": 2, "b": "y"}));

    // the logged JOB_BATCH event does not carry the variables, only the response does
    let logged = h
        .log
        .iter()
        .rev()
        .find(|r| r.value_type == ValueType::JobBatch && r.is_event())
        .unwrap();
    let RecordValue::JobBatch(lb) = &logged.value else {
        unreachable!()
    };
    assert!(lb.jobs.iter().all(|j| j.variables.is_empty()));
}

#[test]
fn job_completion_variables_propagate_to_the_process_scope() {
    let mut h = Harness::new();
    h.deploy_ok(&two_tasks());
    let pi_key = h.create_ok("two", r#"{"a": 1}"#);
    let (k, _) = h.activate_one("v1");
    let b = h.complete(k, r#"{"a": 2, "c": 3}"#);
    b.accepted();
    let var_events: Vec<(Intent, String, i64)> = b
        .records
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::Variable(v) if r.is_event() => {
                Some((r.intent, v.name.clone(), v.scope_key))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        var_events,
        vec![
            (Updated, "a".to_string(), pi_key),
            (Created, "c".to_string(), pi_key)
        ]
    );
    // the variable events come while the task completes, after the job's event trigger is
    // consumed (Zeebe's order)
    let evs = b.events();
    let triggered = evs.iter().position(|e| e.1 == Triggered).unwrap();
    let var = evs.iter().position(|e| e.0 == ValueType::Variable).unwrap();
    let completed = evs.iter().position(|e| e.1 == ElementCompleted).unwrap();
    assert!(triggered < var && var < completed);

    assert_eq!(
        h.variables(pi_key).into_iter().collect::<Vec<_>>(),
        vec![("a".to_string(), json!(2)), ("c".to_string(), json!(3))]
    );
    let (_, job2) = h.activate_one("v2");
    assert_eq!(job_vars(&job2), json!({"a": 2, "c": 3}));
}

#[test]
fn unchanged_variable_value_writes_no_event() {
    let mut h = Harness::new();
    h.deploy_ok(&two_tasks());
    let pi_key = h.create_ok("two", r#"{"a": 1}"#);
    let (k, _) = h.activate_one("v1");
    let b = h.complete(k, r#"{"a": 1}"#);
    assert_eq!(b.count(ValueType::Variable, Updated), 0);
    assert_eq!(b.count(ValueType::Variable, Created), 0);
    assert_eq!(h.variables(pi_key)["a"], json!(1));
}

#[test]
fn later_mappings_see_earlier_targets_like_a_feel_context() {
    let mut h = Harness::new();
    let io = r#"<zeebe:ioMapping>
          <zeebe:input source="=10" target="a" />
          <zeebe:input source="=a + 1" target="b" />
          <zeebe:input source="=b * 2" target="ctx.c" />
          <zeebe:input source="=ctx.c + a" target="d" />
          <zeebe:output source="=d" target="r1" />
          <zeebe:output source="=r1 + 1" target="r2" />
        </zeebe:ioMapping>"#;
    h.deploy_ok(&process(
        "seq",
        &[
            start_event("s"),
            service_task("t", "seq", io),
            service_task("hold", "hold", ""),
            end_event("e"),
            flow("f0", "s", "t"),
            flow("f1", "t", "hold"),
            flow("f2", "hold", "e"),
        ],
    ));
    let pi_key = h.create_ok("seq", r#"{"a": 1}"#);
    let t = h.instance_of("t");
    let local = h.variables(t.key);
    assert_eq!(local["a"], json!(10));
    assert_eq!(local["b"], json!(11));
    assert_eq!(local["ctx"], json!({"c": 22}));
    assert_eq!(local["d"], json!(32));
    assert_eq!(
        h.variables(pi_key)["a"],
        json!(1),
        "the process scope keeps its own a"
    );
    let job = job_key_of(&h, t.key);
    h.complete(job, "").accepted();
    let vars = h.variables(pi_key);
    assert_eq!(vars["r1"], json!(32));
    assert_eq!(vars["r2"], json!(33));
}

#[test]
fn input_mappings_create_local_variables_visible_to_the_job_only() {
    let mut h = Harness::new();
    let io = r#"<zeebe:ioMapping>
          <zeebe:input source="=a + 1" target="local1" />
          <zeebe:input source="=b" target="nested.inner" />
        </zeebe:ioMapping>"#;
    h.deploy_ok(&process(
        "io",
        &[
            start_event("s"),
            service_task("mapped", "io", io),
            service_task("check", "chk", ""),
            end_event("e"),
            flow("f0", "s", "mapped"),
            flow("f1", "mapped", "check"),
            flow("f2", "check", "e"),
        ],
    ));
    let pi_key = h.create_ok("io", r#"{"a": 1, "b": "bee"}"#);
    let created: Vec<Record> = {
        let mut v: Vec<Record> = h
            .log
            .iter()
            .rev()
            .take_while(|r| r.intent != Create)
            .cloned()
            .collect();
        v.reverse();
        v
    };
    let mapped = h.instance_of("mapped");
    // VARIABLE CREATED for the inputs, in the task's scope, after ACTIVATING and before the job
    let evs = events(&created);
    let mapped_activating = evs
        .iter()
        .position(|e| e.1 == ElementActivating && e.2 == "mapped")
        .unwrap();
    let job_created = evs.iter().position(|e| e.0 == ValueType::Job).unwrap();
    let local_vars: Vec<(usize, String, i64)> = created
        .iter()
        .filter(|r| r.is_event())
        .enumerate()
        .filter_map(|(i, r)| match &r.value {
            RecordValue::Variable(v) if v.scope_key == mapped.key => {
                Some((i, v.name.clone(), v.scope_key))
            }
            _ => None,
        })
        .collect();
    assert_eq!(local_vars.len(), 2);
    for (i, _, _) in &local_vars {
        assert!(mapped_activating < *i && *i < job_created);
    }
    assert_eq!(
        h.variables(mapped.key).into_iter().collect::<Vec<_>>(),
        vec![
            ("local1".to_string(), json!(2)),
            ("nested".to_string(), json!({"inner": "bee"}))
        ]
    );
    let (k, job) = h.activate_one("io");
    assert_eq!(
        job_vars(&job),
        json!({"a": 1, "b": "bee", "local1": 2, "nested": {"inner": "bee"}})
    );
    h.complete(k, "").accepted();
    // gone with the task; never in the process scope
    assert!(h.variables(mapped.key).is_empty());
    assert_eq!(
        h.variables(pi_key).keys().cloned().collect::<Vec<_>>(),
        vec!["a".to_string(), "b".to_string()]
    );
    let (_, job2) = h.activate_one("chk");
    assert_eq!(job_vars(&job2), json!({"a": 1, "b": "bee"}));
    h.assert_replay_matches();
}

#[test]
fn output_mappings_write_to_the_process_scope_and_keep_job_variables_local() {
    let mut h = Harness::new();
    let io = r#"<zeebe:ioMapping>
          <zeebe:output source="=result * 2" target="doubled" />
        </zeebe:ioMapping>"#;
    h.deploy_ok(&process(
        "out",
        &[
            start_event("s"),
            service_task("t", "out", io),
            service_task("check", "chk", ""),
            end_event("e"),
            flow("f0", "s", "t"),
            flow("f1", "t", "check"),
            flow("f2", "check", "e"),
        ],
    ));
    let pi_key = h.create_ok("out", "");
    let task_key = h.instance_of("t").key;
    let (k, _) = h.activate_one("out");
    let b = h.complete(k, r#"{"result": 21}"#);
    b.accepted();
    let var_events: Vec<(Intent, String, i64, String)> = b
        .records
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::Variable(v) if r.is_event() => {
                Some((r.intent, v.name.clone(), v.scope_key, v.value.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(var_events.len(), 2, "{var_events:?}");
    assert_eq!(var_events[0].1, "result");
    assert_eq!(
        var_events[0].2, task_key,
        "job variables are local when outputs exist"
    );
    assert_eq!(var_events[1].1, "doubled");
    assert_eq!(var_events[1].2, pi_key);
    assert_eq!(json(&var_events[1].3), json!(42));
    let vars = h.variables(pi_key);
    assert_eq!(
        vars.keys().cloned().collect::<Vec<_>>(),
        vec!["doubled".to_string()]
    );
    assert_eq!(vars["doubled"], json!(42));
    let (_, job2) = h.activate_one("chk");
    assert_eq!(job_vars(&job2), json!({"doubled": 42}));
    h.assert_replay_matches();
}

#[test]
fn set_variables_local_stays_on_the_scope_and_propagate_reaches_the_process() {
    let mut h = one_task();
    let pi_key = h.create_ok("benchmark", r#"{"a": 1}"#);
    let task_key = h.instance_of("task").key;

    let b = h.set_variables(task_key, r#"{"l": 1}"#, true);
    let resp = b.accepted();
    assert_eq!(
        (resp.value_type, resp.intent),
        (ValueType::VariableDocument, Updated)
    );
    assert_eq!(partition_of_key(resp.key), 1);
    assert_eq!(h.variables(task_key)["l"], json!(1));

    let b = h.set_variables(task_key, r#"{"p": 2, "a": 5}"#, false);
    b.accepted();
    assert!(!h.variables(task_key).contains_key("p"));
    assert_eq!(h.variables(pi_key)["p"], json!(2));
    assert_eq!(h.variables(pi_key)["a"], json!(5));

    // propagate updates the nearest scope that has the variable
    h.set_variables(task_key, r#"{"l": 10}"#, false).accepted();
    assert_eq!(h.variables(task_key)["l"], json!(10));
    assert!(!h.variables(pi_key).contains_key("l"));

    let (k, job) = h.activate_one(JOB_TYPE);
    assert_eq!(job_vars(&job), json!({"a": 5, "l": 10, "p": 2}));
    h.complete(k, "").accepted();
    assert_eq!(
        h.count(Ks::Variables),
        0,
        "everything goes with the completed instance"
    );
    h.assert_replay_matches();
}

/// The exact text of a job's variables: the job's own scope first, then outer scopes without
/// the names an inner scope shadows, each scope in key order, values as stored (escapes kept).
#[test]
fn job_variables_text_lists_inner_scopes_first_without_shadowed_values() {
    let mut h = Harness::new();
    let io = r#"<zeebe:ioMapping>
          <zeebe:input source="=a + 1" target="a" />
          <zeebe:input source="=b" target="z" />
        </zeebe:ioMapping>"#;
    h.deploy_ok(&process(
        "text",
        &[
            start_event("s"),
            service_task("t", "text", io),
            end_event("e"),
            flow("f0", "s", "t"),
            flow("f1", "t", "e"),
        ],
    ));
    h.create_ok("text", r#"{"c": [1, {"d": null}], "b": "q\"uote", "a": 1}"#);
    let (_, job) = h.activate_one("text");
    assert_eq!(
        job.variables,
        r#"{"a":2,"z":"q\"uote","b":"q\"uote","c":[1,{"d":null}]}"#
    );
}

#[test]
fn local_variables_shadow_process_variables() {
    let mut h = one_task();
    let pi_key = h.create_ok("benchmark", r#"{"a": 1}"#);
    let task_key = h.instance_of("task").key;
    h.set_variables(task_key, r#"{"a": "local"}"#, true)
        .accepted();
    assert_eq!(h.variables(pi_key)["a"], json!(1));
    let (_, job) = h.activate_one(JOB_TYPE);
    assert_eq!(job_vars(&job), json!({"a": "local"}));
    // fetchVariables resolves names the same way
    h.fail(job_key_of(&h, task_key), 1, "", 0).accepted();
    let jobs = h.activate_with(JOB_TYPE, 1, 1000, &["a"]);
    assert_eq!(job_vars(&jobs[0].1), json!({"a": "local"}));
}

fn job_key_of(h: &Harness, element_instance_key: i64) -> i64 {
    h.element_instance(element_instance_key).unwrap().job_key
}

// =============================================================================================
// 5. job failures, retries, errors, timeouts

#[test]
fn failed_job_with_retries_left_is_activatable_again() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let (k, _) = h.activate_one(JOB_TYPE);
    let b = h.fail(k, 2, "boom", 0);
    let resp = b.accepted();
    assert_eq!(
        (resp.value_type, resp.intent, resp.key),
        (ValueType::Job, Failed, k)
    );
    let RecordValue::Job(j) = &resp.value else {
        unreachable!()
    };
    assert_eq!(j.retries, 2);
    assert_eq!(j.error_message, "boom");
    assert_eq!(b.events(), vec![ev(ValueType::Job, Failed, "task")]);
    assert_eq!(
        b.side_effects,
        vec![zest_engine::SideEffect::JobsAvailable(JOB_TYPE.into())]
    );
    assert_eq!(h.job_state(k), Some(JobState::Activatable));
    assert_eq!(h.count(Ks::JobDeadlines), 0);
    let (k2, job) = h.activate_one(JOB_TYPE);
    assert_eq!(k2, k);
    assert_eq!(job.retries, 2);
    h.complete(k, "").accepted();
    h.assert_no_runtime_state();
}

#[test]
fn failed_job_with_backoff_recurs_only_after_the_backoff() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let (k, _) = h.activate_one(JOB_TYPE);
    let b = h.fail(k, 2, "later", 5_000);
    let RecordValue::Job(j) = &b.accepted().value else {
        unreachable!()
    };
    assert_eq!(j.retry_backoff, 5_000);
    assert_eq!(j.recurring_time, h.now + 5_000);
    assert!(
        b.side_effects.is_empty(),
        "not available before the backoff"
    );
    assert_eq!(h.job_state(k), Some(JobState::FailedBackoff));
    assert!(h.activate(JOB_TYPE, 10).is_empty());
    assert_eq!(h.count(Ks::JobBackoffs), 1);

    h.advance(4_999);
    assert!(h.run_scheduler().is_empty());
    assert!(h.activate(JOB_TYPE, 10).is_empty());
    h.advance(1);
    let recurred = h.run_scheduler();
    assert_eq!(recurred.len(), 1);
    assert_eq!(
        recurred[0].events(),
        vec![ev(ValueType::Job, RecurredAfterBackoff, "task")]
    );
    assert_eq!(
        recurred[0].side_effects,
        vec![zest_engine::SideEffect::JobsAvailable(JOB_TYPE.into())]
    );
    assert_eq!(h.count(Ks::JobBackoffs), 0);
    let (k2, job) = h.activate_one(JOB_TYPE);
    assert_eq!((k2, job.retries), (k, 2));
    // a stale RECUR command (job no longer waits for a backoff) is rejected
    let stale = h.internal(k, RecurAfterBackoff, RecordValue::Job(Default::default()));
    assert_eq!(
        stale.returned[1].rejection_type,
        RejectionType::InvalidState
    );
    h.complete(k, "").accepted();
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn job_without_retries_raises_incident_and_update_retries_plus_resolve_recovers() {
    let mut h = one_task();
    let pi_key = h.create_ok("benchmark", "");
    let task_key = h.instance_of("task").key;
    let (k, _) = h.activate_one(JOB_TYPE);
    let b = h.fail(k, 0, "", 0);
    b.accepted();
    assert_eq!(
        b.events().iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(),
        vec![(ValueType::Job, Failed), (ValueType::Incident, Created)]
    );
    let (incident_key, inc) = incident_of(&b);
    assert_eq!(inc.error_type, ErrorType::JobNoRetries);
    assert_eq!(inc.error_message, "No more retries left.");
    assert_eq!(inc.job_key, k);
    assert_eq!(inc.element_id, "task");
    assert_eq!(inc.element_instance_key, task_key);
    assert_eq!(inc.process_instance_key, pi_key);
    assert_eq!(h.job_state(k), Some(JobState::Failed));
    assert!(h.activate(JOB_TYPE, 10).is_empty());

    let u = h.update_retries(k, 1);
    let RecordValue::Job(j) = &u.accepted().value else {
        unreachable!()
    };
    assert_eq!(j.retries, 1);
    assert_eq!(u.events(), vec![ev(ValueType::Job, RetriesUpdated, "task")]);
    assert!(
        h.activate(JOB_TYPE, 10).is_empty(),
        "the incident still blocks the job"
    );

    let r = h.resolve(incident_key);
    r.accepted();
    assert_eq!(
        r.events(),
        vec![ev(ValueType::Incident, Resolved, "JobNoRetries")]
    );
    assert_eq!(
        r.side_effects,
        vec![zest_engine::SideEffect::JobsAvailable(JOB_TYPE.into())]
    );
    assert!(h.incidents().is_empty());
    let (k2, job) = h.activate_one(JOB_TYPE);
    assert_eq!((k2, job.retries), (k, 1));
    h.complete(k, "").accepted();
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn job_failure_message_becomes_the_incident_message_and_fail_variables_are_local() {
    let mut h = one_task();
    let pi_key = h.create_ok("benchmark", "");
    let task_key = h.instance_of("task").key;
    let (k, _) = h.activate_one(JOB_TYPE);
    let b = h.job_cmd(
        k,
        Fail,
        zest_protocol::JobRecord {
            retries: 0,
            error_message: "database down".into(),
            variables: r#"{"attempt": 3}"#.into(),
            ..Default::default()
        },
    );
    b.accepted();
    let (_, inc) = incident_of(&b);
    assert_eq!(inc.error_message, "database down");
    assert_eq!(h.variables(task_key)["attempt"], json!(3));
    assert!(h.variables(pi_key).is_empty());
}

#[test]
fn thrown_error_without_catch_event_raises_unhandled_error_incident() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let task_key = h.instance_of("task").key;
    let (k, _) = h.activate_one(JOB_TYPE);
    let b = h.throw_error(k, "NOT_FOUND", "no such order");
    let RecordValue::Job(j) = &b.accepted().value else {
        unreachable!()
    };
    assert_eq!(
        (j.error_code.as_str(), j.error_message.as_str()),
        ("NOT_FOUND", "no such order")
    );
    assert_eq!(
        b.events().iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(),
        vec![
            (ValueType::Job, ErrorThrown),
            (ValueType::Incident, Created)
        ]
    );
    let (incident_key, inc) = incident_of(&b);
    assert_eq!(inc.error_type, ErrorType::UnhandledErrorEvent);
    assert_eq!(inc.job_key, k);
    assert_eq!(inc.element_instance_key, task_key);
    assert!(
        inc.error_message.contains("'NOT_FOUND'") && inc.error_message.contains("no such order"),
        "{}",
        inc.error_message
    );
    assert_eq!(h.job_state(k), Some(JobState::ErrorThrown));
    assert!(h.activate(JOB_TYPE, 10).is_empty());
    // the task still waits
    assert_eq!(
        h.element_instance(task_key).unwrap().state,
        ElementActivated
    );
    // resolving makes the job activatable again
    h.resolve(incident_key).accepted();
    let (k2, _) = h.activate_one(JOB_TYPE);
    assert_eq!(k2, k);
    h.complete(k, "").accepted();
    h.assert_no_runtime_state();
}

#[test]
fn activated_job_times_out_after_its_deadline_and_is_activatable_again() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let jobs = h.activate_with(JOB_TYPE, 1, 1_000, &[]);
    let (k, job) = (jobs[0].0, jobs[0].1.clone());
    assert_eq!(job.deadline, h.now + 1_000);
    h.advance(999);
    assert!(h.run_scheduler().is_empty());
    // a premature TIME_OUT is rejected
    let early = h.internal(k, TimeOut, RecordValue::Job(Default::default()));
    assert_eq!(
        early.returned[1].rejection_type,
        RejectionType::InvalidState
    );
    h.advance(1);
    let timed_out = h.run_scheduler();
    assert_eq!(timed_out.len(), 1);
    assert_eq!(
        timed_out[0].events(),
        vec![ev(ValueType::Job, TimedOut, "task")]
    );
    assert_eq!(
        timed_out[0].side_effects,
        vec![zest_engine::SideEffect::JobsAvailable(JOB_TYPE.into())]
    );
    assert_eq!(h.job_state(k), Some(JobState::Activatable));
    assert_eq!(h.count(Ks::JobDeadlines), 0);
    assert!(
        h.run_scheduler().is_empty(),
        "a timed-out job is not timed out twice"
    );
    let (k2, job2) = h.activate_one(JOB_TYPE);
    assert_eq!(k2, k);
    assert_eq!(job2.deadline, h.now + 300_000);
    h.complete(k, "").accepted();
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn activation_respects_max_jobs_and_job_type() {
    let mut h = one_task();
    for _ in 0..5 {
        h.create_ok("benchmark", "");
    }
    assert!(h.activate("other-type", 10).is_empty());
    let first = h.activate(JOB_TYPE, 2);
    assert_eq!(first.len(), 2);
    let rest = h.activate(JOB_TYPE, 10);
    assert_eq!(rest.len(), 3);
    let mut keys: Vec<i64> = first.iter().chain(rest.iter()).map(|j| j.0).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 5);
    // jobs are handed out in key order (creation order)
    assert!(first[0].0 < first[1].0 && first[1].0 < rest[0].0);
    // invalid activation requests
    let b = h.activate_cmd(JOB_TYPE, 0, 1000, &[]);
    b.rejection(RejectionType::InvalidArgument);
    let b = h.activate_cmd("", 1, 1000, &[]);
    b.rejection(RejectionType::InvalidArgument);
    let b = h.activate_cmd(JOB_TYPE, 1, 0, &[]);
    b.rejection(RejectionType::InvalidArgument);
}

#[test]
fn job_timeout_can_be_updated() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let jobs = h.activate_with(JOB_TYPE, 1, 1_000, &[]);
    let k = jobs[0].0;
    let b = h.job_cmd(
        k,
        UpdateTimeout,
        zest_protocol::JobRecord {
            timeout: 10_000,
            ..Default::default()
        },
    );
    let RecordValue::Job(j) = &b.accepted().value else {
        unreachable!()
    };
    assert_eq!(j.deadline, h.now + 10_000);
    h.advance(1_000);
    assert!(
        h.run_scheduler().is_empty(),
        "the old deadline no longer applies"
    );
    h.advance(9_000);
    assert_eq!(h.run_scheduler().len(), 1);
}

// =============================================================================================
// 6. rejections change no state

/// Runs `f` and asserts the state did not change and the log got exactly [command, rejection].
fn assert_rejected(
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

#[test]
fn rejections_of_process_instance_commands() {
    let mut h = one_task();
    let reason = assert_rejected(&mut h, RejectionType::NotFound, |h| h.create("nope", ""));
    assert!(reason.contains("nope"), "{reason}");
    let reason = assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.create("benchmark", "[1, 2]")
    });
    assert!(reason.contains("variables"), "{reason}");
    assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.create("benchmark", "{not json")
    });
    // explicit version that does not exist
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.client(
            -1,
            Create,
            RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
                bpmn_process_id: "benchmark".into(),
                version: 7,
                process_definition_key: -1,
                ..Default::default()
            }),
        )
    });
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.cancel(encode_key(1, 999_999))
    });
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.resolve(encode_key(1, 999_999))
    });
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.set_variables(encode_key(1, 999_999), r#"{"a": 1}"#, false)
    });
    // cancel is only for process instances, not for their elements
    let pi_key = h.create_ok("benchmark", "");
    let task_key = h.instance_of("task").key;
    assert_rejected(&mut h, RejectionType::NotFound, |h| h.cancel(task_key));
    assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.set_variables(pi_key, "[1]", false)
    });
    h.assert_replay_matches();
}

#[test]
fn rejections_of_job_commands() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let unknown = encode_key(1, 999_999);
    let reason = assert_rejected(&mut h, RejectionType::NotFound, |h| h.complete(unknown, ""));
    assert!(reason.contains(&unknown.to_string()), "{reason}");
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.fail(unknown, 1, "", 0)
    });
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.throw_error(unknown, "E", "")
    });
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.update_retries(unknown, 1)
    });

    let (k, _) = h.activate_one(JOB_TYPE);
    let reason = assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.update_retries(k, 0)
    });
    assert!(reason.contains("positive"), "{reason}");
    assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.complete(k, "[1]")
    });

    // fail a job that is not activated (FAILED, waiting for its incident)
    h.fail(k, 0, "", 0).accepted();
    assert_rejected(&mut h, RejectionType::InvalidState, |h| h.fail(k, 1, "", 0));
    assert_rejected(&mut h, RejectionType::InvalidState, |h| h.complete(k, ""));
    assert_rejected(&mut h, RejectionType::InvalidState, |h| {
        h.throw_error(k, "E", "")
    });
    // the incident's job can still get retries and be resolved
    let incident_key = h.incidents()[0].0;
    h.update_retries(k, 1).accepted();
    h.resolve(incident_key).accepted();
    assert_rejected(&mut h, RejectionType::NotFound, |h| h.resolve(incident_key));

    // complete twice
    h.complete(k, "").accepted();
    assert_rejected(&mut h, RejectionType::NotFound, |h| h.complete(k, ""));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

/// Zeebe 8 accepts FAIL for jobs in state ACTIVATABLE as well as ACTIVATED
/// (JobFailProcessor's precondition: `List.of(State.ACTIVATABLE, State.ACTIVATED)`).
#[test]
fn fail_of_an_activatable_job_is_accepted_like_zeebe() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let task_key = h.instance_of("task").key;
    let k = job_key_of(&h, task_key);
    h.fail(k, 2, "never activated", 0).accepted();
    assert_eq!(h.job_state(k), Some(JobState::Activatable));
    let (k2, job) = h.activate_one(JOB_TYPE);
    assert_eq!((k2, job.retries), (k, 2));
    h.assert_state_consistent();
}

#[test]
fn invalid_bpmn_is_rejected_naming_the_element() {
    let mut h = Harness::new();
    let xml = process(
        "bad",
        &[
            start_event("s"),
            r#"    <bpmn:serviceTask id="badTask" />"#.to_string(),
            end_event("e"),
            flow("f0", "s", "badTask"),
            flow("f1", "badTask", "e"),
        ],
    );
    let reason = assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.deploy("bad.bpmn", &xml)
    });
    assert!(reason.contains("badTask"), "{reason}");
    assert!(reason.contains("bad.bpmn"), "{reason}");
    let reason = assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.deploy("broken.bpmn", "<bpmn:definitions")
    });
    assert!(reason.contains("broken.bpmn"), "{reason}");
    assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.deploy("notes.txt", "hello")
    });
    // a deployment with a bad resource deploys nothing, not even its valid resources
    assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.client(
            -1,
            Create,
            RecordValue::Deployment(zest_protocol::DeploymentRecord {
                resources: vec![
                    zest_protocol::DeploymentResource {
                        resource_name: "good.bpmn".into(),
                        resource: ONE_TASK.as_bytes().to_vec(),
                    },
                    zest_protocol::DeploymentResource {
                        resource_name: "bad.bpmn".into(),
                        resource: xml.as_bytes().to_vec(),
                    },
                ],
                ..Default::default()
            }),
        )
    });
    assert_eq!(h.count(Ks::Processes), 0);
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.create("benchmark", "")
    });
}

// =============================================================================================
// 7. awaiting results, cancel

fn create_awaiting(h: &mut Harness, process_id: &str, vars: &str, fetch: &[&str]) -> Batch {
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

#[test]
fn create_with_awaiting_result_answers_when_the_process_completes() {
    let mut h = one_task();
    let c = create_awaiting(&mut h, "benchmark", r#"{"in": 1}"#, &["out", "in"]);
    assert!(
        c.responses.is_empty(),
        "no answer before the instance completes"
    );
    let created = c.find(ValueType::ProcessInstanceCreation, Created);
    let pi_key = created[0].key;
    assert_eq!(h.count(Ks::AwaitingResults), 1);

    let (k, _) = h.activate_one(JOB_TYPE);
    let b = h.complete(k, r#"{"out": 5, "other": 1}"#);
    b.accepted();
    let answers: Vec<_> = b
        .responses
        .iter()
        .filter(|r| r.request_id == c.request_id)
        .collect();
    assert_eq!(answers.len(), 1);
    let r = &answers[0].record;
    assert_eq!(answers[0].request_stream_id, STREAM);
    assert_eq!(
        (r.record_type, r.value_type, r.intent, r.key),
        (
            RecordType::Event,
            ValueType::ProcessInstanceResult,
            Completed,
            pi_key
        )
    );
    let RecordValue::ProcessInstanceResult(res) = &r.value else {
        unreachable!()
    };
    assert_eq!(res.process_instance_key, pi_key);
    assert_eq!(res.bpmn_process_id, "benchmark");
    assert_eq!(res.version, 1);
    assert_eq!(json(&res.variables), json!({"out": 5, "in": 1}));
    // the result is not a log record
    assert!(!b
        .records
        .iter()
        .any(|r| r.value_type == ValueType::ProcessInstanceResult));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn create_with_awaiting_result_of_a_process_without_wait_states_answers_at_once() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "direct",
        &[start_event("s"), end_event("e"), flow("f", "s", "e")],
    ));
    let c = create_awaiting(&mut h, "direct", r#"{"x": 1, "y": [true]}"#, &[]);
    let r = c.response();
    assert_eq!(r.value_type, ValueType::ProcessInstanceResult);
    let RecordValue::ProcessInstanceResult(res) = &r.value else {
        unreachable!()
    };
    assert_eq!(json(&res.variables), json!({"x": 1, "y": [true]}));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn cancel_terminates_elements_and_cancels_the_job() {
    let mut h = one_task();
    let pi_key = h.create_ok("benchmark", r#"{"a": 1}"#);
    let (k, _) = h.activate_one(JOB_TYPE);
    let b = h.cancel(pi_key);
    let resp = b.accepted();
    assert_eq!(resp.key, pi_key);
    assert_eq!(
        b.events(),
        vec![
            ev(ValueType::ProcessInstance, ElementTerminating, "benchmark"),
            // the children are terminated by batch commands (Zeebe's PROCESS_INSTANCE_BATCH)
            ev(ValueType::ProcessInstanceBatch, Terminated, ""),
            ev(ValueType::ProcessInstance, ElementTerminating, "task"),
            ev(ValueType::Job, Canceled, "task"),
            ev(ValueType::ProcessInstance, ElementTerminated, "task"),
            ev(ValueType::ProcessInstance, ElementTerminated, "benchmark"),
        ]
    );
    h.assert_no_runtime_state();
    // the worker can no longer complete it; a second cancel finds nothing
    assert_rejected(&mut h, RejectionType::NotFound, |h| h.complete(k, ""));
    assert_rejected(&mut h, RejectionType::NotFound, |h| h.cancel(pi_key));
    h.assert_replay_matches();
}

#[test]
fn cancel_resolves_the_job_incident() {
    let mut h = one_task();
    let pi_key = h.create_ok("benchmark", "");
    let (k, _) = h.activate_one(JOB_TYPE);
    h.fail(k, 0, "", 0).accepted();
    assert_eq!(h.incidents().len(), 1);
    let b = h.cancel(pi_key);
    b.accepted();
    let evs: Vec<(ValueType, Intent)> = b.events().iter().map(|e| (e.0, e.1)).collect();
    assert!(evs.contains(&(ValueType::Incident, Resolved)), "{evs:?}");
    assert!(evs.contains(&(ValueType::Job, Canceled)), "{evs:?}");
    assert_eq!(
        b.pi_events(),
        pi(&[
            (ElementTerminating, "benchmark"),
            (ElementTerminating, "task"),
            (ElementTerminated, "task"),
            (ElementTerminated, "benchmark"),
        ])
    );
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

/// Zeebe's BpmnJobBehavior.cancelJob writes JOB CANCELED and then resolves the job's incident.
#[test]
fn cancel_writes_job_canceled_before_resolving_the_job_incident() {
    let mut h = one_task();
    let pi_key = h.create_ok("benchmark", "");
    let (k, _) = h.activate_one(JOB_TYPE);
    h.fail(k, 0, "", 0).accepted();
    let b = h.cancel(pi_key);
    let evs: Vec<(ValueType, Intent)> = b.events().iter().map(|e| (e.0, e.1)).collect();
    let canceled = evs
        .iter()
        .position(|e| *e == (ValueType::Job, Canceled))
        .unwrap();
    let resolved = evs
        .iter()
        .position(|e| *e == (ValueType::Incident, Resolved))
        .unwrap();
    assert!(canceled < resolved, "{evs:?}");
}

#[test]
fn cancel_resolves_an_element_incident() {
    let Some((xml, payload)) = typical_payload_without_var2() else {
        return;
    };
    let mut h = Harness::new();
    h.deploy_ok(&xml);
    let pi_key = h.create_ok("benchmark", &payload);
    for _ in 0..3 {
        work_one(&mut h);
    }
    assert_eq!(h.incidents().len(), 1);
    let b = h.cancel(pi_key);
    b.accepted();
    assert_eq!(
        b.events(),
        vec![
            ev(ValueType::ProcessInstance, ElementTerminating, "benchmark"),
            ev(ValueType::ProcessInstanceBatch, Terminated, ""),
            ev(
                ValueType::ProcessInstance,
                ElementTerminating,
                "Gateway_09jrxib"
            ),
            ev(ValueType::Incident, Resolved, "ConditionError"),
            ev(
                ValueType::ProcessInstance,
                ElementTerminated,
                "Gateway_09jrxib"
            ),
            ev(ValueType::ProcessInstance, ElementTerminated, "benchmark"),
        ]
    );
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn cancel_of_a_waiting_timer_cancels_the_timer() {
    let Some(xml) = workload("typical_process.bpmn") else {
        return;
    };
    let mut h = Harness::new();
    h.deploy_ok(&xml);
    let pi_key = h.create_ok("benchmark", r#"{"var2": true}"#);
    for _ in 0..3 {
        work_one(&mut h);
    }
    assert_eq!(h.count(Ks::Timers), 1);
    let b = h.cancel(pi_key);
    assert!(b
        .events()
        .contains(&ev(ValueType::Timer, Canceled, "timer1")));
    h.assert_no_runtime_state();
    h.advance(120_000);
    assert!(h.run_scheduler().is_empty());
}

#[test]
fn cancel_answers_a_waiting_create_with_result() {
    let mut h = one_task();
    let c = create_awaiting(&mut h, "benchmark", "", &[]);
    let pi_key = c.find(ValueType::ProcessInstanceCreation, Created)[0].key;
    let b = h.cancel(pi_key);
    b.accepted();
    let answers: Vec<_> = b
        .responses
        .iter()
        .filter(|r| r.request_id == c.request_id)
        .collect();
    assert_eq!(
        answers.len(),
        1,
        "the waiting client learns the instance is gone"
    );
    assert_eq!(answers[0].record.record_type, RecordType::CommandRejection);
    h.assert_no_runtime_state();
}

// =============================================================================================
// 8. versions

#[test]
fn redeploying_identical_resource_is_a_duplicate_and_a_change_makes_version_two() {
    let mut h = Harness::new();
    let meta = |b: &Batch| {
        let RecordValue::DeploymentResponse(d) = &b.accepted().value else {
            unreachable!()
        };
        d.processes_metadata[0].clone()
    };
    let d1 = h.deploy("one_task.bpmn", ONE_TASK);
    let m1 = meta(&d1);
    assert_eq!((m1.version, m1.duplicate), (1, false));

    let d2 = h.deploy("one_task.bpmn", ONE_TASK);
    let m2 = meta(&d2);
    assert_eq!(
        (m2.version, m2.duplicate, m2.process_definition_key),
        (1, true, m1.process_definition_key)
    );
    assert_eq!(
        d2.count(ValueType::Process, Created),
        0,
        "no new process for a duplicate"
    );
    assert_eq!(d2.count(ValueType::Deployment, Created), 1);
    assert_ne!(
        d2.accepted().key,
        d1.accepted().key,
        "each deployment has its own key"
    );
    assert_eq!(h.count(Ks::Processes), 1);

    let changed = ONE_TASK.replace("benchmark-task", "benchmark-task-v2");
    let d3 = h.deploy("one_task.bpmn", &changed);
    let m3 = meta(&d3);
    assert_eq!((m3.version, m3.duplicate), (2, false));
    assert_ne!(m3.process_definition_key, m1.process_definition_key);
    assert_eq!(d3.count(ValueType::Process, Created), 1);

    // latest is version 2
    let c = h.create("benchmark", "");
    let RecordValue::ProcessInstanceCreation(pc) = &c.accepted().value else {
        unreachable!()
    };
    assert_eq!(
        (pc.version, pc.process_definition_key),
        (2, m3.process_definition_key)
    );
    assert_eq!(h.activate("benchmark-task-v2", 10).len(), 1);
    assert!(h.activate("benchmark-task", 10).is_empty());

    // version 1 is still there, by version and by key
    let c = h.client(
        -1,
        Create,
        RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
            bpmn_process_id: "benchmark".into(),
            version: 1,
            process_definition_key: -1,
            ..Default::default()
        }),
    );
    let RecordValue::ProcessInstanceCreation(pc) = &c.accepted().value else {
        unreachable!()
    };
    assert_eq!(pc.version, 1);
    let c = h.client(
        -1,
        Create,
        RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
            bpmn_process_id: String::new(),
            version: -1,
            process_definition_key: m1.process_definition_key,
            ..Default::default()
        }),
    );
    let RecordValue::ProcessInstanceCreation(pc) = &c.accepted().value else {
        unreachable!()
    };
    assert_eq!(pc.version, 1);
    assert_eq!(h.activate("benchmark-task", 10).len(), 2);

    // redeploying the version-1 resource is not a duplicate of the latest: version 3
    let d4 = h.deploy("one_task.bpmn", ONE_TASK);
    let m4 = meta(&d4);
    assert_eq!((m4.version, m4.duplicate), (3, false));
    // a different resource name is not a duplicate either
    let d5 = h.deploy("renamed.bpmn", ONE_TASK);
    assert_eq!(meta(&d5).version, 4);
    h.assert_replay_matches();
}

// =============================================================================================
// 9. determinism

/// A scripted scenario touching most processors; returns the log and all responses.
fn scenario(restart_engine_between_commands: bool) -> (Vec<Record>, Vec<(i64, Record)>) {
    let mut h = Harness::new();
    let step = |h: &mut Harness| {
        if restart_engine_between_commands {
            h.restart_engine();
        }
    };
    h.deploy_ok(ONE_TASK);
    step(&mut h);
    h.deploy_ok(&parallel_process());
    step(&mut h);
    h.deploy_ok(&xor_with_default());
    step(&mut h);
    if let Some(xml) = workload("typical_process.bpmn") {
        h.deploy_ok(&xml);
        step(&mut h);
    }
    let mut instances = Vec::new();
    for i in 0..3 {
        instances.push(h.create_ok("benchmark", &format!(r#"{{"i": {i}, "var2": true}}"#)));
        step(&mut h);
        h.create_ok("par", &format!(r#"{{"i": {i}}}"#));
        step(&mut h);
        h.create_ok("xor", &format!(r#"{{"x": {}}}"#, i * 10));
        step(&mut h);
        h.advance(7);
    }
    let jobs = h.activate_with(JOB_TYPE, 2, 2_000, &["i"]);
    assert_eq!(jobs.len(), 2);
    step(&mut h);
    h.complete(jobs[0].0, r#"{"done": true}"#).accepted();
    step(&mut h);
    h.fail(jobs[1].0, 1, "retry me", 500).accepted();
    step(&mut h);
    let p = h.activate("p1", 10);
    assert_eq!(p.len(), 3, "one p1 job per parallel instance");
    step(&mut h);
    for (k, _) in &p {
        h.complete(*k, "").accepted();
        step(&mut h);
    }
    let p2 = h.activate("p2", 10);
    h.throw_error(p2[0].0, "ERR", "bad").accepted();
    step(&mut h);
    h.cancel(instances[2]).accepted();
    step(&mut h);
    for _ in 0..4 {
        h.advance(30_000);
        h.run_scheduler();
        step(&mut h);
        let js = h.activate(JOB_TYPE, 3);
        step(&mut h);
        for (k, _) in js {
            h.complete(k, "").accepted();
            step(&mut h);
        }
    }
    for (k, _) in h.activate("b", 10) {
        h.complete(k, r#"{"b": 1}"#).accepted();
        step(&mut h);
    }
    h.assert_replay_matches();
    let responses = h
        .responses
        .iter()
        .map(|r| (r.request_id, r.record.clone()))
        .collect();
    (h.log.clone(), responses)
}

#[test]
fn same_commands_and_clock_produce_identical_record_streams() {
    let (log1, resp1) = scenario(false);
    let (log2, resp2) = scenario(false);
    assert!(
        log1.len() > 100,
        "the scenario should do some work: {}",
        log1.len()
    );
    assert_eq!(log1, log2);
    assert_eq!(resp1, resp2);
}

#[test]
fn a_fresh_engine_without_cached_models_produces_the_same_records() {
    let (log1, resp1) = scenario(false);
    let (log2, resp2) = scenario(true);
    assert_eq!(log1, log2);
    assert_eq!(resp1, resp2);
}

// =============================================================================================
// state utilities

#[test]
fn mem_state_scan_prefix_stays_inside_its_keyspace() {
    let mut s = MemState::default();
    s.map.insert((Ks::Timers, key_i64(1)), vec![1]);
    s.map.insert((Ks::Variables, key_i64(7)), vec![2]);
    let mut seen = Vec::new();
    s.scan_prefix(Ks::Jobs, &[], &mut |k, v| {
        seen.push((k.to_vec(), v.to_vec()));
        true
    });
    assert!(
        seen.is_empty(),
        "Jobs is empty but the scan yielded {seen:?}"
    );
    // with a prefix: ElementChildren has no entry of scope 7, Variables of scope 7 follow
    let mut seen = Vec::new();
    s.scan_prefix(Ks::ElementChildren, &key_i64(7), &mut |k, v| {
        seen.push((k.to_vec(), v.to_vec()));
        true
    });
    assert!(
        seen.is_empty(),
        "ElementChildren is empty but the scan yielded {seen:?}"
    );
}

// =============================================================================================
// more incidents and expressions

#[test]
fn job_type_expression_failure_raises_extract_value_incident_until_fixed() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "dyn",
        &[
            start_event("s"),
            service_task("t", "=jobType", ""),
            end_event("e"),
            flow("f0", "s", "t"),
            flow("f1", "t", "e"),
        ],
    ));
    let c = h.create("dyn", "");
    let pi_key = c.find(ValueType::ProcessInstanceCreation, Created)[0].key;
    let (incident_key, inc) = incident_of(&c);
    assert_eq!(inc.error_type, ErrorType::ExtractValueError);
    assert_eq!(inc.element_id, "t");
    assert!(
        inc.error_message.contains("jobType"),
        "{}",
        inc.error_message
    );
    assert_eq!(h.instance_of("t").state, ElementActivating);
    assert_eq!(c.count(ValueType::Job, Created), 0);
    assert_eq!(
        c.pi_events().last().unwrap(),
        &(ElementActivating, "t".to_string())
    );

    h.set_variables(pi_key, r#"{"jobType": "dynamic"}"#, false)
        .accepted();
    let r = h.resolve(incident_key);
    r.accepted();
    assert_eq!(
        r.events(),
        vec![
            ev(ValueType::Incident, Resolved, "ExtractValueError"),
            ev(ValueType::Job, Created, "t"),
            ev(ValueType::ProcessInstance, ElementActivated, "t"),
        ]
    );
    let (k, job) = h.activate_one("dynamic");
    assert_eq!(job.element_id, "t");
    h.complete(k, "").accepted();
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn output_mapping_failure_raises_io_mapping_incident_on_completion() {
    let mut h = Harness::new();
    let io = r#"<zeebe:ioMapping>
          <zeebe:output source="=if ok then 1 else [1..2]" target="res" />
        </zeebe:ioMapping>"#;
    h.deploy_ok(&process(
        "outfail",
        &[
            start_event("s"),
            service_task("t", "of", io),
            end_event("e"),
            flow("f0", "s", "t"),
            flow("f1", "t", "e"),
        ],
    ));
    let pi_key = h.create_ok("outfail", r#"{"ok": false}"#);
    let (k, _) = h.activate_one("of");
    let b = h.complete(k, "");
    b.accepted();
    let (incident_key, inc) = incident_of(&b);
    assert_eq!(inc.error_type, ErrorType::IoMappingError);
    assert_eq!(inc.job_key, -1);
    assert_eq!(h.instance_of("t").state, ElementCompleting);
    assert!(matches!(
        h.incidents()[0].1.failed_step,
        FailedStep::CompleteElement
    ));
    h.set_variables(pi_key, r#"{"ok": true}"#, false).accepted();
    let r = h.resolve(incident_key);
    r.accepted();
    assert_eq!(
        r.pi_events()[..2].to_vec(),
        pi(&[(ElementCompleted, "t"), (SequenceFlowTaken, "f1")])
    );
    assert!(r.pi_events().ends_with(&pi(&[
        (ElementCompleting, "outfail"),
        (ElementCompleted, "outfail")
    ])));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

/// Zeebe's IncidentResolveProcessor rejects resolving a job incident while the job has no
/// retries: "Expected to resolve incident with key '%d', but job with key '%d' has no retries
/// left. Please update the job retries and retry resolving the incident" (INVALID_STATE).
#[test]
fn resolving_a_job_incident_without_retries_is_rejected_like_zeebe() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let (k, _) = h.activate_one(JOB_TYPE);
    h.fail(k, 0, "", 0).accepted();
    let incident_key = h.incidents()[0].0;
    let reason = assert_rejected(&mut h, RejectionType::InvalidState, |h| {
        h.resolve(incident_key)
    });
    assert!(reason.contains("no retries left"), "{reason}");
}

#[test]
fn an_activatable_job_can_be_completed_without_activation() {
    let mut h = one_task();
    h.create_ok("benchmark", "");
    let k = job_key_of(&h, h.instance_of("task").key);
    h.complete(k, r#"{"x": 1}"#).accepted();
    h.assert_no_runtime_state();
}

#[test]
fn parallel_branches_merging_at_an_exclusive_gateway_pass_it_twice() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "merge",
        &[
            start_event("s"),
            parallel_gateway("fork"),
            service_task("p1", "p1", ""),
            service_task("p2", "p2", ""),
            exclusive_gateway("xmerge"),
            service_task("after", "after", ""),
            end_event("e"),
            flow("f0", "s", "fork"),
            flow("f1", "fork", "p1"),
            flow("f2", "fork", "p2"),
            flow("m1", "p1", "xmerge"),
            flow("m2", "p2", "xmerge"),
            flow("fa", "xmerge", "after"),
            flow("fe", "after", "e"),
        ],
    ));
    let pi_key = h.create_ok("merge", "");
    let (k1, _) = h.activate_one("p1");
    let (k2, _) = h.activate_one("p2");
    h.complete(k1, "").accepted();
    h.complete(k2, "").accepted();
    let afters = h.activate("after", 10);
    assert_eq!(afters.len(), 2, "each token passes the exclusive gateway");
    let b = h.complete(afters[0].0, "");
    assert!(!b
        .pi_events()
        .contains(&(ElementCompleted, "merge".to_string())));
    assert!(h.element_instance(pi_key).is_some());
    let b = h.complete(afters[1].0, "");
    assert!(b.pi_events().ends_with(&pi(&[
        (ElementCompleting, "merge"),
        (ElementCompleted, "merge")
    ])));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn timer_durations_from_expressions_and_dates_in_the_past() {
    let mut h = Harness::new();
    let timer = |id: &str, def: &str| {
        format!(
            r#"    <bpmn:intermediateCatchEvent id="{id}">
      <bpmn:timerEventDefinition>
        {def}
      </bpmn:timerEventDefinition>
    </bpmn:intermediateCatchEvent>"#
        )
    };
    h.deploy_ok(&process("timers", &[
            start_event("s"),
            timer(
                "byVar",
                r#"<bpmn:timeDuration xsi:type="bpmn:tFormalExpression">=wait</bpmn:timeDuration>"#,
            ),
            timer(
                "byFeel",
                r#"<bpmn:timeDuration xsi:type="bpmn:tFormalExpression">=duration("PT5S")</bpmn:timeDuration>"#,
            ),
            timer(
                "past",
                r#"<bpmn:timeDate xsi:type="bpmn:tFormalExpression">2020-01-01T00:00:00Z</bpmn:timeDate>"#,
            ),
            end_event("e"),
            flow("f0", "s", "byVar"),
            flow("f1", "byVar", "byFeel"),
            flow("f2", "byFeel", "past"),
            flow("f3", "past", "e"),
        ]));
    let pi_key = h.create_ok("timers", r#"{"wait": "PT30S"}"#);
    let due = |h: &Harness| {
        let e = h.entries(Ks::Timers);
        assert_eq!(e.len(), 1);
        let t: zest_protocol::TimerRecord = zest_protocol::codec::decode(&e[0].1).unwrap();
        (t.target_element_id, t.due_date)
    };
    assert_eq!(due(&h), ("byVar".to_string(), h.now + 30_000));
    h.advance(30_000);
    assert_eq!(h.run_scheduler().len(), 1);
    assert_eq!(due(&h), ("byFeel".to_string(), h.now + 5_000));
    h.advance(5_000);
    assert_eq!(h.run_scheduler().len(), 1);
    // a date in the past is due at once
    let (id, d) = due(&h);
    assert_eq!(id, "past");
    assert_eq!(d, 1_577_836_800_000);
    let fired = h.run_scheduler();
    assert_eq!(fired.len(), 1);
    assert!(fired[0].pi_events().ends_with(&pi(&[
        (ElementCompleting, "timers"),
        (ElementCompleted, "timers")
    ])));
    assert!(h.element_instance(pi_key).is_none());
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn invalid_timer_duration_from_a_variable_raises_an_incident() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "badtimer",
        &[
            start_event("s"),
            r#"    <bpmn:intermediateCatchEvent id="t">
      <bpmn:timerEventDefinition>
        <bpmn:timeDuration xsi:type="bpmn:tFormalExpression">=wait</bpmn:timeDuration>
      </bpmn:timerEventDefinition>
    </bpmn:intermediateCatchEvent>"#
                .to_string(),
            end_event("e"),
            flow("f0", "s", "t"),
            flow("f1", "t", "e"),
        ],
    ));
    let c = h.create("badtimer", r#"{"wait": "soon"}"#);
    let (incident_key, inc) = incident_of(&c);
    assert_eq!(inc.error_type, ErrorType::ExtractValueError);
    assert_eq!(inc.element_id, "t");
    assert_eq!(h.count(Ks::Timers), 0);
    let pi_key = c.find(ValueType::ProcessInstanceCreation, Created)[0].key;
    h.set_variables(pi_key, r#"{"wait": "PT1S"}"#, false)
        .accepted();
    let r = h.resolve(incident_key);
    assert_eq!(r.count(ValueType::Timer, Created), 1);
    h.advance(1_000);
    assert_eq!(h.run_scheduler().len(), 1);
    h.assert_no_runtime_state();
}

#[test]
fn deployment_with_several_processes_and_duplicate_ids() {
    let mut h = Harness::new();
    let two = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="x">
  <bpmn:process id="first" isExecutable="true">
    <bpmn:startEvent id="s1" />
  </bpmn:process>
  <bpmn:process id="second" isExecutable="true">
    <bpmn:startEvent id="s2" />
  </bpmn:process>
</bpmn:definitions>"#;
    let b = h.deploy("two.bpmn", two);
    let RecordValue::DeploymentResponse(d) = &b.accepted().value else {
        unreachable!()
    };
    let ids: Vec<(&str, i32)> = d
        .processes_metadata
        .iter()
        .map(|m| (m.bpmn_process_id.as_str(), m.version))
        .collect();
    assert_eq!(ids, vec![("first", 1), ("second", 1)]);
    assert_eq!(b.count(ValueType::Process, Created), 2);
    h.create_ok("first", "");
    h.create_ok("second", "");
    h.assert_no_runtime_state();

    // the same process id twice in one deployment is rejected
    let reason = assert_rejected(&mut h, RejectionType::InvalidArgument, |h| {
        h.client(
            -1,
            Create,
            RecordValue::Deployment(zest_protocol::DeploymentRecord {
                resources: vec![
                    zest_protocol::DeploymentResource {
                        resource_name: "a.bpmn".into(),
                        resource: ONE_TASK.as_bytes().to_vec(),
                    },
                    zest_protocol::DeploymentResource {
                        resource_name: "b.bpmn".into(),
                        resource: ONE_TASK.as_bytes().to_vec(),
                    },
                ],
                ..Default::default()
            }),
        )
    });
    assert!(reason.contains("benchmark"), "{reason}");
    // creating by an unknown definition key
    assert_rejected(&mut h, RejectionType::NotFound, |h| {
        h.client(
            -1,
            Create,
            RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
                process_definition_key: encode_key(1, 424_242),
                version: -1,
                ..Default::default()
            }),
        )
    });
}

/// Zeebe's UpdateVariableDocumentProcessor merges the document first (VARIABLE events) and then
/// writes VARIABLE_DOCUMENT UPDATED with a key generated after the variables' keys.
#[test]
fn variable_document_updated_follows_the_variable_events_like_zeebe() {
    let mut h = one_task();
    let pi_key = h.create_ok("benchmark", "");
    let u = h.set_variables(pi_key, r#"{"a": 1}"#, false);
    assert_eq!(
        u.events(),
        vec![
            ev(ValueType::Variable, Created, "a"),
            ev(ValueType::VariableDocument, Updated, ""),
        ]
    );
}

#[test]
fn task_headers_and_retries_reach_the_job() {
    let mut h = Harness::new();
    let headers = r#"<zeebe:taskHeaders>
          <zeebe:header key="region" value="eu" />
          <zeebe:header key="tier" value="gold" />
        </zeebe:taskHeaders>"#;
    let task = service_task("t", "hdr", headers).replace(
        r#"<zeebe:taskDefinition type="hdr" />"#,
        r#"<zeebe:taskDefinition type="hdr" retries="5" />"#,
    );
    let task2 = service_task("t2", "hdr2", "").replace(
        r#"<zeebe:taskDefinition type="hdr2" />"#,
        r#"<zeebe:taskDefinition type="hdr2" retries="=r + 1" />"#,
    );
    h.deploy_ok(&process(
        "hdr",
        &[
            start_event("s"),
            task,
            task2,
            flow("f0", "s", "t"),
            flow("f1", "t", "t2"),
        ],
    ));
    h.create_ok("hdr", r#"{"r": 6}"#);
    let (k, job) = h.activate_one("hdr");
    assert_eq!(job.retries, 5);
    assert_eq!(
        job.custom_headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect::<Vec<_>>(),
        vec![("region", "eu"), ("tier", "gold")]
    );
    h.complete(k, "").accepted();
    let (k2, job2) = h.activate_one("hdr2");
    assert_eq!(job2.retries, 7);
    assert!(job2.custom_headers.is_empty());
    // t2 has no outgoing flow: the process completes with it (implicit end)
    let b = h.complete(k2, "");
    assert!(b.pi_events().ends_with(&pi(&[
        (ElementCompleted, "t2"),
        (ElementCompleting, "hdr"),
        (ElementCompleted, "hdr")
    ])));
    h.assert_no_runtime_state();
}

#[test]
fn fork_directly_into_join_completes() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "fj",
        &[
            start_event("s"),
            parallel_gateway("fork"),
            parallel_gateway("join"),
            end_event("e"),
            flow("f0", "s", "fork"),
            flow("a", "fork", "join"),
            flow("b", "fork", "join"),
            flow("fe", "join", "e"),
        ],
    ));
    let c = h.create("fj", "");
    c.accepted();
    let evs = c.pi_events();
    assert_eq!(
        evs.iter()
            .filter(|e| e.1 == "join" && e.0 == ElementActivating)
            .count(),
        1,
        "{evs:?}"
    );
    assert!(evs.ends_with(&pi(&[(ElementCompleting, "fj"), (ElementCompleted, "fj")])));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn job_activation_is_truncated_when_variables_exceed_the_message_budget() {
    let mut h = one_task();
    let big = "x".repeat(1600 * 1024);
    h.create_ok("benchmark", &json!({ "big": big }).to_string());
    h.create_ok("benchmark", &json!({ "big": big }).to_string());
    let b = h.activate_cmd(JOB_TYPE, 10, 1000, &[]);
    let RecordValue::JobBatch(batch) = &b.accepted().value else {
        unreachable!()
    };
    assert_eq!(batch.jobs.len(), 1);
    assert!(batch.truncated);
    assert_eq!(
        job_vars(&batch.jobs[0])["big"].as_str().unwrap().len(),
        big.len()
    );
    // the other job is still activatable; fetching fewer variables avoids the limit
    let rest = h.activate_with(JOB_TYPE, 10, 1000, &["nothing"]);
    assert_eq!(rest.len(), 1);
    assert_ne!(rest[0].0, batch.job_keys[0]);
}

fn creation(process_id: &str, vars: &str) -> RecordValue {
    RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
        bpmn_process_id: process_id.into(),
        version: -1,
        process_definition_key: -1,
        variables: vars.into(),
        ..Default::default()
    })
}

fn activation(job_type: &str, max: i32) -> RecordValue {
    RecordValue::JobBatch(zest_protocol::JobBatchRecord {
        job_type: job_type.into(),
        worker: "w".into(),
        timeout: 10_000,
        max_jobs_to_activate: max,
        ..Default::default()
    })
}

/// The broker processes a group of queued commands in one txn and commits them as one entry.
/// Later commands of the group must see the earlier ones' writes, and the group must produce the
/// same records as processing the commands one by one.
#[test]
fn a_group_of_commands_in_one_txn_matches_one_by_one_processing() {
    let script = |grouped: bool| {
        let mut h = one_task();
        let mut cmds = Vec::new();
        for i in 0..3 {
            cmds.push(h.client_command(
                -1,
                Create,
                creation("benchmark", &format!(r#"{{"i": {i}}}"#)),
            ));
        }
        for _ in 0..4 {
            cmds.push(h.client_command(-1, Activate, activation(JOB_TYPE, 1)));
        }
        let batches = if grouped {
            h.submit_group(cmds)
        } else {
            cmds.into_iter().map(|c| h.submit(c)).collect()
        };
        // three activations got one job each, the fourth none (and was not written)
        let got: Vec<usize> = batches[3..]
            .iter()
            .map(|b| match &b.response().value {
                RecordValue::JobBatch(jb) => jb.jobs.len(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, vec![1, 1, 1, 0]);
        let keys: Vec<i64> = batches[3..6]
            .iter()
            .map(|b| match &b.response().value {
                RecordValue::JobBatch(jb) => jb.job_keys[0],
                _ => unreachable!(),
            })
            .collect();
        // complete, fail without retries, complete again, cancel, complete: again as a group
        let pis: Vec<i64> = h
            .element_instances()
            .iter()
            .filter(|e| e.parent_key <= 0)
            .map(|e| e.key)
            .collect();
        let mut cmds = vec![
            h.client_command(
                keys[0],
                Complete,
                RecordValue::Job(zest_protocol::JobRecord {
                    variables: r#"{"r": 1}"#.into(),
                    ..Default::default()
                }),
            ),
            h.client_command(
                keys[1],
                Fail,
                RecordValue::Job(zest_protocol::JobRecord {
                    retries: 0,
                    ..Default::default()
                }),
            ),
            h.client_command(keys[0], Complete, RecordValue::Job(Default::default())),
        ];
        let cancel_value = h.cancel_value(pis[1]);
        let cancel = h.client_command(pis[1], Cancel, cancel_value);
        cmds.push(cancel);
        cmds.push(h.client_command(keys[2], Complete, RecordValue::Job(Default::default())));
        let batches = if grouped {
            h.submit_group(cmds)
        } else {
            cmds.into_iter().map(|c| h.submit(c)).collect()
        };
        // the second COMPLETE of the same job sees the first one's writes
        assert_eq!(
            batches[2].response().rejection_type,
            RejectionType::NotFound
        );
        h.assert_replay_matches();
        (
            h.log.clone(),
            h.responses
                .iter()
                .map(|r| (r.request_id, r.record.clone()))
                .collect::<Vec<_>>(),
            h.state.map.clone(),
        )
    };
    let (log1, resp1, state1) = script(false);
    let (log2, resp2, state2) = script(true);
    assert_eq!(resp1, resp2);
    assert_eq!(log1, log2);
    assert_eq!(state1, state2);
}

// =============================================================================================
// random walks: many interleaved instances, every batch checked

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.below(items.len())])
        }
    }
}

fn io_process() -> String {
    let io = r#"<zeebe:ioMapping>
          <zeebe:input source="=x" target="localX" />
          <zeebe:output source="=if ok then 1 else [1..2]" target="res" />
        </zeebe:ioMapping>"#;
    process(
        "iop",
        &[
            start_event("s"),
            service_task("t", "=jobType", io),
            end_event("e"),
            flow("f0", "s", "t"),
            flow("f1", "t", "e"),
        ],
    )
}

fn random_walk(seed: u64, steps: usize) -> Harness {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut h = Harness::new();
    h.deploy_ok(ONE_TASK);
    h.deploy_ok(&xor_with_default());
    h.deploy_ok(&parallel_process());
    h.deploy_ok(&io_process());
    let mut processes = vec!["benchmark", "xor", "par", "iop"];
    let typical = workload("typical_process.bpmn");
    if let Some(xml) = &typical {
        // the typical process replaces the one-task one under the same id (version 2)
        h.deploy_ok(xml);
        processes.push("benchmark");
    } else {
        // a checkout without the workloads: timers come from a small process of their own
        h.deploy_ok(&process(
            "tmr",
            &[
                start_event("s"),
                r#"<bpmn:intermediateCatchEvent id="wait"><bpmn:timerEventDefinition><bpmn:timeDuration>PT30S</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>"#.to_string(),
                service_task("t", "a", ""),
                end_event("e"),
                flow("f0", "s", "wait"),
                flow("f1", "wait", "t"),
                flow("f2", "t", "e"),
            ],
        ));
        processes.push("tmr");
    }
    let job_types = [JOB_TYPE, "a", "b", "p1", "p2", "dynamic", "other"];
    let vars_for = |rng: &mut Rng| -> String {
        let mut m = serde_json::Map::new();
        if rng.chance(70) {
            m.insert("var2".into(), json!(rng.chance(50)));
        }
        if rng.chance(70) {
            m.insert("x".into(), json!(rng.below(30)));
        }
        if rng.chance(60) {
            m.insert("jobType".into(), json!("dynamic"));
        }
        if rng.chance(60) {
            m.insert("ok".into(), json!(rng.chance(60)));
        }
        serde_json::Value::Object(m).to_string()
    };
    for _ in 0..steps {
        let jobs: Vec<(i64, JobState)> = h
            .entries(Ks::Jobs)
            .iter()
            .map(|(k, v)| {
                let j: zest_engine::types::StoredJob = zest_protocol::codec::decode(v).unwrap();
                (zest_engine::state::read_i64(k, 0), j.state)
            })
            .collect();
        let job_keys: Vec<i64> = jobs.iter().map(|j| j.0).collect();
        let incidents: Vec<i64> = h.incidents().iter().map(|i| i.0).collect();
        let elements: Vec<i64> = h.element_instances().iter().map(|e| e.key).collect();
        let roots: Vec<i64> = h
            .element_instances()
            .iter()
            .filter(|e| e.parent_key <= 0)
            .map(|e| e.key)
            .collect();
        let any_key = |rng: &mut Rng, keys: &[i64]| -> i64 {
            if rng.chance(8) {
                encode_key(1, 1_000_000 + rng.below(10) as i64) // unknown
            } else {
                rng.pick(keys).copied().unwrap_or(encode_key(1, 999))
            }
        };
        match rng.below(100) {
            0..=14 => {
                let p = *rng.pick(&processes).unwrap();
                let vars = vars_for(&mut rng);
                if rng.chance(15) {
                    create_awaiting(&mut h, p, &vars, &[]);
                } else {
                    h.create(p, &vars);
                }
            }
            15..=29 => {
                let t = *rng.pick(&job_types).unwrap();
                let max = 1 + rng.below(3) as i32;
                let timeout = if rng.chance(30) { 1_000 } else { 60_000 };
                h.activate_cmd(t, max, timeout, &[]);
            }
            30..=49 => {
                let k = any_key(&mut rng, &job_keys);
                let vars = if rng.chance(30) {
                    r#"{"done": true, "var2": false}"#
                } else {
                    ""
                };
                h.complete(k, vars);
            }
            50..=56 => {
                let activated: Vec<i64> = jobs
                    .iter()
                    .filter(|j| j.1 == JobState::Activated)
                    .map(|j| j.0)
                    .collect();
                let k = if activated.is_empty() {
                    any_key(&mut rng, &job_keys)
                } else {
                    any_key(&mut rng, &activated)
                };
                let retries = rng.below(3) as i32;
                let backoff = if rng.chance(40) { 2_000 } else { 0 };
                h.fail(k, retries, "failed", backoff);
            }
            57..=59 => {
                let k = any_key(&mut rng, &job_keys);
                h.throw_error(k, "E", "thrown");
            }
            60..=64 => {
                let k = any_key(&mut rng, &job_keys);
                h.update_retries(k, rng.below(3) as i32);
            }
            65..=71 => {
                let k = any_key(&mut rng, &incidents);
                h.resolve(k);
            }
            72..=79 => {
                let k = any_key(&mut rng, &elements);
                let vars = vars_for(&mut rng);
                let local = rng.chance(30);
                h.set_variables(k, &vars, local);
            }
            80..=84 => {
                let k = any_key(&mut rng, &roots);
                h.cancel(k);
            }
            _ => {
                h.advance(rng.below(70_000) as i64);
                h.run_scheduler();
            }
        }
        h.assert_state_consistent();
    }
    h
}

/// Brings every instance of a random walk to an end: fixes variables, restores retries,
/// resolves incidents, completes jobs and fires timers until nothing is left.
fn drain(h: &mut Harness) {
    for _ in 0..200 {
        if h.count(Ks::ElementInstances) == 0 {
            break;
        }
        for e in h.element_instances() {
            if e.parent_key <= 0 {
                h.set_variables(
                    e.key,
                    r#"{"var2": false, "jobType": "dynamic", "ok": true, "x": 1}"#,
                    false,
                );
            }
        }
        // local shadows may still hide the fix: remove the reason by setting them locally too
        for e in h.element_instances() {
            if e.parent_key > 0 && !h.variables(e.key).is_empty() {
                h.set_variables(e.key, r#"{"ok": true, "x": 1}"#, true);
            }
        }
        for (k, v) in h.entries(Ks::Jobs) {
            let j: zest_engine::types::StoredJob = zest_protocol::codec::decode(&v).unwrap();
            if j.record.retries <= 0 {
                h.update_retries(zest_engine::state::read_i64(&k, 0), 1);
            }
        }
        for (k, _) in h.incidents() {
            h.resolve(k);
        }
        for (k, _) in h.entries(Ks::Jobs) {
            h.complete(zest_engine::state::read_i64(&k, 0), "");
        }
        h.advance(120_000);
        h.run_scheduler();
        h.assert_state_consistent();
    }
    h.assert_no_runtime_state();
}

/// Walks whose commands were all rejected would keep the state consistent trivially: require
/// that the walks (before draining) took the main paths (completions, retries, incidents, timers,
/// cancellation) and also met rejections.
fn assert_walks_covered_the_processors(log: &[Record]) {
    let happened = |vt: ValueType, intent: Intent| {
        log.iter()
            .any(|r| r.is_event() && r.value_type == vt && r.intent == intent)
    };
    for (vt, intent) in [
        (ValueType::Process, Created),
        (ValueType::ProcessInstance, ElementCompleted),
        (ValueType::ProcessInstance, ElementTerminated),
        (ValueType::JobBatch, Activated),
        (ValueType::Job, Completed),
        (ValueType::Job, Failed),
        (ValueType::Job, RetriesUpdated),
        (ValueType::Job, ErrorThrown),
        (ValueType::Job, TimedOut),
        (ValueType::Job, RecurredAfterBackoff),
        (ValueType::Incident, Created),
        (ValueType::Incident, Resolved),
        (ValueType::Timer, Triggered),
        (ValueType::VariableDocument, Updated),
    ] {
        assert!(happened(vt, intent), "no {vt:?} {intent:?} in the walks");
    }
    assert!(
        log.iter()
            .any(|r| r.record_type == RecordType::CommandRejection),
        "the walks met no rejection"
    );
}

#[test]
fn random_walks_keep_state_consistent_and_always_finish() {
    let mut walked = Vec::new();
    for seed in 1..=4 {
        let mut h = random_walk(seed, 250);
        walked.extend(h.log.iter().cloned());
        h.assert_replay_matches();
        drain(&mut h);
        h.assert_replay_matches();
        assert_eq!(h.unused_keys, 0, "seed {seed}");
    }
    assert_walks_covered_the_processors(&walked);
}

#[test]
fn random_walks_are_deterministic() {
    let a = random_walk(99, 200);
    let b = random_walk(99, 200);
    assert_eq!(a.log, b.log);
    assert_eq!(a.state.map, b.state.map);
}

#[test]
fn fork_into_two_end_events_completes_the_process_once() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "two_ends",
        &[
            start_event("s"),
            parallel_gateway("fork"),
            end_event("e1"),
            end_event("e2"),
            flow("f0", "s", "fork"),
            flow("a", "fork", "e1"),
            flow("b", "fork", "e2"),
        ],
    ));
    let c = h.create("two_ends", "");
    c.accepted();
    let evs = c.pi_events();
    assert_eq!(
        evs.iter()
            .filter(|e| e.1 == "two_ends" && e.0 == ElementCompleted)
            .count(),
        1
    );
    assert!(evs.ends_with(&pi(&[
        (ElementCompleted, "e1"),
        (ElementCompleting, "two_ends"),
        (ElementCompleted, "two_ends")
    ])));
    h.assert_no_runtime_state();
}

#[test]
fn a_timer_trigger_before_the_due_date_is_rejected() {
    let Some(xml) = workload("typical_process.bpmn") else {
        return;
    };
    let mut h = Harness::new();
    h.deploy_ok(&xml);
    h.create_ok("benchmark", r#"{"var2": true}"#);
    for _ in 0..3 {
        work_one(&mut h);
    }
    let (k, v) = h.entries(Ks::Timers).pop().unwrap();
    let key = zest_engine::state::read_i64(&k, 0);
    let timer: zest_protocol::TimerRecord = zest_protocol::codec::decode(&v).unwrap();
    h.advance(30_000);
    let before = h.state.map.clone();
    let b = h.internal(key, Trigger, RecordValue::Timer(timer));
    assert_eq!(b.returned[1].rejection_type, RejectionType::InvalidState);
    assert_eq!(h.state.map, before);
    assert_eq!(h.instance_of("timer1").state, ElementActivated);
}

// =============================================================================================
// Task kinds: job-based send, script and business rule tasks; pass-through undefined and manual
// tasks.

const TASK_KINDS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://zest.example">
  <bpmn:process id="kinds" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:task id="undefined">
      <bpmn:extensionElements>
        <zeebe:ioMapping>
          <zeebe:output source="=x + 1" target="y" />
        </zeebe:ioMapping>
      </bpmn:extensionElements>
    </bpmn:task>
    <bpmn:manualTask id="manual" />
    <bpmn:intermediateThrowEvent id="milestone" />
    <bpmn:sendTask id="send">
      <bpmn:extensionElements><zeebe:taskDefinition type="send-job" /></bpmn:extensionElements>
    </bpmn:sendTask>
    <bpmn:scriptTask id="script">
      <bpmn:extensionElements><zeebe:taskDefinition type="script-job" retries="5" /></bpmn:extensionElements>
    </bpmn:scriptTask>
    <bpmn:businessRuleTask id="rule">
      <bpmn:extensionElements>
        <zeebe:taskDefinition type="rule-job" />
        <zeebe:taskHeaders><zeebe:header key="k" value="v" /></zeebe:taskHeaders>
      </bpmn:extensionElements>
    </bpmn:businessRuleTask>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="undefined" />
    <bpmn:sequenceFlow id="f2" sourceRef="undefined" targetRef="manual" />
    <bpmn:sequenceFlow id="f2b" sourceRef="manual" targetRef="milestone" />
    <bpmn:sequenceFlow id="f3" sourceRef="milestone" targetRef="send" />
    <bpmn:sequenceFlow id="f4" sourceRef="send" targetRef="script" />
    <bpmn:sequenceFlow id="f5" sourceRef="script" targetRef="rule" />
    <bpmn:sequenceFlow id="f6" sourceRef="rule" targetRef="end" />
  </bpmn:process>
</bpmn:definitions>
"#;

#[test]
fn undefined_and_manual_tasks_pass_through_and_job_based_tasks_create_jobs() {
    let mut h = Harness::new();
    h.deploy_ok(TASK_KINDS);
    let c = h.create("kinds", r#"{"x": 1}"#);
    c.accepted();
    assert_eq!(
        c.pi_events()
            .into_iter()
            .filter(|(_, id)| id == "undefined" || id == "manual" || id == "milestone")
            .collect::<Vec<_>>(),
        pi(&[
            (ElementActivating, "undefined"),
            (ElementActivated, "undefined"),
            (ElementCompleting, "undefined"),
            (ElementCompleted, "undefined"),
            (ElementActivating, "manual"),
            (ElementActivated, "manual"),
            (ElementCompleting, "manual"),
            (ElementCompleted, "manual"),
            (ElementActivating, "milestone"),
            (ElementActivated, "milestone"),
            (ElementCompleting, "milestone"),
            (ElementCompleted, "milestone"),
        ])
    );
    let types: Vec<BpmnElementType> = c
        .find(ValueType::ProcessInstance, ElementActivated)
        .iter()
        .map(|r| match &r.value {
            RecordValue::ProcessInstance(p) => p.bpmn_element_type,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(types.contains(&BpmnElementType::Task), "{types:?}");
    assert!(types.contains(&BpmnElementType::ManualTask), "{types:?}");
    assert!(types.contains(&BpmnElementType::SendTask), "{types:?}");
    assert!(
        types.contains(&BpmnElementType::IntermediateThrowEvent),
        "{types:?}"
    );
    // each job sees the output of the undefined task's mapping
    for (job_type, element, retries) in [
        ("send-job", "send", 3),
        ("script-job", "script", 5),
        ("rule-job", "rule", 3),
    ] {
        let (key, job) = h.activate_one(job_type);
        assert_eq!(job.element_id, element);
        assert_eq!(job.retries, retries);
        assert_eq!(job_vars(&job)["y"], json!(2), "the output of 'undefined'");
        if element == "rule" {
            assert_eq!(job.custom_headers.get("k").map(String::as_str), Some("v"));
        }
        h.complete(key, "");
    }
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn business_rule_tasks_call_a_deployed_decision_or_raise_an_incident() {
    let mut h = Harness::new();
    // a job definition and a called decision on one task: Zeebe's rejection
    let both = TASK_KINDS.replace(
        r#"<zeebe:taskDefinition type="rule-job" />"#,
        r#"<zeebe:taskDefinition type="rule-job" /><zeebe:calledDecision decisionId="d" resultVariable="r" />"#,
    );
    let msg = h
        .deploy("kinds.bpmn", &both)
        .rejection(RejectionType::InvalidArgument);
    assert!(
        msg.contains("Must have either one 'zeebe:calledDecision' or one 'zeebe:taskDefinition' extension element"),
        "{msg}"
    );
    // without a deployed decision: CALLED_DECISION_ERROR, with Zeebe's message
    let xml = TASK_KINDS.replace(
        r#"<zeebe:taskDefinition type="rule-job" />
        <zeebe:taskHeaders><zeebe:header key="k" value="v" /></zeebe:taskHeaders>"#,
        r#"<zeebe:calledDecision decisionId="d" resultVariable="r" />"#,
    );
    h.deploy("kinds.bpmn", &xml).accepted();
    h.create_ok("kinds", r#"{"x":1}"#);
    for (key, _) in h.activate("send-job", 10) {
        h.complete(key, "{}");
    }
    for (key, _) in h.activate("script-job", 10) {
        h.complete(key, "{}");
    }
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1, "{incidents:?}");
    let incident = &incidents[0].1.record;
    assert_eq!(incident.error_type, ErrorType::CalledDecisionError);
    assert_eq!(incident.element_id, "rule");
    assert_eq!(
        incident.error_message,
        "Expected to evaluate decision 'd', but no decision found for id 'd'"
    );
}

fn script_process(expression: &str, outputs: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://zest.example">
  <bpmn:process id="script" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:scriptTask id="calc">
      <bpmn:extensionElements>
        <zeebe:script expression="{expression}" resultVariable="doubled" />
        {outputs}
      </bpmn:extensionElements>
    </bpmn:scriptTask>
    <bpmn:serviceTask id="after">
      <bpmn:extensionElements><zeebe:taskDefinition type="after" /></bpmn:extensionElements>
    </bpmn:serviceTask>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="calc" />
    <bpmn:sequenceFlow id="f2" sourceRef="calc" targetRef="after" />
    <bpmn:sequenceFlow id="f3" sourceRef="after" targetRef="end" />
  </bpmn:process>
</bpmn:definitions>
"#
    )
}

#[test]
fn script_task_writes_its_feel_result_and_completes() {
    let mut h = Harness::new();
    h.deploy_ok(&script_process("= x * 2", ""));
    let c = h.create("script", r#"{"x": 21}"#);
    c.accepted();
    assert_eq!(
        c.pi_events()
            .into_iter()
            .filter(|(_, id)| id == "calc")
            .collect::<Vec<_>>(),
        pi(&[
            (ElementActivating, "calc"),
            (ElementActivated, "calc"),
            (ElementCompleting, "calc"),
            (ElementCompleted, "calc"),
        ])
    );
    // the result variable is written while the task completes, as Zeebe does
    let evs = c.events();
    let at = |vt: ValueType, intent: Intent, label: &str| {
        evs.iter()
            .position(|e| e.0 == vt && e.1 == intent && e.2.contains(label))
            .unwrap_or_else(|| panic!("{vt:?} {intent:?} {label} in {evs:?}"))
    };
    let var = at(ValueType::Variable, Created, "doubled");
    assert!(at(ValueType::ProcessInstance, ElementCompleting, "calc") < var);
    assert!(var < at(ValueType::ProcessInstance, ElementCompleted, "calc"));
    // the result propagates to the process: the next task sees it
    let (key, job) = h.activate_one("after");
    assert_eq!(job_vars(&job)["doubled"], json!(42));
    h.complete(key, "");
    h.assert_no_runtime_state();

    // with output mappings, only their results leave the task
    let mut h = Harness::new();
    h.deploy_ok(&script_process(
        "= x * 2",
        r#"<zeebe:ioMapping><zeebe:output source="= doubled + 1" target="plusOne" /></zeebe:ioMapping>"#,
    ));
    h.create("script", r#"{"x": 1}"#).accepted();
    let (_, job) = h.activate_one("after");
    let vars = job_vars(&job);
    assert_eq!(vars["plusOne"], json!(3));
    assert!(vars.get("doubled").is_none(), "{vars}");
    h.assert_replay_matches();
}

#[test]
fn a_failing_script_raises_an_extract_value_incident() {
    let mut h = Harness::new();
    h.deploy_ok(&script_process("= assert(1, 1 > 2)", ""));
    let c = h.create("script", "");
    c.accepted();
    let (_, incident) = incident_of(&c);
    assert_eq!(incident.error_type, ErrorType::ExtractValueError);
    assert_eq!(incident.element_id, "calc");
    assert!(h.activate("after", 10).is_empty());
    h.assert_replay_matches();
}

#[test]
fn script_tasks_are_validated_at_deploy() {
    let mut h = Harness::new();
    for (expression, needle) in [
        ("1 + 1", "must be a FEEL expression"),
        ("=(", "Attribute 'expression'"),
    ] {
        let msg = h
            .deploy("script.bpmn", &script_process(expression, ""))
            .rejection(RejectionType::InvalidArgument);
        assert!(
            msg.contains("Element: calc") && msg.contains(needle),
            "{msg}"
        );
    }
    let both = script_process("= 1", r#"<zeebe:taskDefinition type="t" />"#);
    let msg = h
        .deploy("script.bpmn", &both)
        .rejection(RejectionType::InvalidArgument);
    assert!(
        msg.contains("either one 'zeebe:script' or one 'zeebe:taskDefinition'"),
        "{msg}"
    );
    let no_result = script_process("= 1", "").replace(r#" resultVariable="doubled""#, "");
    let msg = h
        .deploy("script.bpmn", &no_result)
        .rejection(RejectionType::InvalidArgument);
    assert!(msg.contains("'resultVariable'"), "{msg}");
}
