//! Jobs: activation (one partition, or every partition with long polling), completion,
//! failure, thrown errors, retries and timeouts.

use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use zest_broker::PushedJob;
use zest_protocol::{Intent, JobBatchRecord, JobRecord, JobResult, PartitionId, RecordValue};

use super::{variables_document, CommandError, Commands};

/// What a worker asks for, from an activation or a job stream (`verb` names the call in
/// errors): a non-blank type and a timeout of at least 1 ms. The batch size is filled in per
/// activation.
pub fn jobs_wanted(
    verb: &str,
    job_type: &str,
    worker: &str,
    timeout: i64,
    fetch_variables: &[String],
    tenant_ids: &[String],
) -> Result<JobBatchRecord, CommandError> {
    if job_type.trim().is_empty() {
        return Err(CommandError::Invalid(format!(
            "Expected to {verb} jobs of a type, but the type was blank"
        )));
    }
    if timeout < 1 {
        return Err(CommandError::Invalid(format!(
            "Expected to {verb} jobs with a timeout of at least 1 ms, but it was {timeout}"
        )));
    }
    Ok(JobBatchRecord {
        job_type: job_type.to_string(),
        worker: worker.to_string(),
        timeout,
        fetch_variables: fetch_variables.to_vec(),
        tenant_ids: tenant_ids.to_vec(),
        ..Default::default()
    })
}

/// How a job failed: retries left, the message, the backoff before the next retry (ms) and
/// variables for the task's scope.
#[derive(Debug, Default)]
pub struct JobFailure {
    pub retries: i32,
    pub error_message: String,
    pub retry_backoff: i64,
    pub variables: String,
}

/// One partition's activated jobs, or why a poll ended without any.
pub type PolledBatch = Result<Vec<PushedJob>, CommandError>;

impl Commands {
    /// Activates up to `max` jobs like `wanted` (type, worker, timeout, variables, tenants) on
    /// one partition: the one command behind long polling and job streams alike.
    pub async fn activate(
        &self,
        partition: PartitionId,
        wanted: &JobBatchRecord,
        max: i32,
    ) -> Result<Vec<PushedJob>, CommandError> {
        let batch = JobBatchRecord {
            max_jobs_to_activate: max,
            ..wanted.clone()
        };
        let event = self
            .send(
                partition,
                -1,
                Intent::Activate,
                RecordValue::JobBatch(batch),
            )
            .await?;
        Ok(match event.value {
            RecordValue::JobBatch(b) => b
                .job_keys
                .iter()
                .zip(b.jobs)
                .map(|(&key, job)| PushedJob { key, job })
                .collect(),
            _ => Vec::new(),
        })
    }

    /// Activates up to `max` jobs over every partition, starting at the next in turn (as
    /// Zeebe's gateway), and when none is found waits for one (`request_timeout` ms; 0 the
    /// gateway's default, below 0 no waiting). Each partition's jobs come as a batch of their
    /// own: a partition's batch fits a client's default 4 MiB message limit (the engine bounds
    /// its variables), several together may not. A partition that fails is passed over, as
    /// Zeebe's gateway does; its failure comes only when no partition gave a job. The channel
    /// closes when the poll is over.
    pub fn poll_jobs(
        &self,
        wanted: JobBatchRecord,
        max: i32,
        request_timeout: i64,
    ) -> mpsc::Receiver<PolledBatch> {
        let (tx, rx) = mpsc::channel(1);
        if max < 1 {
            // a broker's gateway hands out at most maxJobsToActivate jobs over the partitions:
            // with none wanted it asks no partition and answers no jobs
            return rx;
        }
        let long_polling = match request_timeout {
            0 => Some(self.config.default_long_polling),
            t if t < 0 => None,
            t => Some(Duration::from_millis(t as u64)),
        };
        let deadline = long_polling.map(|d| tokio::time::Instant::now() + d);
        let this = self.clone();
        tokio::spawn(async move { this.long_poll(wanted, max, deadline, tx).await });
        rx
    }

    async fn long_poll(
        &self,
        wanted: JobBatchRecord,
        max: i32,
        deadline: Option<tokio::time::Instant>,
        tx: mpsc::Sender<PolledBatch>,
    ) {
        // Subscribe before the first attempt so that no notification is missed.
        let mut notifications = self.broker.subscribe_jobs();
        loop {
            if !self.wait_for_job_room(&tx, deadline).await {
                return;
            }
            match self.poll_once(&wanted, max, &tx).await {
                Polled::Answered | Polled::ClientGone => return,
                Polled::Failed(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
                Polled::Nothing => {}
            }
            let Some(deadline) = deadline else { return };
            // Park until a job of this type appears, the deadline passes, the client goes or
            // the node stops (then the answer is an empty batch, as at the deadline).
            loop {
                tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => return,
                    _ = tx.closed() => return,
                    _ = self.stopping() => return,
                    n = notifications.recv() => match n {
                        Ok(t) if t == wanted.job_type => break,
                        Ok(_) => continue,
                        Err(RecvError::Lagged(_)) => break,
                        Err(RecvError::Closed) => return,
                    }
                }
            }
        }
    }

