//! Prometheus metrics of the broker, with Zeebe's metric names where one exists.

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry};

pub struct Metrics {
    pub registry: Registry,
    /// zeebe_stream_processor_records_total: records processed, by partition, value type, intent.
    pub records_processed: IntCounterVec,
    /// zeebe_dropped_request_count_total: commands rejected by backpressure.
    pub backpressure_rejections: IntCounterVec,
    /// zeebe_stream_processor_batch_processing_duration: time to process one group of commands.
    pub processing_latency: HistogramVec,
    /// zeebe_log_appender_commit_latency: time from append to commit+apply of a group.
    pub commit_latency: HistogramVec,
    /// Commands per log entry.
    pub group_size: HistogramVec,
    /// zeebe_backpressure_inflight_requests_count-like: commands queued for processing.
    pub queued_commands: IntGaugeVec,
}

impl Metrics {
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
        let queued_commands = IntGaugeVec::new(
            Opts::new(
                "zest_queued_commands",
                "Client commands waiting in the partition's queue",
            ),
            &["partition"],
        )?;
        registry.register(Box::new(records_processed.clone()))?;
        registry.register(Box::new(backpressure_rejections.clone()))?;
        registry.register(Box::new(processing_latency.clone()))?;
        registry.register(Box::new(commit_latency.clone()))?;
        registry.register(Box::new(group_size.clone()))?;
        registry.register(Box::new(queued_commands.clone()))?;
        Ok(Metrics {
            registry,
            records_processed,
            backpressure_rejections,
            processing_latency,
            commit_latency,
            group_size,
            queued_commands,
        })
    }
}
