//! Turns due timers, expired job deadlines, elapsed retry backoffs and buffered messages whose
//! time to live is over into commands. Reads committed state only and never blocks processing:
//! its commands queue like any other, and the engine re-checks each condition when it processes
//! them.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use zest_engine::new_command;
use zest_engine::state::{key_i64, read_i64, Ks, StateRead};
use zest_protocol::{
    codec, Intent, MessageBatchRecord, PartitionId, Record, RecordValue, TimerRecord,
};
use zest_storage::PartitionStore;

use crate::clock::now_millis;
use crate::router::{Router, Sent};
use crate::Submission;

/// Most commands written per scheduler round.
const MAX_PER_ROUND: usize = 1000;

fn due(store: &PartitionStore, ks: Ks, now: i64, out: &mut Vec<i64>) {
    store.scan_prefix(ks, &[], &mut |k, _| {
        if read_i64(k, 0) > now || out.len() >= MAX_PER_ROUND {
            return false;
        }
        out.push(read_i64(k, 8));
        true
    });
}

/// A partition's scheduler.
pub(crate) struct Scheduler {
    pub pid: PartitionId,
    pub store: PartitionStore,
    /// This partition's queue of internal commands.
    pub tx: mpsc::Sender<Submission>,
    /// Where commands for other partitions go.
    pub router: Arc<Router>,
    pub interval: Duration,
}

/// How often a distribution that a partition has not acknowledged is sent to it again, and how
/// old an unanswered message subscription command between partitions is when it is sent again.
const DISTRIBUTION_RETRY: Duration = Duration::from_secs(5);

pub(crate) async fn run(s: Scheduler, mut stop_rx: watch::Receiver<bool>) {
    let Scheduler {
        pid,
        store,
        tx,
        router,
        interval,
    } = s;
    // the first round after a start sends what waits at once
    let mut last_redistribution: Option<std::time::Instant> = None;
    loop {
        tokio::select! {
            _ = stop_rx.changed() => return,
            _ = tokio::time::sleep(interval) => {}
        }
        if last_redistribution.is_none_or(|t| t.elapsed() >= DISTRIBUTION_RETRY) {
            last_redistribution = Some(std::time::Instant::now());
            send_again(pid, &store, &router);
        }
        let now = now_millis();
        let mut commands = Vec::new();
        let mut keys = Vec::new();
        due(&store, Ks::TimerDueDates, now, &mut keys);
        for key in keys.drain(..) {
            if let Some(bytes) = store.get(Ks::Timers, &key_i64(key)) {
                if let Ok(timer) = codec::decode::<TimerRecord>(&bytes) {
                    commands.push(new_command(
                        key,
                        Intent::Trigger,
                        RecordValue::Timer(timer),
                        -1,
                        -1,
                    ));
                }
            }
        }
        due(&store, Ks::JobDeadlines, now, &mut keys);
        for key in keys.drain(..) {
            commands.push(new_command(
                key,
                Intent::TimeOut,
                RecordValue::Job(Box::default()),
                -1,
                -1,
            ));
        }
        due(&store, Ks::JobBackoffs, now, &mut keys);
        for key in keys.drain(..) {
            commands.push(new_command(
                key,
                Intent::RecurAfterBackoff,
                RecordValue::Job(Box::default()),
                -1,
                -1,
            ));
        }
        // buffered messages whose time to live is over, expired in one batch command
        due(&store, Ks::MessageDeadlines, now, &mut keys);
        if !keys.is_empty() {
            commands.push(new_command(
                -1,
                Intent::Expire,
                RecordValue::MessageBatch(MessageBatchRecord {
                    message_keys: std::mem::take(&mut keys),
                }),
                -1,
                -1,
            ));
        }
        if commands.is_empty() {
            continue;
        }
        tracing::debug!(
            partition = pid,
            count = commands.len(),
            "scheduled commands"
        );
        let mut answers = Vec::with_capacity(commands.len());
        for record in commands {
            let (reply, rx) = oneshot::channel();
            if tx
                .send(Submission {
                    record,
                    reply: Some(reply),
                    permit: None,
                    queue_bytes: None,
                    received: std::time::Instant::now(),
                })
                .await
                .is_err()
            {
                return;
            }
            answers.push(rx);
        }
        // Wait until they are processed before looking again, so nothing is sent twice (or
        // until this node stops leading: the commands wait in the queue for its next term).
        for rx in answers {
            tokio::select! {
                _ = stop_rx.changed() => return,
                _ = rx => {}
            }
        }
    }
}

/// Sends each partition the oldest distribution it has not acknowledged (command distribution
/// is not durable between partitions until the receiver commits it: after a restart, or when
/// the acknowledgement was lost, this sends it again; a receiver that has it acknowledges
/// again), and the message subscription commands that another partition has not answered for
/// `DISTRIBUTION_RETRY` (see `zest_engine::queries::subscription_commands_to_resend`). A full
/// queue is tried again at the next round.
fn send_again(pid: PartitionId, store: &PartitionStore, router: &Router) {
    let partitions = router.partition_count();
    if partitions <= 1 {
        return;
    }
    let distributions = zest_engine::queries::pending_distributions(store, partitions);
    for (target, key, intent, value) in distributions {
        tracing::debug!(partition = pid, target, key, "sending a distribution again");
        send_to(router, target, new_command(key, intent, value, -1, -1));
    }
    let sent_before = now_millis() - DISTRIBUTION_RETRY.as_millis() as i64;
    let commands = zest_engine::queries::subscription_commands_to_resend(
        store,
        pid,
        sent_before,
        MAX_PER_ROUND,
    );
    for (target, intent, value) in commands {
        tracing::debug!(
            partition = pid,
            target,
            "sending a message subscription command again"
        );
        if !send_to(router, target, new_command(-1, intent, value, -1, -1)) {
            break;
        }
    }
}

/// Sends `record` to partition `target`'s leader; false when its queue is full (or it has
/// none now).
fn send_to(router: &Router, target: PartitionId, mut record: Record) -> bool {
    record.partition_id = target;
    router.send(target, record) == Sent::Yes
}
