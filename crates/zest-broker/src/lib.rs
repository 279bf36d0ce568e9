//! The broker: runs the partitions of this node. Per partition, a processing loop takes
//! commands from bounded queues, runs them through the engine in groups, appends each group as
//! one replicated log entry (one fsync for many commands), and answers clients once the entry
//! is committed and applied. A scheduler turns due timers, job deadlines and retry backoffs
//! into commands without blocking processing.

mod backpressure;
pub mod backup;
pub mod batch_ops;
mod byte_share;
pub mod clock;
mod cluster;
pub mod export;
mod failover;
mod history_copy;
mod history_reads;
mod job_streams;
mod local;
mod memory_guard;
mod metrics;
mod partition;
pub mod reads;
mod rebalance;
mod router;
mod scheduler;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, oneshot, OwnedSemaphorePermit};
use zest_cluster::transport::Groups;
use zest_protocol::{partition_of_key, PartitionId, Record};
use zest_storage::{Store, StoreConfig};

pub use backpressure::{BackpressureConfig, LimitAlgorithm, DEFAULT_AIMD_RTT};
pub use cluster::{ClusterConfig, NodeStatus, PartitionStatus};
pub use history_reads::HistoryReadError;
pub use job_streams::{JobStream, JobStreamSpec, PolledJobs, PushedJob, StreamSender};
pub use metrics::Metrics;
pub use zest_cluster::{LogFlush, RaftSettings};

#[derive(Debug, Clone)]
pub struct BrokerConfig {
    pub node_id: u64,
    pub data_dir: PathBuf,
    pub partitions: u32,
    /// Address advertised in the topology (the gateway's).
    pub advertised_address: String,
    /// Capacity of each partition's queue of client commands; a full queue answers
    /// RESOURCE_EXHAUSTED (backpressure).
    pub command_queue: usize,
    /// Most bytes of client commands waiting in each partition's queue (their documents and
    /// resources, see `RecordValue::payload_bytes`); beyond it requests get
    /// RESOURCE_EXHAUSTED, so large commands are bounded by bytes as small ones are by count.
    pub command_queue_bytes: usize,
    /// Most commands processed into one log entry. Every command of a group waits until the
    /// whole group is processed and committed, so large groups add latency to their first
    /// commands; 64 commands still amortize a group's fsync and consensus round (see
    /// docs/benchmarks.md, 2026-11-28 late night: the realistic scenario's p99 was lower with
    /// 64 than with 512 in 4 of 4 alternated rounds; one-task's throughput at max rate and
    /// under overload unchanged; 32 was not clearly better than 64).
    pub max_group: usize,
    /// Most groups processed ahead of their commit (1 = process, commit, then the next).
    pub pipeline_depth: usize,
    /// Most bytes the groups processed ahead of their commit hold (their records, answers and
    /// writes, see `partition::group_bytes`), per partition; one group always goes ahead.
    pub pipeline_bytes: usize,
    /// Most bytes of jobs the node's job streams hold together ahead of their clients (see
    /// `job_streams`); each stream is held to its own window besides.
    pub job_stream_bytes: usize,
    /// Most bytes the client commands this node's clients have in progress may hold (see
    /// [`call_bytes`]): the gateway's calls waiting for a partition's answer, the longest of
    /// which wait for a process instance to complete. Past it, commands that backpressure may
    /// refuse get RESOURCE_EXHAUSTED at once; job completions and the others it exempts go on.
    pub call_bytes: usize,
    /// Most bytes the request bodies (REST) and gRPC messages being received may hold, from
    /// all clients together (`zest_gateway::intake`): a sixteenth of the sized budget.
    pub request_bytes: usize,
    /// How often the scheduler looks for due timers, job deadlines and backoffs.
    pub scheduler_interval: Duration,
    pub store: StoreConfig,
    pub raft: RaftSettings,
    pub backpressure: BackpressureConfig,
    /// Where backups go (`/actuator/backupRuntime`); none: backups are refused.
    pub backup_dir: Option<PathBuf>,
    /// Whether the node keeps a history (`data/history.sqlite`) for the REST API's searches.
    pub history: bool,
    /// A PostgreSQL database for the history instead of `data/history.sqlite`
    /// (`postgres://user:password@host:port/database`); several nodes may share one.
    pub history_url: Option<String>,
    /// The history store's page caches (`zest_memory_budget_bytes{part="history"}`).
    pub history_cache_bytes: u64,
    /// How long finished root instances stay in history (Camunda's `default-history-ttl`).
    pub history_ttl: Duration,
    /// Most bytes of a partition's log its exporter may hold unexported before new process
    /// instances are refused (`export::Backlog`; 0: no bound).
    pub max_unexported_log_bytes: u64,
    /// The memory budget (`--memory-mb`) the parts below were sized from.
    pub memory_bytes: u64,
    /// Parsed models an engine keeps (processes and decision graphs each).
    pub model_cache: usize,
    /// The cluster this node belongs to (a single node by default).
    pub cluster: ClusterConfig,
    /// Whether the node refuses to create instances while its resident memory is at the
    /// budget (`memory_guard`).
    pub memory_guard: bool,
}

