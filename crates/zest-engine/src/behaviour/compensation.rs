//! Compensation: undoing completed activities, as Zeebe does it.
//!
//! An activity with a compensation boundary event becomes compensable when it completes:
//! COMPENSATION_SUBSCRIPTION CREATED names it, its flow scope instance and its handler (the
//! activity with `isForCompensation` associated with the boundary event). A completed
//! sub-process with compensable activities inside gets a subscription of its own, without
//! handler. A compensation throw event (intermediate or end) triggers the subscriptions of its
//! scope (or the one of its `activityRef`), in the order they were created: for a handler,
//! the boundary event is written ACTIVATING to COMPLETED at once and the handler activated
//! (TRIGGERED names the throw event and the handler instance); for a sub-process, TRIGGERED,
//! then its own activities' subscriptions, depth first. Each handler's completion completes
//! its subscription (and a sub-process's once none of its own is left); the throw event
//! completes when all it triggered are. The subscriptions left when the process instance
//! ends are DELETED.
//!
//! Handlers and boundary events run in the flow scope of the throw event (the scope of a
//! compensated sub-process is gone by then).

use zest_model::{ElementIdx, ElementKind, Process};
use zest_protocol::{CompensationSubscriptionRecord, Intent, RecordValue};

use crate::behaviour::element_instance::child_record;
use crate::behaviour::element_instance::pi_value;
use crate::context::{Ctx, ProcResult};
use crate::state::{read_i64, KeyBuf, Ks};
use crate::types::ElementInstance;

/// Whether the process uses compensation at all (nothing to look up otherwise).
pub(crate) fn used_by(model: &Process) -> bool {
    model.uses_compensation
}

/// The subscriptions of a process instance, in the order they were created.
fn subscriptions(
    ctx: &Ctx<'_, '_, '_>,
    process_instance_key: i64,
) -> Vec<(i64, CompensationSubscriptionRecord)> {
    ctx.txn
        .scan_prefix(
            Ks::CompensationSubscriptions,
            &KeyBuf::new().i64(process_instance_key).build(),
            usize::MAX,
        )
        .into_iter()
        .filter_map(|(k, v)| {
            let record = zest_protocol::codec::decode(&v).ok()?;
            Some((read_i64(&k, 8), record))
        })
        .collect()
}

/// A completing element: an activity with a compensation boundary event, or a sub-process
/// with compensable activities inside, becomes compensable.
pub(crate) fn on_completing(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    idx: ElementIdx,
) {
    let el = model.element(idx);
    let handler_id = match el.compensation_boundary {
        Some(b) => match model.element(b).compensation_handler {
            Some(h) => model.element(h).id.clone(),
            None => return,
        },
        None if matches!(el.kind, ElementKind::SubProcess) && used_by(model) => {
            let inner = subscriptions(ctx, inst.record.process_instance_key)
                .into_iter()
                .any(|(_, s)| s.compensable_activity_scope_key == inst.key);
            if !inner {
                return;
            }
            String::new()
        }
        None => return,
    };
    let record = CompensationSubscriptionRecord {
        process_instance_key: inst.record.process_instance_key,
        process_definition_key: inst.record.process_definition_key,
        compensable_activity_id: el.id.clone(),
        compensable_activity_scope_key: inst.parent_key,
        compensable_activity_instance_key: inst.key,
        throw_event_id: String::new(),
        throw_event_instance_key: -1,
        compensation_handler_id: handler_id,
        compensation_handler_instance_key: -1,
        variables: "{}".to_string(),
        tenant_id: inst.record.tenant_id.clone(),
    };
    let key = ctx.next_key();
    ctx.event(
        key,
        Intent::Created,
        RecordValue::CompensationSubscription(record),
    );
}

/// The process instance ends (or migrates): its subscriptions go.
pub(crate) fn delete_all(ctx: &mut Ctx<'_, '_, '_>, process: &ElementInstance, model: &Process) {
    if !used_by(model) {
        return;
    }
    for (key, record) in subscriptions(ctx, process.key) {
        ctx.event(
            key,
            Intent::Deleted,
            RecordValue::CompensationSubscription(record),
        );
    }
}

