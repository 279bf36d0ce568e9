//! The engine's cost of one instance of Camunda's realistic benchmark (the bank dispute process
//! with 50 dispute positions, its refunding process and the fraud rating DMN; see
//! `crates/zest/bench/README.md`), processed as a partition processes it, without the log, the
//! network or the disk: every job pushed to a stream with all its variables, each worker's
//! message published before its job completes (so the engine buffers it): 205 commands from
//! clients and about 7,000 records per instance. Published messages stay buffered for their
//! hour, as in the server, so state grows by about 50 messages per instance run.
//! `cargo bench -p zest-engine --bench realistic`; the cost of the server around the engine
//! (log, consensus, gRPC) is measured by `zest bench --scenario realistic`.

use std::collections::VecDeque;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use zest_engine::state::{MemState, Txn};
use zest_engine::{new_command, Engine, JobStreams, SideEffect, StreamTarget};
use zest_protocol::{
    BpmnElementType, DeploymentRecord, DeploymentResource, Intent, JobRecord, MessageRecord,
    ProcessInstanceCreationRecord, Record, RecordType, RecordValue, ValueType,
};

/// The server's allocator (`crates/zest/src/main.rs`): the engine allocates many small
/// short-lived buffers, and glibc's malloc would weigh differently here than in the server.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const MODELS: [(&str, &[u8]); 3] = [
    (
        "bankCustomerComplaintDisputeHandling.bpmn",
        include_bytes!("../../zest/bench/realistic/bankCustomerComplaintDisputeHandling.bpmn"),
    ),
    (
        "refundingProcess.bpmn",
        include_bytes!("../../zest/bench/realistic/refundingProcess.bpmn"),
    ),
    (
        "determineFraudRatingConfidence.dmn",
        include_bytes!("../../zest/bench/realistic/determineFraudRatingConfidence.dmn"),
    ),
];
const PAYLOAD: &str = include_str!("../../zest/bench/realistic/realisticPayload.json");
/// The payload's business key, which each instance replaces by its own.
const PAYLOAD_CUSTOMER: &str = "\"customerId\": 123";

/// The job types whose worker publishes a message (with the job's `correlationKey`) before
/// completing, as the scenario's workers do.
const PUBLISHERS: [(&str, &str); 2] = [
    ("customer_notification", "dispute_process_receive_documents"),
    (
        "dispute_process_request_proof_from_vendor",
        "dispute_process_refund_approved",
    ),
];

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

/// A partition: its state, its engine and the positions and request ids it hands out.
struct Partition {
    state: MemState,
    engine: Engine,
    now: i64,
    position: u64,
    request_id: i64,
    customer: i64,
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
        };
        let deployment = DeploymentRecord {
            resources: MODELS
                .iter()
                .map(|(name, bytes)| DeploymentResource {
                    resource_name: name.to_string(),
                    resource: bytes.to_vec(),
                })
                .collect(),
            ..Default::default()
        };
        assert!(
            PAYLOAD.contains(PAYLOAD_CUSTOMER),
            "the payload has its business key"
        );
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
        let writes = txn.into_writes();
        self.state.apply(writes);
        self.now += 1;
        result
    }

    /// Runs one instance to its end, completing its jobs wave by wave; returns the commands
    /// processed.
    fn run_instance(&mut self) -> usize {
        self.customer += 1;
        // the starter sets its counter as the business key
        let variables = PAYLOAD.replacen(
            PAYLOAD_CUSTOMER,
            &format!("\"customerId\": {}", self.customer),
            1,
        );
        let create = self.client(
            Intent::Create,
            RecordValue::ProcessInstanceCreation(ProcessInstanceCreationRecord {
                bpmn_process_id: "bankDisputeHandling".into(),
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
            while let Some(command) = commands.pop_front() {
                let result = self.process(command);
                processed += 1;
                completed |= result.records.iter().any(|r| {
                    r.intent == Intent::ElementCompleted
                        && matches!(&r.value, RecordValue::ProcessInstance(pi)
                            if pi.bpmn_element_type == BpmnElementType::Process
                                && pi.bpmn_process_id == "bankDisputeHandling")
                });
                for effect in result.side_effects {
                    if let SideEffect::PushJob { job_key, job } = effect {
                        jobs.push((job_key, job));
                    }
                }
            }
            if jobs.is_empty() {
                break;
            }
            for (key, job) in jobs {
                if let Some((_, message)) = PUBLISHERS.iter().find(|(t, _)| *t == job.job_type) {
                    let publish = MessageRecord {
                        name: message.to_string(),
                        correlation_key: correlation_key(&job.variables),
                        time_to_live: 3_600_000,
                        variables: "{}".into(),
                        deadline: -1,
                        ..Default::default()
                    };
                    let command = self.client(Intent::Publish, RecordValue::Message(publish));
                    commands.push_back(command);
                }
                let mut complete = self.client(
                    Intent::Complete,
                    RecordValue::Job(JobRecord {
                        variables: "{}".into(),
                        ..Default::default()
                    }),
                );
                complete.key = key;
                commands.push_back(complete);
            }
        }
        assert!(completed, "the instance completes");
        processed
    }
}

/// The job's `correlationKey`, the other variables skipped (as the load generator reads it).
fn correlation_key(variables: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Variables {
        #[serde(rename = "correlationKey")]
        correlation_key: String,
    }
    let doc: Variables = serde_json::from_str(variables).expect("a job with its correlationKey");
    doc.correlation_key
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
