//! Link events: a throw event continues at the catch event of the same name, without a flow.

use zest_protocol::Intent;

use crate::behaviour::element_instance::child_record;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::flows::pass_through;
use crate::context::{Ctx, ProcResult};
use crate::element::kind::ElementProcessor;

/// A link intermediate throw event.
pub(crate) struct LinkThrowEvent;

impl ElementProcessor for LinkThrowEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }

    /// Continues at the link catch event of the same name in its scope, without a flow.
    fn on_completed(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let Some(target) = e.element().link_target else {
            return Ok(());
        };
        let rec = child_record(&e.inst.record, e.inst.parent_key, &e.model, target);
        let child_key = ctx.next_key();
        ctx.command(child_key, Intent::ActivateElement, pi_value(&rec));
        Ok(())
    }
}

/// A link intermediate catch event: passes through.
pub(crate) struct LinkCatchEvent;

impl ElementProcessor for LinkCatchEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }
}
