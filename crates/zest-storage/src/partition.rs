//! One partition's state: the engine's keyspaces and the state machine's metadata, in a
//! numbered generation of keyspaces so that a whole new state (a snapshot received from
//! another node, a restored backup) can be written beside the old one and switched to in one
//! durable step.
//!
//! Generation 0 uses the names `p{N}_{kind}` and `p{N}_sm`; generation g > 0 uses
//! `p{N}g{g}_{kind}` and `p{N}g{g}_sm`. The current generation's number is kept in `p{N}_gen`
//! (state database). Keyspaces of any other generation of the partition are leftovers of an
//! interrupted installation or of one that replaced them, and are deleted when the partition
//! opens.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use parking_lot::{RwLock as RecursiveRwLock, RwLockReadGuard, RwLockWriteGuard};

use fjall::AbstractTree;
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use zest_engine::state::{scan_shadowed, Ks, StateRead, Writes, META_MAX_KEY};

use crate::hints::{SeekHints, Start};
use crate::young::{Layer, Young};
use crate::{Result, StorageError};

const CURRENT: &[u8] = b"current";

/// Keyspaces whose scans start from a seek hint (see [`crate::hints`]).
fn queue_like(ks: Ks) -> bool {
    matches!(
        ks,
        Ks::JobsActivatable
            | Ks::JobDeadlines
            | Ks::JobBackoffs
            | Ks::TimerDueDates
            | Ks::MessageDeadlines
    )
}

/// How a state keyspace is created. Memtables are capped per keyspace (`--write-buffer-mb`).
/// Index and filter blocks are never pinned in memory: they go through the block cache, which
/// `--memory-mb` bounds. fjall pins them for level 0 by default, and a table keeps what it
/// pinned when compaction moves it down without rewriting it, which it does with keys that
/// only grow (instance, job and element keys): every table ever flushed kept about 40 KiB
/// pinned, and a fill of 10 M parked instances held 465 MiB, most of it that. The options are
/// stored with a keyspace when it is created; tables are opened with them again on restart.
pub(crate) fn keyspace_options(memtable_bytes: u64) -> KeyspaceCreateOptions {
    KeyspaceCreateOptions::default()
        .max_memtable_size(memtable_bytes)
        .index_block_pinning_policy(fjall::config::PinningPolicy::all(false))
        .filter_block_pinning_policy(fjall::config::PinningPolicy::all(false))
}

/// The memtable of a state keyspace: 4 times `base` (1/8 of `--write-buffer-mb`, so 1/2 of it)
/// for the two that hold most of a large state's bytes, `base` for the others.
///
/// Their keys only grow (instance and element keys), so a flushed table is moved down the tree
/// without being rewritten and keeps the size a flush gave it: with 2 MiB memtables the
/// variables held 5427 tables at 10 M parked instances. fjall's bookkeeping of every such move
/// sorts the level's tables again, at a cost that grows with their number, and it was most of
/// what slowed a fill as the state grew (docs/benchmarks.md, "fjall's workers").
fn memtable_for(ks: Ks, base: u64) -> u64 {
    match ks {
        Ks::Variables | Ks::ElementInstances => base * 4,
        _ => base,
    }
}

/// fjall bounds each memtable (`max_memtable_size`), not their sum (its cap on the sum is
/// hidden, deprecated and not enforced in 3.1), and with a few dozen keyspaces per partition
/// the sum went to twice the budget under the realistic benchmark. When the state database's
/// write buffers pass the limit, this partition's largest active memtables are sealed, as
/// many as cover the excess, and fjall's flush workers write them out; one that is still small
/// is left alone, so that a flush that lags behind does not turn into a stream of tiny tables.
fn bound_write_buffers(inner: &Inner, gen: &Generation) -> Result<()> {
    let held = inner.state_db.write_buffer_size();
    if inner.write_buffer_limit == 0 || held <= inner.write_buffer_limit {
        return Ok(());
    }
    // largest first, until what is sealed covers the excess (a flush of the young layer
    // fills several memtables at once)
    let mut active: Vec<(u64, &Keyspace)> = gen
        .state
        .iter()
        .map(|ks| (ks.tree.active_memtable().size(), ks))
        .filter(|(size, _)| *size >= inner.memtable_bytes / 4)
        .collect();
    active.sort_by_key(|(size, _)| std::cmp::Reverse(*size));
    let mut excess = held - inner.write_buffer_limit;
    for (size, ks) in active {
        if excess == 0 {
            break;
        }
        ks.rotate_memtable()?;
        excess = excess.saturating_sub(size);
    }
    Ok(())
}