impl Default for BrokerConfig {
    /// One partition on `./data` with the parts sized from the default budget (128 MiB).
    fn default() -> Self {
        let mut config = BrokerConfig {
            node_id: 0,
            data_dir: PathBuf::from("data"),
            partitions: 1,
            advertised_address: "127.0.0.1:26500".into(),
            command_queue: 2048,
            command_queue_bytes: 16 << 20,
            max_group: 64,
            pipeline_depth: 4,
            pipeline_bytes: 8 << 20,
            job_stream_bytes: 12 << 20,
            call_bytes: 12 << 20,
            request_bytes: 6 << 20,
            scheduler_interval: Duration::from_millis(100),
            store: StoreConfig::default(),
            raft: RaftSettings::default(),
            backpressure: BackpressureConfig::default(),
            backup_dir: None,
            memory_bytes: 128 << 20,
            history: true,
            history_url: None,
            history_cache_bytes: 4 << 20,
            history_ttl: Duration::from_secs(30 * 24 * 3600),
            max_unexported_log_bytes: export::DEFAULT_MAX_UNEXPORTED_LOG_BYTES,
            model_cache: 128,
            cluster: ClusterConfig::default(),
            memory_guard: true,
        };
        config.size_from_memory();
        config
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    #[error("Expected to handle the request, but partition {0} is overloaded (backpressure); retry later")]
    Backpressure(PartitionId),
    #[error("Expected to create a process instance, but partition {0} is overloaded: jobs wait behind busy job workers for longer than backpressure-max-job-wait-ms allows (the job backlog gate); retry later, add job workers, or set backpressure-max-job-wait-ms to 0 to turn the gate off")]
    JobBacklog(PartitionId),
    #[error("Expected to create a process instance, but partition {partition}'s log holds {held_mib} MiB not yet exported to history, more than max-unexported-log-mb ({max_mib}) allows; new process instances are refused until the exporter catches up; retry later, or resume exporting (POST /actuator/exporting/resume) or mend what makes it fail")]
    ExportBacklog {
        partition: PartitionId,
        held_mib: u64,
        max_mib: u64,
    },
    #[error("Expected to handle the request, but this node's clients have as many commands in progress as its memory allows (the call share of --memory-mb, {0} bytes); retry later, or give the node more memory")]
    NodeBusy(usize),
    #[error("Expected to handle the request, but this node's memory ({resident_mib} MiB resident) is at its budget (--memory-mb {budget_mib}); new process instances are refused until it is back under; retry later, or give the node more memory")]
    MemoryFull { resident_mib: u64, budget_mib: u64 },
    #[error("Expected to handle the request, but partition {0} is not available: {1}")]
    Unavailable(PartitionId, String),
    #[error("Expected to route the request to partition {0}, but this node has no such partition")]
    NoSuchPartition(PartitionId),
}

impl BrokerConfig {
    /// What of the budget is left to what is not counted: the program's code (its binary's
    /// pages take some 19 MiB of resident memory), the runtime, connections and the gateway's
    /// calls, and the allocator's spare pages. A quarter of the budget, at most 48 MiB.
    pub fn memory_reserve(memory_bytes: u64) -> u64 {
        (memory_bytes / 4).min(48 << 20)
    }

    /// The part of the budget the counted parts are sized from (see [`Self::memory_reserve`]).
    pub fn sized_bytes(memory_bytes: u64) -> u64 {
        memory_bytes - Self::memory_reserve(memory_bytes)
    }

    /// Sizes the parts the budget (`memory_bytes`) pays for, from what its reserve leaves: the
    /// store's block cache and write buffers, the parsed models, and the bytes the command
    /// queues, the groups processed ahead of their commit and the job streams may hold. The
    /// parts a node sizes when it starts, from the partitions it replicates, are the recent
    /// log entries and the input collections ([`Self::collection_cache_bytes`]).
    pub fn size_from_memory(&mut self) {
        let sized = Self::sized_bytes(self.memory_bytes);
        let partitions = self.partitions.max(1) as u64;
        (self.store.cache_bytes, self.store.write_buffer_bytes) =
            Self::store_parts(self.memory_bytes);
        // the history store's page caches (a thirty-second, taken from the write buffers')
        self.history_cache_bytes = sized / 32;
        // a parsed model takes some tens of KiB; 64 KiB each is a safe bound
        self.model_cache = ((sized / 16) / (64 << 10)) as usize;
        // commands waiting in the partitions' queues, by their documents and resources
        self.command_queue_bytes = (sized / 8 / partitions) as usize;
        // groups processed and not yet committed, by their records, answers and writes
        self.pipeline_bytes = (sized / 16 / partitions) as usize;
        // jobs pushed to workers and not yet read by them (40 streams of 1 MiB would be 40 MiB)
        self.job_stream_bytes = (sized / 8) as usize;
        // client commands in progress, by their documents and what a call costs around them
        self.call_bytes = (sized / 8) as usize;
        // request bodies and gRPC messages being received (the gateway's intake)
        self.request_bytes = (sized / 16) as usize;
    }

