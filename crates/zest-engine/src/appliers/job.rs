//! JOB and JOB_BATCH: jobs, their queues (activatable by type, deadlines, back-offs) and the
//! listener counts of the element instances they belong to.

use super::*;
use crate::appliers::update_instance;
use crate::keys::activatable_key;
use crate::keys::due_key;
use crate::keys::user_task_key;
use crate::state::key_i64;
use crate::state::Ks;
use crate::state::Txn;
use crate::types::JobState;
use crate::types::ListenerProgress;
use crate::types::PendingTransition;
use crate::types::StoredJob;
use zest_model::ListenerEventType;

pub(super) fn apply(txn: &mut Txn<'_>, r: &Record, j: &zest_protocol::JobRecord) {
    let key = key_i64(r.key);
    match r.intent {
        Intent::Created => {
            txn.put(
                Ks::Jobs,
                key.clone(),
                &StoredJob {
                    state: JobState::Activatable,
                    record: j.clone(),
                },
            );
            txn.put_raw(
                Ks::JobsActivatable,
                activatable_key(&j.job_type, r.key),
                Vec::new(),
            );
            update_instance(txn, j.element_instance_key, |e| e.job_key = r.key);
        }
        Intent::Completed => {
            let state = remove_job(txn, r.key);
            if j.kind == zest_protocol::JobKind::TaskListener {
                count_task_listener(txn, j.element_instance_key);
            } else {
                count_listener(txn, j.element_instance_key, state);
            }
        }
        Intent::Canceled => {
            remove_job(txn, r.key);
        }
        // a caught error: the job ends (Zeebe marks an uncaught one NO_CATCH_EVENT_FOUND and
        // keeps it for its incident)
        Intent::ErrorThrown if j.element_id != NO_CATCH_EVENT_FOUND => {
            remove_job(txn, r.key);
        }
        _ => {
            let Some(mut stored) = txn.get::<StoredJob>(Ks::Jobs, &key) else {
                return;
            };
            remove_job_indexes(txn, r.key, &stored);
            match r.intent {
                Intent::Failed => {
                    stored.record.retries = j.retries;
                    stored.record.error_message = j.error_message.clone();
                    stored.record.retry_backoff = j.retry_backoff;
                    stored.record.recurring_time = j.recurring_time;
                    stored.record.deadline = -1;
                    stored.state = if j.retries > 0 {
                        if j.retry_backoff > 0 {
                            JobState::FailedBackoff
                        } else {
                            JobState::Activatable
                        }
                    } else {
                        JobState::Failed
                    };
                }
                Intent::TimedOut | Intent::RecurredAfterBackoff | Intent::Yielded => {
                    stored.record.deadline = -1;
                    stored.state = JobState::Activatable;
                }
                Intent::RetriesUpdated => stored.record.retries = j.retries,
                Intent::ErrorThrown => {
                    stored.state = JobState::ErrorThrown;
                    stored.record.error_code = j.error_code.clone();
                    stored.record.error_message = j.error_message.clone();
                    stored.record.deadline = -1;
                }
                Intent::TimeoutUpdated => {
                    stored.record.deadline = j.deadline;
                    stored.record.timeout = j.timeout;
                }
                Intent::Migrated => {
                    stored.record.element_id = j.element_id.clone();
                    stored.record.bpmn_process_id = j.bpmn_process_id.clone();
                    stored.record.process_definition_key = j.process_definition_key;
                    stored.record.process_definition_version = j.process_definition_version;
                }
                _ => {}
            }
            add_job_indexes(txn, r.key, &stored);
            txn.put(Ks::Jobs, key, &stored);
        }
    }
}

/// JOB_BATCH ACTIVATED: the jobs handed to a worker.
pub(super) fn batch(txn: &mut Txn<'_>, r: &Record, b: &zest_protocol::JobBatchRecord) {
    if r.intent != Intent::Activated {
        return;
    }
    for (job_key, job) in b.job_keys.iter().zip(b.jobs.iter()) {
        let Some(mut stored): Option<StoredJob> = txn.get(Ks::Jobs, &key_i64(*job_key)) else {
            continue;
        };
        txn.delete(
            Ks::JobsActivatable,
            activatable_key(&stored.record.job_type, *job_key),
        );
        stored.state = JobState::Activated;
        stored.record.worker = job.worker.clone();
        stored.record.deadline = job.deadline;
        stored.record.timeout = job.timeout;
        txn.put_raw(
            Ks::JobDeadlines,
            due_key(job.deadline, *job_key),
            Vec::new(),
        );
        txn.put(Ks::Jobs, key_i64(*job_key), &stored);
    }
}

