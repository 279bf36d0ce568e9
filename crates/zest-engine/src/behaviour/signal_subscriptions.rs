//! The subscriptions of signal start, catch and boundary events (the broadcast is
//! `processors/signal.rs`).
//!
//! A subscription is kept under its signal name (`s` index, in the order Zeebe iterates them:
//! by owner key, then catch event id) and under its owner (`o` index), so a broadcast finds its
//! subscribers and a terminated element closes its own. The owner is the element instance that
//! waits (a catch event, an activity for its boundary events, an event-based gateway), or for a
//! start event the process definition.

use zest_model::{ElementIdx, Expression, Process};
use zest_protocol::{Intent, ProcessRecord, RecordValue, SignalSubscriptionRecord};

use crate::appliers::owned_signal_subscriptions as owned;
use crate::context::Ctx;
use crate::keys::signal::*;
use crate::state::Ks;
use crate::types::tenant;
use crate::types::{ElementInstance, LatestVersion, StoredSignalSubscription};

/// Opens the subscription of the signal catch event `catch_event_id` under the element
/// instance `inst`.
pub(crate) fn subscribe(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    catch_event_id: &str,
    signal_name: String,
) {
    let key = ctx.next_key();
    ctx.event(
        key,
        Intent::Created,
        RecordValue::SignalSubscription(SignalSubscriptionRecord {
            process_definition_key: inst.record.process_definition_key,
            bpmn_process_id: inst.record.bpmn_process_id.clone(),
            catch_event_id: catch_event_id.to_string(),
            catch_event_instance_key: inst.key,
            signal_name,
            tenant_id: tenant(&inst.record.tenant_id),
        }),
    );
}

/// Closes the signal subscriptions an element instance holds (SIGNAL_SUBSCRIPTION DELETED).
pub(crate) fn unsubscribe(ctx: &mut Ctx<'_, '_, '_>, owner: i64, targets: &dyn Fn(&str) -> bool) {
    for (_, record) in owned(ctx.txn, owner) {
        if !targets(&record.catch_event_id) {
            continue;
        }
        let probe_key = subscription_key(&record);
        if let Some(sub) = ctx
            .txn
            .get::<StoredSignalSubscription>(Ks::SignalSubscriptions, &probe_key)
        {
            ctx.event(
                sub.key,
                Intent::Deleted,
                RecordValue::SignalSubscription(sub.record),
            );
        }
    }
}

/// Migration: the subscriptions `owner` holds for the catch events `mapped` names (source id
/// to target element id) move to those targets of the process `to` (SIGNAL_SUBSCRIPTION
/// MIGRATED).
pub(crate) fn migrate(
    ctx: &mut Ctx<'_, '_, '_>,
    owner: i64,
    mapped: &[(String, String)],
    to: &zest_protocol::ProcessInstanceRecord,
) {
    for (_, record) in owned(ctx.txn, owner) {
        let Some((_, target)) = mapped.iter().find(|(s, _)| *s == record.catch_event_id) else {
            continue;
        };
        let Some(sub) = ctx
            .txn
            .get::<StoredSignalSubscription>(Ks::SignalSubscriptions, &subscription_key(&record))
        else {
            continue;
        };
        let moved = SignalSubscriptionRecord {
            catch_event_id: target.clone(),
            process_definition_key: to.process_definition_key,
            bpmn_process_id: to.bpmn_process_id.clone(),
            ..sub.record
        };
        ctx.event(
            sub.key,
            Intent::Migrated,
            RecordValue::SignalSubscription(moved),
        );
    }
}

/// The signal start events of a process (directly in the process).
fn signal_starts(model: &Process) -> Vec<ElementIdx> {
    (1..model.elements.len())
        .filter(|&i| {
            let el = model.element(i);
            matches!(el.kind, zest_model::ElementKind::SignalStartEvent)
                && el.flow_scope == Some(Process::ROOT)
        })
        .collect()
}

/// Deployment of a new latest version: the previous version's signal start events stop
/// listening and the new version's start listening.
pub(crate) fn replace_start_subscriptions(
    ctx: &mut Ctx<'_, '_, '_>,
    previous: Option<LatestVersion>,
    next: Option<(&ProcessRecord, &Process)>,
) {
    if let Some(prev) = previous {
        unsubscribe(ctx, prev.key, &|_| true);
    }
    let Some((process, model)) = next else {
        return;
    };
    for i in signal_starts(model) {
        let el = model.element(i);
        let Some(Expression::Static(name)) = &el.signal else {
            continue;
        };
        let key = ctx.next_key();
        ctx.event(
            key,
            Intent::Created,
            RecordValue::SignalSubscription(SignalSubscriptionRecord {
                process_definition_key: process.process_definition_key,
                bpmn_process_id: process.bpmn_process_id.clone(),
                catch_event_id: el.id.clone(),
                catch_event_instance_key: -1,
                signal_name: name.clone(),
                tenant_id: tenant(&process.tenant_id),
            }),
        );
    }
}