    /// The resident memory the memory guard holds the node to: the budget, and what the
    /// store's block cache and write buffers were set to (`--cache-mb`, `--write-buffer-mb`)
    /// beyond the parts the budget gives them.
    pub(crate) fn guarded_bytes(&self) -> u64 {
        let (cache, write_buffers) = Self::store_parts(self.memory_bytes);
        self.memory_bytes
            + self.store.cache_bytes.saturating_sub(cache)
            + self.store.write_buffer_bytes.saturating_sub(write_buffers)
    }

    /// The store's parts of the budget: its block cache (an eighth of the sized part) and its
    /// write buffers (a quarter). The write buffers also hold the partitions' young layers:
    /// the larger they are, the more entries are created and deleted in memory without ever
    /// reaching fjall (the realistic benchmark spent some 4 % less CPU with 24-26 MiB than with
    /// 12, docs/benchmarks.md, 2026-11-28 evening); a larger cache bought it nothing.
    fn store_parts(memory_bytes: u64) -> (u64, u64) {
        let sized = Self::sized_bytes(memory_bytes);
        (sized / 8, sized / 4 - sized / 32)
    }

    /// Memory each local partition keeps evaluated multi-instance input collections in: a
    /// thirty-second of the sized budget, shared by the partitions.
    pub(crate) fn collection_cache_bytes(&self) -> usize {
        (Self::sized_bytes(self.memory_bytes) / 32) as usize / self.store.partitions.max(1) as usize
    }
}

/// The partition count is fixed when the data directory is created (`data/PARTITIONS`): keys,
/// message routing by correlation key and the distribution of deployments all depend on it.
fn check_partition_count(config: &BrokerConfig, earlier: Option<u32>) -> anyhow::Result<()> {
    let file = config.data_dir.join("PARTITIONS");
    let existing = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text.trim().parse::<u32>().map_err(|_| {
            anyhow::anyhow!(
                "{} is damaged: expected a partition count, found {text:?}",
                file.display()
            )
        })?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => earlier,
        Err(e) => anyhow::bail!("cannot read {}: {e}", file.display()),
    };
    let count = existing.unwrap_or(config.partitions);
    anyhow::ensure!(
        count == config.partitions,
        "the data directory {} holds {count} partition(s), and this node was started with {}: the partition count of a data directory cannot change (keys, message routing and deployments depend on it); start with --partitions {count}, or use a new data directory",
        config.data_dir.display(),
        config.partitions
    );
    if !file.exists() {
        zest_storage::write_number_file(&config.data_dir, "PARTITIONS", count)?;
    }
    Ok(())
}

/// What a client command in progress weighs in the node's share (`call_bytes`): its record
/// (documents and resources, as in the partition's queue) and a fixed part for the call around
/// it. The fixed part is what jemalloc's heap profile of node 0 under overload (3 nodes at 20
/// PI/s of the realistic benchmark) showed per call: its futures in the gateway (8-10 KiB per
/// call), HTTP/2's stream, and the answer's encoding.
fn call_bytes(record: &Record) -> usize {
    const CALL_BYTES: usize = 8 << 10;
    CALL_BYTES + partition::record_bytes(record)
}

/// A command for a partition and where to send its answer.
pub(crate) struct Submission {
    pub record: Record,
    pub reply: Option<oneshot::Sender<Record>>,
    /// The backpressure permit of a limited user command.
    pub permit: Option<backpressure::Permit>,
    /// Its share of the partition's queue bytes ([`BrokerConfig::command_queue_bytes`]),
    /// given back when the processing loop takes it.
    pub queue_bytes: Option<tokio::sync::OwnedSemaphorePermit>,
    pub received: std::time::Instant,
}

impl Submission {
    /// A command without a client: nobody waits for its answer and no limit applies.
    pub(crate) fn internal(record: Record) -> Submission {
        Submission {
            record,
            reply: None,
            permit: None,
            queue_bytes: None,
            received: std::time::Instant::now(),
        }
    }
}

pub struct Broker {
    config: BrokerConfig,
    /// None for a standalone gateway.
    store: Option<Store>,
    local: Arc<local::Local>,
    job_streams: Arc<job_streams::Registry>,
    /// The client commands in progress (`call_bytes`).
    calls: byte_share::ByteShare,
    /// The resident memory against the budget.
    memory: Option<Arc<memory_guard::MemoryGuard>>,
    round_robin: AtomicU32,
    /// Where the next job activation starts asking (its own turn: sharing the creations'
    /// would skew where instances go).
    activation_round: AtomicU32,
    pub metrics: Arc<Metrics>,
    backups: Arc<backup::Backups>,
    /// Stops the internal port's server.
    internal_stop: Option<tokio::sync::watch::Sender<bool>>,
    /// The history and its exporters (none with `--history off` or in a standalone gateway).
    exporting: Option<Arc<export::Exporting>>,
    /// Each local partition's export.
    exports: BTreeMap<PartitionId, export::PartitionExport>,
    /// Stops the exporters.
    export_stop: tokio::sync::watch::Sender<bool>,
}

/// One partition as the topology shows it.
#[derive(Debug, Clone)]
pub struct PartitionInfo {
    pub partition_id: PartitionId,
    pub is_leader: bool,
    pub healthy: bool,
    /// Position of the last record applied to the partition's state.
    pub processed_position: u64,
}

