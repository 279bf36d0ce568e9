//! Elements without behaviour of their own: undefined and manual tasks, none intermediate
//! throw events.

use crate::behaviour::element_instance::Active;
use crate::behaviour::flows::pass_through;
use crate::context::{Ctx, ProcResult};
use crate::element::kind::ElementProcessor;

/// An undefined task (`bpmn:task`) or a manual task.
pub(crate) struct PassThroughTask;

impl ElementProcessor for PassThroughTask {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }
}

/// A none intermediate throw event (a milestone in the record stream).
pub(crate) struct NoneIntermediateThrowEvent;

impl ElementProcessor for NoneIntermediateThrowEvent {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        pass_through(ctx, e)
    }
}
