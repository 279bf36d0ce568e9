//! Process instance migration: what users see besides the record order and the rejections
//! that tests/anchor.rs checks against Zeebe (the `migrate` scenario).

mod support;

use support::*;
use zest_protocol::{Intent, RejectionType, ValueType};

fn user_task(id: &str) -> String {
    format!(
        r#"<bpmn:userTask id="{id}"><bpmn:extensionElements><zeebe:userTask /></bpmn:extensionElements></bpmn:userTask>"#
    )
}

#[test]
fn a_camunda_user_task_moves_to_the_new_version_and_completes_there() {
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "p",
        &[
            start_event("s"),
            user_task("review"),
            end_event("e"),
            flow("f1", "s", "review"),
            flow("f2", "review", "e"),
        ],
    ));
    let pik = h.create_ok("p", r#"{"x":1}"#);
    let v2 = h.deploy_ok(&process(
        "p",
        &[
            start_event("s"),
            user_task("approve"),
            service_task("archive", "archive", ""),
            end_event("e"),
            flow("f1", "s", "approve"),
            flow("f2", "approve", "archive"),
            flow("f3", "archive", "e"),
        ],
    ));
    let batch = h.migrate(pik, v2, &[("review", "approve")]);
    batch.accepted();
    assert_eq!(batch.count(ValueType::UserTask, Intent::Migrated), 1);
    assert_eq!(h.instance_of("approve").record.process_definition_key, v2);
    // the same task, created while it was "review"
    let task = h.user_task_key("review");
    h.complete_user_task(task, "").accepted();
    // version 2 goes on to its archive task
    let (_, job) = h.activate_one("archive");
    assert_eq!(job.process_definition_key, v2);
    assert_eq!(job.process_definition_version, 2);
}

#[test]
fn boundary_events_move_with_their_activity_or_are_replaced() {
    let mut h = Harness::new();
    let boundary = r#"<bpmn:boundaryEvent id="late" attachedToRef="work"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:boundaryEvent><bpmn:endEvent id="e2" />"#;
    let v1 = process(
        "p",
        &[
            start_event("s"),
            service_task("work", "work", ""),
            end_event("e"),
            flow("f1", "s", "work"),
            flow("f2", "work", "e"),
            boundary.to_string(),
            flow("f3", "late", "e2"),
        ],
    );
    h.deploy_ok(&v1);
    let pik = h.create_ok("p", "");
    let v2 = h.deploy_ok(&v1.replace("PT1H", "PT2H"));
    // a boundary event mapped to something else than a boundary event of the target
    let msg = h
        .migrate(pik, v2, &[("work", "work"), ("late", "e2")])
        .rejection(RejectionType::InvalidState);
    assert!(
        msg.contains("has the boundary event 'late' mapped to 'e2'"),
        "{msg}"
    );
    // nothing changed: the instance still runs version 1
    assert_ne!(
        h.instance_of("work").record.process_definition_key,
        v2,
        "the rejected migration left the instance alone"
    );
    // unmapped: the old timer (due in 1 hour) goes, the target's (2 hours) comes
    h.migrate(pik, v2, &[("work", "work")]).accepted();
    let timers: Vec<(Intent, i64)> = h
        .log
        .iter()
        .filter_map(|r| match &r.value {
            zest_protocol::RecordValue::Timer(t) => Some((r.intent, t.due_date - T0)),
            _ => None,
        })
        .collect();
    assert_eq!(
        timers,
        [
            (Intent::Created, 3_600_000),
            (Intent::Canceled, 3_600_000),
            (Intent::Created, 7_200_000)
        ]
    );
    h.assert_state_consistent();
    h.assert_replay_matches();
}

#[test]
fn unknown_instances_and_targets_are_not_found() {
    let mut h = Harness::new();
    h.deploy_ok(&one_task("p", "work", "work", ""));
    let pik = h.create_ok("p", "");
    let msg = h
        .migrate(2251799813685999, pik, &[])
        .rejection(RejectionType::NotFound);
    assert_eq!(
        msg,
        "Expected to migrate process instance but no process instance found with key '2251799813685999'"
    );
    let msg = h
        .migrate(pik, 42, &[("work", "work")])
        .rejection(RejectionType::NotFound);
    assert_eq!(
        msg,
        "Expected to migrate process instance to process definition but no process definition found with key '42'"
    );
}

