//! The message subscription commands sent to another partition and not yet answered
//! (`Ks::SubscriptionCommandsInFlight`, written by the appliers), and what to send again for
//! them: Zeebe's pending subscription checkers. A command between partitions is not durable
//! until the receiver commits it, so a crash (or a stop) can lose it; the broker asks for these
//! every few seconds and sends them again. Each is safe to receive twice: an open finds the
//! subscription open and answers again, a close finds it closed and answers again, a
//! correlation of a subscription that is gone is rejected back to the message partition.

use zest_protocol::{
    codec, partition_of_key, Intent, PartitionId, ProcessMessageSubscriptionRecord, RecordValue,
};

use super::message_subscriptions::{ms_value, pms_value};
use crate::keys::message::{process_subscription_key, subscription_key};
use crate::state::{read_i64, Ks, StateRead};
use crate::types::{
    ProcessMessageSubscriptionState, StoredMessageSubscription, StoredProcessMessageSubscription,
};

/// The commands to send again for subscriptions whose command was sent before `sent_before`
/// (ms since the epoch) and is still unanswered, at most `max`: (partition, intent, value).
pub fn subscription_commands_to_resend(
    state: &dyn StateRead,
    partition_id: PartitionId,
    sent_before: i64,
    max: usize,
) -> Vec<(PartitionId, Intent, RecordValue)> {
    let mut waiting = Vec::new();
    state.scan_prefix(Ks::SubscriptionCommandsInFlight, &[], &mut |k, v| {
        let sent: i64 = codec::decode(v).unwrap_or(0);
        if sent < sent_before && k.len() > 9 {
            let element_instance_key = read_i64(k, 1);
            let name = String::from_utf8_lossy(&k[9..k.len() - 1]).into_owned();
            waiting.push((k[0], element_instance_key, name));
        }
        waiting.len() < max
    });
    waiting
        .into_iter()
        .filter_map(|(tag, key, name)| resend(state, partition_id, tag, key, &name))
        .collect()
}

fn resend(
    state: &dyn StateRead,
    partition_id: PartitionId,
    tag: u8,
    element_instance_key: i64,
    name: &str,
) -> Option<(PartitionId, Intent, RecordValue)> {
    match tag {
        b'c' | b'd' => {
            let bytes = state.get(
                Ks::ProcessMessageSubscriptions,
                &process_subscription_key(element_instance_key, name),
            )?;
            let sub: StoredProcessMessageSubscription = codec::decode(&bytes).ok()?;
            let r: &ProcessMessageSubscriptionRecord = &sub.record;
            let intent = match (tag, sub.state) {
                (b'c', ProcessMessageSubscriptionState::Creating) => Intent::Create,
                (b'd', ProcessMessageSubscriptionState::Deleting) => Intent::Delete,
                _ => return None,
            };
            Some((r.subscription_partition_id, intent, ms_value(r)))
        }
        b'r' => {
            let bytes = state.get(
                Ks::MessageSubscriptions,
                &subscription_key(element_instance_key, name),
            )?;
            let sub: StoredMessageSubscription = codec::decode(&bytes).ok()?;
            if !sub.correlating {
                return None;
            }
            Some((
                partition_of_key(sub.record.process_instance_key),
                Intent::Correlate,
                pms_value(partition_id, &sub.record),
            ))
        }
        _ => None,
    }
}
