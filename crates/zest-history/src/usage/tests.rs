//! Usage metrics: root instances by start, successful evaluations by date, distinct assignees
//! by assignment, each in `[start, end)`, per tenant; combined exactly over partitions; the
//! assignees' minutes removed by retention.

use serde_json::json;
use zest_protocol::{
    BpmnElementType, BpmnEventType, DecisionEvaluationRecord, EvaluatedDecisionValue, Intent,
    ProcessInstanceRecord, Record, RecordValue, UserTaskRecord,
};

use super::{Name, Share, Tally, Window};
use crate::History;

/// A minute's start (epoch ms): every time below is a second offset from it.
const T0: i64 = 1_735_689_600_000;
const S: i64 = 1000;

fn at(
    partition: u32,
    position: u64,
    second: i64,
    key: i64,
    intent: Intent,
    value: RecordValue,
) -> Record {
    Record {
        partition_id: partition,
        timestamp: T0 + second * S,
        ..crate::tests::event(position, key, intent, value)
    }
}

fn instance(key: i64, parent: i64, tenant: &str) -> RecordValue {
    RecordValue::ProcessInstance(ProcessInstanceRecord {
        bpmn_process_id: "order".into(),
        version: 1,
        process_definition_key: 10,
        process_instance_key: key,
        element_id: "order".into(),
        flow_scope_key: -1,
        bpmn_element_type: BpmnElementType::Process,
        bpmn_event_type: BpmnEventType::Unspecified,
        parent_process_instance_key: parent,
        parent_element_instance_key: -1,
        tenant_id: tenant.into(),
    })
}

/// An evaluation of `decisions` decisions (`failed`: the last one failed).
fn evaluation(decisions: usize, failed: bool, tenant: &str) -> RecordValue {
    let evaluated = (0..decisions)
        .map(|i| EvaluatedDecisionValue {
            decision_id: format!("d{i}"),
            decision_key: 30 + i as i64,
            ..Default::default()
        })
        .collect();
    RecordValue::DecisionEvaluation(Box::new(DecisionEvaluationRecord {
        decision_id: format!("d{}", decisions - 1),
        evaluated_decisions: evaluated,
        failed_decision_id: if failed {
            format!("d{}", decisions - 1)
        } else {
            String::new()
        },
        process_instance_key: -1,
        tenant_id: tenant.into(),
        ..Default::default()
    }))
}

fn task(assignee: &str, tenant: &str) -> RecordValue {
    RecordValue::UserTask(Box::new(UserTaskRecord {
        assignee: assignee.into(),
        tenant_id: tenant.into(),
        ..UserTaskRecord::command()
    }))
}

/// Partition `p`'s records (keys in its high bits), at seconds from T0:
/// 0 root instance (default tenant), 10 its child (not a root), 70 root instance (acme);
/// 20 an evaluation of two decisions (default), 30 a failed one, 90 one of one (acme);
/// assignments: mary 5 (default) and 65 (default, another task), john 80 (acme), mary 100
/// (acme); an ASSIGNING with an assignee and an unassignment (no assignee) count nothing.
fn records(p: u32) -> Vec<Record> {
    let k = (p as i64) << 51;
    let d = "<default>";
    vec![
        at(
            p,
            1,
            0,
            k + 100,
            Intent::ElementActivating,
            instance(k + 100, -1, d),
        ),
        at(p, 2, 5, k + 200, Intent::Assigned, task("mary", d)),
        at(
            p,
            3,
            10,
            k + 110,
            Intent::ElementActivating,
            instance(k + 110, k + 100, d),
        ),
        at(
            p,
            4,
            20,
            k + 300,
            Intent::Evaluated,
            evaluation(2, false, d),
        ),
        at(p, 5, 30, k + 310, Intent::Failed, evaluation(2, true, d)),
        at(p, 6, 65, k + 201, Intent::Assigned, task("mary", d)),
        at(
            p,
            7,
            70,
            k + 120,
            Intent::ElementActivating,
            instance(k + 120, -1, "acme"),
        ),
        at(p, 8, 75, k + 203, Intent::Assigning, task("ann", "acme")),
        at(p, 9, 80, k + 202, Intent::Assigned, task("john", "acme")),
        at(
            p,
            10,
            90,
            k + 320,
            Intent::Evaluated,
            evaluation(1, false, "acme"),
        ),
        at(p, 11, 100, k + 203, Intent::Assigned, task("mary", "acme")),
        at(p, 12, 110, k + 202, Intent::Assigned, task("", "acme")),
    ]
}

fn window(from: i64, to: i64, tenant: Option<&str>) -> Window {
    Window {
        start: T0 + from * S,
        end: T0 + to * S,
        tenant: tenant.map(String::from),
    }
}

fn figures(h: &History, w: Window, with_tenants: bool) -> serde_json::Value {
    h.usage(&w).unwrap().response(with_tenants)
}

fn history(name: &str, partitions: &[u32]) -> (std::path::PathBuf, History) {
    let (dir, h) = crate::tests::open(&format!("usage-{name}"));
    for p in partitions {
        h.export(*p, &records(*p), 100).unwrap();
    }
    (dir, h)
}

