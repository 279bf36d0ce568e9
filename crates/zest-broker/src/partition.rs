//! One partition's runtime: consensus group, processing loop and scheduler.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use openraft::BasicNode;
use tokio::sync::{broadcast, mpsc, oneshot, watch, OwnedSemaphorePermit};
use tokio::task::JoinHandle;
use zest_cluster::transport::Groups;
use zest_cluster::{AppliedInfo, GroupMembers, Network, RecordBatch, ZestRaft};
use zest_engine::state::{BaseReads, Layered, Speculative, Txn, Writes};
use zest_engine::{Engine, SideEffect};
use zest_protocol::{Intent, PartitionId, Record, RecordType, RecordValue, ValueType};
use zest_storage::{PartitionStore, Store};

use crate::backpressure::{Limiter, Permit};
use crate::byte_share::ByteShare;
use crate::clock::now_millis;
use crate::cluster::{Cluster, NodeId};
use crate::job_streams::{PartitionStreams, Place, PushedJob, Registry};
use crate::metrics::{Lifetimes, Metrics};
use crate::router::{Router, Sent};
use crate::{scheduler, BrokerConfig, Submission};

pub(crate) struct PartitionHandle {
    pub id: PartitionId,
    pub client_tx: mpsc::Sender<Submission>,
    pub raft: ZestRaft,
    pub limiter: Arc<Limiter>,
    /// This partition's request counters, looked up once instead of by label per request.
    pub received_requests: prometheus::IntCounter,
    pub rejected_requests: prometheus::IntCounter,
    pub store: PartitionStore,
    pub applied: Arc<AppliedInfo>,
    /// The log its exporter holds unexported, and whether that refuses new instances.
    pub export_backlog: Arc<crate::export::Backlog>,
    /// The bytes of the command queue (`BrokerConfig::command_queue_bytes`).
    queue_bytes: ByteShare,
    /// True while this node leads the partition and processes its commands.
    pub leading: Arc<AtomicBool>,
    stop_tx: watch::Sender<bool>,
    /// Taken by the first `stop`.
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

/// How long a read of a partition's state here waits for what this node answered to be
/// applied: a slow apply delays a read this long at most, and the read then trails the log as
/// a follower's does.
const APPLY_WAIT: Duration = Duration::from_secs(1);

/// A partition's committed state as a client of this node must see it: with the records this
/// node answered applied. A command is answered before its entry is applied
/// (`AppliedInfo::flushed`); a read that follows its answer here must still see its writes.
pub(crate) struct AnsweredState {
    store: PartitionStore,
    applied: Arc<AppliedInfo>,
}

impl AnsweredState {
    /// The store, once what was answered before this call is applied (or `APPLY_WAIT` passed).
    pub async fn into_store(self) -> PartitionStore {
        self.applied.wait_applied(APPLY_WAIT).await;
        self.store
    }
}

impl PartitionHandle {
    /// The state that REST reads, READ frames and backups read (not commands: they read
    /// through the processor's own writes).
    pub fn answered_state(&self) -> AnsweredState {
        AnsweredState {
            store: self.store.clone(),
            applied: self.applied.clone(),
        }
    }

    /// Reserves a client command's bytes in the queue; None when the queue holds too many.
    pub fn reserve_queue_bytes(&self, record: &Record) -> Option<OwnedSemaphorePermit> {
        self.queue_bytes.reserve(record_bytes(record))
    }

    /// Bytes of the client commands waiting in the queue.
    pub fn queued_bytes(&self) -> usize {
        self.queue_bytes.held()
    }

