//! Which outgoing flows a gateway takes: exclusive and inclusive conditions, default flows.

use serde_json::{Map, Value};
use zest_model::{ElementIdx, Process};
use zest_protocol::ErrorType;

use crate::behaviour::expressions::evaluate_with;
use crate::behaviour::expressions::wrong_type_with;
use crate::behaviour::variables;
use crate::context::Ctx;

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
