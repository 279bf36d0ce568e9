//! The openraft state machine of a partition: applies committed record batches to fjall state
//! through the engine's event appliers, and builds and installs snapshots of that state.
//!
//! A snapshot is the state store itself: the state database commits the applied log id in the
//! same atomic batch as the state, so "the state at applied index X" needs no copy. Building a
//! snapshot makes the state durable (one fsync) and reports its applied log id; the work does
//! not depend on the size of the state. Its data ([`SnapshotData`]) is a consistent read view
//! that yields the state in chunks of bounded size when it is sent to another node, and a
//! received snapshot is written chunk by chunk into a new generation of keyspaces that the
//! installation switches to (`zest_storage::transfer`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyerror::AnyError;
use openraft::storage::{RaftStateMachine, Snapshot, SnapshotMeta};
use openraft::{
    BasicNode, Entry, EntryPayload, LogId, OptionalSend, RaftSnapshotBuilder, StorageError,
    StorageIOError, StoredMembership,
};
use zest_engine::state::Txn;
use zest_engine::Engine;
use zest_protocol::codec;
use zest_storage::{PartitionStore, Staging, StateView};

use crate::{NodeId, TypeConfig};

pub(crate) const APPLIED: &[u8] = b"applied";
const MEMBERSHIP: &[u8] = b"membership";
pub(crate) const LAST_POSITION: &[u8] = b"last_position";

/// What the processing loop needs to know about applied state.
#[derive(Default)]
pub struct AppliedInfo {
    /// Position of the last record applied.
    pub last_position: AtomicU64,
    /// Index of the last log entry applied.
    pub last_index: AtomicU64,
    /// State writes the leader's processing already computed for a batch, by the position of
    /// the batch's first record. Applying such a batch commits these writes instead of running
    /// the appliers again: processing is deterministic, so they are the writes the appliers
    /// would make (the engine's determinism tests check exactly that). Followers and replay
    /// find nothing here and run the appliers.
    ///
    /// They are keyed by the leader that wrote the batch (term and node) as well as the
    /// position: a leader that is deposed before its batch commits leaves writes behind, and
    /// the next leader writes other batches at the same positions.
    pub precomputed:
        std::sync::Mutex<std::collections::HashMap<(u64, u64, u64), zest_engine::state::Writes>>,
    /// Seconds each snapshot took since the metrics last collected them.
    pub snapshot_durations: std::sync::Mutex<Vec<f64>>,
    /// The log entries appended here and not yet applied, by what they hold in memory.
    pub unapplied: std::sync::Mutex<Unapplied>,
    /// The index of the last entry known committed here, plus one (0: none yet); the log
    /// store sets it when openraft saves the commit index.
    pub committed_end: AtomicU64,
    /// The last batch this node's leader wrote that the log holds durably (flushed): the log
    /// store sets it once an append's fsync returns, before openraft hears of it. A group
    /// with one voter commits what its leader's log holds, so its processing loop answers
    /// a batch's commands from here, without waiting for openraft's core and the apply.
    pub flushed: tokio::sync::watch::Sender<Flushed>,
    /// The position of the last record whose command was answered before it was applied
    /// (0: none). Reads of this node's state wait until it is applied
    /// ([`AppliedInfo::wait_applied`]), so a client reads what it was told was done.
    pub answered_position: AtomicU64,
    /// Woken after each applied entry, for [`AppliedInfo::wait_applied`].
    applied_notify: tokio::sync::Notify,
    /// How far this node's exporters let the log be purged: 0 when there is no exporter,
    /// else one more than the highest index they exported (the log is purged only up to it,
    /// `LogStore::purge`), so an exporter behind the snapshot still finds its entries.
    pub export_floor: AtomicU64,
    /// How far a backup being taken lets the log be purged (0: none): one more than the
    /// first index its copy of the history has not exported, so the entries from there to the
    /// state's index are still in the log when the backup copies them (`zest-broker`'s
    /// `backup`).
    pub backup_floor: AtomicU64,
    /// The log indexes a snapshot installed here skipped, `(from, to]`: entries this node
    /// never applied itself, which its exporters cannot read from its log (what it holds
    /// there may be an old leader's uncommitted tail). (0, 0) when none was installed.
    pub installed_gap: std::sync::Mutex<(u64, u64)>,
}

