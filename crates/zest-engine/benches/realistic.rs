//! The engine's cost of one instance of Camunda's realistic benchmark (the bank dispute process
//! with 50 dispute positions, its refunding process and the fraud rating DMN; see
//! `crates/zest/bench/README.md`), processed as a partition processes it, without the log, the
//! network or the disk: the commands that arrive together in groups of up to 64 in one
//! transaction, every job pushed to a stream with all its variables, each worker's message
//! published before its job completes (so the engine buffers it): 205 commands from
//! clients and about 7,000 records per instance. Published messages stay buffered for their
//! hour, as in the server, so state grows by about 50 messages per instance run.
//! `cargo bench -p zest-engine --bench realistic`; the cost of the server around the engine
//! (log, consensus, gRPC) is measured by `zest bench --scenario realistic`.

use std::collections::VecDeque;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use zest_engine::state::{BaseReads, MemState, Txn};
use zest_engine::{new_command, Engine, JobStreams, SideEffect, StreamTarget};
use zest_protocol::{
    BpmnElementType, DeploymentRecord, DeploymentResource, Intent, JobRecord, MessageRecord,
    ProcessInstanceCreationRecord, Record, RecordType, RecordValue, ValueType,
};

/// The server's allocator (`crates/zest/src/main.rs`): the engine allocates many small
/// short-lived buffers, and glibc's malloc would weigh differently here than in the server.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The scenario as `zest bench --scenario realistic` runs it (models, payload, business key,
/// each job type's worker and the message it publishes): the same file, so the two cannot
/// drift apart. It uses only serde and serde_json; its delays and capacities, and its unit
/// tests (compiled, not run, in this harness-less target under `cargo test`), are not used here.
#[allow(dead_code, unused_imports)]
#[path = "../../zest/src/bench_realistic.rs"]
mod scenario;

/// One open stream for every job type, with room for every job, asking for all variables.
struct Streams;

impl JobStreams for Streams {
    fn reserve(&self, _job_key: i64, _job: &JobRecord) -> Option<StreamTarget> {
        Some(StreamTarget {
            worker: "bench".into(),
            timeout: 60_000,
            fetch_variables: Vec::new(),
        })
    }
}

/// Most commands a partition processes in one group (`BrokerConfig::max_group`'s default).
const MAX_GROUP: usize = 64;

/// A partition: its state, its engine and the positions and request ids it hands out.
struct Partition {
    state: MemState,
    engine: Engine,
    now: i64,
    position: u64,
    request_id: i64,
    customer: i64,
    /// The payload's variables; each instance sets the business key to its own number.
    payload: serde_json::Map<String, serde_json::Value>,
    /// The records of the last group (see `process_group`).
    records: Vec<Record>,
    /// What the groups read from the state, kept from one to the next as a partition's
    /// leader keeps them.
    reads: BaseReads,
}

impl Partition {
    fn new() -> Partition {
        let mut p = Partition {
            state: MemState::default(),
            engine: Engine::new(1).with_job_streams(Arc::new(Streams)),
            now: 1_700_000_000_000,
            position: 1,
            request_id: 1,
            customer: 0,
            payload: serde_json::from_str(scenario::PAYLOAD).expect("the payload is an object"),
            // a partition sizes its group's vector from the last group's
            records: Vec::with_capacity(4096),
            reads: BaseReads::default(),
        };
        let deployment = DeploymentRecord {
            resources: scenario::resources()
                .into_iter()
                .map(|(resource_name, resource)| DeploymentResource {
                    resource_name,
                    resource,
                })
                .collect(),
            ..Default::default()
        };
        let deploy = p.client(Intent::Create, RecordValue::Deployment(deployment));
        let result = p.process(deploy);
        assert!(
            result.records.iter().any(
                |r| r.value_type == ValueType::Deployment && r.record_type == RecordType::Event
            ),
            "the realistic models deploy"
        );
        p
    }

    fn client(&mut self, intent: Intent, value: RecordValue) -> Record {
        self.request_id += 1;
        new_command(-1, intent, value, self.request_id, 1)
    }

