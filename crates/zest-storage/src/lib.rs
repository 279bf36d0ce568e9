//! Embedded storage on fjall: two databases per node (in the data directory), and per partition
//! the engine's state keyspaces, the replicated log and the consensus metadata.
//!
//! What lives where:
//! - database `log`:
//!   - the log (`p{N}_log`): every replicated entry (a batch of records), fsynced on append; it
//!     is the write-ahead log of the state, so state writes are never fsynced on their own;
//!   - consensus metadata (`p{N}_raft`): vote, committed index, last purged log id;
//! - database `state`:
//!   - state (`p{N}_{kind}`): what the engine's appliers wrote, up to the applied log index that
//!     is stored in the same atomic write batch (`p{N}_sm`).
//!
//! Why two databases: fjall fsyncs a database's journal while holding the lock that every write
//! to that database takes. With log and state in one journal, the state machine's commit of
//! batch N (on an async runtime worker) waited for the fsync of batch N+1, so a command's answer
//! could wait for two fsyncs and the runtime stalled meanwhile. The state journal is never
//! fsynced on the hot path, so its writes never wait for the disk.
//!
//! fjall recovers a prefix of each database's atomic batches after a crash. State is only
//! written for committed (durable) entries, so it is always consistent with some applied index
//! at or before the durable end of the log; replay of the log from that index restores the
//! rest. The one cross-database rule: the state is made durable before log entries are purged
//! ([`PartitionStore::log_purge`]) and after a snapshot replaces it
//! ([`PartitionStore::replace_state`]), since no replay could restore it then. That fsync holds
//! the state journal's lock too, but once per snapshot, not per commit.
//!
//! Queue-like index keyspaces (activatable jobs, due dates) are scanned from seek hints
//! ([`hints`]) so that their tombstones do not slow scans down; nothing of the state is held in
//! memory. A partition's state lives in numbered generations of keyspaces ([`partition`]), so a
//! snapshot from another node or a restored backup is written beside the state and switched to
//! in one durable step ([`transfer`]).

mod hints;
mod log;
mod partition;
mod transfer;

use std::path::Path;

use fjall::{Database, PersistMode};

pub use partition::PartitionStore;
pub use transfer::{ChunkCursor, Staging, StateView};

pub use fjall::Error as FjallError;

/// Name under which snapshots carry the state machine's metadata.
pub const SM_KEYSPACE: &str = "__sm";

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("storage error: {0}")]
    Fjall(#[from] fjall::Error),
    #[error("storage error: {0}")]
    Other(String),
}

pub type Result<T> = std::result::Result<T, StorageError>;

/// Memory limits of the embedded store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// Block cache size in bytes.
    pub cache_bytes: u64,
    /// Upper bound of the journal in bytes (at least 64 MiB); reaching it forces memtables to
    /// be flushed.
    pub journal_bytes: u64,
    /// Write-buffer memory in bytes: each keyspace's memtable is flushed when it reaches an
    /// eighth of it (256 KiB to 8 MiB); a handful of keyspaces take most writes.
    pub write_buffer_bytes: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            cache_bytes: 32 * 1024 * 1024,
            journal_bytes: 64 * 1024 * 1024,
            // With the log in its own database, the state's journal fills (and forces flushes)
            // more slowly, so memtables grew: 32 MiB took peak RSS at max rate from about 85 to
            // 110-114 MiB; 16 MiB brought it to 92-95 MiB at the same throughput (both with
            // mimalloc; with jemalloc, since, 56-62 MiB). Each keyspace flushes at 1/8 of this
            // (`Store::open`), so it bounds each memtable, not their sum: fjall 3.1's cap on
            // the sum (`max_write_buffer_size`) is hidden and deprecated.
            write_buffer_bytes: 16 * 1024 * 1024,
        }
    }
}

