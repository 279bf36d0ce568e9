//! Taking sequence flows: a completed element leaves through its outgoing flows, or lets its
//! scope complete.

use std::sync::Arc;

use zest_model::{ElementIdx, ElementKind, Process};
use zest_protocol::{Intent, ProcessInstanceRecord};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::{child_record, Active};
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::terminate::complete_scope_if_done;
use crate::context::{Ctx, ProcResult};
use crate::types::ElementInstance;
use zest_protocol::ErrorType;

/// A completed element leaves: through its outgoing flows, or (an end event, an element
/// without outgoing flows) by letting its scope complete when nothing else is left in it.
pub(crate) fn leave(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
) -> ProcResult {
    let el = model.element(idx);
    if el.outgoing.is_empty() || matches!(el.kind, ElementKind::NoneEndEvent) {
        return complete_scope_if_done(ctx, inst.parent_key);
    }
    take_outgoing(ctx, inst, model, idx)
}

/// Takes every outgoing flow of a completed element (an implicit or parallel fork). Zeebe takes
/// them last to first, so their activations are processed in that order.
pub(crate) fn take_outgoing(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
) -> ProcResult {
    for &f in model.element(idx).outgoing.iter().rev() {
        take_flow(ctx, inst, model, f)?;
    }
    Ok(())
}

/// Takes a sequence flow out of a completed element and activates its target (a parallel join
/// waits until a token arrived on each incoming flow).
pub(crate) fn take_flow(
    ctx: &mut Ctx<'_, '_, '_>,
    from: &ElementInstance,
    model: &Arc<Process>,
    flow_idx: usize,
) -> ProcResult {
    let flow = model.flow(flow_idx);
    let scope_key = from.parent_key;
    let flow_record = ProcessInstanceRecord {
        element_id: flow.id.clone(),
        flow_scope_key: scope_key,
        bpmn_element_type: zest_model::BpmnElementType::SequenceFlow,
        bpmn_event_type: zest_model::BpmnEventType::Unspecified,
        ..from.record.clone()
    };
    let flow_key = ctx.next_key();
    ctx.event(flow_key, Intent::SequenceFlowTaken, pi_value(&flow_record));
    let scope_record = ProcessInstanceRecord {
        flow_scope_key: scope_key,
        ..from.record.clone()
    };
    let rec = child_record(&scope_record, scope_key, model, flow.target);
    let key = ctx.next_key();
    ctx.command(key, Intent::ActivateElement, pi_value(&rec));
    Ok(())
}

/// An element without behaviour of its own passes through: its boundary events are subscribed,
/// it is ELEMENT_ACTIVATED and completes with a COMPLETE_ELEMENT command of its own (as Zeebe).
pub(crate) fn pass_through(ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
    if let Err(msg) = subscribe_boundaries(ctx, &e.inst, &e.model, e.idx) {
        return raise_incident(ctx, &e.inst, ErrorType::ExtractValueError, msg, -1);
    }
    ctx.event(e.key(), Intent::ElementActivated, pi_value(&e.inst.record));
    ctx.command(e.key(), Intent::CompleteElement, pi_value(&e.inst.record));
    Ok(())
}
