//! This node among the others: who they are (found from the contact points and from each
//! other), which node leads each partition, and the messages brokers send each other over the
//! internal port (status, commands forwarded to a partition's leader, commands between
//! partitions, job notifications).
//!
//! Every node asks every node it knows for its status twice a second; the answer carries the
//! node's partitions (role, term, health) and the nodes it knows, so a node given one contact
//! point finds all. Leaders of the partitions a node replicates come from its own consensus
//! groups; of the others, from these answers (the highest term wins).
//!
//! Commands between partitions and job notifications for another node wait in a bounded
//! queue per node and go in batches; a full queue refuses more (the sending partition keeps
//! them, see `partition::flush_outbox`) and a lost batch is sent again by the senders' retries
//! (command distribution, message subscriptions).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use zest_cluster::transport::{kind, ClusterToken, Peers};
use zest_protocol::{codec, PartitionId, Record};

use crate::BrokerError;

pub type NodeId = u64;

/// Frame kinds of the broker's messages.
pub(crate) mod frames {
    use super::kind;
    pub const STATUS: u32 = kind::BROKER;
    pub const SUBMIT: u32 = kind::BROKER + 1;
    pub const BATCH: u32 = kind::BROKER + 2;
    /// A leader asks its partition's primary to take over (`crate::rebalance`).
    pub const TAKE_OVER: u32 = kind::BROKER + 3;
    /// A read of a partition's committed state for the REST API (`crate::reads`).
    pub const READ: u32 = kind::BROKER + 4;
    /// A copy of a partition's history for a replica with a gap in its own
    /// (`crate::history_copy`).
    pub const HISTORY_COPY: u32 = kind::BROKER + 5;
}

#[derive(Debug, Clone)]
pub struct ClusterConfig {
    pub cluster_size: u32,
    pub replication_factor: u32,
    /// Where this node listens for the other nodes (the internal port); None: a single node
    /// without one.
    pub internal_address: Option<String>,
    /// The address the other nodes reach this one at (default: the internal address, with a
    /// wildcard host as 127.0.0.1).
    pub advertised_internal_address: Option<String>,
    /// Internal addresses of other nodes, to find the cluster by.
    pub contact_points: Vec<String>,
    /// How long a command waits for its partition to have a reachable leader.
    pub request_timeout: Duration,
    /// A standalone gateway (`zest gateway`): no partitions of its own.
    pub gateway_only: bool,
    /// What every frame on the internal port carries, from the cluster secret (required when
    /// there is an internal port: a process without it cannot talk to the cluster).
    pub token: Option<ClusterToken>,
    /// TLS on the internal port, to it and from it (all nodes or none).
    pub tls: Option<zest_cluster::tls::InternalTls>,
}

impl ClusterConfig {
    /// How this node calls the others: over TLS when the internal port has it.
    pub fn peer_tls(&self) -> Option<tonic::transport::ClientTlsConfig> {
        self.tls.as_ref().map(|t| t.client())
    }

    /// The token this node presents and admits (a node without an internal port has no
    /// peers: any will do).
    pub fn token(&self) -> ClusterToken {
        self.token
            .clone()
            .unwrap_or_else(|| ClusterToken::from_secret(""))
    }
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            cluster_size: 1,
            replication_factor: 1,
            internal_address: None,
            advertised_internal_address: None,
            contact_points: Vec::new(),
            request_timeout: Duration::from_secs(15),
            gateway_only: false,
            token: None,
            tls: None,
        }
    }
}

/// A partition as a node reports it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionStatus {
    pub partition_id: PartitionId,
    pub leader: bool,
    pub term: u64,
    pub healthy: bool,
    pub processed_position: u64,
    /// While this replica's exporter holds more unexported log than `--max-unexported-log-mb`
    /// allows: the bytes held and the bound (`export::Backlog::refusal`). The leader refuses
    /// new instances while any live replica reports it, so the bound holds on every replica.
    pub export_backlog: Option<(u64, u64)>,
}

/// What a node tells the others about itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeStatus {
    pub node_id: NodeId,
    pub internal_address: String,
    /// The gateway's address (gRPC), as the topology shows it.
    pub command_address: String,
    pub version: String,
    pub partitions: Vec<PartitionStatus>,
    /// The nodes this one knows, by internal address.
    pub peers: Vec<(NodeId, String)>,
    /// The cluster's shape, as this node was started with it (a standalone gateway learns it
    /// from the brokers).
    pub partitions_count: u32,
    pub cluster_size: u32,
    pub replication_factor: u32,
    /// A standalone gateway: no partitions, not a broker of the topology; brokers send it job
    /// notifications.
    pub gateway: bool,
}

