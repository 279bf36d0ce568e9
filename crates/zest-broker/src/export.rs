//! Exporters, as Zeebe has them: each partition replicated here feeds its committed records,
//! in log order, to the node's history store (`zest-history`). Every replica exports its own
//! log (leader or follower), so each node's history holds the partitions it replicates and a
//! failover changes nothing. The store keeps the export position in the same transaction as
//! the rows; the runner resumes after it and lets the log be purged only behind it
//! (`AppliedInfo::export_floor`). A failing export is retried with backoff; processing never
//! waits for it. See `docs/design/history.md`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry};
use tokio::sync::watch;
use zest_cluster::AppliedInfo;

use crate::history_copy::Copier;
use zest_history::History;
use zest_protocol::PartitionId;
use zest_storage::PartitionStore;

/// The exporter's id, as `/actuator/exporters` and the metrics name it.
pub const EXPORTER_ID: &str = "history";

/// Most bytes of log entries read and exported in one transaction (decoded, their records
/// take a few times that: a catch-up holds some MiB at a time, not the backlog).
const BATCH_BYTES: usize = 1 << 20;

/// How long a search waits for the exporter to pass what this node answered.
const READ_WAIT: Duration = Duration::from_secs(1);

/// The default of `--max-unexported-log-mb`: 1 GiB of log per partition (see
/// `docs/design/history.md`, "Bounds").
pub const DEFAULT_MAX_UNEXPORTED_LOG_BYTES: u64 = 1 << 30;

/// How often the log an exporter holds is measured.
const BACKLOG_EVERY: Duration = Duration::from_millis(200);

/// The log a partition's exporter holds (from the first entry it has not exported on), and
/// the gate it closes: past `max_bytes`, new process instances are refused (`BrokerError::
/// ExportBacklog`), so a stuck exporter (paused, or its store failing) cannot fill the disk.
/// Commands that drain work go on. The gate opens again once the exporter has brought what it
/// holds back under three quarters of the bound (not at the bound itself, where every
/// measurement would open and close it again).
pub struct Backlog {
    /// 0: no bound.
    max_bytes: u64,
    held: AtomicU64,
    closed: AtomicBool,
}

