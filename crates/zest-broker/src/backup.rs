//! Backups as Camunda has them (`/actuator/backupRuntime`): a backup, named by a number that
//! grows with every backup, holds every partition's state at one log position, taken from a
//! consistent view while the node keeps processing, in a directory of its own under the
//! configured backup directory:
//!
//! ```text
//! <backup-dir>/<id>/backup.json          status: IN_PROGRESS, COMPLETED or FAILED, per partition
//! <backup-dir>/<id>/partition-<N>/...     zest_cluster::backup (state chunks, partition.json)
//! <backup-dir>/<id>/partition-<N>/history* history (the embedded store's), mod history
//! ```
//!
//! A backup that was in progress when the node stopped is reported FAILED after the restart.
//! `zest restore` builds a data directory from a COMPLETED backup ([`restore`]).

mod history;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use zest_cluster::AppliedInfo;
use zest_storage::{PartitionStore, Store, StoreConfig};

pub use history::HistoryBackup;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BackupState {
    InProgress,
    Completed,
    Failed,
    DoesNotExist,
}

/// One partition's part, as Zeebe reports it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionDetail {
    pub partition_id: u32,
    pub state: BackupState,
    pub created_at: String,
    pub last_updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint_position: Option<u64>,
    pub broker_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Zest's: what the backup holds of the partition's history ("included: ..." or "not
    /// included: why").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<String>,
}

/// A backup's status (`GET /actuator/backupRuntime/{id}`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupStatus {
    pub backup_id: u64,
    pub state: BackupState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    pub details: Vec<PartitionDetail>,
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("No backup store is configured: start Zest with --backup-dir DIR (config file: backup-dir) to take backups")]
    NotConfigured,
    #[error("Expected a backup id greater than 0, but it was {0}")]
    InvalidId(i64),
    #[error("A backup with id {0} already exists")]
    Exists(u64),
    #[error("Expected a backup id greater than the latest backup's id {latest}, but it was {id}")]
    NotNewer { id: u64, latest: u64 },
    #[error("No backup with id {0} exists")]
    NotFound(u64),
    #[error("The backup with id {0} is still being taken; wait until it completes or fails")]
    Busy(u64),
    #[error("{0}")]
    Io(String),
}

fn io(e: impl std::fmt::Display) -> BackupError {
    BackupError::Io(e.to_string())
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The node's backups.
pub struct Backups {
    dir: Option<PathBuf>,
    /// Serialises the status files' read-modify-write.
    lock: Mutex<()>,
    /// Held while a backup is taken: one at a time (each holds the log behind its history
    /// copy, `AppliedInfo::backup_floor`).
    taking: Mutex<()>,
}

/// A partition as a backup reads it.
pub struct PartitionSource {
    pub store: PartitionStore,
    pub applied: Arc<AppliedInfo>,
}

fn status_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(id.to_string()).join("backup.json")
}

