//! Escalation throw events (intermediate and end).

use zest_model::BpmnEventType;
use zest_protocol::{Intent, RecordValue};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::find_catch;
use crate::behaviour::event_scopes::trigger_boundary;
use crate::context::{Ctx, ProcResult};
use crate::element::kind::ElementProcessor;

/// An escalation intermediate throw or end event: triggers the nearest escalation catch event
/// (ESCALATED), or none (NOT_ESCALATED), and passes on unless caught by an interrupting event.
pub(crate) struct EscalationThrowEvent;

impl ElementProcessor for EscalationThrowEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        let code = el.escalation_code.clone().unwrap_or_default();
        let mut record = zest_protocol::EscalationRecord {
            process_instance_key: inst.record.process_instance_key,
            escalation_code: code.clone(),
            throw_element_id: el.id.clone(),
            catch_element_id: String::new(),
        };
        let escalation_key = ctx.next_key();
        let catch = find_catch(
            ctx,
            inst.parent_key,
            BpmnEventType::Escalation,
            &code,
            |e| e.escalation_code.as_deref(),
        );
        // Zeebe's order: the boundary event is triggered, then ESCALATED (NOT_ESCALATED when
        // nothing catches it); the throw event goes on unless its scope is interrupted
        let interrupted = match catch {
            Some((scope, scope_model, boundary)) => {
                let b = scope_model.element(boundary);
                record.catch_element_id = b.id.clone();
                let interrupting = b.interrupting;
                trigger_boundary(ctx, &scope, &scope_model, boundary, String::new())?;
                ctx.event(
                    escalation_key,
                    Intent::Escalated,
                    RecordValue::Escalation(record),
                );
                interrupting
            }
            None => {
                ctx.event(
                    escalation_key,
                    Intent::NotEscalated,
                    RecordValue::Escalation(record),
                );
                false
            }
        };
        if !interrupted {
            ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
        }
        Ok(())
    }
}
