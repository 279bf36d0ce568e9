//! COMMAND_DISTRIBUTION on the partition that distributes (what each partition has yet to
//! acknowledge), and what a receiving partition remembers of the distributions it processed.

use super::*;
use crate::keys::distribution::*;
use zest_protocol::{CommandDistributionRecord, RecordType, ValueType};

/// COMMAND_DISTRIBUTION DISTRIBUTING and ACKNOWLEDGED.
pub(super) fn apply(txn: &mut Txn<'_>, r: &Record, d: &CommandDistributionRecord) {
    match r.intent {
        Intent::Distributing => {
            txn.put(Ks::Distributions, pending_key(d.partition_id, r.key), d);
            txn.put_raw(
                Ks::Distributions,
                open_key(r.key, d.partition_id),
                Vec::new(),
            );
        }
        Intent::Acknowledged => {
            txn.delete(Ks::Distributions, pending_key(d.partition_id, r.key));
            txn.delete(Ks::Distributions, open_key(r.key, d.partition_id));
        }
        _ => {}
    }
}

/// The event that a receiving partition writes for a distributed command (DEPLOYMENT CREATED,
/// SIGNAL BROADCASTED, RESOURCE_DELETION DELETED) carries the distribution's key, which belongs to the origin partition:
/// the receiver remembers it as the last it processed from there, and takes a command sent
/// again (the origin retries until it is acknowledged) as done. The origin sends a partition
/// one distribution at a time, the next once the previous is acknowledged, so every older one
/// was processed before.
pub(super) fn note_received(txn: &mut Txn<'_>, r: &Record) {
    let distributed = matches!(
        (r.value_type, r.intent),
        (ValueType::Deployment, Intent::Created)
            | (ValueType::Signal, Intent::Broadcasted)
            | (ValueType::ResourceDeletion, Intent::Deleted)
    );
    if !distributed || r.record_type != RecordType::Event || r.key <= 0 {
        return;
    }
    let origin = partition_of_key(r.key);
    if origin != r.partition_id {
        txn.put(Ks::Distributions, received_key(origin), &r.key);
    }
}
