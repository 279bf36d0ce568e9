//! Message subscriptions of waiting elements and of message start events, and what publishing
//! and the subscription protocol share (buffered messages, start locks), with Zeebe's records
//! and correlation rules (`docs/design/zeebe-messages.md`). The commands are in
//! `processors/message.rs` (PUBLISH, EXPIRE) and `processors/message_subscription.rs`.
//!
//! Two partitions meet in a correlation: the message partition (chosen by the hash of the
//! correlation key) holds messages and MESSAGE_SUBSCRIPTIONs; the process instance's partition
//! holds PROCESS_MESSAGE_SUBSCRIPTIONs. They talk through commands addressed to a partition
//! ([`Ctx::send`]): appended to the same batch when the target is this partition, as Zeebe
//! does, so with one partition a correlation is atomic and none of Zeebe's races can happen.

use zest_protocol::{
    partition_for_correlation_key, Intent, MessageRecord, MessageStartEventSubscriptionRecord,
    MessageSubscriptionRecord, ProcessMessageSubscriptionRecord, RecordValue,
};

use crate::context::Ctx;
use crate::keys::message::*;
use crate::state::{key_i64, read_i64, Ks};
use crate::types::tenant;
use crate::types::{
    ElementInstance, LatestVersion, ProcessMessageSubscriptionState, StoredMessageSubscription,
    StoredProcessMessageSubscription, StoredStartSubscription,
};

// ---------------------------------------------------------------------------------------------
// State keys (shared with the appliers)

// ---------------------------------------------------------------------------------------------
// MESSAGE

// ---------------------------------------------------------------------------------------------
// Opening and closing subscriptions (process instance partition)

/// Opens the message subscription of a waiting element (PROCESS_MESSAGE_SUBSCRIPTION CREATING
/// and MESSAGE_SUBSCRIPTION CREATE to the message partition).
pub(crate) fn subscribe(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    element_id: &str,
    message_name: String,
    correlation_key: String,
    interrupting: bool,
) {
    let partition = partition_for_correlation_key(&correlation_key, ctx.partition_count);
    let record = ProcessMessageSubscriptionRecord {
        subscription_partition_id: partition,
        process_instance_key: inst.record.process_instance_key,
        element_instance_key: inst.key,
        process_definition_key: inst.record.process_definition_key,
        bpmn_process_id: inst.record.bpmn_process_id.clone(),
        message_key: -1,
        message_name: message_name.clone(),
        variables: String::new(),
        interrupting,
        correlation_key: correlation_key.clone(),
        element_id: element_id.to_string(),
        tenant_id: tenant(&inst.record.tenant_id),
    };
    let key = ctx.next_key();
    let value = ms_value(&record);
    ctx.event(
        key,
        Intent::Creating,
        RecordValue::ProcessMessageSubscription(record),
    );
    ctx.send(partition, Intent::Create, value);
}

/// The message subscriptions element instance `element_instance_key` holds for the catch
/// events `targets` accepts and that are not being closed, in Zeebe's order (its state keys a
/// name by its length first).
fn open_subscriptions(
    ctx: &Ctx<'_, '_, '_>,
    element_instance_key: i64,
    targets: &dyn Fn(&str) -> bool,
) -> Vec<StoredProcessMessageSubscription> {
    let subs = ctx.txn.scan_prefix(
        Ks::ProcessMessageSubscriptions,
        &key_i64(element_instance_key),
        usize::MAX,
    );
    let mut open: Vec<StoredProcessMessageSubscription> = subs
        .into_iter()
        .filter_map(|(_, v)| {
            zest_protocol::codec::decode::<StoredProcessMessageSubscription>(&v).ok()
        })
        .filter(|sub| {
            sub.state != ProcessMessageSubscriptionState::Deleting
                && targets(&sub.record.element_id)
        })
        .collect();
    open.sort_by(|a, b| {
        let (a, b) = (&a.record.message_name, &b.record.message_name);
        (a.len(), a).cmp(&(b.len(), b))
    });
    open
}

/// Migration: the message subscriptions of element instance `element_instance_key` for the
/// catch events `mapped` names (source id to target element id) move to those targets of the
/// process `to` (PROCESS_MESSAGE_SUBSCRIPTION MIGRATED here, MESSAGE_SUBSCRIPTION MIGRATE to
/// the message partition).
pub(crate) fn migrate(
    ctx: &mut Ctx<'_, '_, '_>,
    element_instance_key: i64,
    mapped: &[(String, String)],
    to: &zest_protocol::ProcessInstanceRecord,
) {
    for sub in open_subscriptions(ctx, element_instance_key, &|_| true) {
        let Some((_, target)) = mapped.iter().find(|(s, _)| *s == sub.record.element_id) else {
            continue;
        };
        let moved = ProcessMessageSubscriptionRecord {
            element_id: target.clone(),
            bpmn_process_id: to.bpmn_process_id.clone(),
            process_definition_key: to.process_definition_key,
            ..sub.record
        };
        let value = MessageSubscriptionRecord {
            message_key: -1,
            variables: String::new(),
            ..ms_record(&moved)
        };
        ctx.event(
            sub.key,
            Intent::Migrated,
            RecordValue::ProcessMessageSubscription(moved.clone()),
        );
        ctx.send(
            moved.subscription_partition_id,
            Intent::Migrate,
            RecordValue::MessageSubscription(value),
        );
    }
}

