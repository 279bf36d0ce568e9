//! The lifecycle every element shares: the commands ACTIVATE_ELEMENT, COMPLETE_ELEMENT and
//! TERMINATE_ELEMENT, and the steps around an element's own behaviour (input and output
//! mappings, execution listeners, multi-instance inner instances, event variables). What each
//! element kind does itself is its [`ElementProcessor`](super::kind::ElementProcessor).

use std::sync::Arc;

use zest_model::{ElementIdx, ListenerEventType, Process};
use zest_protocol::{
    ErrorType, Intent, ProcessInstanceBatchRecord, ProcessInstanceRecord, Record, RecordValue,
    RejectionType,
};

use crate::behaviour::compensation;
use crate::behaviour::element_instance::instance_state;
use crate::behaviour::element_instance::load;
use crate::behaviour::element_instance::next_children;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::after_event_gateway;
use crate::behaviour::event_scopes::interrupting_event_sub_process;
use crate::behaviour::event_scopes::is_start_event;
use crate::behaviour::event_scopes::subscribe_event_sub_processes;
use crate::behaviour::event_scopes::take_event_sub_process_trigger;
use crate::behaviour::event_scopes::unsubscribe_events;
use crate::behaviour::events;
use crate::behaviour::expressions::evaluate_mappings;
use crate::behaviour::expressions::mapping_variables;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::listeners;
use crate::behaviour::terminate::continue_batch;
use crate::behaviour::terminate::continue_terminating;
use crate::behaviour::terminate::release;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::ad_hoc;
use crate::element::kind::EventVariables;
use crate::element::multi_instance;
use crate::keys::join_token_key;
use crate::state::{key_i64, read_i64, Ks};
use crate::types::ElementInstance;

/// ACTIVATE_ELEMENT: the element instance starts its lifecycle.
pub fn activate_element(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let RecordValue::ProcessInstance(pi) = &cmd.value else {
        unreachable!("dispatch guarantees the value type")
    };
    if pi.flow_scope_key > 0 {
        let scope: Option<ElementInstance> = ctx
            .txn
            .get(Ks::ElementInstances, &key_i64(pi.flow_scope_key));
        if !scope.map(|s| s.is_active()).unwrap_or(false) {
            // its scope was interrupted earlier in the batch
            ctx.reject(
                cmd,
                RejectionType::InvalidState,
                format!(
                    "Expected to activate element '{}' in flow scope '{}', but the flow scope is not active",
                    pi.element_id, pi.flow_scope_key
                ),
            );
            return Ok(());
        }
    }
    if pi.flow_scope_key > 0 {
        if let Some(esp) = interrupting_event_sub_process(ctx, pi.flow_scope_key) {
            if esp != pi.element_id {
                // an interrupting event sub-process is taking over the scope
                ctx.reject(
                    cmd,
                    RejectionType::InvalidState,
                    format!(
                        "Expected to activate element '{}' in flow scope '{}', but the flow scope is interrupted by the event sub-process '{esp}'",
                        pi.element_id, pi.flow_scope_key
                    ),
                );
                return Ok(());
            }
        }
    }
    if pi.flow_scope_key > 0 && !join_ready(ctx, pi) {
        // a join activates once a token arrived on each incoming flow (inclusive: each flow a
        // token can still reach); Zeebe rejects the activations before that
        let reason = if pi.bpmn_element_type == zest_model::BpmnElementType::InclusiveGateway {
            format!("Expected to be able to activate inclusive gateway '{}', but not all satisfied sequence flows have been taken.", pi.element_id)
        } else {
            format!("Expected to be able to activate parallel gateway '{}', but not all sequence flows have been taken.", pi.element_id)
        };
        ctx.reject(cmd, RejectionType::InvalidState, reason);
        return Ok(());
    }
    ctx.event(cmd.key, Intent::ElementActivating, pi_value(pi));
    on_activate(ctx, cmd.key)
}