impl Backlog {
    pub fn new(max_bytes: u64) -> Backlog {
        Backlog {
            max_bytes,
            held: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// The exporter now holds `held` bytes of log.
    pub fn update(&self, held: u64) {
        self.held.store(held, Ordering::Relaxed);
        if self.max_bytes == 0 {
            return;
        }
        if held > self.max_bytes {
            self.closed.store(true, Ordering::Relaxed);
        } else if held <= self.max_bytes / 4 * 3 {
            self.closed.store(false, Ordering::Relaxed);
        }
    }

    /// While the gate is closed: the bytes held and the bound.
    pub fn refusal(&self) -> Option<(u64, u64)> {
        self.closed
            .load(Ordering::Relaxed)
            .then(|| (self.held.load(Ordering::Relaxed), self.max_bytes))
    }
}

/// The node's exporting: its store, whether it is paused, and its metrics.
pub struct Exporting {
    pub history: Arc<History>,
    /// Paused by `/actuator/exporting/pause` (nothing is exported).
    paused: watch::Sender<bool>,
    /// Paused softly (`?soft=true`): records are exported, the log is not purged behind them.
    soft: AtomicBool,
    metrics: ExportMetrics,
}

struct ExportMetrics {
    position: IntGaugeVec,
    held_bytes: IntGaugeVec,
    gate_closed: IntGaugeVec,
    lag: IntGaugeVec,
    failures: IntCounterVec,
    records: IntCounterVec,
    latency: HistogramVec,
    copies: IntCounterVec,
}

impl ExportMetrics {
    fn new(registry: &Registry) -> prometheus::Result<ExportMetrics> {
        let labels = &["exporter", "partition"];
        let m = ExportMetrics {
            position: IntGaugeVec::new(
                Opts::new(
                    "zeebe_exporter_last_exported_position",
                    "Position of the last record exported",
                ),
                labels,
            )?,
            held_bytes: IntGaugeVec::new(
                Opts::new(
                    "zest_exporter_unexported_log_bytes",
                    "Bytes of the partition's log from the first entry not yet exported on",
                ),
                labels,
            )?,
            gate_closed: IntGaugeVec::new(
                Opts::new(
                    "zest_exporter_backlog_gate_closed",
                    "1 while the unexported log is past max-unexported-log-mb and new process \
                     instances are refused",
                ),
                &["partition"],
            )?,
            lag: IntGaugeVec::new(
                Opts::new(
                    "zest_exporter_lag_records",
                    "Records committed here and not yet exported",
                ),
                labels,
            )?,
            failures: IntCounterVec::new(
                Opts::new(
                    "zest_exporter_failures_total",
                    "Exports that failed and were retried",
                ),
                labels,
            )?,
            records: IntCounterVec::new(
                Opts::new("zeebe_exporter_events_total", "Records exported"),
                labels,
            )?,
            latency: HistogramVec::new(
                HistogramOpts::new(
                    "zest_export_lag_seconds",
                    "Time from a record's processing to its export (visible in searches)",
                )
                .buckets(vec![
                    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                ]),
                &["partition"],
            )?,
            copies: IntCounterVec::new(
                Opts::new(
                    "zest_history_copies_total",
                    "Copies of the partition's history from a complete replica that filled a gap \
                     in this node's",
                ),
                &["partition"],
            )?,
        };
        registry.register(Box::new(m.copies.clone()))?;
        registry.register(Box::new(m.position.clone()))?;
        registry.register(Box::new(m.lag.clone()))?;
        registry.register(Box::new(m.held_bytes.clone()))?;
        registry.register(Box::new(m.gate_closed.clone()))?;
        registry.register(Box::new(m.failures.clone()))?;
        registry.register(Box::new(m.records.clone()))?;
        registry.register(Box::new(m.latency.clone()))?;
        Ok(m)
    }
}

/// One partition's export, as the REST reads and the management API see it.
#[derive(Clone)]
pub(crate) struct PartitionExport {
    /// The position of the last record exported.
    pub exported: watch::Receiver<u64>,
    /// Whether this node's history of the partition has no gap (false from a snapshot that
    /// skipped unexported log until a complete replica's copy is in, `crate::history_copy`).
    complete: Arc<AtomicBool>,
}

impl PartitionExport {
    /// Whether this node's history of the partition is complete (reads of an incomplete one
    /// go to a replica whose history is).
    pub fn is_complete(&self) -> bool {
        self.complete.load(Ordering::SeqCst)
    }

    /// Waits (at most a second) until the records this node answered are exported, so that a
    /// search after a command on this node sees it.
    pub async fn wait_exported(&self, applied: &AppliedInfo) {
        // what this node answered before its apply (one voter), or what it applied (answered
        // after the apply): whichever is further
        let target = applied
            .answered_position
            .load(Ordering::SeqCst)
            .max(applied.last_position.load(Ordering::SeqCst));
        let mut rx = self.exported.clone();
        let _ = tokio::time::timeout(READ_WAIT, rx.wait_for(|p| *p >= target)).await;
    }
}

impl Exporting {
    pub fn new(history: Arc<History>, registry: &Registry) -> prometheus::Result<Exporting> {
        Ok(Exporting {
            history,
            paused: watch::Sender::new(false),
            soft: AtomicBool::new(false),
            metrics: ExportMetrics::new(registry)?,
        })
    }

    /// `/actuator/exporting/pause`: stops exporting (`soft`: goes on exporting but keeps the
    /// log behind what was exported when paused).
    pub fn pause(&self, soft: bool) {
        self.soft.store(soft, Ordering::SeqCst);
        self.paused.send_replace(!soft);
    }

    pub fn resume(&self) {
        self.soft.store(false, Ordering::SeqCst);
        self.paused.send_replace(false);
    }

    /// "PAUSED", "SOFT_PAUSED" or "EXPORTING".
    pub fn state(&self) -> &'static str {
        if *self.paused.borrow() {
            "PAUSED"
        } else if self.soft.load(Ordering::SeqCst) {
            "SOFT_PAUSED"
        } else {
            "EXPORTING"
        }
    }

    /// Removes history older than `ttl` (finished root instances and all under them) in
    /// batches, every minute to every hour: the interval halves after a full batch and
    /// doubles when nothing was due.
    pub(crate) fn start_retention(
        self: &Arc<Self>,
        ttl: Duration,
        mut stop: watch::Receiver<bool>,
    ) {
        const BATCH: usize = 500;
        let (min, max) = (Duration::from_secs(60), Duration::from_secs(3600));
        let history = self.history.clone();
        tokio::spawn(async move {
            let mut interval = min;
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = stop.changed() => return,
                }
                let cutoff = crate::clock::now_millis() - ttl.as_millis() as i64;
                let h = history.clone();
                match tokio::task::spawn_blocking(move || h.remove_expired(cutoff, BATCH)).await {
                    Ok(Ok(n)) if n == BATCH => interval = (interval / 2).max(min),
                    Ok(Ok(0)) => interval = (interval * 2).min(max),
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => tracing::warn!("history retention failed: {e}"),
                    Err(e) => tracing::warn!("history retention failed: {e}"),
                }
            }
        });
    }

    /// Starts the export of partition `pid` from where the store says it is (once it is
    /// reached: a PostgreSQL server down at start is retried), and the measurement of the log
    /// it holds (`backlog`). A gap in its history is filled by `copier` (a copy from a
    /// complete replica) before the export goes on.
    pub(crate) fn start(
        self: &Arc<Self>,
        pid: PartitionId,
        store: PartitionStore,
        applied: Arc<AppliedInfo>,
        backlog: Arc<Backlog>,
        copier: Option<Arc<Copier>>,
        stop: watch::Receiver<bool>,
    ) -> PartitionExport {
        // nothing may be purged until the runner knows where the store stands
        applied.export_floor.store(1, Ordering::SeqCst);
        // until then the history counts as complete: the runner's first step reads the gap
        let complete = Arc::new(AtomicBool::new(true));
        let (tx, rx) = watch::channel(0);
        tokio::spawn(self.clone().measure_backlog(
            pid,
            store.clone(),
            applied.clone(),
            backlog,
            stop.clone(),
        ));
        let runner = Runner {
            pid,
            store,
            applied,
            exporting: self.clone(),
            positioned: false,
            next_index: 0,
            position: 0,
            exported: tx,
            complete: complete.clone(),
            copier,
        };
        tokio::spawn(runner.run(stop));
        PartitionExport {
            exported: rx,
            complete,
        }
    }

    /// Measures the log held behind the export floor (what the exporter has not exported,
    /// or, paused softly, what it keeps) every [`BACKLOG_EVERY`], for the gate and the metrics.
    /// Apart from the runner: a paused or failing runner is what it must see.
    async fn measure_backlog(
        self: Arc<Self>,
        pid: PartitionId,
        store: PartitionStore,
        applied: Arc<AppliedInfo>,
        backlog: Arc<Backlog>,
        mut stop: watch::Receiver<bool>,
    ) {
        let label = pid.to_string();
        let held_bytes = self
            .metrics
            .held_bytes
            .with_label_values(&[EXPORTER_ID, &label]);
        let gate_closed = self.metrics.gate_closed.with_label_values(&[&label]);
        loop {
            let floor = applied.export_floor.load(Ordering::SeqCst).max(1);
            let s = store.clone();
            // the journal's lock may wait for an append's fsync: not on a runtime thread
            if let Ok(held) = tokio::task::spawn_blocking(move || s.log_bytes_from(floor)).await {
                backlog.update(held);
                held_bytes.set(held as i64);
                gate_closed.set(backlog.refusal().is_some() as i64);
            }
            tokio::select! {
                _ = tokio::time::sleep(BACKLOG_EVERY) => {}
                _ = stop.changed() => return,
            }
        }
    }
}

