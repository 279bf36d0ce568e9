//! The processing context of one command and everything it causes: the record writers, the key
//! generator, responses and side effects ([`Ctx`]), and what processing returns to the broker.
//! Every processor, element and shared behaviour writes through it; it sits below all of them.

use std::collections::VecDeque;

use zest_protocol::{
    encode_key, Intent, JobRecord, PartitionId, Position, Record, RecordType, RecordValue,
    RejectionType,
};

use crate::appliers::apply_event;
use crate::models::Models;
use crate::state::Txn;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub kind: RejectionType,
    pub reason: String,
}

impl Rejection {
    pub fn new(kind: RejectionType, reason: impl Into<String>) -> Self {
        Rejection {
            kind,
            reason: reason.into(),
        }
    }
    pub fn not_found(reason: impl Into<String>) -> Self {
        Self::new(RejectionType::NotFound, reason)
    }
    pub fn invalid_argument(reason: impl Into<String>) -> Self {
        Self::new(RejectionType::InvalidArgument, reason)
    }
    pub fn invalid_state(reason: impl Into<String>) -> Self {
        Self::new(RejectionType::InvalidState, reason)
    }
}

pub type ProcResult<T = ()> = Result<T, Rejection>;

/// A response to a client request, sent by the broker once the records are committed.
#[derive(Debug, Clone)]
pub struct Response {
    pub request_id: i64,
    pub request_stream_id: i32,
    /// The event that answers the request, or the command's rejection.
    pub record: Record,
}

/// Work for the broker after the batch is committed.
#[derive(Debug, Clone, PartialEq)]
pub enum SideEffect {
    /// Jobs of this type became activatable: wake parked ActivateJobs requests and streams.
    JobsAvailable(String),
    /// A command for another partition (message subscriptions), to append to its log.
    SendCommand(PartitionId, Box<Record>),
    /// A job activated in this batch for an open job stream (JOB_BATCH ACTIVATED is written):
    /// push it, variables included, to the stream that [`JobStreams::reserve`] reserved for it.
    PushJob { job_key: i64, job: Box<JobRecord> },
    /// An activation took all the jobs it asked for and more of its type are still waiting;
    /// `next_job_key` is the oldest of them (the broker's job backlog gate asks how long it
    /// has waited).
    JobsLeftWaiting { job_type: String, next_job_key: i64 },
}

/// The job streams open on this node (StreamActivatedJobs), as the engine sees them: Zeebe's job
/// push. When a job becomes activatable the engine asks for a stream of its type; with one, the
/// job is activated in the same batch (JOB_BATCH ACTIVATED) and pushed once that batch commits,
/// which saves a command and a commit per job. Not deterministic, and need not be: the
/// activation is an event, so replay only applies it.
pub trait JobStreams: Send + Sync {
    /// Picks a stream that takes jobs like `job` (type, tenant) and has room, and reserves a
    /// place in it for `job_key`; None when no stream can take it now.
    fn reserve(&self, job_key: i64, job: &JobRecord) -> Option<StreamTarget>;
}

/// What a job stream asked for: the activation's worker, timeout and variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamTarget {
    pub worker: String,
    pub timeout: i64,
    pub fetch_variables: Vec<String>,
}

/// What processing one command produced: the records to append (the command first), the
/// responses to send and the side effects to run once they are committed.
#[derive(Debug, Default)]
pub struct ProcessingResult {
    pub records: Vec<Record>,
    pub responses: Vec<Response>,
    pub side_effects: Vec<SideEffect>,
}

impl ProcessingResult {
    /// True when the batch changes nothing and needs no log entry (e.g. a job activation that
    /// found no jobs): only the command and maybe its response.
    pub fn is_read_only(&self) -> bool {
        is_read_only(&self.records)
    }
}

