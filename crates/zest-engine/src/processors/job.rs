//! Job processors: activation, completion, failure, errors, retries, timeouts, backoff.

use zest_protocol::{ErrorType, Intent, JobBatchRecord, JobKind, JobRecord, Record, RecordValue};

use crate::behaviour::event_scopes::find_error_catch;
use crate::behaviour::event_scopes::trigger_boundary;
use crate::behaviour::event_scopes::unhandled_error_message;
use crate::behaviour::events;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::jobs::publish_work;
use crate::behaviour::listeners;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection, SideEffect};
use crate::state::{key_i64, read_i64, Ks};
use crate::types::{ElementInstance, JobState, StoredJob};

/// Upper bound of the variables carried by one partition's activation (a job larger than it
/// still goes alone). Zeebe bounds a batch by its 4 MiB message limit; this is lower because a
/// batch is held several times over on its way to the worker (the answer, its copy over the
/// internal port, its gRPC encoding), and workers that ask for many jobs at once made batches of
/// 3 MiB the largest transient allocations of a gateway node under load. A worker asking for
/// more gets the rest in its next poll.
const MAX_BATCH_VARIABLES_BYTES: usize = 1024 * 1024;

fn load_job(ctx: &Ctx<'_, '_, '_>, key: i64, action: &str) -> ProcResult<StoredJob> {
    ctx.txn
        .get::<StoredJob>(Ks::Jobs, &key_i64(key))
        .ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to {action} job with key '{key}', but no such job was found"
            ))
        })
}

fn state_name(s: JobState) -> &'static str {
    match s {
        JobState::Activatable => "ACTIVATABLE",
        JobState::Activated => "ACTIVATED",
        JobState::FailedBackoff | JobState::Failed => "FAILED",
        JobState::ErrorThrown => "ERROR_THROWN",
    }
}

/// JOB YIELD: a pushed job that its stream could not deliver (the client went away) becomes
/// activatable again at once, instead of when its deadline passes. Workers are told, but the
/// job is not pushed again from here (a stream that keeps failing would loop).
pub fn yield_job(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let job = load_job(ctx, cmd.key, "yield")?;
    if job.state != JobState::Activated {
        return Err(Rejection::invalid_state(format!(
            "Expected to yield activated job with key '{}', but it is in state '{}'",
            cmd.key,
            state_name(job.state)
        )));
    }
    ctx.event(
        cmd.key,
        Intent::Yielded,
        RecordValue::Job(Box::new(job.record.clone())),
    );
    ctx.side_effect(SideEffect::JobsAvailable(job.record.job_type));
    Ok(())
}

/// JOB_BATCH ACTIVATE: hands out up to `max_jobs_to_activate` activatable jobs of a type.
pub fn activate(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, batch: &JobBatchRecord) -> ProcResult {
    if batch.job_type.is_empty() {
        return Err(Rejection::invalid_argument(
            "Expected to activate jobs of a non-empty type, but type was empty",
        ));
    }
    if batch.max_jobs_to_activate < 1 {
        return Err(Rejection::invalid_argument(format!(
            "Expected to activate job batch with max jobs to activate to be greater than zero, but it was '{}'",
            batch.max_jobs_to_activate
        )));
    }
    if batch.timeout < 1 {
        return Err(Rejection::invalid_argument(format!(
            "Expected to activate job batch with timeout to be greater than zero, but it was '{}'",
            batch.timeout
        )));
    }
    let prefix = crate::state::KeyBuf::new().str(&batch.job_type).build();
    // one more than asked for: whether jobs are left waiting after this activation
    let wanted = batch.max_jobs_to_activate as usize;
    let candidates = ctx
        .txn
        .scan_prefix(Ks::JobsActivatable, &prefix, wanted + 1);
    let mut logged = batch.clone();
    let mut answered = batch.clone();
    let mut bytes = 0usize;
    let mut left_waiting = None;
    for (k, _) in candidates {
        let job_key = read_i64(&k, prefix.len());
        if answered.jobs.len() == wanted || answered.truncated {
            left_waiting = Some(job_key);
            break;
        }
        let Some(stored) = ctx.txn.get::<StoredJob>(Ks::Jobs, &key_i64(job_key)) else {
            continue;
        };
        let vars_text = variables::visible_selected_json(
            ctx,
            stored.record.element_instance_key,
            &batch.fetch_variables,
        );
        if bytes + vars_text.len() > MAX_BATCH_VARIABLES_BYTES && !answered.jobs.is_empty() {
            answered.truncated = true;
            logged.truncated = true;
            left_waiting = Some(job_key);
            break;
        }
        bytes += vars_text.len();
        let mut job = stored.record.clone();
        job.worker = batch.worker.clone();
        job.deadline = ctx.now + batch.timeout;
        job.timeout = batch.timeout;
        logged.job_keys.push(job_key);
        logged.jobs.push(JobRecord {
            variables: String::new(),
            ..job.clone()
        });
        answered.job_keys.push(job_key);
        answered.jobs.push(JobRecord {
            variables: vars_text,
            ..job
        });
    }
    if logged.jobs.is_empty() {
        // nothing to activate: a read-only answer, nothing is written
        let record =
            ctx.response_only_record(-1, Intent::Activated, RecordValue::JobBatch(answered));
        ctx.respond(cmd, record);
        return Ok(());
    }
    if let Some(next_job_key) = left_waiting {
        ctx.side_effect(SideEffect::JobsLeftWaiting {
            job_type: batch.job_type.clone(),
            next_job_key,
        });
    }
    let key = ctx.next_key();
    let mut event = ctx
        .event(key, Intent::Activated, RecordValue::JobBatch(logged))
        .clone();
    event.value = RecordValue::JobBatch(answered);
    ctx.respond(cmd, event);
    Ok(())
}

