//! DECISION_EVALUATION EVALUATE: a client evaluates a deployed decision.

use crate::behaviour::decisions::by_key;
use crate::behaviour::decisions::latest;
use crate::context::{Ctx, ProcResult, Rejection};
use serde_json::{Map, Value};
use zest_protocol::{DecisionEvaluationRecord, Intent, Record, RecordValue};

/// DECISION_EVALUATION EVALUATE (the EvaluateDecision RPC): evaluates the decision named by key
/// or by id (latest version) with the command's variables and answers with the evaluation.
pub fn evaluate_command(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    d: &DecisionEvaluationRecord,
) -> ProcResult {
    let tenant = crate::types::tenant(&d.tenant_id);
    let decision = if d.decision_key > 0 {
        by_key(ctx, d.decision_key).ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to evaluate decision with key '{}', but no such decision found",
                d.decision_key
            ))
        })?
    } else if !d.decision_id.is_empty() {
        latest(ctx, &d.decision_id).ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to evaluate decision '{}', but no decision found for id '{}'",
                d.decision_id, d.decision_id
            ))
        })?
    } else {
        return Err(Rejection::invalid_argument(
            "Expected either a decision id or a valid decision key, but none provided",
        ));
    };
    if decision.tenant_id != tenant {
        return Err(Rejection::not_found(format!(
            "Expected to evaluate decision '{}', but no decision found for id '{}'",
            decision.decision_id, decision.decision_id
        )));
    }
    let vars = if d.variables.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str::<Value>(&d.variables) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(Rejection::invalid_argument(format!(
                    "Expected variables to be a JSON object, but got '{}'",
                    d.variables
                )))
            }
        }
    };
    let Some(outcome) = crate::behaviour::decisions::evaluate(ctx, &decision, &vars) else {
        return Err(Rejection::invalid_state(format!(
            "Expected to evaluate decision '{}', but its decision requirements graph could not be loaded",
            decision.decision_id
        )));
    };
    let intent = if outcome.result.is_ok() {
        Intent::Evaluated
    } else {
        Intent::Failed
    };
    let key = ctx.next_key();
    let record = ctx
        .event(
            key,
            intent,
            RecordValue::DecisionEvaluation(Box::new(outcome.record)),
        )
        .clone();
    ctx.respond(cmd, record);
    Ok(())
}
