//! A replica's history of a partition with a gap (a snapshot installed here skipped log its
//! exporter had not exported, or the log was purged behind it) is filled with a copy of a
//! complete replica's rows (`docs/design/history.md`, "In a cluster"; the store's side is
//! `zest_history::copy`). SQLite only: a PostgreSQL history is shared and has no gap.
//!
//! The replica with the gap asks the partition's leader first, then its other replicas, over
//! the internal port (`frames::HISTORY_COPY`): `Open { from_index }` makes the sender wait
//! until its own exporter passed that log index, then open one read transaction of its
//! history and answer the export position the read reflects; `Next` answers the read's chunks
//! one at a time (a bounded number of rows each). The replica empties its rows of the
//! partition, writes each chunk as it comes, and moves its export position to the sender's
//! only after the last chunk; its exporter then goes on from there. A copy cut off (either
//! side killed, a timeout) leaves the gap marked, and the exporter's next try starts the
//! copy again from the beginning.
//!
//! While the gap is open, reads of the partition go to a replica whose history is complete
//! (`history_reads`). A sender keeps at most [`MAX_SESSIONS`] reads open, each dropped once its
//! last chunk is sent or after [`IDLE`] without a request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use tonic::Status;
use zest_history::copy::{Chunk, Cursor, Source};
use zest_history::{Exported, History};
use zest_protocol::{codec, PartitionId};

use crate::cluster::frames;
use crate::local::Local;

/// Most copies a node sends at once.
const MAX_SESSIONS: usize = 4;

/// A copy not asked for its next chunk for this long is dropped (its asker died or gave up).
const IDLE: Duration = Duration::from_secs(60);

/// How long a sender waits for its exporter to reach the index asked for.
const OPEN_WAIT: Duration = Duration::from_secs(10);

/// How long one request of a copy may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Serialize, Deserialize)]
enum CopyRequest {
    /// Opens a copy of the partition's history at an export position whose next log index
    /// is at least `from_index`.
    Open { from_index: u64 },
    /// The chunk of an open copy at `at`.
    Next { session: u64, at: Cursor },
}

#[derive(Debug, Serialize, Deserialize)]
enum CopyAnswer {
    /// The copy's session and the export position its rows reflect (position, next index).
    Opened {
        session: u64,
        position: u64,
        next_index: u64,
    },
    Chunk(Chunk),
}

/// The copies this node sends.
pub(crate) struct Sessions {
    inner: Mutex<Open>,
}

struct Open {
    /// The next session's id (from the clock at start: a restarted sender does not take an
    /// id its asker still holds for the copy before).
    next: u64,
    reads: HashMap<u64, Session>,
}

struct Session {
    partition: PartitionId,
    source: Arc<Mutex<Source>>,
    used: Instant,
}

impl Default for Sessions {
    fn default() -> Self {
        let next = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Sessions {
            inner: Mutex::new(Open {
                next,
                reads: HashMap::new(),
            }),
        }
    }
}

impl Sessions {
    /// Keeps `source` for its asker; None when [`MAX_SESSIONS`] copies are being sent.
    fn open(&self, partition: PartitionId, source: Source) -> Option<u64> {
        let mut open = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        open.reads.retain(|_, s| s.used.elapsed() < IDLE);
        if open.reads.len() >= MAX_SESSIONS {
            return None;
        }
        open.next += 1;
        let id = open.next;
        open.reads.insert(
            id,
            Session {
                partition,
                source: Arc::new(Mutex::new(source)),
                used: Instant::now(),
            },
        );
        Some(id)
    }

    fn get(&self, id: u64, partition: PartitionId) -> Option<Arc<Mutex<Source>>> {
        let mut open = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let s = open
            .reads
            .get_mut(&id)
            .filter(|s| s.partition == partition)?;
        s.used = Instant::now();
        Some(s.source.clone())
    }

    fn close(&self, id: u64) {
        let mut open = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        open.reads.remove(&id);
    }
}

