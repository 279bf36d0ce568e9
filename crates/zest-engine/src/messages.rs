//! Messages: PublishMessage, message subscriptions of waiting elements, message start events
//! and time-to-live expiry, with Zeebe's records and correlation rules
//! (`docs/design/zeebe-messages.md`).
//!
//! Two partitions meet in a correlation: the message partition (chosen by the hash of the
//! correlation key) holds messages and MESSAGE_SUBSCRIPTIONs; the process instance's partition
//! holds PROCESS_MESSAGE_SUBSCRIPTIONs. They talk through commands addressed to a partition
//! ([`Ctx::send`]): appended to the same batch when the target is this partition, as Zeebe
//! does, so with one partition a correlation is atomic and none of Zeebe's races can happen.

use zest_protocol::{
    partition_for_correlation_key, Intent, MessageBatchRecord, MessageRecord,
    MessageStartEventSubscriptionRecord, MessageSubscriptionRecord,
    ProcessMessageSubscriptionRecord, Record, RecordValue, RejectionType, DEFAULT_TENANT,
};

use crate::engine::{Ctx, ProcResult, Rejection};
use crate::state::{key_i64, read_i64, KeyBuf, Ks};
use crate::types::{
    ElementInstance, LatestVersion, ProcessMessageSubscriptionState, StoredMessageSubscription,
    StoredProcessMessageSubscription, StoredStartSubscription,
};
use crate::variables;

// ---------------------------------------------------------------------------------------------
// State keys (shared with the appliers)

pub(crate) fn message_name_key(name: &str, correlation_key: &str, message_key: i64) -> Vec<u8> {
    KeyBuf::new()
        .tag(b'n')
        .str(name)
        .str(correlation_key)
        .i64(message_key)
        .build()
}

/// Prefix of the `n` (name, correlation key, key) indexes of messages and of subscriptions.
fn name_prefix(name: &str, correlation_key: &str) -> Vec<u8> {
    KeyBuf::new()
        .tag(b'n')
        .str(name)
        .str(correlation_key)
        .build()
}

pub(crate) fn message_id_key(name: &str, correlation_key: &str, message_id: &str) -> Vec<u8> {
    KeyBuf::new()
        .tag(b'i')
        .str(name)
        .str(correlation_key)
        .str(message_id)
        .build()
}

pub(crate) fn correlated_key(message_key: i64, bpmn_process_id: &str) -> Vec<u8> {
    KeyBuf::new()
        .tag(b'c')
        .i64(message_key)
        .str(bpmn_process_id)
        .build()
}

pub(crate) fn correlated_prefix(message_key: i64) -> Vec<u8> {
    KeyBuf::new().tag(b'c').i64(message_key).build()
}

pub(crate) fn subscription_key(element_instance_key: i64, message_name: &str) -> Vec<u8> {
    KeyBuf::new()
        .tag(b's')
        .i64(element_instance_key)
        .str(message_name)
        .build()
}

pub(crate) fn subscription_name_key(
    message_name: &str,
    correlation_key: &str,
    element_instance_key: i64,
) -> Vec<u8> {
    KeyBuf::new()
        .tag(b'n')
        .str(message_name)
        .str(correlation_key)
        .i64(element_instance_key)
        .build()
}

pub(crate) fn process_subscription_key(element_instance_key: i64, message_name: &str) -> Vec<u8> {
    KeyBuf::new()
        .i64(element_instance_key)
        .str(message_name)
        .build()
}

pub(crate) fn start_subscription_key(
    message_name: &str,
    process_definition_key: i64,
    start_event_id: &str,
) -> Vec<u8> {
    KeyBuf::new()
        .tag(b's')
        .str(message_name)
        .i64(process_definition_key)
        .str(start_event_id)
        .build()
}

pub(crate) fn start_lock_key(bpmn_process_id: &str, correlation_key: &str) -> Vec<u8> {
    KeyBuf::new()
        .tag(b'l')
        .str(bpmn_process_id)
        .str(correlation_key)
        .build()
}

