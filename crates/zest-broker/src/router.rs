//! Where a command without a client goes (commands between partitions, a scheduler's own
//! commands, job yields): the queue of internal commands of the partition, on this node when
//! it leads the partition here, or else on the node that leads it (through the cluster's
//! bounded per-node queue).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;
use zest_protocol::{PartitionId, Record};

use crate::cluster::{Cluster, Outgoing};
use crate::Submission;

/// What became of a command handed to the router.
#[derive(Debug, PartialEq)]
pub(crate) enum Sent {
    Yes,
    /// The queue it goes to is full: keep it and try again.
    Full(Box<Record>),
    /// Nowhere to go now (no such partition, no leader known, node stopping): it is dropped,
    /// and what matters is sent again by its sender's retries.
    Dropped,
}

/// A partition replicated on this node.
pub(crate) struct LocalQueue {
    pub tx: mpsc::Sender<Submission>,
    /// True while this node leads the partition and processes its commands.
    pub leading: Arc<AtomicBool>,
}

pub(crate) struct Router {
    /// By partition (index `pid - 1`); None for partitions on other nodes only.
    local: Vec<Option<LocalQueue>>,
    cluster: Arc<Cluster>,
}

impl Router {
    pub fn new(local: Vec<Option<LocalQueue>>, cluster: Arc<Cluster>) -> Router {
        Router { local, cluster }
    }

    fn local(&self, target: PartitionId) -> Option<&LocalQueue> {
        self.local
            .get((target as usize).wrapping_sub(1))
            .and_then(Option::as_ref)
    }

    /// Sends a command to partition `target`'s leader.
    pub fn send(&self, target: PartitionId, record: Record) -> Sent {
        let leader = self.cluster.leader(target);
        if let Some(q) = self.local(target) {
            if q.leading.load(Ordering::Acquire) || leader == Some(self.cluster.node_id) {
                return self.send_local(target, record);
            }
        }
        match leader {
            Some(node) if node != self.cluster.node_id => {
                match self
                    .cluster
                    .send(node, Outgoing::Command(target, Box::new(record)))
                {
                    Ok(()) => Sent::Yes,
                    Err(Outgoing::Command(_, record)) => Sent::Full(record),
                    Err(_) => Sent::Dropped,
                }
            }
            _ => Sent::Dropped,
        }
    }

    /// Puts a command into the queue of a partition on this node (from another node, which
    /// found this one its leader).
    pub fn send_local(&self, target: PartitionId, record: Record) -> Sent {
        let Some(q) = self.local(target) else {
            return Sent::Dropped;
        };
        match q.tx.try_send(Submission::internal(record)) {
            Ok(()) => Sent::Yes,
            Err(mpsc::error::TrySendError::Full(s)) => Sent::Full(Box::new(s.record)),
            Err(mpsc::error::TrySendError::Closed(_)) => Sent::Dropped,
        }
    }

    pub fn partition_count(&self) -> u32 {
        self.cluster.partitions
    }

    /// A single node's router over the given partitions' queues, every partition led here.
    #[cfg(test)]
    pub fn for_tests(queues: Vec<mpsc::Sender<Submission>>) -> Arc<Router> {
        let cluster = Cluster::new(
            0,
            crate::cluster::ClusterConfig::default(),
            queues.len() as u32,
            String::new(),
        );
        let local = queues
            .into_iter()
            .map(|tx| {
                Some(LocalQueue {
                    tx,
                    leading: Arc::new(AtomicBool::new(true)),
                })
            })
            .collect();
        Arc::new(Router::new(local, Arc::new(cluster)))
    }
}
