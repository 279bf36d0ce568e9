//! A test broker for the deterministic engine: drives `Engine::process` the way the broker's
//! partition does, commits the records by applying them with a second engine (the follower /
//! state machine), checks that processing and applying agree, and emulates the scheduler with a
//! fake clock.

#![allow(dead_code)]

pub mod fixtures;
#[allow(unused_imports)] // not every test file uses the fixtures
pub use fixtures::*;

use std::collections::BTreeMap;

use serde_json::Value;
use zest_engine::scope_variables;
use zest_engine::state::{key_i64, read_i64, Ks, MemState, StateRead, Txn, Writes};
use zest_engine::types::{ElementInstance, JobState, StoredIncident, StoredJob};
use zest_engine::{new_command, Engine, ProcessingResult, Response, SideEffect};
use zest_protocol::{
    codec, partition_of_key, DeploymentRecord, DeploymentResource, ErrorType, IncidentRecord,
    Intent, JobBatchRecord, JobRecord, ProcessInstanceCreationRecord, ProcessInstanceRecord,
    Record, RecordType, RecordValue, RejectionType, TimerRecord, UserTaskRecord, ValueType,
    VariableDocumentRecord, VariableDocumentUpdateSemantic,
};

pub const PARTITION: u32 = 1;
pub const STREAM: i32 = 1;
/// 2023-11-14T22:13:20Z: a plausible epoch-millis start for the fake clock.
pub const T0: i64 = 1_700_000_000_000;

/// What one command produced.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The records of the log entry (empty when the batch was read-only and not written).
    pub records: Vec<Record>,
    /// All records the engine returned, written or not.
    pub returned: Vec<Record>,
    pub responses: Vec<Response>,
    pub side_effects: Vec<SideEffect>,
    /// The request id of the client command, -1 for internal ones.
    pub request_id: i64,
}

impl Batch {
    /// The response to this batch's own command.
    pub fn response(&self) -> &Record {
        let rs: Vec<&Response> = self
            .responses
            .iter()
            .filter(|r| r.request_id == self.request_id && r.request_stream_id == STREAM)
            .collect();
        assert_eq!(
            rs.len(),
            1,
            "expected exactly one response to request {}, got {:?}",
            self.request_id,
            self.responses
        );
        &rs[0].record
    }

    pub fn has_response(&self) -> bool {
        self.responses
            .iter()
            .any(|r| r.request_id == self.request_id)
    }

    /// Asserts the command was rejected with `kind` and returns the reason.
    pub fn rejection(&self, kind: RejectionType) -> String {
        let r = self.response();
        assert_eq!(
            r.record_type,
            RecordType::CommandRejection,
            "expected a rejection, got {:?}",
            r
        );
        assert_eq!(r.rejection_type, kind, "reason: {}", r.rejection_reason);
        assert_eq!(
            self.returned.len(),
            2,
            "a rejection batch is the command and its rejection"
        );
        assert_eq!(self.returned[1].record_type, RecordType::CommandRejection);
        assert_eq!(self.returned[1].rejection_type, kind);
        r.rejection_reason.clone()
    }

    pub fn accepted(&self) -> &Record {
        let r = self.response();
        assert_eq!(
            r.record_type,
            RecordType::Event,
            "expected an event response, got {:?} {:?}: {}",
            r.rejection_type,
            r.value_type,
            r.rejection_reason
        );
        r
    }

    /// Events of this batch as (value type, intent, element id or job type / name).
    pub fn events(&self) -> Vec<(ValueType, Intent, String)> {
        events(&self.records)
    }

    pub fn pi_events(&self) -> Vec<(Intent, String)> {
        pi_events(&self.records)
    }

    pub fn find(&self, vt: ValueType, intent: Intent) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.is_event() && r.value_type == vt && r.intent == intent)
            .collect()
    }

    pub fn count(&self, vt: ValueType, intent: Intent) -> usize {
        self.find(vt, intent).len()
    }
}

/// A short label for a record's value: the element id for PROCESS_INSTANCE and JOB records, the
/// variable name for VARIABLE, the error type for INCIDENT, the target element for TIMER.
pub fn label(r: &Record) -> String {
    match &r.value {
        RecordValue::ProcessInstance(p) => p.element_id.clone(),
        RecordValue::Job(j) => j.element_id.clone(),
        RecordValue::Variable(v) => v.name.clone(),
        RecordValue::Incident(i) => format!("{:?}", i.error_type),
        RecordValue::Timer(t) => t.target_element_id.clone(),
        RecordValue::ProcessInstanceCreation(c) => c.bpmn_process_id.clone(),
        RecordValue::JobBatch(b) => b.job_type.clone(),
        RecordValue::Process(p) => p.bpmn_process_id.clone(),
        RecordValue::Message(m) => m.name.clone(),
        RecordValue::MessageSubscription(m) => m.message_name.clone(),
        RecordValue::ProcessMessageSubscription(m) => m.message_name.clone(),
        RecordValue::MessageStartEventSubscription(m) => m.start_event_id.clone(),
        RecordValue::ProcessEvent(e) => e.target_element_id.clone(),
        _ => String::new(),
    }
}

pub fn events(records: &[Record]) -> Vec<(ValueType, Intent, String)> {
    records
        .iter()
        .filter(|r| r.is_event())
        .map(|r| (r.value_type, r.intent, label(r)))
        .collect()
}

pub fn pi_events(records: &[Record]) -> Vec<(Intent, String)> {
    records
        .iter()
        .filter(|r| r.is_event() && r.value_type == ValueType::ProcessInstance)
        .map(|r| (r.intent, label(r)))
        .collect()
}

/// Builds an expected stream from `(intent, element)` pairs.
pub fn pi(list: &[(Intent, &str)]) -> Vec<(Intent, String)> {
    list.iter().map(|(i, e)| (*i, e.to_string())).collect()
}

