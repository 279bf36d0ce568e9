//! USER_TASK COMPLETE_TASK_LISTENER and DENY_TASK_LISTENER: a task listener's job finished; the
//! user task's transition goes on, or is denied.

use crate::behaviour::task_listeners::event_of;
use crate::behaviour::task_listeners::run_next;
use crate::behaviour::user_tasks;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::keys::user_task_key;
use crate::state::Ks;
use crate::types::{PendingTransition, StoredUserTask, UserTaskState};
use zest_protocol::{Intent, Record, RecordType, RecordValue, RejectionType, UserTaskRecord};

/// USER_TASK COMPLETE_TASK_LISTENER: the listener's corrections (CORRECTED), then the next
/// listener, or the transition's end.
pub fn complete_task_listener(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    u: &UserTaskRecord,
) -> ProcResult {
    let (task, _) = load(ctx, cmd.key)?;
    if !u.changed_attributes.is_empty() {
        ctx.event(
            cmd.key,
            Intent::Corrected,
            RecordValue::UserTask(Box::new(u.clone())),
        );
    }
    let (_, pending) = load(ctx, cmd.key)?;
    let Some(event) = event_of(task.state) else {
        return Ok(());
    };
    if run_next(ctx, &pending.record, event, pending.done as usize)? {
        return Ok(());
    }
    user_tasks::finish(ctx, cmd.key, task.state, pending)
}

/// USER_TASK DENY_TASK_LISTENER: the transition is undone (ASSIGNMENT_DENIED, UPDATE_DENIED
/// or COMPLETION_DENIED, with the task as it was) and its command is rejected.
pub fn deny_task_listener(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    u: &UserTaskRecord,
) -> ProcResult {
    let (task, pending) = load(ctx, cmd.key)?;
    let (denied, command, what) = match task.state {
        UserTaskState::Assigning => (Intent::AssignmentDenied, Intent::Assign, "Assignment"),
        UserTaskState::Claiming => (Intent::AssignmentDenied, Intent::Claim, "Assignment"),
        UserTaskState::Updating => (Intent::UpdateDenied, Intent::Update, "Update"),
        UserTaskState::Completing => (Intent::CompletionDenied, Intent::Complete, "Completion"),
        other => {
            return Err(Rejection::invalid_state(format!(
            "Expected to deny the transition of user task with key '{}', but it is in state '{}'",
            cmd.key,
            other.name()
        )))
        }
    };
    let mut record = task.record;
    record.denied_reason = u.denied_reason.clone();
    ctx.event(cmd.key, denied, RecordValue::UserTask(Box::new(record)));
    if pending.request_id >= 0 {
        let mut rejection = ctx.response_only_record(
            cmd.key,
            command,
            RecordValue::UserTask(Box::new(pending.record)),
        );
        rejection.record_type = RecordType::CommandRejection;
        rejection.rejection_type = RejectionType::InvalidState;
        rejection.rejection_reason = format!(
            "{what} of the User Task with key '{}' was denied by Task Listener. Reason to deny: '{}'",
            cmd.key, u.denied_reason
        );
        ctx.respond_to(pending.request_id, pending.request_stream_id, rejection);
    }
    Ok(())
}

/// The task and its transition, for the commands below.
fn load(ctx: &Ctx<'_, '_, '_>, key: i64) -> ProcResult<(StoredUserTask, PendingTransition)> {
    let task: StoredUserTask = ctx
        .txn
        .get(Ks::UserTasks, &user_task_key(b't', key))
        .ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to continue the transition of user task with key '{key}', but no such user task was found"
            ))
        })?;
    let pending: PendingTransition = ctx
        .txn
        .get(Ks::UserTasks, &user_task_key(b'p', key))
        .ok_or_else(|| {
            Rejection::invalid_state(format!(
                "Expected to continue the transition of user task with key '{key}', but it is in state '{}'",
                task.state.name()
            ))
        })?;
    Ok((task, pending))
}
