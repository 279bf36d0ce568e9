//! BATCH_OPERATION events: an unfinished operation is kept (without its last chunk's items)
//! in `Ks::BatchOperations` until it completes or is canceled.

use zest_protocol::{BatchOperationRecord, Intent, Record};

use crate::state::{key_i64, Ks, Txn};

pub fn apply(txn: &mut Txn<'_>, r: &Record, b: &BatchOperationRecord) {
    let key = key_i64(r.key);
    match r.intent {
        Intent::Created | Intent::Executed | Intent::Suspended | Intent::Resumed => {
            let mut kept = b.clone();
            kept.items.clear();
            txn.put(Ks::BatchOperations, key, &kept);
        }
        Intent::Completed | Intent::Canceled => txn.delete(Ks::BatchOperations, key),
        _ => {}
    }
}
