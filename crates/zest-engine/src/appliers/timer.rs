//! TIMER: timers, indexed by due date and by the element instance that owns them.

use super::*;
use crate::appliers::{update_instance, update_whole_instance};
use crate::keys::due_key;
use crate::keys::element_timer_key;
use crate::state::key_i64;
use crate::state::Ks;
use crate::state::Txn;

/// TIMER CREATED, MIGRATED, TRIGGERED and CANCELED.
pub(super) fn apply(txn: &mut Txn<'_>, r: &Record, t: &zest_protocol::TimerRecord) {
    match r.intent {
        Intent::Created => {
            txn.put(Ks::Timers, key_i64(r.key), t);
            txn.put_raw(Ks::TimerDueDates, due_key(t.due_date, r.key), Vec::new());
            txn.put_raw(
                Ks::ElementTimers,
                element_timer_key(timer_owner(t), r.key),
                Vec::new(),
            );
            update_whole_instance(txn, t.element_instance_key, |e| {
                if e.record.element_id == t.target_element_id {
                    e.timer_key = r.key;
                }
            });
        }
        // a migrated timer keeps its due date and owner; its target and process change
        Intent::Migrated => txn.put(Ks::Timers, key_i64(r.key), t),
        Intent::Triggered | Intent::Canceled => {
            txn.delete(Ks::Timers, key_i64(r.key));
            txn.delete(Ks::TimerDueDates, due_key(t.due_date, r.key));
            txn.delete(Ks::ElementTimers, element_timer_key(timer_owner(t), r.key));
            update_instance(txn, t.element_instance_key, |e| {
                if e.timer_key == r.key {
                    e.timer_key = -1;
                }
            });
        }
        _ => {}
    }
}

/// Whose timer it is: the element instance's, or for a timer start event the process
/// definition's (a new version cancels the previous version's start timers through it).
pub(crate) fn timer_owner(t: &zest_protocol::TimerRecord) -> i64 {
    if t.element_instance_key > 0 {
        t.element_instance_key
    } else {
        t.process_definition_key
    }
}
