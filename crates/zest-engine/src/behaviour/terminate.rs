//! Terminating elements and scopes: batches of child terminations, releasing what an element
//! holds (jobs, subscriptions), incidents, and what follows a termination.

use zest_protocol::{Intent, ProcessInstanceBatchRecord, ProcessInstanceRecord, RecordValue};

use crate::behaviour::element_instance::load;
use crate::behaviour::element_instance::next_children;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::event_scopes::activate_boundary;
use crate::behaviour::event_scopes::activate_event_sub_process;
use crate::behaviour::event_scopes::interrupting_event_sub_process;
use crate::behaviour::event_scopes::resolve_incident_of;
use crate::behaviour::event_scopes::unsubscribe_events;
use crate::behaviour::events;
use crate::behaviour::message_subscriptions;
use crate::behaviour::user_tasks;
use crate::context::{Ctx, ProcResult};
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, StoredJob};

/// A terminate end event completed: every other element instance in its scope is terminated
/// (batch commands, one child each), and the scope completes once the last of them is gone.
pub(crate) fn terminate_siblings(ctx: &mut Ctx<'_, '_, '_>, scope_key: i64) -> ProcResult {
    let Some(scope) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(scope_key))
    else {
        return Ok(());
    };
    if terminate_children(ctx, &scope) {
        return Ok(());
    }
    complete_scope_if_done(ctx, scope_key)
}

/// Writes TERMINATE_ELEMENT for the children of `scope` that can still be terminated, one
/// PROCESS_INSTANCE_BATCH TERMINATE command at a time (Zeebe's order). False when there is
/// none, so the caller finishes the scope itself.
pub(crate) fn terminate_children(ctx: &mut Ctx<'_, '_, '_>, scope: &ElementInstance) -> bool {
    if next_children(ctx, scope.key, -1, 1).is_empty() {
        return false;
    }
    let batch = ProcessInstanceBatchRecord {
        process_instance_key: scope.record.process_instance_key,
        process_definition_key: scope.record.process_definition_key,
        batch_element_instance_key: scope.key,
        index: -1,
        tenant_id: scope.record.tenant_id.clone(),
    };
    ctx.command(
        scope.key,
        Intent::Terminate,
        RecordValue::ProcessInstanceBatch(batch),
    );
    true
}

/// Hands the rest of a PROCESS_INSTANCE_BATCH to its next command (`again` with index
/// `next`), or, with nothing left, ends it with `done`.
pub(crate) fn continue_batch(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd_key: i64,
    batch: &ProcessInstanceBatchRecord,
    next: Option<i64>,
    again: Intent,
    done: Intent,
) {
    match next {
        Some(index) => {
            let next = ProcessInstanceBatchRecord {
                index,
                ..batch.clone()
            };
            let key = ctx.next_key();
            ctx.command(key, again, RecordValue::ProcessInstanceBatch(next));
        }
        None => {
            ctx.event(
                cmd_key,
                done,
                RecordValue::ProcessInstanceBatch(batch.clone()),
            );
        }
    }
}

/// Completes a scope once no token is left in it.
pub(crate) fn complete_scope_if_done(ctx: &mut Ctx<'_, '_, '_>, scope_key: i64) -> ProcResult {
    if scope_key <= 0 {
        return Ok(());
    }
    let Some(scope) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(scope_key))
    else {
        return Ok(());
    };
    if scope.state == Intent::ElementActivated
        && scope.active_children == 0
        && scope.active_flows == 0
    {
        ctx.command(scope_key, Intent::CompleteElement, pi_value(&scope.record));
    }
    Ok(())
}

/// The rest of a termination, once the element instance let go of what it held: the process
/// it called, its children, or its end.
pub(crate) fn continue_terminating(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
) -> ProcResult {
    let key = inst.key;
    if let Some(child) = ctx.txn.get::<i64>(Ks::CalledInstances, &key_i64(key)) {
        // a call activity: the process it called goes first
        if let Some(called) = ctx
            .txn
            .get::<ElementInstance>(Ks::ElementInstances, &key_i64(child))
            .filter(|c| c.state != Intent::ElementTerminating)
        {
            ctx.command(child, Intent::TerminateElement, pi_value(&called.record));
        }
        return Ok(());
    }
    if terminate_children(ctx, inst) {
        return Ok(()); // terminated once its last child is
    }
    on_terminated(ctx, key)
}

