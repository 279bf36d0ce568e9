//! openraft log storage on the partition's fjall log keyspace. By default appends are fsynced
//! before openraft is told they are durable; openraft batches concurrent writes into one append,
//! so many client commands share one fsync (group commit). [`LogFlush`] can delay or turn off
//! that fsync, as Zeebe's `cluster.raft.flush` does.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyerror::AnyError;
use openraft::storage::{LogFlushed, LogState, RaftLogReader, RaftLogStorage};
use openraft::{Entry, EntryPayload, LogId, OptionalSend, StorageError, StorageIOError, Vote};
use serde::{Deserialize, Serialize};
use zest_protocol::codec;
use zest_storage::PartitionStore;

use crate::{AppliedInfo, Flushed, NodeId, RecordBatch, TypeConfig};

/// How an entry is kept on disk: its log id and payload kind as JSON (small, rare types), the
/// record batch in the binary codec ([`RecordBatch::encoded`]). Read borrowing from the
/// stored bytes (a `Vec<u8>` field is decoded byte by byte, much slower).
#[derive(Serialize, Deserialize)]
struct StoredEntry<'a> {
    log_id: &'a str,
    kind: u8,
    #[serde(borrow)]
    data: Bytes<'a>,
}

/// A byte string field, borrowed when read.
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Bytes<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de [u8]>::deserialize(d).map(Bytes)
    }
}

pub(crate) fn encode_entry(e: &Entry<TypeConfig>) -> Vec<u8> {
    let (kind, data) = match &e.payload {
        EntryPayload::Blank => (0, Cow::Borrowed(&[][..])),
        EntryPayload::Normal(b) => (1, b.encoded()),
        EntryPayload::Membership(m) => (2, Cow::Owned(serde_json::to_vec(m).unwrap_or_default())),
    };
    let log_id = serde_json::to_string(&e.log_id).unwrap_or_default();
    codec::encode(&StoredEntry {
        log_id: &log_id,
        kind,
        data: Bytes(&data),
    })
}

/// An entry as [`encode_entry`] wrote it; its records stay encoded until they are applied
/// ([`RecordBatch::records`]).
/// The records of the committed log entries with index in `[from, to)`, as far as the log
/// holds them from `from` on and within about `max_bytes` of entries (at least one), each
/// with its index; entries without records (membership, blank) come with none. For
/// exporters, which read what is committed here in log order.
pub fn read_records(
    store: &PartitionStore,
    from: u64,
    to: u64,
    max_bytes: usize,
) -> Result<Vec<(u64, Vec<zest_protocol::Record>)>, String> {
    // a few entries at a time: an exporter far behind must not read its whole backlog
    const CHUNK: u64 = 16;
    let mut out = Vec::new();
    let (mut at, mut bytes) = (from, 0usize);
    while at < to {
        let raw = store
            .log_range(at, (at + CHUNK).min(to))
            .map_err(|e| e.to_string())?;
        if raw.is_empty() {
            break;
        }
        for (index, entry) in raw {
            if !out.is_empty() && bytes + entry.len() > max_bytes {
                return Ok(out);
            }
            bytes += entry.len();
            let records = match decode_entry(&entry)?.payload {
                EntryPayload::Normal(batch) => batch.records()?.into_owned(),
                _ => Vec::new(),
            };
            out.push((index, records));
            at = index + 1;
        }
    }
    Ok(out)
}

