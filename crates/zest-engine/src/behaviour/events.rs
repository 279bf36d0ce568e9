//! Event triggers: how an event (a job's completion, a timer, a message, a thrown error) reaches
//! the element it completes or the catch event it activates, in Zeebe's two steps. PROCESS_EVENT
//! TRIGGERING stores the trigger (with the event's variables) under the element instance it
//! belongs to; the element consumes it with PROCESS_EVENT TRIGGERED when it completes (or, for a
//! boundary event, when the activity it is attached to has been terminated).

use zest_protocol::{Intent, ProcessEventRecord, ProcessInstanceRecord, Record, RecordValue};

use crate::context::Ctx;
use crate::keys::event::*;
use crate::state::{key_i64, Ks};
use crate::types::tenant;
use crate::types::{ElementInstance, StoredTrigger};

/// PROCESS_EVENT TRIGGERING: an event for `target_element_id` reached the element instance
/// `scope_key` (the waiting element itself, or the activity a boundary event is attached to).
pub(crate) fn triggering(
    ctx: &mut Ctx<'_, '_, '_>,
    scope_key: i64,
    record: &ProcessInstanceRecord,
    target_element_id: &str,
    variables: String,
) -> Record {
    let event_key = ctx.next_key();
    ctx.event(
        event_key,
        Intent::Triggering,
        RecordValue::ProcessEvent(ProcessEventRecord {
            scope_key,
            target_element_id: target_element_id.to_string(),
            variables,
            process_definition_key: record.process_definition_key,
            process_instance_key: record.process_instance_key,
            tenant_id: tenant(&record.tenant_id),
        }),
    )
    .clone()
}

/// An event (a job's completion, a timer, a message) reached the element instance `inst` that
/// waits for it: TRIGGERING with the event's variables, then the element's COMPLETE_ELEMENT.
/// `target_element_id` is the element itself, or for an event-based gateway the catch event
/// whose event came.
pub(crate) fn complete_by_event(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    target_element_id: &str,
    variables: String,
) {
    triggering(ctx, inst.key, &inst.record, target_element_id, variables);
    ctx.command(
        inst.key,
        Intent::CompleteElement,
        RecordValue::ProcessInstance(inst.record.clone()),
    );
}

/// Consumes the event that triggered an element (PROCESS_EVENT TRIGGERED) and returns its
/// variables, if one is pending.
pub(crate) fn take_trigger(
    ctx: &mut Ctx<'_, '_, '_>,
    key: i64,
    record: &ProcessInstanceRecord,
    scope_key: i64,
) -> Option<StoredTrigger> {
    let stored_at = if scope_key == record.process_definition_key {
        start_trigger_key(key)
    } else {
        key_i64(key)
    };
    let trigger: StoredTrigger = ctx.txn.get(Ks::EventTriggers, &stored_at)?;
    ctx.event(
        trigger.event_key,
        Intent::Triggered,
        RecordValue::ProcessEvent(ProcessEventRecord {
            scope_key,
            target_element_id: trigger.element_id.clone(),
            variables: trigger.variables.clone(),
            process_definition_key: record.process_definition_key,
            process_instance_key: record.process_instance_key,
            tenant_id: tenant(&record.tenant_id),
        }),
    );
    Some(trigger)
}

/// An event (a message, a signal, a timer) starts a new instance of `process` at the start
/// event `start_event_id`: PROCESS_EVENT TRIGGERING (kept under the process definition), then
/// the process's ACTIVATE_ELEMENT. Returns the new instance's key.
pub(crate) fn start_process(
    ctx: &mut Ctx<'_, '_, '_>,
    process: &crate::types::ProcessHead,
    start_event_id: &str,
    variables: String,
) -> i64 {
    let instance_key = ctx.next_key();
    start_process_with_key(ctx, process, instance_key, start_event_id, variables);
    instance_key
}

/// [`start_process`] with a key chosen by the caller (a message start event records it first).
pub(crate) fn start_process_with_key(
    ctx: &mut Ctx<'_, '_, '_>,
    process: &crate::types::ProcessHead,
    instance_key: i64,
    start_event_id: &str,
    variables: String,
) {
    let record = ProcessInstanceRecord {
        bpmn_process_id: process.bpmn_process_id.clone(),
        version: process.version,
        process_definition_key: process.process_definition_key,
        process_instance_key: instance_key,
        element_id: process.bpmn_process_id.clone(),
        flow_scope_key: -1,
        bpmn_element_type: zest_protocol::BpmnElementType::Process,
        bpmn_event_type: zest_protocol::BpmnEventType::Unspecified,
        parent_process_instance_key: -1,
        parent_element_instance_key: -1,
        tenant_id: tenant(&process.tenant_id),
    };
    // a start event's trigger belongs to the process definition (trigger_key)
    triggering(
        ctx,
        process.process_definition_key,
        &record,
        start_event_id,
        variables,
    );
    ctx.command(
        instance_key,
        Intent::ActivateElement,
        RecordValue::ProcessInstance(record),
    );
}