/// Closes the message subscriptions of an element that is left (PROCESS_MESSAGE_SUBSCRIPTION
/// DELETING and MESSAGE_SUBSCRIPTION DELETE to the message partition).
pub(crate) fn unsubscribe(
    ctx: &mut Ctx<'_, '_, '_>,
    element_instance_key: i64,
    targets: &dyn Fn(&str) -> bool,
) {
    for sub in open_subscriptions(ctx, element_instance_key, targets) {
        ctx.event(
            sub.key,
            Intent::Deleting,
            RecordValue::ProcessMessageSubscription(sub.record.clone()),
        );
        let value = MessageSubscriptionRecord {
            message_key: -1,
            variables: String::new(),
            ..ms_record(&sub.record)
        };
        ctx.send(
            sub.record.subscription_partition_id,
            Intent::Delete,
            RecordValue::MessageSubscription(value),
        );
    }
}

/// The message partition's view of a process instance's subscription.
pub(crate) fn ms_record(r: &ProcessMessageSubscriptionRecord) -> MessageSubscriptionRecord {
    MessageSubscriptionRecord {
        process_instance_key: r.process_instance_key,
        element_instance_key: r.element_instance_key,
        bpmn_process_id: r.bpmn_process_id.clone(),
        message_key: r.message_key,
        message_name: r.message_name.clone(),
        correlation_key: r.correlation_key.clone(),
        interrupting: r.interrupting,
        variables: r.variables.clone(),
        tenant_id: r.tenant_id.clone(),
    }
}

/// A MESSAGE_SUBSCRIPTION command answering `r`, sent from the process instance's partition.
pub(crate) fn ms_value(r: &ProcessMessageSubscriptionRecord) -> RecordValue {
    RecordValue::MessageSubscription(ms_record(r))
}

// ---------------------------------------------------------------------------------------------
// MESSAGE_SUBSCRIPTION commands (message partition)

/// The message subscription of an element for a message name (message partition side).
pub(crate) fn stored_ms(
    ctx: &Ctx<'_, '_, '_>,
    element_instance_key: i64,
    message_name: &str,
) -> Option<StoredMessageSubscription> {
    ctx.txn.get(
        Ks::MessageSubscriptions,
        &subscription_key(element_instance_key, message_name),
    )
}

/// A PROCESS_MESSAGE_SUBSCRIPTION command answering `r`, sent from this (message) partition.
pub(crate) fn pms_value(from_partition: u32, r: &MessageSubscriptionRecord) -> RecordValue {
    RecordValue::ProcessMessageSubscription(ProcessMessageSubscriptionRecord {
        subscription_partition_id: from_partition,
        process_instance_key: r.process_instance_key,
        element_instance_key: r.element_instance_key,
        process_definition_key: -1,
        bpmn_process_id: r.bpmn_process_id.clone(),
        message_key: r.message_key,
        message_name: r.message_name.clone(),
        variables: r.variables.clone(),
        interrupting: r.interrupting,
        correlation_key: r.correlation_key.clone(),
        element_id: String::new(),
        tenant_id: r.tenant_id.clone(),
    })
}

// ---------------------------------------------------------------------------------------------
// PROCESS_MESSAGE_SUBSCRIPTION commands (process instance partition)

pub(crate) fn stored_pms(
    ctx: &Ctx<'_, '_, '_>,
    r: &ProcessMessageSubscriptionRecord,
) -> Option<StoredProcessMessageSubscription> {
    ctx.txn.get(
        Ks::ProcessMessageSubscriptions,
        &process_subscription_key(r.element_instance_key, &r.message_name),
    )
}

// ---------------------------------------------------------------------------------------------
// Event triggers and message start events

/// Deployment of a new latest version: the previous version's message start events stop
/// listening and the new version's start listening.
pub(crate) fn replace_start_subscriptions(
    ctx: &mut Ctx<'_, '_, '_>,
    previous: Option<LatestVersion>,
    next: Option<(&zest_protocol::ProcessRecord, &zest_model::Process)>,
) {
    if let Some(prev) = previous {
        if let Some(prev_model) = ctx.models.get(ctx.txn, prev.key) {
            for &i in &prev_model
                .element(zest_model::Process::ROOT)
                .message_start_events
            {
                let el = prev_model.element(i);
                let Some(m) = &el.message else { continue };
                let k = start_subscription_key(&m.name.source(), prev.key, &el.id);
                if let Some(sub) = ctx
                    .txn
                    .get::<StoredStartSubscription>(Ks::MessageStartSubscriptions, &k)
                {
                    ctx.event(
                        sub.key,
                        Intent::Deleted,
                        RecordValue::MessageStartEventSubscription(sub.record),
                    );
                }
            }
        }
    }
    let Some((process, model)) = next else {
        return;
    };
    for &i in &model
        .element(zest_model::Process::ROOT)
        .message_start_events
    {
        let el = model.element(i);
        let Some(m) = &el.message else { continue };
        let key = ctx.next_key();
        ctx.event(
            key,
            Intent::Created,
            RecordValue::MessageStartEventSubscription(MessageStartEventSubscriptionRecord {
                process_definition_key: process.process_definition_key,
                bpmn_process_id: process.bpmn_process_id.clone(),
                message_name: m.name.source(),
                start_event_id: el.id.clone(),
                process_instance_key: -1,
                message_key: -1,
                correlation_key: String::new(),
                variables: String::new(),
                tenant_id: tenant(&process.tenant_id),
            }),
        );
    }
}