pub(crate) fn decode_entry(bytes: &[u8]) -> Result<Entry<TypeConfig>, String> {
    let s: StoredEntry = codec::decode_borrowed(bytes).map_err(|e| e.to_string())?;
    let log_id: LogId<NodeId> = serde_json::from_str(s.log_id).map_err(|e| e.to_string())?;
    let payload = match s.kind {
        0 => EntryPayload::Blank,
        1 => EntryPayload::Normal(RecordBatch::Encoded(s.data.0.to_vec())),
        2 => EntryPayload::Membership(serde_json::from_slice(s.data.0).map_err(|e| e.to_string())?),
        k => return Err(format!("unknown log entry kind {k}")),
    };
    Ok(Entry { log_id, payload })
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Msg(String);

fn io_err(e: impl std::fmt::Display) -> AnyError {
    AnyError::new(&Msg(e.to_string()))
}

/// The last batch of records among `entries` that this node's leader wrote (a batch it
/// received or read back holds its encoding), as [`Flushed`].
fn last_own_batch(entries: &[Entry<TypeConfig>]) -> Option<Flushed> {
    entries.iter().rev().find_map(|e| match &e.payload {
        EntryPayload::Normal(RecordBatch::Records(records)) => records.last().map(|r| Flushed {
            leader: (e.log_id.leader_id.term, e.log_id.leader_id.node_id),
            position: r.position,
        }),
        _ => None,
    })
}

/// Tells the leader's processing loop that the log holds `flushed` durably.
fn tell_flushed(applied: Option<&AppliedInfo>, flushed: Option<Flushed>) {
    if let (Some(applied), Some(flushed)) = (applied, flushed) {
        applied.flushed.send_replace(flushed);
    }
}

/// The result of a write on a blocking thread, as the `std::io::Result` openraft wants.
fn blocking_io<E: std::fmt::Display>(joined: Result<Result<(), E>, String>) -> std::io::Result<()> {
    joined
        .map_err(std::io::Error::other)
        .and_then(|r| r.map_err(|e| std::io::Error::other(e.to_string())))
}

/// When appended log entries are made durable: Zeebe's `cluster.raft.flush` (`enabled`,
/// `delayTime`). Every append is handed to the OS before it counts as written, so a crash of the
/// process never loses a committed entry; the policy decides what an OS crash or a power loss
/// can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFlush {
    /// fsync each append before openraft is told it is written (the default; Zeebe: enabled,
    /// delay 0).
    #[default]
    EveryAppend,
    /// The append counts as written at once; one fsync covers every append since the last,
    /// this long after the first of them (an append during that fsync waits for the next
    /// round, so within twice the delay). Zeebe: enabled with a `delayTime`.
    Delayed(Duration),
    /// No fsync of its own: only before a snapshot is written, when the log is purged, and at
    /// shutdown (Zeebe: enabled = false).
    Off,
}

/// Most entries kept in [`LogStore`]'s memory of recent appends.
const RECENT_MAX: usize = 1024;

/// Most bytes of memory the entries kept there hold by default (`LogStore::with_recent_bytes`):
/// groups of many records fill it before the count does.
pub const RECENT_MAX_BYTES: usize = 16 * 1024 * 1024;

/// What an entry holds in memory, from its encoded size ([`RecordBatch::memory_bytes`]).
/// Counted by encoded bytes alone, the default 16 MiB held over 100 MB of decoded records
/// under the realistic benchmark's load (heaptrack).
fn memory_bytes(entry: &Entry<TypeConfig>, encoded: usize) -> usize {
    match &entry.payload {
        EntryPayload::Normal(batch) => batch.memory_bytes(encoded),
        EntryPayload::Blank | EntryPayload::Membership(_) => encoded,
    }
}

/// Entries appended and not read back yet, by index, with what they hold in memory
/// ([`memory_bytes`]); bounded by [`RECENT_MAX`] entries and `max_bytes` (the oldest go
/// first).
struct Recent {
    entries: BTreeMap<u64, (Entry<TypeConfig>, usize)>,
    bytes: usize,
    max_bytes: usize,
}

impl Default for Recent {
    fn default() -> Self {
        Recent {
            entries: BTreeMap::new(),
            bytes: 0,
            max_bytes: RECENT_MAX_BYTES,
        }
    }
}

impl Recent {
    fn push(&mut self, entry: Entry<TypeConfig>, size: usize) {
        if let Some((_, old)) = self.entries.insert(entry.log_id.index, (entry, size)) {
            self.bytes -= old;
        }
        self.bytes += size;
        while self.entries.len() > RECENT_MAX || self.bytes > self.max_bytes {
            let Some((_, (_, size))) = self.entries.pop_first() else {
                break;
            };
            self.bytes -= size;
        }
    }

    /// All entries of `[from, to)` if every one of them is here, taken out.
    fn take(&mut self, from: u64, to: u64) -> Option<Vec<Entry<TypeConfig>>> {
        if self.entries.range(from..to).count() as u64 != to - from {
            return None;
        }
        let mut out = Vec::with_capacity((to - from) as usize);
        for i in from..to {
            if let Some((entry, size)) = self.entries.remove(&i) {
                self.bytes -= size;
                out.push(entry);
            }
        }
        Some(out)
    }

    fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        let bytes = &mut self.bytes;
        self.entries.retain(|index, (_, size)| {
            let kept = keep(*index);
            if !kept {
                *bytes -= *size;
            }
            kept
        });
    }
}

