//! COMPENSATION_SUBSCRIPTION: completed activities a compensation throw event can undo.

use super::*;
use crate::state::Ks;
use crate::state::Txn;

/// COMPENSATION_SUBSCRIPTION CREATED, TRIGGERED, COMPLETED and DELETED.
pub(super) fn apply(
    txn: &mut Txn<'_>,
    r: &Record,
    c: &zest_protocol::CompensationSubscriptionRecord,
) {
    let key = crate::keys::compensation::subscription_key(c.process_instance_key, r.key);
    match r.intent {
        Intent::Created | Intent::Triggered => txn.put(Ks::CompensationSubscriptions, key, c),
        Intent::Completed | Intent::Deleted => txn.delete(Ks::CompensationSubscriptions, key),
        _ => {}
    }
}