pub fn complete(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, j: &JobRecord) -> ProcResult {
    let job = load_job(ctx, cmd.key, "complete")?;
    if !matches!(job.state, JobState::Activatable | JobState::Activated) {
        return Err(Rejection::invalid_state(format!(
            "Expected to complete job with key '{}', but it is in state '{}'",
            cmd.key,
            state_name(job.state)
        )));
    }
    if job.record.kind == JobKind::TaskListener {
        return crate::behaviour::task_listeners::job_completed(ctx, cmd, &job, j);
    }
    let doc = variables::parse_document(&j.variables).map_err(Rejection::invalid_argument)?;
    if job.record.kind == JobKind::AdHocSubProcess {
        return crate::element::ad_hoc::job_completed(ctx, cmd, &job, j, &doc);
    }
    let mut record = job.record.clone();
    record.variables = j.variables.clone();
    let event = ctx
        .event(
            cmd.key,
            Intent::Completed,
            RecordValue::Job(Box::new(record)),
        )
        .clone();
    if let Some(inst) = ctx.txn.get::<ElementInstance>(
        Ks::ElementInstances,
        &key_i64(job.record.element_instance_key),
    ) {
        // the job's variables travel as an event trigger and are written while the task
        // completes (on_complete)
        let vars = if doc.is_empty() {
            String::new()
        } else {
            j.variables.clone()
        };
        if crate::appliers::listener_phase(inst.state).is_some() {
            listeners::job_completed(ctx, &inst, vars);
        } else {
            let target = inst.record.element_id.clone();
            events::complete_by_event(ctx, &inst, &target, vars);
        }
    }
    ctx.respond(cmd, event);
    Ok(())
}

pub fn fail(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, j: &JobRecord) -> ProcResult {
    let job = load_job(ctx, cmd.key, "fail")?;
    if !matches!(job.state, JobState::Activatable | JobState::Activated) {
        return Err(Rejection::invalid_state(format!(
            "Expected to fail activated job with key '{}', but it is in state '{}'",
            cmd.key,
            state_name(job.state)
        )));
    }
    let doc = variables::parse_document(&j.variables).map_err(Rejection::invalid_argument)?;
    let mut record = job.record.clone();
    record.retries = j.retries;
    record.error_message = j.error_message.clone();
    record.retry_backoff = j.retry_backoff.max(0);
    record.recurring_time = if j.retry_backoff > 0 {
        ctx.now + j.retry_backoff
    } else {
        -1
    };
    record.variables = j.variables.clone();
    let event = ctx
        .event(
            cmd.key,
            Intent::Failed,
            RecordValue::Job(Box::new(record.clone())),
        )
        .clone();
    if !doc.is_empty() {
        variables::set_local_document(ctx, job.record.element_instance_key, &doc, None);
    }
    if j.retries <= 0 {
        if let Some(inst) = ctx.txn.get::<ElementInstance>(
            Ks::ElementInstances,
            &key_i64(job.record.element_instance_key),
        ) {
            let msg = if j.error_message.is_empty() {
                "No more retries left.".to_string()
            } else {
                j.error_message.clone()
            };
            let error_type = if crate::appliers::listener_phase(inst.state).is_some() {
                ErrorType::ExecutionListenerNoRetries
            } else if job.record.kind == JobKind::AdHocSubProcess {
                ErrorType::AdHocSubProcessNoRetries
            } else if job.record.kind == JobKind::TaskListener {
                ErrorType::TaskListenerNoRetries
            } else {
                ErrorType::JobNoRetries
            };
            raise_incident(ctx, &inst, error_type, msg, cmd.key)?;
        }
    } else if j.retry_backoff <= 0 {
        publish_work(ctx, cmd.key, &record);
    }
    ctx.respond(cmd, event);
    Ok(())
}

