//! openraft's network over the internal port: append and vote as one call each, a snapshot as
//! a sequence of chunks read from a consistent view of the leader's state
//! ([`zest_storage::StateView::next_chunk`]) and written by the follower into a staging
//! generation, installed when the last chunk arrives.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{
    Fatal, NetworkError, RPCError, RaftError, ReplicationClosed, StreamingError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::storage::{Snapshot, SnapshotMeta};
use openraft::{BasicNode, LogId, OptionalSend, Vote};
use serde::{Deserialize, Serialize};
use zest_storage::ChunkCursor;

use crate::log_store::{decode_entry, encode_entry};
use crate::transport::{kind, Peers};
use crate::{NodeId, SnapshotData, TypeConfig};

/// Bytes of state per snapshot chunk.
const CHUNK_BYTES: usize = 1 << 20;

/// Parts with their lengths in front (u32, little endian).
pub fn frame(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.len() + 4).sum());
    for p in parts {
        out.extend_from_slice(&(p.len() as u32).to_le_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// The parts of a [`frame`].
pub fn unframe(mut bytes: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut parts = Vec::new();
    while !bytes.is_empty() {
        let Some((len, rest)) = bytes.split_first_chunk::<4>() else {
            return Err("a frame ends inside a length".into());
        };
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return Err("a frame ends inside a part".into());
        }
        parts.push(&rest[..len]);
        bytes = &rest[len..];
    }
    Ok(parts)
}

#[derive(Serialize, Deserialize)]
struct AppendHead {
    vote: Vote<NodeId>,
    prev_log_id: Option<LogId<NodeId>>,
    leader_commit: Option<LogId<NodeId>>,
}

/// An append request: its head as JSON, then each entry as the log store writes it.
pub(crate) fn encode_append(rpc: &AppendEntriesRequest<TypeConfig>) -> Vec<u8> {
    let head = serde_json::to_vec(&AppendHead {
        vote: rpc.vote,
        prev_log_id: rpc.prev_log_id,
        leader_commit: rpc.leader_commit,
    })
    .unwrap_or_default();
    let entries: Vec<Vec<u8>> = rpc.entries.iter().map(encode_entry).collect();
    let mut parts: Vec<&[u8]> = vec![&head];
    parts.extend(entries.iter().map(Vec::as_slice));
    frame(&parts)
}

/// An append request from the parts of its frame ([`unframe`]): a head and one part per entry.
pub(crate) fn decode_append(parts: &[&[u8]]) -> Result<AppendEntriesRequest<TypeConfig>, String> {
    let (head, entries) = parts.split_first().ok_or("an empty append request")?;
    let head: AppendHead = serde_json::from_slice(head).map_err(|e| e.to_string())?;
    Ok(AppendEntriesRequest {
        vote: head.vote,
        prev_log_id: head.prev_log_id,
        leader_commit: head.leader_commit,
        entries: entries
            .iter()
            .map(|e| decode_entry(e))
            .collect::<Result<_, _>>()?,
    })
}

/// The head of a snapshot chunk; the last chunk (`done`) carries the snapshot's metadata.
#[derive(Serialize, Deserialize)]
pub(crate) struct SnapshotHead {
    pub vote: Vote<NodeId>,
    pub session: u64,
    pub seq: u64,
    pub done: bool,
    pub meta: Option<SnapshotMeta<NodeId, BasicNode>>,
}

/// The network of one partition group.
#[derive(Clone)]
pub struct Network {
    pub partition: u32,
    pub peers: Arc<Peers>,
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Connection;
    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> Connection {
        Connection {
            partition: self.partition,
            target,
            member_address: node.addr.clone(),
            peers: self.peers.clone(),
        }
    }
}

pub struct Connection {
    partition: u32,
    target: NodeId,
    /// The address in the group's membership; the discovered one wins (a node may have moved).
    member_address: String,
    peers: Arc<Peers>,
}

#[derive(Debug, thiserror::Error)]
#[error("node {node}: {status}")]
struct CallError {
    node: NodeId,
    status: String,
}

impl Connection {
    async fn call(&self, kind: u32, body: Vec<u8>, timeout: Duration) -> Result<Vec<u8>, Failure> {
        let address = self
            .peers
            .address(self.target)
            .unwrap_or_else(|| self.member_address.clone());
        self.peers
            .call(&address, kind, self.partition, body, timeout)
            .await
            .map_err(|status| {
                let error = CallError {
                    node: self.target,
                    status: status.to_string(),
                };
                // down, or its group not started yet: back off instead of calling at every
                // heartbeat
                if status.code() == tonic::Code::Unavailable {
                    Failure::Unreachable(Unreachable::new(&error))
                } else {
                    Failure::Network(NetworkError::new(&error))
                }
            })
    }
}

enum Failure {
    Unreachable(Unreachable),
    Network(NetworkError),
}

impl<E: std::error::Error> From<Failure> for RPCError<NodeId, BasicNode, E> {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Unreachable(u) => RPCError::Unreachable(u),
            Failure::Network(n) => RPCError::Network(n),
        }
    }
}