fn prefix_of(pid: u32, generation: u64) -> String {
    if generation == 0 {
        format!("p{pid}_")
    } else {
        format!("p{pid}g{generation}_")
    }
}

/// The keyspaces of one generation of a partition's state.
pub(crate) struct Generation {
    pub(crate) number: u64,
    pub(crate) state: Vec<Keyspace>,
    pub(crate) sm: Keyspace,
    hints: Vec<Option<SeekHints>>,
}

impl Generation {
    pub(crate) fn open(
        db: &Database,
        pid: u32,
        number: u64,
        memtable_bytes: u64,
    ) -> Result<Generation> {
        let prefix = prefix_of(pid, number);
        let open = |name: &str, memtable: u64| {
            db.keyspace(&format!("{prefix}{name}"), || keyspace_options(memtable))
        };
        let mut state = Vec::with_capacity(Ks::ALL.len());
        for ks in Ks::ALL {
            state.push(open(ks.name(), memtable_for(ks, memtable_bytes))?);
        }
        Ok(Generation {
            number,
            state,
            sm: open("sm", memtable_bytes)?,
            hints: Ks::ALL
                .iter()
                .map(|ks| queue_like(*ks).then(SeekHints::default))
                .collect(),
        })
    }

    /// The highest key this partition generated, as this generation holds it (the
    /// partition's first key when it holds none).
    pub(crate) fn max_key(&self, pid: u32) -> Result<i64> {
        Ok(match self.state[Ks::Meta.index()].get(META_MAX_KEY)? {
            Some(v) => zest_protocol::codec::decode::<i64>(&v)
                .map_err(|e| StorageError::Other(format!("partition {pid}: max key: {e}")))?,
            None => zest_protocol::encode_key(pid, 0),
        })
    }

    fn keyspaces(&self) -> impl Iterator<Item = &Keyspace> {
        self.state.iter().chain(std::iter::once(&self.sm))
    }

    /// The keyspace that holds `name` (a [`Ks`] name, or [`crate::SM_KEYSPACE`]).
    pub(crate) fn by_name(&self, name: &str) -> Option<&Keyspace> {
        if name == crate::SM_KEYSPACE {
            return Some(&self.sm);
        }
        Ks::ALL
            .iter()
            .position(|ks| ks.name() == name)
            .map(|i| &self.state[i])
    }
}

pub(crate) struct Inner {
    pub(crate) pid: u32,
    /// holds `log` and `raft`
    pub(crate) log_db: Database,
    /// holds the generations of the state and `gen`
    pub(crate) state_db: Database,
    pub(crate) memtable_bytes: u64,
    /// The state database's write buffers (every partition's memtables, active and sealed)
    /// above which a commit seals this partition's largest memtable ([`bound_write_buffers`]).
    pub(crate) write_buffer_limit: u64,
    /// Bytes of recent writes held in memory before they are flushed to fjall ([`crate::young`]).
    pub(crate) young_limit: usize,
    /// parking_lot's lock, for its recursive reads (see `scan_prefix`).
    pub(crate) young: RecursiveRwLock<Young>,
    /// Held by a flush and by a switch of generation, one at a time.
    pub(crate) flush_lock: Mutex<()>,
    /// A flush thread runs ([`PartitionStore::commit_state`]).
    pub(crate) flush_running: AtomicBool,
    /// Why a flush thread failed: every commit fails after it.
    pub(crate) flush_failed: Mutex<Option<String>>,
    /// Flushes still to fail, for the tests of a failed flush.
    #[cfg(test)]
    pub(crate) failing_flushes: std::sync::atomic::AtomicUsize,
    pub(crate) current: RwLock<Arc<Generation>>,
    pub(crate) gen: Keyspace,
    pub(crate) journal: std::sync::Mutex<crate::journal::Journal>,
    /// The journal's bytes on disk, published after every change of it.
    pub(crate) log_bytes: std::sync::atomic::AtomicU64,
    pub(crate) raft: Keyspace,
    /// The numbers of the generations being staged ([`crate::Staging`]): each staging gets a
    /// number of its own, and removing leftovers spares them (two transfers can overlap, a
    /// snapshot from a deposed leader and one from the new leader, say).
    pub(crate) staging: Arc<std::sync::Mutex<std::collections::BTreeSet<u64>>>,
}

