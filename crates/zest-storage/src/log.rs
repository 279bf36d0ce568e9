//! The partition's replicated log and consensus metadata (database `log`).

use fjall::PersistMode;

use crate::partition::PartitionStore;
use crate::Result;

impl PartitionStore {
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
        self.persist_state()?;
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
}

fn index_of(k: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    if k.len() == 8 {
        b.copy_from_slice(k);
    }
    u64::from_be_bytes(b)
}