pub struct Harness {
    /// The partition this harness runs (1 unless `on_partition`).
    pub pid: u32,
    pub partitions: u32,
    pub state: MemState,
    engine: Engine,
    follower: Engine,
    pub now: i64,
    next_position: u64,
    next_request: i64,
    /// Every record written, in log order.
    pub log: Vec<Record>,
    /// Every response sent, in order.
    pub responses: Vec<Response>,
    /// Times the processing txn generated a key that no event used (max_key differed).
    pub unused_keys: u32,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

impl Harness {
    pub fn new() -> Harness {
        Harness {
            pid: PARTITION,
            partitions: 1,
            state: MemState::default(),
            engine: Engine::new(PARTITION),
            follower: Engine::new(PARTITION),
            now: T0,
            next_position: 1,
            next_request: 1,
            log: Vec::new(),
            responses: Vec::new(),
            unused_keys: 0,
        }
    }

    /// Partition `pid` of `partitions` (see `tests/partitions.rs`, which passes the commands
    /// between them).
    pub fn on_partition(pid: u32, partitions: u32) -> Harness {
        let mut h = Harness::new();
        h.pid = pid;
        h.partitions = partitions;
        h.engine = Engine::new(pid).with_partition_count(partitions);
        h.follower = Engine::new(pid).with_partition_count(partitions);
        h
    }

    /// A harness whose processing engine pushes jobs to these job streams.
    pub fn with_job_streams(streams: std::sync::Arc<dyn zest_engine::JobStreams>) -> Harness {
        let mut h = Harness::new();
        h.engine = Engine::new(PARTITION).with_job_streams(streams);
        h
    }

    /// Replaces the processing engine by a fresh one (no cached models), as after a leader
    /// change or a snapshot install.
    pub fn restart_engine(&mut self) {
        self.engine = Engine::new(self.pid).with_partition_count(self.partitions);
        self.follower = Engine::new(self.pid).with_partition_count(self.partitions);
    }

    pub fn advance(&mut self, ms: i64) {
        self.now += ms;
    }

    /// Submits a client command (with a fresh request id on stream 1).
    pub fn client(&mut self, key: i64, intent: Intent, value: RecordValue) -> Batch {
        let rid = self.next_request;
        self.next_request += 1;
        self.submit(new_command(key, intent, value, rid, STREAM))
    }

    /// Submits an internal command (scheduler): no request.
    pub fn internal(&mut self, key: i64, intent: Intent, value: RecordValue) -> Batch {
        self.submit(new_command(key, intent, value, -1, -1))
    }

    /// Processes one command exactly like the broker: process, drop the txn's writes, apply the
    /// committed records with the follower engine.
    pub fn submit(&mut self, command: Record) -> Batch {
        let request_id = command.request_id;
        let before_position = self.next_position;
        let mut pos = self.next_position;
        let (result, writes1): (ProcessingResult, Writes) = {
            let mut txn = Txn::new(&self.state);
            let result = self.engine.process(&mut txn, command, self.now, &mut pos);
            (result, txn.into_writes())
        };
        self.check_batch_shape(&result, before_position);
        let mut batch = Batch {
            records: Vec::new(),
            returned: result.records.clone(),
            responses: result.responses.clone(),
            side_effects: result.side_effects.clone(),
            request_id,
        };
        self.responses.extend(result.responses.iter().cloned());
        if result.is_read_only() {
            assert!(
                writes1.is_empty(),
                "a read-only batch wrote to state: {:?}",
                writes1
            );
            // nothing is written for it
            return batch;
        }
        self.next_position = pos;
        assert_eq!(
            pos,
            before_position + result.records.len() as u64,
            "next_position must advance past the records returned"
        );
        let writes2 = {
            let mut txn2 = Txn::new(&self.state);
            self.follower.apply(&mut txn2, &result.records);
            txn2.into_writes()
        };
        self.compare_writes(&writes1, &writes2, &result.records);
        self.state.apply(writes2);
        self.log.extend(result.records.iter().cloned());
        batch.records = result.records;
        batch
    }

    /// Builds a client command with a fresh request id (for `submit_group`).
    pub fn client_command(&mut self, key: i64, intent: Intent, value: RecordValue) -> Record {
        let rid = self.next_request;
        self.next_request += 1;
        new_command(key, intent, value, rid, STREAM)
    }

    /// Processes several commands in ONE txn, like the broker's `process_group`: each command
    /// sees the writes of the earlier ones, read-only results are dropped, and all records are
    /// committed as one log entry applied in one txn by the follower.
    pub fn submit_group(&mut self, commands: Vec<Record>) -> Vec<Batch> {
        let mut pos = self.next_position;
        let mut records: Vec<Record> = Vec::new();
        let mut batches = Vec::new();
        let writes1 = {
            let mut txn = Txn::new(&self.state);
            for command in commands {
                let request_id = command.request_id;
                let before = pos;
                let result = self.engine.process(&mut txn, command, self.now, &mut pos);
                self.check_batch_shape(&result, before);
                self.responses.extend(result.responses.iter().cloned());
                let mut batch = Batch {
                    records: Vec::new(),
                    returned: result.records.clone(),
                    responses: result.responses.clone(),
                    side_effects: result.side_effects.clone(),
                    request_id,
                };
                if result.is_read_only() {
                    pos = before;
                } else {
                    records.extend(result.records.iter().cloned());
                    batch.records = result.records;
                }
                batches.push(batch);
            }
            txn.into_writes()
        };
        if records.is_empty() {
            assert!(writes1.is_empty());
            return batches;
        }
        self.next_position = pos;
        let writes2 = {
            let mut txn2 = Txn::new(&self.state);
            self.follower.apply(&mut txn2, &records);
            txn2.into_writes()
        };
        self.compare_writes(&writes1, &writes2, &records);
        self.state.apply(writes2);
        self.log.extend(records);
        batches
    }

