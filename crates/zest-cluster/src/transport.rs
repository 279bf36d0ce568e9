//! The internal port: one gRPC service (`proto/internal.proto`) carrying frames between nodes.
//! Consensus frames (append, vote, snapshot chunks) go to this node's partition groups
//! ([`Groups`]); the broker's own frames (status, forwarded commands, commands between
//! partitions, job notifications) go to its [`Handler`].
//!
//! Members only: every frame carries the cluster's token (`x-zest-cluster-token`, a SHA-256 of
//! the cluster secret every node and gateway is given: [`ClusterToken`]), and a frame without
//! it, or with another cluster's, is refused (UNAUTHENTICATED) before it reaches consensus or
//! the broker. The secret itself never travels. (On a network others can read, the token can be
//! read as well: TLS on the internal port is what keeps it, issue 62.)
//!
//! Bounds: a connection to a peer is one HTTP/2 channel whose request buffer tonic bounds; every
//! call has a deadline; a snapshot arrives one chunk at a time, and only one transfer per
//! partition is kept.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use openraft::raft::VoteRequest;
use openraft::storage::Snapshot;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Response, Status};

use crate::network::{decode_append, SnapshotHead};
use crate::{unframe, AppliedInfo, NodeId, SnapshotData, ZestRaft};

pub mod proto {
    tonic::include_proto!("zest.internal");
}

use proto::internal_client::InternalClient;
use proto::internal_server::{Internal, InternalServer};
use proto::Frame;

/// What a frame's body is.
pub mod kind {
    pub const APPEND: u32 = 1;
    pub const VOTE: u32 = 2;
    pub const SNAPSHOT: u32 = 3;
    /// From here on, the broker's own frames; its [`super::Handler`] answers them.
    pub const BROKER: u32 = 100;
}

/// Largest frame either side accepts (a log entry holds one processing batch; a snapshot chunk
/// is 1 MiB).
pub const MAX_FRAME: usize = 64 << 20;

/// The metadata key a frame's token travels in.
pub const TOKEN_HEADER: &str = "x-zest-cluster-token";

/// What a member presents with each frame: the hex SHA-256 of a fixed label and the cluster
/// secret (so the secret, which an operator may keep elsewhere too, is never sent).
#[derive(Clone, PartialEq)]
pub struct ClusterToken(tonic::metadata::MetadataValue<tonic::metadata::Ascii>);

impl ClusterToken {
    pub fn from_secret(secret: &str) -> ClusterToken {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new()
            .chain_update(b"zest internal port\0")
            .chain_update(secret.as_bytes())
            .finalize();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        ClusterToken(hex.parse().expect("hex is ASCII"))
    }

    /// Whether `request` carries this token (compared in time independent of where they
    /// differ).
    fn admits<T>(&self, request: &Request<T>) -> bool {
        let Some(presented) = request.metadata().get(TOKEN_HEADER) else {
            return false;
        };
        let (a, b) = (presented.as_bytes(), self.0.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for ClusterToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterToken(..)")
    }
}

/// Answers the broker's frames (kinds from [`kind::BROKER`]).
#[tonic::async_trait]
pub trait Handler: Send + Sync + 'static {
    async fn handle(&self, kind: u32, partition: u32, body: Vec<u8>) -> Result<Vec<u8>, Status>;
}

/// A snapshot being received for a partition.
struct Receiving {
    session: u64,
    next: u64,
    data: Box<SnapshotData>,
}

/// A follower takes new entries only while its state machine is at most this many committed
/// entries behind, and those entries hold at most the group's share of memory
/// ([`Groups::register`]; entries are groups of up to 4096 records, so a count alone allowed
/// hundreds of MB). Entries not known committed do not count: they wait for the leader to
/// hear that this node has them, maybe from the very append it would refuse (a new leader
/// commits its predecessor's entries only with its own first one); the leader sends at most
/// one append beyond what it knows a follower has. openraft 0.9 reads every committed entry
/// not yet applied in one go and
/// queues them for the state machine, so a follower whose applying falls behind (it runs the
/// full appliers, the leader reuses its processing's writes) would hold all of them decoded
/// in memory, without bound under overload. Refused appends wait in the leader's log (on
/// disk); heartbeats (appends without entries) always pass, so the follower keeps its leader.
/// A leader that needs this follower for a majority commits more slowly, and its
/// backpressure answers clients.
pub const APPLY_LAG_ENTRIES: u64 = 32;
/// How long an append waits for the applier before it is refused: well inside the heartbeat
/// interval, which openraft 0.9 gives an append to be answered.
const APPLY_WAIT: Duration = Duration::from_millis(40);

