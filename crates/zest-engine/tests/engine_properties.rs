//! Behaviour tests of the deterministic engine (driven as in behaviour.rs): deployments,
//! determinism (same commands, same records; grouped processing equals one by one; random
//! walks), incidents of expressions and mappings, timers, task kinds and script tasks.

mod support;

use serde_json::json;
use support::*;
use zest_engine::state::{key_i64, Ks, MemState, StateRead};
use zest_engine::types::{FailedStep, JobState};
use zest_protocol::{
    encode_key, BpmnElementType, ErrorType, Intent, ProcessInstanceCreationRecord, Record,
    RecordType, RecordValue, RejectionType, ValueType,
};

use Intent::*;
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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
    let mut h = deployed_one_task();
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

/// The broker processes a group of queued commands in one txn and commits them as one entry.
/// Later commands of the group must see the earlier ones' writes, and the group must produce the
/// same records as processing the commands one by one.
#[test]
fn a_group_of_commands_in_one_txn_matches_one_by_one_processing() {
    let script = |grouped: bool| {
        let mut h = deployed_one_task();
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
                RecordValue::Job(Box::new(zest_protocol::JobRecord {
                    variables: r#"{"r": 1}"#.into(),
                    ..Default::default()
                })),
            ),
            h.client_command(
                keys[1],
                Fail,
                RecordValue::Job(Box::new(zest_protocol::JobRecord {
                    retries: 0,
                    ..Default::default()
                })),
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