#[derive(Clone)]
pub struct LogStore {
    store: PartitionStore,
    flush: LogFlush,
    /// Wakes the delayed flusher (`LogFlush::Delayed`); it ends when every clone is dropped.
    flusher: Option<tokio::sync::mpsc::Sender<()>>,
    /// Entries appended and not yet read back, by index. openraft reads every committed entry
    /// back from the log to apply it; that read takes them from here instead of decoding what
    /// was just encoded (it cost about 7 % of the server's CPU at max load). A read takes the
    /// entries out, so a second reader of the same range (replication, once there are peers)
    /// reads the log; past [`RECENT_MAX`] entries or [`RECENT_MAX_BYTES`] the oldest are
    /// dropped and read from the log too.
    recent: Arc<Mutex<Recent>>,
    /// Where appends are counted until applied (`AppliedInfo::unapplied`).
    applied: Option<Arc<AppliedInfo>>,
}

impl LogStore {
    /// Must be called inside a tokio runtime when `flush` is `Delayed` (it starts the flusher).
    pub fn new(store: PartitionStore, flush: LogFlush) -> Self {
        let flusher = match flush {
            LogFlush::Delayed(delay) => {
                let (tx, rx) = tokio::sync::mpsc::channel(1);
                tokio::spawn(delayed_flusher(store.clone(), delay, rx));
                Some(tx)
            }
            LogFlush::EveryAppend | LogFlush::Off => None,
        };
        LogStore {
            store,
            flush,
            flusher,
            recent: Arc::default(),
            applied: None,
        }
    }

    /// Keeps at most `bytes` of recent appends in memory (default [`RECENT_MAX_BYTES`]): the
    /// node's budget for them split over its partitions.
    pub fn with_recent_bytes(self, bytes: usize) -> Self {
        self.recent().max_bytes = bytes.max(64 * 1024);
        self
    }

    /// Counts each append in `applied`'s entries not yet applied.
    pub fn with_applied(mut self, applied: Arc<AppliedInfo>) -> Self {
        self.applied = Some(applied);
        self
    }

    fn recent(&self) -> MutexGuard<'_, Recent> {
        self.recent.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// All entries of `[from, to)` if every one of them is in memory, taken out.
    fn take_recent(&self, from: u64, to: u64) -> Option<Vec<Entry<TypeConfig>>> {
        if to <= from || to == u64::MAX {
            return None;
        }
        self.recent().take(from, to)
    }

    fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
    ) -> Result<Option<T>, StorageError<NodeId>> {
        match self
            .store
            .raft_get(key)
            .map_err(|e| StorageIOError::read(io_err(e)))?
        {
            Some(v) => Ok(Some(
                serde_json::from_slice(&v).map_err(|e| StorageIOError::read(io_err(e)))?,
            )),
            None => Ok(None),
        }
    }

    fn put_json<T: Serialize>(&self, key: &str, v: &T) -> Result<(), StorageError<NodeId>> {
        let bytes = serde_json::to_vec(v).map_err(|e| StorageIOError::write(io_err(e)))?;
        self.store
            .raft_put(key, bytes)
            .map_err(|e| StorageIOError::write(io_err(e)).into())
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry<TypeConfig>>, StorageError<NodeId>> {
        let from = match range.start_bound() {
            Bound::Included(&i) => i,
            Bound::Excluded(&i) => i + 1,
            Bound::Unbounded => 0,
        };
        let to = match range.end_bound() {
            Bound::Included(&i) => i + 1,
            Bound::Excluded(&i) => i,
            Bound::Unbounded => u64::MAX,
        };
        if let Some(entries) = self.take_recent(from, to) {
            return Ok(entries);
        }
        let raw = self
            .store
            .log_range(from, to)
            .map_err(|e| StorageIOError::read_logs(io_err(e)))?;
        decode_all(raw)
    }

    /// Replication's read: from the log itself, not the recent appends (the leader's applier
    /// takes those), each entry's records as read (sent on as they are), and at most
    /// [`MAX_APPEND_BYTES`] of them (at least one entry).
    async fn limited_get_log_entries(
        &mut self,
        start: u64,
        end: u64,
    ) -> Result<Vec<Entry<TypeConfig>>, StorageError<NodeId>> {
        let mut raw = self
            .store
            .log_range(start, end)
            .map_err(|e| StorageIOError::read_logs(io_err(e)))?;
        raw.truncate(within_bytes(
            raw.iter().map(|(_, b)| b.len()),
            MAX_APPEND_BYTES,
        ));
        decode_all(raw)
    }
}