/// A message for another node's partitions or gateway.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Outgoing {
    Command(PartitionId, Box<Record>),
    JobsAvailable(String),
}

/// The answer to a forwarded command.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum SubmitAnswer {
    Done(Box<Record>),
    Backpressure,
    JobBacklog,
    ExportBacklog {
        held_mib: u64,
        max_mib: u64,
    },
    Unavailable(String),
    /// This node does not lead the partition (any more): ask its leader.
    NotLeader,
    NoSuchPartition,
}

impl From<Result<Record, BrokerError>> for SubmitAnswer {
    fn from(result: Result<Record, BrokerError>) -> Self {
        match result {
            Ok(r) => SubmitAnswer::Done(Box::new(r)),
            // a forwarded command is not counted in the leader's call share (its gateway's
            // node counts it): should it be, it is backpressure to the asking node
            Err(
                BrokerError::Backpressure(_)
                | BrokerError::NodeBusy(_)
                | BrokerError::MemoryFull { .. },
            ) => SubmitAnswer::Backpressure,
            Err(BrokerError::JobBacklog(_)) => SubmitAnswer::JobBacklog,
            Err(BrokerError::ExportBacklog {
                held_mib, max_mib, ..
            }) => SubmitAnswer::ExportBacklog { held_mib, max_mib },
            Err(BrokerError::Unavailable(_, reason)) => SubmitAnswer::Unavailable(reason),
            Err(BrokerError::NoSuchPartition(_)) => SubmitAnswer::NoSuchPartition,
        }
    }
}

impl SubmitAnswer {
    /// The answer as the submitter's result; None when the node asked does not lead the
    /// partition (asking its leader is safe).
    pub fn into_result(self, partition: PartitionId) -> Option<Result<Record, BrokerError>> {
        Some(match self {
            SubmitAnswer::Done(record) => Ok(*record),
            SubmitAnswer::Backpressure => Err(BrokerError::Backpressure(partition)),
            SubmitAnswer::JobBacklog => Err(BrokerError::JobBacklog(partition)),
            SubmitAnswer::ExportBacklog { held_mib, max_mib } => Err(BrokerError::ExportBacklog {
                partition,
                held_mib,
                max_mib,
            }),
            SubmitAnswer::Unavailable(reason) => Err(BrokerError::Unavailable(partition, reason)),
            SubmitAnswer::NoSuchPartition => Err(BrokerError::NoSuchPartition(partition)),
            SubmitAnswer::NotLeader => return None,
        })
    }
}

/// Most messages waiting for one node.
const OUTGOING_QUEUE: usize = 4096;
/// Most messages in one batch.
const BATCH_MAX: usize = 256;
/// A node not heard from for this long is not in the topology.
const NODE_TIMEOUT: Duration = Duration::from_secs(3);
/// How often nodes ask each other for their status.
const STATUS_INTERVAL: Duration = Duration::from_millis(500);

#[derive(Clone, Copy, Default)]
struct Leader {
    node: Option<NodeId>,
    term: u64,
}

pub(crate) struct Cluster {
    pub node_id: NodeId,
    pub config: ClusterConfig,
    pub partitions: u32,
    pub peers: Arc<Peers>,
    /// This node's internal address as the others reach it ("" without an internal port).
    pub internal_address: String,
    leaders: RwLock<Vec<Leader>>,
    /// Partitions this node replicates (their leaders come from consensus, not from answers).
    members_of: Vec<PartitionId>,
    nodes: RwLock<BTreeMap<NodeId, (NodeStatus, Instant)>>,
    outgoing: Mutex<HashMap<NodeId, mpsc::Sender<Outgoing>>>,
}

impl Cluster {
    pub fn new(
        node_id: NodeId,
        config: ClusterConfig,
        partitions: u32,
        internal_address: String,
    ) -> Cluster {
        let members_of = (1..=partitions)
            .filter(|&p| !config.gateway_only && replicas(node_id, &config, p).contains(&node_id))
            .collect();
        let peers = Arc::new(Peers::new(config.token()).with_tls(config.peer_tls()));
        if !internal_address.is_empty() {
            peers.set_address(node_id, &internal_address);
        }
        Cluster {
            node_id,
            config,
            partitions,
            peers,
            internal_address,
            leaders: RwLock::new(vec![Leader::default(); partitions as usize]),
            members_of,
            nodes: RwLock::new(BTreeMap::new()),
            outgoing: Mutex::new(HashMap::new()),
        }
    }

