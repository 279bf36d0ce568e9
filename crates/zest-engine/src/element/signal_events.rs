//! Signal intermediate catch and throw events (signal start events are start events).

use serde_json::Value;
use zest_protocol::{ErrorType, Intent, RecordValue};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::inputs::signal_name;
use crate::behaviour::signal_subscriptions;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult};
use crate::element::kind::{ElementProcessor, EventVariables};

/// A signal intermediate catch event: subscribes to its signal and waits.
pub(crate) struct SignalCatch;

impl ElementProcessor for SignalCatch {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let name = match signal_name(ctx, el, key) {
            Ok(n) => n,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        };
        if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
            return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
        }
        signal_subscriptions::subscribe(ctx, inst, &el.id, name);
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        Ok(())
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Trigger
    }

    fn holds_subscriptions(&self) -> bool {
        true
    }
}

/// A signal intermediate throw or end event: broadcasts its signal with its local variables and
/// passes on.
pub(crate) struct SignalThrowEvent;

impl ElementProcessor for SignalThrowEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let name = match signal_name(ctx, el, key) {
            Ok(n) => n,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        };
        // the signal carries the element's local variables (its input mappings' result)
        let vars = Value::Object(variables::local(ctx, key)).to_string();
        ctx.command(
            -1,
            Intent::Broadcast,
            RecordValue::Signal(zest_protocol::SignalRecord {
                signal_name: name,
                variables: vars,
                tenant_id: inst.record.tenant_id.clone(),
            }),
        );
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
        Ok(())
    }
}
