//! The stream processor's engine for one partition: takes one command, runs it and every
//! command it causes through the processors ([`crate::processors`]) until all tokens reach wait
//! states, and returns the records, responses and side effects; replays events through the
//! appliers.

use std::collections::VecDeque;
use std::sync::Arc;

use zest_protocol::{PartitionId, Position, Record, RecordType};

use crate::appliers::{apply_event, observe_key};
use crate::context::Response;
use crate::context::{Ctx, JobStreams, ProcessingResult, Rejection};
use crate::models::Models;
use crate::processors::dispatch;
use crate::state::Txn;
use zest_protocol::RejectionType;

/// The stream processor's engine for one partition.
pub struct Engine {
    partition_id: PartitionId,
    partition_count: u32,
    models: Models,
    job_streams: Option<Arc<dyn JobStreams>>,
}

/// Meta key of the highest key generated on this partition.
impl Engine {
    pub fn new(partition_id: PartitionId) -> Engine {
        Engine {
            partition_id,
            partition_count: 1,
            models: Models::default(),
            job_streams: None,
        }
    }

    /// Caches at most `capacity` parsed process models and decision graphs each.
    pub fn with_model_cache(mut self, capacity: usize) -> Engine {
        self.models = Models::with_capacity(capacity);
        self
    }

    /// Keeps evaluated multi-instance input collections within about `bytes` of memory.
    pub fn with_collection_cache(mut self, bytes: usize) -> Engine {
        self.models = std::mem::take(&mut self.models).with_collection_bytes(bytes);
        self
    }

    /// Parsed models held: (processes, decision graphs).
    pub fn cached_models(&self) -> (usize, usize) {
        self.models.len()
    }

    /// Pushes jobs to these job streams (see [`JobStreams`]); without, jobs wait for
    /// JOB_BATCH ACTIVATE.
    pub fn with_job_streams(mut self, streams: Arc<dyn JobStreams>) -> Engine {
        self.job_streams = Some(streams);
        self
    }

    /// Sets the number of partitions of the cluster (message routing needs it).
    pub fn with_partition_count(mut self, partition_count: u32) -> Engine {
        self.partition_count = partition_count.max(1);
        self
    }

    /// Forgets cached models (after a snapshot install replaced state).
    pub fn reset_caches(&mut self) {
        self.models.clear();
    }

    /// Processes one command and every command it causes, until all tokens reach wait states.
    /// `next_position` is the position of the first record to write; it is advanced past the
    /// records returned. On rejection, nothing but the rejected command and its rejection is
    /// written, and the txn holds no writes of this command.
    pub fn process(
        &mut self,
        txn: &mut Txn<'_>,
        command: Record,
        now: i64,
        next_position: &mut Position,
    ) -> ProcessingResult {
        // a creation with a typical payload writes about 45 records
        let mut records = Vec::with_capacity(32);
        let mut result = self.process_into(txn, command, now, next_position, &mut records);
        result.records = records;
        result
    }

    /// Like [`Engine::process`], but the records are appended to `records`, after what it
    /// holds, and the result's own `records` stay empty. A broker writing a group of commands
    /// into one log entry passes the entry's records: each record is then written once, where
    /// it stays, instead of into a vector of its own that grows and is moved again.
    pub fn process_into(
        &mut self,
        txn: &mut Txn<'_>,
        mut command: Record,
        now: i64,
        next_position: &mut Position,
        records: &mut Vec<Record>,
    ) -> ProcessingResult {
        let start_position = *next_position;
        command.position = start_position;
        command.partition_id = self.partition_id;
        command.timestamp = now;
        command.record_type = RecordType::Command;
        let first = records.len();
        let mut ctx = Ctx {
            txn,
            models: &mut self.models,
            streams: self.job_streams.as_deref(),
            partition_id: self.partition_id,
            partition_count: self.partition_count,
            now,
            records,
            first_record: first,
            queue: VecDeque::new(),
            result: ProcessingResult::default(),
            next_position: start_position + 1,
            source_position: -1,
            request_id: command.request_id,
            request_stream_id: command.request_stream_id,
            cycle_timers: Vec::new(),
        };
        ctx.records.push(command.clone());
        ctx.queue.push_back(first);
        let mut failure: Option<Rejection> = None;
        while let Some(idx) = ctx.queue.pop_front() {
            let cmd = ctx.records[idx].clone();
            ctx.source_position = cmd.position as i64;
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(&mut ctx, &cmd)));
            let res = match outcome {
                Ok(r) => r,
                Err(_) => Err(Rejection::new(
                    RejectionType::ProcessingError,
                    format!("Expected to process command {:?} {:?} without errors, but an internal error occurred", cmd.value_type, cmd.intent),
                )),
            };
            if let Err(rej) = res {
                if idx != first {
                    tracing::error!(
                        "follow-up command {:?} {:?} (key {}) was rejected: {}; the whole batch is rolled back",
                        cmd.value_type, cmd.intent, cmd.key, rej.reason
                    );
                    failure = Some(Rejection::new(RejectionType::ProcessingError, rej.reason));
                } else {
                    failure = Some(rej);
                }
                break;
            }
        }
        if let Some(rej) = failure {
            ctx.txn.rollback_command();
            let mut rejection = command.clone();
            rejection.position = start_position + 1;
            rejection.record_type = RecordType::CommandRejection;
            rejection.rejection_type = rej.kind;
            rejection.rejection_reason = rej.reason;
            rejection.source_record_position = start_position as i64;
            records.truncate(first);
            records.push(command.clone());
            records.push(rejection.clone());
            let mut result = ProcessingResult::default();
            if command.request_id >= 0 {
                result.responses.push(Response {
                    request_id: command.request_id,
                    request_stream_id: command.request_stream_id,
                    record: rejection,
                });
            }
            *next_position = start_position + 2;
            return result;
        }
        ctx.txn.commit_command();
        *next_position = ctx.next_position;
        ctx.result
    }

    /// Applies the events of committed records to state (replay, followers, and the leader once
    /// its batch is committed). Runs no command logic.
    pub fn apply(&mut self, txn: &mut Txn<'_>, records: &[Record]) {
        for r in records {
            self.apply_record(txn, r);
        }
        txn.commit_command();
    }

    /// Applies one record of a batch, for callers that decode a batch record by record; the
    /// batch's writes are [`Txn::into_writes`] once all its records are applied.
    pub fn apply_record(&mut self, txn: &mut Txn<'_>, r: &Record) {
        if r.record_type == RecordType::Event {
            apply_event(txn, &mut self.models, r);
        } else if r.record_type == RecordType::Command && r.source_record_position >= 0 {
            observe_key(txn, r);
        }
    }
}
