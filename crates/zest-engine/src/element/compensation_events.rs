//! Compensation throw events and compensation boundary events.

use zest_protocol::Intent;

use crate::behaviour::compensation;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::ElementProcessor;

/// A compensation intermediate throw or end event: runs the compensation handlers and completes
/// once they did.
pub(crate) struct CompensationThrowEvent;

impl ElementProcessor for CompensationThrowEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        // it completes once the handlers it started did (compensation::handler_completed)
        if !compensation::throw(ctx, inst, model, idx)? {
            ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
        }
        Ok(())
    }
}

/// A compensation boundary event: activated only by a compensation throw event.
pub(crate) struct CompensationBoundary;

impl ElementProcessor for CompensationBoundary {
    fn on_activate(&self, _ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let model = &e.model;
        let idx = e.idx;
        let el = model.element(idx);
        Err(Rejection::invalid_state(format!(
            "Expected to activate element '{}', but a compensation boundary event is only activated by a compensation throw event",
            el.id
        )))
    }
}
