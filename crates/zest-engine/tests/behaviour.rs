//! Behaviour tests of the deterministic engine, driven like the broker drives it (see
//! `support::Harness`): every batch is processed, its txn writes dropped, and the committed
//! records applied by a second engine; processing and applying must write the same state.

mod support;

use serde_json::json;
use support::*;
use zest_engine::state::Ks;
use zest_engine::types::{FailedStep, JobState};
use zest_protocol::{
    encode_key, partition_of_key, BpmnElementType, ErrorType, Intent, Record, RecordType,
    RecordValue, RejectionType, ValueType,
};

use Intent::*;
// =============================================================================================
// 1. one task, end to end

// One scenario followed record by record, as Zeebe writes them: it reads best whole.
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
