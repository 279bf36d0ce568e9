//! INCIDENT: open incidents, indexed by the element instance or job they are about.

use super::*;
use crate::keys::activatable_key;
use crate::state::key_i64;
use crate::state::Ks;
use crate::state::Txn;
use crate::types::ElementInstance;
use crate::types::FailedStep;
use crate::types::JobState;
use crate::types::StoredIncident;
use crate::types::StoredJob;

/// INCIDENT CREATED, MIGRATED and RESOLVED (a resolved job incident makes its job activatable
/// again).
pub(super) fn apply(txn: &mut Txn<'_>, r: &Record, i: &zest_protocol::IncidentRecord) {
    match r.intent {
        Intent::Created => {
            let failed_step = if i.job_key > 0 {
                FailedStep::Job
            } else {
                let inst: Option<ElementInstance> =
                    txn.get(Ks::ElementInstances, &key_i64(i.element_instance_key));
                // resolving it re-runs the step from the start, its execution listeners
                // included (as Zeebe re-processes the command that failed)
                txn.delete(Ks::ExecutionListeners, key_i64(i.element_instance_key));
                match inst.map(|e| e.state) {
                    Some(Intent::ElementCompleting) => FailedStep::CompleteElement,
                    _ => FailedStep::ActivateElement,
                }
            };
            txn.put(
                Ks::Incidents,
                key_i64(r.key),
                &StoredIncident {
                    record: i.clone(),
                    failed_step,
                },
            );
            let index_key = if i.job_key > 0 {
                i.job_key
            } else {
                i.element_instance_key
            };
            txn.put(Ks::IncidentIndex, key_i64(index_key), &r.key);
        }
        Intent::Migrated => {
            if let Some(mut stored) = txn.get::<StoredIncident>(Ks::Incidents, &key_i64(r.key)) {
                stored.record = i.clone();
                txn.put(Ks::Incidents, key_i64(r.key), &stored);
            }
        }
        Intent::Resolved => {
            txn.delete(Ks::Incidents, key_i64(r.key));
            let index_key = if i.job_key > 0 {
                i.job_key
            } else {
                i.element_instance_key
            };
            txn.delete(Ks::IncidentIndex, key_i64(index_key));
            if i.job_key > 0 {
                if let Some(mut job) = txn.get::<StoredJob>(Ks::Jobs, &key_i64(i.job_key)) {
                    if matches!(job.state, JobState::Failed | JobState::ErrorThrown) {
                        job.state = JobState::Activatable;
                        txn.put_raw(
                            Ks::JobsActivatable,
                            activatable_key(&job.record.job_type, i.job_key),
                            Vec::new(),
                        );
                        txn.put(Ks::Jobs, key_i64(i.job_key), &job);
                    }
                }
            }
        }
        _ => {}
    }
}