/// False for a parallel gateway joining several flows while a flow has no token yet, and for
/// an inclusive gateway while a flow without a token can still be reached from an element
/// instance of the scope.
fn join_ready(ctx: &mut Ctx<'_, '_, '_>, pi: &ProcessInstanceRecord) -> bool {
    let inclusive = pi.bpmn_element_type == zest_model::BpmnElementType::InclusiveGateway;
    if pi.bpmn_element_type != zest_model::BpmnElementType::ParallelGateway && !inclusive {
        return true;
    }
    let Some(model) = ctx.models.get(ctx.txn, pi.process_definition_key) else {
        return true;
    };
    let Some((_, target)) = model.element_by_id(&pi.element_id) else {
        return true;
    };
    if target.incoming.len() < 2 {
        return true;
    }
    let Some(scope) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(pi.flow_scope_key))
    else {
        return true;
    };
    let has_token = |f: usize| {
        scope
            .join_tokens
            .get(&join_token_key(&target.id, &model.flow(f).id))
            .copied()
            .unwrap_or(0)
            > 0
    };
    if !inclusive {
        return target.incoming.iter().all(|&f| has_token(f));
    }
    let waiting: Vec<usize> = target
        .incoming
        .iter()
        .copied()
        .filter(|&f| !has_token(f))
        .collect();
    if waiting.is_empty() {
        return true;
    }
    // the elements still active in the scope: can one of them reach a flow without token?
    let children =
        ctx.txn
            .scan_prefix(Ks::ElementChildren, &key_i64(pi.flow_scope_key), usize::MAX);
    let mut starts = Vec::new();
    for (k, _) in children {
        let child_key = read_i64(&k, 8);
        if let Some(child) = ctx
            .txn
            .get::<ElementInstance>(Ks::ElementInstances, &key_i64(child_key))
        {
            if child.record.element_id != target.id {
                if let Some((idx, _)) = model.element_by_id(&child.record.element_id) {
                    starts.push(idx);
                }
            }
        }
    }
    !can_reach_any(&model, &starts, &waiting)
}

/// Whether a path of sequence flows (also through boundary events and link events) leads from
/// one of the elements `from` to one of the flows `flows`.
fn can_reach_any(model: &Process, from: &[ElementIdx], flows: &[usize]) -> bool {
    let mut seen = vec![false; model.elements.len()];
    let mut stack: Vec<ElementIdx> = from.to_vec();
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e], true) {
            continue;
        }
        let el = model.element(e);
        for &f in &el.outgoing {
            if flows.contains(&f) {
                return true;
            }
            stack.push(model.flow(f).target);
        }
        stack.extend(el.boundary_events.iter().copied());
        stack.extend(el.link_target);
    }
    false
}

/// The part of activation after ELEMENT_ACTIVATING; re-run when an incident on it is resolved.
pub fn on_activate(ctx: &mut Ctx<'_, '_, '_>, key: i64) -> ProcResult {
    let Some((inst, model, idx)) = load(ctx, key) else {
        return Err(Rejection::not_found(format!(
            "Expected element instance with key '{key}' to exist, but it does not"
        )));
    };
    let el = model.element(idx);
    if let Some(mi) = &el.multi_instance {
        if el.is_body_instance(inst.record.bpmn_element_type) {
            return multi_instance::activate_body(ctx, &inst, &model, idx, mi);
        }
    }
    // back after a start listener: the mappings were applied before it
    let resumed = !el.execution_listeners.is_empty()
        && listeners::done(ctx, key, ListenerEventType::Start) > 0;
    if !resumed {
        if let Some(mi) = &el.multi_instance {
            // an inner instance: its item and loop counter first
            if let Err(msg) = multi_instance::set_loop_variables(ctx, &inst, mi) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
        }
        if let Some(ad_hoc) = &el.ad_hoc {
            ad_hoc::set_variables(ctx, key, ad_hoc);
        }
        // input mappings: evaluated in the element's scope (which sees an inner multi-instance
        // instance's item), stored as local variables
        if !el.inputs.is_empty() {
            match evaluate_mappings(&el.inputs, &mapping_variables(ctx, key, &el.inputs)) {
                Ok(doc) => variables::set_local_document(ctx, key, &doc, None),
                Err(msg) => return raise_incident(ctx, &inst, ErrorType::IoMappingError, msg, -1),
            }
        }
    }
    if listeners::run_next(ctx, &inst, &model, idx, ListenerEventType::Start)? {
        return Ok(()); // waits for a start listener
    }
    let processor = super::processor(&el.kind);
    let e = Active { inst, model, idx };
    processor.on_activate(ctx, &e)?;
    if processor.completes_on_activation() {
        ctx.event(key, Intent::ElementCompleting, pi_value(&e.inst.record));
        return on_complete(ctx, key);
    }
    Ok(())
}

