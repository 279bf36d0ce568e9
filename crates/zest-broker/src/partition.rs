//! One partition's runtime: consensus group, processing loop and scheduler.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use zest_cluster::{AppliedInfo, RecordBatch, ZestRaft};
use zest_engine::state::Txn;
use zest_engine::{Engine, SideEffect};
use zest_protocol::{Intent, PartitionId, Record, RecordType, ValueType};
use zest_storage::{PartitionStore, Store};

use crate::metrics::Metrics;
use crate::{scheduler, BrokerConfig, Submission};

pub(crate) struct PartitionHandle {
    pub id: PartitionId,
    pub client_tx: mpsc::Sender<Submission>,
    pub raft: ZestRaft,
    stop_tx: watch::Sender<bool>,
    /// Taken by the first `stop`.
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl PartitionHandle {
    /// Stops the processing loop and scheduler (queued commands are failed), then consensus.
    /// Later calls do nothing.
    pub async fn stop(&self) {
        let _ = self.stop_tx.send(true);
        let tasks = match self.tasks.lock() {
            Ok(mut t) => std::mem::take(&mut *t),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        if tasks.is_empty() {
            return;
        }
        for t in tasks {
            let _ = t.await;
        }
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!(partition = self.id, "raft shutdown: {e}");
        }
    }
}

pub(crate) fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

pub(crate) async fn start(
    pid: PartitionId,
    config: &BrokerConfig,
    store: &Store,
    jobs_available: broadcast::Sender<String>,
    metrics: Arc<Metrics>,
) -> anyhow::Result<PartitionHandle> {
    let pstore = store.partition(pid)?;
    let started = Instant::now();
    let praft = zest_cluster::start_partition(
        config.node_id,
        &config.advertised_address,
        pid,
        pstore.clone(),
        config.data_dir.join("snapshots"),
        &config.raft,
    )
    .await?;
    let raft = praft.raft;
    // Wait until this node leads and everything committed before is applied (replay).
    raft.wait(None)
        .current_leader(config.node_id, "partition leader")
        .await
        .map_err(|e| anyhow::anyhow!("partition {pid} did not elect a leader: {e}"))?;
    raft.ensure_linearizable()
        .await
        .map_err(|e| anyhow::anyhow!("partition {pid} did not recover: {e}"))?;
    tracing::info!(
        partition = pid,
        applied_index = praft.applied.last_index.load(Ordering::SeqCst),
        last_position = praft.applied.last_position.load(Ordering::SeqCst),
        "partition recovered in {:?}",
        started.elapsed()
    );
    let (client_tx, client_rx) = mpsc::channel(config.command_queue);
    let (internal_tx, internal_rx) = mpsc::channel(1024);
    let (stop_tx, stop_rx) = watch::channel(false);
    // Identifies this incarnation's requests: answers to requests of an earlier run (e.g. a
    // create-with-result waiting when the node stopped) are not delivered to anyone.
    let stream_id = (now_millis() & 0x7fff_ffff) as i32;
    let processor = Processor {
        pid,
        raft: raft.clone(),
        store: pstore.clone(),
        applied: praft.applied.clone(),
        engine: Engine::new(pid),
        jobs_available,
        metrics,
        stream_id,
        max_group: config.max_group,
        pending: HashMap::new(),
        next_request_id: 1,
    };
    let tasks = vec![
        tokio::spawn(processor.run(client_rx, internal_rx, stop_rx.clone())),
        tokio::spawn(scheduler::run(
            pid,
            pstore,
            internal_tx,
            config.scheduler_interval,
            stop_rx,
        )),
    ];
    Ok(PartitionHandle {
        id: pid,
        client_tx,
        raft,
        stop_tx,
        tasks: std::sync::Mutex::new(tasks),
    })
}

struct Processor {
    pid: PartitionId,
    raft: ZestRaft,
    store: PartitionStore,
    applied: Arc<AppliedInfo>,
    engine: Engine,
    jobs_available: broadcast::Sender<String>,
    metrics: Arc<Metrics>,
    stream_id: i32,
    max_group: usize,
    /// Requests answered later than their own group (create-with-result).
    pending: HashMap<i64, oneshot::Sender<Record>>,
    next_request_id: i64,
}

impl Processor {
    async fn run(
        mut self,
        mut client_rx: mpsc::Receiver<Submission>,
        mut internal_rx: mpsc::Receiver<Submission>,
        mut stop_rx: watch::Receiver<bool>,
    ) {
        let pid_label = self.pid.to_string();
        loop {
            let first = tokio::select! {
                biased;
                _ = stop_rx.changed() => break,
                Some(s) = internal_rx.recv() => s,
                Some(s) = client_rx.recv() => s,
                else => break,
            };
            let mut group = vec![first];
            // Internal commands first (they free work: timeouts, timers), then clients.
            while group.len() < self.max_group {
                match internal_rx.try_recv() {
                    Ok(s) => group.push(s),
                    Err(_) => break,
                }
            }
            while group.len() < self.max_group {
                match client_rx.try_recv() {
                    Ok(s) => group.push(s),
                    Err(_) => break,
                }
            }
            self.metrics
                .queued_commands
                .with_label_values(&[&pid_label])
                .set(client_rx.len() as i64);
            self.process_group(group, &pid_label).await;
        }
        // Fail what is still queued: those commands were never processed.
        client_rx.close();
        while let Ok(s) = client_rx.try_recv() {
            drop(s);
        }
    }

