//! Leaders go back to their partition's primary (Zeebe's priority election): after a failover a
//! partition stays led by whoever won the election, and after a few failovers one node can
//! lead every partition, so that the next failure of that node starts all their elections at
//! once and the cluster's work sits on one node.
//!
//! openraft 0.9 has no leadership transfer, so the leader hands over as Raft's TimeoutNow
//! does: a leader that is not its partition's primary, that has led for a while and sees the
//! primary alive and caught up, stops processing (the groups in flight commit and are
//! answered), waits until the primary holds its whole log, and asks it to start an election
//! (frame TAKE_OVER). The primary's vote request reaches the leader, whose own lease is long
//! over (it is counted from its election) and whose log is no longer than the primary's: the
//! leader grants it and steps down, and with its vote the primary wins. A third replica, still
//! in its leader's lease, refuses, which does not matter. When the primary does not take over
//! within a few seconds the leader resumes processing in its term, and tries again later.

use std::time::{Duration, Instant};

use openraft::ServerState;
use zest_cluster::ZestRaft;
use zest_protocol::PartitionId;

use crate::cluster::{frames, Cluster, NodeId};

/// How long a leader leads before it hands over to the primary (a primary that just came back
/// catches up first), and how long it waits between two attempts.
pub(crate) const HAND_OVER_AFTER: Duration = Duration::from_secs(10);
/// How often a leader checks whether to hand over.
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(2);
/// How far behind the leader's log the primary may be for a hand-over to start (it must hold
/// the whole log before it is asked, which takes a moment once processing stops).
const CAUGHT_UP_ENTRIES: u64 = 64;

/// The node this leader should hand partition `pid` over to: its primary, when that is
/// another node that is alive, healthy and nearly caught up. `node_id` leads the partition.
pub(crate) fn primary_to_hand_over_to(
    raft: &ZestRaft,
    cluster: &Cluster,
    pid: PartitionId,
    node_id: NodeId,
) -> Option<NodeId> {
    if !cluster.is_multi_node() {
        return None;
    }
    let primary = *cluster.replicas(pid).first()?;
    if primary == node_id {
        return None;
    }
    let follows = cluster.live_brokers().into_iter().any(|n| {
        n.node_id == primary
            && n.partitions
                .iter()
                .any(|p| p.partition_id == pid && p.healthy && !p.leader)
    });
    let metrics = raft.metrics().borrow().clone();
    let last = metrics.last_log_index.unwrap_or(0);
    let matched = matched_index(&metrics, primary).unwrap_or(0);
    (follows && matched + CAUGHT_UP_ENTRIES >= last).then_some(primary)
}

/// The last log index the leader knows `node` holds (leader's metrics only).
fn matched_index(
    metrics: &openraft::RaftMetrics<NodeId, openraft::BasicNode>,
    node: NodeId,
) -> Option<u64> {
    let replication = metrics.replication.as_ref()?;
    replication.get(&node).cloned().flatten().map(|l| l.index)
}

/// With processing stopped: waits until `primary` holds the whole log, asks it to take over,
/// and waits until it did. False when the hand-over did not happen (this node still leads and
/// resumes processing).
pub(crate) async fn hand_over(
    raft: &ZestRaft,
    cluster: &Cluster,
    pid: PartitionId,
    primary: NodeId,
) -> bool {
    let Some(address) = cluster.peers.address(primary) else {
        return false;
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let m = raft.metrics().borrow().clone();
        if m.state != ServerState::Leader {
            return true;
        }
        let matched = matched_index(&m, primary);
        if matched.is_some() && matched == m.last_log_index {
            break;
        }
        if Instant::now() >= deadline {
            tracing::info!(
                partition = pid,
                primary,
                "the primary did not catch up: leading on"
            );
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let asked = cluster
        .peers
        .call(
            &address,
            frames::TAKE_OVER,
            pid,
            zest_protocol::codec::encode(&cluster.node_id),
            Duration::from_secs(1),
        )
        .await;
    if let Err(e) = asked {
        tracing::info!(
            partition = pid,
            primary,
            "the primary was not asked to take over: {e}"
        );
        return false;
    }
    let mut metrics = raft.server_metrics();
    let stepped_down = tokio::time::timeout(Duration::from_secs(3), async {
        loop {
            if metrics.borrow_and_update().state != ServerState::Leader {
                return;
            }
            if metrics.changed().await.is_err() {
                return;
            }
        }
    })
    .await
    .is_ok();
    tracing::info!(
        partition = pid,
        primary,
        stepped_down,
        "handing the partition over to its primary"
    );
    stepped_down
}

/// On the primary: the leader `from` asks this node to take partition `pid` over. It starts an
/// election when it still follows that leader.
pub(crate) async fn take_over(raft: &ZestRaft, pid: PartitionId, from: NodeId) {
    let m = raft.metrics().borrow().clone();
    if m.state == ServerState::Follower && m.current_leader == Some(from) {
        tracing::info!(
            partition = pid,
            from,
            "taking the partition over from its leader"
        );
        let _ = raft.trigger().elect().await;
    }
}