    /// The nodes that replicate `partition`, primary first (a single node replicates all).
    pub fn replicas(&self, partition: PartitionId) -> Vec<NodeId> {
        replicas(self.node_id, &self.config, partition)
    }

    /// The partitions this node replicates.
    pub fn local_partitions(&self) -> &[PartitionId] {
        &self.members_of
    }

    pub fn is_multi_node(&self) -> bool {
        self.config.cluster_size > 1 || self.config.internal_address.is_some()
    }

    /// The node leading `partition`, as far as this node knows.
    pub fn leader(&self, partition: PartitionId) -> Option<NodeId> {
        self.leaders
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get((partition as usize).wrapping_sub(1))
            .and_then(|l| l.node)
    }

    /// What this node's consensus group says about a partition it replicates.
    pub fn set_leader(&self, partition: PartitionId, node: Option<NodeId>, term: u64) {
        let mut leaders = self.leaders.write().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = leaders.get_mut((partition as usize).wrapping_sub(1)) {
            *l = Leader { node, term };
        }
    }

    /// What another node says it leads, for the partitions this node does not replicate.
    fn heard_leader(&self, partition: PartitionId, node: NodeId, term: u64) {
        if self.members_of.contains(&partition) {
            return;
        }
        let mut leaders = self.leaders.write().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = leaders.get_mut((partition as usize).wrapping_sub(1)) {
            if term >= l.term {
                *l = Leader {
                    node: Some(node),
                    term,
                };
            }
        }
    }

    /// A node went quiet: the partitions it led (as heard) have no known leader.
    fn forget_leader(&self, node: NodeId) {
        let mut leaders = self.leaders.write().unwrap_or_else(|e| e.into_inner());
        for (i, l) in leaders.iter_mut().enumerate() {
            if l.node == Some(node) && !self.members_of.contains(&(i as u32 + 1)) {
                l.node = None;
            }
        }
    }

    /// The brokers heard from lately (standalone gateways left out), by node id.
    pub fn live_brokers(&self) -> Vec<NodeStatus> {
        let mut nodes = self.live_nodes();
        nodes.retain(|n| !n.gateway);
        nodes
    }

    /// The other nodes heard from lately (standalone gateways included), by node id.
    pub fn live_nodes(&self) -> Vec<NodeStatus> {
        self.nodes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|(_, seen)| seen.elapsed() < NODE_TIMEOUT)
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// The unexported log (bytes held, bound) of another live replica of `partition` whose
    /// exporter is past its bound, as its last status said; the most held if several are.
    pub fn replica_export_backlog(&self, partition: PartitionId) -> Option<(u64, u64)> {
        self.nodes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|(_, seen)| seen.elapsed() < NODE_TIMEOUT)
            .flat_map(|(s, _)| &s.partitions)
            .filter(|p| p.partition_id == partition)
            .filter_map(|p| p.export_backlog)
            .max()
    }

    /// Takes in a node's status (its answer, or its question).
    pub fn heard(&self, status: NodeStatus) {
        if status.node_id == self.node_id {
            return;
        }
        self.peers
            .set_address(status.node_id, &status.internal_address);
        for (node, address) in &status.peers {
            if *node != self.node_id && self.peers.address(*node).is_none() && !status.gateway {
                self.peers.set_address(*node, address);
            }
        }
        for p in &status.partitions {
            if p.leader {
                self.heard_leader(p.partition_id, status.node_id, p.term);
            }
        }
        self.nodes
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(status.node_id, (status, Instant::now()));
    }

    /// The nodes not heard from for `time`.
    fn silent_for(&self, time: Duration) -> Vec<NodeId> {
        self.nodes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, (_, seen))| seen.elapsed() >= time)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Forgets a node not heard from for long, with its queue (whose delivery task then ends).
    /// Consensus still reaches a forgotten broker at its address in the groups' membership,
    /// and it is known again as soon as it is heard from.
    fn forget(&self, node: NodeId) {
        self.nodes
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&node);
        self.outgoing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&node);
        self.peers.forget(node);
    }

    /// Queues a message for `node`; gives it back when its queue is full.
    pub fn send(&self, node: NodeId, message: Outgoing) -> Result<(), Outgoing> {
        let tx = {
            let mut outgoing = self.outgoing.lock().unwrap_or_else(|e| e.into_inner());
            outgoing
                .entry(node)
                .or_insert_with(|| {
                    let (tx, rx) = mpsc::channel(OUTGOING_QUEUE);
                    tokio::spawn(deliver(node, self.peers.clone(), rx));
                    tx
                })
                .clone()
        };
        tx.try_send(message).map_err(|e| match e {
            mpsc::error::TrySendError::Full(m) | mpsc::error::TrySendError::Closed(m) => m,
        })
    }

    /// The internal addresses to ask for status: the contact points and every known node.
    fn addresses_to_ask(&self) -> Vec<String> {
        let mut all: Vec<String> = self.config.contact_points.clone();
        for (node, address) in self.peers.known() {
            if node != self.node_id && !all.contains(&address) {
                all.push(address);
            }
        }
        all.retain(|a| *a != self.internal_address);
        all
    }
}

