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
//! written for committed (durable) entries, and recent writes reach fjall in whole layers with
//! the applied index of their last entry ([`young`]), so it is always consistent with some
//! applied index at or before the durable end of the log; replay of the log from that index
//! restores the rest. The one cross-database rule: the state is made durable before log
//! entries are purged ([`PartitionStore::log_purge`] calls [`PartitionStore::persist_state`])
//! and when an installed snapshot replaces it ([`PartitionStore::finish_install`]), since no
//! replay could restore it then. That fsync holds the state journal's lock too, but once per
//! snapshot, not per commit.
//!
//! Queue-like index keyspaces (activatable jobs, due dates) are scanned from seek hints ([`hints`])
//! so that their tombstones do not slow scans down; of the state, only the young layer's recent
//! writes are held in memory, bounded by bytes. A partition's state lives in numbered generations
//! of keyspaces ([`partition`]), so a snapshot from another node or a restored backup is written
//! beside the state and switched to in one durable step ([`transfer`]).

mod hints;
pub mod journal;
mod log;
mod partition;
mod transfer;
mod young;

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
    /// Size at which the log starts a new segment file ([`journal`]).
    pub segment_bytes: u64,
    /// Partitions of this node, which share the write buffers: each partition's memtables get
    /// their share.
    pub partitions: u32,
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
            // (`Store::open`), the variables and element instances at 1/2
            // (`partition::memtable_for`), so it bounds each memtable, not their sum: fjall
            // 3.1's cap on the sum (`max_write_buffer_size`) is hidden and deprecated.
            write_buffer_bytes: 16 * 1024 * 1024,
            segment_bytes: journal::DEFAULT_SEGMENT_BYTES,
            partitions: 1,
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
///   the reason a listener denied it;
/// - 7: the log in segment files (`journal/partition-N/`) instead of the fjall keyspace
///   `p{N}_log`; a format 6 directory is upgraded on start ([`upgrade_6_to_7`]);
/// - 8: the message subscriptions' index by name in a keyspace of its own
///   (`message_subscription_names`) instead of the tag `n` of `message_subscriptions`; a
///   format 7 directory is upgraded on start ([`upgrade_7_to_8`]);
/// - 9: the process instances by version in `definition_instances`, which deleting a
///   version reads instead of scanning every element instance; a format 8 directory gets it
///   built on start ([`upgrade_8_to_9`]).
pub const FORMAT_VERSION: u32 = 9;

fn write_format(dir: &Path) -> Result<()> {
    write_format_version(dir, FORMAT_VERSION)
}

fn write_format_version(dir: &Path, version: u32) -> Result<()> {
    write_number_file(dir, "FORMAT", version)
}

/// Writes a one-number file of the data directory (`FORMAT`, `PARTITIONS`) durably: a
/// temporary file, fsync, rename, fsync of the directory.
pub fn write_number_file(dir: &Path, name: &str, n: u32) -> Result<()> {
    let file = dir.join(name);
    let tmp = dir.join(format!("{name}.tmp"));
    std::fs::write(&tmp, format!("{n}\n"))
        .and_then(|_| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|_| std::fs::rename(&tmp, &file))
        .and_then(|_| std::fs::File::open(dir)?.sync_all())
        .map_err(|e| StorageError::Other(format!("cannot write {}: {e}", file.display())))
}

/// Checks (or, for a new directory, writes) the data directory's format version; returns the
/// version found (the current one, or one this version upgrades).
fn check_format(dir: &Path) -> Result<u32> {
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
            write_format(dir)?;
            return Ok(FORMAT_VERSION);
        }
    };
    if !(6..=FORMAT_VERSION).contains(&found) {
        return Err(StorageError::Other(format!(
            "the data directory {} was written in data format {found}, but this Zest reads format {FORMAT_VERSION}; start with an empty data directory (or run the Zest version that wrote it)",
            dir.display()
        )));
    }
    Ok(found)
}

