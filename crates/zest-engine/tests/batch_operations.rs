//! BATCH_OPERATION on partition 1: the operation's lifecycle as the broker's driver and the
//! REST API drive it (created ACTIVE; chunks recorded once, in order, only while ACTIVE;
//! suspend, resume, cancel; the last chunk completes it). The harness checks that a follower
//! applying the same events writes the same state (what a new leader of partition 1 holds).

mod support;

use support::*;
use zest_protocol::{
    BatchOperationItem, BatchOperationRecord, Intent, RecordValue, RejectionType, ValueType,
};

fn value(r: BatchOperationRecord) -> RecordValue {
    RecordValue::BatchOperation(Box::new(r))
}

fn op(r: &zest_protocol::Record) -> &BatchOperationRecord {
    match &r.value {
        RecordValue::BatchOperation(b) => b,
        v => panic!("not a batch operation: {v:?}"),
    }
}

fn chunk(key: i64, from: &str, to: &str, items: &[(i64, &str)], last: bool) -> RecordValue {
    value(BatchOperationRecord {
        batch_operation_key: key,
        from_cursor: from.into(),
        cursor: to.into(),
        total: 3,
        items: items
            .iter()
            .map(|(k, s)| BatchOperationItem {
                item_key: *k,
                process_instance_key: *k,
                state: s.to_string(),
                error_message: String::new(),
            })
            .collect(),
        last_chunk: last,
        ..Default::default()
    })
}

fn create(h: &mut Harness) -> i64 {
    let created = h.client(
        -1,
        Intent::Create,
        value(BatchOperationRecord {
            batch_operation_type: "CANCEL_PROCESS_INSTANCE".into(),
            filter: r#"{"processDefinitionId":"p"}"#.into(),
            ..Default::default()
        }),
    );
    let r = created.accepted().clone();
    assert_eq!(r.intent, Intent::Created);
    assert_eq!(op(&r).state, "ACTIVE");
    r.key
}

#[test]
fn chunks_are_counted_once_and_the_last_completes_the_operation() {
    let mut h = Harness::new();
    let key = create(&mut h);
    let first = h.client(
        key,
        Intent::Execute,
        chunk(key, "", "c1", &[(10, "COMPLETED"), (11, "FAILED")], false),
    );
    let executed = first.accepted();
    assert_eq!(
        (
            op(executed).completed,
            op(executed).failed,
            op(executed).total
        ),
        (1, 1, 3)
    );
    // the same chunk again (a deposed leader's driver) is refused
    let again = h.client(
        key,
        Intent::Execute,
        chunk(key, "", "c1", &[(10, "COMPLETED")], false),
    );
    again.rejection(RejectionType::InvalidState);
    h.restart_engine();
    let last = h.client(
        key,
        Intent::Execute,
        chunk(key, "c1", "c2", &[(12, "COMPLETED")], true),
    );
    assert_eq!(op(last.accepted()).completed, 2);
    assert_eq!(last.count(ValueType::BatchOperation, Intent::Completed), 1);
    // a completed operation is gone: nothing more can be done to it
    let cancel = h.client(key, Intent::Cancel, chunk(key, "", "", &[], false));
    cancel.rejection(RejectionType::NotFound);
}

#[test]
fn a_suspended_operation_records_nothing_until_resumed_and_a_canceled_one_ends() {
    let mut h = Harness::new();
    let key = create(&mut h);
    let lifecycle = |h: &mut Harness, intent| h.client(key, intent, chunk(key, "", "", &[], false));
    assert_eq!(
        op(lifecycle(&mut h, Intent::Suspend).accepted()).state,
        "SUSPENDED"
    );
    lifecycle(&mut h, Intent::Suspend).rejection(RejectionType::InvalidState);
    let refused = h.client(
        key,
        Intent::Execute,
        chunk(key, "", "c1", &[(10, "COMPLETED")], false),
    );
    refused.rejection(RejectionType::InvalidState);
    assert_eq!(
        op(lifecycle(&mut h, Intent::Resume).accepted()).state,
        "ACTIVE"
    );
    lifecycle(&mut h, Intent::Resume).rejection(RejectionType::InvalidState);
    let canceled = lifecycle(&mut h, Intent::Cancel);
    assert_eq!(canceled.accepted().intent, Intent::Canceled);
    assert_eq!(op(canceled.accepted()).state, "CANCELED");
    let after = h.client(
        key,
        Intent::Execute,
        chunk(key, "", "c1", &[(10, "COMPLETED")], false),
    );
    after.rejection(RejectionType::NotFound);
}

#[test]
fn an_unknown_type_is_refused() {
    let mut h = Harness::new();
    let b = h.client(
        -1,
        Intent::Create,
        value(BatchOperationRecord {
            batch_operation_type: "DELETE_EVERYTHING".into(),
            ..Default::default()
        }),
    );
    let reason = b.rejection(RejectionType::InvalidArgument);
    assert!(reason.contains("DELETE_EVERYTHING"), "{reason}");
}

#[test]
fn history_deletions_are_operations_and_decision_definition_deletions_not_yet() {
    let mut h = Harness::new();
    let create = |h: &mut Harness, kind: &str| {
        let value = value(BatchOperationRecord {
            batch_operation_type: kind.into(),
            filter: "{}".into(),
            ..Default::default()
        });
        h.client(-1, Intent::Create, value)
    };
    for kind in [
        "DELETE_PROCESS_INSTANCE",
        "DELETE_DECISION_INSTANCE",
        "DELETE_PROCESS_DEFINITION",
    ] {
        let created = create(&mut h, kind);
        assert_eq!(op(created.accepted()).batch_operation_type, kind);
        assert_eq!(op(created.accepted()).state, "ACTIVE");
    }
    // the spec deletes the history of process resources only
    create(&mut h, "DELETE_DECISION_DEFINITION").rejection(RejectionType::InvalidArgument);
}