    fn check_batch_shape(&self, result: &ProcessingResult, first: u64) {
        let rs = &result.records;
        assert!(!rs.is_empty(), "a batch holds at least its command");
        assert_eq!(
            rs[0].record_type,
            RecordType::Command,
            "the command comes first"
        );
        assert_eq!(rs[0].source_record_position, -1);
        let mut command_positions = Vec::new();
        for (i, r) in rs.iter().enumerate() {
            assert_eq!(
                r.position,
                first + i as u64,
                "positions are contiguous: {:?}",
                r
            );
            assert_eq!(r.partition_id, self.pid);
            assert_eq!(r.timestamp, self.now, "records carry the batch's clock");
            assert_eq!(r.value_type, r.value.value_type());
            // what partition 1 distributes keeps partition 1's keys everywhere
            let distributed = matches!(
                r.value_type,
                ValueType::Deployment
                    | ValueType::Process
                    | ValueType::DecisionRequirements
                    | ValueType::Decision
                    | ValueType::Form
                    | ValueType::Signal
                    | ValueType::ResourceDeletion
                    | ValueType::CommandDistribution
                    | ValueType::User
            ) && partition_of_key(r.key) == 1;
            if r.key > 0 && !distributed {
                assert_eq!(
                    partition_of_key(r.key),
                    self.pid,
                    "key {} of {:?} {:?} is not on this partition",
                    r.key,
                    r.value_type,
                    r.intent
                );
            }
            if i > 0 {
                assert!(
                    command_positions.contains(&r.source_record_position),
                    "record {:?} {:?} has source position {} which is not a command of this batch",
                    r.value_type,
                    r.intent,
                    r.source_record_position
                );
            }
            if r.record_type == RecordType::Command {
                command_positions.push(r.position as i64);
            }
        }
    }