pub(crate) fn start_lock_owner_key(process_instance_key: i64) -> Vec<u8> {
    KeyBuf::new().tag(b'p').i64(process_instance_key).build()
}

pub(crate) fn tenant(t: &str) -> String {
    if t.is_empty() {
        DEFAULT_TENANT.to_string()
    } else {
        t.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// MESSAGE

/// MESSAGE PUBLISH: buffers the message (unless its time to live is over at once) and
/// correlates it to every waiting subscription and message start event it matches, at most once
/// per process.
pub fn publish(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, m: &MessageRecord) -> ProcResult {
    if m.name.is_empty() {
        return Err(Rejection::invalid_argument(
            "Expected to publish a message with a name, but the name is empty",
        ));
    }
    variables::parse_document(&m.variables).map_err(|e| {
        Rejection::invalid_argument(format!("Property 'variables' is invalid: {e}"))
    })?;
    if !m.message_id.is_empty()
        && ctx
            .txn
            .get_raw(
                Ks::MessageIndex,
                &message_id_key(&m.name, &m.correlation_key, &m.message_id),
            )
            .is_some()
    {
        return Err(Rejection::new(
            RejectionType::AlreadyExists,
            format!(
                "Expected to publish a new message with id '{}', but a message with that id was already published",
                m.message_id
            ),
        ));
    }
    let message = MessageRecord {
        deadline: ctx.now.saturating_add(m.time_to_live),
        tenant_id: tenant(&m.tenant_id),
        ..m.clone()
    };
    let key = ctx.next_key();
    let published = ctx
        .event(
            key,
            Intent::Published,
            RecordValue::Message(message.clone()),
        )
        .clone();
    ctx.respond(cmd, published);

    // waiting elements: one per process (bpmn process id), in subscription order
    let mut served: Vec<String> = Vec::new();
    let mut correlations = Vec::new();
    // the `n` index of subscriptions has the layout of the messages' one
    let prefix = name_prefix(&message.name, &message.correlation_key);
    for (k, _) in ctx
        .txn
        .scan_prefix(Ks::MessageSubscriptions, &prefix, usize::MAX)
    {
        let element_key = read_i64(&k, k.len() - 8);
        let Some(sub) = stored_ms(ctx, element_key, &message.name) else {
            continue;
        };
        if sub.correlating || served.contains(&sub.record.bpmn_process_id) {
            continue;
        }
        served.push(sub.record.bpmn_process_id.clone());
        correlations.push(correlating(ctx, &sub, key, &message));
    }
    // message start events of the latest versions
    let start_prefix = KeyBuf::new().tag(b's').str(&message.name).build();
    for (_, v) in ctx
        .txn
        .scan_prefix(Ks::MessageStartSubscriptions, &start_prefix, usize::MAX)
    {
        let Ok(sub) = zest_protocol::codec::decode::<StoredStartSubscription>(&v) else {
            continue;
        };
        let process_id = sub.record.bpmn_process_id.clone();
        if served.contains(&process_id)
            || (!message.correlation_key.is_empty()
                && ctx
                    .txn
                    .get_raw(
                        Ks::MessageStartSubscriptions,
                        &start_lock_key(&process_id, &message.correlation_key),
                    )
                    .is_some())
        {
            continue;
        }
        served.push(process_id);
        start_instance(ctx, &sub, key, &message);
    }
    for (partition, value) in correlations {
        ctx.send(partition, Intent::Correlate, value);
    }
    if message.time_to_live <= 0 {
        ctx.event(key, Intent::Expired, RecordValue::Message(message));
    }
    Ok(())
}

/// MESSAGE_SUBSCRIPTION CORRELATING for `message`; returns the PROCESS_MESSAGE_SUBSCRIPTION
/// CORRELATE command for the process instance's partition.
fn correlating(
    ctx: &mut Ctx<'_, '_, '_>,
    sub: &StoredMessageSubscription,
    message_key: i64,
    message: &MessageRecord,
) -> (u32, RecordValue) {
    let record = MessageSubscriptionRecord {
        message_key,
        variables: message.variables.clone(),
        ..sub.record.clone()
    };
    ctx.event(
        sub.key,
        Intent::Correlating,
        RecordValue::MessageSubscription(record.clone()),
    );
    let partition = zest_protocol::partition_of_key(record.process_instance_key);
    (partition, pms_value(ctx.partition_id, &record))
}

/// A message start event correlates: a new instance of its process starts with the message's
/// variables (MESSAGE_START_EVENT_SUBSCRIPTION CORRELATED, PROCESS_EVENT TRIGGERING, then the
/// process's ACTIVATE_ELEMENT).
fn start_instance(
    ctx: &mut Ctx<'_, '_, '_>,
    sub: &StoredStartSubscription,
    message_key: i64,
    message: &MessageRecord,
) {
    let Some(process) = ctx
        .txn
        .get::<crate::types::StoredProcess>(
            Ks::Processes,
            &key_i64(sub.record.process_definition_key),
        )
        .map(|p| p.record)
    else {
        return;
    };
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
    crate::events::start_process_with_key(
        ctx,
        &process,
        instance_key,
        &sub.record.start_event_id,
        message.variables.clone(),
    );
}

/// MESSAGE EXPIRE (one message) and MESSAGE_BATCH EXPIRE (many): removes buffered messages
/// whose time to live is over. Keys already gone are skipped.
pub fn expire(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let keys = match &cmd.value {
        RecordValue::MessageBatch(MessageBatchRecord { message_keys }) => message_keys.clone(),
        _ => {
            if ctx
                .txn
                .get::<MessageRecord>(Ks::Messages, &key_i64(cmd.key))
                .is_none()
            {
                return Err(Rejection::not_found(format!(
                    "Expected to expire message with key '{}', but no such message was found",
                    cmd.key
                )));
            }
            vec![cmd.key]
        }
    };
    for key in keys {
        if let Some(m) = ctx.txn.get::<MessageRecord>(Ks::Messages, &key_i64(key)) {
            ctx.event(key, Intent::Expired, RecordValue::Message(m));
        }
    }
    Ok(())
}

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

/// MESSAGE_SUBSCRIPTION MIGRATE: the subscription now belongs to another process definition.
pub fn subscription_migrate(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    r: &MessageSubscriptionRecord,
) -> ProcResult {
    match stored_ms(ctx, r.element_instance_key, &r.message_name) {
        Some(sub) => {
            let moved = MessageSubscriptionRecord {
                bpmn_process_id: r.bpmn_process_id.clone(),
                ..sub.record
            };
            ctx.event(sub.key, Intent::Migrated, RecordValue::MessageSubscription(moved));
        }
        None => ctx.reject(cmd, RejectionType::NotFound, format!(
            "Expected to migrate message subscription for element with key '{}' and message name '{}', but no such message subscription exists",
            r.element_instance_key, r.message_name
        )),
    }
    Ok(())
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
fn ms_record(r: &ProcessMessageSubscriptionRecord) -> MessageSubscriptionRecord {
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
fn ms_value(r: &ProcessMessageSubscriptionRecord) -> RecordValue {
    RecordValue::MessageSubscription(ms_record(r))
}

// ---------------------------------------------------------------------------------------------
// MESSAGE_SUBSCRIPTION commands (message partition)

/// The message subscription of an element for a message name (message partition side).
fn stored_ms(
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
fn pms_value(from_partition: u32, r: &MessageSubscriptionRecord) -> RecordValue {
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

/// MESSAGE_SUBSCRIPTION CREATE: opens the subscription; a buffered message that matches
/// correlates at once, otherwise the process instance learns the subscription is open.
pub fn subscription_create(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    r: &MessageSubscriptionRecord,
) -> ProcResult {
    let back_to = zest_protocol::partition_of_key(r.process_instance_key);
    if ctx
        .txn
        .get_raw(
            Ks::MessageSubscriptions,
            &subscription_key(r.element_instance_key, &r.message_name),
        )
        .is_some()
    {
        ctx.reject(cmd, RejectionType::InvalidState, format!(
            "Expected to open a new message subscription for element with key '{}' and message name '{}', but there is already a message subscription for that element key and message name opened",
            r.element_instance_key, r.message_name
        ));
        return Ok(());
    }
    let key = ctx.next_key();
    ctx.event(
        key,
        Intent::Created,
        RecordValue::MessageSubscription(r.clone()),
    );
    let sub = StoredMessageSubscription {
        key,
        record: r.clone(),
        correlating: false,
    };
    match next_buffered_message(ctx, &r.message_name, &r.correlation_key, &r.bpmn_process_id) {
        Some((message_key, message)) => {
            let (partition, value) = correlating(ctx, &sub, message_key, &message);
            ctx.send(partition, Intent::Correlate, value);
        }
        None => {
            let value = pms_value(ctx.partition_id, r);
            ctx.send(back_to, Intent::Create, value);
        }
    }
    Ok(())
}

/// The oldest buffered message with this name and correlation key that is not expired and did
/// not correlate to the process yet.
fn next_buffered_message(
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

/// MESSAGE_SUBSCRIPTION CORRELATE: the process instance took the message.
pub fn subscription_correlate(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    r: &MessageSubscriptionRecord,
) -> ProcResult {
    let Some(sub) = stored_ms(ctx, r.element_instance_key, &r.message_name) else {
        ctx.reject(cmd, RejectionType::NotFound, format!(
            "Expected to correlate subscription for element with key '{}' and message name '{}', but no such message subscription exists",
            r.element_instance_key, r.message_name
        ));
        return Ok(());
    };
    let record = MessageSubscriptionRecord {
        message_key: r.message_key,
        variables: r.variables.clone(),
        ..sub.record.clone()
    };
    ctx.event(
        sub.key,
        Intent::Correlated,
        RecordValue::MessageSubscription(record.clone()),
    );
    if !record.interrupting {
        // the subscription stays open: offer it the next buffered message
        let sub = StoredMessageSubscription {
            correlating: false,
            ..sub
        };
        if let Some((message_key, message)) = next_buffered_message(
            ctx,
            &record.message_name,
            &record.correlation_key,
            &record.bpmn_process_id,
        ) {
            let (partition, value) = correlating(ctx, &sub, message_key, &message);
            ctx.send(partition, Intent::Correlate, value);
        }
    }
    Ok(())
}

/// MESSAGE_SUBSCRIPTION REJECT: the process instance could not take the message (it left the
/// element meanwhile); the message may correlate again to this process.
pub fn subscription_reject(ctx: &mut Ctx<'_, '_, '_>, r: &MessageSubscriptionRecord) -> ProcResult {
    let key = stored_ms(ctx, r.element_instance_key, &r.message_name)
        .map(|s| s.key)
        .unwrap_or(-1);
    ctx.event(
        key,
        Intent::Rejected,
        RecordValue::MessageSubscription(r.clone()),
    );
    Ok(())
}

/// MESSAGE_SUBSCRIPTION DELETE: the element left; close the subscription and tell the process
/// instance.
pub fn subscription_delete(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    r: &MessageSubscriptionRecord,
) -> ProcResult {
    match stored_ms(ctx, r.element_instance_key, &r.message_name) {
        Some(sub) => {
            ctx.event(
                sub.key,
                Intent::Deleted,
                RecordValue::MessageSubscription(sub.record),
            );
        }
        None => ctx.reject(cmd, RejectionType::NotFound, format!(
            "Expected to close message subscription for element with key '{}' and message name '{}', but no such message subscription exists",
            r.element_instance_key, r.message_name
        )),
    }
    let value = pms_value(ctx.partition_id, r);
    ctx.send(
        zest_protocol::partition_of_key(r.process_instance_key),
        Intent::Delete,
        value,
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// PROCESS_MESSAGE_SUBSCRIPTION commands (process instance partition)

fn stored_pms(
    ctx: &Ctx<'_, '_, '_>,
    r: &ProcessMessageSubscriptionRecord,
) -> Option<StoredProcessMessageSubscription> {
    ctx.txn.get(
        Ks::ProcessMessageSubscriptions,
        &process_subscription_key(r.element_instance_key, &r.message_name),
    )
}

/// PROCESS_MESSAGE_SUBSCRIPTION CREATE: the message partition opened the subscription.
pub fn process_subscription_create(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    r: &ProcessMessageSubscriptionRecord,
) -> ProcResult {
    match stored_pms(ctx, r) {
        Some(sub) if sub.state == ProcessMessageSubscriptionState::Creating => {
            ctx.event(
                sub.key,
                Intent::Created,
                RecordValue::ProcessMessageSubscription(sub.record),
            );
        }
        Some(_) => ctx.reject(cmd, RejectionType::InvalidState, format!(
            "Expected to create process message subscription with element key '{}' and message name '{}', but it is already open or closing",
            r.element_instance_key, r.message_name
        )),
        None => ctx.reject(cmd, RejectionType::NotFound, format!(
            "Expected to create process message subscription with element key '{}' and message name '{}', but no such subscription was found",
            r.element_instance_key, r.message_name
        )),
    }
    Ok(())
}

/// PROCESS_MESSAGE_SUBSCRIPTION CORRELATE: a message arrived for a waiting element; the element
/// completes (catch event, receive task) with the message's variables.
pub fn process_subscription_correlate(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    r: &ProcessMessageSubscriptionRecord,
) -> ProcResult {
    let back_to = r.subscription_partition_id.max(1);
    let ms_value = ms_value(r);
    let sub = stored_pms(ctx, r);
    let inst = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(r.element_instance_key));
    let (sub, inst) = match (sub, inst) {
        (Some(s), Some(i))
            if s.state != ProcessMessageSubscriptionState::Deleting
                && i.state == Intent::ElementActivated =>
        {
            (s, i)
        }
        (Some(s), _) if s.state == ProcessMessageSubscriptionState::Deleting => {
            ctx.reject(cmd, RejectionType::InvalidState, format!(
                "Expected to correlate process message subscription with element key '{}' and message name '{}', but it is already closing",
                r.element_instance_key, r.message_name
            ));
            ctx.send(back_to, Intent::Reject, ms_value);
            return Ok(());
        }
        _ => {
            ctx.reject(cmd, RejectionType::NotFound, format!(
                "Expected to correlate process message subscription with element key '{}' and message name '{}', but no such subscription was found",
                r.element_instance_key, r.message_name
            ));
            ctx.send(back_to, Intent::Reject, ms_value);
            return Ok(());
        }
    };
    if r.element_id.is_empty() {
        // Zeebe fills the element id into the command while processing it (visible in its log)
        ctx.amend_command(RecordValue::ProcessMessageSubscription(
            ProcessMessageSubscriptionRecord {
                element_id: sub.record.element_id.clone(),
                ..r.clone()
            },
        ));
    }
    ctx.event(
        sub.key,
        Intent::Correlated,
        RecordValue::ProcessMessageSubscription(ProcessMessageSubscriptionRecord {
            message_key: r.message_key,
            variables: r.variables.clone(),
            ..sub.record.clone()
        }),
    );
    if let Some(model) = ctx.models.get(ctx.txn, inst.record.process_definition_key) {
        crate::bpmn::trigger_event(
            ctx,
            &inst,
            &model,
            &sub.record.element_id,
            r.variables.clone(),
        )?;
    }
    ctx.send(back_to, Intent::Correlate, ms_value);
    Ok(())
}

/// PROCESS_MESSAGE_SUBSCRIPTION DELETE: the message partition closed the subscription.
pub fn process_subscription_delete(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    r: &ProcessMessageSubscriptionRecord,
) -> ProcResult {
    match stored_pms(ctx, r) {
        Some(sub) => {
            ctx.event(
                sub.key,
                Intent::Deleted,
                RecordValue::ProcessMessageSubscription(sub.record),
            );
        }
        None => ctx.reject(cmd, RejectionType::NotFound, format!(
            "Expected to delete process message subscription with element key '{}' and message name '{}', but no such subscription was found",
            r.element_instance_key, r.message_name
        )),
    }
    Ok(())
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