    pub fn is_leading(&self) -> bool {
        self.leading.load(Ordering::Acquire)
    }

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

/// Commands that may be answered by a later batch: a create-with-result (when the instance
/// completes) and user task commands (when their task listeners have run).
pub(crate) fn answered_later(record: &Record) -> bool {
    matches!(
        (record.value_type, record.intent),
        (
            ValueType::ProcessInstanceCreation,
            Intent::CreateWithAwaitingResult
        ) | (
            ValueType::UserTask,
            Intent::Assign | Intent::Claim | Intent::Update | Intent::Complete
        )
    )
}

/// Zest before 2026-11-26 wrote each snapshot as a full dump of the state to
/// `snapshots/partition-N.snapshot`. The state database always holds at least what that file
/// held (the dump was read from it, and an installed one was written to it durably), so the
/// file is of no use any more and only takes space.
fn remove_snapshot_file(data_dir: &std::path::Path, pid: u32) {
    let dir = data_dir.join("snapshots");
    let file = dir.join(format!("partition-{pid}.snapshot"));
    if std::fs::remove_file(&file).is_ok() {
        tracing::info!(file = %file.display(), "removed a snapshot file of an earlier Zest: snapshots are now the state store itself");
        let _ = std::fs::remove_dir(&dir);
    }
}

/// Capacity of each partition's queue of internal commands (scheduler, job yields, commands
/// from other partitions).
pub(crate) const INTERNAL_QUEUE: usize = 1024;

/// Most bytes of commands (by their documents and resources) processed into one group.
const GROUP_BYTES: usize = 1 << 20;

/// Most records one group writes (its log entry): a command is not added to a group that
/// wrote this many; it leads the next one instead. Decoded, a record takes 280 bytes, and
/// the leader, the followers' appliers and the exporters each hold an entry whole: under
/// overload, 512 commands (`max_group`'s default then) of the realistic benchmark wrote
/// 30,000 records (30 MB decoded on each node).
/// A group also stops taking commands once its records and answers hold the pipeline's bytes
/// (`BrokerConfig::pipeline_bytes`, by their documents): a job activation writes each job's
/// variables twice (the JOB_BATCH record and its answer), and 40 job streams' backlogs
/// activating 32 jobs of 11 KB each put 30 MB into one group of the realistic benchmark.
const GROUP_RECORDS: usize = 4096;

/// What a command weighs in the queue's bytes and a group's: its documents and resources, and
/// a fixed part for the record around them.
pub(crate) fn record_bytes(record: &Record) -> usize {
    const RECORD_BYTES: usize = 256;
    RECORD_BYTES + record.value.payload_bytes()
}

fn command_bytes(s: &Submission) -> usize {
    record_bytes(&s.record)
}

/// What records and answers hold (their documents, as [`record_bytes`]).
fn output_bytes(records: &[Record], responses: &[zest_engine::Response]) -> usize {
    let records: usize = records.iter().map(record_bytes).sum();
    let answers: usize = responses.iter().map(|r| record_bytes(&r.record)).sum();
    records + answers
}

/// What a processed group holds until it is committed: its records (in the log entry) and
/// answers (`output`, from [`output_bytes`]), and its writes (twice: the next groups read
/// them, and the state machine commits them).
fn group_bytes(output: usize, writes: &Writes) -> usize {
    let writes: usize = writes
        .0
        .iter()
        .map(|((_, k), v)| k.len() + v.as_ref().map_or(0, Vec::len))
        .sum();
    output + 2 * writes
}

/// Whether another group may be processed while `(groups, bytes)` are processed and not yet
/// committed, within `(depth, max_bytes)`: one group always may, whatever it holds.
fn may_process_more(in_flight: (usize, usize), limits: (usize, usize)) -> bool {
    let ((groups, bytes), (depth, max_bytes)) = (in_flight, limits);
    groups == 0 || (groups < depth && bytes < max_bytes)
}

/// Most commands for other partitions held back while their queues are full; beyond it the
/// partition takes no client commands until they drain (backpressure), so the held commands
/// stay bounded and none is dropped.
const OUTBOX_LIMIT: usize = 1024;

/// What a partition shares with the node: job notifications and streams, metrics, where
/// commands for other partitions go, and the cluster.
pub(crate) struct Shared {
    pub jobs_available: broadcast::Sender<String>,
    pub job_streams: Arc<Registry>,
    pub metrics: Arc<Metrics>,
    pub router: Arc<Router>,
    pub cluster: Arc<Cluster>,
    pub groups: Arc<Groups>,
}

/// Who replicates partition `pid`, with their internal addresses (a single node: itself, at
/// its advertised address, as its one-member group has always recorded).
fn group_members(config: &BrokerConfig, cluster: &Cluster, pid: PartitionId) -> GroupMembers {
    let replicas = cluster.replicas(pid);
    let members = replicas
        .iter()
        .map(|&node| {
            let addr = if cluster.is_multi_node() {
                cluster.peers.address(node).unwrap_or_default()
            } else {
                config.advertised_address.clone()
            };
            (node, BasicNode { addr })
        })
        .collect();
    GroupMembers {
        members,
        primary: replicas[0],
        initialize_after: Duration::from_secs(3),
    }
}

/// Starts partition `pid`'s consensus group on this node and the task that processes its
/// commands whenever this node leads it. `internal` is its queue of internal commands,
/// `leading` the flag the router reads.
pub(crate) async fn start(
    pid: PartitionId,
    config: &BrokerConfig,
    store: &Store,
    shared: &Shared,
    internal: (mpsc::Sender<Submission>, mpsc::Receiver<Submission>),
    leading: Arc<AtomicBool>,
) -> anyhow::Result<PartitionHandle> {
    let pstore = store.partition(pid)?;
    remove_snapshot_file(&config.data_dir, pid);
    let praft = zest_cluster::start_partition(
        config.node_id,
        pid,
        pstore.clone(),
        &config.raft,
        config.model_cache,
        group_members(config, &shared.cluster, pid),
        Network {
            partition: pid,
            peers: shared.cluster.peers.clone(),
        },
    )
    .await?;
    // a follower's entries not yet applied stay within its share of recent log entries
    shared.groups.register(
        pid,
        praft.raft.clone(),
        praft.applied.clone(),
        config.raft.recent_bytes,
    );
    let (client_tx, client_rx) = mpsc::channel(config.command_queue);
    let (stop_tx, stop_rx) = watch::channel(false);
    let label = pid.to_string();
    shared.metrics.init_partition(&label);
    let received_requests = shared
        .metrics
        .received_requests
        .with_label_values(&[&label]);
    let rejected_requests = shared
        .metrics
        .backpressure_rejections
        .with_label_values(&[&label]);
    let limiter = Limiter::new(&config.backpressure);
    let leading_flag = leading.clone();
    let supervisor = Supervisor {
        pid,
        config: config.clone(),
        raft: praft.raft.clone(),
        store: pstore.clone(),
        applied: praft.applied.clone(),
        limiter: limiter.clone(),
        leading,
        internal_tx: internal.0,
        jobs_available: shared.jobs_available.clone(),
        job_streams: shared.job_streams.clone(),
        metrics: shared.metrics.clone(),
        router: shared.router.clone(),
        cluster: shared.cluster.clone(),
    };
    let mut tasks = Vec::with_capacity(2);
    if shared.cluster.is_multi_node() {
        let watch = crate::failover::Watch {
            pid,
            node_id: config.node_id,
            raft: praft.raft.clone(),
            cluster: shared.cluster.clone(),
            groups: shared.groups.clone(),
            heartbeat: config.raft.heartbeat_interval,
            lease: config.raft.lease(),
        };
        tasks.push(tokio::spawn(watch.run(stop_rx.clone())));
    }
    tasks.push(tokio::spawn(supervisor.run(client_rx, internal.1, stop_rx)));
    Ok(PartitionHandle {
        id: pid,
        client_tx,
        raft: praft.raft,
        limiter,
        received_requests,
        rejected_requests,
        store: pstore,
        applied: praft.applied,
        export_backlog: Arc::new(crate::export::Backlog::new(config.max_unexported_log_bytes)),
        queue_bytes: ByteShare::new(config.command_queue_bytes),
        leading: leading_flag,
        stop_tx,
        tasks: std::sync::Mutex::new(tasks),
    })
}

/// Runs a partition's processing while this node leads it: waits for leadership, catches up
/// with everything committed before (replay), processes commands until leadership is lost,
/// and waits again.
struct Supervisor {
    pid: PartitionId,
    config: BrokerConfig,
    raft: ZestRaft,
    store: PartitionStore,
    applied: Arc<AppliedInfo>,
    limiter: Arc<Limiter>,
    leading: Arc<AtomicBool>,
    internal_tx: mpsc::Sender<Submission>,
    jobs_available: broadcast::Sender<String>,
    job_streams: Arc<Registry>,
    metrics: Arc<Metrics>,
    router: Arc<Router>,
    cluster: Arc<Cluster>,
}

/// The group's server state (vote, role, leader): it changes with leadership only, not with
/// every applied entry as the full metrics do.
type RaftMetrics = watch::Receiver<openraft::metrics::RaftServerMetrics<u64, BasicNode>>;

impl Supervisor {
    /// This node's leader id (term, node) when it leads the partition now.
    fn leads(&self, metrics: &mut RaftMetrics) -> Option<(u64, u64)> {
        let m = metrics.borrow_and_update();
        let leader = m.vote.leader_id();
        self.cluster
            .set_leader(self.pid, m.current_leader, leader.term);
        (m.current_leader == Some(self.config.node_id)
            && m.state == openraft::ServerState::Leader
            && m.vote.is_committed())
        .then_some((leader.term, leader.node_id))
    }

