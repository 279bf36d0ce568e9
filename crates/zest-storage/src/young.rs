//! The young layer: a partition's recent state writes, held in memory and written to fjall
//! together, in one atomic batch with the state machine's metadata, once they pass a bound.
//!
//! Why: most of what a running process writes dies within seconds. An element that is
//! activated and completed, a job that is created, activated and completed, a message
//! subscription that opens and closes: each is a put and, soon after, a delete. Written to
//! fjall commit by commit, each such entry went through the state journal, a memtable, a flush
//! into a table, and the tombstone that deleted it through all of them again, until a
//! compaction dropped both (fjall's flushes and compactions and the commits' write batches
//! were a fifth of the server's CPU under Camunda's realistic benchmark). Here a put followed
//! by a delete within the layer's lifetime leaves nothing, and an entry changed many times is
//! written once.
//!
//! What makes it safe: the log is the state's write-ahead log. fjall holds the state up to the
//! applied index stored with it (`sm` metadata), and everything after that index is replayed
//! from the log when a node restarts: openraft applies the committed entries after the
//! applied index it reads back. A flush writes the whole layer and the metadata of its last
//! commit in one batch, so fjall always holds the state at some applied index, never a mix.
//! Whatever must not depend on a replay flushes first: views (snapshots, backups), and the
//! persist before the log is purged ([`crate::PartitionStore::persist_state`]).
//!
//! Deletions: a delete of an entry keyed by a key generated after the last flush (see
//! [`Ks::generated_key_at`]) removes the entry from the layer and leaves no tombstone, since
//! fjall cannot hold it. Other deletions are kept as tombstones until the flush.
//!
//! Bounded by bytes (keys, values and a per-entry overhead) and by commits since the last
//! flush, which bounds the replay after a crash. A flush moves the layer aside ("flushing"),
//! where readers still find it, while a thread of its own writes the batch; commits fill the
//! next layer meanwhile, and wait only if it reaches half the bound first
//! ([`crate::PartitionStore::commit_state`]). Scans hold the layer's read lock to their end, so
//! that they see one state of the layer and fjall together.

use std::collections::BTreeMap;
use std::sync::Arc;

use zest_engine::state::{generated_after, Ks, Writes, META_MAX_KEY};

/// Entries of a layer: key and value (None: deleted).
type Entries<'a> = Box<dyn Iterator<Item = (&'a [u8], Option<&'a [u8]>)> + 'a>;

fn layer_range<'a>(layer: &'a Layer, ks: Ks, prefix: &'a [u8]) -> Entries<'a> {
    Box::new(
        layer
            .entries
            .range((ks, prefix.to_vec())..)
            .take_while(move |((k_ks, k), _)| *k_ks == ks && k.starts_with(prefix))
            .map(|((_, k), v)| (k.as_slice(), v.as_deref())),
    )
}

/// Two layers' entries in key order, the newer one's entry where both have the key.
pub(crate) struct ShadowMerge<'a> {
    new: std::iter::Peekable<Entries<'a>>,
    old: std::iter::Peekable<Entries<'a>>,
}

impl<'a> Iterator for ShadowMerge<'a> {
    type Item = (&'a [u8], Option<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        match (self.new.peek(), self.old.peek()) {
            (Some((n, _)), Some((o, _))) if o < n => self.old.next(),
            (Some((n, _)), Some((o, _))) if o == n => {
                self.old.next();
                self.new.next()
            }
            (Some(_), _) => self.new.next(),
            (None, _) => self.old.next(),
        }
    }
}

/// Commits after which the layer is flushed whatever its size: a node that crashes replays at
/// most this many log entries more than it would without the layer. Under one-task, where
/// almost nothing outlives a flush, the bytes hardly fill the layer and this is what flushes it.
pub(crate) const MAX_COMMITS: usize = 1024;

/// What an entry costs beyond its key and value (the map's node share, the vectors' headers).
const ENTRY_OVERHEAD: usize = 64;

/// One layer of writes: entries (None: a tombstone for fjall) and the state machine's metadata
/// of its last commit.
#[derive(Default)]
pub(crate) struct Layer {
    pub(crate) entries: BTreeMap<(Ks, Vec<u8>), Option<Vec<u8>>>,
    pub(crate) meta: BTreeMap<Vec<u8>, Vec<u8>>,
    pub(crate) bytes: usize,
}

fn entry_bytes(key: &[u8], value: &Option<Vec<u8>>) -> usize {
    key.len() + value.as_ref().map_or(0, |v| v.len()) + ENTRY_OVERHEAD
}

