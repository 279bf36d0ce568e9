//! Boundary events (timer, message, signal, error, escalation) attached to an activity.

use crate::behaviour::element_instance::Active;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::{ElementProcessor, EventVariables};

/// A boundary event: activated by its activity's events, never by a sequence flow.
pub(crate) struct BoundaryEvent;

impl ElementProcessor for BoundaryEvent {
    fn on_activate(&self, _ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let model = &e.model;
        let idx = e.idx;
        let el = model.element(idx);
        Err(Rejection::invalid_state(format!(
            "Expected to activate boundary event '{}' through its activity's events, but it was activated by a sequence flow",
            el.id
        )))
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Local
    }
}