    /// Waits until an entry of this leadership is applied (the one a new leader appends) and
    /// with it every entry the log held when the leadership was seen; false when the
    /// leadership ends first. The second condition matters for a leader that restarted:
    /// openraft restores it as leader of its old term without a new entry, and entries it
    /// appended before the crash may be neither committed nor applied yet; processing on the
    /// state before them would give positions and keys twice.
    async fn applied_own_entry(&self, metrics: &mut RaftMetrics, leader: (u64, u64)) -> bool {
        let mut data = self.raft.data_metrics();
        let last_log = self.raft.metrics().borrow().last_log_index.unwrap_or(0);
        loop {
            let applied = data.borrow_and_update().last_applied;
            let term_and_node = applied.map(|l| (l.leader_id.term, l.leader_id.node_id));
            let index = applied.map(|l| l.index).unwrap_or(0);
            if term_and_node == Some(leader) && index >= last_log {
                return true;
            }
            if self.leads(metrics) != Some(leader) {
                return false;
            }
            tokio::select! {
                r = data.changed() => if r.is_err() { return false },
                r = metrics.changed() => if r.is_err() { return false },
            }
        }
    }

    async fn run(
        self,
        mut client_rx: mpsc::Receiver<Submission>,
        mut internal_rx: mpsc::Receiver<Submission>,
        mut stop_rx: watch::Receiver<bool>,
    ) {
        let mut metrics = self.raft.server_metrics();
        // the last time this node tried to hand a partition over to its primary
        let mut handed_over_at: Option<Instant> = None;
        loop {
            let leader = loop {
                if let Some(leader) = self.leads(&mut metrics) {
                    break leader;
                }
                // commands that raced with the end of a term were not processed
                while let Ok(s) = client_rx.try_recv() {
                    drop(s);
                }
                tokio::select! {
                    _ = stop_rx.changed() => return,
                    r = metrics.changed() => if r.is_err() { return },
                }
            };
            let started = Instant::now();
            // everything committed before this term is applied before anything is processed:
            // the entry this leader appended on election is applied
            let caught_up = tokio::select! {
                _ = stop_rx.changed() => return,
                r = tokio::time::timeout(Duration::from_secs(10), self.applied_own_entry(&mut metrics, leader)) => matches!(r, Ok(true)),
            };
            if !caught_up {
                continue;
            }
            tracing::info!(
                partition = self.pid,
                term = leader.0,
                applied_index = self.applied.last_index.load(Ordering::SeqCst),
                last_position = self.applied.last_position.load(Ordering::SeqCst),
                "leading the partition; caught up in {:?}",
                started.elapsed()
            );
            let hand_over_to = self
                .run_term(
                    leader,
                    &mut client_rx,
                    &mut internal_rx,
                    &mut metrics,
                    &mut stop_rx,
                    handed_over_at,
                )
                .await;
            if *stop_rx.borrow() {
                return;
            }
            if let Some(primary) = hand_over_to {
                handed_over_at = Some(Instant::now());
                let cluster = &self.cluster;
                if !crate::rebalance::hand_over(&self.raft, cluster, self.pid, primary).await {
                    continue;
                }
            }
            tracing::info!(
                partition = self.pid,
                term = leader.0,
                "no longer leading the partition"
            );
        }
    }