    /// One round over the partitions.
    async fn poll_once(
        &self,
        wanted: &JobBatchRecord,
        max: i32,
        tx: &mpsc::Sender<PolledBatch>,
    ) -> Polled {
        // counted from each partition's answer on (see `wait_for_job_room`)
        let mut held = self.broker.hold_polled_jobs();
        let mut remaining = max;
        let count = self.broker.partition_count();
        let first = self.broker.next_activation_partition();
        let mut failure = None;
        let mut answered = false;
        for partition in (0..count).map(|i| (first - 1 + i) % count + 1) {
            if remaining < 1 {
                break;
            }
            match self.activate(partition, wanted, remaining).await {
                Ok(activated) if activated.is_empty() => {}
                Ok(activated) => {
                    remaining -= activated.len() as i32;
                    held.add(&activated);
                    if tx.send(Ok(activated)).await.is_err() {
                        return Polled::ClientGone;
                    }
                    answered = true;
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        drop(held);
        match failure {
            _ if answered => Polled::Answered,
            Some(e) => Polled::Failed(e),
            None => Polled::Nothing,
        }
    }

    /// Jobs activated for polls count in the node's share with the job streams'
    /// (`job_stream_bytes`), from each partition's answer until the gateway hands the batch on.
    /// While the share is full, a long poll waits as it would for jobs to appear: false when it
    /// should end instead (no long polling, its deadline, the client gone or the node stopping).
    async fn wait_for_job_room<T: Send>(
        &self,
        tx: &mpsc::Sender<T>,
        deadline: Option<tokio::time::Instant>,
    ) -> bool {
        if self.broker.has_job_room() {
            return true;
        }
        let Some(deadline) = deadline else {
            return false;
        };
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => false,
            _ = tx.closed() => false,
            _ = self.stopping() => false,
            _ = self.broker.job_room() => true,
        }
    }

    /// Completes job `key` with variables (JSON object text) and the worker's result.
    pub async fn complete_job(
        &self,
        key: i64,
        variables: String,
        result: Option<JobResult>,
    ) -> Result<(), CommandError> {
        let job = JobRecord {
            variables: variables_document(variables, "variables")?,
            result: result.unwrap_or_default(),
            ..Default::default()
        };
        self.job_command(key, Intent::Complete, job, "complete job")
            .await
    }

    /// Fails job `key`: with retries left it is retried (after the backoff), else an incident.
    pub async fn fail_job(&self, key: i64, failure: JobFailure) -> Result<(), CommandError> {
        let job = JobRecord {
            retries: failure.retries,
            error_message: failure.error_message,
            retry_backoff: failure.retry_backoff,
            variables: variables_document(failure.variables, "variables")?,
            ..Default::default()
        };
        self.job_command(key, Intent::Fail, job, "fail job").await
    }

    /// Throws a BPMN error from job `key`, caught by the error catch event of `error_code`.
    pub async fn throw_job_error(
        &self,
        key: i64,
        error_code: String,
        error_message: String,
        variables: String,
    ) -> Result<(), CommandError> {
        if error_code.trim().is_empty() {
            return Err(CommandError::Invalid(
                "Expected to throw an error with an error code, but the errorCode was blank".into(),
            ));
        }
        let job = JobRecord {
            error_code,
            error_message,
            variables: variables_document(variables, "variables")?,
            ..Default::default()
        };
        let what = "throw an error for job";
        self.job_command(key, Intent::ThrowError, job, what).await
    }

    /// Sets the retries of job `key`.
    pub async fn update_job_retries(&self, key: i64, retries: i32) -> Result<(), CommandError> {
        let job = JobRecord {
            retries,
            ..Default::default()
        };
        let what = "update retries for job";
        self.job_command(key, Intent::UpdateRetries, job, what)
            .await
    }

    /// Sets the deadline of job `key` to `timeout` ms from now.
    pub async fn update_job_timeout(&self, key: i64, timeout: i64) -> Result<(), CommandError> {
        let job = JobRecord {
            timeout,
            ..Default::default()
        };
        let what = "update the timeout of job";
        self.job_command(key, Intent::UpdateTimeout, job, what)
            .await
    }

    async fn job_command(
        &self,
        key: i64,
        intent: Intent,
        job: JobRecord,
        what: &str,
    ) -> Result<(), CommandError> {
        let value = RecordValue::Job(Box::new(job));
        self.send_keyed(key, intent, value, || {
            format!("Expected to {what} with key '{key}', but no such job was found")
        })
        .await?;
        Ok(())
    }
}

/// How one round over the partitions ended.
enum Polled {
    Answered,
    ClientGone,
    Failed(CommandError),
    Nothing,
}
