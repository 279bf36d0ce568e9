//! Elements: one module per element family, each implementing [`kind::ElementProcessor`];
//! [`lifecycle`] runs the commands ACTIVATE_ELEMENT, COMPLETE_ELEMENT and TERMINATE_ELEMENT and
//! the steps all elements share, and [`processor`] finds an element kind's processor. Element
//! modules import the shared behaviours and [`kind`], never each other.

pub(crate) mod ad_hoc;
pub(crate) mod boundary_event;
pub(crate) mod business_rule_task;
pub(crate) mod call_activity;
pub(crate) mod compensation_events;
pub(crate) mod end_events;
pub(crate) mod escalation_throw;
pub(crate) mod gateways;
pub(crate) mod job_worker_task;
pub(crate) mod kind;
pub(crate) mod lifecycle;
pub(crate) mod link_events;
pub(crate) mod message_catch;
pub(crate) mod multi_instance;
pub(crate) mod pass_through;
pub(crate) mod process;
pub(crate) mod script_task;
pub(crate) mod signal_events;
pub(crate) mod start_events;
pub(crate) mod timer_catch;
pub(crate) mod user_task;

use zest_model::ElementKind;

use kind::ElementProcessor;

/// The processor of an element kind.
pub(crate) fn processor(kind: &ElementKind) -> &'static dyn ElementProcessor {
    match kind {
        ElementKind::Process => &process::Process,
        ElementKind::SubProcess => &process::SubProcess,
        ElementKind::AdHocSubProcess => &ad_hoc::AdHocSubProcess,
        ElementKind::AdHocInnerInstance => &ad_hoc::AdHocInnerInstance,
        ElementKind::NoneStartEvent => &start_events::NoneStartEvent,
        ElementKind::MessageStartEvent => &start_events::MessageStartEvent,
        ElementKind::SignalStartEvent => &start_events::SignalStartEvent,
        ElementKind::TimerStartEvent => &start_events::TimerStartEvent,
        ElementKind::EventSubProcessStart => &start_events::EventSubProcessStart,
        ElementKind::NoneEndEvent => &end_events::NoneEndEvent,
        ElementKind::TerminateEndEvent => &end_events::TerminateEndEvent,
        ElementKind::ErrorEndEvent => &end_events::ErrorEndEvent,
        ElementKind::LinkThrowEvent => &link_events::LinkThrowEvent,
        ElementKind::LinkCatchEvent => &link_events::LinkCatchEvent,
        ElementKind::PassThroughTask => &pass_through::PassThroughTask,
        ElementKind::NoneIntermediateThrowEvent => &pass_through::NoneIntermediateThrowEvent,
        ElementKind::ParallelGateway => &gateways::ParallelGateway,
        ElementKind::ExclusiveGateway => &gateways::ExclusiveGateway,
        ElementKind::InclusiveGateway => &gateways::InclusiveGateway,
        ElementKind::EventBasedGateway => &gateways::EventBasedGateway,
        ElementKind::JobWorkerTask => &job_worker_task::JobWorkerTask,
        ElementKind::ScriptTask => &script_task::ScriptTask,
        ElementKind::BusinessRuleTask => &business_rule_task::BusinessRuleTask,
        ElementKind::UserTask => &user_task::UserTask,
        ElementKind::CallActivity => &call_activity::CallActivity,
        ElementKind::MessageCatch => &message_catch::MessageCatch,
        ElementKind::SignalCatch => &signal_events::SignalCatch,
        ElementKind::SignalThrowEvent => &signal_events::SignalThrowEvent,
        ElementKind::TimerIntermediateCatchEvent => &timer_catch::TimerIntermediateCatchEvent,
        ElementKind::EscalationThrowEvent => &escalation_throw::EscalationThrowEvent,
        ElementKind::CompensationThrowEvent => &compensation_events::CompensationThrowEvent,
        ElementKind::CompensationBoundary => &compensation_events::CompensationBoundary,
        ElementKind::BoundaryEvent => &boundary_event::BoundaryEvent,
    }
}
