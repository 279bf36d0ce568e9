//! MESSAGE_SUBSCRIPTION and PROCESS_MESSAGE_SUBSCRIPTION commands: Zeebe's subscription
//! protocol between the partition of a waiting element instance and the partition of the
//! message (open, correlate, reject, delete, migrate).

use crate::behaviour::correlated_messages::correlated_before;
use crate::behaviour::event_scopes::trigger_event;
use crate::behaviour::message_subscriptions::{
    ms_value, next_buffered_message, pms_value, stored_ms, stored_pms,
};
use crate::context::{Ctx, ProcResult};
use crate::processors::message::correlating;
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, ProcessMessageSubscriptionState, StoredMessageSubscription};
use zest_protocol::{
    Intent, MessageSubscriptionRecord, ProcessMessageSubscriptionRecord, Record, RecordValue,
    RejectionType,
};

/// MESSAGE_SUBSCRIPTION CREATE: opens the subscription; a buffered message that matches
/// correlates at once, otherwise the process instance learns the subscription is open.
pub fn subscription_create(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    r: &MessageSubscriptionRecord,
) -> ProcResult {
    let back_to = zest_protocol::partition_of_key(r.process_instance_key);
    if let Some(open) = stored_ms(ctx, r.element_instance_key, &r.message_name) {
        ctx.reject(cmd, RejectionType::InvalidState, format!(
            "Expected to open a new message subscription for element with key '{}' and message name '{}', but there is already a message subscription for that element key and message name opened",
            r.element_instance_key, r.message_name
        ));
        // sent again by the instance's partition (its answer was lost): answer again, unless a
        // correlation is on its way there, which answers as well
        if back_to != ctx.partition_id && !open.correlating {
            let value = pms_value(ctx.partition_id, r);
            ctx.send(back_to, Intent::Create, value);
        }
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
    if correlated_before(
        ctx.txn,
        r.element_instance_key,
        &r.message_name,
        r.message_key,
    ) {
        // sent again: the answer was lost (see behaviour::correlated_messages)
        ctx.reject(cmd, RejectionType::InvalidState, format!(
            "Expected to correlate the message with key '{}' to the process message subscription with element key '{}' and message name '{}', but it correlated before; its correlation is confirmed again",
            r.message_key, r.element_instance_key, r.message_name
        ));
        ctx.send(back_to, Intent::Correlate, ms_value);
        return Ok(());
    }
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
        trigger_event(
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
