//! Consensus for partitions: each partition is one openraft group whose log holds batches of
//! records, and whose state machine applies their events to the partition's fjall state through
//! the engine's appliers. A single node runs one-member groups, so the replicated path is the
//! one always in use.
//!
//! Transport between nodes is the seam for the cluster issue: [`NoPeers`] is the network of a
//! one-member group (it has nobody to talk to and says so if asked).

// openraft's trait methods return `StorageError`, a large type we cannot box; our helpers that
// produce it follow the same signature.
#![allow(clippy::result_large_err)]

pub mod backup;
mod log_store;
mod state_machine;

use std::collections::BTreeMap;
use std::sync::Arc;

use openraft::error::{
    Fatal, NetworkError, RPCError, RaftError, ReplicationClosed, StreamingError,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::storage::Snapshot;
use openraft::{BasicNode, Config, OptionalSend, Raft, SnapshotPolicy, Vote};
use serde::{Deserialize, Serialize};
use zest_protocol::Record;
use zest_storage::PartitionStore;

pub use log_store::{LogFlush, LogStore};
pub use state_machine::{AppliedInfo, SnapshotData, StateMachine};

pub type NodeId = u64;

/// The application data of a log entry: one processing batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordBatch {
    pub records: Vec<Record>,
}

impl std::fmt::Display for RecordBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecordBatch({} records)", self.records.len())
    }
}

openraft::declare_raft_types!(
    pub TypeConfig:
        D = RecordBatch,
        R = (),
        NodeId = NodeId,
        Node = BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = SnapshotData,
        AsyncRuntime = openraft::TokioRuntime,
);

pub type ZestRaft = Raft<TypeConfig>;

/// Resolves when an entry written with `client_write_ff` is committed and applied (or failed).
pub type CommitReceiver =
    <<TypeConfig as openraft::RaftTypeConfig>::Responder as openraft::raft::responder::Responder<
        TypeConfig,
    >>::Receiver;

#[derive(Debug, Clone)]
pub struct RaftSettings {
    /// Entries between snapshots; the log before a snapshot is compacted.
    pub snapshot_every: u64,
    /// Entries kept in the log behind the last snapshot.
    pub keep_behind_snapshot: u64,
    /// When appended entries are fsynced.
    pub flush: LogFlush,
    /// Log on disk above which a snapshot is taken (so that the segments behind it are
    /// deleted), however few entries were written since the last one.
    pub log_tail_bytes: u64,
}

impl Default for RaftSettings {
    fn default() -> Self {
        RaftSettings {
            snapshot_every: 20_000,
            keep_behind_snapshot: 1_000,
            flush: LogFlush::EveryAppend,
            log_tail_bytes: 256 << 20,
        }
    }
}

/// A running partition group on this node.
pub struct PartitionRaft {
    pub raft: ZestRaft,
    pub applied: Arc<AppliedInfo>,
}

/// Starts the openraft group of a partition on this node; a fresh one-member group initialises
/// itself and elects this node.
pub async fn start_partition(
    node_id: NodeId,
    address: &str,
    partition_id: u32,
    store: PartitionStore,
    settings: &RaftSettings,
    model_cache: usize,
) -> anyhow::Result<PartitionRaft> {
    let config = Config {
        cluster_name: format!("zest-partition-{partition_id}"),
        heartbeat_interval: 100,
        election_timeout_min: 300,
        election_timeout_max: 600,
        snapshot_policy: SnapshotPolicy::LogsSinceLast(settings.snapshot_every),
        max_in_snapshot_log_to_keep: settings.keep_behind_snapshot,
        max_payload_entries: 64,
        ..Default::default()
    };
    let config = Arc::new(config.validate()?);
    let log = LogStore::new(store.clone(), settings.flush);
    let sm = StateMachine::open(partition_id, store.clone(), model_cache)?;
    let applied = sm.applied_info();
    let raft = Raft::new(node_id, config, NoPeers, log, sm).await?;
    if !raft.is_initialized().await? {
        let mut members = BTreeMap::new();
        members.insert(
            node_id,
            BasicNode {
                addr: address.to_string(),
            },
        );
        raft.initialize(members).await?;
    }
    tokio::spawn(snapshot_on_log_size(
        raft.clone(),
        store,
        settings.log_tail_bytes,
        settings.keep_behind_snapshot,
    ));
    Ok(PartitionRaft { raft, applied })
}

/// Takes a snapshot whenever the log on disk grows beyond `limit` (and enough was applied
/// since the last snapshot for its purge to delete something), or purges behind the last one:
/// snapshots cost an fsync, so the log's size, not only its number of entries, decides when
/// its space is given back.
async fn snapshot_on_log_size(raft: ZestRaft, store: PartitionStore, limit: u64, keep: u64) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if store.log_disk_space() <= limit {
            continue;
        }
        let (applied, snapshot) = {
            let m = raft.metrics();
            let m = m.borrow();
            if m.running_state.is_err() {
                return;
            }
            (
                m.last_applied.map(|l| l.index).unwrap_or(0),
                m.snapshot.map(|l| l.index).unwrap_or(0),
            )
        };
        let purge_to = snapshot.saturating_sub(keep);
        let result = if applied > snapshot + keep + 1 {
            raft.trigger().snapshot().await
        } else if store
            .log_first_index()
            .ok()
            .flatten()
            .is_some_and(|first| first < purge_to)
        {
            // the snapshot covers more than the log was purged behind (after a restart, the
            // state on disk is the snapshot)
            raft.trigger().purge_log(purge_to).await
        } else {
            Ok(())
        };
        if result.is_err() {
            return;
        }
    }
}

/// The network of a one-member group: there are no peers to reach.
#[derive(Clone, Default)]
pub struct NoPeers;

#[derive(Debug, thiserror::Error)]
#[error("node {0} is not reachable: this node runs one-member partition groups")]
struct NoTransport(NodeId);

impl RaftNetworkFactory<TypeConfig> for NoPeers {
    type Network = NoPeerConnection;
    async fn new_client(&mut self, target: NodeId, _node: &BasicNode) -> Self::Network {
        NoPeerConnection(target)
    }
}

pub struct NoPeerConnection(NodeId);

impl RaftNetwork<TypeConfig> for NoPeerConnection {
    async fn append_entries(
        &mut self,
        _rpc: AppendEntriesRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        Err(RPCError::Network(NetworkError::new(&NoTransport(self.0))))
    }

    async fn full_snapshot(
        &mut self,
        _vote: Vote<NodeId>,
        _snapshot: Snapshot<TypeConfig>,
        _cancel: impl std::future::Future<Output = ReplicationClosed> + OptionalSend + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<NodeId>, StreamingError<TypeConfig, Fatal<NodeId>>> {
        Err(StreamingError::Network(NetworkError::new(&NoTransport(
            self.0,
        ))))
    }

    async fn vote(
        &mut self,
        _rpc: VoteRequest<NodeId>,
        _option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        Err(RPCError::Network(NetworkError::new(&NoTransport(self.0))))
    }
}