/// Fetches copies of partitions' history from the other replicas.
pub(crate) struct Copier {
    local: Arc<Local>,
}

impl Copier {
    pub fn new(local: Arc<Local>) -> Copier {
        Copier { local }
    }

    /// Replaces `history`'s rows of `partition` with a complete replica's, at an export
    /// position whose next log index is at least `from_index`, and answers that position;
    /// None when no other replica has the partition's history whole (none is there, or every
    /// one answered that its own has a gap: a cluster restored from a backup, say), so that
    /// nothing will fill the gap.
    pub async fn copy(
        &self,
        history: &Arc<History>,
        partition: PartitionId,
        from_index: u64,
    ) -> anyhow::Result<Option<Exported>> {
        let nodes = self.local.other_replicas(partition);
        if nodes.is_empty() {
            return Ok(None);
        }
        let mut reasons = Vec::new();
        let mut all_incomplete = true;
        for node in nodes {
            match self.copy_from(node, history, partition, from_index).await {
                Ok(end) => return Ok(Some(end)),
                Err(e) => {
                    all_incomplete &= e.downcast_ref::<Incomplete>().is_some();
                    reasons.push(format!("node {node}: {e:#}"));
                }
            }
        }
        if all_incomplete {
            tracing::warn!(
                partition,
                "no replica has the partition's history whole ({})",
                reasons.join("; ")
            );
            return Ok(None);
        }
        anyhow::bail!(
            "no replica with a complete history of partition {partition} sent it ({})",
            reasons.join("; ")
        )
    }

    async fn copy_from(
        &self,
        node: u64,
        history: &Arc<History>,
        partition: PartitionId,
        from_index: u64,
    ) -> anyhow::Result<Exported> {
        let address = self
            .local
            .cluster
            .peers
            .address(node)
            .context("its address is not known")?;
        let CopyAnswer::Opened {
            session,
            position,
            next_index,
        } = self
            .call(&address, partition, &CopyRequest::Open { from_index })
            .await?
        else {
            anyhow::bail!("it answered the opening with a chunk");
        };
        blocking(history, move |h| h.copy_begin(partition)).await?;
        let mut at = Cursor::default();
        let mut rows = 0;
        loop {
            let request = CopyRequest::Next { session, at };
            let CopyAnswer::Chunk(chunk) = self.call(&address, partition, &request).await? else {
                anyhow::bail!("it answered a chunk's request with an opening");
            };
            rows += chunk.rows.len();
            let next = chunk.next.clone();
            blocking(history, move |h| h.copy_write(partition, &chunk)).await?;
            match next {
                Some(n) => at = n,
                None => break,
            }
        }
        let end = Exported {
            position,
            next_index,
            gap_to: 0,
        };
        blocking(history, move |h| h.copy_finish(partition, end)).await?;
        tracing::info!(partition, node, rows, "copied the partition's history");
        Ok(end)
    }

    async fn call(
        &self,
        address: &str,
        partition: PartitionId,
        request: &CopyRequest,
    ) -> anyhow::Result<CopyAnswer> {
        let bytes = self
            .local
            .cluster
            .peers
            .call(
                address,
                frames::HISTORY_COPY,
                partition,
                codec::encode(request),
                CALL_TIMEOUT,
            )
            .await
            .map_err(|s| match s.code() {
                tonic::Code::FailedPrecondition => Incomplete(s.message().to_string()).into(),
                _ => anyhow::anyhow!("{}", s.message()),
            })?;
        codec::decode(&bytes).map_err(|e| anyhow::anyhow!("an unreadable answer: {e}"))
    }
}

/// A replica's refusal: its own history of the partition has a gap too (or it keeps none).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Incomplete(String);

/// Runs `f` on the store on a blocking thread.
async fn blocking<T: Send + 'static>(
    history: &Arc<History>,
    f: impl FnOnce(&History) -> Result<T, zest_history::HistoryError> + Send + 'static,
) -> anyhow::Result<T> {
    let h = history.clone();
    Ok(tokio::task::spawn_blocking(move || f(&h)).await??)
}