/// COMPLETE_ELEMENT: a waiting element (task, timer, process scope) completes.
pub fn complete_element(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let key = cmd.key;
    if let Some(scope_state) = instance_state(ctx.txn, key)
        .filter(|i| i.parent_key > 0)
        .and_then(|i| instance_state(ctx.txn, i.parent_key))
        .map(|scope| scope.state)
        .filter(|s| *s != Intent::ElementActivated)
    {
        // the flow scope is being terminated (an interrupting event in the same batch): the
        // element is terminated with it instead
        ctx.reject(
            cmd,
            RejectionType::InvalidState,
            format!(
                "Expected flow scope instance to be in state 'ELEMENT_ACTIVATED' but was '{}'.",
                scope_state.name()
            ),
        );
        return Ok(());
    }
    let Some(mut inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(key))
    else {
        return Err(Rejection::not_found(format!(
            "Expected to complete element instance with key '{key}', but no such element was found"
        )));
    };
    if inst.state != Intent::ElementActivated {
        return Err(Rejection::invalid_state(format!(
            "Expected element instance with key '{key}' to be in state ELEMENT_ACTIVATED, but it is in state {}",
            inst.state.name()
        )));
    }
    let mut next_cycle_timer = false;
    if let Some(i) = ctx.cycle_timers.iter().position(|(pi, id, _)| {
        *pi == inst.record.process_instance_key && *id == inst.record.element_id
    }) {
        // a timer cycle boundary event with repetitions left: its next timer
        let (_, _, timer) = ctx.cycle_timers.remove(i);
        let timer_key = ctx.next_key();
        ctx.event(timer_key, Intent::Created, RecordValue::Timer(timer));
        next_cycle_timer = true;
    }
    ctx.event(key, Intent::ElementCompleting, pi_value(&inst.record));
    if next_cycle_timer {
        // the timer's applier may have changed the instance: read it again
        return on_complete(ctx, key);
    }
    // what ELEMENT_COMPLETING's applier changed: the instance is not decoded a second time
    inst.state = Intent::ElementCompleting;
    let Some(model) = ctx.models.get(ctx.txn, inst.record.process_definition_key) else {
        return on_complete(ctx, key);
    };
    let Some((idx, _)) = model.element_by_id(&inst.record.element_id) else {
        return on_complete(ctx, key);
    };
    completing(ctx, inst, model, idx)
}

/// The part of completion after ELEMENT_COMPLETING; re-run when an incident on it is resolved.
pub fn on_complete(ctx: &mut Ctx<'_, '_, '_>, key: i64) -> ProcResult {
    let Some((inst, model, idx)) = load(ctx, key) else {
        return Err(Rejection::not_found(format!(
            "Expected element instance with key '{key}' to exist, but it does not"
        )));
    };
    completing(ctx, inst, model, idx)
}

/// [`on_complete`] with the instance as it is in state (in ELEMENT_COMPLETING).
fn completing(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: ElementInstance,
    model: Arc<Process>,
    idx: ElementIdx,
) -> ProcResult {
    let key = inst.key;
    let el = model.element(idx);
    let mi = el.multi_instance.as_ref();
    if let Some(mi) = mi.filter(|_| el.is_body_instance(inst.record.bpmn_element_type)) {
        return multi_instance::complete_body(ctx, &inst, &model, idx, mi);
    }
    if ad_hoc::is_inner_instance(&el.kind) {
        return ad_hoc::inner_instance_completing(ctx, &inst, &model, idx);
    }
    let processor = super::processor(&el.kind);
    // back after an end listener: the element's variables and output mappings were applied
    // before it
    let resumed =
        !el.execution_listeners.is_empty() && listeners::done(ctx, key, ListenerEventType::End) > 0;
    if !resumed && el.ad_hoc.is_some() {
        ad_hoc::completing(ctx, &inst, &model);
    }
    let event_variables = processor.event_variables();
    if !resumed && !apply_completion_variables(ctx, &inst, &model, idx, event_variables)? {
        return Ok(()); // an incident
    }
    if listeners::run_next(ctx, &inst, &model, idx, ListenerEventType::End)? {
        return Ok(()); // waits for an end listener
    }
    if is_start_event(&el.kind) {
        // the scope's event sub-processes start listening once its start event completes
        if let Err(msg) = subscribe_event_sub_processes(ctx, &inst, &model, idx) {
            return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
        }
    }
    if !el.boundary_events.is_empty()
        || !el.event_sub_process_starts.is_empty()
        || processor.holds_subscriptions()
    {
        unsubscribe_events(ctx, key);
    }
    if let Some(mi) = mi {
        // an inner instance of a multi-instance body
        let condition_holds = match multi_instance::before_inner_completed(ctx, &inst, mi) {
            Ok(holds) => holds,
            Err(msg) => return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1),
        };
        ctx.event(key, Intent::ElementCompleted, pi_value(&inst.record));
        return multi_instance::after_inner_completed(ctx, &inst, &model, idx, mi, condition_holds);
    }
    processor.on_complete(ctx, &Active { inst, model, idx })
}

