//! Gateways: parallel (fork and join), exclusive and inclusive (which outgoing flows they take:
//! conditions, default flows) and event-based (the first of its catch events' events).

use serde_json::Map;
use serde_json::Value;
use zest_model::ElementIdx;
use zest_model::Process;
use zest_protocol::ErrorType;
use zest_protocol::Intent;

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::activate_boundary;
use crate::behaviour::event_scopes::subscribe_catch_events;
use crate::behaviour::events;
use crate::behaviour::expressions::evaluate_with;
use crate::behaviour::expressions::wrong_type_with;
use crate::behaviour::flows::leave;
use crate::behaviour::flows::take_flow;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::terminate::complete_scope_if_done;
use crate::behaviour::variables;
use crate::context::Ctx;
use crate::context::ProcResult;
use crate::element::kind::ElementProcessor;

/// The flows an inclusive gateway takes: every non-default flow whose condition holds (a flow
/// without condition always), else the default flow.
pub(crate) fn choose_inclusive_flows(
    ctx: &Ctx<'_, '_, '_>,
    model: &Process,
    idx: ElementIdx,
    key: i64,
) -> Result<Vec<usize>, (ErrorType, String)> {
    let el = model.element(idx);
    let mut vars: Option<Map<String, Value>> = None;
    let mut taken = Vec::new();
    for &f in &el.outgoing {
        if Some(f) == el.default_flow {
            continue;
        }
        let Some(cond) = &model.flow(f).condition else {
            taken.push(f);
            continue;
        };
        let vars = vars.get_or_insert_with(|| variables::visible(ctx, key));
        match evaluate_with(cond, vars).map_err(|m| (ErrorType::ExtractValueError, m))? {
            Value::Bool(true) => taken.push(f),
            Value::Bool(false) => {}
            other => {
                return Err((
                    ErrorType::ExtractValueError,
                    wrong_type_with(cond, "'BOOLEAN'", &other, || vars.clone()),
                ))
            }
        }
    }
    if taken.is_empty() && !el.outgoing.is_empty() {
        match el.default_flow {
            Some(f) => taken.push(f),
            None => return Err(no_flow_chosen()),
        }
    }
    Ok(taken)
}

/// CONDITION_ERROR: no condition held and there is no default flow.
pub(crate) fn no_flow_chosen() -> (ErrorType, String) {
    (
        ErrorType::ConditionError,
        "Expected at least one condition to evaluate to true, or to have a default flow"
            .to_string(),
    )
}

pub(crate) fn choose_exclusive_flow(
    ctx: &Ctx<'_, '_, '_>,
    model: &Process,
    idx: ElementIdx,
    key: i64,
) -> Result<Option<usize>, (ErrorType, String)> {
    let el = model.element(idx);
    if el.outgoing.is_empty() {
        return Ok(None);
    }
    if el.outgoing.len() == 1 && model.flow(el.outgoing[0]).condition.is_none() {
        return Ok(Some(el.outgoing[0]));
    }
    let mut vars: Option<Map<String, Value>> = None;
    for &f in &el.outgoing {
        if Some(f) == el.default_flow {
            continue;
        }
        let flow = model.flow(f);
        let Some(cond) = &flow.condition else {
            continue;
        };
        let vars = vars.get_or_insert_with(|| variables::visible(ctx, key));
        match evaluate_with(cond, vars).map_err(|m| (ErrorType::ExtractValueError, m))? {
            Value::Bool(true) => return Ok(Some(f)),
            Value::Bool(false) => {}
            other => {
                return Err((
                    ErrorType::ExtractValueError,
                    wrong_type_with(cond, "'BOOLEAN'", &other, || vars.clone()),
                ))
            }
        }
    }
    match el.default_flow {
        Some(f) => Ok(Some(f)),
        None => Err(no_flow_chosen()),
    }
}

/// A parallel gateway: forks or joins (the lifecycle waits for a token on every incoming flow);
/// completes as soon as it is activated.
pub(crate) struct ParallelGateway;