    fn compare_writes(&mut self, w1: &Writes, w2: &Writes, records: &[Record]) {
        let max_key = (Ks::Meta, b"max_key".to_vec());
        let strip = |w: &Writes| -> BTreeMap<(Ks, Vec<u8>), Option<Vec<u8>>> {
            w.0.iter()
                .filter(|(k, _)| **k != max_key)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let a = strip(w1);
        let b = strip(w2);
        if a != b {
            let mut diff = String::new();
            for (k, v) in &a {
                if b.get(k) != Some(v) {
                    diff.push_str(&format!(
                        "  processing {:?} {:?} = {:?}; applying = {:?}\n",
                        k.0,
                        k.1,
                        v,
                        b.get(k)
                    ));
                }
            }
            for (k, v) in &b {
                if !a.contains_key(k) {
                    diff.push_str(&format!("  applying only {:?} {:?} = {:?}\n", k.0, k.1, v));
                }
            }
            panic!(
                "processing and applying the records wrote different state:\n{diff}records: {:#?}",
                events(records)
            );
        }
        let m1 = w1.0.get(&max_key).cloned().flatten();
        let m2 = w2.0.get(&max_key).cloned().flatten();
        if m1 != m2 {
            let k1: i64 = m1
                .as_deref()
                .map(|b| codec::decode(b).unwrap())
                .unwrap_or(0);
            let k2: i64 = m2
                .as_deref()
                .map(|b| codec::decode(b).unwrap())
                .unwrap_or(0);
            assert!(
                k1 > k2 && !records.iter().any(|r| r.is_event() && r.key == k1),
                "max_key differs ({k1} vs {k2}) although the key was used by an event"
            );
            self.unused_keys += 1;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Scheduler

    fn due(&self, ks: Ks) -> Vec<i64> {
        self.entries(ks)
            .iter()
            .map(|(key, _)| key)
            .take_while(|key| read_i64(key, 0) <= self.now)
            .map(|key| read_i64(key, 8))
            .collect()
    }

    /// One scheduler round, like crates/zest-broker/src/scheduler.rs: due timers, expired job
    /// deadlines, elapsed backoffs, in that order.
    pub fn run_scheduler(&mut self) -> Vec<Batch> {
        let mut commands = Vec::new();
        for key in self.due(Ks::TimerDueDates) {
            if let Some(bytes) = self.state.map.get(&(Ks::Timers, key_i64(key))) {
                let timer: TimerRecord = codec::decode(bytes).unwrap();
                commands.push(new_command(
                    key,
                    Intent::Trigger,
                    RecordValue::Timer(timer),
                    -1,
                    -1,
                ));
            }
        }
        for (index, intent) in [
            (Ks::JobDeadlines, Intent::TimeOut),
            (Ks::JobBackoffs, Intent::RecurAfterBackoff),
        ] {
            for key in self.due(index) {
                let job = RecordValue::Job(Box::default());
                commands.push(new_command(key, intent, job, -1, -1));
            }
        }
        let expired = self.due(Ks::MessageDeadlines);
        if !expired.is_empty() {
            commands.push(new_command(
                -1,
                Intent::Expire,
                RecordValue::MessageBatch(zest_protocol::MessageBatchRecord {
                    message_keys: expired,
                }),
                -1,
                -1,
            ));
        }
        commands.into_iter().map(|c| self.submit(c)).collect()
    }

    /// PublishMessage: name, correlation key, time to live (ms), message id, variables.
    pub fn publish(
        &mut self,
        name: &str,
        correlation_key: &str,
        ttl: i64,
        message_id: &str,
        variables: &str,
    ) -> Batch {
        self.client(
            -1,
            Intent::Publish,
            RecordValue::Message(zest_protocol::MessageRecord {
                name: name.to_string(),
                correlation_key: correlation_key.to_string(),
                time_to_live: ttl,
                variables: variables.to_string(),
                message_id: message_id.to_string(),
                deadline: -1,
                tenant_id: String::new(),
            }),
        )
    }

    // ---------------------------------------------------------------------------------------
    // Client commands

    pub fn broadcast(&mut self, signal_name: &str, variables: &str) -> Batch {
        self.client(
            -1,
            Intent::Broadcast,
            RecordValue::Signal(zest_protocol::SignalRecord {
                signal_name: signal_name.to_string(),
                variables: variables.to_string(),
                tenant_id: String::new(),
            }),
        )
    }

    pub fn deploy(&mut self, resource_name: &str, xml: &str) -> Batch {
        self.client(
            -1,
            Intent::Create,
            RecordValue::Deployment(DeploymentRecord {
                resources: vec![DeploymentResource {
                    resource_name: resource_name.to_string(),
                    resource: xml.as_bytes().to_vec(),
                }],
                ..Default::default()
            }),
        )
    }

    /// Deploys several resources in one deployment.
    pub fn deploy_many(&mut self, resources: &[(&str, &str)]) -> Batch {
        self.client(
            -1,
            Intent::Create,
            RecordValue::Deployment(DeploymentRecord {
                resources: resources
                    .iter()
                    .map(|(name, text)| DeploymentResource {
                        resource_name: name.to_string(),
                        resource: text.as_bytes().to_vec(),
                    })
                    .collect(),
                ..Default::default()
            }),
        )
    }

    /// Deploys and asserts success; returns the process definition key of the first process.
    pub fn deploy_ok(&mut self, xml: &str) -> i64 {
        let b = self.deploy("process.bpmn", xml);
        let r = b.accepted();
        let RecordValue::DeploymentResponse(d) = &r.value else {
            panic!("deployment response expected")
        };
        d.processes_metadata[0].process_definition_key
    }

    pub fn create_cmd(&mut self, process_id: &str, variables: &str, intent: Intent) -> Batch {
        self.client(
            -1,
            intent,
            RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
                bpmn_process_id: process_id.to_string(),
                version: -1,
                process_definition_key: -1,
                variables: variables.to_string(),
                process_instance_key: -1,
                ..Default::default()
            }),
        )
    }

    pub fn create(&mut self, process_id: &str, variables: &str) -> Batch {
        self.create_cmd(process_id, variables, Intent::Create)
    }

    /// Creates an instance and returns its key.
    pub fn create_ok(&mut self, process_id: &str, variables: &str) -> i64 {
        let b = self.create(process_id, variables);
        let r = b.accepted();
        let RecordValue::ProcessInstanceCreation(c) = &r.value else {
            panic!("creation response expected")
        };
        c.process_instance_key
    }

    pub fn activate_cmd(
        &mut self,
        job_type: &str,
        max: i32,
        timeout: i64,
        fetch: &[&str],
    ) -> Batch {
        self.client(
            -1,
            Intent::Activate,
            RecordValue::JobBatch(JobBatchRecord {
                job_type: job_type.to_string(),
                worker: "test-worker".to_string(),
                timeout,
                max_jobs_to_activate: max,
                fetch_variables: fetch.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            }),
        )
    }

    /// Activates up to `max` jobs (timeout 5 minutes) and returns (key, job with variables).
    pub fn activate(&mut self, job_type: &str, max: i32) -> Vec<(i64, JobRecord)> {
        self.activate_with(job_type, max, 300_000, &[])
    }

    pub fn activate_with(
        &mut self,
        job_type: &str,
        max: i32,
        timeout: i64,
        fetch: &[&str],
    ) -> Vec<(i64, JobRecord)> {
        let b = self.activate_cmd(job_type, max, timeout, fetch);
        let r = b.accepted();
        let RecordValue::JobBatch(batch) = &r.value else {
            panic!("job batch response expected")
        };
        assert_eq!(batch.job_keys.len(), batch.jobs.len());
        if batch.jobs.is_empty() {
            assert!(b.records.is_empty(), "an empty activation is not written");
        } else {
            assert_eq!(b.count(ValueType::JobBatch, Intent::Activated), 1);
        }
        batch
            .job_keys
            .iter()
            .copied()
            .zip(batch.jobs.iter().cloned())
            .collect()
    }

    /// Activates exactly one job of the type and returns its key.
    pub fn activate_one(&mut self, job_type: &str) -> (i64, JobRecord) {
        let jobs = self.activate(job_type, 1);
        assert_eq!(
            jobs.len(),
            1,
            "expected one activatable job of type {job_type}"
        );
        jobs.into_iter().next().unwrap()
    }

    pub fn job_cmd(&mut self, key: i64, intent: Intent, job: JobRecord) -> Batch {
        self.client(key, intent, RecordValue::Job(Box::new(job)))
    }

    pub fn complete(&mut self, key: i64, variables: &str) -> Batch {
        self.job_cmd(
            key,
            Intent::Complete,
            JobRecord {
                variables: variables.to_string(),
                ..Default::default()
            },
        )
    }

    /// JOB COMPLETE with a result (an ad-hoc sub-process job's decision).
    pub fn complete_with_result(
        &mut self,
        key: i64,
        variables: &str,
        result: zest_protocol::JobResult,
    ) -> Batch {
        self.job_cmd(
            key,
            Intent::Complete,
            JobRecord {
                variables: variables.to_string(),
                result,
                ..Default::default()
            },
        )
    }

    /// The key of the newest Camunda user task created for `element_id`.
    pub fn user_task_key(&self, element_id: &str) -> i64 {
        self.log
            .iter()
            .rev()
            .find(|r| {
                r.intent == Intent::Created
                    && matches!(&r.value, RecordValue::UserTask(u) if u.element_id == element_id)
            })
            .map(|r| r.key)
            .unwrap_or_else(|| panic!("no user task created for {element_id}"))
    }

    /// A USER_TASK command (COMPLETE, ASSIGN, CLAIM, UPDATE) as the REST API writes it.
    pub fn user_task(&mut self, key: i64, intent: Intent, value: UserTaskRecord) -> Batch {
        self.client(key, intent, RecordValue::UserTask(Box::new(value)))
    }

    pub fn complete_user_task(&mut self, key: i64, variables: &str) -> Batch {
        self.user_task(
            key,
            Intent::Complete,
            UserTaskRecord {
                variables: variables.to_string(),
                action: "complete".to_string(),
                ..UserTaskRecord::command()
            },
        )
    }

    pub fn assign_user_task(&mut self, key: i64, intent: Intent, assignee: &str) -> Batch {
        let action = match intent {
            Intent::Claim => "claim",
            _ if assignee.is_empty() => "unassign",
            _ => "assign",
        };
        self.user_task(
            key,
            intent,
            UserTaskRecord {
                assignee: assignee.to_string(),
                action: action.to_string(),
                ..UserTaskRecord::command()
            },
        )
    }

    pub fn fail(&mut self, key: i64, retries: i32, message: &str, backoff: i64) -> Batch {
        self.job_cmd(
            key,
            Intent::Fail,
            JobRecord {
                retries,
                error_message: message.to_string(),
                retry_backoff: backoff,
                ..Default::default()
            },
        )
    }

    pub fn throw_error(&mut self, key: i64, code: &str, message: &str) -> Batch {
        self.job_cmd(
            key,
            Intent::ThrowError,
            JobRecord {
                error_code: code.to_string(),
                error_message: message.to_string(),
                ..Default::default()
            },
        )
    }

    pub fn update_retries(&mut self, key: i64, retries: i32) -> Batch {
        self.job_cmd(
            key,
            Intent::UpdateRetries,
            JobRecord {
                retries,
                ..Default::default()
            },
        )
    }

    pub fn set_variables(&mut self, scope_key: i64, variables: &str, local: bool) -> Batch {
        self.client(
            -1,
            Intent::Update,
            RecordValue::VariableDocument(VariableDocumentRecord {
                scope_key,
                update_semantics: if local {
                    VariableDocumentUpdateSemantic::Local
                } else {
                    VariableDocumentUpdateSemantic::Propagate
                },
                variables: variables.to_string(),
                tenant_id: String::new(),
            }),
        )
    }

    /// DeleteResource of a process, decision requirements graph or form version.
    pub fn delete_resource(&mut self, key: i64) -> Batch {
        self.client(
            key,
            Intent::Delete,
            RecordValue::ResourceDeletion(zest_protocol::ResourceDeletionRecord {
                resource_key: key,
                tenant_id: String::new(),
            }),
        )
    }

    /// MigrateProcessInstance of `process_instance_key` to `target`, with (source, target)
    /// element mappings.
    pub fn migrate(
        &mut self,
        process_instance_key: i64,
        target: i64,
        mappings: &[(&str, &str)],
    ) -> Batch {
        self.client(
            -1,
            Intent::Migrate,
            RecordValue::ProcessInstanceMigration(zest_protocol::ProcessInstanceMigrationRecord {
                process_instance_key,
                target_process_definition_key: target,
                mapping_instructions: mappings
                    .iter()
                    .map(|(s, t)| zest_protocol::MappingInstruction {
                        source_element_id: s.to_string(),
                        target_element_id: t.to_string(),
                    })
                    .collect(),
                tenant_id: String::new(),
            }),
        )
    }

    pub fn resolve(&mut self, incident_key: i64) -> Batch {
        self.client(
            incident_key,
            Intent::Resolve,
            RecordValue::Incident(IncidentRecord {
                error_type: ErrorType::Unknown,
                error_message: String::new(),
                bpmn_process_id: String::new(),
                process_definition_key: -1,
                process_instance_key: -1,
                element_id: String::new(),
                element_instance_key: -1,
                job_key: -1,
                variable_scope_key: -1,
                tenant_id: String::new(),
            }),
        )
    }

    pub fn cancel(&mut self, process_instance_key: i64) -> Batch {
        let value = self.cancel_value(process_instance_key);
        self.client(process_instance_key, Intent::Cancel, value)
    }

    /// The value of a PROCESS_INSTANCE CANCEL command.
    pub fn cancel_value(&self, process_instance_key: i64) -> RecordValue {
        RecordValue::ProcessInstance(ProcessInstanceRecord {
            bpmn_process_id: String::new(),
            version: -1,
            process_definition_key: -1,
            process_instance_key,
            element_id: String::new(),
            flow_scope_key: -1,
            bpmn_element_type: zest_protocol::BpmnElementType::Unspecified,
            bpmn_event_type: zest_protocol::BpmnEventType::Unspecified,
            parent_process_instance_key: -1,
            parent_element_instance_key: -1,
            tenant_id: String::new(),
        })
    }

    // ---------------------------------------------------------------------------------------
    // State inspection

    pub fn entries(&self, ks: Ks) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.state
            .map
            .range((ks, Vec::new())..)
            .take_while(|((k, _), _)| *k == ks)
            .map(|((_, k), v)| (k.clone(), v.clone()))
            .collect()
    }