/// Whether the group's applier is (or, within `APPLY_WAIT`, gets) close enough behind the
/// committed entries to take more: by count and by the memory those entries hold.
async fn applier_keeps_up(raft: &ZestRaft, applied: &AppliedInfo, lag_bytes: usize) -> bool {
    let deadline = tokio::time::Instant::now() + APPLY_WAIT;
    let mut metrics = raft.metrics();
    loop {
        let last_applied = metrics.borrow_and_update().last_applied.map(|l| l.index);
        let (entries, bytes) = applied.committed_lag(last_applied);
        if entries <= APPLY_LAG_ENTRIES && bytes <= lag_bytes {
            return true;
        }
        match tokio::time::timeout_at(deadline, metrics.changed()).await {
            Ok(Ok(())) => {}
            // the wait is over, or the group stopped
            Err(_) | Ok(Err(_)) => return false,
        }
    }
}

/// An append with entries that took longer than this here is reported (at most every
/// [`SLOW_REPORT_EVERY`]): its leader waits for an answer for the heartbeat interval (250 ms by
/// default), then gives up and sends the entries again; under overload these timeouts come
/// before elections.
const SLOW_APPEND: Duration = Duration::from_millis(200);
const SLOW_REPORT_EVERY: Duration = Duration::from_secs(10);

/// Where the time of an append with entries went, on this node.
struct AppendTimes {
    /// Waiting for the partition's permit (an earlier append being taken).
    permit: Duration,
    /// Waiting for the applier to come close enough to the log.
    applier: Duration,
    /// openraft taking it (its queue, the log write and its fsync).
    raft: Duration,
}

/// A partition group on this node, with the permit to take an append with entries: one at a
/// time.
#[derive(Clone)]
struct Group {
    raft: ZestRaft,
    taking: Arc<tokio::sync::Semaphore>,
    applied: Arc<AppliedInfo>,
    /// Most memory its entries not yet applied may hold when it takes an append.
    lag_bytes: usize,
}

/// This node's partition groups, for the consensus frames the internal port receives.
///
/// Appends with entries are decoded and taken one at a time per partition. openraft takes one
/// append at a time anyway, and its leader sends one at a time to each follower; but a leader
/// that got no answer within its heartbeat interval (a busy follower) sends the entries again,
/// and each copy used to be decoded and wait for the one before it: under overload they held
/// most of a follower's memory (jemalloc's profiler: 90 of 231 MB). A copy that arrives while
/// one is being taken waits a moment, undecoded, and is refused if the first is still not
/// taken; the first finishes even if its caller gave up, and answers the leader's next try.
#[derive(Default)]
pub struct Groups {
    rafts: RwLock<HashMap<u32, Group>>,
    receiving: Mutex<HashMap<u32, Receiving>>,
    /// When an append (entries or a heartbeat) last arrived for each partition.
    heard: Mutex<HashMap<u32, Instant>>,
    /// When a slow append was last reported.
    slow_reported: Mutex<Option<Instant>>,
}

