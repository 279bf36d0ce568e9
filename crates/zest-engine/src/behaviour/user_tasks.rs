//! Camunda user tasks (`zeebe:userTask`): what the element (`element/user_task.rs`), the
//! commands people send through the REST API (`processors/user_task.rs`: assign, claim,
//! update, complete) and termination share, with Zeebe's record order:
//!
//! - activation: `USER_TASK CREATING`, `CREATED` (without assignee), the element's
//!   `ELEMENT_ACTIVATED`, then `ASSIGNING`, `ASSIGNED` when the model names an assignee;
//! - `ASSIGN` -> `ASSIGNING`, `ASSIGNED`; `CLAIM` -> `CLAIMING`, `ASSIGNED`;
//!   `UPDATE` -> `UPDATING`, `UPDATED`;
//! - `COMPLETE` -> `COMPLETING`, `COMPLETED`, then the element completes with the command's
//!   variables (as a job completion does);
//! - termination of the element: `CANCELING`, `CANCELED`.
//!
//! With task listeners (`task_listeners`), a transition waits for their jobs between its
//! first event and its end (`finish`); only CREATED tasks take commands, so a task in a
//! transition rejects them, as in Zeebe.

use serde_json::Value;
use zest_model::{TaskListenerEventType as ListenerEvent, UserTaskProps};
use zest_protocol::{Intent, Record, RecordValue, UserTaskRecord};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::events;
use crate::behaviour::expressions::evaluate;
use crate::behaviour::expressions::evaluate_string;
use crate::behaviour::inputs::date_time;
use crate::behaviour::inputs::string_list;
use crate::behaviour::task_listeners;
use crate::context::{Ctx, ProcResult};
use crate::keys::user_task_key;
use crate::state::Ks;
use crate::types::{ElementInstance, PendingTransition, StoredUserTask, UserTaskState};

/// The priority of a task whose model does not set one.
pub const DEFAULT_PRIORITY: i32 = 50;

/// Zeebe's names of the attributes an UPDATE may change, in the order the REST API sets them.
pub const UPDATABLE: [&str; 5] = [
    "candidateGroupsList",
    "candidateUsersList",
    "dueDate",
    "followUpDate",
    "priority",
];

/// The attributes a transition changed: its own, the listeners' corrections and `extra`, in
/// Zeebe's (sorted) order.
pub(crate) fn merged(own: &[String], corrected: &[String], extra: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = own
        .iter()
        .chain(corrected)
        .cloned()
        .chain(extra.iter().map(|s| s.to_string()))
        .collect();
    all.sort();
    all.dedup();
    all
}

/// The end of a transition whose task listeners all ran (`task_listeners`): CREATED,
/// ASSIGNED, UPDATED, COMPLETED or CANCELED with the listeners' corrections, and the answer to
/// the command that started it.
pub(crate) fn finish(
    ctx: &mut Ctx<'_, '_, '_>,
    task_key: i64,
    state: UserTaskState,
    pending: PendingTransition,
) -> ProcResult {
    let mut record = pending.record;
    let own = std::mem::take(&mut record.changed_attributes);
    let answer = |ctx: &mut Ctx<'_, '_, '_>, event: Record| {
        if pending.request_id >= 0 {
            ctx.respond_to(pending.request_id, pending.request_stream_id, event);
        }
    };
    match state {
        UserTaskState::Creating => {
            return finish_creating(ctx, task_key, record, &pending.corrected, None)
        }
        UserTaskState::Assigning | UserTaskState::Claiming | UserTaskState::Updating => {
            record.changed_attributes = merged(&own, &pending.corrected, &[]);
            let intent = if state == UserTaskState::Updating {
                Intent::Updated
            } else {
                Intent::Assigned
            };
            let event = ctx
                .event(task_key, intent, RecordValue::UserTask(Box::new(record)))
                .clone();
            answer(ctx, event);
        }
        UserTaskState::Completing => {
            let extra: &[&str] = if record.variables.is_empty() {
                &[]
            } else {
                &["variables"]
            };
            record.changed_attributes = merged(&own, &pending.corrected, extra);
            let event = complete_task(ctx, task_key, record);
            answer(ctx, event);
        }
        UserTaskState::Canceling => {
            record.changed_attributes = merged(&own, &pending.corrected, &[]);
            ctx.event(
                task_key,
                Intent::Canceled,
                RecordValue::UserTask(Box::new(record.clone())),
            );
            if let Some(inst) = ctx.txn.get::<ElementInstance>(
                Ks::ElementInstances,
                &crate::state::key_i64(record.element_instance_key),
            ) {
                ctx.command(
                    inst.key,
                    Intent::ContinueTerminatingElement,
                    pi_value(&inst.record),
                );
            }
        }
        UserTaskState::Created => {}
    }
    Ok(())
}

