//! A partition's part of a backup, and its restore.
//!
//! A backup of a partition is its state at one applied log index, read from a consistent view
//! while the partition keeps processing, written as numbered chunk files (each fsynced) and a
//! `partition.json` that says what they hold. Restoring writes the chunks into the state of an
//! empty data directory and sets the partition's log to start right after that index, as if the
//! log before it had been compacted behind a snapshot: a node started on it continues from the
//! backup, and its key generator (part of the state) continues above every key in it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use openraft::{LogId, Vote};
use serde::{Deserialize, Serialize};
use zest_protocol::codec;
use zest_storage::{ChunkCursor, PartitionStore};

use crate::state_machine::{APPLIED, LAST_POSITION};
use crate::NodeId;

/// Size of a chunk file.
const CHUNK_BYTES: usize = 4 << 20;

/// What a partition's backup holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionBackup {
    pub partition_id: u32,
    /// The log entry the state was at.
    pub applied: Option<LogId<NodeId>>,
    /// Position of the last record applied (Zeebe's checkpoint position).
    pub checkpoint_position: u64,
    pub entries: u64,
    pub chunks: u32,
    pub bytes: u64,
}

fn chunk_path(dir: &Path, i: u32) -> PathBuf {
    dir.join(format!("state-{i:06}.chunk"))
}

fn write_synced(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut f =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("writing {}", path.display()))
}

/// Writes the partition's current state into `dir` (created; must not exist). Blocking.
pub fn write_partition_backup(
    store: &PartitionStore,
    dir: &Path,
) -> anyhow::Result<PartitionBackup> {
    if dir.exists() {
        bail!("{} exists already", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let view = store.view()?;
    let applied: Option<LogId<NodeId>> = match view.sm_get(APPLIED)? {
        Some(b) => serde_json::from_slice(&b)?,
        None => None,
    };
    let checkpoint_position = match view.sm_get(LAST_POSITION)? {
        Some(b) => codec::decode::<u64>(&b)?,
        None => 0,
    };
    let mut meta = PartitionBackup {
        partition_id: store.partition_id(),
        applied,
        checkpoint_position,
        entries: 0,
        chunks: 0,
        bytes: 0,
    };
    let mut cursor = ChunkCursor::default();
    while let Some((chunk, next)) = view.next_chunk(&cursor, CHUNK_BYTES)? {
        write_synced(&chunk_path(dir, meta.chunks), &chunk)?;
        meta.chunks += 1;
        meta.bytes += chunk.len() as u64;
        cursor = next;
    }
    drop(view);
    write_synced(
        &dir.join("partition.json"),
        &serde_json::to_vec_pretty(&meta)?,
    )?;
    sync_dir(dir);
    Ok(meta)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Reads what a partition's backup in `dir` holds.
pub fn read_partition_backup(dir: &Path) -> anyhow::Result<PartitionBackup> {
    let path = dir.join("partition.json");
    let text = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("reading {}", path.display()))
}

/// Restores the backup in `dir` into `store`, which must be a new, empty partition. Blocking.
pub fn restore_partition(store: &PartitionStore, dir: &Path) -> anyhow::Result<PartitionBackup> {
    let meta = read_partition_backup(dir)?;
    if store.raft_get("vote")?.is_some() || store.log_last()?.is_some() {
        bail!(
            "partition {} of the target holds data already",
            meta.partition_id
        );
    }
    let mut staging = store.begin_install()?;
    for i in 0..meta.chunks {
        let path = chunk_path(dir, i);
        let chunk = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        staging
            .write_chunk(&chunk)
            .with_context(|| format!("restoring {}", path.display()))?;
    }
    store.finish_install(staging, &[])?;
    // The log starts after the backup's index, as if compacted behind a snapshot there; the
    // vote is for the term of that entry, so this node's next election starts above it.
    if let Some(applied) = meta.applied {
        store.raft_put("last_purged", json(&applied)?)?;
        store.raft_put("committed", json(&Some(applied))?)?;
        let vote = Vote::new_committed(applied.leader_id.term, applied.leader_id.node_id);
        store.raft_put("vote", json(&vote)?)?;
    }
    Ok(meta)
}

fn json<T: Serialize>(value: &T) -> anyhow::Result<Vec<u8>> {
    Ok(serde_json::to_vec(value)?)
}
