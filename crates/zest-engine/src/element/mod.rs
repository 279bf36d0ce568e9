//! Elements: one module per element family, what it does when it is activated and completed.

pub(crate) mod ad_hoc;
pub(crate) mod call_activity;
pub(crate) mod gateways;
pub(crate) mod lifecycle;
pub(crate) mod multi_instance;
pub(crate) mod user_task;
