//! MESSAGE PUBLISH and EXPIRE: a published message correlates to the subscriptions waiting
//! for it (and starts instances at message start events), or is buffered until its time to
//! live ends.

use crate::behaviour::message_subscriptions::{pms_value, start_instance, stored_ms};
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::keys::message::*;
use crate::state::{key_i64, read_i64, KeyBuf, Ks};
use crate::types::tenant;
use crate::types::{StoredMessageSubscription, StoredStartSubscription};
use zest_protocol::{
    Intent, MessageBatchRecord, MessageCorrelationRecord, MessageRecord, MessageSubscriptionRecord,
    Record, RecordValue, RejectionType,
};

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
    correlate_now(ctx, key, &message);
    if message.time_to_live <= 0 {
        ctx.event(key, Intent::Expired, RecordValue::Message(message));
    }
    Ok(())
}

/// MESSAGE_CORRELATION CORRELATE (Zeebe 8.8's message correlation): the message correlates at
/// once, as a published message with no time to live, and the answer names the first process
/// instance it reached (a waiting one's, or one it started); when it reaches none, the command
/// is rejected NOT_FOUND and nothing of it stays.
pub fn correlate(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    c: &MessageCorrelationRecord,
) -> ProcResult {
    if c.name.is_empty() {
        return Err(Rejection::invalid_argument(
            "Expected to correlate a message with a name, but the name is empty",
        ));
    }
    variables::parse_document(&c.variables).map_err(|e| {
        Rejection::invalid_argument(format!("Property 'variables' is invalid: {e}"))
    })?;
    let message = MessageRecord {
        name: c.name.clone(),
        correlation_key: c.correlation_key.clone(),
        time_to_live: 0,
        variables: c.variables.clone(),
        message_id: String::new(),
        deadline: ctx.now,
        tenant_id: tenant(&c.tenant_id),
    };
    let key = ctx.next_key();
    ctx.event(
        key,
        Intent::Published,
        RecordValue::Message(message.clone()),
    );
    let reached = correlate_now(ctx, key, &message);
    let Some(&process_instance_key) = reached.first() else {
        return Err(Rejection::not_found(format!(
            "Expected to find subscription for message with name '{}' and correlation key '{}', but none was found.",
            c.name, c.correlation_key
        )));
    };
    ctx.event(key, Intent::Expired, RecordValue::Message(message.clone()));
    let correlated = MessageCorrelationRecord {
        message_key: key,
        process_instance_key,
        tenant_id: message.tenant_id,
        ..c.clone()
    };
    ctx.event_and_respond(
        cmd,
        key,
        Intent::Correlated,
        RecordValue::MessageCorrelation(correlated),
    );
    Ok(())
}

/// Correlates the message `key` to every waiting subscription and message start event it
/// matches, at most once per process; returns the process instances it reached, in order.
fn correlate_now(ctx: &mut Ctx<'_, '_, '_>, key: i64, message: &MessageRecord) -> Vec<i64> {
    let mut reached = Vec::new();
    // waiting elements: one per process (bpmn process id), in subscription order
    let mut served: Vec<String> = Vec::new();
    let mut correlations = Vec::new();
    // the index of subscriptions by name has the layout of the messages' one
    let prefix = name_prefix(&message.name, &message.correlation_key);
    for (k, _) in ctx
        .txn
        .scan_prefix(Ks::MessageSubscriptionNames, &prefix, usize::MAX)
    {
        let element_key = read_i64(&k, k.len() - 8);
        let Some(sub) = stored_ms(ctx, element_key, &message.name) else {
            continue;
        };
        if sub.correlating || served.contains(&sub.record.bpmn_process_id) {
            continue;
        }
        served.push(sub.record.bpmn_process_id.clone());
        reached.push(sub.record.process_instance_key);
        correlations.push(correlating(ctx, &sub, key, message));
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
        reached.extend(start_instance(ctx, &sub, key, message));
    }
    for (partition, value) in correlations {
        ctx.send(partition, Intent::Correlate, value);
    }
    reached
}

/// MESSAGE_SUBSCRIPTION CORRELATING for `message`; returns the PROCESS_MESSAGE_SUBSCRIPTION
/// CORRELATE command for the process instance's partition.
pub(crate) fn correlating(
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