impl Local {
    /// A request of a copy of `partition`'s history from a replica with a gap.
    pub(crate) async fn history_copy_here(
        &self,
        partition: PartitionId,
        body: &[u8],
    ) -> Result<Vec<u8>, Status> {
        let request: CopyRequest =
            codec::decode(body).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let Some(here) = self.history.get().filter(|h| h.holds(partition)) else {
            return Err(Status::failed_precondition(format!(
                "node {} keeps no complete history of partition {partition}",
                self.node_id
            )));
        };
        let answer = match request {
            CopyRequest::Open { from_index } => {
                let (session, end) = open(here, partition, from_index).await?;
                CopyAnswer::Opened {
                    session,
                    position: end.position,
                    next_index: end.next_index,
                }
            }
            CopyRequest::Next { session, at } => {
                let source = here.copies.get(session, partition).ok_or_else(|| {
                    Status::not_found(format!("no copy {session} of partition {partition} here"))
                })?;
                let chunk = tokio::task::spawn_blocking(move || {
                    source.lock().unwrap_or_else(|p| p.into_inner()).chunk(&at)
                })
                .await
                .map_err(|e| Status::internal(e.to_string()))?
                .map_err(|e| Status::internal(e.to_string()))?;
                if chunk.next.is_none() {
                    here.copies.close(session);
                }
                CopyAnswer::Chunk(chunk)
            }
        };
        Ok(codec::encode(&answer))
    }
}

/// Opens a copy of `partition` once this node's exporter passed `from_index`.
async fn open(
    here: &crate::history_reads::HistoryHere,
    partition: PartitionId,
    from_index: u64,
) -> Result<(u64, Exported), Status> {
    let unavailable = |e: String| Status::unavailable(e);
    let deadline = Instant::now() + OPEN_WAIT;
    loop {
        let h = here.history.clone();
        let at = tokio::task::spawn_blocking(move || h.position(partition))
            .await
            .map_err(|e| unavailable(e.to_string()))?
            .map_err(|e| unavailable(e.to_string()))?;
        if at.next_index >= from_index {
            break;
        }
        if Instant::now() > deadline {
            return Err(unavailable(format!(
                "the exporter of partition {partition} is at log index {}, not yet at \
                 {from_index}",
                at.next_index
            )));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let h = here.history.clone();
    let source = tokio::task::spawn_blocking(move || h.copy_source(partition))
        .await
        .map_err(|e| unavailable(e.to_string()))?
        .map_err(|e| unavailable(e.to_string()))?;
    let end = source.end();
    if end.next_index < from_index {
        return Err(unavailable(format!(
            "the history of partition {partition} is behind log index {from_index}"
        )));
    }
    let session = here.copies.open(partition, source).ok_or_else(|| {
        unavailable(format!(
            "{MAX_SESSIONS} copies of history are being sent already"
        ))
    })?;
    Ok((session, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sender_keeps_a_bounded_number_of_copies_each_for_its_partition() {
        let dir = std::env::temp_dir().join(format!("zest-copy-sessions-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let history = History::open(&dir.join("history.sqlite"), 1 << 20).unwrap();
        let sessions = Sessions::default();
        let ids: Vec<u64> = (0..MAX_SESSIONS)
            .map(|_| sessions.open(1, history.copy_source(1).unwrap()).unwrap())
            .collect();
        assert!(
            sessions.open(1, history.copy_source(1).unwrap()).is_none(),
            "no more than {MAX_SESSIONS} at once"
        );
        assert!(sessions.get(ids[0], 1).is_some());
        assert!(
            sessions.get(ids[0], 2).is_none(),
            "a copy answers its partition only"
        );
        sessions.close(ids[0]);
        assert!(sessions.get(ids[0], 1).is_none());
        assert!(sessions.open(1, history.copy_source(1).unwrap()).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