/// A compensation throw event was activated: triggers the subscriptions of its scope. False
/// when there is nothing to compensate (the event completes at once).
pub(crate) fn throw(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    idx: ElementIdx,
) -> ProcResult<bool> {
    let el = model.element(idx);
    // a throw event inside an event sub-process compensates the scope the event sub-process
    // runs in
    let mut scope_key = inst.parent_key;
    if let Some(scope) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &crate::state::key_i64(scope_key))
    {
        if scope.record.bpmn_element_type == zest_protocol::BpmnElementType::EventSubProcess {
            scope_key = scope.parent_key;
        }
    }
    let all = subscriptions(ctx, inst.record.process_instance_key);
    let chosen: Vec<(i64, CompensationSubscriptionRecord)> = all
        .iter()
        .filter(|(_, s)| {
            s.compensable_activity_scope_key == scope_key
                && s.throw_event_instance_key <= 0
                && el
                    .compensation_activity
                    .as_ref()
                    .is_none_or(|a| *a == s.compensable_activity_id)
        })
        .cloned()
        .collect();
    if chosen.is_empty() {
        return Ok(false);
    }
    for (key, sub) in chosen {
        trigger(ctx, inst, model, &all, key, sub);
    }
    Ok(true)
}

/// Triggers one subscription for the throw event `throw_inst`: its handler, or for a
/// sub-process its own activities' subscriptions.
fn trigger(
    ctx: &mut Ctx<'_, '_, '_>,
    throw_inst: &ElementInstance,
    model: &Process,
    all: &[(i64, CompensationSubscriptionRecord)],
    key: i64,
    mut sub: CompensationSubscriptionRecord,
) {
    sub.throw_event_id = throw_inst.record.element_id.clone();
    sub.throw_event_instance_key = throw_inst.key;
    let scope_key = throw_inst.parent_key;
    if sub.compensation_handler_id.is_empty() {
        let inner_scope = sub.compensable_activity_instance_key;
        ctx.event(
            key,
            Intent::Triggered,
            RecordValue::CompensationSubscription(sub),
        );
        for (k, s) in all
            .iter()
            .filter(|(_, s)| s.compensable_activity_scope_key == inner_scope)
        {
            trigger(ctx, throw_inst, model, all, *k, s.clone());
        }
        return;
    }
    let boundary = model
        .element_by_id(&sub.compensable_activity_id)
        .and_then(|(_, a)| a.compensation_boundary);
    let handler = model
        .element_by_id(&sub.compensation_handler_id)
        .map(|(h, _)| h);
    let (Some(boundary), Some(handler)) = (boundary, handler) else {
        return;
    };
    let b = child_record(&throw_inst.record, scope_key, model, boundary);
    let b_key = ctx.next_key();
    for intent in [
        Intent::ElementActivating,
        Intent::ElementActivated,
        Intent::ElementCompleting,
        Intent::ElementCompleted,
    ] {
        ctx.event(b_key, intent, pi_value(&b));
    }
    let h = child_record(&throw_inst.record, scope_key, model, handler);
    let h_key = ctx.next_key();
    ctx.command(h_key, Intent::ActivateElement, pi_value(&h));
    sub.compensation_handler_instance_key = h_key;
    ctx.event(
        key,
        Intent::Triggered,
        RecordValue::CompensationSubscription(sub),
    );
}

/// A compensation handler completed: its subscription completes, so do the sub-process
/// subscriptions with nothing left inside, and the throw event once all it triggered did.
pub(crate) fn handler_completed(ctx: &mut Ctx<'_, '_, '_>, handler: &ElementInstance) {
    let all = subscriptions(ctx, handler.record.process_instance_key);
    let Some((key, sub)) = all
        .iter()
        .find(|(_, s)| s.compensation_handler_instance_key == handler.key)
        .cloned()
    else {
        return;
    };
    let throw_key = sub.throw_event_instance_key;
    let mut done = vec![key];
    ctx.event(
        key,
        Intent::Completed,
        RecordValue::CompensationSubscription(sub.clone()),
    );
    // sub-process subscriptions whose activities are all compensated now
    let mut scope = sub.compensable_activity_scope_key;
    loop {
        let left = all
            .iter()
            .any(|(k, s)| s.compensable_activity_scope_key == scope && !done.contains(k));
        if left {
            break;
        }
        let Some((parent_key, parent)) = all
            .iter()
            .find(|(k, s)| {
                s.compensable_activity_instance_key == scope
                    && s.compensation_handler_id.is_empty()
                    && s.throw_event_instance_key == throw_key
                    && !done.contains(k)
            })
            .cloned()
        else {
            break;
        };
        done.push(parent_key);
        scope = parent.compensable_activity_scope_key;
        ctx.event(
            parent_key,
            Intent::Completed,
            RecordValue::CompensationSubscription(parent),
        );
    }
    let waiting = all
        .iter()
        .any(|(k, s)| s.throw_event_instance_key == throw_key && !done.contains(k));
    if waiting {
        return;
    }
    if let Some(throw) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &crate::state::key_i64(throw_key))
    {
        if throw.state == Intent::ElementActivated {
            ctx.command(throw.key, Intent::CompleteElement, pi_value(&throw.record));
        }
    }
}