/// COMPLETED, then the element completes with the task's variables (as after a job): the
/// COMPLETED event.
pub(crate) fn complete_task(
    ctx: &mut Ctx<'_, '_, '_>,
    task_key: i64,
    record: UserTaskRecord,
) -> Record {
    let event = ctx
        .event(
            task_key,
            Intent::Completed,
            RecordValue::UserTask(Box::new(record.clone())),
        )
        .clone();
    if let Some(inst) = ctx.txn.get::<ElementInstance>(
        Ks::ElementInstances,
        &crate::state::key_i64(record.element_instance_key),
    ) {
        // like a job's variables: they travel as an event trigger and are written while the
        // element completes (on_complete)
        let target = inst.record.element_id.clone();
        events::complete_by_event(ctx, &inst, &target, record.variables);
    }
    event
}

/// Termination of a user task element: its task is canceled. True when the termination waits
/// for its canceling listeners (it goes on with CONTINUE_TERMINATING_ELEMENT).
pub(crate) fn cancel(ctx: &mut Ctx<'_, '_, '_>, element_instance_key: i64) -> ProcResult<bool> {
    let Some(task_key) = ctx
        .txn
        .get::<i64>(Ks::UserTasks, &user_task_key(b'e', element_instance_key))
    else {
        return Ok(false);
    };
    let Some(task) = ctx
        .txn
        .get::<StoredUserTask>(Ks::UserTasks, &user_task_key(b't', task_key))
    else {
        return Ok(false);
    };
    ctx.event(
        task_key,
        Intent::Canceling,
        RecordValue::UserTask(Box::new(task.record.clone())),
    );
    if task_listeners::run_next(ctx, &task.record, ListenerEvent::Canceling, 0)? {
        return Ok(true);
    }
    ctx.event(
        task_key,
        Intent::Canceled,
        RecordValue::UserTask(Box::new(task.record)),
    );
    Ok(false)
}

/// A user task's properties evaluated in the scope of `key`, as Zeebe evaluates them for a
/// Camunda user task (a FEEL result of the wrong type is an error).
pub(crate) fn evaluate_props(
    ctx: &Ctx<'_, '_, '_>,
    props: &UserTaskProps,
    key: i64,
) -> Result<UserTaskRecord, String> {
    let mut r = UserTaskRecord {
        form_key: -1,
        priority: DEFAULT_PRIORITY,
        ..Default::default()
    };
    if let Some(e) = &props.external_reference {
        r.external_form_reference = evaluate_string(ctx, e, key)?;
    }
    if let Some(e) = &props.assignee {
        r.assignee = evaluate_string(ctx, e, key)?;
    }
    if let Some(e) = &props.candidate_groups {
        r.candidate_groups = string_list(ctx, e, key)?;
    }
    if let Some(e) = &props.candidate_users {
        r.candidate_users = string_list(ctx, e, key)?;
    }
    if let Some(e) = &props.due_date {
        r.due_date = date_time(ctx, e, key)?.unwrap_or_default();
    }
    if let Some(e) = &props.follow_up_date {
        r.follow_up_date = date_time(ctx, e, key)?.unwrap_or_default();
    }
    if let Some(e) = &props.priority {
        let v = evaluate(ctx, e, key)?;
        let n = match &v {
            Value::Number(n) => n.as_i64().filter(|_| n.is_i64() || n.is_u64()),
            Value::String(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        r.priority = match n {
            Some(p) if (0..=100).contains(&p) => p as i32,
            _ => {
                return Err(format!(
                    "Expected result of the expression '{}' to be a number between 0 and 100, but was '{}'.",
                    e.quoted(),
                    match &v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    }
                ))
            }
        };
    }
    Ok(r)
}

/// The end of CREATING: CREATED (the element's ELEMENT_ACTIVATED after it when no listener
/// ran, `activated`), then the assignment when the model names an assignee (one a creating
/// listener set is the task's already).
pub(crate) fn finish_creating(
    ctx: &mut Ctx<'_, '_, '_>,
    task_key: i64,
    mut record: UserTaskRecord,
    corrected: &[String],
    activated: Option<&ElementInstance>,
) -> ProcResult {
    let model_assignee = !record.assignee.is_empty() && !corrected.iter().any(|a| a == "assignee");
    let assignee = if model_assignee {
        std::mem::take(&mut record.assignee)
    } else {
        String::new()
    };
    record.changed_attributes = merged(&[], corrected, &[]);
    ctx.event(
        task_key,
        Intent::Created,
        RecordValue::UserTask(Box::new(record.clone())),
    );
    if let Some(inst) = activated {
        ctx.event(inst.key, Intent::ElementActivated, pi_value(&inst.record));
    }
    if model_assignee {
        record.assignee = assignee;
        record.changed_attributes = vec!["assignee".to_string()];
        ctx.event(
            task_key,
            Intent::Assigning,
            RecordValue::UserTask(Box::new(record.clone())),
        );
        if !task_listeners::run_next(ctx, &record, ListenerEvent::Assigning, 0)? {
            ctx.event(
                task_key,
                Intent::Assigned,
                RecordValue::UserTask(Box::new(record)),
            );
        }
    }
    Ok(())
}
