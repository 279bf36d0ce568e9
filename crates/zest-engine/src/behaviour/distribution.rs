//! Command distribution, as Zeebe's `CommandDistributionBehavior`: a command that every
//! partition must process (a deployment, a signal broadcast) is processed on partition 1 and
//! then sent to each other partition, which processes it and acknowledges it.
//!
//! On the origin: COMMAND_DISTRIBUTION STARTED, then DISTRIBUTING per partition; the applier
//! keeps each until ACKNOWLEDGED, and FINISHED follows the last acknowledgement. A partition
//! gets one distribution at a time: the next is sent when the previous is acknowledged, and the
//! broker sends the oldest unacknowledged one again while it waits (a command between
//! partitions is not durable until the receiver commits it). So a receiver sees each origin's
//! distributions in key order and needs to remember only the last key it processed to take a
//! command sent again as done (it acknowledges it again, without processing it twice).

use zest_protocol::{
    partition_of_key, CommandDistributionRecord, Intent, PartitionId, Record, RecordValue,
};

use crate::context::Ctx;
use crate::keys::distribution::*;
use crate::state::{Ks, StateRead, Txn};

/// Distributes the command `intent` with `value` and `key` (the key of what it created on this
/// partition) to every other partition.
pub(crate) fn distribute(ctx: &mut Ctx<'_, '_, '_>, key: i64, intent: Intent, value: RecordValue) {
    if ctx.partition_count <= 1 {
        return;
    }
    let record = |partition_id: PartitionId| CommandDistributionRecord {
        partition_id,
        value_type: value.value_type(),
        intent,
        command_value: Some(Box::new(value.clone())),
    };
    ctx.event(
        key,
        Intent::Started,
        RecordValue::CommandDistribution(record(ctx.partition_id)),
    );
    let me = ctx.partition_id;
    for partition in (1..=ctx.partition_count).filter(|&p| p != me) {
        let waits_for_another = first_pending_in_txn(ctx.txn, partition).is_some();
        ctx.event(
            key,
            Intent::Distributing,
            RecordValue::CommandDistribution(record(partition)),
        );
        if !waits_for_another {
            ctx.send_keyed(partition, key, intent, value.clone());
        }
    }
}

/// True when `cmd` was sent by another partition (its key is theirs).
pub(crate) fn is_distributed(ctx: &Ctx<'_, '_, '_>, cmd: &Record) -> bool {
    cmd.key > 0 && partition_of_key(cmd.key) != ctx.partition_id
}

/// True when this partition processed the distributed `cmd` before (it was sent again).
pub(crate) fn already_processed(ctx: &Ctx<'_, '_, '_>, cmd: &Record) -> bool {
    let last: i64 = ctx
        .txn
        .get(Ks::Distributions, &received_key(partition_of_key(cmd.key)))
        .unwrap_or(0);
    cmd.key <= last
}

/// Tells the origin of the distributed `cmd` that this partition processed it.
pub(crate) fn acknowledge(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) {
    let value = RecordValue::CommandDistribution(CommandDistributionRecord {
        partition_id: ctx.partition_id,
        value_type: cmd.value_type,
        intent: cmd.intent,
        command_value: None,
    });
    ctx.send_keyed(
        partition_of_key(cmd.key),
        cmd.key,
        Intent::Acknowledge,
        value,
    );
}

/// The oldest distribution that `partition` has yet to acknowledge, read through the batch.
pub(crate) fn first_pending_in_txn(
    txn: &Txn<'_>,
    partition: PartitionId,
) -> Option<(i64, CommandDistributionRecord)> {
    let (k, v) = txn
        .scan_prefix(Ks::Distributions, &pending_prefix(partition), 1)
        .into_iter()
        .next()?;
    let key = crate::state::read_i64(&k, pending_prefix(partition).len());
    Some((key, zest_protocol::codec::decode(&v).ok()?))
}

/// The command to send for each partition's oldest unacknowledged distribution, from
/// committed state: what the broker sends again while a partition has not acknowledged it.
/// At most one per partition.
pub fn pending_distributions(
    state: &dyn StateRead,
    partition_count: u32,
) -> Vec<(PartitionId, i64, Intent, RecordValue)> {
    let mut out = Vec::new();
    for partition in 1..=partition_count {
        let prefix = pending_prefix(partition);
        state.scan_prefix(Ks::Distributions, &prefix, &mut |k, v| {
            let key = crate::state::read_i64(k, prefix.len());
            if let Ok(d) = zest_protocol::codec::decode::<CommandDistributionRecord>(v) {
                if let Some(value) = d.command_value {
                    out.push((partition, key, d.intent, *value));
                }
            }
            false
        });
    }
    out
}