/// One partition's keyspaces. Cheap to clone.
#[derive(Clone)]
pub struct PartitionStore {
    pub(crate) inner: Arc<Inner>,
}

impl PartitionStore {
    pub(crate) fn open(
        log_db: &Database,
        state_db: &Database,
        journal: crate::journal::Journal,
        pid: u32,
        memtable_bytes: u64,
        write_buffer_limit: u64,
        young_limit: usize,
    ) -> Result<PartitionStore> {
        let opts = || keyspace_options(memtable_bytes);
        let gen = state_db.keyspace(&format!("p{pid}_gen"), opts)?;
        let number = match gen.get(CURRENT)? {
            Some(b) => u64::from_be_bytes(b.as_ref().try_into().map_err(|_| {
                StorageError::Other(format!("partition {pid}: unreadable state generation"))
            })?),
            None => 0,
        };
        let current = Generation::open(state_db, pid, number, memtable_bytes)?;
        let young = Young::new(current.max_key(pid)?);
        let store = PartitionStore {
            inner: Arc::new(Inner {
                pid,
                log_db: log_db.clone(),
                state_db: state_db.clone(),
                memtable_bytes,
                write_buffer_limit,
                young_limit,
                young: RecursiveRwLock::new(young),
                flush_lock: Mutex::new(()),
                flush_running: AtomicBool::new(false),
                flush_failed: Mutex::new(None),
                #[cfg(test)]
                failing_flushes: Default::default(),
                current: RwLock::new(Arc::new(current)),
                gen,
                log_bytes: std::sync::atomic::AtomicU64::new(journal.disk_bytes()),
                journal: std::sync::Mutex::new(journal),
                raft: log_db.keyspace(&format!("p{pid}_raft"), opts)?,
                staging: Arc::default(),
            }),
        };
        store.delete_other_generations()?;
        Ok(store)
    }

    pub(crate) fn generation(&self) -> Arc<Generation> {
        self.inner
            .current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Deletes the keyspaces of every generation of this partition but the current one.
    pub(crate) fn delete_other_generations(&self) -> Result<()> {
        let staging = self.inner.staging.lock().unwrap_or_else(|p| p.into_inner());
        self.delete_generations_but(&staging)
    }

    /// Deletes every generation but the current one and those in `staging`.
    pub(crate) fn delete_generations_but(
        &self,
        staging: &std::collections::BTreeSet<u64>,
    ) -> Result<()> {
        let db = &self.inner.state_db;
        let pid = self.inner.pid;
        let current = self.generation().number;
        let keep = prefix_of(pid, current);
        let staged: Vec<String> = staging.iter().map(|&n| prefix_of(pid, n)).collect();
        let own = |name: &str| {
            let plain = format!("p{pid}_");
            let numbered = format!("p{pid}g");
            (name.starts_with(&plain) && name != format!("p{pid}_gen"))
                || name
                    .strip_prefix(&numbered)
                    .is_some_and(|rest| rest.split('_').next().is_some_and(is_number))
        };
        for name in db.list_keyspace_names() {
            let name: &str = name.as_ref();
            if own(name) && !name.starts_with(&keep) && !staged.iter().any(|p| name.starts_with(p))
            {
                let ks = db.keyspace(name, KeyspaceCreateOptions::default)?;
                db.delete_keyspace(ks)?;
                tracing::info!(keyspace = name, "deleted a replaced state generation");
            }
        }
        Ok(())
    }

    /// Makes `next` the current generation, durably, and deletes the one it replaces.
    /// What the young layer held of the replaced state is dropped with it.
    pub(crate) fn switch_to(&self, next: Generation) -> Result<()> {
        let _flush = self
            .inner
            .flush_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let max_key = next.max_key(self.inner.pid)?;
        self.inner.state_db.persist(PersistMode::SyncAll)?;
        self.inner
            .gen
            .insert(CURRENT, next.number.to_be_bytes().to_vec())?;
        self.inner.state_db.persist(PersistMode::SyncAll)?;
        {
            let mut young = self.young_mut();
            *self
                .inner
                .current
                .write()
                .unwrap_or_else(|p| p.into_inner()) = Arc::new(next);
            *young = Young::new(max_key);
        }
        self.delete_other_generations()
    }

    /// A read of the young layer: recursive, so that a scan that holds one may read again
    /// even while a commit waits for the write lock.
    fn young(&self) -> RwLockReadGuard<'_, Young> {
        self.inner.young.read_recursive()
    }