    pub fn count(&self, ks: Ks) -> usize {
        self.entries(ks).len()
    }

    pub fn element_instances(&self) -> Vec<ElementInstance> {
        self.entries(Ks::ElementInstances)
            .iter()
            .map(|(_, v)| codec::decode(v).unwrap())
            .collect()
    }

    pub fn element_instance(&self, key: i64) -> Option<ElementInstance> {
        self.state
            .map
            .get(&(Ks::ElementInstances, key_i64(key)))
            .map(|v| codec::decode(v).unwrap())
    }

    /// The live element instance of `element_id` (exactly one expected).
    pub fn instance_of(&self, element_id: &str) -> ElementInstance {
        let found: Vec<ElementInstance> = self
            .element_instances()
            .into_iter()
            .filter(|e| e.record.element_id == element_id)
            .collect();
        assert_eq!(found.len(), 1, "expected one instance of {element_id}");
        found.into_iter().next().unwrap()
    }

    pub fn job(&self, key: i64) -> Option<StoredJob> {
        self.state
            .map
            .get(&(Ks::Jobs, key_i64(key)))
            .map(|v| codec::decode(v).unwrap())
    }

    pub fn job_state(&self, key: i64) -> Option<JobState> {
        self.job(key).map(|j| j.state)
    }

    /// The open jobs: key -> stored job.
    pub fn jobs(&self) -> Vec<(i64, zest_engine::types::StoredJob)> {
        self.entries(Ks::Jobs)
            .iter()
            .map(|(k, v)| (read_i64(k, 0), codec::decode(v).unwrap()))
            .collect()
    }

