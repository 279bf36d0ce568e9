//! Start events: none, message, signal and timer start events of a process, and the start
//! events of event sub-processes. Each passes through once activated.

use crate::behaviour::element_instance::Active;
use crate::behaviour::flows::pass_through;
use crate::context::{Ctx, ProcResult};
use crate::element::kind::{ElementProcessor, EventVariables};

/// A none start event.
pub(crate) struct NoneStartEvent;

impl ElementProcessor for NoneStartEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }
}

/// A message start event (the message's variables are its local variables).
pub(crate) struct MessageStartEvent;

impl ElementProcessor for MessageStartEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Local
    }
}

/// A signal start event.
pub(crate) struct SignalStartEvent;

impl ElementProcessor for SignalStartEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Local
    }
}

/// A timer start event.
pub(crate) struct TimerStartEvent;

impl ElementProcessor for TimerStartEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Local
    }
}

/// The start event of an event sub-process (the event that started it carries the variables).
pub(crate) struct EventSubProcessStart;

impl ElementProcessor for EventSubProcessStart {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::EventSubProcessTrigger
    }
}