impl ElementProcessor for ParallelGateway {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let key = e.inst.key;
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        Ok(())
    }

    fn completes_on_activation(&self) -> bool {
        true
    }
}

/// An event-based gateway: subscribes to the events of the catch events its flows lead to, and
/// activates the one whose event comes first.
pub(crate) struct EventBasedGateway;

impl ElementProcessor for EventBasedGateway {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let targets: Vec<ElementIdx> = el.outgoing.iter().map(|&f| model.flow(f).target).collect();
        if let Err(msg) = subscribe_catch_events(ctx, inst, model, &targets) {
            return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
        }
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        Ok(())
    }

    fn holds_subscriptions(&self) -> bool {
        true
    }

    /// Activates the catch event whose event came first.
    fn on_completed(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let Some(trigger) = events::take_trigger(ctx, e.key(), &e.inst.record, e.key()) else {
            return Ok(());
        };
        let Some((target, _)) = e.model.element_by_id(&trigger.element_id) else {
            return Ok(());
        };
        activate_boundary(ctx, &e.inst, &e.model, target, &trigger.variables)
    }
}

/// An exclusive gateway: takes the first flow whose condition holds (or the default flow) while it
/// is activated.
pub(crate) struct ExclusiveGateway;

impl ElementProcessor for ExclusiveGateway {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        activate_choosing(ctx, e, choose_exclusive)
    }

    /// Its flows were taken while it was activated.
    fn on_completed(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        leave_unless_flows_taken(ctx, e)
    }
}

/// An inclusive gateway: takes every flow whose condition holds (or the default flow) while it is
/// activated.
pub(crate) struct InclusiveGateway;

impl ElementProcessor for InclusiveGateway {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        activate_choosing(ctx, e, choose_inclusive_flows)
    }

    /// Its flows were taken while it was activated.
    fn on_completed(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        leave_unless_flows_taken(ctx, e)
    }
}

/// How a gateway chooses its outgoing flows (its conditions, its default flow).
type Choose =
    fn(&Ctx<'_, '_, '_>, &Process, ElementIdx, i64) -> Result<Vec<usize>, (ErrorType, String)>;

/// The exclusive gateway's choice: the first flow whose condition holds, or its default.
fn choose_exclusive(
    ctx: &Ctx<'_, '_, '_>,
    model: &Process,
    idx: ElementIdx,
    key: i64,
) -> Result<Vec<usize>, (ErrorType, String)> {
    choose_exclusive_flow(ctx, model, idx, key).map(|f| f.into_iter().collect())
}

/// Exclusive and inclusive gateways choose their flows (`choose`) while they are activated.
fn activate_choosing(ctx: &mut Ctx<'_, '_, '_>, e: &Active, choose: Choose) -> ProcResult {
    let inst = &e.inst;
    let model = &e.model;
    let idx = e.idx;
    let key = e.inst.key;
    // choose the flows before changing anything, so a failure leaves it ACTIVATING
    let flows: Vec<usize> = match choose(ctx, model, idx, key) {
        Ok(f) => f,
        Err((error_type, msg)) => return raise_incident(ctx, inst, error_type, msg, -1),
    };
    ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
    ctx.event(key, Intent::ElementCompleting, pi_value(&inst.record));
    ctx.event(key, Intent::ElementCompleted, pi_value(&inst.record));
    if flows.is_empty() {
        return complete_scope_if_done(ctx, inst.parent_key);
    }
    // last to first, as Zeebe takes them
    for f in flows.into_iter().rev() {
        take_flow(ctx, inst, model, f)?;
    }
    Ok(())
}

/// An exclusive or inclusive gateway took its flows while it was activated; one without
/// outgoing flows leaves through its scope.
fn leave_unless_flows_taken(ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
    if !e.element().outgoing.is_empty() {
        return Ok(());
    }
    leave(ctx, &e.inst, &e.model, e.idx)
}