/// A batch the log holds durably: the leader that wrote it (term and node) and the position
/// of its last record.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Flushed {
    pub leader: (u64, u64),
    pub position: u64,
}

/// What the log entries appended and not yet applied hold in memory (`log_store`'s estimate of
/// a decoded entry), by index. openraft hands the state machine every committed entry not yet
/// applied at once, so the committed ones are what applying will hold: a follower takes new
/// entries only while they stay within its share (`transport::Groups`). Entries not known
/// committed do not count: they cannot be applied before the leader hears that this node
/// has them, which may be from the very append a follower would refuse.
#[derive(Default)]
pub struct Unapplied {
    sizes: std::collections::BTreeMap<u64, usize>,
}

impl Unapplied {
    pub fn appended(&mut self, index: u64, size: usize) {
        self.sizes.insert(index, size);
    }

    /// The entries up to `index` were applied (or replaced by a snapshot).
    pub fn applied(&mut self, index: u64) {
        self.sizes = self.sizes.split_off(&index.saturating_add(1));
    }

    /// The entries from `index` on were removed from the log.
    pub fn truncated(&mut self, index: u64) {
        self.sizes.split_off(&index);
    }

    /// What the entries up to `index` hold (none: nothing).
    pub fn bytes_through(&self, index: Option<u64>) -> usize {
        index.map_or(0, |i| self.sizes.range(..=i).map(|(_, s)| s).sum())
    }
}

impl AppliedInfo {
    /// The end of the gap a snapshot installed here skipped (`installed_gap`) when `index` is
    /// in it: the exporters cannot read that entry from this node's log.
    pub fn installed_gap_over(&self, index: u64) -> Option<u64> {
        let (from, to) = *self.installed_gap.lock().unwrap_or_else(|p| p.into_inner());
        (index > from && index <= to).then_some(to)
    }