/// The variables a completing element leaves with: its event's (a job's, a message's, a
/// called process's), then its output mappings'. False when an output mapping failed (an
/// incident was raised).
fn apply_completion_variables(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    idx: ElementIdx,
    event_variables: EventVariables,
) -> ProcResult<bool> {
    let key = inst.key;
    let el = model.element(idx);
    if matches!(
        event_variables,
        EventVariables::Trigger | EventVariables::CalledProcess
    ) {
        // the event's variables (a message's, a job's, a script's result): propagated, unless
        // output mappings decide what leaves the element
        if let Some(trigger) = events::take_trigger(ctx, key, &inst.record, key) {
            let doc = variables::parse_document(&trigger.variables).unwrap_or_default();
            if !doc.is_empty() {
                if el.outputs.is_empty() {
                    // a called process's variables go to the call activity's flow scope
                    let from = if event_variables == EventVariables::CalledProcess {
                        inst.parent_key
                    } else {
                        key
                    };
                    variables::merge_propagate(ctx, from, &doc);
                } else {
                    variables::set_local_document(ctx, key, &doc, None);
                }
            }
        }
    }
    if event_variables == EventVariables::EventSubProcessTrigger {
        // the event that started the event sub-process: its variables reach the scopes above
        if let Some(trigger) = take_event_sub_process_trigger(ctx, inst, &el.id) {
            let doc = variables::parse_document(&trigger.variables).unwrap_or_default();
            if !doc.is_empty() {
                if el.outputs.is_empty() {
                    variables::merge_propagate(ctx, key, &doc);
                } else {
                    variables::set_local_document(ctx, key, &doc, None);
                }
            }
        }
    }
    if (event_variables == EventVariables::Local || after_event_gateway(model, idx))
        && el.outputs.is_empty()
    {
        // the event's variables (local to the boundary event) leave it
        let doc = variables::local(ctx, key);
        if !doc.is_empty() && inst.parent_key > 0 {
            variables::merge_propagate(ctx, inst.parent_key, &doc);
        }
    }
    if !el.outputs.is_empty() {
        let doc = match evaluate_mappings(&el.outputs, &mapping_variables(ctx, key, &el.outputs)) {
            Ok(doc) => doc,
            Err(msg) => {
                raise_incident(ctx, inst, ErrorType::IoMappingError, msg, -1)?;
                return Ok(false);
            }
        };
        if inst.parent_key > 0 {
            variables::merge_propagate(ctx, inst.parent_key, &doc);
        } else {
            variables::set_local_document(ctx, key, &doc, None);
        }
    }
    Ok(true)
}

/// PROCESS_INSTANCE_BATCH TERMINATE: terminates the next child and hands the rest on.
pub fn batch_terminate(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    batch: &ProcessInstanceBatchRecord,
) -> ProcResult {
    let children = next_children(ctx, batch.batch_element_instance_key, batch.index, 2);
    if let Some(first) = children.first() {
        ctx.command(first.key, Intent::TerminateElement, pi_value(&first.record));
    }
    let next = children.get(1).map(|second| second.key);
    continue_batch(
        ctx,
        cmd.key,
        batch,
        next,
        Intent::Terminate,
        Intent::Terminated,
    );
    Ok(())
}

/// TERMINATE_ELEMENT: an element instance leaves without completing (cancel, an interrupting
/// boundary event, a caught error). Its job, timers, subscriptions and incidents go first; a
/// scope then terminates its children with commands of their own and is terminated when the
/// last of them is (Zeebe's order).
pub fn terminate_element(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let Some(inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(cmd.key))
    else {
        ctx.reject(
            cmd,
            RejectionType::NotFound,
            format!(
                "Expected to terminate element instance with key '{}', but no such element was found",
                cmd.key
            ),
        );
        return Ok(());
    };
    if inst.state == Intent::ElementTerminating {
        ctx.reject(
            cmd,
            RejectionType::InvalidState,
            format!(
                "Expected to terminate element instance with key '{}', but it is already being terminated",
                cmd.key
            ),
        );
        return Ok(());
    }
    let key = inst.key;
    ctx.event(key, Intent::ElementTerminating, pi_value(&inst.record));
    if inst.parent_key <= 0 {
        if let Some(model) = ctx.models.get(ctx.txn, inst.record.process_definition_key) {
            compensation::delete_all(ctx, &inst, &model);
        }
    }
    if release(ctx, &inst)? {
        return Ok(()); // goes on once its user task's canceling listeners ran
    }
    continue_terminating(ctx, &inst)
}

/// CONTINUE_TERMINATING_ELEMENT: a terminating user task's canceling listeners ran; its
/// termination goes on.
pub fn continue_terminating_element(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let Some(inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(cmd.key))
        .filter(|i| i.state == Intent::ElementTerminating)
    else {
        ctx.reject(
            cmd,
            RejectionType::InvalidState,
            format!(
                "Expected to continue terminating element instance with key '{}', but it is not being terminated",
                cmd.key
            ),
        );
        return Ok(());
    };
    continue_terminating(ctx, &inst)
}
