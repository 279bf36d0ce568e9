//! What this node holds and answers for: its partitions, the commands it takes for them (from
//! its own gateway, or forwarded by another node's), and the broker's frames on the internal
//! port.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, mpsc, oneshot};
use tonic::Status;
use zest_cluster::transport::Handler;
use zest_protocol::{codec, PartitionId, Record};

use crate::cluster::{frames, Cluster, NodeStatus, Outgoing, PartitionStatus, SubmitAnswer};
use crate::partition::{answered_later, PartitionHandle};
use crate::reads::{read_blocking, Answer, Read};
use crate::router::Router;
use crate::{backpressure, BrokerError, Submission};

/// How long a read of another node's partition may take (a search scans its state).
const READ_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct Local {
    pub node_id: u64,
    /// The gateway's address (gRPC), as the topology shows it.
    pub command_address: String,
    /// Set once every partition of this node has started.
    pub partitions: OnceLock<BTreeMap<PartitionId, PartitionHandle>>,
    pub router: Arc<Router>,
    pub cluster: Arc<Cluster>,
    /// Job types that became activatable, on any node (what long polls and streams wait for).
    pub jobs_available: broadcast::Sender<String>,
    /// This node's history and its partitions' exports, set once they started (never with
    /// `--history off` or without partitions).
    pub history: OnceLock<crate::history_reads::HistoryHere>,
}

static NO_PARTITIONS: BTreeMap<PartitionId, PartitionHandle> = BTreeMap::new();

impl Local {
    pub fn partitions(&self) -> &BTreeMap<PartitionId, PartitionHandle> {
        self.partitions.get().unwrap_or(&NO_PARTITIONS)
    }

    pub fn partition(&self, pid: PartitionId) -> Option<&PartitionHandle> {
        self.partitions().get(&pid)
    }

    /// This node's status, as it tells the others.
    pub fn status(&self) -> NodeStatus {
        let partitions = self
            .partitions()
            .values()
            .map(|p| {
                let m = p.raft.metrics();
                let m = m.borrow();
                PartitionStatus {
                    partition_id: p.id,
                    leader: p.is_leading(),
                    term: m.current_term,
                    healthy: m.current_leader.is_some() && m.running_state.is_ok(),
                    processed_position: p
                        .applied
                        .last_position
                        .load(std::sync::atomic::Ordering::SeqCst),
                    export_backlog: p.export_backlog.refusal(),
                }
            })
            .collect();
        NodeStatus {
            node_id: self.node_id,
            internal_address: self.cluster.internal_address.clone(),
            command_address: self.command_address.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            partitions,
            peers: self.cluster.peers.known(),
            partitions_count: self.cluster.partitions,
            cluster_size: self.cluster.config.cluster_size,
            replication_factor: self.cluster.config.replication_factor,
            gateway: self.cluster.config.gateway_only,
        }
    }