struct Runner {
    pid: PartitionId,
    store: PartitionStore,
    applied: Arc<AppliedInfo>,
    exporting: Arc<Exporting>,
    /// Whether `next_index` and `position` were read from the store.
    positioned: bool,
    next_index: u64,
    position: u64,
    exported: watch::Sender<u64>,
    complete: Arc<AtomicBool>,
    /// Fills a gap from a complete replica (None: no other replica to copy from).
    copier: Option<Arc<Copier>>,
}

impl Runner {
    async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let mut backoff = Duration::from_millis(100);
        let mut paused = self.exporting.paused.subscribe();
        loop {
            if *stop.borrow() {
                return;
            }
            if *paused.borrow_and_update() {
                tokio::select! {
                    _ = paused.changed() => {}
                    _ = stop.changed() => {}
                }
                continue;
            }
            if !self.complete.load(Ordering::SeqCst) && self.copier.is_some() {
                match self.catch_up().await {
                    Ok(()) => backoff = Duration::from_millis(100),
                    Err(e) => self.failed(e, &mut backoff, &mut stop).await,
                }
                continue;
            }
            let applied = self.applied.last_index.load(Ordering::SeqCst);
            if self.positioned && applied < self.next_index {
                // resumed after a soft pause with nothing new: the log it kept goes now
                self.let_go();
                let wait = self.next_index.saturating_sub(1);
                tokio::select! {
                    _ = self.applied.wait_applied_beyond(wait, Duration::from_secs(1)) => {}
                    _ = stop.changed() => {}
                }
                continue;
            }
            match self.step(applied).await {
                Ok(()) => backoff = Duration::from_millis(100),
                Err(e) => self.failed(e, &mut backoff, &mut stop).await,
            }
        }
    }

    /// Counts and logs a failed export (or copy), and waits `backoff` (doubled for the next
    /// one, up to 10 s) before the next try.
    async fn failed(
        &self,
        e: anyhow::Error,
        backoff: &mut Duration,
        stop: &mut watch::Receiver<bool>,
    ) {
        self.exporting
            .metrics
            .failures
            .with_label_values(&[EXPORTER_ID, &self.pid.to_string()])
            .inc();
        tracing::warn!(
            partition = self.pid,
            "export failed, retrying in {backoff:?}: {e:#}"
        );
        tokio::select! {
            _ = tokio::time::sleep(*backoff) => {}
            _ = stop.changed() => {}
        }
        *backoff = (*backoff * 2).min(Duration::from_secs(10));
    }

    /// Fills this node's gap in the partition's history with a copy of a complete replica's
    /// rows (`crate::history_copy`), then goes on exporting after what the copy reflects.
    async fn catch_up(&mut self) -> anyhow::Result<()> {
        let copier = self.copier.clone().expect("called with a copier");
        let history = self.exporting.history.clone();
        match copier.copy(&history, self.pid, self.next_index).await? {
            None => {
                tracing::warn!(
                    partition = self.pid,
                    "no other replica has the partition's history whole: this node's history \
                     of it keeps its gap (a restart tries the copy again)"
                );
                self.copier = None;
            }
            Some(end) => {
                tracing::info!(
                    partition = self.pid,
                    position = end.position,
                    next_index = end.next_index,
                    "copied the partition's history from a complete replica: its gap is filled"
                );
                self.next_index = end.next_index;
                self.position = self.position.max(end.position);
                self.complete.store(true, Ordering::SeqCst);
                self.exporting
                    .metrics
                    .copies
                    .with_label_values(&[&self.pid.to_string()])
                    .inc();
                self.publish(0);
            }
        }
        Ok(())
    }

    /// Moves the export past log entries it cannot read (a snapshot skipped them, or the log
    /// was purged behind it): a gap in this node's history, marked in the store until a copy
    /// fills it. PostgreSQL, shared by the replicas, has the rows from another one: nothing
    /// is marked.
    fn skip(&mut self, position: u64, next_index: u64) -> anyhow::Result<()> {
        if !self.exporting.history.is_postgres() {
            self.exporting
                .history
                .skip_to(self.pid, position, next_index)?;
            self.complete.store(false, Ordering::SeqCst);
        }
        self.next_index = next_index;
        self.position = self.position.max(position);
        self.publish(0);
        Ok(())
    }

    /// Exports the committed entries from `next_index` through `applied` (as many as one
    /// batch holds).
    async fn step(&mut self, applied: u64) -> anyhow::Result<()> {
        if !self.positioned {
            return self.position_from_store().await;
        }
        if self.skip_installed_gap()? {
            return Ok(());
        }
        let (store, from) = (self.store.clone(), self.next_index);
        let entries = tokio::task::spawn_blocking(move || {
            zest_cluster::read_records(&store, from, applied + 1, BATCH_BYTES)
        })
        .await?
        .map_err(anyhow::Error::msg)?;
        if entries.first().map(|(i, _)| *i) != Some(from) {
            return self.skip_purged(applied).await;
        }
        let next_index = entries.last().map_or(from, |(i, _)| i + 1);
        let records: Vec<zest_protocol::Record> =
            entries.into_iter().flat_map(|(_, r)| r).collect();
        let newest = records.last().map(|r| (r.position, r.timestamp));
        let history = self.exporting.history.clone();
        let pid = self.pid;
        let taken = tokio::task::spawn_blocking(move || history.export(pid, &records, next_index))
            .await??;
        self.next_index = next_index;
        if let Some((position, timestamp)) = newest {
            self.position = self.position.max(position);
            let lag = (crate::clock::now_millis() - timestamp).max(0) as f64 / 1000.0;
            self.exporting
                .metrics
                .latency
                .with_label_values(&[&pid.to_string()])
                .observe(lag);
        }
        self.publish(taken);
        Ok(())
    }

    /// Reads where the store stands (connecting to it and migrating its schema first, when
    /// it was not reached yet), and lets the log be purged behind it.
    async fn position_from_store(&mut self) -> anyhow::Result<()> {
        let (history, pid) = (self.exporting.history.clone(), self.pid);
        let at = tokio::task::spawn_blocking(move || history.position(pid)).await??;
        self.positioned = true;
        self.next_index = at.next_index;
        self.position = at.position;
        // PostgreSQL is shared by the replicas: no gap of this node's own
        self.complete.store(
            at.gap_to == 0 || self.exporting.history.is_postgres(),
            Ordering::SeqCst,
        );
        self.publish(0);
        Ok(())
    }

    /// Tells the metrics, the waiting reads and the log's purge where the export is.
    fn publish(&self, taken: usize) {
        let labels = [EXPORTER_ID, &self.pid.to_string()];
        let m = &self.exporting.metrics;
        m.position
            .with_label_values(&labels)
            .set(self.position as i64);
        m.records.with_label_values(&labels).inc_by(taken as u64);
        let last = self.applied.last_position.load(Ordering::SeqCst);
        m.lag
            .with_label_values(&labels)
            .set(last.saturating_sub(self.position) as i64);
        self.let_go();
        self.exported.send_replace(self.position);
    }

    /// Lets the log be purged behind what was exported (not while paused softly).
    fn let_go(&self) {
        if !self.exporting.soft.load(Ordering::SeqCst) {
            self.applied
                .export_floor
                .store(self.next_index.max(1), Ordering::SeqCst);
        }
    }

    /// A snapshot installed here skipped the entries from `next_index` on: they were never
    /// applied here and the log may hold another leader's entries there. History lacks them
    /// (a gap, until a copy fills it); export goes on after the snapshot.
    fn skip_installed_gap(&mut self) -> anyhow::Result<bool> {
        let Some(to) = self.applied.installed_gap_over(self.next_index) else {
            return Ok(false);
        };
        let position = self.applied.last_position.load(Ordering::SeqCst);
        tracing::warn!(
            partition = self.pid,
            from = self.next_index,
            to,
            "a snapshot installed here skipped log entries that history had not exported: \
             the partition's history is copied from a complete replica"
        );
        self.skip(position, to + 1)?;
        Ok(true)
    }

    /// The log no longer holds `next_index` (purged before this exporter existed, say):
    /// history goes on from the first entry it holds, and the gap is marked.
    async fn skip_purged(&mut self, applied: u64) -> anyhow::Result<()> {
        // an empty log (a restored backup, say) holds none of what was applied
        let first = self.store.log_first_index()?.unwrap_or(applied + 1);
        if first <= self.next_index {
            // nothing readable yet (an entry being written): try again shortly
            tokio::time::sleep(Duration::from_millis(10)).await;
            return Ok(());
        }
        if self.next_index == 0 && first == 1 {
            // entry 0 is the group's first membership, written only where the group was
            // formed: it holds no records, so nothing is missing
            self.next_index = 1;
            return Ok(());
        }
        // past everything applied, history stands at the last applied record (reads that wait
        // for it do not wait for records it will never see)
        let position = if first > applied {
            self.applied.last_position.load(Ordering::SeqCst)
        } else {
            self.position
        };
        tracing::warn!(
            partition = self.pid,
            from = self.next_index,
            to = first,
            "the log was purged behind history's position: the partition's history is \
             copied from a complete replica"
        );
        self.skip(position, first)
    }
}

#[cfg(test)]
mod tests {
    use super::Backlog;

    #[test]
    fn the_backlog_gate_closes_past_the_bound_and_opens_under_three_quarters_of_it() {
        let b = Backlog::new(1000);
        b.update(1000);
        assert_eq!(b.refusal(), None, "at the bound: open");
        b.update(1001);
        assert_eq!(b.refusal(), Some((1001, 1000)));
        b.update(800);
        assert_eq!(b.refusal(), Some((800, 1000)), "still closed above 750");
        b.update(750);
        assert_eq!(b.refusal(), None);
        let off = Backlog::new(0);
        off.update(u64::MAX);
        assert_eq!(off.refusal(), None, "0: no bound");
    }
}