/// One broker of the cluster, as the topology shows it.
#[derive(Debug, Clone)]
pub struct BrokerTopology {
    pub node_id: u64,
    /// Its gateway's address (gRPC).
    pub address: String,
    pub version: String,
    pub partitions: Vec<PartitionInfo>,
}

/// The cluster as this node sees it: itself and the brokers it heard from lately.
#[derive(Debug, Clone)]
pub struct ClusterTopology {
    pub brokers: Vec<BrokerTopology>,
    pub cluster_size: u32,
    pub partitions_count: u32,
    pub replication_factor: u32,
}

impl Broker {
    /// Opens the store, joins the cluster (when there is one), starts this node's partitions
    /// and waits until each has a leader and the ones led here have recovered.
    pub async fn start(mut config: BrokerConfig) -> anyhow::Result<Broker> {
        if config.cluster.gateway_only {
            // the cluster's shape comes from its brokers
            let shape = cluster::discover_shape(&config.cluster).await;
            config.partitions = shape.partitions_count;
            config.cluster.cluster_size = shape.cluster_size;
            config.cluster.replication_factor = shape.replication_factor;
            tracing::info!(
                partitions = shape.partitions_count,
                cluster_size = shape.cluster_size,
                replication_factor = shape.replication_factor,
                "found the cluster through node {}",
                shape.node_id
            );
        }
        // a directory of an earlier version (before this file) ran one partition
        let earlier = if config.data_dir.join("FORMAT").exists() {
            Some(1)
        } else {
            None
        };
        let fresh = !config.data_dir.join("PARTITIONS").exists();
        let listener = match &config.cluster.internal_address {
            Some(address) => Some(zest_cluster::transport::bind(address).await?),
            None => None,
        };
        let internal_address = match (&config.cluster.advertised_internal_address, &listener) {
            (Some(a), _) => a.clone(),
            (None, Some(l)) => zest_cluster::transport::advertised(&l.local_addr()?),
            (None, None) => String::new(),
        };
        let cluster = Arc::new(cluster::Cluster::new(
            config.node_id,
            config.cluster.clone(),
            config.partitions,
            internal_address,
        ));
        // the memory budget is the node's: the partitions it replicates share it
        let local_count = cluster.local_partitions().len().max(1);
        config.store.partitions = local_count as u32;
        config.raft.recent_bytes =
            (BrokerConfig::sized_bytes(config.memory_bytes) / 8) as usize / local_count;
        let store = if config.cluster.gateway_only {
            None
        } else {
            let store = Store::open(&config.data_dir, &config.store)?;
            check_partition_count(&config, earlier)?;
            Some(store)
        };
        let backups = Arc::new(backup::Backups::open(config.backup_dir.clone())?);
        let metrics = Arc::new(Metrics::new()?);
        let job_streams = Arc::new(job_streams::Registry::new(config.job_stream_bytes));
        // every local partition's queue of internal commands exists before the first starts:
        // partitions send each other commands (command distribution, message subscriptions)
        let mut queues = Vec::new();
        let mut receivers = BTreeMap::new();
        for pid in 1..=config.partitions {
            if cluster.local_partitions().contains(&pid) {
                let (tx, rx) = mpsc::channel(partition::INTERNAL_QUEUE);
                let leading = Arc::new(AtomicBool::new(false));
                queues.push(Some(router::LocalQueue {
                    tx: tx.clone(),
                    leading: leading.clone(),
                }));
                receivers.insert(pid, (tx, rx, leading));
            } else {
                queues.push(None);
            }
        }
        let router = Arc::new(router::Router::new(queues, cluster.clone()));
        let (jobs_available, _) = broadcast::channel(1024);
        let local = Arc::new(local::Local {
            node_id: config.node_id,
            command_address: config.advertised_address.clone(),
            partitions: std::sync::OnceLock::new(),
            router: router.clone(),
            cluster: cluster.clone(),
            jobs_available: jobs_available.clone(),
            history: std::sync::OnceLock::new(),
        });
        let groups = Arc::new(Groups::default());
        let mut internal_stop = None;
        // the partitions' own notifications: passed on to the other nodes too in a cluster
        let partition_jobs = if let Some(listener) = listener {
            let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
            internal_stop = Some(stop_tx);
            let handler: Arc<dyn zest_cluster::transport::Handler> = local.clone();
            anyhow::ensure!(
                config.cluster.token.is_some(),
                "the internal port needs a cluster secret (--cluster-secret)"
            );
            let tls = config
                .cluster
                .tls
                .as_ref()
                .map(|t| t.acceptor())
                .transpose()?;
            tokio::spawn(zest_cluster::transport::serve(
                listener,
                groups.clone(),
                handler,
                config.cluster.token(),
                tls,
                async move {
                    let _ = stop_rx.changed().await;
                },
            ));
            let status_of = local.clone();
            tokio::spawn(cluster::exchange_status(cluster.clone(), move || {
                status_of.status()
            }));
            if fresh {
                wait_for_replicas(&cluster).await;
            }
            let (tx, rx) = broadcast::channel(1024);
            tokio::spawn(local::relay_job_notifications(rx, local.clone()));
            tx
        } else {
            jobs_available.clone()
        };
        let shared = partition::Shared {
            jobs_available: partition_jobs,
            job_streams: job_streams.clone(),
            metrics: metrics.clone(),
            router,
            cluster: cluster.clone(),
            groups,
        };
        let mut partitions = BTreeMap::new();
        for (pid, (tx, rx, leading)) in receivers {
            let Some(store) = &store else { break };
            let handle = partition::start(pid, &config, store, &shared, (tx, rx), leading).await?;
            partitions.insert(pid, handle);
        }
        let (export_stop, export_stop_rx) = tokio::sync::watch::channel(false);
        let exporting = match (&store, config.history) {
            (Some(_), true) => {
                let history = open_history(&config).await?;
                Some(Arc::new(export::Exporting::new(
                    Arc::new(history),
                    &metrics.registry,
                )?))
            }
            _ => None,
        };
        let mut exports = BTreeMap::new();
        if let Some(exporting) = &exporting {
            exporting.start_retention(config.history_ttl, export_stop_rx.clone());
            // a gap in a partition's history is copied from another replica (in a cluster)
            let copier = internal_stop
                .is_some()
                .then(|| Arc::new(history_copy::Copier::new(local.clone())));
            for (pid, handle) in &partitions {
                let export = exporting.start(
                    *pid,
                    handle.store.clone(),
                    handle.applied.clone(),
                    handle.export_backlog.clone(),
                    copier.clone(),
                    export_stop_rx.clone(),
                );
                exports.insert(*pid, export);
            }
            let _ = local.history.set(history_reads::HistoryHere {
                history: exporting.history.clone(),
                exports: exports.iter().map(|(p, e)| (*p, e.clone())).collect(),
                copies: Default::default(),
            });
        }
        let _ = local.partitions.set(partitions);
        let memory = config.memory_guard.then(|| {
            let guard = Arc::new(memory_guard::MemoryGuard::new(config.guarded_bytes()));
            memory_guard::MemoryGuard::watch(guard.clone());
            guard
        });
        let broker = Broker {
            calls: byte_share::ByteShare::new(config.call_bytes),
            memory,
            config,
            store,
            local,
            job_streams,
            round_robin: AtomicU32::new(0),
            activation_round: AtomicU32::new(0),
            metrics,
            backups,
            internal_stop,
            exporting,
            exports,
            export_stop,
        };
        broker.wait_until_ready().await;
        if let (Some(guard), Some(at_ready)) = (&broker.memory, memory_guard::resident_bytes()) {
            guard.start(at_ready);
        }
        Ok(broker)
    }