impl Layer {
    fn set(&mut self, ks: Ks, key: Vec<u8>, value: Option<Vec<u8>>) {
        let add = entry_bytes(&key, &value);
        let new_len = value.as_ref().map_or(0, |v| v.len());
        match self.entries.insert((ks, key), value) {
            // the key and the overhead were counted already
            Some(old) => self.bytes = self.bytes + new_len - old.map_or(0, |v| v.len()),
            None => self.bytes += add,
        }
    }

    fn remove(&mut self, ks: Ks, key: Vec<u8>) {
        let k = (ks, key);
        if let Some(old) = self.entries.remove(&k) {
            self.bytes -= entry_bytes(&k.1, &old);
        }
    }
}

/// A partition's young layer.
pub(crate) struct Young {
    /// Writes since the last flush began.
    pub(crate) active: Layer,
    /// The layer being written to fjall, until it is there.
    pub(crate) flushing: Option<Arc<Layer>>,
    /// The highest key generated in what fjall holds or is being given (the partition's
    /// first key when nothing was generated yet).
    pub(crate) flushed_max_key: i64,
    /// Commits since the last flush began.
    pub(crate) commits: usize,
}

impl Young {
    /// Takes one commit's writes and metadata.
    pub(crate) fn commit<'m>(
        &mut self,
        writes: Writes,
        sm_meta: impl IntoIterator<Item = (&'m [u8], Vec<u8>)>,
    ) {
        for ((ks, key), value) in writes.0 {
            match value {
                Some(v) => self.active.set(ks, key, Some(v)),
                // fjall cannot hold it: it was generated after what fjall holds
                None if generated_after(ks, &key, self.flushed_max_key) => {
                    self.active.remove(ks, key)
                }
                None => self.active.set(ks, key, None),
            }
        }
        for (k, v) in sm_meta {
            let meta = &mut self.active.meta;
            match meta.get_mut(k) {
                Some(o) => {
                    self.active.bytes = self.active.bytes + v.len() - o.len();
                    *o = v;
                }
                None => {
                    self.active.bytes += k.len() + v.len() + ENTRY_OVERHEAD;
                    meta.insert(k.to_vec(), v);
                }
            }
        }
        self.commits += 1;
    }

    /// Whether the active layer is due for a flush: `limit` bytes or [`MAX_COMMITS`] commits.
    pub(crate) fn is_full(&self, limit: usize) -> bool {
        self.active.bytes >= limit || self.commits >= MAX_COMMITS
    }

    /// Bytes held by both layers.
    pub(crate) fn bytes(&self) -> usize {
        self.active.bytes + self.flushing.as_ref().map_or(0, |l| l.bytes)
    }

    /// The entry under `key`, newest layer first (`Some(None)`: deleted; None: ask fjall).
    pub(crate) fn get(&self, ks: Ks, key: &[u8]) -> Option<Option<Vec<u8>>> {
        let k = (ks, key.to_vec());
        let v = match self.active.entries.get(&k) {
            Some(v) => v,
            None => self.flushing.as_ref()?.entries.get(&k)?,
        };
        Some(v.clone())
    }

    /// The metadata under `key` if a layer has it.
    pub(crate) fn meta(&self, key: &[u8]) -> Option<Vec<u8>> {
        if let Some(v) = self.active.meta.get(key) {
            return Some(v.clone());
        }
        self.flushing.as_ref()?.meta.get(key).cloned()
    }

    /// The entries of both layers under `prefix`, in key order, the newer layer shadowing
    /// (None: deleted). Read under the layer's lock, which the caller holds meanwhile.
    pub(crate) fn under_prefix<'a>(&'a self, ks: Ks, prefix: &'a [u8]) -> ShadowMerge<'a> {
        ShadowMerge {
            new: layer_range(&self.active, ks, prefix).peekable(),
            old: match self.flushing.as_deref() {
                Some(layer) => layer_range(layer, ks, prefix),
                None => Box::new(std::iter::empty()),
            }
            .peekable(),
        }
    }

    /// Moves the active layer aside to be flushed. From now on, a deletion of an entry keyed
    /// by a key generated before this point may have to delete it from fjall.
    pub(crate) fn begin_flush(&mut self) -> Arc<Layer> {
        debug_assert!(self.flushing.is_none());
        let layer = Arc::new(std::mem::take(&mut self.active));
        if let Some(Some(v)) = layer.entries.get(&(Ks::Meta, META_MAX_KEY.to_vec())) {
            if let Ok(max) = zest_protocol::codec::decode::<i64>(v) {
                self.flushed_max_key = max;
            }
        }
        self.commits = 0;
        self.flushing = Some(layer.clone());
        layer
    }

    /// An empty layer over a state whose highest generated key is `flushed_max_key`.
    pub(crate) fn new(flushed_max_key: i64) -> Young {
        Young {
            active: Layer::default(),
            flushing: None,
            flushed_max_key,
            commits: 0,
        }
    }
}
