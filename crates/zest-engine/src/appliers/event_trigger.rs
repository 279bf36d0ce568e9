//! PROCESS_EVENT: an event on its way to the element it triggers, with its variables.

use super::*;
use crate::keys::event::trigger_key;
use crate::state::Ks;
use crate::state::Txn;
use crate::types::StoredTrigger;

/// PROCESS_EVENT TRIGGERING and TRIGGERED.
pub(super) fn apply(txn: &mut Txn<'_>, r: &Record, e: &zest_protocol::ProcessEventRecord) {
    match r.intent {
        Intent::Triggering => txn.put(
            Ks::EventTriggers,
            trigger_key(e),
            &StoredTrigger {
                event_key: r.key,
                element_id: e.target_element_id.clone(),
                variables: e.variables.clone(),
            },
        ),
        Intent::Triggered => txn.delete(Ks::EventTriggers, trigger_key(e)),
        _ => {}
    }
}
