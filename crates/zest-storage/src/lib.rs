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
//! Queue-like index keyspaces (activatable jobs, job deadlines and backoffs, timer due dates)
//! are also mirrored in memory: every job or timer inserts and soon deletes a key there, and an
//! LSM tree scans through all those tombstones until compaction removes them, so each
//! activation or due-date scan would slow down as a run goes on. The mirror holds only live
//! keys (bounded by the backlog of jobs and timers), is loaded when the partition opens and is
//! updated by the same atomic commit that writes the keyspace.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use zest_engine::state::{Ks, StateRead, Writes};

pub use fjall::Error as FjallError;

/// Name under which snapshots carry the state machine's metadata.
pub const SM_KEYSPACE: &str = "__sm";

/// One state entry of a snapshot: (keyspace name, key, value).
pub type StateEntry = (String, Vec<u8>, Vec<u8>);

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
        let open_in = |db: &Database, name: &str| {
            db.keyspace(&format!("p{partition_id}_{name}"), || {
                KeyspaceCreateOptions::default().max_memtable_size(self.memtable_bytes)
            })
        };
        let open = |name: &str| open_in(&self.state_db, name);
        let mut state = Vec::with_capacity(Ks::ALL.len());
        for ks in Ks::ALL {
            state.push(open(ks.name())?);
        }
        let mirrors = Ks::ALL.map(|ks| mirrored(ks).then(|| RwLock::new(BTreeMap::new())));
        let inner = Inner {
            log_db: self.log_db.clone(),
            state_db: self.state_db.clone(),
            state,
            mirrors,
            log: open_in(&self.log_db, "log")?,
            raft: open_in(&self.log_db, "raft")?,
            sm: open("sm")?,
        };
        inner.load_mirrors()?;
        Ok(PartitionStore {
            inner: Arc::new(inner),
        })
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

/// Live keys of one mirrored keyspace.
type Mirror = RwLock<BTreeMap<Vec<u8>, Vec<u8>>>;

/// Keyspaces whose live keys are also kept in memory (see the module docs).
fn mirrored(ks: Ks) -> bool {
    matches!(
        ks,
        Ks::JobsActivatable
            | Ks::JobDeadlines
            | Ks::JobBackoffs
            | Ks::TimerDueDates
            | Ks::MessageDeadlines
    )
}

struct Inner {
    /// holds `log` and `raft`
    log_db: Database,
    /// holds `state` and `sm`
    state_db: Database,
    state: Vec<Keyspace>,
    mirrors: [Option<Mirror>; Ks::ALL.len()],
    log: Keyspace,
    raft: Keyspace,
    sm: Keyspace,
}

fn write_lock<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

fn read_lock<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    /// Fills the mirrors from the keyspaces.
    fn load_mirrors(&self) -> Result<()> {
        for (i, mirror) in self.mirrors.iter().enumerate() {
            if let Some(mirror) = mirror {
                let mut m = write_lock(mirror);
                m.clear();
                for guard in self.state[i].iter() {
                    let (k, v) = guard.into_inner()?;
                    m.insert(k.to_vec(), v.to_vec());
                }
            }
        }
        Ok(())
    }
}

/// One partition's keyspaces. Cheap to clone.
#[derive(Clone)]
pub struct PartitionStore {
    inner: Arc<Inner>,
}

impl StateRead for PartitionStore {
    fn get(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
        if let Some(m) = &self.inner.mirrors[ks.index()] {
            return read_lock(m).get(key).cloned();
        }
        match self.inner.state[ks.index()].get(key) {
            Ok(v) => v.map(|v| v.to_vec()),
            Err(e) => {
                tracing::error!("state read failed in {}: {e}", ks.name());
                None
            }
        }
    }

    fn scan_prefix(&self, ks: Ks, prefix: &[u8], f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        if let Some(m) = &self.inner.mirrors[ks.index()] {
            let m = read_lock(m);
            for (k, v) in m.range(prefix.to_vec()..) {
                if !k.starts_with(prefix) || !f(k, v) {
                    break;
                }
            }
            return;
        }
        for guard in self.inner.state[ks.index()].prefix(prefix) {
            match guard.into_inner() {
                Ok((k, v)) => {
                    if !f(&k, &v) {
                        break;
                    }
                }
                Err(e) => {
                    tracing::error!("state scan failed in {}: {e}", ks.name());
                    break;
                }
            }
        }
    }
}

