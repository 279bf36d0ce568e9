//! COMMAND_DISTRIBUTION ACKNOWLEDGE, on the partition that distributed a command: a partition
//! processed it. The last acknowledgement finishes the distribution; each one lets the next
//! distribution waiting for that partition go (see `behaviour::distribution`).

use zest_protocol::{CommandDistributionRecord, Intent, Record, RecordValue, RejectionType};

use crate::behaviour::distribution::first_pending_in_txn;
use crate::context::{Ctx, ProcResult};
use crate::keys::distribution::{open_key, open_prefix};
use crate::state::Ks;

pub fn acknowledge(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    d: &CommandDistributionRecord,
) -> ProcResult {
    let partition = d.partition_id;
    if !ctx
        .txn
        .contains(Ks::Distributions, &open_key(cmd.key, partition))
    {
        // a command sent again, acknowledged again
        ctx.reject(
            cmd,
            RejectionType::NotFound,
            format!(
                "Expected to acknowledge the distribution of the command with key '{}' to partition {partition}, but it is not waiting for that partition (acknowledged before)",
                cmd.key
            ),
        );
        return Ok(());
    }
    ctx.event(
        cmd.key,
        Intent::Acknowledged,
        RecordValue::CommandDistribution(d.clone()),
    );
    let done = ctx
        .txn
        .scan_prefix(Ks::Distributions, &open_prefix(cmd.key), 1)
        .is_empty();
    if done {
        ctx.event(
            cmd.key,
            Intent::Finished,
            RecordValue::CommandDistribution(CommandDistributionRecord {
                partition_id: ctx.partition_id,
                ..d.clone()
            }),
        );
    }
    if let Some((key, next)) = first_pending_in_txn(ctx.txn, partition) {
        if let Some(value) = next.command_value {
            ctx.send_keyed(partition, key, next.intent, *value);
        }
    }
    Ok(())
}
