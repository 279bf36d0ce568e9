//! Turns due timers, expired job deadlines, elapsed retry backoffs and buffered messages whose
//! time to live is over into commands. Reads committed state only and never blocks processing:
//! its commands queue like any other, and the engine re-checks each condition when it processes
//! them.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use zest_engine::new_command;
use zest_engine::state::{key_i64, read_i64, Ks, StateRead};
use zest_protocol::{
    codec, Intent, JobRecord, MessageBatchRecord, PartitionId, RecordValue, TimerRecord,
};
use zest_storage::PartitionStore;

use crate::partition::now_millis;
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

pub(crate) async fn run(
    pid: PartitionId,
    store: PartitionStore,
    tx: mpsc::Sender<Submission>,
    interval: Duration,
    mut stop_rx: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = stop_rx.changed() => return,
            _ = tokio::time::sleep(interval) => {}
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
                RecordValue::Job(JobRecord::default()),
                -1,
                -1,
            ));
        }
        due(&store, Ks::JobBackoffs, now, &mut keys);
        for key in keys.drain(..) {
            commands.push(new_command(
                key,
                Intent::RecurAfterBackoff,
                RecordValue::Job(JobRecord::default()),
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
        // Wait until they are processed before looking again, so nothing is sent twice.
        for rx in answers {
            let _ = rx.await;
        }
    }
}
