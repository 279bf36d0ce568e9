//! Script tasks with a FEEL expression (`zeebe:script`).

use serde_json::{Map, Value};
use zest_protocol::{ErrorType, Intent};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::events;
use crate::behaviour::expressions::evaluate;
use crate::behaviour::incidents::raise_incident;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::{ElementProcessor, EventVariables};

/// A script task with `zeebe:script`: evaluates its expression and completes with the result.
pub(crate) struct ScriptTask;

impl ElementProcessor for ScriptTask {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let Some(script) = &el.script else {
            return Err(Rejection::invalid_state(format!(
                "script task '{}' has no script",
                el.id
            )));
        };
        let result = match evaluate(ctx, &script.expression, key) {
            Ok(v) => v,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        };
        if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
            return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
        }
        // the result travels as an event trigger, like a job's completion variables, and
        // is written while the task completes
        let mut doc = Map::new();
        doc.insert(script.result_variable.clone(), result);
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