fn read_status(dir: &Path, id: u64) -> Option<BackupStatus> {
    let bytes = std::fs::read(status_path(dir, id)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn write_status(dir: &Path, status: &BackupStatus) -> Result<(), BackupError> {
    let path = status_path(dir, status.backup_id);
    let tmp = path.with_extension("json.tmp");
    let bytes = serde_json::to_vec_pretty(status).map_err(io)?;
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)
}

/// The ids of the backups in `dir`, ascending.
fn ids(dir: &Path) -> Vec<u64> {
    let mut ids: Vec<u64> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    ids.sort_unstable();
    ids
}

impl Backups {
    /// Opens the backup directory (if configured); backups left IN_PROGRESS by a node that
    /// stopped are marked FAILED.
    pub fn open(dir: Option<PathBuf>) -> std::io::Result<Backups> {
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir)?;
            for id in ids(dir) {
                if let Some(mut status) = read_status(dir, id) {
                    if status.state == BackupState::InProgress {
                        let reason = "the node stopped while the backup was being taken";
                        status.state = BackupState::Failed;
                        status.failure_reason = Some(reason.into());
                        for d in &mut status.details {
                            if d.state == BackupState::InProgress {
                                d.state = BackupState::Failed;
                                d.failure_reason = Some(reason.into());
                                d.last_updated_at = now();
                            }
                        }
                        let _ = write_status(dir, &status);
                    }
                }
            }
        }
        Ok(Backups {
            dir,
            lock: Mutex::new(()),
            taking: Mutex::new(()),
        })
    }

    fn dir(&self) -> Result<&Path, BackupError> {
        self.dir.as_deref().ok_or(BackupError::NotConfigured)
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers backup `id` as IN_PROGRESS; the caller then runs [`Backups::take`].
    pub fn schedule(&self, id: i64, partitions: &[u32]) -> Result<u64, BackupError> {
        let dir = self.dir()?;
        let id = u64::try_from(id)
            .ok()
            .filter(|id| *id > 0)
            .ok_or(BackupError::InvalidId(id))?;
        let _g = self.guard();
        if dir.join(id.to_string()).exists() {
            return Err(BackupError::Exists(id));
        }
        if let Some(&latest) = ids(dir).last() {
            if latest > id {
                return Err(BackupError::NotNewer { id, latest });
            }
        }
        std::fs::create_dir_all(dir.join(id.to_string())).map_err(io)?;
        let at = now();
        let details = partitions
            .iter()
            .map(|&partition_id| PartitionDetail {
                partition_id,
                state: BackupState::InProgress,
                created_at: at.clone(),
                last_updated_at: at.clone(),
                checkpoint_position: None,
                broker_version: env!("CARGO_PKG_VERSION").into(),
                failure_reason: None,
                history: None,
            })
            .collect();
        write_status(
            dir,
            &BackupStatus {
                backup_id: id,
                state: BackupState::InProgress,
                failure_reason: None,
                details,
            },
        )?;
        Ok(id)
    }

    /// Writes every partition's part of backup `id` (blocking), with its history when
    /// `history` is the embedded store, and records the outcome.
    pub fn take(
        &self,
        id: u64,
        parts: &[PartitionSource],
        history: Option<&zest_history::History>,
    ) {
        let Ok(dir) = self.dir() else { return };
        let _taking = self.taking.lock().unwrap_or_else(|p| p.into_inner());
        let mut failure = None;
        for part in parts {
            let pid = part.store.partition_id();
            let path = dir.join(id.to_string()).join(format!("partition-{pid}"));
            let result = history::write_partition(&part.store, &part.applied, history, &path);
            let _g = self.guard();
            let Some(mut status) = read_status(dir, id) else {
                return;
            };
            if let Some(d) = status.details.iter_mut().find(|d| d.partition_id == pid) {
                if let Err(e) = record(id, d, result) {
                    failure.get_or_insert_with(|| format!("partition {pid}: {e}"));
                }
            }
            let _ = write_status(dir, &status);
        }
        let _g = self.guard();
        if let Some(mut status) = read_status(dir, id) {
            status.state = if failure.is_some() {
                BackupState::Failed
            } else {
                BackupState::Completed
            };
            status.failure_reason = failure;
            if let Err(e) = write_status(dir, &status) {
                tracing::error!(backup = id, "cannot record the backup's outcome: {e}");
            }
        }
        tracing::info!(backup = id, "backup finished");
    }

    pub fn status(&self, id: u64) -> Result<BackupStatus, BackupError> {
        let dir = self.dir()?;
        let _g = self.guard();
        read_status(dir, id).ok_or(BackupError::NotFound(id))
    }

    pub fn list(&self) -> Result<Vec<BackupStatus>, BackupError> {
        let dir = self.dir()?;
        let _g = self.guard();
        Ok(ids(dir)
            .into_iter()
            .filter_map(|id| read_status(dir, id))
            .collect())
    }

    pub fn delete(&self, id: u64) -> Result<(), BackupError> {
        let dir = self.dir()?;
        let _g = self.guard();
        match read_status(dir, id) {
            None if !dir.join(id.to_string()).exists() => Err(BackupError::NotFound(id)),
            Some(s) if s.state == BackupState::InProgress => Err(BackupError::Busy(id)),
            _ => std::fs::remove_dir_all(dir.join(id.to_string())).map_err(io),
        }
    }
}

/// Records the outcome of a partition's part of backup `id` in its detail (and the log);
/// an error is the part's failure.
fn record(
    id: u64,
    d: &mut PartitionDetail,
    result: anyhow::Result<history::Written>,
) -> Result<(), String> {
    d.last_updated_at = now();
    let written = result.map_err(|e| {
        d.state = BackupState::Failed;
        d.failure_reason = Some(format!("{e:#}"));
        format!("{e:#}")
    })?;
    d.state = BackupState::Completed;
    d.checkpoint_position = Some(written.state.checkpoint_position);
    let note = history_note(&written.history);
    let pid = d.partition_id;
    match &written.history {
        Ok(_) => tracing::info!(backup = id, partition = pid, "history {note}"),
        Err(_) => tracing::warn!(backup = id, partition = pid, "history {note}"),
    }
    d.history = Some(note);
    Ok(())
}

