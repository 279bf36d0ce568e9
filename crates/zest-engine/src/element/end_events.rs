//! End events: none, terminate and error end events.

use zest_protocol::{ErrorType, Intent};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::find_error_catch;
use crate::behaviour::event_scopes::trigger_boundary;
use crate::behaviour::event_scopes::unhandled_error_message;
use crate::behaviour::flows::pass_through;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::terminate::terminate_siblings;
use crate::context::{Ctx, ProcResult};
use crate::element::kind::ElementProcessor;

/// A none end event: its scope completes once nothing else is left in it.
pub(crate) struct NoneEndEvent;

impl ElementProcessor for NoneEndEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }
}

/// A terminate end event: terminates the rest of its scope.
pub(crate) struct TerminateEndEvent;

impl ElementProcessor for TerminateEndEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }

    /// Terminates the rest of its scope, which then completes.
    fn on_completed(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        terminate_siblings(ctx, e.inst.parent_key)
    }
}

/// An error end event: triggers the nearest error catch event, or raises an incident when nothing
/// catches it.
pub(crate) struct ErrorEndEvent;

impl ElementProcessor for ErrorEndEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let code = el.error_code.clone().unwrap_or_default();
        let Some((scope, scope_model, boundary)) = find_error_catch(ctx, inst.parent_key, &code)
        else {
            let msg = unhandled_error_message(&code, None);
            return raise_incident(ctx, inst, ErrorType::UnhandledErrorEvent, msg, -1);
        };
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        trigger_boundary(ctx, &scope, &scope_model, boundary, String::new())
    }
}