    /// Processes commands until this node stops leading (or the node stops), or until it
    /// should hand the partition over to its primary: then Some(primary), with processing
    /// stopped and the groups in flight answered. `handed_over_at`: the last attempt.
    async fn run_term(
        &self,
        leader: (u64, u64),
        client_rx: &mut mpsc::Receiver<Submission>,
        internal_rx: &mut mpsc::Receiver<Submission>,
        metrics: &mut RaftMetrics,
        stop_rx: &mut watch::Receiver<bool>,
        handed_over_at: Option<Instant>,
    ) -> Option<NodeId> {
        let (term_tx, term_rx) = watch::channel(false);
        let processor = self.processor(leader);
        let scheduler = tokio::spawn(scheduler::run(
            scheduler::Scheduler {
                pid: self.pid,
                store: self.store.clone(),
                tx: self.internal_tx.clone(),
                router: self.router.clone(),
                interval: self.config.scheduler_interval,
            },
            term_rx.clone(),
        ));
        self.leading.store(true, Ordering::Release);
        let since = Instant::now();
        let watch_leadership = async {
            let mut check = tokio::time::interval(crate::rebalance::CHECK_EVERY);
            let mut hand_over_to = None;
            loop {
                tokio::select! {
                    _ = stop_rx.changed() => break,
                    r = metrics.changed() => {
                        if r.is_err() || self.leads(metrics) != Some(leader) {
                            break;
                        }
                    }
                    _ = check.tick() => {
                        hand_over_to = self.should_hand_over(since, handed_over_at);
                        if hand_over_to.is_some() {
                            break;
                        }
                    }
                }
            }
            self.leading.store(false, Ordering::Release);
            let _ = term_tx.send(true);
            hand_over_to
        };
        let (_, hand_over_to) = tokio::join!(
            processor.run(client_rx, internal_rx, term_rx),
            watch_leadership
        );
        let _ = scheduler.await;
        // batches this term wrote that commit later are applied by the appliers
        self.applied.clear_precomputed();
        hand_over_to
    }

    /// The primary to hand the partition over to, when this node has led it long enough (and
    /// did not try within that time).
    fn should_hand_over(&self, since: Instant, handed_over_at: Option<Instant>) -> Option<NodeId> {
        let wait = crate::rebalance::HAND_OVER_AFTER;
        if since.elapsed() < wait || handed_over_at.is_some_and(|t| t.elapsed() < wait) {
            return None;
        }
        crate::rebalance::primary_to_hand_over_to(
            &self.raft,
            &self.cluster,
            self.pid,
            self.config.node_id,
        )
    }

    /// The group has one voter, this node (which leads it): it commits what its log holds.
    /// Groups are formed with their voters and never change them.
    fn single_voter(&self) -> bool {
        let metrics = self.raft.metrics();
        let metrics = metrics.borrow();
        let mut voters = metrics.membership_config.membership().voter_ids();
        voters.next() == Some(self.config.node_id) && voters.next().is_none()
    }

