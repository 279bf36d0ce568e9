//! Camunda 8.9's job statistics, counted as the JOB records are taken in: a batch's increments
//! are coalesced per (minute, partition, job type, worker, tenant) and per (minute, partition,
//! job type, error code, error message, worker) in memory, then written with one upsert per
//! key that adds them to the stored counts, in the transaction that stores the position (so a
//! record is counted once, whatever the exporter delivers twice).
//!
//! What counts, as Camunda 8.9's engine counts its job metrics: a job is `created` by its JOB
//! CREATED, `completed` by its JOB COMPLETED, and `failed` by JOB FAILED (a worker reported a
//! failure, retries left or not), JOB ERROR_THROWN (a worker threw a BPMN error) and JOB
//! TIMED_OUT (its worker did not finish in time). A failure and a thrown error also count as an
//! error of their code and message (a timeout has neither).

use std::collections::BTreeMap;

use zest_protocol::{Intent, JobRecord};

use crate::db::{params, Conn};

/// Bucket width: one minute, in epoch milliseconds.
pub const MINUTE_MS: i64 = 60_000;

/// (bucket, partition, job type, worker, tenant).
type StatKey = (i64, u32, String, String, String);
/// (bucket, partition, job type, error code, error message, worker).
type ErrorKey = (i64, u32, String, String, String, String);

/// Counts of one key: created, completed, failed, and the time of the last of each.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub created: i64,
    pub completed: i64,
    pub failed: i64,
    pub created_last: i64,
    pub completed_last: i64,
    pub failed_last: i64,
}

/// A batch's increments, coalesced per key.
#[derive(Default, Debug)]
pub struct JobStats {
    pub counts: BTreeMap<StatKey, Counts>,
    /// The number of errors of each key and the time of the last.
    pub errors: BTreeMap<ErrorKey, (i64, i64)>,
}

impl JobStats {
    /// Counts one JOB event of `partition` at `at` (epoch ms).
    pub fn add(&mut self, partition: u32, at: i64, intent: Intent, j: &JobRecord) {
        let bucket = at.div_euclid(MINUTE_MS) * MINUTE_MS;
        let key = (
            bucket,
            partition,
            j.job_type.clone(),
            j.worker.clone(),
            j.tenant_id.clone(),
        );
        match intent {
            Intent::Created => {
                let c = self.counts.entry(key).or_default();
                c.created += 1;
                c.created_last = c.created_last.max(at);
            }
            Intent::Completed => {
                let c = self.counts.entry(key).or_default();
                c.completed += 1;
                c.completed_last = c.completed_last.max(at);
            }
            Intent::Failed | Intent::ErrorThrown | Intent::TimedOut => {
                let c = self.counts.entry(key).or_default();
                c.failed += 1;
                c.failed_last = c.failed_last.max(at);
                if intent == Intent::TimedOut {
                    return;
                }
                let error = (
                    bucket,
                    partition,
                    j.job_type.clone(),
                    j.error_code.clone(),
                    j.error_message.clone(),
                    j.worker.clone(),
                );
                let e = self.errors.entry(error).or_default();
                e.0 += 1;
                e.1 = e.1.max(at);
            }
            _ => {}
        }
    }

    /// Adds the increments to the stored counts (one upsert per key).
    pub fn write(&self, tx: &Conn) -> crate::db::Result<()> {
        for ((bucket, partition, job_type, worker, tenant), c) in &self.counts {
            tx.execute(
                "INSERT INTO job_stat (bucket, partition_id, job_type, worker, tenant_id, \
                 created, completed, failed, created_last, completed_last, failed_last) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
                 ON CONFLICT(bucket, partition_id, job_type, worker, tenant_id) DO UPDATE SET \
                 created = job_stat.created + excluded.created, \
                 completed = job_stat.completed + excluded.completed, \
                 failed = job_stat.failed + excluded.failed, \
                 created_last = CASE WHEN excluded.created_last > job_stat.created_last \
                   THEN excluded.created_last ELSE job_stat.created_last END, \
                 completed_last = CASE WHEN excluded.completed_last > job_stat.completed_last \
                   THEN excluded.completed_last ELSE job_stat.completed_last END, \
                 failed_last = CASE WHEN excluded.failed_last > job_stat.failed_last \
                   THEN excluded.failed_last ELSE job_stat.failed_last END",
                params![
                    *bucket,
                    *partition,
                    *job_type,
                    *worker,
                    *tenant,
                    c.created,
                    c.completed,
                    c.failed,
                    c.created_last,
                    c.completed_last,
                    c.failed_last
                ],
            )?;
        }
        for ((bucket, partition, job_type, code, message, worker), (count, last)) in &self.errors {
            tx.execute(
                "INSERT INTO job_error_stat (bucket, partition_id, job_type, error_code, \
                 error_message, worker, count, last) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
                 ON CONFLICT(bucket, partition_id, job_type, error_code, error_message, worker) \
                 DO UPDATE SET count = job_error_stat.count + excluded.count, \
                 last = CASE WHEN excluded.last > job_error_stat.last \
                   THEN excluded.last ELSE job_error_stat.last END",
                params![*bucket, *partition, *job_type, *code, *message, *worker, *count, *last],
            )?;
        }
        Ok(())
    }
}
