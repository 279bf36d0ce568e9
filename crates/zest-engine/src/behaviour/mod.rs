//! Shared behaviours: the steps elements and processors have in common (Zeebe's
//! `BpmnBehaviors`). They sit below the elements and the processors and import neither.

pub(crate) mod compensation;
pub(crate) mod correlated_messages;
pub(crate) mod decisions;
pub(crate) mod distribution;
pub(crate) mod element_instance;
pub(crate) mod event_scopes;
pub(crate) mod events;
pub(crate) mod expressions;
pub(crate) mod flows;
pub(crate) mod incidents;
pub(crate) mod inputs;
pub(crate) mod jobs;
pub(crate) mod listeners;
pub(crate) mod message_subscriptions;
pub(crate) mod process_deletion;
pub(crate) mod signal_subscriptions;
pub(crate) mod subscriptions_in_flight;
pub(crate) mod task_listeners;
pub(crate) mod terminate;
pub(crate) mod user_tasks;
pub(crate) mod variables;