/// Most bytes of entries one append carries (but always one entry): what a follower holds of
/// one append while it takes it.
pub const MAX_APPEND_BYTES: usize = 4 << 20;

/// How many of the leading sizes fit within `limit` together (at least one).
fn within_bytes(sizes: impl Iterator<Item = usize>, limit: usize) -> usize {
    let mut total = 0;
    let mut n = 0;
    for size in sizes {
        total += size;
        if n > 0 && total > limit {
            break;
        }
        n += 1;
    }
    n
}

fn decode_all(raw: Vec<(u64, Vec<u8>)>) -> Result<Vec<Entry<TypeConfig>>, StorageError<NodeId>> {
    raw.into_iter()
        .map(|(_, b)| decode_entry(&b).map_err(|e| StorageIOError::read_logs(io_err(e)).into()))
        .collect()
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError<NodeId>> {
        let last_purged: Option<LogId<NodeId>> = self.get_json("last_purged")?;
        let last = match self
            .store
            .log_last()
            .map_err(|e| StorageIOError::read_logs(io_err(e)))?
        {
            Some((_, b)) => Some(
                decode_entry(&b)
                    .map_err(|e| StorageIOError::read_logs(io_err(e)))?
                    .log_id,
            ),
            None => last_purged,
        };
        Ok(LogState {
            last_purged_log_id: last_purged,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<NodeId>) -> Result<(), StorageError<NodeId>> {
        self.put_json("vote", vote)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<NodeId>>, StorageError<NodeId>> {
        self.get_json("vote")
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogId<NodeId>>,
    ) -> Result<(), StorageError<NodeId>> {
        // Not fsynced on its own: the next append or vote persists it; after a crash openraft
        // re-establishes the commit index from the log.
        if let Some(applied) = &self.applied {
            let end = committed.map_or(0, |c| c.index + 1);
            applied
                .committed_end
                .store(end, std::sync::atomic::Ordering::SeqCst);
        }
        let bytes = serde_json::to_vec(&committed).map_err(|e| StorageIOError::write(io_err(e)))?;
        self.store
            .raft_put_nosync("committed", bytes)
            .map_err(|e| StorageIOError::write(io_err(e)).into())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId<NodeId>>, StorageError<NodeId>> {
        Ok(self
            .get_json::<Option<LogId<NodeId>>>("committed")?
            .flatten())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let entries: Vec<Entry<TypeConfig>> = entries.into_iter().collect();
        let batch: Vec<(u64, Vec<u8>)> = entries
            .iter()
            .map(|e| (e.log_id.index, encode_entry(e)))
            .collect();
        let sizes: Vec<usize> = entries
            .iter()
            .zip(&batch)
            .map(|(entry, (_, bytes))| memory_bytes(entry, bytes.len()))
            .collect();
        let flushed = last_own_batch(&entries);
        let res = if self.flush == LogFlush::EveryAppend {
            let store = self.store.clone();
            // the fsync off the async runtime's worker threads
            blocking_io(crate::offload(move || store.log_append(batch, true)).await)
        } else {
            // a write to the OS, like the state machine's own writes: no hand-over to another
            // thread (each one costs a wake-up on the path of every command)
            self.store
                .log_append(batch, false)
                .map_err(|e| std::io::Error::other(e.to_string()))
        };
        if res.is_ok() {
            // before openraft hears of the write: applying them reads them back
            if let Some(applied) = &self.applied {
                let mut unapplied = applied.unapplied();
                for (entry, size) in entries.iter().zip(&sizes) {
                    unapplied.appended(entry.log_id.index, *size);
                }
            }
            let mut recent = self.recent();
            for (entry, size) in entries.into_iter().zip(sizes) {
                recent.push(entry, size);
            }
            drop(recent);
            if let Some(flusher) = &self.flusher {
                // full: a flush is already due and will cover this append too
                let _ = flusher.try_send(());
            }
            // Told from here, on openraft's core, not from the thread that fsynced: that would
            // be one more wake-up from outside the runtime per append, and measured no faster
            // (docs/benchmarks.md, 2026-11-29 afternoon).
            tell_flushed(self.applied.as_deref(), flushed);
        }
        let failed = res.as_ref().err().map(|e| e.to_string());
        callback.log_io_completed(res);
        match failed {
            Some(e) => Err(StorageIOError::write_logs(io_err(e)).into()),
            None => Ok(()),
        }
    }

    async fn truncate(&mut self, log_id: LogId<NodeId>) -> Result<(), StorageError<NodeId>> {
        self.recent().retain(|index| index < log_id.index);
        if let Some(applied) = &self.applied {
            applied.unapplied().truncated(log_id.index);
        }
        self.store
            .log_truncate(log_id.index)
            .map_err(|e| StorageIOError::write_logs(io_err(e)).into())
    }

    async fn purge(&mut self, log_id: LogId<NodeId>) -> Result<(), StorageError<NodeId>> {
        self.recent().retain(|index| index > log_id.index);
        let marker = serde_json::to_vec(&log_id).map_err(|e| StorageIOError::write(io_err(e)))?;
        let store = self.store.clone();
        // openraft may count entries purged that an exporter still needs: they stay on disk
        // (openraft never reads behind its purge marker; the exporters read the journal)
        let upto = match &self.applied {
            Some(applied) => applied.purge_limit(log_id.index),
            None => log_id.index,
        };
        // fsyncs and file deletions: on a blocking thread, not a runtime worker (openraft's core
        // still waits for it)
        blocking_io(crate::offload(move || store.log_purge(upto, ("last_purged", marker))).await)
            .map_err(|e| StorageIOError::write_logs(io_err(e)).into())
    }
}

/// `LogFlush::Delayed`: after an append, waits `delay` and fsyncs everything appended so far;
/// appends during the wait or the fsync are covered by this one or the next.
async fn delayed_flusher(
    store: PartitionStore,
    delay: Duration,
    mut appended: tokio::sync::mpsc::Receiver<()>,
) {
    while appended.recv().await.is_some() {
        tokio::time::sleep(delay).await;
        let s = store.clone();
        if let Err(e) = blocking_io(crate::offload(move || s.sync_log()).await) {
            tracing::error!("delayed flush of the log failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zest_protocol::{
        Intent, Record, RecordType, RecordValue, RejectionType, ValueType, VariableRecord,
    };

    fn entry(index: u64, payload: EntryPayload<TypeConfig>) -> Entry<TypeConfig> {
        Entry {
            log_id: LogId::new(openraft::CommittedLeaderId::new(3, 1), index),
            payload,
        }
    }

    /// The flush a leader's processing loop hears of is the last batch of records in the
    /// append that this node wrote as leader: a batch received from a leader (or read back)
    /// holds its encoding, and other entries hold no records.
    #[test]
    fn a_flush_names_the_last_batch_this_leader_wrote() {
        let record = |position| {
            let mut r = zest_engine::new_command(
                1,
                Intent::Create,
                RecordValue::JobBatch(Default::default()),
                -1,
                -1,
            );
            r.position = position;
            r
        };
        let own = |index, positions: &[u64]| {
            entry(
                index,
                EntryPayload::Normal(RecordBatch::new(
                    positions.iter().map(|p| record(*p)).collect(),
                )),
            )
        };
        let received = entry(
            9,
            EntryPayload::Normal(RecordBatch::Encoded(
                RecordBatch::new(vec![record(99)]).encoded().into_owned(),
            )),
        );
        let flushed = |position| {
            Some(Flushed {
                leader: (3, 1),
                position,
            })
        };
        assert_eq!(last_own_batch(&[]), None);
        assert_eq!(last_own_batch(&[entry(1, EntryPayload::Blank)]), None);
        assert_eq!(last_own_batch(std::slice::from_ref(&received)), None);
        assert_eq!(
            last_own_batch(&[
                own(1, &[1, 2]),
                own(2, &[3, 4]),
                entry(3, EntryPayload::Blank)
            ]),
            flushed(4)
        );
        assert_eq!(
            last_own_batch(&[own(1, &[5]), own(2, &[]), received]),
            flushed(5)
        );
    }

    /// How entries were written before a batch could stay encoded.
    #[derive(Serialize)]
    struct OldStoredEntry {
        log_id: String,
        kind: u8,
        data: Vec<u8>,
    }

    #[derive(Serialize)]
    struct OldBatch {
        records: Vec<Record>,
    }

    /// The written form is byte for byte what entries were written as before (so logs written
    /// before and after read alike), it decodes back to the entry, and an entry read back is
    /// written again as the same bytes.
    #[test]
    fn entries_encode_as_stored_entries_and_decode_back() {
        let record = Record {
            position: 7,
            partition_id: 1,
            key: 42,
            timestamp: 1_700_000_000_000,
            record_type: RecordType::Event,
            value_type: ValueType::Variable,
            intent: Intent::Created,
            rejection_type: RejectionType::NullVal,
            rejection_reason: String::new(),
            source_record_position: 6,
            request_id: -1,
            request_stream_id: -1,
            value: RecordValue::Variable(VariableRecord {
                name: "x".into(),
                value: "\"a longer value, more than 127 bytes: ".repeat(5) + "\"",
                scope_key: 40,
                process_instance_key: 40,
                process_definition_key: 30,
                bpmn_process_id: "p".into(),
                tenant_id: "<default>".into(),
            }),
        };
        let records = vec![record.clone(), record];
        for e in [
            entry(5, EntryPayload::Normal(RecordBatch::new(records.clone()))),
            entry(6, EntryPayload::Blank),
        ] {
            let (kind, data) = match &e.payload {
                EntryPayload::Normal(_) => (
                    1,
                    codec::encode(&OldBatch {
                        records: records.clone(),
                    }),
                ),
                _ => (0, Vec::new()),
            };
            let old = codec::encode(&OldStoredEntry {
                log_id: serde_json::to_string(&e.log_id).unwrap(),
                kind,
                data,
            });
            let new = encode_entry(&e);
            assert_eq!(new, old);
            let back = decode_entry(&new).unwrap();
            assert_eq!(back.log_id, e.log_id);
            assert_eq!(
                encode_entry(&back),
                old,
                "an entry read back is sent as read"
            );
            match (back.payload, e.payload) {
                (EntryPayload::Normal(a), EntryPayload::Normal(b)) => {
                    assert!(matches!(a, RecordBatch::Encoded(_)));
                    assert_eq!(a.records().unwrap(), b.records().unwrap());
                    // record by record, as the state machine applies them
                    let (mut one_by_one, mut original) = (Vec::new(), Vec::new());
                    a.for_each_record(|r| one_by_one.push(r.clone())).unwrap();
                    b.for_each_record(|r| original.push(r.clone())).unwrap();
                    assert_eq!(one_by_one, records);
                    assert_eq!(original, records);
                }
                (EntryPayload::Blank, EntryPayload::Blank) => {}
                _ => panic!("payload kind changed"),
            }
        }
        let cut = RecordBatch::Encoded(codec::encode(&OldBatch { records })[..40].to_vec());
        let err = cut.records().unwrap_err();
        assert!(err.contains("do not decode"), "{err}");
        let mut seen = 0;
        let err = cut.for_each_record(|_| seen += 1).unwrap_err();
        assert!(err.contains("do not decode"), "{err}");
        assert!(seen < 2, "a cut batch never hands out all its records");
    }

    #[test]
    fn appends_are_bounded_by_bytes_but_carry_at_least_one_entry() {
        assert_eq!(within_bytes([3, 3, 3].into_iter(), 7), 2);
        assert_eq!(within_bytes([3, 3, 3].into_iter(), 9), 3);
        assert_eq!(within_bytes([10, 1].into_iter(), 7), 1);
        assert_eq!(within_bytes(std::iter::empty(), 7), 0);
    }

    /// The memory of recent appends keeps at most RECENT_MAX_BYTES of entries, dropping the
    /// oldest; a range is taken only whole.
    #[test]
    fn recent_appends_are_bounded_by_bytes_and_taken_whole() {
        let mut recent = Recent::default();
        let size = RECENT_MAX_BYTES / 4;
        for i in 1..=6 {
            recent.push(entry(i, EntryPayload::Blank), size);
            assert!(recent.bytes <= RECENT_MAX_BYTES);
        }
        assert_eq!(
            recent.entries.keys().copied().collect::<Vec<_>>(),
            [3, 4, 5, 6]
        );
        assert!(recent.take(2, 4).is_none(), "entry 2 was dropped");
        let taken = recent.take(3, 5).unwrap();
        assert_eq!(
            taken.iter().map(|e| e.log_id.index).collect::<Vec<_>>(),
            [3, 4]
        );
        assert_eq!(recent.bytes, 2 * size);
        recent.retain(|index| index < 6);
        assert_eq!(recent.bytes, size);
    }
}