#[test]
fn each_figure_counts_what_camunda_counts_in_the_window_per_tenant() {
    let (dir, h) = history("figures", &[1]);
    assert_eq!(
        figures(&h, window(0, 200, None), true),
        json!({
            "processInstances": 2, "decisionInstances": 2, "assignees": 2, "activeTenants": 2,
            "tenants": {
                "<default>": {"processInstances": 1, "decisionInstances": 1, "assignees": 1},
                "acme": {"processInstances": 1, "decisionInstances": 1, "assignees": 2},
            }
        })
    );
    // without the breakdown, the tenants object is empty
    assert_eq!(
        figures(&h, window(0, 200, None), false),
        json!({"processInstances": 2, "decisionInstances": 2, "assignees": 2,
               "activeTenants": 2, "tenants": {}})
    );
    // one tenant's
    assert_eq!(
        figures(&h, window(0, 200, Some("acme")), true),
        json!({"processInstances": 1, "decisionInstances": 1, "assignees": 2, "activeTenants": 1,
               "tenants": {"acme": {"processInstances": 1, "decisionInstances": 1, "assignees": 2}}})
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_window_includes_its_start_and_excludes_its_end() {
    let (dir, h) = history("windows", &[1]);
    let total = |from, to| {
        let v = figures(&h, window(from, to, None), false);
        (
            v["processInstances"].clone(),
            v["decisionInstances"].clone(),
            v["assignees"].clone(),
        )
    };
    // the root at 0 is in [0, 5); mary's assignment at 5 is not
    assert_eq!(total(0, 5), (json!(1), json!(0), json!(0)));
    assert_eq!(total(0, 6), (json!(1), json!(0), json!(1)));
    // within the first minute, after mary's assignment: the evaluation at 20 (the failed one
    // at 30 is not counted)
    assert_eq!(total(6, 60), (json!(0), json!(1), json!(0)));
    // mary (65, 100) and john (80): two users; the root at 70; the evaluation at 90
    assert_eq!(total(60, 200), (json!(1), json!(1), json!(2)));
    // only mary's assignment at 100, in the middle of its minute
    assert_eq!(total(95, 101), (json!(0), json!(0), json!(1)));
    // empty windows, and one after everything
    assert_eq!(total(50, 50), (json!(0), json!(0), json!(0)));
    assert_eq!(total(90, 90), (json!(0), json!(0), json!(0)));
    assert_eq!(
        figures(&h, window(120, 3600, None), true),
        json!({"processInstances": 0, "decisionInstances": 0, "assignees": 0,
               "activeTenants": 0, "tenants": {}})
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn partitions_shares_combine_exactly_and_export_again_changes_nothing() {
    let (dir, h) = history("partitions", &[1, 2]);
    // a record exported twice (at-least-once delivery) is taken in once
    h.export(2, &records(2), 100).unwrap();
    let w = window(0, 200, None);
    let mut tally = Tally::default();
    let shares: Vec<Share> = [1, 2]
        .iter()
        .map(|p| h.usage_share(&w, None, &[*p]).unwrap())
        .collect();
    assert_eq!(tally.add(&shares), None);
    let expected = json!({
        "processInstances": 4, "decisionInstances": 4, "assignees": 2, "activeTenants": 2,
        "tenants": {
            "<default>": {"processInstances": 2, "decisionInstances": 2, "assignees": 1},
            "acme": {"processInstances": 2, "decisionInstances": 2, "assignees": 2},
        }
    });
    // mary and john are assigned in both partitions: counted once each
    assert_eq!(tally.response(true), expected);
    assert_eq!(figures(&h, w, true), expected);
    let _ = std::fs::remove_dir_all(dir);
}

fn names(pairs: &[(&str, &str)]) -> Vec<Name> {
    pairs
        .iter()
        .map(|(a, t)| (a.to_string(), t.to_string()))
        .collect()
}

#[test]
fn a_tally_counts_each_pair_once_over_rounds_up_to_what_every_share_has_sent() {
    let mut tally = Tally::default();
    let first = [
        Share {
            names: names(&[("a", "t"), ("c", "t")]),
            more: true,
            ..Share::default()
        },
        Share {
            names: names(&[("b", "t"), ("c", "t"), ("c", "u"), ("d", "t")]),
            more: false,
            ..Share::default()
        },
    ];
    // the first share may still hold pairs after (c, t): only up to it is counted
    let cursor = tally.add(&first);
    assert_eq!(cursor, Some(("c".to_string(), "t".to_string())));
    let second = [
        Share {
            names: names(&[("e", "u")]),
            more: false,
            ..Share::default()
        },
        Share {
            names: names(&[("c", "u"), ("d", "t")]),
            more: false,
            ..Share::default()
        },
    ];
    assert_eq!(tally.add(&second), None);
    let v = tally.response(true);
    assert_eq!(v["assignees"], json!(5));
    assert_eq!(v["tenants"]["t"]["assignees"], json!(4));
    assert_eq!(v["tenants"]["u"]["assignees"], json!(2));
}

#[test]
fn retention_removes_the_assignees_minutes_before_the_cutoff() {
    let (dir, h) = history("retention", &[1]);
    let assignees = |from, to| figures(&h, window(from, to, None), false)["assignees"].clone();
    assert_eq!(assignees(0, 60), json!(1));
    h.remove_expired(T0 + 70 * S, 10).unwrap();
    // the first minute went; the second (mary at 65, john at 80) stays
    assert_eq!(assignees(0, 60), json!(0));
    assert_eq!(assignees(60, 120), json!(2));
    let _ = std::fs::remove_dir_all(dir);
}
