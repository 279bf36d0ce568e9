//! Prometheus metrics of the broker, with Zeebe's metric names where one exists.

use std::collections::BTreeMap;

use prometheus::{
    HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry,
};
use zest_protocol::{BpmnElementType, Intent, Record, RecordType, RecordValue};

pub struct Metrics {
    pub registry: Registry,
    /// zeebe_stream_processor_records_total: records processed, by partition, value type, intent.
    pub records_processed: IntCounterVec,
    /// zeebe_dropped_request_count_total: commands rejected by backpressure.
    pub backpressure_rejections: IntCounterVec,
    /// zeebe_stream_processor_batch_processing_duration: time to process one group of commands.
    pub processing_latency: HistogramVec,
    /// zeebe_log_appender_commit_latency: time from append to the commit of a group (with
    /// one voter: its flush; with several: their commit and its apply), when it is answered.
    pub commit_latency: HistogramVec,
    /// Commands per log entry.
    pub group_size: HistogramVec,
    /// Records per log entry.
    pub group_records: HistogramVec,
    /// Client commands waiting in the partition's queue.
    pub queued_commands: IntGaugeVec,
    /// zeebe_received_request_count_total: client commands received.
    pub received_requests: IntCounterVec,
    /// zeebe_backpressure_requests_limit: current limit of the adaptive limiter.
    pub backpressure_limit: IntGaugeVec,
    /// zeebe_backpressure_inflight_requests_count: limited commands in flight.
    pub backpressure_inflight: IntGaugeVec,
    /// zeebe_stream_processor_latency: command received to processed and committed.
    pub command_latency: HistogramVec,
    /// zeebe_job_activation_time: job created to activated.
    pub job_activation_time: HistogramVec,
    /// zeebe_process_instance_execution_time: process instance activated to completed.
    pub pi_execution_time: HistogramVec,
    /// zest_state_disk_bytes / zest_log_disk_bytes, set when scraped.
    pub state_disk_bytes: IntGaugeVec,
    pub log_disk_bytes: IntGaugeVec,
    /// zest_memory_budget_bytes{part}: the split of --memory-mb; zest_memory_used_bytes{part}:
    /// what the store's parts use now.
    pub memory_budget: IntGaugeVec,
    pub memory_used: IntGaugeVec,
    /// zest_memory_guard_refused_total: process instance creations refused while the node's
    /// resident memory was at its budget.
    pub memory_guard_refused: IntCounter,
    /// zeebe_snapshot_duration: seconds to take a snapshot.
    pub snapshot_duration: HistogramVec,
    /// zeebe_job_events_total: job events by partition, action (Zeebe's words: created,
    /// activated, completed, failed, timed out, canceled, error thrown), job type and kind.
    pub job_events: IntCounterVec,
    /// zeebe_executed_instances_total: root process instances activated, completed and
    /// terminated, by partition.
    pub executed_instances: IntCounterVec,
    /// zeebe_incident_events_total: incidents created and resolved, by partition.
    pub incident_events: IntCounterVec,
}

impl Metrics {
    /// Creates the partition's series, so that every metric is exported (at zero) from the
    /// start, not only after its first event.
    pub fn init_partition(&self, partition: &str) {
        let l = &[partition];
        self.backpressure_rejections.with_label_values(l);
        self.received_requests.with_label_values(l);
        self.backpressure_limit.with_label_values(l);
        self.backpressure_inflight.with_label_values(l);
        self.queued_commands.with_label_values(l);
        self.state_disk_bytes.with_label_values(l);
        self.log_disk_bytes.with_label_values(l);
        for action in ["activated", "completed", "terminated"] {
            self.executed_instances.with_label_values(&[
                partition,
                "ROOT_PROCESS_INSTANCE",
                action,
            ]);
        }
        for action in ["created", "resolved"] {
            self.incident_events.with_label_values(&[partition, action]);
        }
        for h in [
            &self.processing_latency,
            &self.commit_latency,
            &self.group_size,
            &self.group_records,
            &self.command_latency,
            &self.job_activation_time,
            &self.pi_execution_time,
            &self.snapshot_duration,
        ] {
            h.with_label_values(l);
        }
    }
}