/// What a terminating element instance lets go of: its job (canceled), user task, timers and
/// subscriptions, and its incidents (resolved). True when its user task's canceling listeners
/// run first (the termination waits for them).
pub(crate) fn release(ctx: &mut Ctx<'_, '_, '_>, inst: &ElementInstance) -> ProcResult<bool> {
    if inst.job_key > 0 {
        cancel_job(ctx, inst.job_key);
    }
    let waits = user_tasks::cancel(ctx, inst.key)?;
    unsubscribe_events(ctx, inst.key);
    resolve_incident_of(ctx, inst.key);
    Ok(waits)
}

/// Cancels a job (JOB CANCELED) and resolves its incident, if it has one.
pub(crate) fn cancel_job(ctx: &mut Ctx<'_, '_, '_>, job_key: i64) {
    if let Some(job) = ctx.txn.get::<StoredJob>(Ks::Jobs, &key_i64(job_key)) {
        ctx.event(
            job_key,
            Intent::Canceled,
            RecordValue::Job(Box::new(job.record)),
        );
        resolve_incident_of(ctx, job_key);
    }
}

/// Writes ELEMENT_TERMINATED, then: activates the boundary event that interrupted the element,
/// or lets a terminating flow scope finish once its last child is gone.
pub(crate) fn on_terminated(ctx: &mut Ctx<'_, '_, '_>, key: i64) -> ProcResult {
    let Some((inst, model, _)) = load(ctx, key) else {
        return Ok(());
    };
    let lock = if inst.parent_key <= 0 {
        message_subscriptions::start_lock_of(ctx, key)
    } else {
        None
    };
    ctx.event(key, Intent::ElementTerminated, pi_value(&inst.record));
    message_subscriptions::on_instance_ended(ctx, lock);
    if inst.parent_key <= 0 {
        let definition = inst.record.process_definition_key;
        crate::behaviour::process_deletion::on_instance_ended(ctx, definition);
    }
    if let Some(call) = calling_activity(ctx, &inst.record) {
        // a called process was terminated with the call activity waiting for it
        if call.state == Intent::ElementTerminating {
            return on_terminated(ctx, call.key);
        }
        return Ok(());
    }
    if let Some(trigger) = events::take_trigger(ctx, key, &inst.record, key)
        .filter(|t| t.element_id != inst.record.element_id)
    {
        if let Some((boundary, _)) = model.element_by_id(&trigger.element_id) {
            return activate_boundary(ctx, &inst, &model, boundary, &trigger.variables);
        }
    }
    if inst.parent_key > 0 {
        if let Some(scope) = ctx
            .txn
            .get::<ElementInstance>(Ks::ElementInstances, &key_i64(inst.parent_key))
        {
            if scope.state == Intent::ElementTerminating && scope.active_children == 0 {
                return on_terminated(ctx, scope.key);
            }
            if scope.state == Intent::ElementActivated && scope.active_children == 0 {
                if let Some(esp) = interrupting_event_sub_process(ctx, scope.key) {
                    return activate_event_sub_process(ctx, &scope, &model, &esp);
                }
            }
            // a terminate end event's scope completes once its other children are gone
            return complete_scope_if_done(ctx, scope.key);
        }
    }
    Ok(())
}

/// The call activity instance that started the process instance `process`, if any.
pub(crate) fn calling_activity(
    ctx: &Ctx<'_, '_, '_>,
    process: &ProcessInstanceRecord,
) -> Option<ElementInstance> {
    if process.flow_scope_key > 0 || process.parent_element_instance_key <= 0 {
        return None;
    }
    ctx.txn.get(
        Ks::ElementInstances,
        &key_i64(process.parent_element_instance_key),
    )
}