impl Groups {
    /// A partition's group on this node: it takes an append with entries while its entries
    /// not yet applied hold at most `lag_bytes` (and are at most [`APPLY_LAG_ENTRIES`]).
    pub fn register(
        &self,
        partition: u32,
        raft: ZestRaft,
        applied: Arc<AppliedInfo>,
        lag_bytes: usize,
    ) {
        self.rafts
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                partition,
                Group {
                    raft,
                    taking: Arc::new(tokio::sync::Semaphore::new(1)),
                    applied,
                    lag_bytes,
                },
            );
    }

    /// When this node last received an append for `partition` from a leader (None before the
    /// first one).
    pub fn last_heard(&self, partition: u32) -> Option<Instant> {
        let heard = self.heard.lock().unwrap_or_else(|e| e.into_inner());
        heard.get(&partition).copied()
    }

    fn group(&self, partition: u32) -> Result<Group, Status> {
        self.rafts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&partition)
            .cloned()
            .ok_or_else(|| {
                Status::unavailable(format!(
                    "partition {partition} is not (yet) running on this node"
                ))
            })
    }

    async fn consensus(&self, kind: u32, partition: u32, body: Vec<u8>) -> Result<Vec<u8>, Status> {
        let group = self.group(partition)?;
        let raft = group.raft.clone();
        match kind {
            kind::APPEND => self.append(partition, group, body).await,
            kind::VOTE => {
                let rpc: VoteRequest<NodeId> = serde_json::from_slice(&body)
                    .map_err(|e| Status::invalid_argument(e.to_string()))?;
                let resp = raft
                    .vote(rpc)
                    .await
                    .map_err(|e| Status::unavailable(e.to_string()))?;
                json(&resp)
            }
            kind::SNAPSHOT => self.snapshot_chunk(partition, raft, &body).await,
            k => Err(Status::invalid_argument(format!("unknown frame kind {k}"))),
        }
    }

    /// An append: a heartbeat (no entries) at once, entries one append at a time
    /// ([`Groups`]) and only while the applier keeps up ([`APPLY_LAG_ENTRIES`], and the
    /// group's share of memory).
    async fn append(&self, partition: u32, group: Group, body: Vec<u8>) -> Result<Vec<u8>, Status> {
        let Group {
            raft,
            taking,
            applied,
            lag_bytes,
        } = group;
        let parts = unframe(&body).map_err(Status::invalid_argument)?;
        self.heard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(partition, Instant::now());
        if parts.len() <= 1 {
            let rpc = decode_append(&parts).map_err(Status::invalid_argument)?;
            let resp = raft
                .append_entries(rpc)
                .await
                .map_err(|e| Status::unavailable(e.to_string()))?;
            return json(&resp);
        }
        let arrived = Instant::now();
        let permit = match tokio::time::timeout(APPLY_WAIT, taking.acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) | Err(_) => {
                return Err(Status::unavailable(format!(
                "partition {partition}: an earlier append is still being taken; try again shortly"
            )))
            }
        };
        let permitted = Instant::now();
        let (entries, bytes) = (parts.len() - 1, body.len());
        let rpc = decode_append(&parts).map_err(Status::invalid_argument)?;
        drop(parts);
        drop(body);
        // a task of its own, holding the permit: it finishes even if the caller gives up
        let taken = tokio::spawn(async move {
            let _permit = permit;
            let waited = Instant::now();
            if !applier_keeps_up(&raft, &applied, lag_bytes).await {
                return Err(Status::unavailable(format!(
                    "partition {partition}: applying is more than {APPLY_LAG_ENTRIES} committed entries or {} MiB behind; try again shortly",
                    lag_bytes >> 20
                )));
            }
            let applier = waited.elapsed();
            let started = Instant::now();
            let resp = raft
                .append_entries(rpc)
                .await
                .map_err(|e| Status::unavailable(e.to_string()))?;
            Ok((resp, applier, started.elapsed()))
        });
        let (resp, applier, raft_time) =
            taken.await.map_err(|e| Status::internal(e.to_string()))??;
        if arrived.elapsed() > SLOW_APPEND {
            let times = AppendTimes {
                permit: permitted - arrived,
                applier,
                raft: raft_time,
            };
            self.report_slow(partition, entries, bytes, &times);
        }
        json(&resp)
    }

    /// Logs where a slow append's time went, at most every [`SLOW_REPORT_EVERY`].
    fn report_slow(&self, partition: u32, entries: usize, bytes: usize, times: &AppendTimes) {
        let mut last = self.slow_reported.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|l| l.elapsed() < SLOW_REPORT_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        tracing::warn!(
            partition,
            entries,
            bytes,
            permit_ms = times.permit.as_millis() as u64,
            applier_ms = times.applier.as_millis() as u64,
            raft_ms = times.raft.as_millis() as u64,
            "an append took longer than its leader waits for an answer (it sends the entries again); this node is overloaded"
        );
    }

    /// One chunk of a snapshot; the last one installs it.
    async fn snapshot_chunk(
        &self,
        partition: u32,
        raft: ZestRaft,
        body: &[u8],
    ) -> Result<Vec<u8>, Status> {
        let parts = unframe(body).map_err(Status::invalid_argument)?;
        let [head, data] = parts.as_slice() else {
            return Err(Status::invalid_argument("a snapshot chunk has two parts"));
        };
        let head: SnapshotHead =
            serde_json::from_slice(head).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let taken = self
            .receiving
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&partition);
        let mut receiving = match taken {
            Some(r) if r.session == head.session && r.next == head.seq => r,
            earlier if head.seq == 0 => {
                // a new transfer replaces an unfinished one (one staging at a time)
                drop(earlier);
                Receiving {
                    session: head.session,
                    next: 0,
                    data: raft
                        .begin_receiving_snapshot()
                        .await
                        .map_err(|e| Status::unavailable(e.to_string()))?,
                }
            }
            _ => {
                return Err(Status::failed_precondition(format!(
                    "snapshot chunk {} of transfer {} does not follow what this node received; start the transfer again",
                    head.seq, head.session
                )))
            }
        };
        if !data.is_empty() {
            let chunk = data.to_vec();
            let mut staged = receiving.data;
            staged = crate::offload(move || match staged.as_mut() {
                SnapshotData::Received(staging) => staging.write_chunk(&chunk).map(|_| staged),
                SnapshotData::View(_) => Err(zest_storage::StorageError::Other(
                    "a snapshot is received into a staging generation".into(),
                )),
            })
            .await
            .map_err(Status::internal)?
            .map_err(|e| Status::internal(e.to_string()))?;
            receiving.data = staged;
        }
        let Some(meta) = head.meta.filter(|_| head.done) else {
            receiving.next += 1;
            self.receiving
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(partition, receiving);
            return Ok(Vec::new());
        };
        let resp = raft
            .install_full_snapshot(
                head.vote,
                Snapshot {
                    meta,
                    snapshot: receiving.data,
                },
            )
            .await
            .map_err(|e| Status::unavailable(e.to_string()))?;
        json(&resp)
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, Status> {
    serde_json::to_vec(value).map_err(|e| Status::internal(e.to_string()))
}