pub fn throw_error(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, j: &JobRecord) -> ProcResult {
    let job = load_job(ctx, cmd.key, "throw an error for")?;
    if !matches!(job.state, JobState::Activatable | JobState::Activated) {
        return Err(Rejection::invalid_state(format!(
            "Expected to throw an error for job with key '{}', but it is in state '{}'",
            cmd.key,
            state_name(job.state)
        )));
    }
    let listener_job = ctx
        .txn
        .get::<ElementInstance>(
            Ks::ElementInstances,
            &key_i64(job.record.element_instance_key),
        )
        .is_some_and(|inst| crate::appliers::listener_phase(inst.state).is_some());
    if listener_job {
        return Err(Rejection::invalid_state(format!(
            "Cannot throw BPMN error from EXECUTION_LISTENER job with key '{}', type '{}' and processInstanceKey '{}'",
            cmd.key, job.record.job_type, job.record.process_instance_key
        )));
    }
    let mut record = job.record.clone();
    record.error_code = j.error_code.clone();
    record.error_message = j.error_message.clone();
    record.variables = j.variables.clone();
    let catch = find_error_catch(ctx, job.record.element_instance_key, &j.error_code);
    if catch.is_none() {
        // Zeebe's marker: the job stays, in an incident
        record.element_id = crate::appliers::NO_CATCH_EVENT_FOUND.to_string();
    }
    let event = ctx
        .event(
            cmd.key,
            Intent::ErrorThrown,
            RecordValue::Job(Box::new(record)),
        )
        .clone();
    match catch {
        Some((scope, model, boundary)) => {
            trigger_boundary(ctx, &scope, &model, boundary, j.variables.clone())?;
        }
        None => {
            if let Some(inst) = ctx.txn.get::<ElementInstance>(
                Ks::ElementInstances,
                &key_i64(job.record.element_instance_key),
            ) {
                let msg = unhandled_error_message(
                    &j.error_code,
                    Some(j.error_message.as_str()).filter(|m| !m.is_empty()),
                );
                raise_incident(ctx, &inst, ErrorType::UnhandledErrorEvent, msg, cmd.key)?;
            }
        }
    }
    ctx.respond(cmd, event);
    Ok(())
}

pub fn update_retries(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, j: &JobRecord) -> ProcResult {
    let job = load_job(ctx, cmd.key, "update retries of")?;
    if j.retries < 1 {
        return Err(Rejection::invalid_argument(format!(
            "Expected to update retries for job with key '{}' with a positive amount of retries, but the amount given was '{}'",
            cmd.key, j.retries
        )));
    }
    let mut record = job.record.clone();
    record.retries = j.retries;
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::RetriesUpdated,
        RecordValue::Job(Box::new(record)),
    );
    Ok(())
}

pub fn update_timeout(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, j: &JobRecord) -> ProcResult {
    let job = load_job(ctx, cmd.key, "update timeout of")?;
    if job.state != JobState::Activated {
        return Err(Rejection::invalid_state(format!(
            "Expected to update the timeout of job with key '{}', but it is not active",
            cmd.key
        )));
    }
    let mut record = job.record.clone();
    record.timeout = j.timeout;
    record.deadline = ctx.now + j.timeout;
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::TimeoutUpdated,
        RecordValue::Job(Box::new(record)),
    );
    Ok(())
}

/// Written by the scheduler when an activated job's deadline passed.
pub fn time_out(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let job = load_job(ctx, cmd.key, "time out")?;
    if job.state != JobState::Activated || job.record.deadline > ctx.now {
        return Err(Rejection::invalid_state(format!(
            "Expected to time out activated job with key '{}', but it is not timed out",
            cmd.key
        )));
    }
    ctx.event(
        cmd.key,
        Intent::TimedOut,
        RecordValue::Job(Box::new(job.record.clone())),
    );
    publish_work(ctx, cmd.key, &job.record);
    Ok(())
}

/// Written by the scheduler when a failed job's retry backoff passed.
pub fn recur(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let job = load_job(ctx, cmd.key, "recur")?;
    if job.state != JobState::FailedBackoff {
        return Err(Rejection::invalid_state(format!(
            "Expected job with key '{}' to wait for its backoff, but it does not",
            cmd.key
        )));
    }
    ctx.event(
        cmd.key,
        Intent::RecurredAfterBackoff,
        RecordValue::Job(Box::new(job.record.clone())),
    );
    publish_work(ctx, cmd.key, &job.record);
    Ok(())
}