    /// Waits until [`Broker::is_ready`], telling what it waits for now and then.
    async fn wait_until_ready(&self) {
        let started = std::time::Instant::now();
        let mut told = started;
        while !self.is_ready().await {
            if told.elapsed() >= Duration::from_secs(5) {
                told = std::time::Instant::now();
                let waiting: Vec<PartitionId> = self
                    .local
                    .partitions()
                    .keys()
                    .copied()
                    .filter(|&pid| self.local.cluster.leader(pid).is_none())
                    .collect();
                tracing::info!(
                    "waiting {:?} for partitions {waiting:?} to elect a leader (a majority of each partition's nodes must be up)",
                    started.elapsed()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The node's exporting (its history store, pause and resume); none when history is off.
    pub fn exporting(&self) -> Option<&Arc<export::Exporting>> {
        self.exporting.as_ref()
    }

    /// Whether this node's history holds every partition of the cluster (it replicates them
    /// all, none with a gap): its searches then see everything.
    pub fn history_holds_every_partition(&self) -> bool {
        self.exporting.is_some()
            && self.exports.len() as u32 == self.config.partitions
            && self
                .exports
                .values()
                .all(export::PartitionExport::is_complete)
    }

    /// The history store, for a search: once this node's exporters have passed what it
    /// answered (at most a second), so a search after a command here sees the command's
    /// effects. None when the node keeps no history.
    pub async fn history(&self) -> Option<&zest_history::History> {
        let exporting = self.exporting.as_ref()?;
        // a store not reached yet answers at once (503): nothing to wait for
        let exports = self.exports.iter().filter(|_| exporting.history.is_ready());
        for (pid, export) in exports {
            if let Some(p) = self.local.partitions().get(pid) {
                export.wait_exported(&p.applied).await;
            }
        }
        Some(&exporting.history)
    }

    pub fn config(&self) -> &BrokerConfig {
        &self.config
    }

    pub fn partition_count(&self) -> u32 {
        self.config.partitions
    }

    /// The partition of a new process instance: round-robin, as Zeebe does.
    pub fn next_partition(&self) -> PartitionId {
        (self.round_robin.fetch_add(1, Ordering::Relaxed) % self.config.partitions) + 1
    }

    /// The partition a job activation asks first; the others follow in order.
    pub fn next_activation_partition(&self) -> PartitionId {
        (self.activation_round.fetch_add(1, Ordering::Relaxed) % self.config.partitions) + 1
    }

    /// The partition that owns an entity key.
    pub fn partition_of(&self, key: i64) -> PartitionId {
        partition_of_key(key)
    }

    /// Sends a client command to its partition's leader (on this node or another) and waits
    /// until it is processed and committed. Returns the event that answers it, or its
    /// rejection record.
    pub async fn submit(
        &self,
        partition: PartitionId,
        record: Record,
    ) -> Result<Record, BrokerError> {
        let _held = self.hold_call(&record)?;
        self.local.submit(partition, record).await
    }

    /// Counts a client command in the node's share of commands in progress (`call_bytes`)
    /// until the returned permit drops, when its answer is back. A command backpressure may
    /// refuse is refused when the share is full; one it exempts (a job's completion, a
    /// cancellation, ...) is counted and goes on, as it would past the partition's limit.
    /// Creations of process instances are also refused while the node's resident memory is at
    /// its budget (`memory_guard`).
    fn hold_call(&self, record: &Record) -> Result<Option<OwnedSemaphorePermit>, BrokerError> {
        if backpressure::exempt(record.value_type, record.intent) {
            return Ok(None);
        }
        let admitted = self
            .memory
            .as_ref()
            .map_or(Ok(()), |g| g.admit(record.value_type));
        if let Err(refused) = admitted {
            self.metrics.memory_guard_refused.inc();
            return Err(refused);
        }
        match self.calls.reserve(call_bytes(record)) {
            Some(permit) => Ok(Some(permit)),
            None => Err(BrokerError::NodeBusy(self.config.call_bytes)),
        }
    }

    /// Opens a job stream (job push): jobs of the type are activated for it as they become
    /// activatable while it has room in its window of `window` jobs. Dropping it closes it.
    pub fn open_job_stream(&self, spec: &JobStreamSpec, window: usize) -> JobStream {
        JobStream::open(
            self.job_streams.clone(),
            self.local.router.clone(),
            spec,
            window,
        )
    }

    /// Hands back a job that was activated for a worker that went away before it got it
    /// (JOB YIELD): it becomes activatable again at once.
    pub fn yield_job(&self, job: PushedJob) {
        job_streams::yield_job(&self.local.router, job);
    }

    /// Whether the node's jobs held ahead of their clients (job streams and polls together,
    /// `job_stream_bytes`) leave room for a poll to activate more.
    pub fn has_job_room(&self) -> bool {
        self.job_streams.has_room()
    }

    /// Waits until the node's jobs held ahead of their clients leave room for more.
    pub async fn job_room(&self) {
        self.job_streams.room().await
    }

    /// Counts the jobs a poll activates (`PolledJobs::add`) in the node's share until the
    /// guard is dropped.
    pub fn hold_polled_jobs(&self) -> PolledJobs {
        self.job_streams.hold_polled()
    }

    /// Notifications of job types that became activatable (on any node of the cluster).
    pub fn subscribe_jobs(&self) -> broadcast::Receiver<String> {
        self.local.jobs_available.subscribe()
    }

    /// A node's leader priority for a partition, as Zeebe's topology gives it: the replication
    /// factor for the partition's primary, one less for each node after it, 0 for a node that
    /// does not replicate it.
    pub fn leader_priority(&self, partition: PartitionId, node: u64) -> u32 {
        let replicas = self.local.cluster.replicas(partition);
        replicas
            .iter()
            .position(|&n| n == node)
            .map(|i| (replicas.len() - i) as u32)
            .unwrap_or(0)
    }

    /// This node's partitions.
    pub async fn topology(&self) -> Vec<PartitionInfo> {
        self.local
            .status()
            .partitions
            .into_iter()
            .map(partition_info)
            .collect()
    }

    /// The brokers of the cluster this node knows to be up, itself included, by node id.
    pub fn cluster_topology(&self) -> ClusterTopology {
        let mut nodes = self.local.cluster.live_brokers();
        if !self.local.partitions().is_empty() {
            nodes.push(self.local.status());
        }
        nodes.sort_by_key(|n| n.node_id);
        ClusterTopology {
            brokers: nodes
                .into_iter()
                .map(|n| BrokerTopology {
                    node_id: n.node_id,
                    address: n.command_address,
                    version: n.version,
                    partitions: n.partitions.into_iter().map(partition_info).collect(),
                })
                .collect(),
            cluster_size: self.config.cluster.cluster_size,
            partitions_count: self.config.partitions,
            replication_factor: self.config.cluster.replication_factor,
        }
    }

    /// A page of a search over every partition's committed state, in key order: `from`
    /// matches passed over, at most `limit` returned, and the count of all matches. Each
    /// partition is read here when this node replicates it, else by a node that does
    /// (`reads`); `filter` holds equalities on the fields of the results' JSON.
    pub async fn search(
        &self,
        kind: reads::SearchKind,
        filter: &serde_json::Map<String, serde_json::Value>,
        from: u64,
        limit: u64,
    ) -> Result<reads::Page, BrokerError> {
        let mut page = reads::Page::default();
        for partition in 1..=self.config.partitions {
            let search = reads::Search {
                filter: filter.clone(),
                skip: from.saturating_sub(page.total),
                limit: limit - page.items.len() as u64,
            };
            let read = match kind {
                reads::SearchKind::UserTasks => reads::Read::UserTasks(search),
                reads::SearchKind::ElementInstances => reads::Read::ElementInstances(search),
            };
            let reads::Answer::Page { items, total } = self.read(partition, read).await? else {
                return Err(unexpected_answer(partition));
            };
            page.items.extend(items);
            page.total += total;
        }
        Ok(page)
    }

    /// The open Camunda user task `key`, read from its partition's committed state.
    pub async fn open_user_task(
        &self,
        key: i64,
    ) -> Result<Option<zest_engine::types::StoredUserTask>, BrokerError> {
        let partition = self.partition_of(key);
        match self.read(partition, reads::Read::UserTask(key)).await? {
            reads::Answer::UserTask(t) => Ok(t.map(|t| *t)),
            _ => Err(unexpected_answer(partition)),
        }
    }

    /// The user `username` and whether it holds the `admin` role, from partition 1's committed
    /// state (identities are created there and distributed to the others).
    pub async fn user(
        &self,
        username: &str,
    ) -> Result<Option<(zest_protocol::UserRecord, bool)>, BrokerError> {
        match self
            .read(1, reads::Read::User(username.to_string()))
            .await?
        {
            reads::Answer::User(u) => Ok(u.map(|u| *u)),
            _ => Err(unexpected_answer(1)),
        }
    }

    /// Whether any user holds the `admin` role (partition 1's committed state).
    pub async fn has_admin(&self) -> Result<bool, BrokerError> {
        match self.read(1, reads::Read::HasAdmin).await? {
            reads::Answer::HasAdmin(found) => Ok(found),
            _ => Err(unexpected_answer(1)),
        }
    }

    /// The deployed process version `key`, from its partition's committed state.
    pub async fn process_definition(
        &self,
        key: i64,
    ) -> Result<Option<zest_protocol::ProcessRecord>, BrokerError> {
        let partition = self.partition_of(key);
        match self.read(partition, reads::Read::Process(key)).await? {
            reads::Answer::Process(p) => Ok(p),
            _ => Err(unexpected_answer(partition)),
        }
    }

    /// The deployed form version `key`, from its partition's committed state.
    pub async fn form(&self, key: i64) -> Result<Option<zest_protocol::FormRecord>, BrokerError> {
        self.form_read(self.partition_of(key), reads::Read::Form(key))
            .await
    }

    /// The latest version of the form `form_id` (deployments are processed on partition 1).
    pub async fn latest_form(
        &self,
        form_id: &str,
    ) -> Result<Option<zest_protocol::FormRecord>, BrokerError> {
        self.form_read(1, reads::Read::LatestForm(form_id.to_string()))
            .await
    }

    async fn form_read(
        &self,
        partition: PartitionId,
        read: reads::Read,
    ) -> Result<Option<zest_protocol::FormRecord>, BrokerError> {
        match self.read(partition, read).await? {
            reads::Answer::Form(f) => Ok(f),
            _ => Err(unexpected_answer(partition)),
        }
    }

    /// Reads partition `partition`'s committed state: here when this node replicates it (on a
    /// blocking thread: a search scans), else on a node that does.
    async fn read(
        &self,
        partition: PartitionId,
        read: reads::Read,
    ) -> Result<reads::Answer, BrokerError> {
        if partition == 0 || partition > self.config.partitions {
            return Err(BrokerError::NoSuchPartition(partition));
        }
        match self.local.partition(partition) {
            Some(p) => reads::read_blocking(p, read)
                .await
                .map_err(|e| BrokerError::Unavailable(partition, e)),
            None => self.local.read_remote(partition, &read).await,
        }
    }

    /// True when every partition of this node has a leader, and those led here have recovered
    /// and process commands (a node without partitions, a standalone gateway: when every
    /// partition of the cluster has a leader).
    pub async fn is_ready(&self) -> bool {
        let cluster = &self.local.cluster;
        if self.local.partitions().is_empty() {
            return (1..=self.config.partitions).all(|pid| cluster.leader(pid).is_some());
        }
        self.local
            .partitions()
            .values()
            .all(|p| match cluster.leader(p.id) {
                Some(node) if node == self.config.node_id => p.is_leading(),
                Some(_) => true,
                None => false,
            })
    }

    /// Brings the gauges that are read rather than counted up to date (before a scrape).
    pub fn refresh_metrics(&self) {
        let (cache, write_buffers) = self
            .store
            .as_ref()
            .map(Store::memory_used)
            .unwrap_or_default();
        let budget = [
            ("total", self.config.memory_bytes),
            (
                "reserve",
                BrokerConfig::memory_reserve(self.config.memory_bytes),
            ),
            ("block_cache", self.config.store.cache_bytes),
            ("write_buffers", self.config.store.write_buffer_bytes),
            ("model_cache", self.config.model_cache as u64 * (64 << 10)),
            (
                "input_collections",
                (self.config.collection_cache_bytes() * self.local.partitions().len()) as u64,
            ),
            (
                "recent_log_entries",
                (self.config.raft.recent_bytes * self.local.partitions().len()) as u64,
            ),
            (
                "command_queues",
                (self.config.command_queue_bytes * self.local.partitions().len()) as u64,
            ),
            (
                "pipelines",
                (self.config.pipeline_bytes * self.local.partitions().len()) as u64,
            ),
            ("job_streams", self.config.job_stream_bytes as u64),
            ("calls", self.config.call_bytes as u64),
            ("request_bodies", self.config.request_bytes as u64),
            ("history", self.config.history_cache_bytes),
        ];
        for (part, bytes) in budget {
            self.metrics
                .memory_budget
                .with_label_values(&[part])
                .set(bytes as i64);
        }
        let queued: usize = self
            .local
            .partitions()
            .values()
            .map(|p| p.queued_bytes())
            .sum();
        for (part, bytes) in [
            ("block_cache", cache),
            ("write_buffers", write_buffers),
            ("command_queues", queued as u64),
            ("job_streams", self.job_streams.held_bytes() as u64),
            ("calls", self.calls.held() as u64),
        ] {
            self.metrics
                .memory_used
                .with_label_values(&[part])
                .set(bytes as i64);
        }
        for p in self.local.partitions().values() {
            let label = p.id.to_string();
            self.metrics
                .state_disk_bytes
                .with_label_values(&[&label])
                .set(p.store.state_disk_space() as i64);
            self.metrics
                .log_disk_bytes
                .with_label_values(&[&label])
                .set(p.store.log_disk_space() as i64);
            let durations = std::mem::take(
                &mut *p
                    .applied
                    .snapshot_durations
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()),
            );
            for d in durations {
                self.metrics
                    .snapshot_duration
                    .with_label_values(&[&label])
                    .observe(d);
            }
        }
    }

    pub fn disk_space(&self) -> u64 {
        self.store.as_ref().map(Store::disk_space).unwrap_or(0)
    }

    pub fn backups(&self) -> &backup::Backups {
        &self.backups
    }

    /// Schedules backup `id` of every partition; it is taken in the background while the
    /// partitions keep processing.
    pub fn take_backup(&self, id: i64) -> Result<u64, backup::BackupError> {
        let pids: Vec<u32> = self.local.partitions().keys().copied().collect();
        let id = self.backups.schedule(id, &pids)?;
        let states: Vec<_> = self
            .local
            .partitions()
            .values()
            .map(|p| (p.answered_state(), p.applied.clone()))
            .collect();
        let backups = self.backups.clone();
        let history = self.exporting.as_ref().map(|e| e.history.clone());
        tokio::spawn(async move {
            // what was answered before the backup was asked for is in it
            let mut parts = Vec::with_capacity(states.len());
            for (state, applied) in states {
                let store = state.into_store().await;
                parts.push(backup::PartitionSource { store, applied });
            }
            let _ =
                tokio::task::spawn_blocking(move || backups.take(id, &parts, history.as_deref()))
                    .await;
        });
        Ok(id)
    }

    /// Stops accepting commands, lets in-flight groups finish, stops consensus and syncs.
    pub async fn shutdown(&self) {
        let _ = self.export_stop.send(true);
        for p in self.local.partitions().values() {
            p.stop().await;
        }
        if let Some(stop) = &self.internal_stop {
            let _ = stop.send(true);
        }
        if let Some(Err(e)) = self.store.as_ref().map(Store::sync) {
            tracing::error!("final sync failed: {e}");
        }
    }
}

fn partition_info(p: PartitionStatus) -> PartitionInfo {
    PartitionInfo {
        partition_id: p.partition_id,
        is_leader: p.leader,
        healthy: p.healthy,
        processed_position: p.processed_position,
    }
}

/// A read answered with what another read asks for: a node that does not speak this one's
/// protocol.
pub(crate) fn unexpected_answer(partition: PartitionId) -> BrokerError {
    BrokerError::Unavailable(
        partition,
        "a node answered the read with something else (is it another version of Zest?)".into(),
    )
}

/// A new cluster's groups are formed with every replica's internal address: wait until each
/// replica of this node's partitions was heard from (or told of by another node).
async fn wait_for_replicas(cluster: &cluster::Cluster) {
    let started = std::time::Instant::now();
    let mut told = started;
    loop {
        let missing: std::collections::BTreeSet<u64> = cluster
            .local_partitions()
            .iter()
            .flat_map(|&pid| cluster.replicas(pid))
            .filter(|&node| cluster.peers.address(node).is_none())
            .collect();
        if missing.is_empty() {
            return;
        }
        if told.elapsed() >= Duration::from_secs(5) {
            told = std::time::Instant::now();
            tracing::info!(
                "waiting {:?} for nodes {missing:?} to be reachable through the contact points {:?}",
                started.elapsed(),
                cluster.config.contact_points
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The node's history store: PostgreSQL when `history_url` names one, else SQLite in the data
/// directory. Opened on a blocking thread (the PostgreSQL client runs its own runtime). A
/// PostgreSQL server that cannot be reached (or migrated) now does not stop the node: history
/// is a secondary store, its exporters retry with backoff and its reads answer 503 until it is
/// up. A malformed URL does.
async fn open_history(config: &BrokerConfig) -> anyhow::Result<zest_history::History> {
    let url = config.history_url.clone();
    let path = config.data_dir.join("history.sqlite");
    let cache = config.history_cache_bytes;
    let opened = tokio::task::spawn_blocking(move || match &url {
        Some(url) => {
            let history = zest_history::History::postgres(url)?;
            if let Err(e) = history.connect() {
                tracing::warn!(
                    "history store unavailable at start, the node starts without it (history \
                     reads answer 503; its exporters retry with backoff): {e}"
                );
            }
            Ok(history)
        }
        None => zest_history::History::open(&path, cache),
    })
    .await?;
    Ok(opened?)
}
