//! Message catch events and receive tasks.

use zest_protocol::{ErrorType, Intent};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::expressions::evaluate_string;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::inputs::correlation_key;
use crate::behaviour::message_subscriptions;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::{ElementProcessor, EventVariables};

/// A message intermediate catch event or receive task: subscribes to its message and waits.
pub(crate) struct MessageCatch;

impl ElementProcessor for MessageCatch {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let Some(message) = &el.message else {
            return Err(Rejection::invalid_state(format!(
                "element '{}' has no message",
                el.id
            )));
        };
        let name = match evaluate_string(ctx, &message.name, key) {
            Ok(n) => n,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        };
        let correlation_key = match &message.correlation_key {
            Some(expr) => match correlation_key(ctx, expr, key) {
                Ok(k) => k,
                Err(msg) => {
                    return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1)
                }
            },
            None => String::new(),
        };
        if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
            return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
        }
        let own = inst.record.element_id.clone();
        message_subscriptions::subscribe(ctx, inst, &own, name, correlation_key, true);
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        Ok(())
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Trigger
    }
}
