//! Deleted process versions and their running instances, as Zeebe's pending deletion: a
//! version deleted while instances of it still run on a partition (a deletion distributed from
//! partition 1 reaches partitions it could not check) stops being the latest and starts no new
//! instance (PROCESS DELETING); it is deleted (PROCESS DELETED) when its last instance there
//! ends. The instances by version are an index (`Ks::DefinitionInstances`), so none of this
//! scans the element instances.

use zest_protocol::{Intent, RecordValue};

use crate::context::Ctx;
use crate::keys::definition_instances::{instances_prefix, pending_deletion_key};
use crate::state::{key_i64, Ks, Txn};
use crate::types::{ProcessHead, StoredProcess};

/// Whether an instance of the process version `definition` runs on this partition.
pub(crate) fn has_running_instances(txn: &Txn<'_>, definition: i64) -> bool {
    !txn.scan_prefix(Ks::DefinitionInstances, &instances_prefix(definition), 1)
        .is_empty()
}

/// Whether the version `definition` is deleted and waits for its last instance here.
pub(crate) fn is_pending(txn: &Txn<'_>, definition: i64) -> bool {
    txn.contains(Ks::DefinitionInstances, &pending_deletion_key(definition))
}

/// The process version `definition` when it is deployed and not deleted: what new instances
/// and migrations may use.
pub(crate) fn deployed(txn: &Txn<'_>, definition: i64) -> Option<ProcessHead> {
    let head = process_head(txn, definition)?;
    (!is_pending(txn, definition)).then_some(head)
}

/// The process version `definition` as instances start it (deleted or not).
pub(crate) fn process_head(txn: &Txn<'_>, definition: i64) -> Option<ProcessHead> {
    txn.get(Ks::Processes, &key_i64(definition))
}

/// After an instance of `definition` ended: PROCESS DELETED when the version waited for its
/// last instance and that was it.
pub(crate) fn on_instance_ended(ctx: &mut Ctx<'_, '_, '_>, definition: i64) {
    if !is_pending(ctx.txn, definition) || has_running_instances(ctx.txn, definition) {
        return;
    }
    if let Some(stored) = ctx
        .txn
        .get::<StoredProcess>(Ks::Processes, &key_i64(definition))
    {
        ctx.event(
            definition,
            Intent::Deleted,
            RecordValue::Process(stored.record),
        );
    }
}