/// Most start times remembered for the job activation and instance execution histograms (and
/// the job backlog gate); beyond it the oldest are forgotten (memory stays bounded).
const MAX_TRACKED: usize = 200_000;

/// Start times of jobs and process instances, to observe activation and execution times.
/// Keys grow with time within a partition, so the first entry of each map is the oldest; when
/// a map is full, its oldest entry (a job nobody activates, an instance that runs for days) is
/// dropped to make room, so new jobs and instances are always timed.
#[derive(Default)]
pub(crate) struct Lifetimes {
    job_created: BTreeMap<i64, i64>,
    instance_activated: BTreeMap<i64, i64>,
}

fn insert_bounded(map: &mut BTreeMap<i64, i64>, key: i64, at: i64) {
    if map.len() >= MAX_TRACKED {
        map.pop_first();
    }
    map.insert(key, at);
}

impl Lifetimes {
    /// When the job with this key was created (its JOB CREATED timestamp), if it is tracked.
    pub fn job_created_at(&self, job_key: i64) -> Option<i64> {
        self.job_created.get(&job_key).copied()
    }

    /// Observes the records of one processed group.
    pub fn observe(&mut self, metrics: &Metrics, partition: &str, records: &[Record]) {
        for r in records {
            if r.record_type != RecordType::Event {
                continue;
            }
            count_event(metrics, partition, r);
            match (&r.value, r.intent) {
                (RecordValue::Job(_), Intent::Created) => {
                    insert_bounded(&mut self.job_created, r.key, r.timestamp);
                }
                (RecordValue::Job(_), Intent::Completed | Intent::Canceled) => {
                    self.job_created.remove(&r.key);
                }
                (RecordValue::JobBatch(b), Intent::Activated) => {
                    for k in &b.job_keys {
                        if let Some(created) = self.job_created.remove(k) {
                            let wait = r.timestamp - created;
                            metrics
                                .job_activation_time
                                .with_label_values(&[partition])
                                .observe(secs(wait));
                        }
                    }
                }
                (RecordValue::ProcessInstance(pi), intent)
                    if pi.bpmn_element_type == BpmnElementType::Process =>
                {
                    match intent {
                        Intent::ElementActivating => {
                            insert_bounded(&mut self.instance_activated, r.key, r.timestamp);
                        }
                        Intent::ElementCompleted => {
                            if let Some(started) = self.instance_activated.remove(&r.key) {
                                metrics
                                    .pi_execution_time
                                    .with_label_values(&[partition])
                                    .observe(secs(r.timestamp - started));
                            }
                        }
                        Intent::ElementTerminated => {
                            self.instance_activated.remove(&r.key);
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
}

/// Counts one event in the counters Zeebe's dashboards read (jobs, root process instances,
/// incidents).
fn count_event(metrics: &Metrics, partition: &str, r: &Record) {
    match (&r.value, r.intent) {
        (RecordValue::Job(job), intent) => {
            let action = match intent {
                Intent::Created => "created",
                Intent::Completed => "completed",
                Intent::Failed => "failed",
                Intent::TimedOut => "timed out",
                Intent::Canceled => "canceled",
                Intent::ErrorThrown => "error thrown",
                _ => return,
            };
            metrics
                .job_events
                .with_label_values(&[partition, action, &job.job_type, job_kind(job)])
                .inc();
        }
        (RecordValue::JobBatch(batch), Intent::Activated) => {
            for job in &batch.jobs {
                metrics
                    .job_events
                    .with_label_values(&[partition, "activated", &job.job_type, job_kind(job)])
                    .inc();
            }
        }
        (RecordValue::ProcessInstance(pi), intent)
            if pi.bpmn_element_type == BpmnElementType::Process
                && pi.parent_process_instance_key <= 0 =>
        {
            let action = match intent {
                Intent::ElementActivated => "activated",
                Intent::ElementCompleted => "completed",
                Intent::ElementTerminated => "terminated",
                _ => return,
            };
            metrics
                .executed_instances
                .with_label_values(&[partition, "ROOT_PROCESS_INSTANCE", action])
                .inc();
        }
        (RecordValue::Incident(_), Intent::Created | Intent::Resolved) => {
            let action = if r.intent == Intent::Created {
                "created"
            } else {
                "resolved"
            };
            metrics
                .incident_events
                .with_label_values(&[partition, action])
                .inc();
        }
        _ => {}
    }
}

fn job_kind(job: &zest_protocol::JobRecord) -> &'static str {
    match job.kind {
        zest_protocol::JobKind::BpmnElement => "BPMN_ELEMENT",
        zest_protocol::JobKind::ExecutionListener => "EXECUTION_LISTENER",
        zest_protocol::JobKind::TaskListener => "TASK_LISTENER",
        zest_protocol::JobKind::AdHocSubProcess => "AD_HOC_SUB_PROCESS",
    }
}

fn secs(millis: i64) -> f64 {
    millis.max(0) as f64 / 1000.0
}

impl Metrics {
    // A flat list of metric definitions, each registered once: it reads best whole, and
    // splitting it would only scatter the list a reader scans for a metric's name.
    pub fn new() -> prometheus::Result<Metrics> {
        let registry = Registry::new();
        let records_processed = IntCounterVec::new(
            Opts::new(
                "zeebe_stream_processor_records_total",
                "Records written by the stream processor",
            ),
            &["partition", "recordType", "valueType", "intent"],
        )?;
        let backpressure_rejections = IntCounterVec::new(
            Opts::new(
                "zeebe_dropped_request_count_total",
                "Client commands rejected by backpressure",
            ),
            &["partition"],
        )?;
        let buckets = vec![
            0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
            2.5,
        ];
        let processing_latency = HistogramVec::new(
            HistogramOpts::new(
                "zeebe_stream_processor_batch_processing_duration",
                "Seconds to process one group of commands",
            )
            .buckets(buckets.clone()),
            &["partition"],
        )?;
        let commit_latency = HistogramVec::new(
            HistogramOpts::new(
                "zeebe_log_appender_commit_latency",
                "Seconds from append to commit and apply of one log entry",
            )
            .buckets(buckets),
            &["partition"],
        )?;
        let group_size = HistogramVec::new(
            HistogramOpts::new(
                "zest_commands_per_log_entry",
                "Commands processed into one log entry",
            )
            .buckets(vec![
                1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0,
            ]),
            &["partition"],
        )?;
        let group_records = HistogramVec::new(
            HistogramOpts::new(
                "zest_records_per_log_entry",
                "Records written into one log entry (a group stops taking commands at 4096)",
            )
            .buckets(vec![
                16.0, 64.0, 256.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 65536.0,
            ]),
            &["partition"],
        )?;
        let queued_commands = IntGaugeVec::new(
            Opts::new(
                "zest_queued_commands",
                "Client commands waiting in the partition's queue",
            ),
            &["partition"],
        )?;
        let gauge =
            |name: &str, help: &str| IntGaugeVec::new(Opts::new(name, help), &["partition"]);
        let received_requests = IntCounterVec::new(
            Opts::new(
                "zeebe_received_request_count_total",
                "Client commands received by the partition",
            ),
            &["partition"],
        )?;
        let backpressure_limit = gauge(
            "zeebe_backpressure_requests_limit",
            "Current limit of commands in flight (adaptive backpressure)",
        )?;
        let backpressure_inflight = gauge(
            "zeebe_backpressure_inflight_requests_count",
            "Limited client commands in flight",
        )?;
        let histogram = |name: &str, help: &str, buckets: Vec<f64>| {
            HistogramVec::new(
                HistogramOpts::new(name, help).buckets(buckets),
                &["partition"],
            )
        };
        let fine = vec![
            0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
            2.5, 5.0, 10.0,
        ];
        let command_latency = histogram(
            "zeebe_stream_processor_latency",
            "Seconds from a client command's arrival at the partition to its processing and commit",
            fine.clone(),
        )?;
        let job_activation_time = histogram(
            "zeebe_job_activation_time",
            "Seconds from a job's creation to its activation",
            fine.clone(),
        )?;
        let mut coarse = fine.clone();
        coarse.extend([30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0]);
        let pi_execution_time = histogram(
            "zeebe_process_instance_execution_time",
            "Seconds from a process instance's activation to its completion",
            coarse,
        )?;
        let state_disk_bytes = gauge("zest_state_disk_bytes", "Bytes of state on disk")?;
        let log_disk_bytes = gauge("zest_log_disk_bytes", "Bytes of log on disk")?;
        let memory_budget = IntGaugeVec::new(
            Opts::new(
                "zest_memory_budget_bytes",
                "The memory budget (--memory-mb) and its parts",
            ),
            &["part"],
        )?;
        let memory_used = IntGaugeVec::new(
            Opts::new(
                "zest_memory_used_bytes",
                "Memory the embedded store's parts use now",
            ),
            &["part"],
        )?;
        let memory_guard_refused = IntCounter::new(
            "zest_memory_guard_refused_total",
            "Process instance creations refused while the resident memory was at the budget",
        )?;
        let job_events = IntCounterVec::new(
            Opts::new("zeebe_job_events_total", "Number of job events"),
            &["partition", "action", "type", "job_kind"],
        )?;
        let executed_instances = IntCounterVec::new(
            Opts::new(
                "zeebe_executed_instances_total",
                "Number of executed (root) process instances",
            ),
            &["partition", "type", "action"],
        )?;
        let incident_events = IntCounterVec::new(
            Opts::new("zeebe_incident_events_total", "Number of incident events"),
            &["partition", "action"],
        )?;
        let snapshot_duration = histogram(
            "zeebe_snapshot_duration",
            "Seconds to take a snapshot of the partition's state",
            fine,
        )?;
        registry.register(Box::new(received_requests.clone()))?;
        registry.register(Box::new(backpressure_limit.clone()))?;
        registry.register(Box::new(backpressure_inflight.clone()))?;
        registry.register(Box::new(command_latency.clone()))?;
        registry.register(Box::new(job_activation_time.clone()))?;
        registry.register(Box::new(pi_execution_time.clone()))?;
        registry.register(Box::new(state_disk_bytes.clone()))?;
        registry.register(Box::new(memory_budget.clone()))?;
        registry.register(Box::new(memory_used.clone()))?;
        registry.register(Box::new(memory_guard_refused.clone()))?;
        registry.register(Box::new(log_disk_bytes.clone()))?;
        registry.register(Box::new(snapshot_duration.clone()))?;
        registry.register(Box::new(job_events.clone()))?;
        registry.register(Box::new(executed_instances.clone()))?;
        registry.register(Box::new(incident_events.clone()))?;
        #[cfg(target_os = "linux")]
        registry.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ))?;
        registry.register(Box::new(records_processed.clone()))?;
        registry.register(Box::new(backpressure_rejections.clone()))?;
        registry.register(Box::new(processing_latency.clone()))?;
        registry.register(Box::new(commit_latency.clone()))?;
        registry.register(Box::new(group_size.clone()))?;
        registry.register(Box::new(group_records.clone()))?;
        registry.register(Box::new(queued_commands.clone()))?;
        Ok(Metrics {
            registry,
            records_processed,
            backpressure_rejections,
            processing_latency,
            commit_latency,
            group_size,
            group_records,
            queued_commands,
            received_requests,
            backpressure_limit,
            backpressure_inflight,
            command_latency,
            job_activation_time,
            pi_execution_time,
            state_disk_bytes,
            memory_budget,
            memory_used,
            memory_guard_refused,
            log_disk_bytes,
            snapshot_duration,
            job_events,
            executed_instances,
            incident_events,
        })
    }
}
