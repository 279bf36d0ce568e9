//! Event appliers: the only code that changes state. Processing applies each event as it is
//! written; replay and followers apply the same events from the log and reach the same state.
//! One module per value type; [`apply_event`] routes an event to its module. Appliers read and
//! write through [`Txn`] with the keys of [`crate::keys`] and import nothing above them.

mod ad_hoc;
mod batch_operation;
mod compensation;
mod deployment;
mod distribution;
mod event_trigger;
mod incident;
mod job;
mod message;
mod process_instance;
mod signal;
mod timer;
mod user;
mod user_task;
mod variable;

pub(crate) use job::{listener_phase, NO_CATCH_EVENT_FOUND};
pub(crate) use signal::owned_signal_subscriptions;

use std::collections::BTreeMap;

use zest_model::{BpmnElementType, ElementKind, Process};
use zest_protocol::{partition_of_key, Intent, Record, RecordValue};

use crate::models::Models;
use crate::state::{key_i64, Ks, Txn};
use crate::types::{ElementInstance, InstanceHead};

/// Keeps the key generator past `r`'s key, so a replayed partition generates the keys the
/// leader generated. Applied to events and to follow-up commands (whose key may be used by no
/// event, e.g. a parallel join's rejected activation).
pub fn observe_key(txn: &mut Txn<'_>, r: &Record) {
    if r.key > 0 && partition_of_key(r.key) == r.partition_id && r.key > txn.max_key() {
        txn.set_max_key(r.key);
    }
}

/// Applies one event (or a follow-up command's key) to the state.
pub fn apply_event(txn: &mut Txn<'_>, models: &mut Models, r: &Record) {
    observe_key(txn, r);
    distribution::note_received(txn, r);
    match &r.value {
        RecordValue::Process(p) => deployment::process(txn, models, r, p),
        RecordValue::Form(f) => deployment::form(txn, r, f),
        RecordValue::DecisionRequirements(d) => {
            deployment::decision_requirements(txn, models, r, d)
        }
        RecordValue::Decision(d) => deployment::decision(txn, r, d),
        RecordValue::ProcessInstanceCreation(c) => process_instance::creation(txn, r, c),
        RecordValue::ProcessInstance(pi) => process_instance::apply(txn, models, r, pi),
        RecordValue::Job(j) => job::apply(txn, r, j),
        RecordValue::JobBatch(b) => job::batch(txn, r, b),
        RecordValue::CompensationSubscription(c) => compensation::apply(txn, r, c),
        RecordValue::Variable(v) => variable::apply(txn, r, v),
        RecordValue::Incident(i) => incident::apply(txn, r, i),
        RecordValue::Message(m) => message::message(txn, r, m),
        RecordValue::MessageSubscription(m) => message::subscription(txn, r, m),
        RecordValue::ProcessMessageSubscription(m) => message::process_subscription(txn, r, m),
        RecordValue::MessageStartEventSubscription(m) => message::start_subscription(txn, r, m),
        RecordValue::ProcessEvent(e) => event_trigger::apply(txn, r, e),
        RecordValue::SignalSubscription(s) => signal::apply(txn, r, s),
        RecordValue::UserTask(u) => user_task::apply(txn, r, u),
        RecordValue::AdHocSubProcessInstruction(a) => ad_hoc::apply(txn, r, a),
        RecordValue::Timer(t) => timer::apply(txn, r, t),
        RecordValue::CommandDistribution(d) => distribution::apply(txn, r, d),
        RecordValue::BatchOperation(b) => batch_operation::apply(txn, r, b),
        RecordValue::User(u) => user::apply(txn, r, u),
        // signals, batches and the rest change no state of their own
        _ => {}
    }
}

/// Changes an element instance's state, job, timer, counters or join tokens: its record is
/// written back as it was stored, not decoded and encoded again ([`InstanceHead`]).
pub(crate) fn update_instance(txn: &mut Txn<'_>, key: i64, f: impl FnOnce(&mut InstanceHead<'_>)) {
    let k = key_i64(key);
    let updated = txn.with_raw(
        Ks::ElementInstances,
        &k,
        |bytes| match InstanceHead::decode(bytes?) {
            Ok(mut head) => {
                f(&mut head);
                Some(head.encode())
            }
            Err(e) => {
                tracing::error!(key, "undecodable element instance: {e}");
                None
            }
        },
    );
    if let Some(bytes) = updated {
        txn.put_raw(Ks::ElementInstances, k, bytes);
    }
}

/// [`update_instance`] for a change that reads the record.
pub(crate) fn update_whole_instance(
    txn: &mut Txn<'_>,
    key: i64,
    f: impl FnOnce(&mut ElementInstance),
) {
    let k = key_i64(key);
    if let Some(mut inst) = txn.get::<ElementInstance>(Ks::ElementInstances, &k) {
        f(&mut inst);
        txn.put(Ks::ElementInstances, k, &inst);
    }
}
