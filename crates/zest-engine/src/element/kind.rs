//! The interface every element kind implements (Zeebe's `BpmnElementProcessor`): what it does
//! when it is activated and completed. The lifecycle (`lifecycle.rs` beside this module) runs the
//! steps all
//! elements share around these calls; element modules implement them with the shared
//! behaviours ([`crate::behaviour`]) and never import each other.

use zest_protocol::Intent;

use crate::behaviour::compensation;
use crate::behaviour::element_instance::{pi_value, Active};
use crate::behaviour::flows::leave;
use crate::context::{Ctx, ProcResult};

/// Where the variables of the event that completes an element go (a job's, a message's, a
/// called process's). Output mappings, when the element has them, decide what leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventVariables {
    /// The element's event carries none.
    None,
    /// The event trigger's variables (a job's completion, a message, a script's result):
    /// propagated from the element.
    Trigger,
    /// The called process's variables: propagated from the call activity's flow scope.
    CalledProcess,
    /// The variables of the event that started the event sub-process.
    EventSubProcessTrigger,
    /// Its local variables, set by the event that triggered it, leave it.
    Local,
}

/// What an element kind does in its lifecycle.
pub(crate) trait ElementProcessor: Sync {
    /// Activation, after ELEMENT_ACTIVATING, the input mappings and the start listeners: the
    /// element subscribes to its events, creates its job, chooses its flows..., and writes
    /// ELEMENT_ACTIVATED (or raises an incident and stays ACTIVATING).
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult;

    /// True when the element completes as soon as it is activated, in the same step (a
    /// parallel gateway): the lifecycle writes ELEMENT_COMPLETING and completes it.
    fn completes_on_activation(&self) -> bool {
        false
    }

    /// Where the variables of its event go when it completes.
    fn event_variables(&self) -> EventVariables {
        EventVariables::None
    }

    /// True when the element holds event subscriptions of its own until it completes (an
    /// event-based gateway's, a signal catch event's), closed when it completes.
    fn holds_subscriptions(&self) -> bool {
        false
    }

    /// Completion, after ELEMENT_COMPLETING, the event variables, the output mappings and the
    /// end listeners: ELEMENT_COMPLETED, then [`on_completed`](Self::on_completed).
    fn on_complete(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        write_completed(ctx, e);
        self.on_completed(ctx, e)
    }

    /// After ELEMENT_COMPLETED: by default the element leaves through its outgoing flows.
    fn on_completed(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        leave(ctx, &e.inst, &e.model, e.idx)
    }
}

/// Writes ELEMENT_COMPLETED, with the compensation subscription of a compensable activity
/// before it and the end of a compensation handler after it.
pub(crate) fn write_completed(ctx: &mut Ctx<'_, '_, '_>, e: &Active) {
    compensation::on_completing(ctx, &e.inst, &e.model, e.idx);
    ctx.event(e.key(), Intent::ElementCompleted, pi_value(&e.inst.record));
    if e.element().is_for_compensation {
        compensation::handler_completed(ctx, &e.inst);
    }
}