    async fn process_group(&mut self, group: Vec<Submission>, pid_label: &str) {
        let started = Instant::now();
        let mut next_position = self.applied.last_position.load(Ordering::SeqCst) + 1;
        let mut records: Vec<Record> = Vec::new();
        let mut responses = Vec::new();
        let mut effects = Vec::new();
        let mut waiting = Vec::new();
        let group_len = group.len();
        {
            let mut txn = Txn::new(&self.store);
            for sub in group {
                let mut record = sub.record;
                match sub.reply {
                    Some(reply) => {
                        record.request_id = self.next_request_id;
                        record.request_stream_id = self.stream_id;
                        self.next_request_id += 1;
                        let answered_later = record.intent == Intent::CreateWithAwaitingResult;
                        waiting.push((record.request_id, reply, answered_later));
                    }
                    None => {
                        record.request_id = -1;
                        record.request_stream_id = -1;
                    }
                }
                let before = next_position;
                let result =
                    self.engine
                        .process(&mut txn, record, now_millis(), &mut next_position);
                if result.is_read_only() {
                    next_position = before; // nothing is written for it
                } else {
                    records.extend(result.records);
                }
                responses.extend(result.responses);
                effects.extend(result.side_effects);
            }
            // The txn's writes are dropped here: state changes only when the committed entry
            // is applied, through the same appliers, on every replica alike.
        }
        self.metrics
            .processing_latency
            .with_label_values(&[pid_label])
            .observe(started.elapsed().as_secs_f64());
        self.metrics
            .group_size
            .with_label_values(&[pid_label])
            .observe(group_len as f64);
        if !records.is_empty() {
            // count per kind first: one metric update per kind, not per record
            let mut counts: HashMap<(RecordType, ValueType, Intent), u64> = HashMap::new();
            for r in &records {
                *counts
                    .entry((r.record_type, r.value_type, r.intent))
                    .or_insert(0) += 1;
            }
            for ((record_type, value_type, intent), n) in counts {
                self.metrics
                    .records_processed
                    .with_label_values(&[
                        pid_label,
                        record_type.name(),
                        value_type.name(),
                        intent.name(),
                    ])
                    .inc_by(n);
            }
            let append = Instant::now();
            if let Err(e) = self.raft.client_write(RecordBatch { records }).await {
                tracing::error!(
                    partition = self.pid,
                    "could not commit a batch: {e}; its commands are failed"
                );
                // Nothing of the group took effect: forget cached models it may have added.
                self.engine.reset_caches();
                return; // dropping `waiting` fails the requests
            }
            self.metrics
                .commit_latency
                .with_label_values(&[pid_label])
                .observe(append.elapsed().as_secs_f64());
        }
        let mut answers: HashMap<i64, Record> = HashMap::with_capacity(responses.len());
        for r in responses {
            if r.request_stream_id == self.stream_id {
                answers.insert(r.request_id, r.record);
            }
        }
        for (rid, reply, answered_later) in waiting {
            match answers.remove(&rid) {
                Some(record) => {
                    let _ = reply.send(record);
                }
                // create-with-result: answered when the instance completes
                None if answered_later => {
                    self.pending.insert(rid, reply);
                }
                // processed without an answer (internal commands): dropping the sender tells
                // the submitter that it was processed
                None => {}
            }
        }
        for (rid, record) in answers {
            if let Some(reply) = self.pending.remove(&rid) {
                let _ = reply.send(record);
            }
        }
        // abandoned waits (the client gave up) are released
        self.pending.retain(|_, reply| !reply.is_closed());
        for e in effects {
            match e {
                SideEffect::JobsAvailable(job_type) => {
                    let _ = self.jobs_available.send(job_type);
                }
            }
        }
    }
}
