//! Execution listeners (`zeebe:executionListeners`): jobs an element's lifecycle waits for.
//!
//! Start listeners run while the element is ACTIVATING, after its input mappings and before its
//! behaviour (subscriptions, its own job, ...); end listeners run while it is COMPLETING, after
//! its output mappings and before it leaves. Listeners of one phase run one at a time, in
//! document order: the completion of one's job (PROCESS_EVENT TRIGGERING, then the command
//! PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER) creates the next one's job, and the last one
//! lets the element go on where it stopped ([`bpmn::on_activate`], [`bpmn::on_complete`]).
//!
//! A job is a listener's when its element instance is ACTIVATING or COMPLETING: an element's
//! own job only exists once it is ACTIVATED. The appliers count the completed listeners of the
//! current phase ([`ListenerProgress`]), so an incident resolved later resumes at the listener
//! that failed.

use zest_model::{ElementIdx, ListenerEventType, Process};
use zest_protocol::{ErrorType, Intent, Record};

use crate::bpmn::{self, pi_value};
use crate::engine::{Ctx, ProcResult, Rejection};
use crate::events;
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, ListenerProgress};
use crate::variables;

/// The listener phase an element instance in state `state` is in, if any.
pub(crate) fn phase(state: Intent) -> Option<ListenerEventType> {
    match state {
        Intent::ElementActivating => Some(ListenerEventType::Start),
        Intent::ElementCompleting => Some(ListenerEventType::End),
        _ => None,
    }
}

/// How many listeners of `phase` the element instance `key` has completed.
pub(crate) fn done(ctx: &Ctx<'_, '_, '_>, key: i64, phase: ListenerEventType) -> usize {
    let progress: Option<ListenerProgress> = ctx.txn.get(Ks::ExecutionListeners, &key_i64(key));
    match progress {
        Some(p) if p.end == (phase == ListenerEventType::End) => p.done as usize,
        _ => 0,
    }
}

/// Creates the job of the next listener of `phase` the element instance has not run yet.
/// True when the element waits for it; false when every listener of the phase has run. A
/// listener whose job type or retries cannot be evaluated raises an incident (true: the
/// element waits for its resolution).
pub(crate) fn run_next(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    idx: ElementIdx,
    phase: ListenerEventType,
) -> ProcResult<bool> {
    let el = model.element(idx);
    if el.execution_listeners.is_empty() {
        return Ok(false);
    }
    let listeners = el.listeners(phase);
    let Some(listener) = listeners.get(done(ctx, inst.key, phase)) else {
        return Ok(false);
    };
    let (job_type, retries) = match bpmn::job_type_and_retries(ctx, &listener.job, inst.key) {
        Ok(v) => v,
        Err(msg) => {
            bpmn::raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1)?;
            return Ok(true);
        }
    };
    let headers = el.task_headers.iter().cloned().collect();
    bpmn::create_job(ctx, inst, job_type, retries, headers, Some(phase));
    Ok(true)
}

/// A listener's job completed: its variables travel as an event trigger, and the element
/// instance goes on with COMPLETE_EXECUTION_LISTENER.
pub(crate) fn job_completed(ctx: &mut Ctx<'_, '_, '_>, inst: &ElementInstance, variables: String) {
    events::triggering(
        ctx,
        inst.key,
        &inst.record,
        &inst.record.element_id,
        variables,
    );
    ctx.command(
        inst.key,
        Intent::CompleteExecutionListener,
        pi_value(&inst.record),
    );
}

/// PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER: the listener's variables are written (a start
/// listener's as local variables of the element, an end listener's propagated from its flow
/// scope, as output mappings' are), then the next listener runs or the element goes on.
pub fn complete_execution_listener(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let key = cmd.key;
    let Some(inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(key))
    else {
        return Err(Rejection::not_found(format!(
            "Expected to complete an execution listener of element instance with key '{key}', but no such element instance was found"
        )));
    };
    let Some(phase) = phase(inst.state) else {
        return Err(Rejection::invalid_state(format!(
            "Expected to complete an execution listener of element instance with key '{key}', but it is in state {}",
            inst.state.name()
        )));
    };
    let trigger: Option<crate::types::StoredTrigger> =
        ctx.txn.get(Ks::EventTriggers, &key_i64(key));
    if let Some(trigger) = &trigger {
        let doc = variables::parse_document(&trigger.variables).unwrap_or_default();
        if !doc.is_empty() {
            match phase {
                ListenerEventType::End if inst.parent_key > 0 => {
                    variables::merge_propagate(ctx, inst.parent_key, &doc)
                }
                _ => variables::set_local_document(ctx, key, &doc, None),
            }
        }
        events::take_trigger(ctx, key, &inst.record, key);
    }
    match phase {
        ListenerEventType::Start => bpmn::on_activate(ctx, key),
        ListenerEventType::End => bpmn::on_complete(ctx, key),
    }
}