    /// Processes one command and commits its writes, as a group of one.
    fn process(&mut self, command: Record) -> zest_engine::ProcessingResult {
        let mut txn = Txn::new(&self.state);
        let result = self
            .engine
            .process(&mut txn, command, self.now, &mut self.position);
        self.state.apply(txn.into_writes());
        self.now += 1;
        result
    }

    /// Processes commands as a partition's group: in one transaction (starting with what the
    /// last groups read), their records into one entry (kept in `self.records` for its
    /// capacity, as a partition sizes its group's from the last one), then commits the
    /// writes. Returns the results, whose records are in `self.records`.
    fn process_group(&mut self, commands: Vec<Record>) -> Vec<zest_engine::ProcessingResult> {
        let mut txn = Txn::with_reads(&self.state, std::mem::take(&mut self.reads));
        self.records.clear();
        let results = commands
            .into_iter()
            .map(|command| {
                self.engine.process_into(
                    &mut txn,
                    command,
                    self.now,
                    &mut self.position,
                    &mut self.records,
                )
            })
            .collect();
        let (writes, mut reads) = txn.into_parts();
        reads.forget(&writes);
        self.reads = reads;
        self.state.apply(writes);
        self.now += 1;
        results
    }

    /// Runs one instance to its end, completing its jobs wave by wave; returns the commands
    /// processed.
    fn run_instance(&mut self) -> usize {
        self.customer += 1;
        // the starter sets its counter as the business key
        self.payload
            .insert(scenario::BUSINESS_KEY.into(), self.customer.into());
        let variables = serde_json::to_string(&self.payload).expect("variables");
        let create = self.client(
            Intent::Create,
            RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
                bpmn_process_id: scenario::PROCESS_ID.into(),
                version: -1,
                process_definition_key: -1,
                variables,
                process_instance_key: -1,
                ..Default::default()
            }),
        );
        let mut commands = VecDeque::from([create]);
        let mut processed = 0;
        let mut completed = false;
        loop {
            let mut jobs = Vec::new();
            // the commands of a wave (the publishes and completions of the jobs pushed
            // together, most of which a server receives within a few milliseconds: the workers
            // of a fan-out wait the same delay) in groups of at most `max_group`'s default
            while !commands.is_empty() {
                let group: Vec<Record> = commands.drain(..commands.len().min(MAX_GROUP)).collect();
                processed += group.len();
                for result in self.process_group(group) {
                    for effect in result.side_effects {
                        if let SideEffect::PushJob { job_key, job } = effect {
                            jobs.push((job_key, job));
                        }
                    }
                }
                completed |= self.records.iter().any(|r| {
                    r.intent == Intent::ElementCompleted
                        && matches!(&r.value, RecordValue::ProcessInstance(pi)
                            if pi.bpmn_element_type == BpmnElementType::Process
                                && pi.bpmn_process_id == scenario::PROCESS_ID)
                });
            }
            if jobs.is_empty() {
                break;
            }
            for (key, job) in jobs {
                let publishes = scenario::WORKERS
                    .iter()
                    .find(|w| w.job_type == job.job_type)
                    .and_then(|w| w.publish);
                if let Some(message) = publishes {
                    let publish = MessageRecord {
                        name: message.to_string(),
                        correlation_key: scenario::correlation_key(&job.variables)
                            .expect("the job has its correlationKey"),
                        time_to_live: scenario::MESSAGE_TTL_MS,
                        variables: "{}".into(),
                        deadline: -1,
                        ..Default::default()
                    };
                    let command = self.client(Intent::Publish, RecordValue::Message(publish));
                    commands.push_back(command);
                }
                let mut complete = self.client(
                    Intent::Complete,
                    RecordValue::Job(Box::new(JobRecord {
                        variables: "{}".into(),
                        ..Default::default()
                    })),
                );
                complete.key = key;
                commands.push_back(complete);
            }
        }
        assert!(completed, "the instance completes");
        processed
    }
}

fn realistic(c: &mut Criterion) {
    let mut partition = Partition::new();
    let mut group = c.benchmark_group("realistic");
    // about 25 ms an instance: 10 s holds 20 samples of several instances each
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(10));
    group.throughput(Throughput::Elements(1));
    group.bench_function("one instance", |b| b.iter(|| partition.run_instance()));
    group.finish();
}

criterion_group!(benches, realistic);
criterion_main!(benches);
