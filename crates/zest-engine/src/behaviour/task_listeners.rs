//! Task listeners of Camunda user tasks (`zeebe:taskListeners`, Zeebe 8.8): jobs that a user
//! task's transition waits for, one at a time in document order. With Zeebe's records:
//!
//! - a transition's first event (`CREATING`, `ASSIGNING`, `CLAIMING`, `UPDATING`,
//!   `COMPLETING`, `CANCELING`) is followed by the job of its first listener
//!   (`JOB CREATED`, kind TASK_LISTENER) instead of its end;
//! - the job's completion (`JOB COMPLETED`) is followed by the command `USER_TASK
//!   COMPLETE_TASK_LISTENER`, whose processing writes `CORRECTED` when the listener corrected
//!   the task, then the next listener's job or the transition's end (`CREATED`, `ASSIGNED`,
//!   `UPDATED`, `COMPLETED`, `CANCELED`, see `user_tasks::finish`);
//! - a listener that denies (assigning, updating, completing) is followed by
//!   `DENY_TASK_LISTENER`, which writes `ASSIGNMENT_DENIED`, `UPDATE_DENIED` or
//!   `COMPLETION_DENIED`: the task stays as it was, and the command that started the transition
//!   is answered with a rejection.
//!
//! What the transition will write at its end waits in state as a `PendingTransition`
//! (written by the appliers of the first event and of `CORRECTED`, counted by the applier of
//! the listener's `JOB COMPLETED`). The command that started it is answered at its end.

use zest_model::TaskListenerEventType as Event;
use zest_protocol::{
    ErrorType, Intent, JobKind, JobListenerEventType, JobRecord, Record, RecordValue,
    UserTaskRecord,
};

use crate::behaviour::expressions::job_type_and_retries;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::jobs::create_job_of_kind;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::keys::user_task_key;
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, PendingTransition, StoredJob, UserTaskState};

/// The listener event of a task in state `state` (none when it is not in a transition).
pub(crate) fn event_of(state: UserTaskState) -> Option<Event> {
    Some(match state {
        UserTaskState::Creating => Event::Creating,
        UserTaskState::Assigning | UserTaskState::Claiming => Event::Assigning,
        UserTaskState::Updating => Event::Updating,
        UserTaskState::Completing => Event::Completing,
        UserTaskState::Canceling => Event::Canceling,
        UserTaskState::Created => return None,
    })
}

fn job_event(event: Event) -> JobListenerEventType {
    match event {
        Event::Creating => JobListenerEventType::Creating,
        Event::Assigning => JobListenerEventType::Assigning,
        Event::Updating => JobListenerEventType::Updating,
        Event::Completing => JobListenerEventType::Completing,
        Event::Canceling => JobListenerEventType::Canceling,
    }
}

fn event_name(event: JobListenerEventType) -> &'static str {
    match event {
        JobListenerEventType::Creating => "CREATING",
        JobListenerEventType::Assigning => "ASSIGNING",
        JobListenerEventType::Updating => "UPDATING",
        JobListenerEventType::Completing => "COMPLETING",
        JobListenerEventType::Canceling => "CANCELING",
        JobListenerEventType::Start => "START",
        JobListenerEventType::End => "END",
        JobListenerEventType::Unspecified => "UNSPECIFIED",
    }
}

/// Creates the job of listener number `done` of `event` for the task of `record`. True when
/// the transition waits for it; false when every listener of the event has run. A listener
/// whose job type or retries cannot be evaluated raises an incident (true: it waits).
pub(crate) fn run_next(
    ctx: &mut Ctx<'_, '_, '_>,
    record: &UserTaskRecord,
    event: Event,
    done: usize,
) -> ProcResult<bool> {
    let Some(inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(record.element_instance_key))
    else {
        return Ok(false);
    };
    let Some(model) = ctx.models.get(ctx.txn, inst.record.process_definition_key) else {
        return Ok(false);
    };
    let Some((_, el)) = model.element_by_id(&inst.record.element_id) else {
        return Ok(false);
    };
    let Some(listener) = el.task_listeners_of(event).nth(done) else {
        return Ok(false);
    };
    let (job_type, retries) = match job_type_and_retries(ctx, &listener.job, inst.key) {
        Ok(v) => v,
        Err(msg) => {
            raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)?;
            return Ok(true);
        }
    };
    create_job_of_kind(
        ctx,
        &inst,
        job_type,
        retries,
        headers(record),
        JobKind::TaskListener,
        job_event(event),
    );
    Ok(true)
}

