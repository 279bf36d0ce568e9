//! MESSAGE, MESSAGE_SUBSCRIPTION, PROCESS_MESSAGE_SUBSCRIPTION and
//! MESSAGE_START_EVENT_SUBSCRIPTION: buffered messages and the subscriptions on both sides of a
//! correlation.

use super::*;
use crate::keys::due_key;
use crate::keys::message::*;
use crate::state::key_i64;
use crate::state::Ks;
use crate::state::Txn;
use crate::types::ProcessMessageSubscriptionState as Pms;
use crate::types::StoredMessageSubscription;
use crate::types::StoredProcessMessageSubscription;
use crate::types::StoredStartSubscription;

/// MESSAGE PUBLISHED (buffered until its deadline) and EXPIRED.
pub(super) fn message(txn: &mut Txn<'_>, r: &Record, m: &zest_protocol::MessageRecord) {
    match r.intent {
        Intent::Published => {
            txn.put(Ks::Messages, key_i64(r.key), m);
            txn.put_raw(
                Ks::MessageIndex,
                message_name_key(&m.name, &m.correlation_key, r.key),
                Vec::new(),
            );
            txn.put_raw(Ks::MessageDeadlines, due_key(m.deadline, r.key), Vec::new());
            if !m.message_id.is_empty() {
                txn.put(
                    Ks::MessageIndex,
                    message_id_key(&m.name, &m.correlation_key, &m.message_id),
                    &r.key,
                );
            }
        }
        Intent::Expired => {
            let Some(m) = txn.get::<zest_protocol::MessageRecord>(Ks::Messages, &key_i64(r.key))
            else {
                return;
            };
            txn.delete(Ks::Messages, key_i64(r.key));
            txn.delete(
                Ks::MessageIndex,
                message_name_key(&m.name, &m.correlation_key, r.key),
            );
            txn.delete(Ks::MessageDeadlines, due_key(m.deadline, r.key));
            if !m.message_id.is_empty() {
                txn.delete(
                    Ks::MessageIndex,
                    message_id_key(&m.name, &m.correlation_key, &m.message_id),
                );
            }
            for (k, _) in txn.scan_prefix(Ks::MessageIndex, &correlated_prefix(r.key), usize::MAX) {
                txn.delete(Ks::MessageIndex, k);
            }
        }
        _ => {}
    }
}

/// MESSAGE_SUBSCRIPTION (the message partition's side of a catch event's subscription).
pub(super) fn subscription(
    txn: &mut Txn<'_>,
    r: &Record,
    m: &zest_protocol::MessageSubscriptionRecord,
) {
    let intent = r.intent;
    let k = subscription_key(m.element_instance_key, &m.message_name);
    let remote = partition_of_key(m.process_instance_key) != r.partition_id;
    if remote
        && matches!(
            intent,
            Intent::Correlated | Intent::Rejected | Intent::Deleted
        )
    {
        txn.delete(
            Ks::SubscriptionCommandsInFlight,
            in_flight_key(b'r', m.element_instance_key, &m.message_name),
        );
    }
    match intent {
        Intent::Created => {
            txn.put(
                Ks::MessageSubscriptions,
                k,
                &StoredMessageSubscription {
                    key: r.key,
                    record: m.clone(),
                    correlating: false,
                },
            );
            txn.put_raw(
                Ks::MessageSubscriptionNames,
                subscription_name_key(&m.message_name, &m.correlation_key, m.element_instance_key),
                Vec::new(),
            );
        }
        Intent::Correlating => {
            if partition_of_key(m.process_instance_key) != r.partition_id {
                let k = in_flight_key(b'r', m.element_instance_key, &m.message_name);
                txn.put(Ks::SubscriptionCommandsInFlight, k, &r.timestamp);
            }
            txn.put_raw(
                Ks::MessageIndex,
                correlated_key(m.message_key, &m.bpmn_process_id),
                Vec::new(),
            );
            if let Some(mut sub) =
                txn.get::<StoredMessageSubscription>(Ks::MessageSubscriptions, &k)
            {
                sub.correlating = true;
                sub.record.message_key = m.message_key;
                sub.record.variables = m.variables.clone();
                txn.put(Ks::MessageSubscriptions, k, &sub);
            }
        }
        Intent::Correlated if !m.interrupting => {
            if let Some(mut sub) =
                txn.get::<StoredMessageSubscription>(Ks::MessageSubscriptions, &k)
            {
                sub.correlating = false;
                txn.put(Ks::MessageSubscriptions, k, &sub);
            }
        }
        Intent::Rejected => {
            txn.delete(
                Ks::MessageIndex,
                correlated_key(m.message_key, &m.bpmn_process_id),
            );
            if let Some(mut sub) =
                txn.get::<StoredMessageSubscription>(Ks::MessageSubscriptions, &k)
            {
                sub.correlating = false;
                txn.put(Ks::MessageSubscriptions, k, &sub);
            }
        }
        Intent::Migrated => {
            if let Some(mut sub) =
                txn.get::<StoredMessageSubscription>(Ks::MessageSubscriptions, &k)
            {
                sub.record.bpmn_process_id = m.bpmn_process_id.clone();
                txn.put(Ks::MessageSubscriptions, k, &sub);
            }
        }
        Intent::Correlated | Intent::Deleted => {
            txn.delete(Ks::MessageSubscriptions, k);
            txn.delete(
                Ks::MessageSubscriptionNames,
                subscription_name_key(&m.message_name, &m.correlation_key, m.element_instance_key),
            );
        }
        _ => {}
    }
}