    fn processor(&self, leader: (u64, u64)) -> Processor {
        let streams = Arc::new(PartitionStreams::new(self.job_streams.clone()));
        Processor {
            pid: self.pid,
            leader,
            limiter: self.limiter.clone(),
            raft: self.raft.clone(),
            store: self.store.clone(),
            applied: self.applied.clone(),
            engine: Engine::new(self.pid)
                .with_partition_count(self.config.partitions)
                .with_model_cache(self.config.model_cache)
                .with_collection_cache(self.config.collection_cache_bytes())
                .with_job_streams(streams.clone()),
            streams,
            jobs_available: self.jobs_available.clone(),
            metrics: self.metrics.clone(),
            // identifies this term's requests: answers to requests of an earlier term are not
            // delivered to anyone
            stream_id: (crate::clock::wall_millis() & 0x7fff_ffff) as i32,
            max_group: self.config.max_group,
            pipeline_depth: self.config.pipeline_depth.max(1),
            pipeline_bytes: self.config.pipeline_bytes,
            in_flight_bytes: 0,
            pending: HashMap::new(),
            next_request_id: 1,
            speculative: Speculative::new(),
            kept_reads: BaseReads::default(),
            in_flight: VecDeque::new(),
            answered: 0,
            flushed: self
                .single_voter()
                .then(|| self.applied.flushed.subscribe()),
            next_seq: 0,
            records_hint: 0,
            lifetimes: Lifetimes::default(),
            next_position: self.applied.last_position.load(Ordering::SeqCst) + 1,
            router: self.router.clone(),
            outbox: VecDeque::new(),
            carried: VecDeque::new(),
        }
    }
}

/// A processed group waiting for its log entry to commit and be applied.
struct InFlight {
    seq: u64,
    /// None when the group wrote nothing; it is answered once the groups before it are.
    commit: Option<Commit>,
    waiting: Vec<(i64, oneshot::Sender<Record>, bool)>,
    responses: Vec<zest_engine::Response>,
    /// What it holds until applied ([`group_bytes`]).
    bytes: usize,
    effects: Vec<SideEffect>,
    /// Places reserved in job streams for the jobs this group pushes, by job key.
    pushes: Vec<(i64, Place)>,
    /// Backpressure permits of the group's commands, released when it is answered.
    permits: Vec<Permit>,
    /// When each command of the group arrived.
    received: Vec<Instant>,
    appended: Instant,
}

use zest_cluster::CommitReceiver;

/// A group's log entry on its way to being committed and applied.
struct Commit {
    rx: CommitReceiver,
    /// The position of the entry's last record.
    last_position: u64,
}

struct Processor {
    pid: PartitionId,
    /// The term and node of this leadership: the state machine takes the writes computed here
    /// only for batches this leader wrote.
    leader: (u64, u64),
    limiter: Arc<Limiter>,
    raft: ZestRaft,
    store: PartitionStore,
    applied: Arc<AppliedInfo>,
    engine: Engine,
    /// The engine's view of the node's job streams (job push).
    streams: Arc<PartitionStreams>,
    jobs_available: broadcast::Sender<String>,
    metrics: Arc<Metrics>,
    stream_id: i32,
    max_group: usize,
    /// Most groups processed but not yet committed.
    pipeline_depth: usize,
    /// Most bytes those groups hold (but one group always goes ahead), and what they hold.
    pipeline_bytes: usize,
    in_flight_bytes: usize,
    /// Requests answered later than their own group (create-with-result).
    pending: HashMap<i64, oneshot::Sender<Record>>,
    next_request_id: i64,
    /// Writes of the groups in `in_flight`, read by the processing of the next groups.
    speculative: Speculative,
    /// What the groups read from committed state with `speculative` over it, kept for the
    /// next groups (bounded; see `BaseReads`): nothing but the groups' own writes changes
    /// that view while this node leads, and each group's writes are dropped from it. A
    /// group's transaction read the same element instances, variable documents and process
    /// again from the store, through fjall's memtables, each time.
    kept_reads: BaseReads,
    in_flight: VecDeque<InFlight>,
    /// How many groups at the front of `in_flight` are answered: their commands were answered
    /// and their side effects published when their entry committed, or, in a group of one
    /// voter, when the log held it durably. Groups are answered in order, so they are always
    /// a prefix; they stay in flight until applied, for their speculative writes.
    answered: usize,
    /// In a group of one voter (this node, whose log alone decides), what the log holds durably
    /// (`AppliedInfo::flushed`): a batch there is committed, and its commands are answered
    /// without waiting for openraft's core to hear of the flush, commit it and have it
    /// applied (three hand-overs between tasks, each a wait for a busy runtime thread).
    flushed: Option<watch::Receiver<zest_cluster::Flushed>>,
    next_seq: u64,
    /// Records of the last group (bounded): the next group's buffer starts this large, as
    /// growing a vector of records copies them all at every doubling.
    records_hint: usize,
    lifetimes: Lifetimes,
    /// Position of the next record to write (ahead of the applied position while groups are in
    /// flight).
    next_position: u64,
    /// Where the commands for other partitions go.
    router: Arc<Router>,
    /// Commands for other partitions whose queues were full, in the order sent.
    outbox: VecDeque<(PartitionId, Record)>,
    /// Commands taken from the queues but left out of a group that wrote [`GROUP_RECORDS`],
    /// or whose records and answers hold `pipeline_bytes`: they lead the next group (at most
    /// one group's worth, `max_group`).
    carried: VecDeque<Submission>,
}

/// The outcome of a group's commit: the receiver's error (the consensus task went away) or the
/// write's own error, as text.
fn commit_outcome<T, E: std::fmt::Display, R: std::fmt::Display>(
    received: Result<Result<T, E>, R>,
) -> Result<(), String> {
    received
        .map_err(|e| e.to_string())
        .and_then(|r| r.map(|_| ()).map_err(|e| e.to_string()))
}

impl Processor {
    async fn run(
        mut self,
        client_rx: &mut mpsc::Receiver<Submission>,
        internal_rx: &mut mpsc::Receiver<Submission>,
        mut stop_rx: watch::Receiver<bool>,
    ) {
        let pid_label = self.pid.to_string();
        loop {
            self.retire_applied(&pid_label);
            let can_process = may_process_more(
                (self.in_flight.len(), self.in_flight_bytes),
                (self.pipeline_depth, self.pipeline_bytes),
            );
            // The oldest group's apply is waited for when it is not answered yet, or when the
            // pipeline is full. An answered group is otherwise retired when the loop wakes for
            // something else: a wake-up for it alone would be a second one per group.
            let oldest_commits = self
                .in_flight
                .front()
                .is_some_and(|f| f.commit.is_some() && (self.answered == 0 || !can_process));
            // (`answer_ready` leaves no read-only group first among the unanswered ones)
            let awaits_flush = self.flushed.is_some() && self.answered < self.in_flight.len();
            let carried = if can_process && !*stop_rx.borrow() {
                self.carried.pop_front()
            } else {
                None
            };
            let first = if let Some(first) = carried {
                first
            } else {
                tokio::select! {
                    biased;
                    _ = stop_rx.changed() => break,
                    // the oldest group committed: answer it (and the read-only groups behind it)
                    result = async {
                        match self.in_flight.front_mut().and_then(|f| f.commit.as_mut()) {
                            Some(c) => (&mut c.rx).await,
                            None => std::future::pending().await,
                        }
                    }, if oldest_commits => {
                        self.finish_oldest(commit_outcome(result), &pid_label);
                        continue;
                    }
                    // the log holds more: answer what it holds
                    _ = async {
                        match self.flushed.as_mut() {
                            Some(rx) => rx.changed().await,
                            None => std::future::pending().await,
                        }
                    }, if awaits_flush => {
                        self.answer_ready(&pid_label);
                        continue;
                    }
                    Some(s) = internal_rx.recv(), if can_process => s,
                    Some(s) = client_rx.recv(), if can_process && self.outbox.len() < OUTBOX_LIMIT => s,
                    // another partition's queue was full: try again shortly
                    _ = tokio::time::sleep(Duration::from_millis(2)), if !self.outbox.is_empty() => {
                        self.flush_outbox();
                        continue;
                    }
                    // queues closed: the groups in flight are answered below
                    else => break,
                }
            };
            // Internal commands first (they free work: timeouts, timers), then clients, up to
            // `max_group` commands and GROUP_BYTES of their documents: a group is one log
            // entry, replicated whole in one message
            let mut bytes = command_bytes(&first);
            let mut group = vec![first];
            while group.len() < self.max_group && bytes < GROUP_BYTES {
                match self.carried.pop_front() {
                    Some(s) => {
                        bytes += command_bytes(&s);
                        group.push(s);
                    }
                    None => break,
                }
            }
            for rx in [&mut *internal_rx, &mut *client_rx] {
                while group.len() < self.max_group && bytes < GROUP_BYTES {
                    match rx.try_recv() {
                        Ok(s) => {
                            bytes += command_bytes(&s);
                            group.push(s);
                        }
                        Err(_) => break,
                    }
                }
            }
            self.metrics
                .queued_commands
                .with_label_values(&[&pid_label])
                .set(client_rx.len() as i64);
            self.process_group(group, &pid_label).await;
            // read-only groups behind answered ones need no commit
            self.answer_ready(&pid_label);
        }
        // Let the groups in flight commit and answer them (a deposed leader's may never
        // commit here: they are failed after a while, and their clients may retry).
        while let Some(front) = self.in_flight.front_mut() {
            let result = match front.commit.as_mut() {
                Some(c) => match tokio::time::timeout(Duration::from_secs(5), &mut c.rx).await {
                    Ok(r) => commit_outcome(r),
                    Err(_) => Err("this node stopped leading the partition".to_string()),
                },
                None => Ok(()),
            };
            self.finish_oldest(result, &pid_label);
        }
        // Fail what is still queued: those commands were never processed.
        self.carried.clear();
        while let Ok(s) = client_rx.try_recv() {
            drop(s);
        }
    }