struct Service {
    groups: Arc<Groups>,
    handler: Arc<dyn Handler>,
    token: ClusterToken,
}

#[tonic::async_trait]
impl Internal for Service {
    async fn call(&self, request: Request<Frame>) -> Result<Response<Frame>, Status> {
        if !self.token.admits(&request) {
            return Err(Status::unauthenticated(
                "the internal port takes frames only from the cluster's members: give this \
                 process the same --cluster-secret (ZEST_CLUSTER_SECRET) as the cluster's nodes",
            ));
        }
        let f = request.into_inner();
        let body = if f.kind < kind::BROKER {
            self.groups.consensus(f.kind, f.partition, f.body).await?
        } else {
            self.handler.handle(f.kind, f.partition, f.body).await?
        };
        Ok(Response::new(Frame {
            kind: f.kind,
            partition: f.partition,
            body,
        }))
    }
}

/// Binds the internal port (so that a taken port fails the start, not a task later).
pub async fn bind(address: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on the internal address {address}: {e}"))
}

/// Serves the internal port until `shutdown` resolves, to the members presenting `token`,
/// through `tls` when given.
pub async fn serve(
    listener: tokio::net::TcpListener,
    groups: Arc<Groups>,
    handler: Arc<dyn Handler>,
    token: ClusterToken,
    tls: Option<crate::tls::Acceptor>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let service = InternalServer::new(Service {
        groups,
        handler,
        token,
    })
    .max_decoding_message_size(MAX_FRAME)
    .max_encoding_message_size(MAX_FRAME);
    let incoming = crate::tls::incoming(
        tokio_stream::wrappers::TcpListenerStream::new(listener),
        tls,
    );
    tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    Ok(())
}