/// PROCESS_MESSAGE_SUBSCRIPTION (the process instance's side).
pub(super) fn process_subscription(
    txn: &mut Txn<'_>,
    r: &Record,
    m: &zest_protocol::ProcessMessageSubscriptionRecord,
) {
    let intent = r.intent;
    let k = process_subscription_key(m.element_instance_key, &m.message_name);
    let set_state = |txn: &mut Txn<'_>, state: Pms| {
        if let Some(mut sub) =
            txn.get::<StoredProcessMessageSubscription>(Ks::ProcessMessageSubscriptions, &k)
        {
            sub.state = state;
            txn.put(Ks::ProcessMessageSubscriptions, k.clone(), &sub);
        }
    };
    // what was sent to the message partition and waits for its answer
    if m.subscription_partition_id != r.partition_id && m.subscription_partition_id > 0 {
        let opening = in_flight_key(b'c', m.element_instance_key, &m.message_name);
        let closing = in_flight_key(b'd', m.element_instance_key, &m.message_name);
        match intent {
            Intent::Creating => txn.put(Ks::SubscriptionCommandsInFlight, opening, &r.timestamp),
            Intent::Created => txn.delete(Ks::SubscriptionCommandsInFlight, opening),
            Intent::Correlated => {
                txn.delete(Ks::SubscriptionCommandsInFlight, opening);
                crate::behaviour::correlated_messages::remember(
                    txn,
                    r.timestamp,
                    m.element_instance_key,
                    &m.message_name,
                    m.message_key,
                );
            }
            Intent::Deleting => {
                txn.delete(Ks::SubscriptionCommandsInFlight, opening);
                txn.put(Ks::SubscriptionCommandsInFlight, closing, &r.timestamp);
            }
            Intent::Deleted => {
                txn.delete(Ks::SubscriptionCommandsInFlight, opening);
                txn.delete(Ks::SubscriptionCommandsInFlight, closing);
            }
            _ => {}
        }
    }
    match intent {
        Intent::Creating => txn.put(
            Ks::ProcessMessageSubscriptions,
            k.clone(),
            &StoredProcessMessageSubscription {
                key: r.key,
                record: m.clone(),
                state: Pms::Creating,
            },
        ),
        Intent::Created => set_state(txn, Pms::Created),
        Intent::Correlated if !m.interrupting => set_state(txn, Pms::Created),
        Intent::Deleting => set_state(txn, Pms::Deleting),
        Intent::Migrated => {
            if let Some(mut sub) =
                txn.get::<StoredProcessMessageSubscription>(Ks::ProcessMessageSubscriptions, &k)
            {
                sub.record = m.clone();
                txn.put(Ks::ProcessMessageSubscriptions, k.clone(), &sub);
            }
        }
        Intent::Correlated | Intent::Deleted => {
            txn.delete(Ks::ProcessMessageSubscriptions, k.clone())
        }
        _ => {}
    }
}

/// MESSAGE_START_EVENT_SUBSCRIPTION: a deployed message start event, and the lock that keeps
/// one instance per correlation key running.
pub(super) fn start_subscription(
    txn: &mut Txn<'_>,
    r: &Record,
    m: &zest_protocol::MessageStartEventSubscriptionRecord,
) {
    let intent = r.intent;
    let k = start_subscription_key(&m.message_name, m.process_definition_key, &m.start_event_id);
    match intent {
        Intent::Created => txn.put(
            Ks::MessageStartSubscriptions,
            k,
            &StoredStartSubscription {
                key: r.key,
                record: m.clone(),
            },
        ),
        Intent::Deleted => txn.delete(Ks::MessageStartSubscriptions, k),
        Intent::Correlated => {
            txn.put_raw(
                Ks::MessageIndex,
                correlated_key(m.message_key, &m.bpmn_process_id),
                Vec::new(),
            );
            if !m.correlation_key.is_empty() {
                let lock = start_lock_key(&m.bpmn_process_id, &m.correlation_key);
                txn.put(
                    Ks::MessageStartSubscriptions,
                    lock.clone(),
                    &m.process_instance_key,
                );
                txn.put_raw(
                    Ks::MessageStartSubscriptions,
                    start_lock_owner_key(m.process_instance_key),
                    lock,
                );
            }
        }
        _ => {}
    }
}