    pub fn incidents(&self) -> Vec<(i64, StoredIncident)> {
        self.entries(Ks::Incidents)
            .iter()
            .map(|(k, v)| (read_i64(k, 0), codec::decode(v).unwrap()))
            .collect()
    }

    /// Variables of one scope: name -> JSON value.
    pub fn variables(&self, scope_key: i64) -> BTreeMap<String, Value> {
        let doc = self
            .state
            .get(Ks::Variables, &key_i64(scope_key))
            .unwrap_or_default();
        let encoded: usize = scope_variables::iter(&doc)
            .map(|e| 16 + e.name.len() + e.value.len())
            .sum();
        assert_eq!(encoded, doc.len(), "scope {scope_key}: malformed variables");
        scope_variables::iter(&doc)
            .map(|e| (e.name.to_string(), serde_json::from_str(e.value).unwrap()))
            .collect()
    }

    /// Asserts no runtime state is left: only deployed processes and counters remain.
    pub fn assert_no_runtime_state(&self) {
        for ks in Ks::ALL {
            if matches!(
                ks,
                Ks::Meta
                    | Ks::Processes
                    | Ks::ProcessLatest
                    | Ks::ProcessVersions
                    | Ks::Forms
                    | Ks::Decisions
                    // remembered for a while after the instance ended (correlated_messages)
                    | Ks::CorrelatedMessages
            ) {
                continue;
            }
            if ks == Ks::Distributions {
                // what a partition received last from each other stays; nothing may wait
                let waiting: Vec<_> = self
                    .entries(ks)
                    .into_iter()
                    .filter(|(k, _)| k[0] != b'w')
                    .collect();
                assert!(waiting.is_empty(), "distributions wait: {waiting:?}");
                continue;
            }
            if ks == Ks::MessageStartSubscriptions {
                // the start events of deployed processes stay; locks must be gone
                let locks: Vec<_> = self
                    .entries(ks)
                    .into_iter()
                    .filter(|(k, _)| k[0] != b's')
                    .collect();
                assert!(locks.is_empty(), "message start locks remain: {locks:?}");
                continue;
            }
            assert_eq!(
                self.count(ks),
                0,
                "keyspace {} still holds entries: {:?}",
                ks.name(),
                self.entries(ks)
            );
        }
    }