/// True when the records of one command change nothing and need no log entry (see
/// [`ProcessingResult::is_read_only`]); for the records [`crate::Engine::process_into`] appended.
pub fn is_read_only(records: &[Record]) -> bool {
    records.len() <= 1 && records.iter().all(|r| r.record_type == RecordType::Command)
}

/// The processing context of one batch: record writers, key generator, responses.
pub(crate) struct Ctx<'e, 't, 'b> {
    pub txn: &'t mut Txn<'b>,
    pub models: &'e mut Models,
    /// Open job streams, when the broker has any (job push).
    pub streams: Option<&'e dyn JobStreams>,
    pub partition_id: PartitionId,
    pub partition_count: u32,
    pub now: i64,
    /// The records written so far: those of this batch from `first_record` on (the caller's
    /// before it). The queue holds indexes into it.
    pub(crate) records: &'t mut Vec<Record>,
    pub(crate) first_record: usize,
    pub(crate) queue: VecDeque<usize>,
    pub(crate) result: ProcessingResult,
    pub(crate) next_position: Position,
    pub(crate) source_position: i64,
    pub(crate) request_id: i64,
    pub(crate) request_stream_id: i32,
    /// The next timer of a non-interrupting timer cycle boundary event that fired in this
    /// batch, created when the boundary event completes (Zeebe's order): (process instance key,
    /// boundary event id, timer).
    pub cycle_timers: Vec<(i64, String, zest_protocol::TimerRecord)>,
}