/// Format 6 to 7: each partition's log moves from the fjall keyspace `p{N}_log` into its
/// journal. The keyspace is deleted and `FORMAT` says 7 only once every journal is complete
/// and durable; a crash before that leaves format 6, and the next start does it again from the
/// beginning (a journal left half written is removed first).
fn upgrade_6_to_7(dir: &Path, log_db: &Database, segment_bytes: u64) -> Result<()> {
    use fjall::KeyspaceCreateOptions;
    for name in log_db.list_keyspace_names() {
        let name: &str = name.as_ref();
        let Some(pid) = name
            .strip_prefix('p')
            .and_then(|n| n.strip_suffix("_log"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let ks = log_db.keyspace(name, KeyspaceCreateOptions::default)?;
        let journal_dir = journal_dir(dir, pid);
        let _ = std::fs::remove_dir_all(&journal_dir);
        let mut journal = journal::Journal::open(&journal_dir, segment_bytes)?;
        let mut batch = Vec::new();
        let mut moved = 0u64;
        for guard in ks.iter() {
            let (k, v) = guard.into_inner()?;
            let index = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| {
                StorageError::Other(format!("{name}: a log key of {} bytes", k.len()))
            })?);
            batch.push((index, v.to_vec()));
            if batch.len() == 1024 {
                journal.append(&batch, false)?;
                moved += batch.len() as u64;
                batch.clear();
            }
        }
        moved += batch.len() as u64;
        journal.append(&batch, false)?;
        journal.sync()?;
        log_db.delete_keyspace(ks)?;
        log_db.persist(PersistMode::SyncAll)?;
        tracing::info!(
            partition = pid,
            entries = moved,
            "data format 6 -> 7: the log moved into segment files"
        );
    }
    write_format_version(dir, 7)
}

/// Format 7 to 8: in every state generation of every partition, the entries of the tag `n` of
/// `message_subscriptions` (the subscriptions by name) move into `message_subscription_names`.
/// One pass over a consistent read view (fjall's iterators do not see the batches written
/// while they run), in batches of 1024 that copy and delete together: a crash before `FORMAT`
/// says 8 leaves format 7, and the next start moves what is left.
fn upgrade_7_to_8(dir: &Path, state_db: &Database, memtable_bytes: u64) -> Result<()> {
    const FROM: &str = "message_subscriptions";
    const TO: &str = "message_subscription_names";
    for name in state_db.list_keyspace_names() {
        let name: &str = name.as_ref();
        let Some(prefix) = name.strip_suffix(FROM) else {
            continue;
        };
        let options = || partition::keyspace_options(memtable_bytes);
        let from = state_db.keyspace(name, options)?;
        let to = state_db.keyspace(&format!("{prefix}{TO}"), options)?;
        let mut moved = 0u64;
        let mut batch = state_db.batch();
        for guard in from.prefix(b"n") {
            let (k, v) = guard.into_inner()?;
            batch.insert(&to, k.clone(), v);
            batch.remove(&from, k);
            moved += 1;
            if moved.is_multiple_of(1024) {
                std::mem::replace(&mut batch, state_db.batch()).commit()?;
            }
        }
        batch.commit()?;
        state_db.persist(PersistMode::SyncAll)?;
        tracing::info!(
            keyspace = name,
            entries = moved,
            "data format 7 -> 8: the message subscriptions' index by name moved"
        );
    }
    write_format_version(dir, 8)
}

