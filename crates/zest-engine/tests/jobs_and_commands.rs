//! Behaviour tests of the deterministic engine (driven as in behaviour.rs): jobs (failure,
//! retries, backoff, timeouts, errors), rejections of commands, create-with-result and
//! cancellation.

mod support;

use serde_json::json;
use support::*;
use zest_engine::state::Ks;
use zest_engine::types::JobState;
use zest_protocol::{
    encode_key, ErrorType, Intent, ProcessInstanceCreationRecord, RecordType, RecordValue,
    RejectionType, ValueType,
};

use Intent::*;
// =============================================================================================
// 5. job failures, retries, errors, timeouts

#[test]
fn failed_job_with_retries_left_is_activatable_again() {
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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

#[test]
fn rejections_of_process_instance_commands() {
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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

#[test]
fn create_with_awaiting_result_answers_when_the_process_completes() {
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