    /// Hands a command to partition `p` on this node, which leads it, and waits for its answer.
    pub async fn submit_here(
        &self,
        p: &PartitionHandle,
        record: Record,
    ) -> Result<Record, BrokerError> {
        let partition = p.id;
        p.received_requests.inc();
        // the queue's bytes first: given back by dropping, if the limiter refuses next
        let Some(queue_bytes) = p.reserve_queue_bytes(&record) else {
            p.rejected_requests.inc();
            return Err(BrokerError::Backpressure(partition));
        };
        let starts = backpressure::starts_instances(record.value_type, record.intent);
        // this node's exporter, or another replica's (heard in its status): the bound holds on
        // every replica
        let backlog = || {
            p.export_backlog
                .refusal()
                .or_else(|| self.cluster.replica_export_backlog(partition))
        };
        if let Some((held, max)) = starts.then(backlog).flatten() {
            p.rejected_requests.inc();
            return Err(BrokerError::ExportBacklog {
                partition,
                held_mib: held.div_ceil(1 << 20),
                max_mib: max >> 20,
            });
        }
        let permit = if backpressure::exempt(record.value_type, record.intent) {
            None
        } else {
            match p.limiter.try_acquire(starts) {
                Ok(permit) => Some(permit),
                Err(refusal) => {
                    p.rejected_requests.inc();
                    return Err(match refusal {
                        backpressure::Refusal::Limit => BrokerError::Backpressure(partition),
                        backpressure::Refusal::JobBacklog => BrokerError::JobBacklog(partition),
                    });
                }
            }
        };
        let (tx, rx) = oneshot::channel();
        match p.client_tx.try_send(Submission {
            record,
            reply: Some(tx),
            permit,
            queue_bytes: Some(queue_bytes),
            received: std::time::Instant::now(),
        }) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(s)) => {
                if let Some(permit) = s.permit {
                    permit.cancel();
                }
                p.rejected_requests.inc();
                return Err(BrokerError::Backpressure(partition));
            }
            Err(mpsc::error::TrySendError::Closed(s)) => {
                if let Some(permit) = s.permit {
                    permit.cancel();
                }
                return Err(BrokerError::Unavailable(
                    partition,
                    "the partition is shutting down".into(),
                ));
            }
        }
        rx.await.map_err(|_| {
            BrokerError::Unavailable(
                partition,
                "the command was not answered; the partition may have changed its leader or restarted".into(),
            )
        })
    }

    /// Sends a command to partition `partition`'s leader, here or on another node, and waits
    /// for its answer. Between leaders (none known, or the one asked no longer leads, or it
    /// cannot be reached) it asks again until `request_timeout`, as Zeebe's gateway does.
    pub async fn submit(
        &self,
        partition: PartitionId,
        record: Record,
    ) -> Result<Record, BrokerError> {
        if partition == 0 || partition > self.cluster.partitions {
            return Err(BrokerError::NoSuchPartition(partition));
        }
        let deadline = Instant::now() + self.cluster.config.request_timeout;
        let mut last = String::from("it has no leader now");
        loop {
            if let Some(p) = self.partition(partition).filter(|p| p.is_leading()) {
                return self.submit_here(p, record).await;
            }
            match self.cluster.leader(partition) {
                Some(node) if node != self.node_id => {
                    match self.forward(node, partition, &record).await {
                        Ok(answer) => return answer,
                        Err(reason) => last = reason,
                    }
                }
                _ => {}
            }
            if Instant::now() >= deadline {
                return Err(BrokerError::Unavailable(
                    partition,
                    format!(
                        "no leader took the command within {:?} ({last}); retry later",
                        self.cluster.config.request_timeout
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Asks `node` to process the command. Err: it did not take it (and asking again, there
    /// or at another leader, is safe).
    async fn forward(
        &self,
        node: u64,
        partition: PartitionId,
        record: &Record,
    ) -> Result<Result<Record, BrokerError>, String> {
        let Some(address) = self.cluster.peers.address(node) else {
            return Err(format!("the address of node {node} is not known"));
        };
        let timeout = if answered_later(record) {
            Duration::from_secs(24 * 3600)
        } else {
            Duration::from_secs(60)
        };
        let body = codec::encode(record);
        let answer = match self
            .cluster
            .peers
            .call(&address, frames::SUBMIT, partition, body, timeout)
            .await
        {
            Ok(bytes) => codec::decode::<SubmitAnswer>(&bytes).map_err(|e| e.to_string())?,
            // not connected: the command did not leave this node
            Err(status) if status.code() == tonic::Code::Unavailable => {
                return Err(format!(
                    "node {node} is not reachable: {}",
                    status.message()
                ))
            }
            Err(status) => {
                return Ok(Err(BrokerError::Unavailable(
                    partition,
                    format!(
                        "node {node}, its leader, did not answer: {}",
                        status.message()
                    ),
                )))
            }
        };
        answer
            .into_result(partition)
            .ok_or_else(|| format!("node {node} no longer leads it"))
    }

    /// A command another node's gateway forwarded here.
    async fn take_forwarded(&self, partition: PartitionId, body: &[u8]) -> SubmitAnswer {
        let record = match codec::decode::<Record>(body) {
            Ok(r) => r,
            Err(e) => return SubmitAnswer::Unavailable(format!("an unreadable command: {e}")),
        };
        let Some(p) = self.partition(partition).filter(|p| p.is_leading()) else {
            return SubmitAnswer::NotLeader;
        };
        SubmitAnswer::from(self.submit_here(p, record).await)
    }

    /// Reads partition `partition`'s committed state on a node that replicates it: its leader
    /// first, then the others. Err when none of them answered.
    pub(crate) async fn read_remote(
        &self,
        partition: PartitionId,
        read: &Read,
    ) -> Result<Answer, BrokerError> {
        let body = codec::encode(read);
        let mut reasons = Vec::new();
        for node in self.other_replicas(partition) {
            let Some(address) = self.cluster.peers.address(node) else {
                reasons.push(format!("node {node}'s address is not known"));
                continue;
            };
            let peers = &self.cluster.peers;
            match peers
                .call(
                    &address,
                    frames::READ,
                    partition,
                    body.clone(),
                    READ_TIMEOUT,
                )
                .await
            {
                Ok(bytes) => match codec::decode::<Answer>(&bytes) {
                    Ok(answer) => return Ok(answer),
                    Err(e) => reasons.push(format!("node {node} answered unreadably: {e}")),
                },
                Err(status) => reasons.push(format!("node {node}: {}", status.message())),
            }
        }
        if reasons.is_empty() {
            reasons.push("none is known here yet".into());
        }
        Err(BrokerError::Unavailable(
            partition,
            format!(
                "no node that replicates it answered the read ({}); retry later",
                reasons.join("; ")
            ),
        ))
    }

    /// The other nodes that replicate `partition`, its leader first.
    pub(crate) fn other_replicas(&self, partition: PartitionId) -> Vec<u64> {
        let mut nodes: Vec<u64> = self.cluster.leader(partition).into_iter().collect();
        for node in self.cluster.replicas(partition) {
            if !nodes.contains(&node) {
                nodes.push(node);
            }
        }
        nodes.retain(|&n| n != self.node_id);
        nodes
    }

    /// A read another node asks of a partition replicated here.
    async fn read_here(&self, partition: PartitionId, body: &[u8]) -> Result<Vec<u8>, Status> {
        let read: Read =
            codec::decode(body).map_err(|e| Status::invalid_argument(e.to_string()))?;
        if let Read::History(read) = read {
            return Ok(codec::encode(&self.history_here(partition, read).await?));
        }
        let Some(p) = self.partition(partition) else {
            return Err(Status::not_found(format!(
                "partition {partition} is not replicated on node {}",
                self.node_id
            )));
        };
        let answer = read_blocking(p, read).await.map_err(Status::internal)?;
        Ok(codec::encode(&answer))
    }

    fn take_batch(&self, body: &[u8]) -> Result<(), Status> {
        let batch: Vec<Outgoing> =
            codec::decode(body).map_err(|e| Status::invalid_argument(e.to_string()))?;
        for message in batch {
            match message {
                Outgoing::Command(partition, record) => {
                    self.router.send_local(partition, *record);
                }
                Outgoing::JobsAvailable(job_type) => {
                    let _ = self.jobs_available.send(job_type);
                }
            }
        }
        Ok(())
    }
}

#[tonic::async_trait]
impl Handler for Local {
    async fn handle(&self, kind: u32, partition: u32, body: Vec<u8>) -> Result<Vec<u8>, Status> {
        match kind {
            frames::STATUS => {
                if let Ok(status) = codec::decode::<NodeStatus>(&body) {
                    self.cluster.heard(status);
                }
                Ok(codec::encode(&self.status()))
            }
            frames::SUBMIT => Ok(codec::encode(&self.take_forwarded(partition, &body).await)),
            frames::BATCH => self.take_batch(&body).map(|_| Vec::new()),
            frames::TAKE_OVER => {
                let from: crate::cluster::NodeId =
                    codec::decode(&body).map_err(|e| Status::invalid_argument(e.to_string()))?;
                if let Some(p) = self.partition(partition) {
                    crate::rebalance::take_over(&p.raft, partition, from).await;
                }
                Ok(Vec::new())
            }
            frames::READ => self.read_here(partition, &body).await,
            frames::HISTORY_COPY => self.history_copy_here(partition, &body).await,
            k => Err(Status::invalid_argument(format!("unknown frame kind {k}"))),
        }
    }
}

/// Passes the job types this node's partitions made activatable to its own gateway and to the
/// other nodes' (their long polls and job streams ask this node's partitions then).
pub(crate) async fn relay_job_notifications(
    mut from_partitions: broadcast::Receiver<String>,
    local: Arc<Local>,
) {
    loop {
        let job_type = match from_partitions.recv().await {
            Ok(t) => t,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let _ = local.jobs_available.send(job_type.clone());
        // brokers and standalone gateways alike
        for node in local.cluster.live_nodes() {
            let _ = local
                .cluster
                .send(node.node_id, Outgoing::JobsAvailable(job_type.clone()));
        }
    }
}
