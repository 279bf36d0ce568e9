//! Execution listeners (`zeebe:executionListeners`): jobs an element's lifecycle waits for.
//!
//! Start listeners run while the element is ACTIVATING, after its input mappings and before its
//! behaviour (subscriptions, its own job, ...); end listeners run while it is COMPLETING, after
//! its output mappings and before it leaves. Listeners of one phase run one at a time, in
//! document order: the completion of one's job (PROCESS_EVENT TRIGGERING, then the command
//! PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER) creates the next one's job, and the last one
//! lets the element go on where it stopped (`element::lifecycle::on_activate`, `on_complete`;
//! the command is `processors/execution_listener.rs`).
//!
//! A job is a listener's when its element instance is ACTIVATING or COMPLETING: an element's
//! own job only exists once it is ACTIVATED. The appliers count the completed listeners of the
//! current phase ([`ListenerProgress`]), so an incident resolved later resumes at the listener
//! that failed.

use zest_model::{ElementIdx, ListenerEventType, Process};
use zest_protocol::{ErrorType, Intent};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::events;
use crate::behaviour::expressions::job_type_and_retries;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::jobs::create_job;
use crate::context::{Ctx, ProcResult};
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, ListenerProgress};

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
    let (job_type, retries) = match job_type_and_retries(ctx, &listener.job, inst.key) {
        Ok(v) => v,
        Err(msg) => {
            raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1)?;
            return Ok(true);
        }
    };
    let headers = el.task_headers.iter().cloned().collect();
    create_job(ctx, inst, job_type, retries, headers, Some(phase));
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