impl From<Failure> for StreamingError<TypeConfig, Fatal<NodeId>> {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Unreachable(u) => StreamingError::Unreachable(u),
            Failure::Network(n) => StreamingError::Network(n),
        }
    }
}

/// A failure of this side: encoding a request, decoding an answer, reading the state to send.
fn failed(e: impl std::fmt::Display) -> NetworkError {
    NetworkError::new(&std::io::Error::other(e.to_string()))
}

impl RaftNetwork<TypeConfig> for Connection {
    /// After an unreachable peer: 100 ms, doubling up to 1 s (a restarted node is found within
    /// a second, and a dead one is not called at every heartbeat).
    fn backoff(&self) -> openraft::network::Backoff {
        openraft::network::Backoff::new(
            (0..4)
                .map(|i| Duration::from_millis(100 << i))
                .chain(std::iter::repeat(Duration::from_secs(1))),
        )
    }

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        let body = self
            .call(kind::APPEND, encode_append(&rpc), option.hard_ttl())
            .await?;
        serde_json::from_slice(&body).map_err(|e| RPCError::Network(failed(e)))
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        let body = serde_json::to_vec(&rpc).map_err(|e| RPCError::Network(failed(e)))?;
        let body = self.call(kind::VOTE, body, option.hard_ttl()).await?;
        serde_json::from_slice(&body).map_err(|e| RPCError::Network(failed(e)))
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote<NodeId>,
        snapshot: Snapshot<TypeConfig>,
        cancel: impl Future<Output = ReplicationClosed> + OptionalSend + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<NodeId>, StreamingError<TypeConfig, Fatal<NodeId>>> {
        let SnapshotData::View(view) = *snapshot.snapshot else {
            return Err(StreamingError::Network(failed(
                "a snapshot to send is a view of this node's state",
            )));
        };
        let timeout = option.hard_ttl().max(Duration::from_secs(10));
        let session = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let mut cancel = std::pin::pin!(cancel);
        let mut cursor = ChunkCursor::default();
        let mut seq = 0;
        loop {
            let next = view
                .next_chunk(&cursor, CHUNK_BYTES)
                .map_err(|e| StreamingError::Network(failed(e)))?;
            let (data, done) = match next {
                Some((data, next)) => {
                    cursor = next;
                    (data, false)
                }
                None => (Vec::new(), true),
            };
            let head = SnapshotHead {
                vote,
                session,
                seq,
                done,
                meta: done.then(|| snapshot.meta.clone()),
            };
            let head = serde_json::to_vec(&head).map_err(|e| StreamingError::Network(failed(e)))?;
            let body = frame(&[&head, &data]);
            let answer = tokio::select! {
                closed = &mut cancel => return Err(StreamingError::Closed(closed)),
                answer = self.call(kind::SNAPSHOT, body, timeout) => answer?,
            };
            if done {
                return serde_json::from_slice(&answer)
                    .map_err(|e| StreamingError::Network(failed(e)));
            }
            seq += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_hold_their_parts() {
        let f = frame(&[b"head", b"", b"entry"]);
        assert_eq!(unframe(&f).unwrap(), vec![&b"head"[..], b"", b"entry"]);
        assert!(unframe(&f[..f.len() - 1]).is_err());
        assert!(unframe(&[1, 0]).is_err());
    }
}
