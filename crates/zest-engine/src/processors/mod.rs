//! The command processors, one module per value type (Zeebe's `TypedRecordProcessor`s), and
//! [`dispatch`], which routes a command by value type and intent. Processors sit above the
//! elements and the shared behaviours: nothing below imports them.

pub(crate) mod batch_operation;
pub(crate) mod command_distribution;
pub(crate) mod decision;
pub(crate) mod deployment;
pub(crate) mod execution_listener;
pub(crate) mod history_deletion;
pub(crate) mod job;
pub(crate) mod message;
pub(crate) mod message_subscription;
pub(crate) mod migration;
pub(crate) mod modification;
pub(crate) mod process_instance;
pub(crate) mod resource_deletion;
pub(crate) mod signal;
pub(crate) mod task_listener;
pub(crate) mod user;
pub(crate) mod user_task;

use zest_protocol::{Intent, Record, RecordValue};

use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::{ad_hoc, lifecycle, multi_instance};

/// Routes a command to its processor by value type and intent.
pub(crate) fn dispatch(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    use Intent::*;
    match (&cmd.value, cmd.intent) {
        (RecordValue::Deployment(d), Create) => deployment::create(ctx, cmd, d),
        (RecordValue::DistributedDeployment(d), Create) => {
            deployment::create_distributed(ctx, cmd, d)
        }
        (RecordValue::CommandDistribution(d), Acknowledge) => {
            command_distribution::acknowledge(ctx, cmd, d)
        }
        (RecordValue::ProcessInstanceCreation(c), Create | CreateWithAwaitingResult) => {
            process_instance::create(ctx, cmd, c)
        }
        (RecordValue::ProcessInstance(_), Cancel) => process_instance::cancel(ctx, cmd),
        (RecordValue::ProcessInstance(_), ActivateElement) => lifecycle::activate_element(ctx, cmd),
        (RecordValue::ProcessInstance(_), CompleteElement) => lifecycle::complete_element(ctx, cmd),
        (RecordValue::ProcessInstance(_), TerminateElement) => {
            lifecycle::terminate_element(ctx, cmd)
        }
        (RecordValue::ProcessInstance(_), CompleteExecutionListener) => {
            execution_listener::complete(ctx, cmd)
        }
        (RecordValue::ProcessInstance(_), ContinueTerminatingElement) => {
            lifecycle::continue_terminating_element(ctx, cmd)
        }
        (RecordValue::Job(j), Complete) => job::complete(ctx, cmd, j),
        (RecordValue::Job(j), Fail) => job::fail(ctx, cmd, j),
        (RecordValue::Job(j), ThrowError) => job::throw_error(ctx, cmd, j),
        (RecordValue::Job(j), UpdateRetries) => job::update_retries(ctx, cmd, j),
        (RecordValue::Job(j), UpdateTimeout) => job::update_timeout(ctx, cmd, j),
        (RecordValue::Job(_), TimeOut) => job::time_out(ctx, cmd),
        (RecordValue::Job(_), RecurAfterBackoff) => job::recur(ctx, cmd),
        (RecordValue::Job(_), Yield) => job::yield_job(ctx, cmd),
        (RecordValue::JobBatch(b), Activate) => job::activate(ctx, cmd, b),
        (RecordValue::VariableDocument(d), Update) => process_instance::set_variables(ctx, cmd, d),
        (RecordValue::Incident(_), Resolve) => process_instance::resolve_incident(ctx, cmd),
        (RecordValue::Timer(_), Trigger) => process_instance::trigger_timer(ctx, cmd),
        (RecordValue::Message(m), Publish) => message::publish(ctx, cmd, m),
        (RecordValue::MessageCorrelation(c), Correlate) => message::correlate(ctx, cmd, c),
        (RecordValue::Message(_) | RecordValue::MessageBatch(_), Expire) => {
            message::expire(ctx, cmd)
        }
        (RecordValue::MessageSubscription(r), Create) => {
            message_subscription::subscription_create(ctx, cmd, r)
        }
        (RecordValue::MessageSubscription(r), Correlate) => {
            message_subscription::subscription_correlate(ctx, cmd, r)
        }
        (RecordValue::MessageSubscription(r), Reject) => {
            message_subscription::subscription_reject(ctx, r)
        }
        (RecordValue::MessageSubscription(r), Delete) => {
            message_subscription::subscription_delete(ctx, cmd, r)
        }
        (RecordValue::MessageSubscription(r), Migrate) => {
            message_subscription::subscription_migrate(ctx, cmd, r)
        }
        (RecordValue::ProcessMessageSubscription(r), Create) => {
            message_subscription::process_subscription_create(ctx, cmd, r)
        }
        (RecordValue::ProcessMessageSubscription(r), Correlate) => {
            message_subscription::process_subscription_correlate(ctx, cmd, r)
        }
        (RecordValue::ProcessMessageSubscription(r), Delete) => {
            message_subscription::process_subscription_delete(ctx, cmd, r)
        }
        (RecordValue::Signal(sig), Broadcast) => signal::broadcast(ctx, cmd, sig),
        (RecordValue::ProcessInstanceBatch(b), Activate) => {
            multi_instance::batch_activate(ctx, cmd, b)
        }
        (RecordValue::ProcessInstanceBatch(b), Terminate) => {
            lifecycle::batch_terminate(ctx, cmd, b)
        }
        (RecordValue::UserTask(u), Complete) => user_task::complete(ctx, cmd, u),
        (RecordValue::UserTask(u), Assign) => user_task::assign(ctx, cmd, u),
        (RecordValue::UserTask(u), Claim) => user_task::claim(ctx, cmd, u),
        (RecordValue::UserTask(u), Update) => user_task::update(ctx, cmd, u),
        (RecordValue::UserTask(u), CompleteTaskListener) => {
            task_listener::complete_task_listener(ctx, cmd, u)
        }
        (RecordValue::UserTask(u), DenyTaskListener) => {
            task_listener::deny_task_listener(ctx, cmd, u)
        }
        (RecordValue::DecisionEvaluation(d), Evaluate) => decision::evaluate_command(ctx, cmd, d),
        (RecordValue::ProcessInstanceModification(m), Modify) => modification::modify(ctx, cmd, m),
        (RecordValue::ProcessInstanceMigration(m), Migrate) => migration::migrate(ctx, cmd, m),
        (RecordValue::ResourceDeletion(r), Delete) => resource_deletion::delete(ctx, cmd, r),
        (RecordValue::BatchOperation(b), Create) => batch_operation::create(ctx, cmd, b),
        (RecordValue::BatchOperation(b), Execute) => batch_operation::execute(ctx, cmd, b),
        (RecordValue::BatchOperation(b), Cancel | Suspend | Resume) => {
            batch_operation::lifecycle(ctx, cmd, b)
        }
        (RecordValue::HistoryDeletion(h), Delete) => history_deletion::delete(ctx, cmd, h),
        (RecordValue::User(u), Create) => user::create(ctx, cmd, u, false),
        (RecordValue::User(u), CreateInitialAdmin) => user::create(ctx, cmd, u, true),
        (RecordValue::User(u), Update) => user::update(ctx, cmd, u),
        (RecordValue::User(u), Delete) => user::delete(ctx, cmd, u),
        (RecordValue::AdHocSubProcessInstruction(a), Activate) => {
            ad_hoc::activate_instruction(ctx, cmd, a)
        }
        (RecordValue::AdHocSubProcessInstruction(a), Complete) => {
            ad_hoc::complete_instruction(ctx, cmd, a)
        }
        (v, intent) => Err(Rejection::invalid_argument(format!(
            "Expected a supported command, but got {} {:?}",
            v.value_type().name(),
            intent
        ))),
    }
}
