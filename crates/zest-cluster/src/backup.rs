//! A partition's part of a backup, and its restore.
//!
//! A backup of a partition is its state at one applied log index, read from a consistent view
//! while the partition keeps processing, written as numbered chunk files (each fsynced) and a
//! `partition.json` that says what they hold. Restoring writes the chunks into the state of an
//! empty data directory and sets the partition's log to start right after that index, as if the
//! log before it had been compacted behind a snapshot: a node started on it continues from the
//! backup, and its key generator (part of the state) continues above every key in it.
//!
//! A backup may also hold log entries below that index ([`write_log_entries`]): those the
//! node's history had not exported when its copy was read (`zest-broker`'s `backup`). They go
//! back into the restored journal below its purge marker ([`restore_log_entries`]), where
//! openraft never reads and the exporter does.

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

/// Writes `bytes` to a new file at `path` and fsyncs it.
pub fn write_synced(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
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

/// Fsyncs the directory `dir` (its new entries), as far as the platform lets it.
pub fn sync_dir(dir: &Path) {
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

/// Log entries `[from, from + entries)` of a partition's backup, in `log-*.chunk` files: each
/// entry its index (8 bytes), its length (4 bytes, little-endian) and its bytes as the journal
/// holds them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntries {
    pub from: u64,
    pub entries: u64,
    pub chunks: u32,
    pub bytes: u64,
}

fn log_chunk_path(dir: &Path, i: u32) -> PathBuf {
    dir.join(format!("log-{i:06}.chunk"))
}

/// Writes the log entries `[from, to]` of `store` into `dir` (none when `to < from`), a chunk
/// file of [`CHUNK_BYTES`] and one entry at most at a time (64 entries read at a time). The caller keeps them from being purged meanwhile
/// (`AppliedInfo::backup_floor`). Blocking.
pub fn write_log_entries(
    store: &PartitionStore,
    dir: &Path,
    from: u64,
    to: u64,
) -> anyhow::Result<LogEntries> {
    const STEP: u64 = 64;
    let mut meta = LogEntries {
        from,
        ..LogEntries::default()
    };
    let mut buf = Vec::new();
    let flush = |buf: &mut Vec<u8>, meta: &mut LogEntries| -> anyhow::Result<()> {
        write_synced(&log_chunk_path(dir, meta.chunks), buf)?;
        meta.chunks += 1;
        meta.bytes += buf.len() as u64;
        buf.clear();
        Ok(())
    };
    let mut at = from;
    while at <= to {
        let raw = store.log_range(at, (at + STEP).min(to + 1))?;
        if raw.is_empty() {
            bail!("the log no longer holds entry {at}");
        }
        for (index, bytes) in raw {
            if index != at {
                bail!("the log holds entry {index} where entry {at} was expected");
            }
            buf.extend_from_slice(&index.to_le_bytes());
            buf.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            buf.extend_from_slice(&bytes);
            meta.entries += 1;
            at += 1;
            if buf.len() >= CHUNK_BYTES {
                flush(&mut buf, &mut meta)?;
            }
        }
    }
    if !buf.is_empty() {
        flush(&mut buf, &mut meta)?;
    }
    Ok(meta)
}

/// Appends the log entries of the backup in `dir` that `meta` names to the journal of
/// `store` (restored from the same backup: the entries end at its state's index) and makes
/// them durable. Blocking.
pub fn restore_log_entries(
    store: &PartitionStore,
    dir: &Path,
    meta: &LogEntries,
) -> anyhow::Result<()> {
    let mut next = meta.from;
    for i in 0..meta.chunks {
        let path = log_chunk_path(dir, i);
        let chunk = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let entries =
            parse_log_chunk(&chunk, next).with_context(|| format!("reading {}", path.display()))?;
        next += entries.len() as u64;
        store.log_append(entries, false)?;
    }
    if next - meta.from != meta.entries {
        bail!(
            "the backup's log chunks hold {} entries, not the {} its partition.json names",
            next - meta.from,
            meta.entries
        );
    }
    store.sync_log()?;
    Ok(())
}

/// The entries of a log chunk, which must start at index `from` and follow each other.
fn parse_log_chunk(mut chunk: &[u8], from: u64) -> anyhow::Result<Vec<(u64, Vec<u8>)>> {
    let mut entries = Vec::new();
    while !chunk.is_empty() {
        if chunk.len() < 12 {
            bail!("a truncated entry header");
        }
        let index = u64::from_le_bytes(chunk[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(chunk[8..12].try_into().expect("4 bytes")) as usize;
        let expected = from + entries.len() as u64;
        if index != expected {
            bail!("entry {index} where entry {expected} was expected");
        }
        let Some(bytes) = chunk.get(12..12 + len) else {
            bail!("entry {index} is truncated");
        };
        entries.push((index, bytes.to_vec()));
        chunk = &chunk[12 + len..];
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zest_storage::{Store, StoreConfig};

    /// Log entries go into a backup's chunk files (several, past a chunk's bytes) and back
    /// into another partition's empty journal as they were; a log that no longer holds an
    /// entry, and a damaged chunk, are refused.
    #[test]
    fn log_entries_are_written_and_restored_as_they_were() {
        let root = std::env::temp_dir().join(format!("zest-backup-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let source = Store::open(&root.join("source"), &StoreConfig::default()).unwrap();
        let source = source.partition(1).unwrap();
        let entries: Vec<(u64, Vec<u8>)> = (1..=12)
            .map(|i| (i, vec![i as u8; if i % 5 == 0 { CHUNK_BYTES } else { 100 }]))
            .collect();
        source.log_append(entries.clone(), true).unwrap();
        let dir = root.join("backup");
        std::fs::create_dir_all(&dir).unwrap();
        let meta = write_log_entries(&source, &dir, 3, 11).unwrap();
        assert_eq!((meta.from, meta.entries), (3, 9));
        assert!(meta.chunks >= 2, "{meta:?}");
        assert_eq!(write_log_entries(&source, &dir, 5, 4).unwrap().entries, 0);
        let other = root.join("other");
        std::fs::create_dir_all(&other).unwrap();
        assert!(
            write_log_entries(&source, &other, 10, 14).is_err(),
            "13 is not there"
        );

        let target = Store::open(&root.join("target"), &StoreConfig::default()).unwrap();
        let target = target.partition(1).unwrap();
        restore_log_entries(&target, &dir, &meta).unwrap();
        assert_eq!(target.log_range(0, 100).unwrap(), entries[2..11].to_vec());

        let chunk = std::fs::read(log_chunk_path(&dir, 0)).unwrap();
        assert!(parse_log_chunk(&chunk[..chunk.len() - 1], 3).is_err());
        assert!(parse_log_chunk(&chunk, 4).is_err(), "entries start at 3");
        let _ = std::fs::remove_dir_all(&root);
    }
}