/// The other nodes: their internal addresses by node id, one channel per address, and the
/// token this node presents to them.
pub struct Peers {
    addresses: RwLock<HashMap<NodeId, String>>,
    channels: Mutex<HashMap<String, Channel>>,
    token: ClusterToken,
    /// TLS to the other nodes (their certificates verified against the cluster's CA).
    tls: Option<tonic::transport::ClientTlsConfig>,
}

impl Peers {
    pub fn new(token: ClusterToken) -> Peers {
        Peers {
            addresses: RwLock::default(),
            channels: Mutex::default(),
            token,
            tls: None,
        }
    }

    /// These peers, called over TLS when `tls` is given.
    pub fn with_tls(mut self, tls: Option<tonic::transport::ClientTlsConfig>) -> Peers {
        self.tls = tls;
        self
    }

    pub fn set_address(&self, node: NodeId, address: &str) {
        let mut addresses = self.addresses.write().unwrap_or_else(|e| e.into_inner());
        if addresses.get(&node).map(String::as_str) != Some(address) {
            addresses.insert(node, address.to_string());
        }
    }

    /// Forgets a node that is gone (a standalone gateway gets a new id and port at every
    /// start), with its channel unless another node has the same address.
    pub fn forget(&self, node: NodeId) {
        let mut addresses = self.addresses.write().unwrap_or_else(|e| e.into_inner());
        let Some(address) = addresses.remove(&node) else {
            return;
        };
        if !addresses.values().any(|a| *a == address) {
            self.channels
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&address);
        }
    }

    pub fn address(&self, node: NodeId) -> Option<String> {
        self.addresses
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&node)
            .cloned()
    }

    pub fn known(&self) -> Vec<(NodeId, String)> {
        let mut all: Vec<_> = self
            .addresses
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(n, a)| (*n, a.clone()))
            .collect();
        all.sort();
        all
    }

    fn channel(&self, address: &str) -> Result<Channel, Status> {
        let mut channels = self.channels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = channels.get(address) {
            return Ok(c.clone());
        }
        let bad = |e: tonic::transport::Error| {
            Status::invalid_argument(format!("bad address {address}: {e}"))
        };
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{address}")).map_err(bad)?;
        if let Some(tls) = &self.tls {
            endpoint = endpoint.tls_config(tls.clone()).map_err(bad)?;
        }
        let endpoint = endpoint
            .connect_timeout(Duration::from_millis(500))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(5))
            .keep_alive_timeout(Duration::from_secs(5));
        let channel = endpoint.connect_lazy();
        channels.insert(address.to_string(), channel.clone());
        Ok(channel)
    }

    /// Sends a frame to the node at `address` and returns the body of its answer.
    pub async fn call(
        &self,
        address: &str,
        kind: u32,
        partition: u32,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Vec<u8>, Status> {
        let mut client = InternalClient::new(self.channel(address)?)
            .max_decoding_message_size(MAX_FRAME)
            .max_encoding_message_size(MAX_FRAME);
        let mut request = Request::new(Frame {
            kind,
            partition,
            body,
        });
        request.set_timeout(timeout);
        request
            .metadata_mut()
            .insert(TOKEN_HEADER, self.token.0.clone());
        match tokio::time::timeout(timeout, client.call(request)).await {
            Ok(r) => r.map(|r| r.into_inner().body),
            Err(_) => Err(Status::deadline_exceeded(format!(
                "{address} did not answer within {timeout:?}"
            ))),
        }
    }
}

/// The address other nodes reach this one at, from the address it listens on: a wildcard host
/// becomes 127.0.0.1.
pub fn advertised(listen: &SocketAddr) -> String {
    if listen.ip().is_unspecified() {
        format!("127.0.0.1:{}", listen.port())
    } else {
        listen.to_string()
    }
}
