//! The partition's replicated log (its [`Journal`] of segment files) and consensus metadata
//! (`p{N}_raft` in the database `log`).

use fjall::PersistMode;

use crate::journal::Journal;
use crate::partition::PartitionStore;
use crate::Result;

impl PartitionStore {
    fn journal(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.inner.journal.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends log entries (index, bytes). With `fsync` they are durable when this returns;
    /// without, they are handed to the OS (a crash of the process loses nothing, an OS crash or
    /// power loss can lose them until the next [`PartitionStore::sync_log`]).
    pub fn log_append(&self, entries: Vec<(u64, Vec<u8>)>, fsync: bool) -> Result<()> {
        self.change_journal(|j| j.append(&entries, fsync))
    }

    /// Runs a change of the journal, then publishes its size for
    /// [`PartitionStore::log_disk_space`], which must not wait for the journal's lock (an
    /// append holds it through its fsync).
    fn change_journal<T>(&self, change: impl FnOnce(&mut Journal) -> Result<T>) -> Result<T> {
        let mut journal = self.journal();
        let result = change(&mut journal);
        self.inner
            .log_bytes
            .store(journal.disk_bytes(), std::sync::atomic::Ordering::Relaxed);
        result
    }

    /// Makes everything appended so far durable (fsync of the segments written since the
    /// last sync, and of the consensus metadata).
    pub fn sync_log(&self) -> Result<()> {
        self.journal().sync()?;
        self.inner.log_db.persist(PersistMode::SyncData)?;
        Ok(())
    }

    /// Entries with index in `[from, to)`.
    pub fn log_range(&self, from: u64, to: u64) -> Result<Vec<(u64, Vec<u8>)>> {
        self.journal().range(from, to)
    }

    pub fn log_last(&self) -> Result<Option<(u64, Vec<u8>)>> {
        let mut j = self.journal();
        match j.last_index() {
            Some(last) => Ok(j.range(last, last + 1)?.pop()),
            None => Ok(None),
        }
    }

    /// Index of the first entry on disk.
    pub fn log_first_index(&self) -> Result<Option<u64>> {
        Ok(self.journal().first_index())
    }

    /// Removes entries with index >= `from` (conflicting entries from an old leader).
    pub fn log_truncate(&self, from: u64) -> Result<()> {
        self.change_journal(|j| j.truncate(from))
    }

    /// Records `meta` (the consensus layer's "last purged" marker) durably, then deletes the
    /// segments whose entries are all at or before `upto` (compaction after a snapshot).
    ///
    /// The state database is made durable first: the entries purged here can no longer be
    /// replayed into a state that a crash sent back behind them. The marker goes before the
    /// deletion, so a crash between them leaves segments that the next purge deletes.
    pub fn log_purge(&self, upto: u64, meta: (&str, Vec<u8>)) -> Result<()> {
        self.persist_state()?;
        self.inner.raft.insert(meta.0, meta.1)?;
        self.inner.log_db.persist(PersistMode::SyncData)?;
        let freed = self.change_journal(|j| j.purge(upto))?;
        if freed > 0 {
            tracing::debug!(upto, freed, "log segments deleted behind the snapshot");
        }
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

    /// Bytes of the log's segment files; never waits (see `change_journal`).
    pub fn log_disk_space(&self) -> u64 {
        self.inner
            .log_bytes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Bytes of the log's entries from `index` on (what an exporter at `index` holds).
    pub fn log_bytes_from(&self, index: u64) -> u64 {
        self.journal().bytes_from(index)
    }

    pub fn log_segments(&self) -> usize {
        self.journal().segment_count()
    }
}