    async fn process_group(&mut self, group: Vec<Submission>, pid_label: &str) {
        let started = Instant::now();
        let first_position = self.next_position;
        let mut next_position = self.next_position;
        let mut records: Vec<Record> = Vec::with_capacity(self.records_hint);
        let mut responses = Vec::new();
        let mut effects = Vec::new();
        let mut pushes = Vec::new();
        let mut waiting = Vec::new();
        let mut permits = Vec::new();
        let mut received = Vec::with_capacity(group.len());
        // what the group's records and answers hold (their documents, as `record_bytes`)
        let mut held = 0;
        let writes = {
            let base = Layered {
                top: &self.speculative,
                base: &self.store,
            };
            let mut txn = Txn::with_reads(&base, std::mem::take(&mut self.kept_reads));
            let mut group = group.into_iter();
            while let Some(sub) = group.next() {
                // out of the queue: its bytes are the group's now, bounded by `max_group`
                drop(sub.queue_bytes);
                permits.extend(sub.permit);
                received.push(sub.received);
                let mut record = sub.record;
                match sub.reply {
                    Some(reply) => {
                        record.request_id = self.next_request_id;
                        record.request_stream_id = self.stream_id;
                        self.next_request_id += 1;
                        let answered_later = answered_later(&record);
                        waiting.push((record.request_id, reply, answered_later));
                    }
                    None => {
                        record.request_id = -1;
                        record.request_stream_id = -1;
                    }
                }
                let before = next_position;
                let (written, answered) = (records.len(), responses.len());
                let result = self.engine.process_into(
                    &mut txn,
                    record,
                    now_millis(),
                    &mut next_position,
                    &mut records,
                );
                if zest_engine::is_read_only(&records[written..]) {
                    records.truncate(written);
                    next_position = before; // nothing is written for it
                }
                responses.extend(result.responses);
                // places reserved for pushes of a rolled-back batch are freed here
                for (job_key, permit) in self.streams.take() {
                    let kept = result.side_effects.iter().any(
                        |e| matches!(e, SideEffect::PushJob { job_key: k, .. } if *k == job_key),
                    );
                    if kept {
                        pushes.push((job_key, permit));
                    }
                }
                effects.extend(result.side_effects);
                held += output_bytes(&records[written..], &responses[answered..]);
                if records.len() >= GROUP_RECORDS || held >= self.pipeline_bytes {
                    // the rest lead the next group, in their order
                    for (i, sub) in group.by_ref().enumerate() {
                        self.carried.insert(i, sub);
                    }
                }
            }
            let (writes, mut reads) = txn.into_parts();
            reads.forget(&writes);
            self.kept_reads = reads;
            writes
        };
        // activations and what they left waiting, for the job backlog gate
        let activated: Vec<String> = if self.limiter.gates_job_backlog() {
            responses
                .iter()
                .filter_map(|r| match (&r.record.value, r.record.intent) {
                    (RecordValue::JobBatch(b), Intent::Activated) => Some(b.job_type.clone()),
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        self.metrics
            .processing_latency
            .with_label_values(&[pid_label])
            .observe(started.elapsed().as_secs_f64());
        self.metrics
            .group_size
            .with_label_values(&[pid_label])
            .observe(received.len() as f64);
        self.metrics
            .group_records
            .with_label_values(&[pid_label])
            .observe(records.len() as f64);
        self.records_hint = records.len().min(4096);
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut commit = None;
        if !records.is_empty() {
            self.count_records(&records, pid_label);
            self.lifetimes.observe(&self.metrics, pid_label, &records);
        }
        self.feed_job_backlog_gate(&activated, &effects);
        let bytes = group_bytes(held, &writes);
        if !records.is_empty() {
            // The state machine commits these writes instead of applying the records again;
            // the next groups read them until then.
            for (k, v) in &writes.0 {
                self.speculative.insert(k.clone(), (v.clone(), seq));
            }
            self.applied
                .put_precomputed(self.leader, first_position, writes);
            // the entry is held until applied (and counted by its capacity): a buffer that
            // grew by doubling can be twice as large as its records
            if records.capacity() > records.len() + records.len() / 8 {
                records.shrink_to_fit();
            }
            match self.raft.client_write_ff(RecordBatch::new(records)).await {
                Ok(rx) => {
                    commit = Some(Commit {
                        rx,
                        last_position: next_position - 1,
                    })
                }
                Err(e) => {
                    for p in permits {
                        p.cancel();
                    }
                    self.fail_in_flight(&format!("{e}"));
                    return; // dropping `waiting` fails the requests
                }
            }
            self.next_position = next_position;
        }
        self.in_flight.push_back(InFlight {
            seq,
            commit,
            waiting,
            responses,
            bytes,
            effects,
            pushes,
            permits,
            received,
            appended: Instant::now(),
        });
        self.in_flight_bytes += bytes;
        self.report_limiter(pid_label);
    }

    /// The limiter's current limit and commands in flight, as gauges.
    fn report_limiter(&self, pid_label: &str) {
        let (limit, in_flight) = self.limiter.snapshot();
        self.metrics
            .backpressure_limit
            .with_label_values(&[pid_label])
            .set(limit as i64);
        self.metrics
            .backpressure_inflight
            .with_label_values(&[pid_label])
            .set(in_flight as i64);
    }

    /// Tells the job backlog gate, for each job type activated in the group, how long the
    /// oldest job its activation left in line had waited, or that it left none.
    fn feed_job_backlog_gate(&self, activated: &[String], effects: &[SideEffect]) {
        if activated.is_empty() {
            return;
        }
        let now = now_millis();
        for job_type in activated {
            let left = effects.iter().find_map(|e| match e {
                SideEffect::JobsLeftWaiting {
                    job_type: t,
                    next_job_key,
                } if t == job_type => Some(*next_job_key),
                _ => None,
            });
            let Some(key) = left else {
                self.limiter.on_jobs_drained(job_type);
                continue;
            };
            // a job that is not tracked is older than every tracked one (the bounded map
            // forgot it), or from before this node started: it waited long
            let waited = match self.lifetimes.job_created_at(key) {
                Some(created) => Duration::from_millis((now - created).max(0) as u64),
                None => Duration::MAX,
            };
            self.limiter.on_jobs_left_waiting(job_type, waited);
        }
    }

    fn count_records(&self, records: &[Record], pid_label: &str) {
        // count per kind first: one metric update per kind, not per record
        let mut counts: HashMap<(RecordType, ValueType, Intent), u64> = HashMap::new();
        for r in records {
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
    }

    /// Answers, in order, the groups behind those answered that need no commit or whose entry
    /// the log holds durably in a group of one voter; retires the answered read-only groups
    /// at the front.
    fn answer_ready(&mut self, pid_label: &str) {
        let durable = self
            .flushed
            .as_mut()
            .map(|rx| *rx.borrow_and_update())
            .filter(|f| f.leader == self.leader)
            .map_or(0, |f| f.position);
        while let Some(group) = self.in_flight.get(self.answered) {
            if group
                .commit
                .as_ref()
                .is_some_and(|c| c.last_position > durable)
            {
                break;
            }
            self.answer_next(pid_label);
        }
        while self.answered > 0 && self.in_flight.front().is_some_and(|f| f.commit.is_none()) {
            self.retire_oldest();
        }
    }

    /// Retires the answered groups at the front that are applied by now.
    fn retire_applied(&mut self, pid_label: &str) {
        while self.answered > 0 {
            let Some(c) = self.in_flight.front_mut().and_then(|f| f.commit.as_mut()) else {
                return;
            };
            match c.rx.try_recv() {
                Err(tokio::sync::oneshot::error::TryRecvError::Empty) => return,
                result => self.finish_oldest(commit_outcome(result), pid_label),
            }
        }
    }

    /// The oldest group in flight committed and was applied (or failed): answer it if it was
    /// not yet, and drop its speculative writes.
    fn finish_oldest(&mut self, result: Result<(), String>, pid_label: &str) {
        if self.in_flight.is_empty() {
            return;
        }
        if let Err(e) = result {
            // An answered group's entry is durable in a group of one voter: such a commit
            // fails only when openraft stopped (the node stops or its storage failed), and
            // its groups are applied from the log when it starts again.
            tracing::error!(
                partition = self.pid,
                answered = self.answered > 0,
                "could not commit a batch: {e}; its commands and those after it are failed"
            );
            self.fail_in_flight(&e);
            return;
        }
        if self.answered == 0 {
            self.answer_next(pid_label);
        }
        self.retire_oldest();
        self.answer_ready(pid_label);
    }

    /// The oldest group, answered, is applied (or wrote nothing): the state machine's store
    /// holds its writes now.
    fn retire_oldest(&mut self) {
        let Some(done) = self.in_flight.pop_front() else {
            return;
        };
        self.answered = self.answered.saturating_sub(1);
        self.in_flight_bytes -= done.bytes;
        if done.commit.is_some() {
            let seq = done.seq;
            self.speculative.retain(|_, (_, s)| *s != seq);
        }
        // abandoned waits (the client gave up) are released
        if self.pending.len() > 1024 || self.in_flight.is_empty() {
            self.pending.retain(|_, reply| !reply.is_closed());
        }
    }

    /// Answers the requests of the first group not answered (groups are answered in order)
    /// and publishes its side effects.
    fn answer_next(&mut self, pid_label: &str) {
        let Some(group) = self.in_flight.get_mut(self.answered) else {
            return;
        };
        self.answered += 1;
        if let Some(commit) = &group.commit {
            // answered once committed: from its append to here is the commit's latency
            self.metrics
                .commit_latency
                .with_label_values(&[pid_label])
                .observe(group.appended.elapsed().as_secs_f64());
            // reads of this node's state wait until it is applied
            self.applied
                .answered_position
                .fetch_max(commit.last_position, Ordering::SeqCst);
        }
        let received = std::mem::take(&mut group.received);
        let permits = std::mem::take(&mut group.permits);
        let responses = std::mem::take(&mut group.responses);
        let waiting = std::mem::take(&mut group.waiting);
        let pushes = std::mem::take(&mut group.pushes);
        let effects = std::mem::take(&mut group.effects);
        let latency = self.metrics.command_latency.with_label_values(&[pid_label]);
        for at in &received {
            latency.observe(at.elapsed().as_secs_f64());
        }
        // the group's commands are done: their permits go back to the limiter
        drop(permits);
        self.report_limiter(pid_label);
        self.deliver_answers(responses, waiting);
        self.publish_effects(effects, pushes);
    }

    /// Hands each request of a group its answer (create-with-result: kept for later).
    fn deliver_answers(
        &mut self,
        responses: Vec<zest_engine::Response>,
        waiting: Vec<(i64, oneshot::Sender<Record>, bool)>,
    ) {
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
    }

    /// A group's side effects, in their order: jobs pushed (into the places reserved for
    /// them, unless a batch was rolled back in between), job notifications, commands for other
    /// partitions.
    fn publish_effects(&mut self, effects: Vec<SideEffect>, pushes: Vec<(i64, Place)>) {
        let mut pushes: VecDeque<_> = pushes.into();
        for e in effects {
            match e {
                SideEffect::PushJob { job_key, job } => {
                    let place = pushes
                        .iter()
                        .position(|(k, _)| *k == job_key)
                        .and_then(|i| pushes.remove(i));
                    match place {
                        Some((_, permit)) => {
                            permit.send(PushedJob {
                                key: job_key,
                                job: *job,
                            });
                        }
                        None => tracing::error!(
                            partition = self.pid,
                            job = job_key,
                            "a pushed job has no place reserved in a stream; it is activated until its deadline"
                        ),
                    }
                }
                SideEffect::JobsAvailable(job_type) => {
                    let _ = self.jobs_available.send(job_type);
                }
                // read while processing (feed_job_backlog_gate)
                SideEffect::JobsLeftWaiting { .. } => {}
                SideEffect::SendCommand(partition, record) => {
                    self.outbox.push_back((partition, *record));
                }
            }
        }
        self.flush_outbox();
    }

    /// Hands the commands for other partitions to their queues, in order; those for a
    /// partition whose queue is full stay, with all that follow for it (the order of the
    /// commands between two partitions matters: a subscription's open before its close).
    fn flush_outbox(&mut self) {
        if self.outbox.is_empty() {
            return;
        }
        let mut blocked: Vec<PartitionId> = Vec::new();
        let mut kept = VecDeque::new();
        for (partition, record) in self.outbox.drain(..) {
            if blocked.contains(&partition) {
                kept.push_back((partition, record));
                continue;
            }
            match self.router.send(partition, record) {
                Sent::Yes => {}
                Sent::Full(record) => {
                    blocked.push(partition);
                    kept.push_back((partition, *record));
                }
                // no leader to take it now (or the node is stopping): pending distributions
                // and subscription commands are in state and sent again
                Sent::Dropped => tracing::debug!(
                    partition = self.pid,
                    target = partition,
                    "a command for another partition found no leader; it is sent again later"
                ),
            }
        }
        self.outbox = kept;
    }

    /// A commit failed: nothing processed after the last committed group holds. Fail every
    /// group in flight and start again from committed state.
    fn fail_in_flight(&mut self, reason: &str) {
        tracing::error!(
            partition = self.pid,
            groups = self.in_flight.len(),
            "failing uncommitted groups: {reason}"
        );
        // dropping the reply senders fails the requests
        for f in self.in_flight.drain(..) {
            for p in f.permits {
                p.cancel();
            }
        }
        self.answered = 0;
        self.in_flight_bytes = 0;
        self.speculative.clear();
        self.kept_reads = BaseReads::default();
        self.applied.clear_precomputed();
        // Cached models may come from uncommitted deployments.
        self.engine.reset_caches();
        self.next_position = self.applied.last_position.load(Ordering::SeqCst) + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::{group_bytes, may_process_more, output_bytes};
    use zest_engine::state::{Ks, Writes};
    use zest_protocol::{Intent, JobBatchRecord, JobRecord, RecordValue};

    /// Groups ahead of their commit are bounded by count and by bytes, and one always goes.
    #[test]
    fn the_pipeline_is_bounded_by_groups_and_bytes() {
        let limits = (4, 1000);
        assert!(may_process_more((0, 0), limits));
        assert!(may_process_more((3, 999), limits));
        assert!(!may_process_more((4, 0), limits), "depth reached");
        assert!(!may_process_more((1, 1000), limits), "bytes reached");
        assert!(
            may_process_more((0, 0), (4, 0)),
            "with nothing in flight a group goes, however small the bound"
        );
    }

    /// A group counts the variables its activated jobs carry (in its records and answers) and
    /// its writes twice (read by the next groups, and committed by the state machine).
    #[test]
    fn a_group_counts_its_jobs_variables_and_its_writes_twice() {
        let job = |n: usize| JobRecord {
            variables: "x".repeat(n),
            ..Default::default()
        };
        let batch = zest_engine::new_command(
            1,
            Intent::Activated,
            RecordValue::JobBatch(JobBatchRecord {
                jobs: vec![job(10_000), job(5_000)],
                ..Default::default()
            }),
            -1,
            -1,
        );
        let answer = zest_engine::Response {
            request_id: 1,
            request_stream_id: 1,
            record: batch.clone(),
        };
        let mut writes = Writes(Default::default());
        writes
            .0
            .insert((Ks::ALL[0], vec![0; 10]), Some(vec![0; 1_000]));
        writes.0.insert((Ks::ALL[0], vec![1; 10]), None);
        let bytes = group_bytes(output_bytes(&[batch], &[answer]), &writes);
        assert_eq!(bytes, 2 * (256 + 15_000) + 2 * (10 + 1_000 + 10));
    }
}