/// The version of the encoding of records and state in a data directory, kept in its
/// `FORMAT` file. Records and state values are postcard, which has no field names and no
/// defaults: a struct that gains a field cannot read what was written before. Bump this with
/// any change to a stored or logged struct; a node refuses a directory of another version
/// instead of misreading it.
///
/// - 1: the format before the `FORMAT` file existed;
/// - 2: JOB records carry the job's kind and listener event type;
/// - 3: JOB records carry the worker's result (ad-hoc sub-process jobs);
/// - 4: a scope's variables are one state entry (`zest_engine::scope_variables`), not one
///   entry per variable;
/// - 5: log and state in two fjall databases (`log/`, `state/`) instead of one (`db/`);
/// - 6: a job's result carries a task listener's denial and corrections, a user task record
///   the reason a listener denied it.
pub const FORMAT_VERSION: u32 = 6;

/// Checks (or, for a new directory, writes) the data directory's format version.
fn check_format(dir: &Path) -> Result<()> {
    let file = dir.join("FORMAT");
    let found = match std::fs::read_to_string(&file) {
        Ok(text) => text.trim().parse::<u32>().map_err(|_| {
            StorageError::Other(format!(
                "{} does not hold a format version (a number) but '{}'",
                file.display(),
                text.trim()
            ))
        })?,
        // an existing database without the file was written before format 2
        Err(_) if dir.join("db").exists() => 1,
        Err(_) => {
            std::fs::write(&file, format!("{FORMAT_VERSION}\n")).map_err(|e| {
                StorageError::Other(format!("cannot write {}: {e}", file.display()))
            })?;
            return Ok(());
        }
    };
    if found != FORMAT_VERSION {
        return Err(StorageError::Other(format!(
            "the data directory {} was written in data format {found}, but this Zest reads format {FORMAT_VERSION}; start with an empty data directory (or run the Zest version that wrote it)",
            dir.display()
        )));
    }
    Ok(())
}

/// The node's databases: the log's and the state's (see the module docs).
#[derive(Clone)]
pub struct Store {
    log_db: Database,
    state_db: Database,
    memtable_bytes: u64,
}

impl Store {
    pub fn open(dir: &Path, config: &StoreConfig) -> Result<Store> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StorageError::Other(format!("cannot create {}: {e}", dir.display())))?;
        check_format(dir)?;
        let journal_bytes = config.journal_bytes.max(64 * 1024 * 1024);
        // the state is read far more than the log (which the log store caches at its tail)
        let log_cache = config.cache_bytes / 4;
        let open = |name: &str, cache: u64| {
            Database::builder(dir.join(name))
                .cache_size(cache)
                .max_journaling_size(journal_bytes)
                .manual_journal_persist(true)
                .open()
                .map_err(|e| match e {
                    fjall::Error::Locked => StorageError::Other(format!(
                        "the data directory {} is in use by another Zest process: only one \
                         node can use a data directory at a time; stop the other one, or give \
                         this one its own directory (--data-dir)",
                        dir.display()
                    )),
                    e => StorageError::Fjall(e),
                })
        };
        let log_db = open("log", log_cache)?;
        let state_db = open("state", config.cache_bytes - log_cache)?;
        let memtable_bytes = (config.write_buffer_bytes / 8).clamp(256 * 1024, 8 * 1024 * 1024);
        Ok(Store {
            log_db,
            state_db,
            memtable_bytes,
        })
    }

    pub fn partition(&self, partition_id: u32) -> Result<PartitionStore> {
        PartitionStore::open(
            &self.log_db,
            &self.state_db,
            partition_id,
            self.memtable_bytes,
        )
    }

    /// Bytes on disk (journals and tables).
    pub fn disk_space(&self) -> u64 {
        self.log_db.disk_space().unwrap_or(0) + self.state_db.disk_space().unwrap_or(0)
    }

    /// Makes everything written so far durable (fsync of both journals).
    pub fn sync(&self) -> Result<()> {
        self.log_db.persist(PersistMode::SyncAll)?;
        self.state_db.persist(PersistMode::SyncAll)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
