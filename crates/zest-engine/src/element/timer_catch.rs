//! Timer intermediate catch events.

use zest_protocol::{ErrorType, Intent, RecordValue, TimerRecord};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::inputs::timer_due_date;
use crate::context::{Ctx, ProcResult};
use crate::element::kind::{ElementProcessor, EventVariables};

/// A timer intermediate catch event: creates its timer and waits.
pub(crate) struct TimerIntermediateCatchEvent;

impl ElementProcessor for TimerIntermediateCatchEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let due = match &el.timer {
            Some(t) => timer_due_date(ctx, t, key),
            None => Err("timer catch event without timer definition".to_string()),
        };
        let due = match due {
            Ok(d) => d,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        };
        let timer = TimerRecord {
            element_instance_key: key,
            process_instance_key: inst.record.process_instance_key,
            process_definition_key: inst.record.process_definition_key,
            due_date: due,
            target_element_id: el.id.clone(),
            repetitions: 1,
            tenant_id: inst.record.tenant_id.clone(),
        };
        let timer_key = ctx.next_key();
        ctx.event(timer_key, Intent::Created, RecordValue::Timer(timer));
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        Ok(())
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Trigger
    }
}