fn replicas(node_id: NodeId, config: &ClusterConfig, partition: PartitionId) -> Vec<NodeId> {
    if config.cluster_size <= 1 {
        vec![node_id]
    } else {
        zest_cluster::placement(partition, config.cluster_size, config.replication_factor)
    }
}

/// Sends a node's queued messages in batches, one batch at a time; a batch that fails is
/// dropped (its senders send again what matters).
async fn deliver(node: NodeId, peers: Arc<Peers>, mut rx: mpsc::Receiver<Outgoing>) {
    let mut batch = Vec::with_capacity(BATCH_MAX);
    while rx.recv_many(&mut batch, BATCH_MAX).await > 0 {
        let Some(address) = peers.address(node) else {
            batch.clear();
            continue;
        };
        let body = codec::encode(&batch);
        batch.clear();
        if let Err(status) = peers
            .call(&address, frames::BATCH, 0, body, Duration::from_secs(5))
            .await
        {
            tracing::debug!(node, %status, "a batch of messages for another node was lost");
        }
    }
}

/// Asks every known node for its status, forever; `own` tells this node's.
pub(crate) async fn exchange_status(
    cluster: Arc<Cluster>,
    own: impl Fn() -> NodeStatus + Send + 'static,
) {
    let mut tick = tokio::time::interval(STATUS_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let body = codec::encode(&own());
        let asks = cluster.addresses_to_ask().into_iter().map(|address| {
            let cluster = cluster.clone();
            let body = body.clone();
            async move {
                let answer = cluster
                    .peers
                    .call(&address, frames::STATUS, 0, body, STATUS_INTERVAL * 2)
                    .await;
                if let Ok(bytes) = answer {
                    match codec::decode::<NodeStatus>(&bytes) {
                        Ok(status) => cluster.heard(status),
                        Err(e) => tracing::warn!(%address, "an unreadable node status: {e}"),
                    }
                }
            }
        });
        futures::future::join_all(asks).await;
        for node in cluster.silent_for(NODE_TIMEOUT) {
            cluster.forget_leader(node);
        }
        // a node gone for long (a gateway restarts with a new id) is forgotten, with its
        // address, channel and queue
        for node in cluster.silent_for(NODE_TIMEOUT * 20) {
            cluster.forget(node);
        }
    }
}

/// What a standalone gateway learns before it starts: the cluster's shape, from the first
/// broker among the contact points that answers.
pub(crate) async fn discover_shape(config: &ClusterConfig) -> NodeStatus {
    let contact_points = &config.contact_points;
    let peers = Peers::new(config.token()).with_tls(config.peer_tls());
    let started = Instant::now();
    let mut told = started;
    loop {
        for address in contact_points {
            let answer = peers
                .call(address, frames::STATUS, 0, Vec::new(), STATUS_INTERVAL * 2)
                .await;
            if let Some(status) = answer
                .ok()
                .and_then(|b| codec::decode::<NodeStatus>(&b).ok())
                .filter(|s| !s.gateway && s.partitions_count > 0)
            {
                return status;
            }
        }
        if told.elapsed() >= Duration::from_secs(5) {
            told = Instant::now();
            tracing::info!(
                "waiting {:?} for a broker to answer at the contact points {contact_points:?}",
                started.elapsed()
            );
        }
        tokio::time::sleep(STATUS_INTERVAL).await;
    }
}
