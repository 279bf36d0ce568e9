//! SIGNAL_SUBSCRIPTION: signal catch events and signal start events waiting for a broadcast.

use super::*;
use crate::keys::signal::{owner_prefix, subscription_key};
use crate::state::Ks;
use crate::state::Txn;
use crate::types::StoredSignalSubscription;
use zest_protocol::SignalSubscriptionRecord;

/// SIGNAL_SUBSCRIPTION CREATED / DELETED: the subscription and its index by owner.
pub(super) fn apply(txn: &mut Txn<'_>, r: &Record, sub: &zest_protocol::SignalSubscriptionRecord) {
    use crate::keys::signal::{owner_key, subscription_key};
    let k = subscription_key(sub);
    match r.intent {
        Intent::Created | Intent::Migrated => {
            if r.intent == Intent::Migrated {
                // the catch event id is part of the keys: the subscription of the same owner
                // and signal under its old id goes, the migrated one comes
                for (old_owner_key, old) in
                    owned_signal_subscriptions(txn, sub.catch_event_instance_key)
                {
                    if old.signal_name == sub.signal_name {
                        txn.delete(Ks::SignalSubscriptions, subscription_key(&old));
                        txn.delete(Ks::SignalSubscriptions, old_owner_key);
                    }
                }
            }
            txn.put(
                Ks::SignalSubscriptions,
                k,
                &crate::types::StoredSignalSubscription {
                    key: r.key,
                    record: sub.clone(),
                },
            );
            txn.put(Ks::SignalSubscriptions, owner_key(sub), &sub.signal_name);
        }
        Intent::Deleted => {
            txn.delete(Ks::SignalSubscriptions, k);
            txn.delete(Ks::SignalSubscriptions, owner_key(sub));
        }
        _ => {}
    }
}

/// The signal subscriptions `owner` (an element instance or a process definition) holds:
/// each with its owner index key.
pub(crate) fn owned_signal_subscriptions(
    txn: &Txn<'_>,
    owner: i64,
) -> Vec<(Vec<u8>, SignalSubscriptionRecord)> {
    let mut out = Vec::new();
    for (k, _) in txn.scan_prefix(Ks::SignalSubscriptions, &owner_prefix(owner), usize::MAX) {
        let Some(name) = txn.get::<String>(Ks::SignalSubscriptions, &k) else {
            continue;
        };
        // the catch event id follows the tag and the owner key, up to the NUL
        let id_bytes = &k[9..k.len().saturating_sub(1)];
        let probe = SignalSubscriptionRecord {
            catch_event_instance_key: owner,
            process_definition_key: owner,
            catch_event_id: String::from_utf8_lossy(id_bytes).to_string(),
            signal_name: name,
            ..Default::default()
        };
        if let Some(sub) =
            txn.get::<StoredSignalSubscription>(Ks::SignalSubscriptions, &subscription_key(&probe))
        {
            out.push((k, sub.record));
        }
    }
    out
}
