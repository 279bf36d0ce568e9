//! Processes and embedded sub-processes: scopes whose start events begin when they activate.

use serde_json::Value;
use zest_protocol::{ErrorType, Intent, ProcessInstanceResultRecord, RecordValue};

use crate::behaviour::compensation;
use crate::behaviour::element_instance::child_record;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::activate_triggered;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::events;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::message_subscriptions;
use crate::behaviour::process_deletion;
use crate::behaviour::terminate::calling_activity;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::ElementProcessor;
use crate::state::{key_i64, Ks};
use crate::types::AwaitingResult;

/// A process: its instance is the root scope.
pub(crate) struct Process;

impl ElementProcessor for Process {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        activate_scope(ctx, e, true)
    }

    /// A process completes on its own terms: the request of a create-with-result is answered,
    /// a call activity waiting for it completes, and the instance's message start lock goes.
    fn on_complete(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let (inst, model, key) = (&e.inst, &e.model, e.key());
        let awaiting: Option<AwaitingResult> = ctx.txn.get(Ks::AwaitingResults, &key_i64(key));
        let result_vars = awaiting
            .as_ref()
            .map(|a| variables::visible_selected(ctx, key, &a.fetch_variables));
        let lock = message_subscriptions::start_lock_of(ctx, key);
        compensation::delete_all(ctx, inst, model);
        ctx.event(key, Intent::ElementCompleted, pi_value(&inst.record));
        message_subscriptions::on_instance_ended(ctx, lock);
        process_deletion::on_instance_ended(ctx, inst.record.process_definition_key);
        if let Some(call) = calling_activity(ctx, &inst.record) {
            // a called process completed: so does the call activity that waits for it
            ctx.command(call.key, Intent::CompleteElement, pi_value(&call.record));
        }
        if let (Some(a), Some(vars)) = (awaiting, result_vars) {
            let result = ProcessInstanceResultRecord {
                bpmn_process_id: inst.record.bpmn_process_id.clone(),
                process_definition_key: inst.record.process_definition_key,
                version: inst.record.version,
                process_instance_key: key,
                variables: Value::Object(vars).to_string(),
                tenant_id: inst.record.tenant_id.clone(),
            };
            let record = ctx.response_only_record(
                key,
                Intent::Completed,
                RecordValue::ProcessInstanceResult(result),
            );
            ctx.respond_to(a.request_id, a.request_stream_id, record);
        }
        Ok(())
    }
}

/// An embedded sub-process or an event sub-process.
pub(crate) struct SubProcess;

impl ElementProcessor for SubProcess {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        activate_scope(ctx, e, false)
    }
}

/// Subscribes the scope's boundary events and activates its start events, or, for a process
/// (`process`), the start event of the event that started it.
fn activate_scope(ctx: &mut Ctx<'_, '_, '_>, e: &Active, process: bool) -> ProcResult {
    let inst = &e.inst;
    let model = &e.model;
    let idx = e.idx;
    let key = e.inst.key;
    let el = model.element(idx);
    if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
        return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
    }
    ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
    // a process started by an event (a message start event): activate that start event
    let trigger = if process {
        events::take_trigger(ctx, key, &inst.record, inst.record.process_definition_key)
    } else {
        None
    };
    if let Some(trigger) = trigger {
        let Some((start, _)) = model.element_by_id(&trigger.element_id) else {
            return Err(Rejection::invalid_state(format!(
                "Expected to start process '{}' at element '{}', but it has no such element",
                inst.record.bpmn_process_id, trigger.element_id
            )));
        };
        let rec = child_record(&inst.record, key, model, start);
        return activate_triggered(ctx, &rec, &trigger.variables);
    }
    for &start in &el.start_events {
        let rec = child_record(&inst.record, key, model, start);
        let child_key = ctx.next_key();
        ctx.command(child_key, Intent::ActivateElement, pi_value(&rec));
    }
    Ok(())
}
