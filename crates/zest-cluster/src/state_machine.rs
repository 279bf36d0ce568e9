//! The openraft state machine of a partition: applies committed record batches to fjall state
//! through the engine's event appliers, and builds and installs snapshots of that state.

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyerror::AnyError;
use openraft::storage::{RaftStateMachine, Snapshot, SnapshotMeta};
use openraft::{
    BasicNode, Entry, EntryPayload, LogId, OptionalSend, RaftSnapshotBuilder, StorageError,
    StorageIOError, StoredMembership,
};
use serde::{Deserialize, Serialize};
use zest_engine::state::Txn;
use zest_engine::Engine;
use zest_protocol::codec;
use zest_storage::PartitionStore;

use crate::{NodeId, TypeConfig};

const APPLIED: &[u8] = b"applied";
const MEMBERSHIP: &[u8] = b"membership";
const LAST_POSITION: &[u8] = b"last_position";

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
    pub precomputed: std::sync::Mutex<std::collections::HashMap<u64, zest_engine::state::Writes>>,
    /// Seconds each snapshot took since the metrics last collected them.
    pub snapshot_durations: std::sync::Mutex<Vec<f64>>,
}

impl AppliedInfo {
    pub fn take_precomputed(&self, first_position: u64) -> Option<zest_engine::state::Writes> {
        self.precomputed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&first_position)
    }

    pub fn put_precomputed(&self, first_position: u64, writes: zest_engine::state::Writes) {
        self.precomputed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(first_position, writes);
    }

    pub fn clear_precomputed(&self) {
        self.precomputed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

#[derive(Serialize, Deserialize)]
struct SnapshotFile {
    meta: String,
    data: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Msg(String);

fn any(e: impl std::fmt::Display) -> AnyError {
    AnyError::new(&Msg(e.to_string()))
}

pub struct StateMachine {
    partition_id: u32,
    store: PartitionStore,
    engine: Engine,
    applied: Option<LogId<NodeId>>,
    membership: StoredMembership<NodeId, BasicNode>,
    info: Arc<AppliedInfo>,
    snapshot_dir: PathBuf,
    current: Option<(SnapshotMeta<NodeId, BasicNode>, Vec<u8>)>,
}

impl StateMachine {
    pub fn open(
        partition_id: u32,
        store: PartitionStore,
        snapshot_dir: PathBuf,
    ) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&snapshot_dir)?;
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
        let mut sm = StateMachine {
            partition_id,
            store,
            engine: Engine::new(partition_id),
            applied,
            membership,
            info,
            snapshot_dir,
            current: None,
        };
        sm.current = sm.load_snapshot_file();
        Ok(sm)
    }

    pub fn applied_info(&self) -> Arc<AppliedInfo> {
        self.info.clone()
    }

    fn snapshot_path(&self) -> PathBuf {
        self.snapshot_dir
            .join(format!("partition-{}.snapshot", self.partition_id))
    }

    fn load_snapshot_file(&self) -> Option<(SnapshotMeta<NodeId, BasicNode>, Vec<u8>)> {
        let bytes = std::fs::read(self.snapshot_path()).ok()?;
        let file: SnapshotFile = codec::decode(&bytes).ok()?;
        let meta = serde_json::from_str(&file.meta).ok()?;
        Some((meta, file.data))
    }

    fn sm_meta(&self) -> Vec<(&'static [u8], Vec<u8>)> {
        vec![
            (
                APPLIED,
                serde_json::to_vec(&self.applied).unwrap_or_default(),
            ),
            (
                MEMBERSHIP,
                serde_json::to_vec(&self.membership).unwrap_or_default(),
            ),
            (
                LAST_POSITION,
                codec::encode(&self.info.last_position.load(Ordering::SeqCst)),
            ),
        ]
    }
}

