//! Consensus for partitions: each partition is one openraft group whose log holds batches of
//! records, and whose state machine applies their events to the partition's fjall state through
//! the engine's appliers. The groups of a cluster talk over the internal port ([`transport`],
//! [`network`]); a single node runs one-member groups, which never call anyone.
//!
//! Placement ([`placement`]) is Zeebe's round-robin: partition p's replicas are nodes
//! p-1, p, ... (mod the cluster size), the first being its primary, which starts the group and
//! so leads it first.

// openraft's trait methods return `StorageError`, a large type we cannot box; our helpers that
// produce it follow the same signature.
#![allow(clippy::result_large_err)]

pub mod backup;
mod log_store;
pub mod network;
mod state_machine;
pub mod tls;
pub mod transport;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use openraft::{BasicNode, Config, Raft, SnapshotPolicy};
use serde::{Deserialize, Serialize};
use zest_protocol::{codec, Record};
use zest_storage::PartitionStore;

pub use log_store::{read_records, LogFlush, LogStore};
pub use network::{frame, unframe, Network};
pub use state_machine::{AppliedInfo, Flushed, SnapshotData, StateMachine};

pub type NodeId = u64;

/// Runs blocking storage work (an fsync, file deletions, a snapshot's install) away from the
/// async worker threads: on tokio's blocking pool under a multi-thread runtime (the broker's),
/// inline under a current-thread runtime. The deterministic simulation runs every node on one
/// current-thread runtime with a paused clock; work finishing on another thread would wake its
/// task at a moment set by the OS, and a seed would no longer replay the same run.
pub(crate) async fn offload<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::current().runtime_flavor() == RuntimeFlavor::CurrentThread {
        return Ok(work());
    }
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| e.to_string())
}

/// The application data of a log entry: one processing batch, as the records a leader's
/// processing wrote or as their encoding read from a log or received from a leader.
///
/// An entry read back is decoded only where its records are needed: by the state machine that
/// applies it. Replication sends the encoding it read as it is, and a follower writes the
/// encoding it received as it is, so an entry is decoded once on each follower and never on
/// the leader (which applies its own writes), and what waits in memory on its way is the
/// compact encoding, not the decoded records (about 5x larger).
#[derive(Debug, Clone)]
pub enum RecordBatch {
    Records(Vec<Record>),
    /// `codec::encode(&StoredBatch { records })`, not checked until decoded.
    Encoded(Vec<u8>),
}

/// How a batch is encoded: a struct of one field, as the batch was before it could stay
/// encoded (so logs written before read alike).
#[derive(Serialize, Deserialize)]
struct StoredBatch<'a> {
    records: Cow<'a, [Record]>,
}

impl RecordBatch {
    pub fn new(records: Vec<Record>) -> Self {
        RecordBatch::Records(records)
    }

    /// The batch's records, decoded if it holds their encoding.
    pub fn records(&self) -> Result<Cow<'_, [Record]>, String> {
        match self {
            RecordBatch::Records(r) => Ok(Cow::Borrowed(r)),
            RecordBatch::Encoded(bytes) => codec::decode::<StoredBatch<'static>>(bytes)
                .map(|b| b.records)
                .map_err(|e| format!("a log entry's records do not decode: {e}")),
        }
    }

    /// Hands the batch's records to `f` in their order. An encoded batch is decoded one record
    /// at a time, so applying it holds one decoded record, not the whole batch: a follower's
    /// entry of some thousand records would be megabytes of `Record`s (280 bytes each) for a
    /// moment, on fresh pages each time.
    pub fn for_each_record(&self, mut f: impl FnMut(&Record)) -> Result<(), String> {
        match self {
            RecordBatch::Records(r) => {
                r.iter().for_each(f);
                Ok(())
            }
            RecordBatch::Encoded(bytes) => codec::decode_seed(EachRecord(&mut f), bytes)
                .map_err(|e| format!("a log entry's records do not decode: {e}")),
        }
    }

    /// The batch's encoding (borrowed when it holds it).
    pub fn encoded(&self) -> Cow<'_, [u8]> {
        match self {
            RecordBatch::Records(r) => Cow::Owned(codec::encode(&StoredBatch {
                records: Cow::Borrowed(r),
            })),
            RecordBatch::Encoded(bytes) => Cow::Borrowed(bytes),
        }
    }

    /// What the batch holds in memory, given its encoded size: a decoded record takes
    /// `size_of::<Record>()` (280 bytes) whatever it carries, which for most records is several
    /// times their encoding, plus the box of a job, user task or decision evaluation
    /// (`RecordValue::boxed_bytes`), and the encoding stands for what the records point to
    /// (variables, names).
    pub fn memory_bytes(&self, encoded: usize) -> usize {
        match self {
            RecordBatch::Records(r) => {
                let boxed: usize = r.iter().map(|r| r.value.boxed_bytes()).sum();
                encoded + r.capacity() * std::mem::size_of::<Record>() + boxed
            }
            RecordBatch::Encoded(bytes) => bytes.capacity(),
        }
    }
}