    fn young_mut(&self) -> RwLockWriteGuard<'_, Young> {
        self.inner.young.write()
    }

    /// Bytes the young layer holds now.
    pub fn young_bytes(&self) -> usize {
        self.young().bytes()
    }

    pub fn partition_id(&self) -> u32 {
        self.inner.pid
    }

    /// Takes state changes and the state machine's metadata into the young layer (no fsync: the
    /// log is the write-ahead log; see [`crate::young`]). Once the layer is full (`Young::is_full`:
    /// `young_limit` bytes or 1024 commits), a thread of its own flushes it to fjall, so that
    /// the commits after it do not wait; only when the next layer reaches half of that before
    /// the flush ends does a commit wait for it (both layers stay within 1.5 times the limit).
    pub fn commit_state<'m>(
        &self,
        writes: Writes,
        sm_meta: impl IntoIterator<Item = (&'m [u8], Vec<u8>)>,
    ) -> Result<()> {
        if let Some(e) = self
            .inner
            .flush_failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Err(StorageError::Other(format!(
                "flushing the young layer failed: {e}"
            )));
        }
        let (full, over) = {
            let mut young = self.young_mut();
            young.commit(writes, sm_meta);
            let limit = self.inner.young_limit;
            (young.is_full(limit), young.bytes() >= limit + limit / 2)
        };
        if over {
            return self.flush_young();
        }
        if full && !self.inner.flush_running.swap(true, Ordering::SeqCst) {
            let store = self.clone();
            let spawned = std::thread::Builder::new()
                .name("zest-flush".into())
                .spawn(move || {
                    if let Err(e) = store.flush_young() {
                        tracing::error!("flushing the young layer failed: {e}");
                        *store
                            .inner
                            .flush_failed
                            .lock()
                            .unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                    }
                    store.inner.flush_running.store(false, Ordering::SeqCst);
                });
            if spawned.is_err() {
                self.inner.flush_running.store(false, Ordering::SeqCst);
                return self.flush_young();
            }
        }
        Ok(())
    }

    /// Writes the young layer to fjall in one atomic batch with the metadata of its last
    /// commit. Readers find the layer until the batch is visible. Commits go on meanwhile; a
    /// layer that filled while the last one was written is flushed too.
    pub fn flush_young(&self) -> Result<()> {
        let _flush = self
            .inner
            .flush_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        loop {
            let (layer, retried) = {
                let mut young = self.young_mut();
                match &young.flushing {
                    // a flush that failed: written again first, then the active layer
                    Some(layer) => (layer.clone(), true),
                    None if young.active.entries.is_empty() && young.active.meta.is_empty() => {
                        return Ok(())
                    }
                    None => (young.begin_flush(), false),
                }
            };
            self.write_layer(&layer)?;
            let mut young = self.young_mut();
            young.flushing = None;
            if !retried && !young.is_full(self.inner.young_limit) {
                return Ok(());
            }
        }
    }

    fn write_layer(&self, layer: &Layer) -> Result<()> {
        #[cfg(test)]
        if (self.inner.failing_flushes)
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(StorageError::Other("an injected flush failure".into()));
        }
        let gen = self.generation();
        let mut batch = fjall::OwnedWriteBatch::with_capacity(
            self.inner.state_db.clone(),
            layer.entries.len() + layer.meta.len(),
        );
        let mut inserted = Vec::new();
        for ((ks, k), v) in &layer.entries {
            let keyspace = &gen.state[ks.index()];
            match v {
                Some(v) => {
                    if gen.hints[ks.index()].is_some() {
                        inserted.push((*ks, k.clone()));
                    }
                    batch.insert(keyspace, k.clone(), v.clone())
                }
                None => batch.remove(keyspace, k.clone()),
            }
        }
        for (k, v) in &layer.meta {
            batch.insert(&gen.sm, k.clone(), v.clone());
        }
        batch.commit()?;
        // only now are the inserts visible to scans (see `hints`)
        for (ks, k) in inserted {
            if let Some(h) = &gen.hints[ks.index()] {
                h.inserted(&k);
            }
        }
        bound_write_buffers(&self.inner, &gen)?;
        Ok(())
    }

    pub fn sm_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.young().meta(key) {
            return Ok(Some(v));
        }
        Ok(self.generation().sm.get(key)?.map(|v| v.to_vec()))
    }

    /// Makes the state committed so far durable: the young layer is flushed, then the state
    /// journal fsynced.
    pub fn persist_state(&self) -> Result<()> {
        self.flush_young()?;
        self.inner.state_db.persist(PersistMode::SyncAll)?;
        Ok(())
    }

    pub fn state_disk_space(&self) -> u64 {
        self.generation().keyspaces().map(|k| k.disk_space()).sum()
    }
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The first key after every key that starts with `prefix` (None: no such key, the prefix is
/// empty or all 0xFF).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

fn scan_from(
    keyspace: &Keyspace,
    ks: Ks,
    from: &[u8],
    prefix: &[u8],
    f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) -> Option<Vec<u8>> {
    let mut first = None;
    // Bounded by the prefix's end: an open range made the store skip every deleted key after
    // the prefix's last live one before it could tell there was nothing more to see (a publish
    // spent most of its time there behind short-lived message subscriptions).
    let range: Box<dyn Iterator<Item = fjall::Guard>> = match prefix_end(prefix) {
        Some(end) => Box::new(keyspace.range(from.to_vec()..end)),
        None => Box::new(keyspace.range(from.to_vec()..)),
    };
    for guard in range {
        match guard.into_inner() {
            Ok((k, v)) => {
                if !k.starts_with(prefix) {
                    break;
                }
                if first.is_none() {
                    first = Some(k.to_vec());
                }
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
    first
}

impl StateRead for PartitionStore {
    fn get(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
        if let Some(v) = self.young().get(ks, key) {
            return v;
        }
        Fjall(self).get(ks, key)
    }

    /// fjall's entries merged with the young layer's. The layer's read lock is held through
    /// the whole scan, also when the layer has nothing under the prefix (recursively: `f` may
    /// read the store again). No commit enters the layer and no layer leaves it until the scan
    /// ends, so the only batches fjall takes meanwhile are of the layer being flushed, which
    /// shadows them. A scan that let the lock go when the layer had nothing under the prefix
    /// saw an old entry and its successor at once while the flush thread wrote
    /// (`scans_see_one_state_while_the_layer_is_flushed`, 2 of 17 runs).
    fn scan_prefix(&self, ks: Ks, prefix: &[u8], f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        let young = self.young();
        scan_shadowed(&Fjall(self), ks, prefix, young.under_prefix(ks, prefix), f)
    }
}

/// What fjall holds of a partition's state, without the young layer.
struct Fjall<'a>(&'a PartitionStore);

impl StateRead for Fjall<'_> {
    fn get(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
        match self.0.generation().state[ks.index()].get(key) {
            Ok(v) => v.map(|v| v.to_vec()),
            Err(e) => {
                tracing::error!("state read failed in {}: {e}", ks.name());
                None
            }
        }
    }

    fn scan_prefix(&self, ks: Ks, prefix: &[u8], f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        let gen = self.0.generation();
        let keyspace = &gen.state[ks.index()];
        let Some(hints) = &gen.hints[ks.index()] else {
            scan_from(keyspace, ks, prefix, prefix, f);
            return;
        };
        let ticket = hints.begin(prefix);
        let first = match &ticket.start {
            Start::Nothing => None,
            Start::From(from) => scan_from(keyspace, ks, from, prefix, f),
        };
        hints.learned(prefix, ticket, first.as_deref());
    }
}