/// Format 8 to 9: in every state generation of every partition, the index of the process
/// instances by version (`definition_instances`) is built from `element_instances`. One pass
/// over a consistent read view, in batches of 1024; writing an entry twice is harmless, so a
/// crash before `FORMAT` says 9 only means the next start builds it again.
fn upgrade_8_to_9(dir: &Path, state_db: &Database, memtable_bytes: u64) -> Result<()> {
    const FROM: &str = "element_instances";
    const TO: &str = "definition_instances";
    for name in state_db.list_keyspace_names() {
        let name: &str = name.as_ref();
        let Some(prefix) = name.strip_suffix(FROM) else {
            continue;
        };
        let options = || partition::keyspace_options(memtable_bytes);
        let from = state_db.keyspace(name, options)?;
        let to = state_db.keyspace(&format!("{prefix}{TO}"), options)?;
        let mut indexed = 0u64;
        let mut batch = state_db.batch();
        for guard in from.iter() {
            let (_, v) = guard.into_inner()?;
            let Some(entry) = zest_engine::queries::definition_instance_entry(&v) else {
                continue;
            };
            batch.insert(&to, entry, b"");
            indexed += 1;
            if indexed.is_multiple_of(1024) {
                std::mem::replace(&mut batch, state_db.batch()).commit()?;
            }
        }
        batch.commit()?;
        state_db.persist(PersistMode::SyncAll)?;
        tracing::info!(
            keyspace = name,
            instances = indexed,
            "data format 8 -> 9: the process instances by version indexed"
        );
    }
    write_format(dir)
}

fn journal_dir(dir: &Path, pid: u32) -> std::path::PathBuf {
    dir.join("journal").join(format!("partition-{pid}"))
}