impl PartitionStore {
    /// Writes state changes and the state machine's metadata in one atomic batch (no fsync: the
    /// log is the write-ahead log).
    pub fn commit_state(&self, writes: Writes, sm_meta: &[(&[u8], Vec<u8>)]) -> Result<()> {
        let mut batch = self.inner.state_db.batch();
        let mut mirrored_writes = Vec::new();
        for ((ks, k), v) in writes.0 {
            let keyspace = &self.inner.state[ks.index()];
            if self.inner.mirrors[ks.index()].is_some() {
                mirrored_writes.push((ks, k.clone(), v.clone()));
            }
            match v {
                Some(v) => batch.insert(keyspace, k, v),
                None => batch.remove(keyspace, k),
            }
        }
        for (k, v) in sm_meta {
            batch.insert(&self.inner.sm, k.to_vec(), v.clone());
        }
        batch.commit()?;
        for (ks, k, v) in mirrored_writes {
            if let Some(m) = &self.inner.mirrors[ks.index()] {
                let mut m = write_lock(m);
                match v {
                    Some(v) => m.insert(k, v),
                    None => m.remove(&k),
                };
            }
        }
        Ok(())
    }

    pub fn sm_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.inner.sm.get(key)?.map(|v| v.to_vec()))
    }

    /// Every state entry and the state machine's metadata (as keyspace `__sm`), read from one
    /// consistent snapshot: (keyspace name, key, value).
    pub fn dump_state(&self) -> Result<Vec<StateEntry>> {
        let snapshot = self.inner.state_db.snapshot();
        let mut out = Vec::new();
        for (i, ks) in Ks::ALL.iter().enumerate() {
            use fjall::Readable;
            for guard in snapshot.iter(&self.inner.state[i]) {
                let (k, v) = guard.into_inner()?;
                out.push((ks.name().to_string(), k.to_vec(), v.to_vec()));
            }
        }
        {
            use fjall::Readable;
            for guard in snapshot.iter(&self.inner.sm) {
                let (k, v) = guard.into_inner()?;
                out.push((SM_KEYSPACE.to_string(), k.to_vec(), v.to_vec()));
            }
        }
        Ok(out)
    }

    /// Replaces all state with `entries` (snapshot installation), durably: the log behind the
    /// snapshot may be gone, so the state cannot count on a replay.
    pub fn replace_state(
        &self,
        entries: Vec<StateEntry>,
        sm_meta: &[(&[u8], Vec<u8>)],
    ) -> Result<()> {
        for ks in &self.inner.state {
            ks.clear()?;
        }
        self.inner.sm.clear()?;
        let mut batch = self.inner.state_db.batch();
        for (name, k, v) in entries {
            if name == SM_KEYSPACE {
                batch.insert(&self.inner.sm, k, v);
            } else if let Some(ks) = Ks::ALL.iter().find(|ks| ks.name() == name) {
                batch.insert(&self.inner.state[ks.index()], k, v);
            }
        }
        for (k, v) in sm_meta {
            batch.insert(&self.inner.sm, k.to_vec(), v.clone());
        }
        batch.commit()?;
        self.inner.state_db.persist(PersistMode::SyncData)?;
        self.inner.load_mirrors()
    }

    // ---- log ----

    /// Appends log entries (index, bytes). With `fsync` they are durable when this returns;
    /// without, they are handed to the OS (a crash of the process loses nothing, an OS crash or
    /// power loss can lose them until the next [`PartitionStore::sync_log`]).
    pub fn log_append(&self, entries: Vec<(u64, Vec<u8>)>, fsync: bool) -> Result<()> {
        let mut batch = self.inner.log_db.batch();
        for (index, bytes) in entries {
            batch.insert(&self.inner.log, index.to_be_bytes().to_vec(), bytes);
        }
        batch.commit()?;
        self.inner.log_db.persist(if fsync {
            PersistMode::SyncData
        } else {
            PersistMode::Buffer
        })?;
        Ok(())
    }

    /// Makes everything appended so far durable (fsync of the journal, which holds the log).
    pub fn sync_log(&self) -> Result<()> {
        self.inner.log_db.persist(PersistMode::SyncData)?;
        Ok(())
    }

    /// Entries with index in `[from, to)`.
    pub fn log_range(&self, from: u64, to: u64) -> Result<Vec<(u64, Vec<u8>)>> {
        let mut out = Vec::new();
        if from >= to {
            return Ok(out);
        }
        for guard in self.inner.log.range(from.to_be_bytes()..to.to_be_bytes()) {
            let (k, v) = guard.into_inner()?;
            out.push((index_of(&k), v.to_vec()));
        }
        Ok(out)
    }

    pub fn log_last(&self) -> Result<Option<(u64, Vec<u8>)>> {
        match self.inner.log.last_key_value() {
            Some(g) => {
                let (k, v) = g.into_inner()?;
                Ok(Some((index_of(&k), v.to_vec())))
            }
            None => Ok(None),
        }
    }

    pub fn log_first_index(&self) -> Result<Option<u64>> {
        match self.inner.log.first_key_value() {
            Some(g) => Ok(Some(index_of(&g.key()?))),
            None => Ok(None),
        }
    }

    /// Removes entries with index >= `from` (conflicting entries from an old leader).
    pub fn log_truncate(&self, from: u64) -> Result<()> {
        let keys: Vec<_> = self
            .inner
            .log
            .range(from.to_be_bytes()..)
            .map(|g| g.key())
            .collect::<std::result::Result<_, _>>()?;
        let mut batch = self.inner.log_db.batch();
        for k in keys {
            batch.remove(&self.inner.log, k);
        }
        batch.commit()?;
        self.inner.log_db.persist(PersistMode::SyncData)?;
        Ok(())
    }

    /// Removes the log entries `from..=upto` (compaction after a snapshot; the caller knows
    /// where the previous purge ended) and records `meta` (the consensus layer's "last purged"
    /// marker) in the same atomic, durable batch, so a crash leaves either both or neither.
    ///
    /// The keys are computed, not scanned: a scan from the start of the log walks over the
    /// tombstones of every earlier purge until compaction drops them, which made every purge
    /// slower and stalled appends. A range far larger than the log (a snapshot installed from
    /// elsewhere, far ahead of this log) starts at the first entry that exists instead.
    ///
    /// The state database is made durable first: the entries purged here can no longer be
    /// replayed into a state that a crash sent back behind them.
    pub fn log_purge(&self, from: u64, upto: u64, meta: (&str, Vec<u8>)) -> Result<()> {
        self.inner.state_db.persist(PersistMode::SyncData)?;
        let mut from = from;
        if upto.saturating_sub(from) > 1_000_000 {
            from = from.max(self.log_first_index()?.unwrap_or(upto.saturating_add(1)));
        }
        let mut batch = self.inner.log_db.batch();
        batch.insert(&self.inner.raft, meta.0, meta.1);
        for index in from..=upto {
            batch.remove(&self.inner.log, index.to_be_bytes());
        }
        batch.commit()?;
        self.inner.log_db.persist(PersistMode::SyncData)?;
        Ok(())
    }

    pub fn raft_get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.inner.raft.get(key)?.map(|v| v.to_vec()))
    }

    /// Writes consensus metadata durably.
    pub fn raft_put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.inner.raft.insert(key, value)?;
        self.inner.log_db.persist(PersistMode::SyncData)?;
        Ok(())
    }

    /// Writes consensus metadata without fsync (it becomes durable with the next sync).
    pub fn raft_put_nosync(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.inner.raft.insert(key, value)?;
        Ok(())
    }

    pub fn log_disk_space(&self) -> u64 {
        self.inner.log.disk_space()
    }

    pub fn state_disk_space(&self) -> u64 {
        self.inner.state.iter().map(|k| k.disk_space()).sum()
    }
}