/// Called when a process instance ends. If a message start event started it with a
/// correlation key, the next buffered message with that key may start the next instance.
pub(crate) fn on_instance_ended(ctx: &mut Ctx<'_, '_, '_>, lock: Option<(String, String)>) {
    let Some((process_id, correlation_key)) = lock else {
        return;
    };
    let Some(latest) = ctx
        .txn
        .get::<LatestVersion>(Ks::ProcessLatest, process_id.as_bytes())
    else {
        return;
    };
    let Some(model) = ctx.models.get(ctx.txn, latest.key) else {
        return;
    };
    let mut best: Option<(i64, MessageRecord, StoredStartSubscription)> = None;
    for &i in &model
        .element(zest_model::Process::ROOT)
        .message_start_events
    {
        let el = model.element(i);
        let Some(m) = &el.message else { continue };
        let name = m.name.source();
        let Some(sub) = ctx.txn.get::<StoredStartSubscription>(
            Ks::MessageStartSubscriptions,
            &start_subscription_key(&name, latest.key, &el.id),
        ) else {
            continue;
        };
        if let Some((message_key, message)) =
            next_buffered_message(ctx, &name, &correlation_key, &process_id)
        {
            if best.as_ref().map(|b| message_key < b.0).unwrap_or(true) {
                best = Some((message_key, message, sub));
            }
        }
    }
    if let Some((message_key, message, sub)) = best {
        start_instance(ctx, &sub, message_key, &message);
    }
}

/// The (bpmn process id, correlation key) lock an instance holds, read before it ends.
pub(crate) fn start_lock_of(
    ctx: &Ctx<'_, '_, '_>,
    process_instance_key: i64,
) -> Option<(String, String)> {
    let raw = ctx.txn.get_raw(
        Ks::MessageStartSubscriptions,
        &start_lock_owner_key(process_instance_key),
    )?;
    // the value is the lock key: tag, process id, 0, correlation key, 0
    let body = raw.get(1..)?;
    let mut parts = body.split(|b| *b == 0);
    let process_id = String::from_utf8(parts.next()?.to_vec()).ok()?;
    let correlation_key = String::from_utf8(parts.next()?.to_vec()).ok()?;
    Some((process_id, correlation_key))
}

/// The oldest buffered message with this name and correlation key that is not expired and did
/// not correlate to the process yet.
pub(crate) fn next_buffered_message(
    ctx: &Ctx<'_, '_, '_>,
    name: &str,
    correlation_key: &str,
    bpmn_process_id: &str,
) -> Option<(i64, MessageRecord)> {
    let prefix = name_prefix(name, correlation_key);
    let mut found = None;
    ctx.txn
        .scan_prefix(Ks::MessageIndex, &prefix, usize::MAX)
        .into_iter()
        .find(|(k, _)| {
            let message_key = read_i64(k, k.len() - 8);
            let Some(m) = ctx
                .txn
                .get::<MessageRecord>(Ks::Messages, &key_i64(message_key))
            else {
                return false;
            };
            if m.deadline <= ctx.now
                || ctx
                    .txn
                    .get_raw(
                        Ks::MessageIndex,
                        &correlated_key(message_key, bpmn_process_id),
                    )
                    .is_some()
            {
                return false;
            }
            found = Some((message_key, m));
            true
        });
    found
}

/// A message start event correlates: a new instance of its process starts with the message's
/// variables (MESSAGE_START_EVENT_SUBSCRIPTION CORRELATED, PROCESS_EVENT TRIGGERING, then the
/// process's ACTIVATE_ELEMENT).
pub(crate) fn start_instance(
    ctx: &mut Ctx<'_, '_, '_>,
    sub: &StoredStartSubscription,
    message_key: i64,
    message: &MessageRecord,
) -> Option<i64> {
    let process = crate::behaviour::process_deletion::process_head(
        ctx.txn,
        sub.record.process_definition_key,
    )?;
    let instance_key = ctx.next_key();
    ctx.event(
        sub.key,
        Intent::Correlated,
        RecordValue::MessageStartEventSubscription(MessageStartEventSubscriptionRecord {
            process_instance_key: instance_key,
            message_key,
            correlation_key: message.correlation_key.clone(),
            variables: message.variables.clone(),
            ..sub.record.clone()
        }),
    );
    crate::behaviour::events::start_process_with_key(
        ctx,
        &process,
        instance_key,
        &sub.record.start_event_id,
        message.variables.clone(),
    );
    Some(instance_key)
}