/// Bytes of the files under `path` (0 when it does not exist).
pub fn dir_bytes(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// fjall counts the keys and values in its memtables, not the skiplist's nodes around them:
/// the memory they held was 1.6-1.7 times the count (jemalloc's heap profile under the
/// realistic benchmark). The memory that `counted` bytes of fjall's count hold:
fn memory_for_counted(counted: u64) -> u64 {
    counted * 8 / 5
}

/// and the count that holds `memory` bytes.
fn counted_for_memory(memory: u64) -> u64 {
    memory * 5 / 8
}

/// fjall weighs a cached block by its header and contents; the memory it holds is more: the
/// allocator rounds a block of 4 KiB and a bit up to its 5 KiB size class, and the cache keeps
/// an entry for it. Under the realistic benchmark the cached blocks' allocations were 1.25
/// times fjall's weight once the cache was full (jemalloc's heap profile, 30.0 MB against a
/// capacity of 24.1 MB). The memory that `weight` bytes of cached blocks hold:
fn memory_for_cached(weight: u64) -> u64 {
    weight * 5 / 4
}

/// and the weight that holds `memory` bytes.
fn cached_for_memory(memory: u64) -> u64 {
    memory * 4 / 5
}

/// The node's databases: the log's and the state's (see the module docs).
#[derive(Clone)]
pub struct Store {
    dir: std::path::PathBuf,
    log_db: Database,
    state_db: Database,
    memtable_bytes: u64,
    /// fjall's count of the state's write buffers above which a commit seals a memtable.
    write_buffer_limit: u64,
    /// Each partition's bound on its young layer ([`young`]).
    young_limit: usize,
    segment_bytes: u64,
    /// The partitions opened, so that [`Store::sync`] reaches their logs.
    opened: std::sync::Arc<std::sync::Mutex<Vec<PartitionStore>>>,
}

/// Flush and compaction threads per fjall database (see [`Store::open`]).
const FJALL_WORKERS: usize = 4;

impl Store {
    pub fn open(dir: &Path, config: &StoreConfig) -> Result<Store> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StorageError::Other(format!("cannot create {}: {e}", dir.display())))?;
        let format = check_format(dir)?;
        let journal_bytes = config.journal_bytes.max(64 * 1024 * 1024);
        // the log database holds only consensus metadata (the log is in segment files)
        let log_cache = (1 << 20).min(config.cache_bytes / 2);
        let open = |name: &str, cache: u64, workers: usize| {
            Database::builder(dir.join(name))
                .cache_size(cached_for_memory(cache))
                .max_journaling_size(journal_bytes)
                .manual_journal_persist(true)
                // fjall's default is min(cores, 4). Its first worker leaves compactions to the
                // others and takes flushes, but it does so by putting a compaction request back
                // on the queue and taking it again, at full speed, until another worker is free:
                // with 2 workers (a 2-core machine) it spins through every compaction the other
                // one runs. With 4 the request finds a free worker more often, and flushes never
                // wait behind compactions (with 1 they do). At 10 M parked instances the others
                // are busy too and it spins again: docs/benchmarks.md (fjall's workers).
                .worker_threads(workers)
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
        // one worker for the consensus metadata, which hardly ever flushes (and one worker
        // never spins)
        let log_db = open("log", log_cache, 1)?;
        let state_db = open("state", config.cache_bytes - log_cache, FJALL_WORKERS)?;
        let memtable_bytes = (config.write_buffer_bytes / 8 / u64::from(config.partitions.max(1)))
            .clamp(256 * 1024, 8 * 1024 * 1024);
        if format == 6 {
            upgrade_6_to_7(dir, &log_db, config.segment_bytes)?;
        }
        if format <= 7 {
            upgrade_7_to_8(dir, &state_db, memtable_bytes)?;
        }
        if format <= 8 {
            upgrade_8_to_9(dir, &state_db, memtable_bytes)?;
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            log_db,
            state_db,
            memtable_bytes,
            // half of the write buffers for fjall's memtables, half for the young layers: a
            // partition's layer is flushed at a third of the write buffers' share, and its
            // layers together (the one being flushed and the next) stay within half of it
            // (`PartitionStore::commit_state`)
            write_buffer_limit: counted_for_memory(config.write_buffer_bytes / 2),
            young_limit: (config.write_buffer_bytes / 3 / u64::from(config.partitions.max(1)))
                as usize,
            segment_bytes: config.segment_bytes,
            opened: Default::default(),
        })
    }

    /// A partition's store, opened once: asked again, the same one (its young layer and its
    /// log are the partition's, and two of them would each hold a part).
    pub fn partition(&self, partition_id: u32) -> Result<PartitionStore> {
        let mut opened = self.opened.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = opened.iter().find(|p| p.partition_id() == partition_id) {
            return Ok(p.clone());
        }
        let journal =
            journal::Journal::open(&journal_dir(&self.dir, partition_id), self.segment_bytes)?;
        let partition = PartitionStore::open(
            &self.log_db,
            &self.state_db,
            journal,
            partition_id,
            self.memtable_bytes,
            self.write_buffer_limit,
            self.young_limit,
        )?;
        opened.push(partition.clone());
        Ok(partition)
    }

    /// Bytes on disk: the log's segments and both databases.
    pub fn disk_space(&self) -> u64 {
        dir_bytes(&self.dir.join("journal"))
            + self.log_db.disk_space().unwrap_or(0)
            + self.state_db.disk_space().unwrap_or(0)
    }

    /// Memory the store uses now: (block cache, write buffers), both databases; the cache as
    /// [`memory_for_cached`] of fjall's weight, the write buffers as [`memory_for_counted`] of
    /// fjall's count.
    /// The young layers count with the write buffers.
    pub fn memory_used(&self) -> (u64, u64) {
        let counted = self.log_db.write_buffer_size() + self.state_db.write_buffer_size();
        let young: usize = self
            .opened
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|p| p.young_bytes())
            .sum();
        (
            memory_for_cached(self.log_db.cache_size() + self.state_db.cache_size()),
            memory_for_counted(counted) + young as u64,
        )
    }

    /// Makes everything written so far durable: the partitions' logs and both databases.
    pub fn sync(&self) -> Result<()> {
        let opened = self
            .opened
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for p in opened {
            p.sync_log()?;
            p.flush_young()?;
        }
        self.log_db.persist(PersistMode::SyncAll)?;
        self.state_db.persist(PersistMode::SyncAll)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
