//! A follower elects as soon as it may when its leader's process is gone.
//!
//! openraft 0.9 elects when a follower has heard nothing for the leader's lease
//! (`election_timeout_max`) plus its own election timeout, checked on a tick of 1.5 heartbeat
//! intervals: 0.9-1.6 s after the last heartbeat with the defaults, and a follower that asks
//! first with the shorter log is refused and makes the other wait for its own timer. That is
//! right for a leader that is slow or cut off, which may still be there.
//!
//! A leader whose process died is known for sure sooner: its internal port refuses
//! connections (a killed process's sockets are closed by its kernel). Then the followers elect
//! at once when the lease, which the other voters still honour, is over, one after the other
//! in the partition's priority order so that their votes do not split. The first asks
//! `ELECT_AFTER_LEASE` after the lease; when it has the shorter log it is refused, and the
//! next asks `STAGGER` later (and once more, with a higher term, when its first request met
//! the first one's vote of the same term). A leader that is only slow, frozen or unreachable
//! (a connection attempt that times out) is left to openraft's timers: nothing here decides
//! without a refused connection.

use std::time::{Duration, Instant};

use openraft::ServerState;
use tokio::net::TcpStream;
use tokio::sync::watch;
use zest_cluster::transport::Groups;
use zest_cluster::ZestRaft;
use zest_protocol::PartitionId;

use crate::cluster::{Cluster, NodeId};

/// How often a follower looks at its leader.
const CHECK_EVERY: Duration = Duration::from_millis(50);
/// Silence after which a follower asks whether its leader's process is still there (a
/// heartbeat comes every 250 ms by default).
const SUSPECT_AFTER_HEARTBEATS: u32 = 2;
/// How long after the lease the first follower asks for votes (the other voters heard the
/// leader's last append at about the same time, not at exactly the same time).
const ELECT_AFTER_LEASE: Duration = Duration::from_millis(100);
/// Between two followers' turns, and between a follower's two requests.
const STAGGER: Duration = Duration::from_millis(250);
/// How long a connection attempt to the leader may take before it says nothing.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(100);

/// One follower's watch over partition `pid`'s leader, until `stop` changes.
pub(crate) struct Watch {
    pub pid: PartitionId,
    pub node_id: NodeId,
    pub raft: ZestRaft,
    pub cluster: std::sync::Arc<Cluster>,
    pub groups: std::sync::Arc<Groups>,
    pub heartbeat: Duration,
    /// The leader's lease: what voters wait after their last append before they grant a vote.
    pub lease: Duration,
}

/// A leader gone silent: since when, and the elections this node asked for.
struct Silence {
    leader: NodeId,
    heard: Instant,
    asked: u32,
}

impl Watch {
    pub(crate) async fn run(self, mut stop: watch::Receiver<bool>) {
        let mut check = tokio::time::interval(CHECK_EVERY);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut silence: Option<Silence> = None;
        loop {
            tokio::select! {
                _ = stop.changed() => return,
                _ = check.tick() => {}
            }
            silence = self.check(silence).await;
        }
    }

    /// One look: the silence still going on, if any.
    async fn check(&self, silence: Option<Silence>) -> Option<Silence> {
        let (state, current_leader) = {
            let m = self.raft.metrics();
            let m = m.borrow();
            (m.state, m.current_leader)
        };
        let heard = self.groups.last_heard(self.pid)?;
        let mut silence = match silence {
            // a candidate has no leader; the silence goes on until one is heard
            Some(s) if heard <= s.heard && matches!(state, ServerState::Candidate) => s,
            Some(s) if heard <= s.heard && current_leader == Some(s.leader) => s,
            _ => {
                let leader = current_leader.filter(|&l| l != self.node_id)?;
                if state != ServerState::Follower {
                    return None;
                }
                Silence {
                    leader,
                    heard,
                    asked: 0,
                }
            }
        };
        if heard.elapsed() < self.heartbeat * SUSPECT_AFTER_HEARTBEATS {
            return Some(silence);
        }
        let replicas = self.cluster.replicas(self.pid);
        let due = turn(&replicas, silence.leader, self.node_id)
            .and_then(|turn| next_request(silence.heard, self.lease, turn, silence.asked));
        if due.is_none_or(|at| Instant::now() < at) {
            return Some(silence);
        }
        if !self.leader_is_gone(silence.leader).await {
            return Some(silence);
        }
        tracing::info!(
            partition = self.pid,
            leader = silence.leader,
            silent_ms = silence.heard.elapsed().as_millis() as u64,
            "the leader's process is gone: asking for votes"
        );
        silence.asked += 1;
        let _ = self.raft.trigger().elect().await;
        Some(silence)
    }

    /// Whether the leader's internal port refuses connections: its process is gone.
    async fn leader_is_gone(&self, leader: NodeId) -> bool {
        let Some(address) = self.cluster.peers.address(leader) else {
            return false;
        };
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&address)).await {
            Ok(Err(e)) => e.kind() == std::io::ErrorKind::ConnectionRefused,
            Ok(Ok(_)) | Err(_) => false,
        }
    }
}

/// `node`'s place among the partition's `replicas` (primary first) other than `leader`.
fn turn(replicas: &[NodeId], leader: NodeId, node: NodeId) -> Option<u32> {
    let mut others = replicas.iter().filter(|&&n| n != leader);
    others.position(|&n| n == node).map(|p| p as u32)
}

/// When a follower whose leader was last heard at `heard` asks for votes next, having asked
/// `asked` times already; None when it has asked enough. The first in turn asks once: when it
/// is refused, its log is the shorter one.
fn next_request(heard: Instant, lease: Duration, turn: u32, asked: u32) -> Option<Instant> {
    let requests = if turn == 0 { 1 } else { 2 };
    (asked < requests).then(|| heard + lease + ELECT_AFTER_LEASE + STAGGER * (turn + asked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_followers_take_turns_in_priority_order_without_the_leader() {
        let replicas = [1, 2, 0];
        assert_eq!(turn(&replicas, 1, 2), Some(0));
        assert_eq!(turn(&replicas, 1, 0), Some(1));
        assert_eq!(turn(&replicas, 2, 1), Some(0));
        assert_eq!(turn(&replicas, 2, 0), Some(1));
        // the leader itself, and a node that does not replicate the partition, have no turn
        assert_eq!(turn(&replicas, 1, 1), None);
        assert_eq!(turn(&replicas, 1, 3), None);
    }

    #[test]
    fn requests_come_after_the_lease_staggered_by_turn() {
        let heard = Instant::now();
        let lease = Duration::from_millis(600);
        let at = |turn, asked| next_request(heard, lease, turn, asked).map(|t| t - heard);
        let ms = |m| Some(Duration::from_millis(m));
        // the first in turn asks once, 100 ms after the lease
        assert_eq!(at(0, 0), ms(700));
        assert_eq!(at(0, 1), None);
        // the second asks a stagger later, and once more a stagger after that
        assert_eq!(at(1, 0), ms(950));
        assert_eq!(at(1, 1), ms(1200));
        assert_eq!(at(1, 2), None);
        // never within the lease, which the other voters still honour
        assert!((0..3).all(|t| at(t, 0).is_some_and(|d| d > lease)));
    }
}
