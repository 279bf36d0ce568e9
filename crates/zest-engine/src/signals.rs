//! Signals: BroadcastSignal, and the subscriptions of signal start, catch and boundary events.
//!
//! A subscription is kept under its signal name (`s` index, in the order Zeebe iterates them:
//! by owner key, then catch event id) and under its owner (`o` index), so a broadcast finds its
//! subscribers and a terminated element closes its own. The owner is the element instance that
//! waits (a catch event, an activity for its boundary events, an event-based gateway), or for a
//! start event the process definition.

use zest_model::{ElementIdx, Expression, Process};
use zest_protocol::{
    Intent, ProcessRecord, Record, RecordValue, RejectionType, SignalRecord,
    SignalSubscriptionRecord,
};

use crate::engine::{Ctx, ProcResult};
use crate::messages::tenant;
use crate::state::{key_i64, KeyBuf, Ks, Txn};
use crate::types::{ElementInstance, LatestVersion, StoredSignalSubscription};

fn owner(sub: &SignalSubscriptionRecord) -> i64 {
    if sub.catch_event_instance_key > 0 {
        sub.catch_event_instance_key
    } else {
        sub.process_definition_key
    }
}

/// `s` (signal name, owner key, catch event id).
pub(crate) fn subscription_key(sub: &SignalSubscriptionRecord) -> Vec<u8> {
    KeyBuf::new()
        .tag(b's')
        .str(&sub.signal_name)
        .i64(owner(sub))
        .str(&sub.catch_event_id)
        .build()
}

/// `o` (owner key, catch event id) -> signal name.
pub(crate) fn owner_key(sub: &SignalSubscriptionRecord) -> Vec<u8> {
    KeyBuf::new()
        .tag(b'o')
        .i64(owner(sub))
        .str(&sub.catch_event_id)
        .build()
}

fn name_prefix(name: &str) -> Vec<u8> {
    KeyBuf::new().tag(b's').str(name).build()
}

fn owner_prefix(owner: i64) -> Vec<u8> {
    KeyBuf::new().tag(b'o').i64(owner).build()
}

/// SIGNAL BROADCAST: BROADCASTED, then every subscription of the name is triggered: a start
/// event creates an instance, a waiting element instance gets the event.
pub fn broadcast(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, sig: &SignalRecord) -> ProcResult {
    if sig.signal_name.is_empty() {
        ctx.reject(
            cmd,
            RejectionType::InvalidArgument,
            "Expected to broadcast a signal with a name, but the name is empty".to_string(),
        );
        return Ok(());
    }
    let record = SignalRecord {
        tenant_id: tenant(&sig.tenant_id),
        ..sig.clone()
    };
    let key = ctx.next_key();
    ctx.event_and_respond(cmd, key, Intent::Broadcasted, RecordValue::Signal(record));
    let keys = ctx.txn.scan_prefix(
        Ks::SignalSubscriptions,
        &name_prefix(&sig.signal_name),
        usize::MAX,
    );
    let subs: Vec<StoredSignalSubscription> = keys
        .into_iter()
        .filter_map(|(k, _)| ctx.txn.get(Ks::SignalSubscriptions, &k))
        .collect();
    for sub in subs {
        let r = &sub.record;
        if r.catch_event_instance_key <= 0 {
            let Some(process) = ctx
                .txn
                .get::<crate::types::StoredProcess>(
                    Ks::Processes,
                    &key_i64(r.process_definition_key),
                )
                .map(|p| p.record)
            else {
                continue;
            };
            crate::events::start_process(ctx, &process, &r.catch_event_id, sig.variables.clone());
            continue;
        }
        let Some((inst, model, _)) = crate::bpmn::load(ctx, r.catch_event_instance_key) else {
            continue;
        };
        // an element takes one event at a time (another one may already be on its way)
        let pending = ctx
            .txn
            .get_raw(Ks::EventTriggers, &key_i64(inst.key))
            .is_some();
        if inst.state != Intent::ElementActivated || pending {
            continue;
        }
        crate::bpmn::trigger_event(ctx, &inst, &model, &r.catch_event_id, sig.variables.clone())?;
    }
    Ok(())
}

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

/// The signal subscriptions `owner` (an element instance or a process definition) holds:
/// each with its owner index key.
pub(crate) fn owned(txn: &Txn<'_>, owner: i64) -> Vec<(Vec<u8>, SignalSubscriptionRecord)> {
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
