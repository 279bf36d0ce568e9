//! HISTORY_DELETION: a finished process instance's history deletion is accepted (DELETED, the
//! fact each replica's exporter applies), a running one's refused with INVALID_STATE (the
//! REST API's 409); a decision evaluation's is accepted; a process definition's once its
//! resource is deleted. The harness checks that a follower
//! applying the same events writes the same state.

mod support;

use support::fixtures::*;
use support::*;
use zest_protocol::{HistoryDeletionRecord, Intent, RecordValue, RejectionType, ValueType};

fn deletion(key: i64, resource_type: &str) -> RecordValue {
    RecordValue::HistoryDeletion(HistoryDeletionRecord {
        resource_key: key,
        resource_type: resource_type.into(),
    })
}

fn delete(h: &mut Harness, key: i64, resource_type: &str) -> Batch {
    h.client(key, Intent::Delete, deletion(key, resource_type))
}

#[test]
fn a_running_instance_is_refused_and_a_finished_one_deleted() {
    let mut h = deployed_one_task();
    let pi = h.create_ok("benchmark", "{}");
    let refused = delete(&mut h, pi, HistoryDeletionRecord::PROCESS_INSTANCE);
    let reason = refused.rejection(RejectionType::InvalidState);
    assert!(reason.contains("still active"), "{reason}");
    assert_eq!(
        refused.count(ValueType::HistoryDeletion, Intent::Deleted),
        0
    );

    let (job, _) = h.activate_one(JOB_TYPE);
    h.complete(job, "{}").accepted();
    let deleted = delete(&mut h, pi, HistoryDeletionRecord::PROCESS_INSTANCE);
    let event = deleted.accepted();
    assert_eq!((event.intent, event.key), (Intent::Deleted, pi));
    assert_eq!(
        event.value,
        deletion(pi, HistoryDeletionRecord::PROCESS_INSTANCE)
    );
    assert_eq!(
        deleted.count(ValueType::HistoryDeletion, Intent::Deleted),
        1
    );
}

#[test]
fn an_active_element_instance_is_not_a_finished_instance() {
    let mut h = deployed_one_task();
    let pi = h.create_ok("benchmark", "{}");
    let (_, job) = h.activate_one(JOB_TYPE);
    let refused = delete(
        &mut h,
        job.element_instance_key,
        HistoryDeletionRecord::PROCESS_INSTANCE,
    );
    let reason = refused.rejection(RejectionType::InvalidState);
    assert!(reason.contains("active element instance"), "{reason}");
    // a canceled (TERMINATED) instance may go
    h.cancel(pi).accepted();
    let deleted = delete(&mut h, pi, HistoryDeletionRecord::PROCESS_INSTANCE);
    assert_eq!(deleted.accepted().intent, Intent::Deleted);
}

#[test]
fn a_decision_evaluation_is_deleted_and_an_unknown_type_refused() {
    let mut h = Harness::new();
    // the engine keeps no evaluation: the gateway has found it in history
    let evaluation = (1i64 << 51) | 4242;
    let deleted = delete(&mut h, evaluation, HistoryDeletionRecord::DECISION_INSTANCE);
    assert_eq!(deleted.accepted().intent, Intent::Deleted);
    delete(&mut h, evaluation, "FORM").rejection(RejectionType::InvalidArgument);
}

#[test]
fn a_process_definition_is_deleted_once_its_resource_is() {
    let mut h = Harness::new();
    let definition = h.deploy_ok(ONE_TASK);
    let kind = HistoryDeletionRecord::PROCESS_DEFINITION;
    let reason = delete(&mut h, definition, kind).rejection(RejectionType::InvalidState);
    assert!(reason.contains("still deployed"), "{reason}");
    h.delete_resource(definition).accepted();
    let deleted = delete(&mut h, definition, kind);
    let event = deleted.accepted();
    assert_eq!((event.intent, event.key), (Intent::Deleted, definition));
    assert_eq!(event.value, deletion(definition, kind));
}