/// Decodes a [`StoredBatch`] and hands its records to a function one by one (postcard: the
/// struct's one field, a sequence of records).
struct EachRecord<'f, F>(&'f mut F);

/// The sequence inside [`EachRecord`].
struct EachInSequence<'f, F>(&'f mut F);

impl<'de, F: FnMut(&Record)> serde::de::DeserializeSeed<'de> for EachRecord<'_, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_struct("StoredBatch", &["records"], self)
    }
}

impl<'de, F: FnMut(&Record)> serde::de::Visitor<'de> for EachRecord<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a batch of records")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        seq.next_element_seed(EachInSequence(self.0))?
            .ok_or_else(|| serde::de::Error::invalid_length(0, &"a batch's records"))
    }
}

impl<'de, F: FnMut(&Record)> serde::de::DeserializeSeed<'de> for EachInSequence<'_, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(&Record)> serde::de::Visitor<'de> for EachInSequence<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence of records")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(record) = seq.next_element::<Record>()? {
            (self.0)(&record);
        }
        Ok(())
    }
}

impl Serialize for RecordBatch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let records = self.records().map_err(serde::ser::Error::custom)?;
        StoredBatch { records }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RecordBatch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let b = StoredBatch::<'static>::deserialize(d)?;
        Ok(RecordBatch::Records(b.records.into_owned()))
    }
}

impl std::fmt::Display for RecordBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordBatch::Records(r) => write!(f, "RecordBatch({} records)", r.len()),
            RecordBatch::Encoded(b) => write!(f, "RecordBatch({} bytes encoded)", b.len()),
        }
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
    /// Bytes of just-appended entries kept in memory for the state machine (per partition).
    pub recent_bytes: usize,
    /// A follower that heard nothing from its leader for the leader's lease (twice this) and
    /// then between this and twice this starts an election.
    pub election_timeout: std::time::Duration,
    /// How often a leader tells its followers it is there.
    pub heartbeat_interval: std::time::Duration,
}

impl RaftSettings {
    /// openraft's election_timeout_max, which is also the leader's lease: a voter that heard
    /// its leader within it refuses to vote for another.
    pub fn lease(&self) -> std::time::Duration {
        self.election_timeout * 2
    }
}

impl Default for RaftSettings {
    fn default() -> Self {
        RaftSettings {
            snapshot_every: 20_000,
            keep_behind_snapshot: 1_000,
            flush: LogFlush::EveryAppend,
            log_tail_bytes: 256 << 20,
            recent_bytes: log_store::RECENT_MAX_BYTES,
            election_timeout: Duration::from_millis(300),
            heartbeat_interval: Duration::from_millis(250),
        }
    }
}

/// A running partition group on this node.
pub struct PartitionRaft {
    pub raft: ZestRaft,
    pub applied: Arc<AppliedInfo>,
}

/// The nodes that replicate partition `partition` (1-based) in a cluster of `cluster_size`
/// nodes, primary first: Zeebe's round-robin distribution, so that with as many partitions as
/// nodes every node is the primary of one.
pub fn placement(partition: u32, cluster_size: u32, replication_factor: u32) -> Vec<NodeId> {
    let size = cluster_size.max(1);
    (0..replication_factor.clamp(1, size))
        .map(|j| u64::from((partition - 1 + j) % size))
        .collect()
}

