//! Business rule tasks that evaluate a DMN decision (`zeebe:calledDecision`).

use serde_json::{Map, Value};
use zest_protocol::{ErrorType, Intent, RecordValue};

use crate::behaviour::decisions;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::events;
use crate::behaviour::expressions::evaluate;
use crate::behaviour::expressions::expect_string;
use crate::behaviour::incidents::raise_incident;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::{ElementProcessor, EventVariables};

/// A business rule task with `zeebe:calledDecision`: evaluates the decision and completes with the
/// result.
pub(crate) struct BusinessRuleTask;

impl ElementProcessor for BusinessRuleTask {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let Some(called) = &el.called_decision else {
            return Err(Rejection::invalid_state(format!(
                "business rule task '{}' has no called decision",
                el.id
            )));
        };
        let decision_id = match evaluate(ctx, &called.decision_id, key)
            .and_then(|v| expect_string(ctx, key, &called.decision_id, v))
        {
            Ok(id) => id,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        };
        let Some(decision) = decisions::latest(ctx, &decision_id) else {
            let msg = format!(
                    "Expected to evaluate decision '{decision_id}', but no decision found for id '{decision_id}'"
                );
            return raise_incident(ctx, inst, ErrorType::CalledDecisionError, msg, -1);
        };
        let vars = decisions::variables(ctx, &decision, key);
        let Some(outcome) = decisions::evaluate(ctx, &decision, &vars) else {
            let msg = format!(
                    "Expected to evaluate decision '{decision_id}', but its decision requirements graph could not be loaded"
                );
            return raise_incident(ctx, inst, ErrorType::CalledDecisionError, msg, -1);
        };
        let mut record = outcome.record;
        record.bpmn_process_id = inst.record.bpmn_process_id.clone();
        record.process_definition_key = inst.record.process_definition_key;
        record.process_instance_key = inst.record.process_instance_key;
        record.element_id = el.id.clone();
        record.element_instance_key = key;
        let evaluation_key = ctx.next_key();
        let result = match outcome.result {
            Ok(value) => {
                ctx.event(
                    evaluation_key,
                    Intent::Evaluated,
                    RecordValue::DecisionEvaluation(Box::new(record)),
                );
                value
            }
            Err(msg) => {
                ctx.event(
                    evaluation_key,
                    Intent::Failed,
                    RecordValue::DecisionEvaluation(Box::new(record)),
                );
                return raise_incident(ctx, inst, ErrorType::DecisionEvaluationError, msg, -1);
            }
        };
        if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
            return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
        }
        // like a script task's result
        let mut doc = Map::new();
        doc.insert(called.result_variable.clone(), result);
        let vars = Value::Object(doc).to_string();
        events::triggering(ctx, key, &inst.record, &el.id, vars);
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
        Ok(())
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Trigger
    }
}