/// The job's element id in ERROR_THROWN when no catch event caught the error (Zeebe's marker).
pub(crate) const NO_CATCH_EVENT_FOUND: &str = "NO_CATCH_EVENT_FOUND";

/// Removes a job; returns the state of its element instance.
pub(super) fn remove_job(txn: &mut Txn<'_>, job_key: i64) -> Option<Intent> {
    let key = key_i64(job_key);
    let stored = txn.get::<StoredJob>(Ks::Jobs, &key)?;
    remove_job_indexes(txn, job_key, &stored);
    txn.delete(Ks::Jobs, key);
    let mut state = None;
    update_instance(txn, stored.record.element_instance_key, |e| {
        e.job_key = -1;
        state = Some(e.state);
    });
    state
}

/// A task listener's job completed: one more listener of its task's transition is done.
pub(super) fn count_task_listener(txn: &mut Txn<'_>, element_instance_key: i64) {
    let Some(task_key) = txn.get::<i64>(Ks::UserTasks, &user_task_key(b'e', element_instance_key))
    else {
        return;
    };
    let pending_key = user_task_key(b'p', task_key);
    if let Some(mut p) = txn.get::<PendingTransition>(Ks::UserTasks, &pending_key) {
        p.done += 1;
        txn.put(Ks::UserTasks, pending_key, &p);
    }
}

/// An execution listener's job completed (its element instance is ACTIVATING or COMPLETING):
/// one more listener of that phase is done.
pub(super) fn count_listener(txn: &mut Txn<'_>, element_instance_key: i64, state: Option<Intent>) {
    let Some(phase) = state.and_then(listener_phase) else {
        return;
    };
    let end = phase == zest_model::ListenerEventType::End;
    let key = key_i64(element_instance_key);
    let mut progress: ListenerProgress = txn
        .get(Ks::ExecutionListeners, &key)
        .filter(|p: &ListenerProgress| p.end == end)
        .unwrap_or(ListenerProgress { end, done: 0 });
    progress.done += 1;
    txn.put(Ks::ExecutionListeners, key, &progress);
}

pub(super) fn remove_job_indexes(txn: &mut Txn<'_>, job_key: i64, job: &StoredJob) {
    match job.state {
        JobState::Activatable => txn.delete(
            Ks::JobsActivatable,
            activatable_key(&job.record.job_type, job_key),
        ),
        JobState::Activated => txn.delete(Ks::JobDeadlines, due_key(job.record.deadline, job_key)),
        JobState::FailedBackoff => {
            txn.delete(Ks::JobBackoffs, due_key(job.record.recurring_time, job_key))
        }
        JobState::Failed | JobState::ErrorThrown => {}
    }
}

pub(super) fn add_job_indexes(txn: &mut Txn<'_>, job_key: i64, job: &StoredJob) {
    match job.state {
        JobState::Activatable => txn.put_raw(
            Ks::JobsActivatable,
            activatable_key(&job.record.job_type, job_key),
            Vec::new(),
        ),
        JobState::Activated => txn.put_raw(
            Ks::JobDeadlines,
            due_key(job.record.deadline, job_key),
            Vec::new(),
        ),
        JobState::FailedBackoff => txn.put_raw(
            Ks::JobBackoffs,
            due_key(job.record.recurring_time, job_key),
            Vec::new(),
        ),
        JobState::Failed | JobState::ErrorThrown => {}
    }
}

/// The listener phase an element instance in state `state` is in, if any.
pub(crate) fn listener_phase(state: Intent) -> Option<ListenerEventType> {
    match state {
        Intent::ElementActivating => Some(ListenerEventType::Start),
        Intent::ElementCompleting => Some(ListenerEventType::End),
        _ => None,
    }
}