/// Who replicates a partition: every member's internal address, and the primary (which starts
/// the group at once; the others wait [`GroupMembers::initialize_after`] for it first).
#[derive(Debug, Clone)]
pub struct GroupMembers {
    pub members: BTreeMap<NodeId, BasicNode>,
    pub primary: NodeId,
    pub initialize_after: Duration,
}

/// Starts the openraft group of a partition on this node. A fresh group is initialised with
/// its members by its primary at once, and by the others if it is still not formed after a
/// while (the same configuration on several nodes is safe in openraft), so a cluster forms
/// when its primary is missing too.
pub async fn start_partition(
    node_id: NodeId,
    partition_id: u32,
    store: PartitionStore,
    settings: &RaftSettings,
    model_cache: usize,
    group: GroupMembers,
    network: Network,
) -> anyhow::Result<PartitionRaft> {
    // A follower that heard from its leader starts an election after the leader's lease
    // (openraft: election_timeout_max) and an election timeout: by default 0.9 to 1.2 s
    // without heartbeats, every 250 ms (as Zeebe; openraft 0.9 also gives an append this long
    // to be taken, and large appends under load take longer than 100 ms). Zeebe waits 2.5 s.
    let election = settings.election_timeout.as_millis() as u64;
    let config = Config {
        cluster_name: format!("zest-partition-{partition_id}"),
        heartbeat_interval: settings.heartbeat_interval.as_millis() as u64,
        election_timeout_min: election,
        election_timeout_max: settings.lease().as_millis() as u64,
        install_snapshot_timeout: 10_000,
        snapshot_policy: SnapshotPolicy::LogsSinceLast(settings.snapshot_every),
        max_in_snapshot_log_to_keep: settings.keep_behind_snapshot,
        // entries are processing groups of up to 1 MiB of commands' documents (and their
        // follow-up records): an append carries at most 16, and at most
        // `log_store::MAX_APPEND_BYTES` of them
        max_payload_entries: 16,
        ..Default::default()
    };
    let config = Arc::new(config.validate()?);
    let sm = StateMachine::open(partition_id, store.clone(), model_cache)?;
    let applied = sm.applied_info();
    let log = LogStore::new(store.clone(), settings.flush)
        .with_recent_bytes(settings.recent_bytes)
        .with_applied(applied.clone());
    let raft = Raft::new(node_id, config, network, log, sm).await?;
    if !raft.is_initialized().await? {
        if group.primary == node_id || group.members.len() <= 1 {
            raft.initialize(group.members).await?;
        } else {
            let raft = raft.clone();
            tokio::spawn(async move {
                tokio::time::sleep(group.initialize_after).await;
                if matches!(raft.is_initialized().await, Ok(false)) {
                    tracing::info!(
                        partition = partition_id,
                        "the partition's primary did not form its group: forming it from here"
                    );
                    let _ = raft.initialize(group.members).await;
                }
            });
        }
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

#[cfg(test)]
mod tests {
    use super::RecordBatch;
    use zest_protocol::{Intent, JobRecord, MessageRecord, Record, RecordValue};

    /// An entry's estimate counts every decoded record and the boxes of its jobs, which live
    /// outside the record (a job's fields take more than the record itself).
    #[test]
    fn a_batch_counts_its_records_and_their_boxes() {
        let job = RecordValue::Job(Box::default());
        let message = RecordValue::Message(MessageRecord::default());
        let records: Vec<Record> = (0..10)
            .map(|i| {
                let value = if i % 2 == 0 {
                    job.clone()
                } else {
                    message.clone()
                };
                zest_engine::new_command(i, Intent::Create, value, -1, -1)
            })
            .collect();
        let decoded = records.capacity() * std::mem::size_of::<Record>();
        let boxes = 5 * std::mem::size_of::<JobRecord>();
        assert_eq!(
            RecordBatch::new(records).memory_bytes(100),
            100 + decoded + boxes
        );
        assert_eq!(RecordBatch::Encoded(vec![0; 100]).memory_bytes(100), 100);
    }
}
