//! USER_TASK COMPLETE, ASSIGN, CLAIM and UPDATE: the commands of Tasklist and the clients.

use crate::behaviour::task_listeners;
use crate::behaviour::user_tasks::complete_task;
use crate::behaviour::user_tasks::UPDATABLE;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::keys::user_task_key;
use crate::state::Ks;
use crate::types::{StoredUserTask, UserTaskState};
use zest_model::TaskListenerEventType as ListenerEvent;
use zest_protocol::json::parse_document;
use zest_protocol::{Intent, Record, RecordValue, UserTaskRecord};

/// USER_TASK COMPLETE: the task completes (after its completing listeners) and its element
/// completes with the variables.
pub fn complete(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, u: &UserTaskRecord) -> ProcResult {
    let task = load(ctx, cmd.key, "complete")?;
    let doc = parse_document(&u.variables).map_err(Rejection::invalid_argument)?;
    let mut record = task.record;
    record.variables = if doc.is_empty() {
        String::new()
    } else {
        u.variables.clone()
    };
    record.action = action_or(u, "complete");
    ctx.event_for_request(
        cmd.key,
        Intent::Completing,
        RecordValue::UserTask(Box::new(record.clone())),
    );
    if task_listeners::run_next(ctx, &record, ListenerEvent::Completing, 0)? {
        return Ok(()); // answered at the end of the transition
    }
    let event = complete_task(ctx, cmd.key, record);
    ctx.respond(cmd, event);
    Ok(())
}

/// USER_TASK ASSIGN: sets (or, with an empty assignee, removes) the assignee.
pub fn assign(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, u: &UserTaskRecord) -> ProcResult {
    let task = load(ctx, cmd.key, "assign")?;
    write_assignment(ctx, cmd, task.record, u, Intent::Assigning, "assign")
}

/// Writes `first` (ASSIGNING or CLAIMING), then ASSIGNED, with the command's assignee (marked
/// changed only when it differs) and action, and answers with ASSIGNED.
fn write_assignment(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    mut record: UserTaskRecord,
    u: &UserTaskRecord,
    first: Intent,
    default_action: &str,
) -> ProcResult {
    if record.assignee != u.assignee {
        record.assignee = u.assignee.clone();
        record.changed_attributes = vec!["assignee".to_string()];
    }
    record.action = action_or(u, default_action);
    ctx.event_for_request(
        cmd.key,
        first,
        RecordValue::UserTask(Box::new(record.clone())),
    );
    if task_listeners::run_next(ctx, &record, ListenerEvent::Assigning, 0)? {
        return Ok(()); // answered at the end of the transition
    }
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::Assigned,
        RecordValue::UserTask(Box::new(record)),
    );
    Ok(())
}

/// USER_TASK CLAIM: assigns the task to a user, unless someone else has it.
pub fn claim(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, u: &UserTaskRecord) -> ProcResult {
    let task = load(ctx, cmd.key, "claim")?;
    if u.assignee.trim().is_empty() {
        return Err(Rejection::invalid_state(format!(
            "Expected to claim user task with key '{}', but provided assignee is empty",
            cmd.key
        )));
    }
    let current = &task.record.assignee;
    if !current.trim().is_empty() && *current != u.assignee {
        return Err(Rejection::invalid_state(format!(
            "Expected to claim user task with key '{}', but it has already been assigned",
            cmd.key
        )));
    }
    write_assignment(ctx, cmd, task.record, u, Intent::Claiming, "claim")
}

/// USER_TASK UPDATE: changes the attributes the command names in `changed_attributes`.
pub fn update(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, u: &UserTaskRecord) -> ProcResult {
    let task = load(ctx, cmd.key, "update")?;
    let mut record = task.record;
    for attr in &u.changed_attributes {
        match attr.as_str() {
            "candidateGroupsList" => record.candidate_groups = u.candidate_groups.clone(),
            "candidateUsersList" => record.candidate_users = u.candidate_users.clone(),
            "dueDate" => record.due_date = normalize_date(&u.due_date, "dueDate")?,
            "followUpDate" => {
                record.follow_up_date = normalize_date(&u.follow_up_date, "followUpDate")?
            }
            "priority" => {
                if !(0..=100).contains(&u.priority) {
                    return Err(Rejection::invalid_argument(format!(
                        "Expected priority to be a number between 0 and 100, but was '{}'",
                        u.priority
                    )));
                }
                record.priority = u.priority;
            }
            other => {
                return Err(Rejection::invalid_argument(format!(
                    "Expected to update user task with key '{}', but the attribute '{other}' cannot be updated (updatable: {})",
                    cmd.key,
                    UPDATABLE.join(", ")
                )))
            }
        }
    }
    record.changed_attributes = u.changed_attributes.clone();
    record.action = action_or(u, "update");
    ctx.event_for_request(
        cmd.key,
        Intent::Updating,
        RecordValue::UserTask(Box::new(record.clone())),
    );
    if task_listeners::run_next(ctx, &record, ListenerEvent::Updating, 0)? {
        return Ok(()); // answered at the end of the transition
    }
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::Updated,
        RecordValue::UserTask(Box::new(record)),
    );
    Ok(())
}

/// A date of an UPDATE: empty clears it, anything else must be an ISO 8601 date-time and is
/// kept as written (Zeebe stores what the client sent).
fn normalize_date(text: &str, what: &str) -> ProcResult<String> {
    if text.trim().is_empty() {
        return Ok(String::new());
    }
    zest_model::time::parse_date_time(text)
        .map(|_| text.to_string())
        .map_err(|_| {
            Rejection::invalid_argument(format!(
                "Expected {what} to be an ISO 8601 date-time, e.g. '2023-03-02T15:35+02:00', but was '{text}'"
            ))
        })
}

fn action_or(cmd: &UserTaskRecord, default: &str) -> String {
    if cmd.action.is_empty() {
        default.to_string()
    } else {
        cmd.action.clone()
    }
}

/// The task a command is about, in state CREATED.
fn load(ctx: &Ctx<'_, '_, '_>, key: i64, verb: &str) -> ProcResult<StoredUserTask> {
    let task = ctx
        .txn
        .get::<StoredUserTask>(Ks::UserTasks, &user_task_key(b't', key))
        .ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to {verb} user task with key '{key}', but no such user task was found"
            ))
        })?;
    if task.state != UserTaskState::Created {
        return Err(Rejection::invalid_state(format!(
            "Expected to {verb} user task with key '{key}', but it is in state '{}'",
            task.state.name()
        )));
    }
    Ok(task)
}