fn index_of(k: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    if k.len() == 8 {
        b.copy_from_slice(k);
    }
    u64::from_be_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zest_engine::state::Txn;

    #[test]
    fn state_and_log_survive_reopen() {
        let dir = std::env::temp_dir().join(format!("zest-storage-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let store = Store::open(&dir, &StoreConfig::default()).unwrap();
            let p = store.partition(1).unwrap();
            let mut txn = Txn::new(&p);
            txn.put_raw(Ks::Jobs, vec![1], vec![42]);
            p.commit_state(txn.into_writes(), &[(b"applied", vec![7])])
                .unwrap();
            p.log_append(vec![(1, vec![1]), (2, vec![2]), (3, vec![3])], true)
                .unwrap();
            p.log_truncate(3).unwrap();
            p.log_purge(0, 1, ("last_purged", b"1".to_vec())).unwrap();
            store.sync().unwrap();
        }
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        assert_eq!(p.get(Ks::Jobs, &[1]), Some(vec![42]));
        assert_eq!(p.sm_get(b"applied").unwrap(), Some(vec![7]));
        assert_eq!(p.log_range(0, 10).unwrap(), vec![(2, vec![2])]);
        assert_eq!(p.log_first_index().unwrap(), Some(2));
        assert_eq!(p.raft_get("last_purged").unwrap(), Some(b"1".to_vec()));
        assert_eq!(p.log_last().unwrap().map(|(i, _)| i), Some(2));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A process killed right after an append without fsync (no destructors run, as with
    /// SIGKILL) must not lose it: the append reached the OS, which outlives the process.
    #[test]
    fn appends_without_fsync_survive_a_killed_process() {
        const CHILD: &str = "ZEST_STORAGE_TEST_KILLED_CHILD";
        if let Some(dir) = std::env::var_os(CHILD) {
            let store = Store::open(std::path::Path::new(&dir), &StoreConfig::default()).unwrap();
            let p = store.partition(1).unwrap();
            p.log_append(vec![(1, vec![1; 100]), (2, vec![2; 100])], false)
                .unwrap();
            std::process::abort();
        }
        let dir = std::env::temp_dir().join(format!("zest-killed-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tests::appends_without_fsync_survive_a_killed_process",
                "--test-threads=1",
            ])
            .env(CHILD, &dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!status.success(), "the child process should have aborted");
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        assert_eq!(
            p.log_range(0, 10).unwrap(),
            vec![(1, vec![1; 100]), (2, vec![2; 100])]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_data_directory_of_another_format_is_refused_with_a_clear_error() {
        let dir = std::env::temp_dir().join(format!("zest-format-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        drop(Store::open(&dir, &StoreConfig::default()).unwrap());
        let written = std::fs::read_to_string(dir.join("FORMAT")).unwrap();
        assert_eq!(written.trim(), FORMAT_VERSION.to_string());
        // reopening the same format works
        drop(Store::open(&dir, &StoreConfig::default()).unwrap());
        // a database from before the FORMAT file (one fjall database, `db/`): format 1
        std::fs::remove_file(dir.join("FORMAT")).unwrap();
        std::fs::create_dir_all(dir.join("db")).unwrap();
        let err = Store::open(&dir, &StoreConfig::default()).err().unwrap();
        assert!(err.to_string().contains("data format 1"), "{err}");
        assert!(err.to_string().contains("empty data directory"), "{err}");
        std::fs::write(dir.join("FORMAT"), "99\n").unwrap();
        let err = Store::open(&dir, &StoreConfig::default()).err().unwrap();
        assert!(err.to_string().contains("data format 99"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn scan(p: &PartitionStore, ks: Ks, prefix: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        p.scan_prefix(ks, prefix, &mut |k, _| {
            out.push(k.to_vec());
            true
        });
        out
    }

    #[test]
    fn mirrored_keyspaces_follow_commits_reopen_and_snapshots() {
        let dir = std::env::temp_dir().join(format!("zest-mirror-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |p: &PartitionStore, puts: &[&[u8]], dels: &[&[u8]]| {
            let mut txn = Txn::new(p);
            for k in puts {
                txn.put_raw(Ks::JobsActivatable, k.to_vec(), vec![]);
            }
            for k in dels {
                txn.delete(Ks::JobsActivatable, k.to_vec());
            }
            p.commit_state(txn.into_writes(), &[]).unwrap();
        };
        {
            let store = Store::open(&dir, &StoreConfig::default()).unwrap();
            let p = store.partition(1).unwrap();
            write(&p, &[b"a1", b"a2", b"b1", b"a3"], &[]);
            write(&p, &[], &[b"a2"]);
            assert_eq!(
                scan(&p, Ks::JobsActivatable, b"a"),
                vec![b"a1".to_vec(), b"a3".to_vec()]
            );
            assert_eq!(p.get(Ks::JobsActivatable, b"b1"), Some(vec![]));
            assert_eq!(p.get(Ks::JobsActivatable, b"a2"), None);
            store.sync().unwrap();
        }
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        assert_eq!(
            scan(&p, Ks::JobsActivatable, b"a"),
            vec![b"a1".to_vec(), b"a3".to_vec()]
        );
        let dump = p.dump_state().unwrap();
        p.replace_state(
            vec![("jobs_activatable".into(), b"c1".to_vec(), vec![])],
            &[],
        )
        .unwrap();
        assert_eq!(scan(&p, Ks::JobsActivatable, b""), vec![b"c1".to_vec()]);
        p.replace_state(dump, &[]).unwrap();
        assert_eq!(
            scan(&p, Ks::JobsActivatable, b""),
            vec![b"a1".to_vec(), b"a3".to_vec(), b"b1".to_vec()]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
