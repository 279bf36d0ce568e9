//! A partition's history in its backup (the embedded store only): `docs/design/history.md`,
//! "History in backups".
//!
//! The copy is read as a copy to another replica reads it (`zest_history::copy::Source`: one
//! read transaction, chunk by chunk), before the state's consistent view is taken. The history
//! then stands at an export position whose next log index `N` is at most one past the state's
//! applied index `A`; the log entries `[N, A]` go into the backup too (held from the purge
//! meanwhile by `AppliedInfo::backup_floor`), and a restore puts them back into the journal,
//! where the exporter of the restored node finds them: it exports them from `N` on, so its
//! history reaches the state's index with no gap and goes on from there.
//!
//! ```text
//! <partition dir>/history.json            what the backup holds of the history (HistoryBackup)
//! <partition dir>/history-<i>.chunk        a copy chunk each (zest_protocol::codec)
//! <partition dir>/log-<i>.chunk            the log entries [N, A] (zest_cluster::backup)
//! ```

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use zest_cluster::backup::{LogEntries, PartitionBackup};
use zest_cluster::AppliedInfo;
use zest_history::copy::{Chunk, Cursor, Source};
use zest_history::{Exported, History};
use zest_protocol::codec;
use zest_storage::PartitionStore;

/// What a partition's backup holds of its history.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryBackup {
    /// The position of the last record the copied rows reflect.
    pub position: u64,
    /// The first log index they do not: the restored exporter starts there.
    pub next_index: u64,
    /// The log entries from `next_index` through the state's index.
    pub log: LogEntries,
    pub chunks: u32,
    pub rows: u64,
    pub bytes: u64,
}

fn meta_path(dir: &Path) -> PathBuf {
    dir.join("history.json")
}

fn chunk_path(dir: &Path, i: u32) -> PathBuf {
    dir.join(format!("history-{i:06}.chunk"))
}

/// Keeps the log from `AppliedInfo::export_floor` on (where the exporter stands now, at or
/// before any export position read after this) until dropped.
struct Hold<'a>(&'a AppliedInfo);

impl<'a> Hold<'a> {
    fn new(applied: &'a AppliedInfo) -> Hold<'a> {
        use std::sync::atomic::Ordering::SeqCst;
        let floor = applied.export_floor.load(SeqCst).max(1);
        applied.backup_floor.store(floor, SeqCst);
        Hold(applied)
    }
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.0
            .backup_floor
            .store(0, std::sync::atomic::Ordering::SeqCst);
    }
}

/// What a partition's backup holds: its state, and its history or why not (a sentence for
/// the backup's status and log).
pub(super) struct Written {
    pub state: PartitionBackup,
    pub history: Result<HistoryBackup, String>,
}

/// Writes the partition's state, and with the embedded store its history at the same log
/// index, into `dir`. Blocking.
pub(super) fn write_partition(
    store: &PartitionStore,
    applied: &AppliedInfo,
    history: Option<&History>,
    dir: &Path,
) -> anyhow::Result<Written> {
    let state_only = |why: String| -> anyhow::Result<Written> {
        let state = zest_cluster::backup::write_partition_backup(store, dir)?;
        Ok(Written {
            state,
            history: Err(why),
        })
    };
    let Some(history) = history else {
        return state_only("not included: history is off (--history off)".into());
    };
    if history.is_postgres() {
        return state_only(
            "not included: the history is in PostgreSQL (--history-url), which the database's \
             own backups hold"
                .into(),
        );
    }
    let pid = store.partition_id();
    let hold = Hold::new(applied);
    let source = match history.copy_source(pid) {
        Ok(source) => source,
        Err(e) => {
            drop(hold);
            return state_only(format!(
                "not included ({e}): a node restored from this backup starts the partition's \
                 history with a gap"
            ));
        }
    };
    let end = source.end();
    if applied.installed_gap_over(end.next_index).is_some() {
        drop((source, hold));
        return state_only(
            "not included (a snapshot installed here skipped log entries this node's history \
             had not exported): a node restored from this backup starts the partition's \
             history with a gap"
                .into(),
        );
    }
    let state = zest_cluster::backup::write_partition_backup(store, dir)?;
    let last = state.applied.map_or(0, |id| id.index);
    if end.next_index > last + 1 {
        bail!(
            "the history of partition {pid} is at log index {} past the state's {last}",
            end.next_index
        );
    }
    let log = zest_cluster::backup::write_log_entries(store, dir, end.next_index, last)?;
    drop(hold);
    let mut meta = HistoryBackup {
        position: end.position,
        next_index: end.next_index,
        log,
        chunks: 0,
        rows: 0,
        bytes: 0,
    };
    write_rows(&source, dir, &mut meta)?;
    drop(source);
    zest_cluster::backup::write_synced(&meta_path(dir), &serde_json::to_vec_pretty(&meta)?)?;
    zest_cluster::backup::sync_dir(dir);
    Ok(Written {
        state,
        history: Ok(meta),
    })
}

/// Writes the rows `source` reads into `dir`, a chunk file each, counted in `meta`.
fn write_rows(source: &Source, dir: &Path, meta: &mut HistoryBackup) -> anyhow::Result<()> {
    let mut at = Cursor::default();
    loop {
        let chunk = source.chunk(&at)?;
        let Some(next) = chunk.next.clone() else {
            return Ok(());
        };
        let bytes = codec::encode(&chunk);
        zest_cluster::backup::write_synced(&chunk_path(dir, meta.chunks), &bytes)?;
        meta.chunks += 1;
        meta.rows += chunk.rows.len() as u64;
        meta.bytes += bytes.len() as u64;
        at = next;
    }
}

/// Reads what the partition's backup in `dir` holds of its history (None: nothing).
pub(super) fn read(dir: &Path) -> anyhow::Result<Option<HistoryBackup>> {
    let path = meta_path(dir);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(
            serde_json::from_slice(&bytes)
                .with_context(|| format!("reading {}", path.display()))?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Writes the partition's history of the backup in `dir` into `history` as a copy from a
/// replica is written: its rows emptied, each chunk upserted, then its export position.
pub(super) fn restore_history(
    history: &History,
    pid: u32,
    dir: &Path,
    meta: &HistoryBackup,
) -> anyhow::Result<()> {
    history.copy_begin(pid)?;
    for i in 0..meta.chunks {
        let path = chunk_path(dir, i);
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let chunk: Chunk = codec::decode(&bytes)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        history
            .copy_write(pid, &chunk)
            .with_context(|| format!("restoring {}", path.display()))?;
    }
    history.copy_finish(
        pid,
        Exported {
            position: meta.position,
            next_index: meta.next_index,
            gap_to: 0,
        },
    )?;
    Ok(())
}
