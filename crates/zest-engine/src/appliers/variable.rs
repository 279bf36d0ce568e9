//! VARIABLE: one scope's variables, stored as one document (see `scope_variables`).

use super::*;
use crate::state::key_i64;
use crate::state::Ks;
use crate::state::Txn;

/// VARIABLE CREATED and UPDATED; a MIGRATED variable keeps its value (the record carries none).
pub(super) fn apply(txn: &mut Txn<'_>, r: &Record, v: &zest_protocol::VariableRecord) {
    if r.intent == Intent::Migrated {
        return;
    }
    let scope = key_i64(v.scope_key);
    let doc = txn.with_raw(Ks::Variables, &scope, |doc| {
        crate::scope_variables::upsert(doc.unwrap_or_default(), &v.name, r.key, &v.value)
    });
    txn.put_raw(Ks::Variables, scope, doc);
}
