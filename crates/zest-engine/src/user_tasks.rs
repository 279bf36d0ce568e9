//! Camunda user tasks (`zeebe:userTask`): the USER_TASK a user task element creates, and the
//! commands people send through the REST API (assign, claim, update, complete), with Zeebe's
//! record order:
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

use std::sync::Arc;

use serde_json::Value;
use zest_model::{ElementIdx, Process, TaskListenerEventType as ListenerEvent, UserTaskProps};
use zest_protocol::{ErrorType, Intent, Record, RecordValue, UserTaskRecord};

use crate::appliers::user_task_key;
use crate::bpmn::{self, evaluate, pi_value, raise_incident};
use crate::engine::{Ctx, ProcResult, Rejection};
use crate::events;
use crate::state::Ks;
use crate::task_listeners;
use crate::types::{ElementInstance, PendingTransition, StoredUserTask, UserTaskState};
use zest_protocol::json::parse_document;

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

/// Activation of a Camunda user task: evaluates its properties (an incident when one fails),
/// creates the task and assigns it when the model names an assignee.
pub(crate) fn activate(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
) -> ProcResult {
    let el = model.element(idx);
    let props = el.user_task.clone().unwrap_or_default();
    let key = inst.key;
    let mut record = match evaluate_props(ctx, &props, key) {
        Ok(r) => r,
        Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
    };
    if let Some(form_id) = &props.form_id {
        match crate::deployment::latest_form(ctx, form_id) {
            Ok(form_key) => record.form_key = form_key,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::FormNotFound, msg, -1),
        }
    }
    if let Err(msg) = bpmn::subscribe_boundaries(ctx, inst, model, idx) {
        return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
    }
    record.custom_headers = el.task_headers.iter().cloned().collect();
    record.creation_timestamp = ctx.now;
    record.element_id = el.id.clone();
    record.element_instance_key = key;
    record.bpmn_process_id = inst.record.bpmn_process_id.clone();
    record.process_definition_version = inst.record.version;
    record.process_definition_key = inst.record.process_definition_key;
    record.process_instance_key = inst.record.process_instance_key;
    record.tenant_id = inst.record.tenant_id.clone();
    let task_key = ctx.next_key();
    record.user_task_key = task_key;
    ctx.event(
        task_key,
        Intent::Creating,
        RecordValue::UserTask(record.clone()),
    );
    if task_listeners::run_next(ctx, &record, ListenerEvent::Creating, 0)? {
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        return Ok(());
    }
    finish_creating(ctx, task_key, record, &[], Some(inst))
}

/// The end of CREATING: CREATED (the element's ELEMENT_ACTIVATED after it when no listener
/// ran, `activated`), then the assignment when the model names an assignee (one a creating
/// listener set is the task's already).
fn finish_creating(
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
        RecordValue::UserTask(record.clone()),
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
            RecordValue::UserTask(record.clone()),
        );
        if !task_listeners::run_next(ctx, &record, ListenerEvent::Assigning, 0)? {
            ctx.event(task_key, Intent::Assigned, RecordValue::UserTask(record));
        }
    }
    Ok(())
}

/// The attributes a transition changed: its own, the listeners' corrections and `extra`, in
/// Zeebe's (sorted) order.
fn merged(own: &[String], corrected: &[String], extra: &[&str]) -> Vec<String> {
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
                .event(task_key, intent, RecordValue::UserTask(record))
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
                RecordValue::UserTask(record.clone()),
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
fn complete_task(ctx: &mut Ctx<'_, '_, '_>, task_key: i64, record: UserTaskRecord) -> Record {
    let event = ctx
        .event(
            task_key,
            Intent::Completed,
            RecordValue::UserTask(record.clone()),
        )
        .clone();
    if let Some(inst) = ctx.txn.get::<ElementInstance>(
        Ks::ElementInstances,
        &crate::state::key_i64(record.element_instance_key),
    ) {
        // like a job's variables: they travel as an event trigger and are written while the
        // element completes (bpmn::on_complete)
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
        RecordValue::UserTask(task.record.clone()),
    );
    if task_listeners::run_next(ctx, &task.record, ListenerEvent::Canceling, 0)? {
        return Ok(true);
    }
    ctx.event(
        task_key,
        Intent::Canceled,
        RecordValue::UserTask(task.record),
    );
    Ok(false)
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

fn action_or(cmd: &UserTaskRecord, default: &str) -> String {
    if cmd.action.is_empty() {
        default.to_string()
    } else {
        cmd.action.clone()
    }
}

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
        RecordValue::UserTask(record.clone()),
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
    ctx.event_for_request(cmd.key, first, RecordValue::UserTask(record.clone()));
    if task_listeners::run_next(ctx, &record, ListenerEvent::Assigning, 0)? {
        return Ok(()); // answered at the end of the transition
    }
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::Assigned,
        RecordValue::UserTask(record),
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
        RecordValue::UserTask(record.clone()),
    );
    if task_listeners::run_next(ctx, &record, ListenerEvent::Updating, 0)? {
        return Ok(()); // answered at the end of the transition
    }
    ctx.event_and_respond(cmd, cmd.key, Intent::Updated, RecordValue::UserTask(record));
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

/// A user task's properties evaluated in the scope of `key`, as Zeebe evaluates them for a
/// Camunda user task (a FEEL result of the wrong type is an error).
fn evaluate_props(
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
        r.external_form_reference = crate::bpmn::evaluate_string(ctx, e, key)?;
    }
    if let Some(e) = &props.assignee {
        r.assignee = crate::bpmn::evaluate_string(ctx, e, key)?;
    }
    if let Some(e) = &props.candidate_groups {
        r.candidate_groups = bpmn::string_list(ctx, e, key)?;
    }
    if let Some(e) = &props.candidate_users {
        r.candidate_users = bpmn::string_list(ctx, e, key)?;
    }
    if let Some(e) = &props.due_date {
        r.due_date = bpmn::date_time(ctx, e, key)?.unwrap_or_default();
    }
    if let Some(e) = &props.follow_up_date {
        r.follow_up_date = bpmn::date_time(ctx, e, key)?.unwrap_or_default();
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