#[test]
fn a_catch_event_mapped_to_another_event_type_is_refused() {
    let mut h = Harness::new();
    let catch = |def: &str| {
        process(
            "p",
            &[
                start_event("s"),
                format!(
                    r#"<bpmn:intermediateCatchEvent id="wait">{def}</bpmn:intermediateCatchEvent>"#
                ),
                end_event("e"),
                flow("f1", "s", "wait"),
                flow("f2", "wait", "e"),
            ],
        )
    };
    h.deploy_ok(&catch(
        "<bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>",
    ));
    let pik = h.create_ok("p", "");
    let v2 = h.deploy_ok(
        &catch(r#"<bpmn:signalEventDefinition signalRef="sig" />"#).replace(
            "<bpmn:process ",
            r#"<bpmn:signal id="sig" name="go" /><bpmn:process "#,
        ),
    );
    let msg = h
        .migrate(pik, v2, &[("wait", "wait")])
        .rejection(RejectionType::InvalidState);
    assert!(
        msg.contains("event type 'TIMER' is mapped to an element with id 'wait' and different event type 'SIGNAL'"),
        "{msg}"
    );
}

/// An embedded sub-process whose inclusive join waits for the second branch; `suffix` renames
/// the tasks, the join and its incoming flows; `extra` adds elements to the sub-process.
fn inclusive_join(suffix: &str, extra: &str) -> String {
    let task = |id: &str| service_task(&format!("{id}{suffix}"), id, "");
    let body = [
        r#"<bpmn:startEvent id="ss" />"#.to_string(),
        r#"<bpmn:inclusiveGateway id="fork" />"#.to_string(),
        task("a"),
        task("b"),
        format!(r#"<bpmn:inclusiveGateway id="join{suffix}" />"#),
        r#"<bpmn:endEvent id="se" />"#.to_string(),
        flow("s0", "ss", "fork"),
        cond_flow("fa", "fork", &format!("a{suffix}"), "=true"),
        cond_flow("fb", "fork", &format!("b{suffix}"), "=true"),
        flow(
            &format!("ja{suffix}"),
            &format!("a{suffix}"),
            &format!("join{suffix}"),
        ),
        flow(
            &format!("jb{suffix}"),
            &format!("b{suffix}"),
            &format!("join{suffix}"),
        ),
        flow("s1", &format!("join{suffix}"), "se"),
        extra.to_string(),
    ]
    .concat();
    process(
        "p",
        &[
            start_event("s"),
            format!(r#"<bpmn:subProcess id="sub">{body}</bpmn:subProcess>"#),
            end_event("e"),
            flow("f1", "s", "sub"),
            flow("f2", "sub", "e"),
        ],
    )
}

#[test]
fn a_token_waiting_at_an_inclusive_join_moves_to_the_mapped_flow() {
    let mut h = Harness::new();
    h.deploy_ok(&inclusive_join("", ""));
    let pik = h.create_ok("p", "");
    let (a, _) = h.activate_one("a");
    h.complete(a, "").accepted();
    // the join waits: the token of 'ja' is in the sub-process
    let v2 = h.deploy_ok(&inclusive_join(
        "2",
        &[
            service_task("c2", "c", ""),
            r#"<bpmn:endEvent id="ce" />"#.to_string(),
            flow("jc", "c2", "ce"),
        ]
        .concat(),
    ));
    let mappings = [("sub", "sub"), ("b", "b2"), ("join", "join2")];
    // a taken flow mapped to a flow that does not lead to the mapped gateway would strand the
    // token (Zeebe accepts it; Zest refuses)
    let msg = h
        .migrate(pik, v2, &[&mappings[..], &[("ja", "jc")]].concat())
        .rejection(RejectionType::InvalidArgument);
    assert!(
        msg.contains("the taken sequence flow with id 'ja' is mapped to the sequence flow with id 'jc', which does not lead to the gateway with id 'join2'"),
        "{msg}"
    );
    let batch = h.migrate(pik, v2, &[&mappings[..], &[("ja", "ja2")]].concat());
    batch.accepted();
    assert_eq!(
        batch
            .pi_events()
            .into_iter()
            .filter(|(i, _)| matches!(i, Intent::SequenceFlowDeleted | Intent::SequenceFlowTaken))
            .collect::<Vec<_>>(),
        pi(&[
            (Intent::SequenceFlowDeleted, "ja"),
            (Intent::SequenceFlowTaken, "ja2")
        ])
    );
    // the second branch completes in the target: the join sees both tokens, the process ends
    let (b, job) = h.activate_one("b");
    assert_eq!(job.element_id, "b2");
    let done = h.complete(b, "");
    done.accepted();
    assert!(done
        .pi_events()
        .contains(&(Intent::ElementCompleted, "join2".to_string())));
    assert!(done
        .pi_events()
        .contains(&(Intent::ElementCompleted, "p".to_string())));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}