/// The status's sentence on what a partition's backup holds of its history.
fn history_note(history: &Result<HistoryBackup, String>) -> String {
    match history {
        Ok(h) => format!(
            "included: {} rows up to position {}, and {} log entries from index {} to export \
             after a restore",
            h.rows, h.position, h.log.entries, h.next_index
        ),
        Err(why) => why.clone(),
    }
}

/// A partition restored from a backup: its state, and its history if the backup holds it.
pub struct Restored {
    pub state: zest_cluster::backup::PartitionBackup,
    pub history: Option<HistoryBackup>,
}

/// Builds a data directory at `data_dir` (new or empty) from the COMPLETED backup `id` in
/// `backup_dir`: each partition's state, and its history where the backup holds it (into
/// `history.sqlite`, with the log entries its exporter goes on from). Returns what each
/// partition got.
pub fn restore(backup_dir: &Path, id: u64, data_dir: &Path) -> anyhow::Result<Vec<Restored>> {
    use anyhow::{bail, Context};
    let status = read_status(backup_dir, id).with_context(|| {
        format!(
            "no backup with id {id} in {} (it has: {:?})",
            backup_dir.display(),
            ids(backup_dir)
        )
    })?;
    if status.state != BackupState::Completed {
        bail!(
            "backup {id} is {:?}, not COMPLETED{}; restore a completed backup",
            status.state,
            status
                .failure_reason
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        );
    }
    if std::fs::read_dir(data_dir).is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "the data directory {} is not empty: restore into a new or empty directory, then start Zest on it",
            data_dir.display()
        );
    }
    let store = Store::open(data_dir, &StoreConfig::default())?;
    let mut parts = BTreeMap::new();
    for d in &status.details {
        let dir = backup_dir
            .join(id.to_string())
            .join(format!("partition-{}", d.partition_id));
        let partition = store.partition(d.partition_id)?;
        let context = || format!("restoring partition {}", d.partition_id);
        let state =
            zest_cluster::backup::restore_partition(&partition, &dir).with_context(context)?;
        let history = history::read(&dir).with_context(context)?;
        if let Some(h) = &history {
            zest_cluster::backup::restore_log_entries(&partition, &dir, &h.log)
                .with_context(context)?;
        }
        parts.insert(d.partition_id, (dir, Restored { state, history }));
    }
    store.sync()?;
    drop(store);
    if parts.values().any(|(_, r)| r.history.is_some()) {
        let path = data_dir.join("history.sqlite");
        let store = zest_history::History::open(&path, 16 << 20)
            .with_context(|| format!("opening {}", path.display()))?;
        for (pid, (dir, r)) in &parts {
            if let Some(h) = &r.history {
                history::restore_history(&store, *pid, dir, h)
                    .with_context(|| format!("restoring the history of partition {pid}"))?;
            }
        }
    }
    // the partition count goes with the data (see `check_partition_count`)
    zest_storage::write_number_file(data_dir, "PARTITIONS", parts.len() as u32)?;
    Ok(parts.into_values().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backup left IN_PROGRESS (the node was killed while taking it) is FAILED after the
    /// restart, with the reason; ids must grow; an unconfigured store refuses clearly.
    #[test]
    fn an_interrupted_backup_is_failed_on_open_and_ids_grow() {
        let dir = std::env::temp_dir().join(format!("zest-backups-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let backups = Backups::open(Some(dir.clone())).unwrap();
        assert_eq!(backups.schedule(3, &[1]).unwrap(), 3);
        assert_eq!(backups.status(3).unwrap().state, BackupState::InProgress);
        assert!(matches!(backups.delete(3), Err(BackupError::Busy(3))));
        assert!(matches!(
            backups.schedule(2, &[1]),
            Err(BackupError::NotNewer { id: 2, latest: 3 })
        ));
        assert!(matches!(
            backups.schedule(3, &[1]),
            Err(BackupError::Exists(3))
        ));
        assert!(matches!(
            backups.schedule(-1, &[1]),
            Err(BackupError::InvalidId(-1))
        ));
        drop(backups);

        let backups = Backups::open(Some(dir.clone())).unwrap();
        let status = backups.status(3).unwrap();
        assert_eq!(status.state, BackupState::Failed);
        assert_eq!(status.details[0].state, BackupState::Failed);
        assert!(status.failure_reason.unwrap().contains("stopped"));
        backups.delete(3).unwrap();
        assert!(matches!(backups.status(3), Err(BackupError::NotFound(3))));

        let none = Backups::open(None).unwrap();
        assert!(matches!(none.list(), Err(BackupError::NotConfigured)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