    /// Checks the cross-references between keyspaces after a batch has settled: every index
    /// points at a live entity in the matching state, counters match, and no token is stuck.
    // A checklist of independent invariants, one block each, that reads best in one place.
    pub fn assert_state_consistent(&self) {
        use std::collections::{BTreeSet, HashMap};
        let insts: HashMap<i64, ElementInstance> = self
            .element_instances()
            .into_iter()
            .map(|e| (e.key, e))
            .collect();
        let children: Vec<(i64, i64)> = self
            .entries(Ks::ElementChildren)
            .iter()
            .map(|(k, _)| (read_i64(k, 0), read_i64(k, 8)))
            .collect();
        let incident_index: HashMap<i64, i64> = self
            .entries(Ks::IncidentIndex)
            .iter()
            .map(|(k, v)| (read_i64(k, 0), codec::decode::<i64>(v).unwrap()))
            .collect();
        let incidents: HashMap<i64, StoredIncident> = self.incidents().into_iter().collect();
        for (parent, child) in &children {
            assert!(
                insts.contains_key(parent),
                "child entry of missing scope {parent}"
            );
            let c = insts.get(child).expect("child entry of missing element");
            assert_eq!(c.parent_key, *parent);
        }
        for e in insts.values() {
            assert!(
                e.is_active() || e.state == Intent::ElementTerminating,
                "element {} in state {:?} is still stored",
                e.record.element_id,
                e.state
            );
            let n = children.iter().filter(|(p, _)| *p == e.key).count() as u32;
            assert_eq!(
                e.active_children, n,
                "active_children of {}",
                e.record.element_id
            );
            if e.parent_key > 0 {
                assert!(children.contains(&(e.parent_key, e.key)));
                assert_eq!(e.record.flow_scope_key, e.parent_key);
            } else {
                assert_eq!(
                    e.record.bpmn_element_type,
                    zest_protocol::BpmnElementType::Process
                );
                assert_eq!(e.key, e.record.process_instance_key);
                // a process without tokens must have completed
                assert!(
                    !(e.state == Intent::ElementActivated
                        && e.active_children == 0
                        && e.active_flows == 0),
                    "process instance {} has no tokens left but did not complete",
                    e.key
                );
            }
            // an element that stopped mid-transition waits for an execution listener's job
            // or for an incident
            let listener_job = e.job_key > 0 && self.job(e.job_key).is_some();
            if matches!(
                e.state,
                Intent::ElementActivating | Intent::ElementCompleting
            ) && !listener_job
            {
                let inc = incident_index.get(&e.key).unwrap_or_else(|| {
                    panic!(
                        "{} is stuck in {:?} without an incident",
                        e.record.element_id, e.state
                    )
                });
                assert!(incidents.contains_key(inc));
            }
            if e.state == Intent::ElementActivated {
                match e.record.bpmn_element_type {
                    zest_protocol::BpmnElementType::ServiceTask => {
                        let job = self.job(e.job_key).unwrap_or_else(|| {
                            panic!("activated task {} has no job", e.record.element_id)
                        });
                        assert_eq!(job.record.element_instance_key, e.key);
                    }
                    zest_protocol::BpmnElementType::IntermediateCatchEvent
                        if e.record.bpmn_event_type == zest_protocol::BpmnEventType::Timer =>
                    {
                        assert!(
                            self.state
                                .map
                                .contains_key(&(Ks::Timers, key_i64(e.timer_key))),
                            "activated timer event {} has no timer",
                            e.record.element_id
                        );
                    }
                    _ => {}
                }
            }
        }
        // jobs and their indexes
        let activatable: BTreeSet<Vec<u8>> = self
            .entries(Ks::JobsActivatable)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let deadlines: BTreeSet<Vec<u8>> = self
            .entries(Ks::JobDeadlines)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let backoffs: BTreeSet<Vec<u8>> = self
            .entries(Ks::JobBackoffs)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let mut expect_act = BTreeSet::new();
        let mut expect_dead = BTreeSet::new();
        let mut expect_back = BTreeSet::new();
        for (k, v) in self.entries(Ks::Jobs) {
            let key = read_i64(&k, 0);
            let job: StoredJob = codec::decode(&v).unwrap();
            let inst = insts
                .get(&job.record.element_instance_key)
                .unwrap_or_else(|| panic!("job {key} of a missing element instance"));
            assert_eq!(inst.job_key, key, "element's job_key");
            let ix = |ks_set: &mut BTreeSet<Vec<u8>>, a: Vec<u8>| {
                ks_set.insert(a);
            };
            match job.state {
                JobState::Activatable => ix(
                    &mut expect_act,
                    [job.record.job_type.as_bytes(), &[0], &key_i64(key)].concat(),
                ),
                JobState::Activated => ix(
                    &mut expect_dead,
                    [key_i64(job.record.deadline), key_i64(key)].concat(),
                ),
                JobState::FailedBackoff => ix(
                    &mut expect_back,
                    [key_i64(job.record.recurring_time), key_i64(key)].concat(),
                ),
                JobState::Failed | JobState::ErrorThrown => {
                    let inc = incident_index
                        .get(&key)
                        .unwrap_or_else(|| panic!("failed job {key} without incident"));
                    assert!(incidents.contains_key(inc));
                }
            }
        }
        assert_eq!(activatable, expect_act, "JobsActivatable index");
        assert_eq!(deadlines, expect_dead, "JobDeadlines index");
        assert_eq!(backoffs, expect_back, "JobBackoffs index");
        // timers
        let mut expect_due = BTreeSet::new();
        for (k, v) in self.entries(Ks::Timers) {
            let key = read_i64(&k, 0);
            let t: TimerRecord = codec::decode(&v).unwrap();
            expect_due.insert([key_i64(t.due_date), key_i64(key)].concat());
            if t.element_instance_key <= 0 {
                // a timer start event's timer belongs to its process definition
                assert!(
                    self.entries(Ks::Processes)
                        .iter()
                        .any(|(k, _)| read_i64(k, 0) == t.process_definition_key),
                    "start timer {key} of a missing process definition"
                );
                continue;
            }
            let inst = insts
                .get(&t.element_instance_key)
                .unwrap_or_else(|| panic!("timer {key} of a missing element instance"));
            if t.target_element_id == inst.record.element_id {
                // the element's own timer (a timer catch event); boundary events' and event
                // sub-processes' timers belong to the activity or scope that holds them
                assert_eq!(inst.timer_key, key);
            }
        }
        let due: BTreeSet<Vec<u8>> = self
            .entries(Ks::TimerDueDates)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(due, expect_due, "TimerDueDates index");
        // incidents
        for (key, inc) in &incidents {
            let index_key = if inc.record.job_key > 0 {
                inc.record.job_key
            } else {
                inc.record.element_instance_key
            };
            assert_eq!(incident_index.get(&index_key), Some(key), "incident index");
            assert!(
                insts.contains_key(&inc.record.element_instance_key),
                "incident {key} of a missing element instance"
            );
            if inc.record.job_key > 0 {
                assert!(
                    self.job(inc.record.job_key).is_some(),
                    "incident of a missing job"
                );
            }
        }
        assert_eq!(incident_index.len(), incidents.len());
        // variables live in existing scopes
        for (k, _) in self.entries(Ks::Variables) {
            let scope = read_i64(&k, 0);
            assert!(
                insts.contains_key(&scope),
                "variable of missing scope {scope}"
            );
        }
        for (k, _) in self.entries(Ks::AwaitingResults) {
            assert!(insts.contains_key(&read_i64(&k, 0)));
        }
        self.assert_messages_consistent(&insts);
    }