    /// `leader`: the term and node id of the leader that wrote the batch.
    pub fn take_precomputed(
        &self,
        leader: (u64, u64),
        first_position: u64,
    ) -> Option<zest_engine::state::Writes> {
        self.precomputed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(leader.0, leader.1, first_position))
    }

    pub fn put_precomputed(
        &self,
        leader: (u64, u64),
        first_position: u64,
        writes: zest_engine::state::Writes,
    ) {
        self.precomputed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((leader.0, leader.1, first_position), writes);
    }

    pub fn unapplied(&self) -> std::sync::MutexGuard<'_, Unapplied> {
        self.unapplied.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The index of the last entry known committed here.
    pub fn committed(&self) -> Option<u64> {
        self.committed_end.load(Ordering::SeqCst).checked_sub(1)
    }

    /// What the committed entries not yet applied hold, and how many there are.
    pub fn committed_lag(&self, last_applied: Option<u64>) -> (u64, usize) {
        let committed = self.committed();
        let entries = match (committed, last_applied) {
            (Some(c), Some(a)) => c.saturating_sub(a),
            (Some(c), None) => c + 1,
            (None, _) => 0,
        };
        (entries, self.unapplied().bytes_through(committed))
    }

    /// Waits (at most `limit`) until the records whose commands were answered are applied,
    /// so that a read of the state sees them; false when the limit passed first.
    pub async fn wait_applied(&self, limit: std::time::Duration) -> bool {
        let target = self.answered_position.load(Ordering::SeqCst);
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.applied_notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.last_position.load(Ordering::SeqCst) >= target {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }

    /// Waits (at most `limit`) until an entry after index `index` is applied; answers the
    /// last applied index.
    pub async fn wait_applied_beyond(&self, index: u64, limit: std::time::Duration) -> u64 {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.applied_notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let last = self.last_index.load(Ordering::SeqCst);
            if last > index || tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.last_index.load(Ordering::SeqCst);
            }
        }
    }

    /// The highest index the log may be purged up to, given a purge up to `index`.
    pub fn purge_limit(&self, index: u64) -> u64 {
        [&self.export_floor, &self.backup_floor]
            .iter()
            .fold(index, |limit, floor| match floor.load(Ordering::SeqCst) {
                0 => limit,
                floor => limit.min(floor - 1),
            })
    }

    pub fn clear_precomputed(&self) {
        self.precomputed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

/// The data of a snapshot: what a leader sends, or what a follower received.
pub enum SnapshotData {
    /// A consistent view of this node's state; [`StateView::next_chunk`] streams it.
    View(StateView),
    /// A state received chunk by chunk ([`Staging::write_chunk`]), switched to on install.
    Received(Staging),
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Msg(String);

fn any(e: impl std::fmt::Display) -> AnyError {
    AnyError::new(&Msg(e.to_string()))
}

pub struct StateMachine {
    store: PartitionStore,
    engine: Engine,
    applied: Option<LogId<NodeId>>,
    membership: StoredMembership<NodeId, BasicNode>,
    info: Arc<AppliedInfo>,
}

impl StateMachine {
    /// `model_cache`: parsed models the appliers' engine keeps.
    pub fn open(
        partition_id: u32,
        store: PartitionStore,
        model_cache: usize,
    ) -> anyhow::Result<Self> {
        let applied = match store.sm_get(APPLIED)? {
            Some(b) => serde_json::from_slice(&b)?,
            None => None,
        };
        let membership = match store.sm_get(MEMBERSHIP)? {
            Some(b) => serde_json::from_slice(&b)?,
            None => StoredMembership::default(),
        };
        let info = Arc::new(AppliedInfo::default());
        if let Some(b) = store.sm_get(LAST_POSITION)? {
            info.last_position
                .store(codec::decode::<u64>(&b)?, Ordering::SeqCst);
        }
        let applied_index = applied
            .as_ref()
            .map(|l: &LogId<NodeId>| l.index)
            .unwrap_or(0);
        info.last_index.store(applied_index, Ordering::SeqCst);
        Ok(StateMachine {
            store,
            engine: Engine::new(partition_id).with_model_cache(model_cache),
            applied,
            membership,
            info,
        })
    }

    pub fn applied_info(&self) -> Arc<AppliedInfo> {
        self.info.clone()
    }

    /// `last_position`: the position of the last record applied with these writes.
    fn sm_meta(&self, last_position: u64) -> Vec<(&'static [u8], Vec<u8>)> {
        vec![
            (
                APPLIED,
                serde_json::to_vec(&self.applied).unwrap_or_default(),
            ),
            (
                MEMBERSHIP,
                serde_json::to_vec(&self.membership).unwrap_or_default(),
            ),
            (LAST_POSITION, codec::encode(&last_position)),
        ]
    }
}

impl StateMachine {
    fn apply_entries<I>(&mut self, entries: I) -> Result<Vec<()>, StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>>,
    {
        let mut out = Vec::new();
        let mut last_position = None;
        for entry in entries {
            self.applied = Some(entry.log_id);
            let writes = match &entry.payload {
                EntryPayload::Normal(batch) => {
                    let leader = &entry.log_id.leader_id;
                    let (info, engine) = (&self.info, &mut self.engine);
                    let mut txn = Txn::new(&self.store);
                    // the leader's own writes when it processed the batch (keyed by its first
                    // record), else the batch's events applied here, record by record
                    let mut pre = None;
                    let mut last = None;
                    batch
                        .for_each_record(|r| {
                            if last.is_none() {
                                pre = info
                                    .take_precomputed((leader.term, leader.node_id), r.position);
                            }
                            if pre.is_none() {
                                engine.apply_record(&mut txn, r);
                            }
                            last = Some(r.position);
                        })
                        .map_err(|e| StorageIOError::apply(entry.log_id, any(e)))?;
                    last_position = last;
                    match pre {
                        Some(w) => w,
                        None => txn.into_writes(),
                    }
                }
                EntryPayload::Membership(m) => {
                    self.membership = StoredMembership::new(Some(entry.log_id), m.clone());
                    Default::default()
                }
                EntryPayload::Blank => Default::default(),
            };
            let position = last_position
                .take()
                .unwrap_or_else(|| self.info.last_position.load(Ordering::SeqCst));
            self.store
                .commit_state(writes, self.sm_meta(position))
                .map_err(|e| StorageIOError::apply(entry.log_id, any(e)))?;
            // after the commit: a read that waits for a position finds it in the store
            self.info.last_position.store(position, Ordering::SeqCst);
            self.info
                .last_index
                .store(entry.log_id.index, Ordering::SeqCst);
            self.info.unapplied().applied(entry.log_id.index);
            out.push(());
        }
        self.info.applied_notify.notify_waiters();
        Ok(out)
    }
}

pub struct SnapshotBuilder {
    store: PartitionStore,
    info: Arc<AppliedInfo>,
}

/// The snapshot of the state as it is now: a consistent view and the metadata read through it.
fn current_snapshot(store: &PartitionStore) -> Result<Snapshot<TypeConfig>, StorageError<NodeId>> {
    let view = store
        .view()
        .map_err(|e| StorageIOError::read_state_machine(any(e)))?;
    let read = |k: &[u8]| {
        view.sm_get(k)
            .map_err(|e| StorageIOError::read_state_machine(any(e)))
    };
    let applied: Option<LogId<NodeId>> = match read(APPLIED)? {
        Some(b) => {
            serde_json::from_slice(&b).map_err(|e| StorageIOError::read_state_machine(any(e)))?
        }
        None => None,
    };
    let membership: StoredMembership<NodeId, BasicNode> = match read(MEMBERSHIP)? {
        Some(b) => {
            serde_json::from_slice(&b).map_err(|e| StorageIOError::read_state_machine(any(e)))?
        }
        None => StoredMembership::default(),
    };
    let snapshot_id = match applied {
        Some(l) => format!("{}-{}-{}", l.leader_id.term, l.leader_id.node_id, l.index),
        None => "empty".to_string(),
    };
    Ok(Snapshot {
        meta: SnapshotMeta {
            last_log_id: applied,
            last_membership: membership,
            snapshot_id,
        },
        snapshot: Box::new(SnapshotData::View(view)),
    })
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    /// Takes a view of the state and makes the state durable at least up to it (and, first,
    /// the log up to it: with the log's own flush delayed or off (`LogFlush`), a snapshot
    /// must never be ahead of the durable log). Nothing is copied.
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError<NodeId>> {
        let started = std::time::Instant::now();
        let snapshot = current_snapshot(&self.store)?;
        let store = self.store.clone();
        crate::offload(move || {
            store.sync_log()?;
            store.persist_state()
        })
        .await
        .map_err(|e| StorageIOError::write_snapshot(None, any(e)))?
        .map_err(|e| StorageIOError::write_snapshot(None, any(e)))?;
        tracing::info!(snapshot = %snapshot.meta.snapshot_id, "snapshot taken");
        self.info
            .snapshot_durations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(started.elapsed().as_secs_f64());
        Ok(snapshot)
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId<NodeId>>, StoredMembership<NodeId, BasicNode>), StorageError<NodeId>>
    {
        Ok((self.applied, self.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<()>, StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        self.apply_entries(entries)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {
            store: self.store.clone(),
            info: self.info.clone(),
        }
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> Result<Box<SnapshotData>, StorageError<NodeId>> {
        let staging = self
            .store
            .begin_install()
            .map_err(|e| StorageIOError::write_snapshot(None, any(e)))?;
        Ok(Box::new(SnapshotData::Received(staging)))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<NodeId, BasicNode>,
        snapshot: Box<SnapshotData>,
    ) -> Result<(), StorageError<NodeId>> {
        self.applied = meta.last_log_id;
        self.membership = meta.last_membership.clone();
        // the applied log id and membership are the snapshot's; the last position is the one
        // the snapshot carries
        let meta_refs: Vec<(&[u8], Vec<u8>)> = self
            .sm_meta(0)
            .into_iter()
            .filter(|(k, _)| *k != LAST_POSITION)
            .collect();
        let store = self.store.clone();
        crate::offload(move || match *snapshot {
            SnapshotData::Received(staging) => store.finish_install(staging, &meta_refs),
            SnapshotData::View(view) => store.install_view(&view, &meta_refs),
        })
        .await
        .map_err(|e| StorageIOError::write_snapshot(Some(meta.signature()), any(e)))?
        .map_err(|e| StorageIOError::write_snapshot(Some(meta.signature()), any(e)))?;
        if let Some(b) = self
            .store
            .sm_get(LAST_POSITION)
            .map_err(|e| StorageIOError::read_state_machine(any(e)))?
        {
            let position =
                codec::decode::<u64>(&b).map_err(|e| StorageIOError::read_state_machine(any(e)))?;
            self.info.last_position.store(position, Ordering::SeqCst);
        }
        self.engine.reset_caches();
        self.info.clear_precomputed();
        if let Some(l) = meta.last_log_id {
            let before = self.info.last_index.swap(l.index, Ordering::SeqCst);
            *self
                .info
                .installed_gap
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = (before, l.index);
            self.info.unapplied().applied(l.index);
        }
        Ok(())
    }

    /// The state as it is now: at least as new as the last snapshot built, and the state a
    /// node that needs a snapshot should get.
    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<Snapshot<TypeConfig>>, StorageError<NodeId>> {
        let snapshot = current_snapshot(&self.store)?;
        Ok(snapshot.meta.last_log_id.is_some().then_some(snapshot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::{CommittedLeaderId, Membership};
    use zest_engine::state::{Ks, StateRead};
    use zest_storage::{ChunkCursor, Store, StoreConfig};

    fn open(name: &str) -> (std::path::PathBuf, Store, StateMachine) {
        let dir = std::env::temp_dir().join(format!("zest-sm-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let sm = StateMachine::open(1, store.partition(1).unwrap(), 16).unwrap();
        (dir, store, sm)
    }

    /// A follower's lag by memory: appends count until applied, a truncation or a snapshot
    /// takes theirs away, and an entry appended again counts once.
    #[test]
    fn entries_not_yet_applied_count_until_applied_truncated_or_snapshotted() {
        let mut u = Unapplied::default();
        for index in 1..=10 {
            u.appended(index, 100);
        }
        u.appended(10, 300);
        assert_eq!(u.bytes_through(Some(u64::MAX)), 1200);
        u.applied(4);
        assert_eq!(u.bytes_through(Some(u64::MAX)), 800);
        u.truncated(9);
        assert_eq!(u.bytes_through(Some(u64::MAX)), 400);
        u.applied(100);
        assert_eq!(u.bytes_through(Some(u64::MAX)), 0);
        u.appended(101, 5);
        assert_eq!(u.bytes_through(Some(u64::MAX)), 5);
        u.appended(102, 7);
        assert_eq!(u.bytes_through(Some(101)), 5, "only the committed ones");
        assert_eq!(u.bytes_through(None), 0);
    }

    /// The log is purged only behind both the exporters and a backup being taken.
    #[test]
    fn a_purge_keeps_what_the_exporter_or_a_backup_holds() {
        let info = AppliedInfo::default();
        assert_eq!(info.purge_limit(100), 100, "no exporter, no backup");
        info.export_floor.store(51, Ordering::SeqCst);
        assert_eq!(info.purge_limit(100), 50);
        info.backup_floor.store(21, Ordering::SeqCst);
        assert_eq!(info.purge_limit(100), 20);
        info.export_floor.store(0, Ordering::SeqCst);
        assert_eq!(info.purge_limit(100), 20);
        assert_eq!(info.purge_limit(10), 10);
    }

    /// A follower's lag counts only what it knows committed: entries it cannot apply yet
    /// (the leader has not heard it has them) never make it refuse the append that would
    /// commit them.
    #[test]
    fn the_lag_counts_committed_entries_only() {
        let info = AppliedInfo::default();
        for index in 0..10 {
            info.unapplied().appended(index, 1000);
        }
        assert_eq!(info.committed_lag(None), (0, 0), "nothing known committed");
        info.committed_end.store(5, Ordering::SeqCst); // entries 0..=4
        assert_eq!(info.committed_lag(None), (5, 5000));
        info.unapplied().applied(2);
        assert_eq!(info.committed_lag(Some(2)), (2, 2000));
    }

    /// A read of the state waits until the records whose commands were answered are
    /// applied (the state machine wakes it), and no longer than its limit; the applied
    /// position is in the store with the state it stands for.
    #[tokio::test]
    async fn a_read_waits_until_the_answered_records_are_applied() {
        let (dir, _s, mut sm) = open("wait");
        let info = sm.info.clone();
        let limit = std::time::Duration::from_millis(30);
        assert!(info.wait_applied(limit).await, "nothing answered");
        info.answered_position.store(2, Ordering::SeqCst);
        assert!(!info.wait_applied(limit).await, "nothing applied yet");
        let waiter = tokio::spawn({
            let info = info.clone();
            async move { info.wait_applied(std::time::Duration::from_secs(30)).await }
        });
        tokio::task::yield_now().await;
        let command = |position| {
            let mut r = zest_engine::new_command(
                1,
                zest_protocol::Intent::Create,
                zest_protocol::RecordValue::JobBatch(Default::default()),
                -1,
                -1,
            );
            r.position = position;
            r
        };
        let entry = |index, positions: &[u64]| Entry::<TypeConfig> {
            log_id: LogId::new(CommittedLeaderId::new(1, 0), index),
            payload: EntryPayload::Normal(crate::RecordBatch::new(
                positions.iter().map(|p| command(*p)).collect(),
            )),
        };
        sm.apply(vec![entry(1, &[1])]).await.unwrap();
        assert!(
            !info.wait_applied(limit).await,
            "position 2 not yet applied"
        );
        sm.apply(vec![entry(2, &[2]), entry(3, &[])]).await.unwrap();
        assert!(waiter.await.unwrap(), "woken by the apply");
        assert_eq!(info.last_position.load(Ordering::SeqCst), 2);
        let stored = sm.store.sm_get(LAST_POSITION).unwrap().unwrap();
        assert_eq!(codec::decode::<u64>(&stored).unwrap(), 2);
        let _ = std::fs::remove_dir_all(dir);
    }

    fn contents(store: &PartitionStore) -> Vec<(Ks, Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        for ks in Ks::ALL {
            store.scan_prefix(ks, b"", &mut |k, v| {
                out.push((ks, k.to_vec(), v.to_vec()));
                true
            });
        }
        out
    }

    /// A snapshot is built without copying the state, streamed in chunks of bounded size, and
    /// installed on another state machine chunk by chunk, which then reports the same applied
    /// log id, membership and last position, and holds the same state.
    #[tokio::test]
    async fn a_snapshot_streams_in_chunks_to_another_state_machine() {
        let (dir1, _s1, mut leader) = open("leader");
        let (dir2, _s2, mut follower) = open("follower");
        let log_id = LogId::new(CommittedLeaderId::new(3, 0), 5000);
        let mut members = std::collections::BTreeMap::new();
        members.insert(0, BasicNode::default());
        leader.applied = Some(log_id);
        leader.membership =
            StoredMembership::new(Some(log_id), Membership::new(vec![[0].into()], members));
        leader.info.last_position.store(77, Ordering::SeqCst);
        let mut txn = Txn::new(&leader.store);
        for i in 0..3000u32 {
            txn.put_raw(Ks::Jobs, i.to_be_bytes().to_vec(), vec![7; 100]);
        }
        let meta = leader.sm_meta(77);
        leader.store.commit_state(txn.into_writes(), meta).unwrap();

        let built = leader
            .get_snapshot_builder()
            .await
            .build_snapshot()
            .await
            .unwrap();
        assert_eq!(built.meta.last_log_id, Some(log_id));
        let sent = leader.get_current_snapshot().await.unwrap().unwrap();
        assert_eq!(sent.meta, built.meta);
        let SnapshotData::View(view) = *sent.snapshot else {
            panic!("a leader's snapshot is a view of its state");
        };
        let mut received = follower.begin_receiving_snapshot().await.unwrap();
        let SnapshotData::Received(staging) = received.as_mut() else {
            panic!("a follower receives into a staging generation");
        };
        let mut cursor = ChunkCursor::default();
        let mut chunks = 0;
        while let Some((chunk, next)) = view.next_chunk(&cursor, 16 * 1024).unwrap() {
            assert!(chunk.len() <= 17 * 1024);
            staging.write_chunk(&chunk).unwrap();
            cursor = next;
            chunks += 1;
        }
        assert!(chunks >= 18, "{chunks} chunks");
        follower
            .install_snapshot(&sent.meta, received)
            .await
            .unwrap();

        let (applied, membership) = follower.applied_state().await.unwrap();
        assert_eq!(applied, Some(log_id));
        assert_eq!(membership, leader.membership);
        assert_eq!(follower.info.last_position.load(Ordering::SeqCst), 77);
        assert_eq!(follower.info.last_index.load(Ordering::SeqCst), 5000);
        assert_eq!(contents(&follower.store), contents(&leader.store));
        assert_eq!(contents(&follower.store).len(), 3000);
        let current = follower.get_current_snapshot().await.unwrap().unwrap();
        assert_eq!(current.meta, built.meta);
        let _ = std::fs::remove_dir_all(dir1);
        let _ = std::fs::remove_dir_all(dir2);
    }
}