/// The headers of a listener's job: the task's own, and the task as the transition has it
/// (Zeebe's `io.camunda.zeebe:*` names), which a worker reads as the job's user task.
fn headers(record: &UserTaskRecord) -> std::collections::BTreeMap<String, String> {
    use zest_protocol::user_task_headers as h;
    let list = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_default();
    let mut out = record.custom_headers.clone();
    let mut put = |name: &str, value: String| {
        if !value.is_empty() {
            out.insert(name.to_string(), value);
        }
    };
    put(h::ACTION, record.action.clone());
    put(h::ASSIGNEE, record.assignee.clone());
    put(h::CANDIDATE_GROUPS, list(&record.candidate_groups));
    put(h::CANDIDATE_USERS, list(&record.candidate_users));
    put(h::CHANGED_ATTRIBUTES, list(&record.changed_attributes));
    put(h::DUE_DATE, record.due_date.clone());
    put(h::FOLLOW_UP_DATE, record.follow_up_date.clone());
    if record.form_key > 0 {
        put(h::FORM_KEY, record.form_key.to_string());
    }
    put(h::PRIORITY, record.priority.to_string());
    put(h::USER_TASK_KEY, record.user_task_key.to_string());
    out
}

/// The pending transition of the task of element instance `element_instance_key`.
fn task_of(ctx: &Ctx<'_, '_, '_>, element_instance_key: i64) -> Option<(i64, PendingTransition)> {
    let task_key: i64 = ctx
        .txn
        .get(Ks::UserTasks, &user_task_key(b'e', element_instance_key))?;
    let pending = ctx.txn.get(Ks::UserTasks, &user_task_key(b'p', task_key))?;
    Some((task_key, pending))
}

/// JOB COMPLETE of a task listener's job: checks what the listener may do (Zeebe's
/// rejections), writes JOB COMPLETED, and lets the task go on (COMPLETE_TASK_LISTENER) or be
/// denied (DENY_TASK_LISTENER).
pub(crate) fn job_completed(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    job: &StoredJob,
    j: &JobRecord,
) -> ProcResult {
    // Zeebe's texts end with a line break
    let about = format!(
        "(job key '{}', type '{}', processInstanceKey '{}')",
        cmd.key, job.record.job_type, job.record.process_instance_key
    );
    let doc = variables::parse_document(&j.variables).map_err(Rejection::invalid_argument)?;
    if !doc.is_empty() {
        return Err(Rejection::invalid_argument(format!(
            "Task Listener job completion with variables payload provided is not yet supported {about}. Support will be enabled with the resolution of issue #23702.\n"
        )));
    }
    let event = job.record.listener_event_type;
    let result = &j.result;
    if result.denied
        && !matches!(
            event,
            JobListenerEventType::Assigning
                | JobListenerEventType::Updating
                | JobListenerEventType::Completing
        )
    {
        return Err(Rejection::invalid_argument(format!(
            "Denying result is not supported for '{}' task listener jobs {about}. Only the following listener event types support denying: [ASSIGNING, COMPLETING, UPDATING].\n",
            event_name(event)
        )));
    }
    let Some((task_key, pending)) = task_of(ctx, job.record.element_instance_key) else {
        return Err(Rejection::invalid_state(format!(
            "Expected to complete task listener job with key '{}', but its user task is in no transition",
            cmd.key
        )));
    };
    let model_assignee =
        !pending.record.assignee.is_empty() && !pending.corrected.iter().any(|a| a == "assignee");
    if event == JobListenerEventType::Creating
        && model_assignee
        && result.corrected_attributes.iter().any(|a| a == "assignee")
    {
        return Err(Rejection::invalid_argument(format!(
            "Expected to complete task listener job, but correcting the assignee on 'CREATING' event is not supported when the user task has an assignee defined in the model {about}. Use the 'CREATING' event to set an assignee only if it was not defined. Use the 'ASSIGNING' event to correct an assignee that is already defined.\n"
        )));
    }
    let mut completed = job.record.clone();
    completed.variables = String::new();
    completed.result = result.clone();
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::Completed,
        RecordValue::Job(Box::new(completed)),
    );
    let mut record = pending.record;
    if result.denied {
        record.denied_reason = result.denied_reason.clone();
        ctx.command(
            task_key,
            Intent::DenyTaskListener,
            RecordValue::UserTask(Box::new(record)),
        );
    } else {
        correct(&mut record, result);
        record.changed_attributes = result.corrected_attributes.clone();
        ctx.command(
            task_key,
            Intent::CompleteTaskListener,
            RecordValue::UserTask(Box::new(record)),
        );
    }
    Ok(())
}

/// Applies a listener's corrections to the task.
fn correct(record: &mut UserTaskRecord, result: &zest_protocol::JobResult) {
    let c = &result.corrections;
    for attr in &result.corrected_attributes {
        match attr.as_str() {
            "assignee" => record.assignee = c.assignee.clone(),
            "dueDate" => record.due_date = c.due_date.clone(),
            "followUpDate" => record.follow_up_date = c.follow_up_date.clone(),
            "candidateUsersList" => record.candidate_users = c.candidate_users.clone(),
            "candidateGroupsList" => record.candidate_groups = c.candidate_groups.clone(),
            "priority" => record.priority = c.priority,
            _ => {}
        }
    }
}