    /// Message state: both sides of every subscription agree, each waiting element has one,
    /// no trigger is left over, and the message indexes match the buffered messages.
    fn assert_messages_consistent(&self, insts: &std::collections::HashMap<i64, ElementInstance>) {
        use zest_engine::types::{
            ProcessMessageSubscriptionState, StoredMessageSubscription,
            StoredProcessMessageSubscription,
        };
        assert_eq!(
            self.count(Ks::EventTriggers),
            0,
            "unconsumed event triggers: {:?}",
            self.entries(Ks::EventTriggers)
        );
        let mut waiting: Vec<i64> = Vec::new();
        for (_, v) in self.entries(Ks::ProcessMessageSubscriptions) {
            let sub: StoredProcessMessageSubscription = codec::decode(&v).unwrap();
            let e = insts
                .get(&sub.record.element_instance_key)
                .unwrap_or_else(|| panic!("subscription {} of a missing element", sub.key));
            assert_eq!(
                e.state,
                Intent::ElementActivated,
                "subscribed element state"
            );
            assert_ne!(sub.state, ProcessMessageSubscriptionState::Deleting);
            waiting.push(sub.record.element_instance_key);
        }
        for e in insts.values() {
            let waits = e.state == Intent::ElementActivated
                && (e.record.bpmn_element_type == zest_protocol::BpmnElementType::ReceiveTask
                    || (e.record.bpmn_element_type
                        == zest_protocol::BpmnElementType::IntermediateCatchEvent
                        && e.record.bpmn_event_type == zest_protocol::BpmnEventType::Message));
            if waits {
                assert!(
                    waiting.contains(&e.key),
                    "{} waits without a subscription",
                    e.record.element_id
                );
            }
        }
        let by_name = self.count(Ks::MessageSubscriptionNames);
        let mut subs = 0;
        for (_, v) in self.entries(Ks::MessageSubscriptions) {
            subs += 1;
            let sub: StoredMessageSubscription = codec::decode(&v).unwrap();
            assert!(!sub.correlating, "a correlation was never acknowledged");
            assert!(
                waiting.contains(&sub.record.element_instance_key),
                "message subscription {} without its process side",
                sub.key
            );
        }
        assert_eq!(by_name, subs, "message subscription name index");
        assert_eq!(subs, waiting.len(), "both sides of the subscriptions");
        let messages = self.count(Ks::Messages);
        assert_eq!(
            self.count(Ks::MessageDeadlines),
            messages,
            "message deadlines"
        );
        let names = self
            .entries(Ks::MessageIndex)
            .iter()
            .filter(|(k, _)| k[0] == b'n')
            .count();
        assert_eq!(names, messages, "message name index");
    }

    /// Replays the whole log on a fresh state with a fresh engine, batch by batch as written,
    /// and asserts it rebuilds exactly the current state.
    /// The checks every scenario ends with: consistent state, and a replay of the log gives it.
    pub fn settle(&self) {
        self.assert_state_consistent();
        self.assert_replay_matches();
    }

    pub fn assert_replay_matches(&self) {
        let mut state = MemState::default();
        let mut engine = Engine::new(self.pid);
        let mut start = 0;
        while start < self.log.len() {
            // a log entry starts with a client/internal command (source position -1)
            let mut end = start + 1;
            while end < self.log.len() && self.log[end].source_record_position != -1 {
                end += 1;
            }
            let writes = {
                let mut txn = Txn::new(&state);
                engine.apply(&mut txn, &self.log[start..end]);
                txn.into_writes()
            };
            state.apply(writes);
            start = end;
        }
        assert_eq!(
            state.map, self.state.map,
            "replaying the log rebuilt a different state"
        );
    }
}

/// Parses a JSON document (test helper).
/// A model of the anchor scenarios (`tests/anchor/models/NAME`), shared with the Zeebe oracle.
pub fn anchor_model(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/anchor/models")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// Wraps process content in BPMN definitions with the usual namespaces.
pub fn bpmn(process_id: &str, body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="{process_id}" isExecutable="true">
{body}
  </bpmn:process>
</bpmn:definitions>
"#
    )
}

/// A BPMN document of one process made of `elements` (see `start_event`, `service_task`, `flow`).
pub fn process(process_id: &str, elements: &[String]) -> String {
    bpmn(process_id, &elements.join("\n"))
}

pub fn start_event(id: &str) -> String {
    format!(r#"    <bpmn:startEvent id="{id}" />"#)
}

pub fn end_event(id: &str) -> String {
    format!(r#"    <bpmn:endEvent id="{id}" />"#)
}

pub fn parallel_gateway(id: &str) -> String {
    format!(r#"    <bpmn:parallelGateway id="{id}" />"#)
}

pub fn exclusive_gateway(id: &str) -> String {
    format!(r#"    <bpmn:exclusiveGateway id="{id}" />"#)
}

/// An exclusive gateway whose `default_flow` is taken when no condition is true.
pub fn exclusive_gateway_with_default(id: &str, default_flow: &str) -> String {
    format!(r#"    <bpmn:exclusiveGateway id="{id}" default="{default_flow}" />"#)
}

/// Process `process_id`: start `s` -> service task `task_id` (job `job_type`, with `ext` in
/// its extension elements) -> end `e`.
pub fn one_task(process_id: &str, task_id: &str, job_type: &str, ext: &str) -> String {
    process(
        process_id,
        &[
            start_event("s"),
            service_task(task_id, job_type, ext),
            end_event("e"),
            flow("f1", "s", task_id),
            flow("f2", task_id, "e"),
        ],
    )
}

/// A service task element.
pub fn service_task(id: &str, job_type: &str, extra_ext: &str) -> String {
    format!(
        r#"    <bpmn:serviceTask id="{id}">
      <bpmn:extensionElements>
        <zeebe:taskDefinition type="{job_type}" />
        {extra_ext}
      </bpmn:extensionElements>
    </bpmn:serviceTask>"#
    )
}

pub fn flow(id: &str, from: &str, to: &str) -> String {
    format!(r#"    <bpmn:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}" />"#)
}

pub fn cond_flow(id: &str, from: &str, to: &str, condition: &str) -> String {
    format!(
        r#"    <bpmn:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}">
      <bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">{condition}</bpmn:conditionExpression>
    </bpmn:sequenceFlow>"#
    )
}

/// A benchmark workload from `shared/workloads` next to the checkout. A checkout without that
/// folder skips the tests that need it; a folder that is there but lacks the file (renamed,
/// unreadable) fails the test instead of letting it pass without running.
pub fn workload(name: &str) -> Option<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/workloads");
    if !dir.is_dir() {
        eprintln!("skipping: {} not found", dir.display());
        return None;
    }
    let path = dir.join(name);
    match std::fs::read_to_string(&path) {
        Ok(s) => Some(s),
        Err(e) => panic!("workload {} is unreadable: {e}", path.display()),
    }
}