impl Ctx<'_, '_, '_> {
    /// A new key on this partition.
    pub fn next_key(&mut self) -> i64 {
        let base = encode_key(self.partition_id, 0);
        let key = self.txn.max_key().max(base) + 1;
        self.txn.set_max_key(key);
        key
    }

    fn record(
        &mut self,
        record_type: RecordType,
        key: i64,
        intent: Intent,
        value: RecordValue,
    ) -> Record {
        let position = self.next_position;
        self.next_position += 1;
        self.build(position, record_type, key, intent, value)
    }

    fn build(
        &self,
        position: Position,
        record_type: RecordType,
        key: i64,
        intent: Intent,
        value: RecordValue,
    ) -> Record {
        Record {
            position,
            partition_id: self.partition_id,
            key,
            timestamp: self.now,
            record_type,
            value_type: value.value_type(),
            intent,
            rejection_type: RejectionType::NullVal,
            rejection_reason: String::new(),
            source_record_position: self.source_position,
            request_id: -1,
            request_stream_id: -1,
            value,
        }
    }

    /// Writes an event and applies it to state at once, so later steps of the batch see it.
    /// Returns the event as written (most callers need nothing of it, so it is not cloned).
    pub fn event(&mut self, key: i64, intent: Intent, value: RecordValue) -> &Record {
        let r = self.record(RecordType::Event, key, intent, value);
        apply_event(self.txn, self.models, &r);
        self.records.push(r);
        self.records.last().expect("just pushed")
    }

    /// Like `event`, but the event carries the request of the batch's client command (used
    /// where state must remember the requester, e.g. create-with-result).
    pub fn event_for_request(&mut self, key: i64, intent: Intent, value: RecordValue) -> Record {
        let mut r = self.record(RecordType::Event, key, intent, value);
        r.request_id = self.request_id;
        r.request_stream_id = self.request_stream_id;
        apply_event(self.txn, self.models, &r);
        self.records.push(r.clone());
        r
    }

    /// Replaces the value of the command being processed, as written to the log. Zeebe
    /// processes a batch's follow-up commands before it writes them, so what a processor fills
    /// into a command's value shows in the log; this reproduces that where it is visible.
    pub fn amend_command(&mut self, value: RecordValue) {
        if let Some(r) = self.records[self.first_record..]
            .iter_mut()
            .find(|r| r.position as i64 == self.source_position)
        {
            if r.value.value_type() == value.value_type() {
                r.value = value;
            }
        }
    }

    /// Writes a follow-up command, processed later in the same batch.
    pub fn command(&mut self, key: i64, intent: Intent, value: RecordValue) {
        let r = self.record(RecordType::Command, key, intent, value);
        self.records.push(r);
        self.queue.push_back(self.records.len() - 1);
    }

    /// Sends a command to a partition: appended to this batch when it is this partition (as
    /// Zeebe does), otherwise handed to the broker once the batch is committed.
    pub fn send(&mut self, partition: PartitionId, intent: Intent, value: RecordValue) {
        self.send_keyed(partition, -1, intent, value);
    }

    /// Like `send`, with a key (command distribution: the distribution's key).
    pub fn send_keyed(
        &mut self,
        partition: PartitionId,
        key: i64,
        intent: Intent,
        value: RecordValue,
    ) {
        if partition == self.partition_id {
            self.command(key, intent, value);
        } else {
            let mut r = self.build(0, RecordType::Command, key, intent, value);
            r.partition_id = partition;
            // a position of this partition's log means nothing on the other
            r.source_record_position = -1;
            self.result
                .side_effects
                .push(SideEffect::SendCommand(partition, Box::new(r)));
        }
    }

    /// Rejects a follow-up command without failing the batch: the rejection is written after
    /// it (e.g. a message subscription that was closed meanwhile).
    pub fn reject(&mut self, cmd: &Record, kind: RejectionType, reason: String) {
        let mut r = self.record(
            RecordType::CommandRejection,
            cmd.key,
            cmd.intent,
            cmd.value.clone(),
        );
        r.rejection_type = kind;
        r.rejection_reason = reason;
        self.records.push(r);
    }

    /// Answers the client command of this batch with `record`.
    pub fn respond(&mut self, cmd: &Record, record: Record) {
        if cmd.request_id >= 0 {
            self.result.responses.push(Response {
                request_id: cmd.request_id,
                request_stream_id: cmd.request_stream_id,
                record,
            });
        }
    }

    /// Writes an event and answers the batch's command with it (if a client waits for it).
    pub fn event_and_respond(
        &mut self,
        cmd: &Record,
        key: i64,
        intent: Intent,
        value: RecordValue,
    ) {
        let event = self.event(key, intent, value);
        if cmd.request_id >= 0 {
            let event = event.clone();
            self.respond(cmd, event);
        }
    }

    /// Answers a request other than the batch's own (e.g. a create-with-result waiting for the
    /// instance to complete).
    pub fn respond_to(&mut self, request_id: i64, request_stream_id: i32, record: Record) {
        self.result.responses.push(Response {
            request_id,
            request_stream_id,
            record,
        });
    }

    pub fn side_effect(&mut self, effect: SideEffect) {
        if !self.result.side_effects.contains(&effect) {
            self.result.side_effects.push(effect);
        }
    }

    /// Pushes `job` (activated in this batch) to the stream reserved for it, once committed.
    pub fn push_job(&mut self, job_key: i64, job: JobRecord) {
        self.result.side_effects.push(SideEffect::PushJob {
            job_key,
            job: Box::new(job),
        });
    }

    /// A record that is only sent to a client, never written (e.g. a process instance result).
    pub fn response_only_record(&self, key: i64, intent: Intent, value: RecordValue) -> Record {
        self.build(0, RecordType::Event, key, intent, value)
    }
}

/// Builds a client command record (the broker fills in position, partition and timestamp).
pub fn new_command(
    key: i64,
    intent: Intent,
    value: RecordValue,
    request_id: i64,
    request_stream_id: i32,
) -> Record {
    Record {
        position: 0,
        partition_id: 0,
        key,
        timestamp: 0,
        record_type: RecordType::Command,
        value_type: value.value_type(),
        intent,
        rejection_type: RejectionType::NullVal,
        rejection_reason: String::new(),
        source_record_position: -1,
        request_id,
        request_stream_id,
        value,
    }
}
