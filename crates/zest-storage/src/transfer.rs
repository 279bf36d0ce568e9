//! Moving a partition's whole state without holding it in memory: a consistent read view that
//! yields the state in chunks of bounded size (to send a snapshot to another node, or to write
//! a backup), and an installation that writes such chunks into a new generation of keyspaces
//! and switches to it in one durable step (to receive a snapshot, or to restore a backup).
//!
//! A chunk is a postcard-encoded list of (keyspace name, key, value); keyspaces are named as in
//! [`Ks::name`], the state machine's metadata as [`crate::SM_KEYSPACE`]. A [`ChunkCursor`] says
//! where the next chunk starts, so a transfer can resume after a lost chunk.

use std::ops::Bound;
use std::sync::Arc;

use fjall::Readable;
use serde::{Deserialize, Serialize};
use zest_engine::state::Ks;

use crate::partition::{Generation, PartitionStore};
use crate::{Result, StorageError};

/// Where the next chunk of a [`StateView`] starts: the keyspace (in [`Ks::ALL`] order, then the
/// metadata) and the last key already sent from it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkCursor {
    pub keyspace: usize,
    pub after: Option<Vec<u8>>,
}

#[derive(Serialize, Deserialize)]
struct Chunk {
    entries: Vec<(String, Vec<u8>, Vec<u8>)>,
}

/// A consistent, read-only view of a partition's state as of the moment it was taken. While
/// it is held the store keeps the versions it sees; drop it when done.
#[derive(Clone)]
pub struct StateView {
    gen: Arc<Generation>,
    snapshot: fjall::Snapshot,
}

impl StateView {
    /// A value of the state machine's metadata, as of the view.
    pub fn sm_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.snapshot.get(&self.gen.sm, key)?.map(|v| v.to_vec()))
    }

    fn keyspace(&self, i: usize) -> Option<(&'static str, &fjall::Keyspace)> {
        if i < Ks::ALL.len() {
            Some((Ks::ALL[i].name(), &self.gen.state[i]))
        } else if i == Ks::ALL.len() {
            Some((crate::SM_KEYSPACE, &self.gen.sm))
        } else {
            None
        }
    }

    /// The chunk that starts at `cursor`, of about `max_bytes` (at least one entry), and the
    /// cursor of the chunk after it; `None` when the state is exhausted.
    pub fn next_chunk(
        &self,
        cursor: &ChunkCursor,
        max_bytes: usize,
    ) -> Result<Option<(Vec<u8>, ChunkCursor)>> {
        let mut entries = Vec::new();
        let mut bytes = 0usize;
        let mut cursor = cursor.clone();
        while let Some((name, keyspace)) = self.keyspace(cursor.keyspace) {
            let from = match &cursor.after {
                Some(k) => Bound::Excluded(k.clone()),
                None => Bound::Unbounded,
            };
            for guard in self
                .snapshot
                .range::<Vec<u8>, _>(keyspace, (from, Bound::Unbounded))
            {
                let (k, v) = guard.into_inner()?;
                bytes += k.len() + v.len() + name.len() + 8;
                cursor.after = Some(k.to_vec());
                entries.push((name.to_string(), k.to_vec(), v.to_vec()));
                if bytes >= max_bytes {
                    return Ok(Some((postcard_encode(&Chunk { entries })?, cursor)));
                }
            }
            cursor = ChunkCursor {
                keyspace: cursor.keyspace + 1,
                after: None,
            };
        }
        if entries.is_empty() {
            return Ok(None);
        }
        Ok(Some((postcard_encode(&Chunk { entries })?, cursor)))
    }
}

fn postcard_encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    postcard::to_allocvec(value).map_err(|e| StorageError::Other(format!("encoding: {e}")))
}

/// A new generation of a partition's state being written from chunks; nothing of it is seen
/// until [`PartitionStore::finish_install`]. Dropping it without finishing leaves keyspaces
/// that the next installation or the next start deletes.
pub struct Staging {
    gen: Generation,
    db: fjall::Database,
    entries: u64,
    /// Its place among the partition's generations being staged.
    _active: StagingFlag,
}

impl Staging {
    /// Writes one chunk (as made by [`StateView::next_chunk`]).
    pub fn write_chunk(&mut self, chunk: &[u8]) -> Result<()> {
        let chunk: Chunk = postcard::from_bytes(chunk)
            .map_err(|e| StorageError::Other(format!("a snapshot chunk is unreadable: {e}")))?;
        let mut batch = self.db.batch();
        for (name, k, v) in chunk.entries {
            let keyspace = self.gen.by_name(&name).ok_or_else(|| {
                StorageError::Other(format!(
                    "a snapshot chunk names keyspace '{name}', which this Zest does not have"
                ))
            })?;
            batch.insert(keyspace, k, v);
            self.entries += 1;
        }
        batch.commit()?;
        Ok(())
    }

    /// Entries written so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }
}

/// A staging's entry in its partition's set of generations being staged, removed when the
/// [`Staging`] is dropped (its keyspaces are then leftovers, deleted by the next installation
/// or start).
struct StagingFlag(Arc<std::sync::Mutex<std::collections::BTreeSet<u64>>>, u64);

impl Drop for StagingFlag {
    fn drop(&mut self) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.1);
    }
}

impl PartitionStore {
    /// A consistent view of the state as it is now: the young layer is flushed first, so the
    /// view holds every commit so far (and the applied index of the last).
    pub fn view(&self) -> Result<StateView> {
        self.flush_young()?;
        let gen = self.generation();
        Ok(StateView {
            gen,
            snapshot: self.inner.state_db.snapshot(),
        })
    }

    /// Starts writing a new generation of the state (see [`Staging`]), numbered after the
    /// current one and any other being written.
    pub fn begin_install(&self) -> Result<Staging> {
        let mut staging = self.inner.staging.lock().unwrap_or_else(|p| p.into_inner());
        // leftovers of an interrupted installation go first
        self.delete_generations_but(&staging)?;
        let number = staging
            .last()
            .copied()
            .unwrap_or(0)
            .max(self.generation().number)
            + 1;
        let gen = Generation::open(
            &self.inner.state_db,
            self.inner.pid,
            number,
            self.inner.memtable_bytes,
        )?;
        staging.insert(number);
        Ok(Staging {
            gen,
            db: self.inner.state_db.clone(),
            entries: 0,
            _active: StagingFlag(self.inner.staging.clone(), number),
        })
    }

    /// Makes the staged state the partition's state, with `sm_meta` written over the
    /// metadata it carried, durably; the replaced state is deleted.
    pub fn finish_install(&self, staging: Staging, sm_meta: &[(&[u8], Vec<u8>)]) -> Result<()> {
        let mut batch = self.inner.state_db.batch();
        for (k, v) in sm_meta {
            batch.insert(&staging.gen.sm, k.to_vec(), v.clone());
        }
        batch.commit()?;
        self.switch_to(staging.gen)
    }

    /// Copies a view (of this or another partition store) into a new generation and switches
    /// to it: a snapshot installed from a view in the same process.
    pub fn install_view(&self, view: &StateView, sm_meta: &[(&[u8], Vec<u8>)]) -> Result<()> {
        let mut staging = self.begin_install()?;
        let mut cursor = ChunkCursor::default();
        while let Some((chunk, next)) = view.next_chunk(&cursor, 1 << 20)? {
            staging.write_chunk(&chunk)?;
            cursor = next;
        }
        self.finish_install(staging, sm_meta)
    }
}