pub struct SnapshotBuilder {
    store: PartitionStore,
    snapshot_path: PathBuf,
    info: Arc<AppliedInfo>,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError<NodeId>> {
        let started = std::time::Instant::now();
        let store = self.store.clone();
        // The log up to the state dumped is made durable before the snapshot file is written:
        // with the log's own flush delayed or off (`LogFlush`), a snapshot must never be ahead
        // of the durable log.
        let dump = tokio::task::spawn_blocking(move || {
            let dump = store.dump_state()?;
            store.sync_log()?;
            Ok::<_, zest_storage::StorageError>(dump)
        })
        .await
        .map_err(|e| StorageIOError::read_state_machine(any(e)))?
        .map_err(|e| StorageIOError::read_state_machine(any(e)))?;
        // the metadata comes from the same consistent read as the state
        let find = |k: &[u8]| {
            dump.iter()
                .find(|(ks, key, _)| ks == zest_storage::SM_KEYSPACE && key == k)
                .map(|(_, _, v)| v.clone())
        };
        let applied: Option<LogId<NodeId>> = find(APPLIED)
            .and_then(|b| serde_json::from_slice(&b).ok())
            .flatten();
        let membership: StoredMembership<NodeId, BasicNode> = find(MEMBERSHIP)
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let data = codec::encode(&dump);
        let snapshot_id = format!("{}-{}", applied.map(|l| l.index).unwrap_or(0), data.len());
        let meta = SnapshotMeta {
            last_log_id: applied,
            last_membership: membership,
            snapshot_id,
        };
        let file = SnapshotFile {
            meta: serde_json::to_string(&meta).unwrap_or_default(),
            data: data.clone(),
        };
        let path = self.snapshot_path.clone();
        let tmp = path.with_extension("tmp");
        let bytes = codec::encode(&file);
        tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        })
        .await
        .map_err(|e| StorageIOError::write_snapshot(None, any(e)))?
        .map_err(|e| StorageIOError::write_snapshot(None, any(e)))?;
        tracing::info!(snapshot = %meta.snapshot_id, "snapshot written");
        self.info
            .snapshot_durations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(started.elapsed().as_secs_f64());
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(data)),
        })
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
        let mut out = Vec::new();
        for entry in entries {
            self.applied = Some(entry.log_id);
            let writes = match &entry.payload {
                EntryPayload::Normal(batch) => {
                    let pre = batch
                        .records
                        .first()
                        .and_then(|r| self.info.take_precomputed(r.position));
                    let writes = match pre {
                        Some(w) => w,
                        None => {
                            let mut txn = Txn::new(&self.store);
                            self.engine.apply(&mut txn, &batch.records);
                            txn.into_writes()
                        }
                    };
                    if let Some(last) = batch.records.last() {
                        self.info
                            .last_position
                            .store(last.position, Ordering::SeqCst);
                    }
                    writes
                }
                EntryPayload::Membership(m) => {
                    self.membership = StoredMembership::new(Some(entry.log_id), m.clone());
                    Default::default()
                }
                EntryPayload::Blank => Default::default(),
            };
            let meta = self.sm_meta();
            let meta_refs: Vec<(&[u8], Vec<u8>)> =
                meta.iter().map(|(k, v)| (*k, v.clone())).collect();
            self.store
                .commit_state(writes, &meta_refs)
                .map_err(|e| StorageIOError::apply(entry.log_id, any(e)))?;
            self.info
                .last_index
                .store(entry.log_id.index, Ordering::SeqCst);
            out.push(());
        }
        Ok(out)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {
            store: self.store.clone(),
            snapshot_path: self.snapshot_path(),
            info: self.info.clone(),
        }
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> Result<Box<Cursor<Vec<u8>>>, StorageError<NodeId>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<NodeId, BasicNode>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError<NodeId>> {
        let data = snapshot.into_inner();
        let entries: Vec<zest_storage::StateEntry> = codec::decode(&data)
            .map_err(|e| StorageIOError::read_snapshot(Some(meta.signature()), any(e)))?;
        self.applied = meta.last_log_id;
        self.membership = meta.last_membership.clone();
        let state: Vec<_> = entries
            .into_iter()
            .filter(|(ks, _, _)| ks != zest_storage::SM_KEYSPACE)
            .collect();
        let meta_kv = self.sm_meta();
        let meta_refs: Vec<(&[u8], Vec<u8>)> =
            meta_kv.iter().map(|(k, v)| (*k, v.clone())).collect();
        self.store
            .replace_state(state, &meta_refs)
            .map_err(|e| StorageIOError::write_state_machine(any(e)))?;
        self.engine.reset_caches();
        if let Some(l) = meta.last_log_id {
            self.info.last_index.store(l.index, Ordering::SeqCst);
        }
        self.current = Some((meta.clone(), data));
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<Snapshot<TypeConfig>>, StorageError<NodeId>> {
        if self.current.is_none() {
            self.current = self.load_snapshot_file();
        }
        Ok(self.current.as_ref().map(|(meta, data)| Snapshot {
            meta: meta.clone(),
            snapshot: Box::new(Cursor::new(data.clone())),
        }))
    }
}
