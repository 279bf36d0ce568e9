//! HISTORY_DELETION: Camunda 8.9's deletion of history (`docs/design/history.md`, "History
//! deletion"). The engine keeps no finished instance, so it cannot tell a finished instance
//! from an unknown key: the gateway answers 404 from history before it sends DELETE. What the
//! engine knows is what is running: a process instance still in the state is refused
//! (INVALID_STATE, a 409), and so is a process definition still deployed (the last step of a
//! DELETE_PROCESS_DEFINITION batch operation, after its resource was deleted). Anything else
//! is accepted with DELETED, the replicated fact that every replica's exporter applies to its
//! store.

use zest_protocol::{BpmnElementType, HistoryDeletionRecord, Intent, Record, RecordValue};

use crate::context::{Ctx, ProcResult, Rejection};
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, StoredProcess};

/// DELETE: refused while the process instance runs, else DELETED.
pub fn delete(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, r: &HistoryDeletionRecord) -> ProcResult {
    let key = r.resource_key;
    match r.resource_type.as_str() {
        HistoryDeletionRecord::PROCESS_INSTANCE => {
            let running: Option<ElementInstance> = ctx.txn.get(Ks::ElementInstances, &key_i64(key));
            if let Some(inst) = running {
                let what = if inst.record.bpmn_element_type == BpmnElementType::Process {
                    "it is still active"
                } else {
                    "it is an active element instance, not a finished process instance"
                };
                return Err(Rejection::invalid_state(format!(
                    "Expected to delete the history of process instance with key '{key}', \
                     which must be COMPLETED or TERMINATED, but {what}"
                )));
            }
        }
        HistoryDeletionRecord::PROCESS_DEFINITION => {
            if ctx
                .txn
                .get::<StoredProcess>(Ks::Processes, &key_i64(key))
                .is_some()
            {
                return Err(Rejection::invalid_state(format!(
                    "Expected to delete the history of process definition with key '{key}', \
                     but it is still deployed"
                )));
            }
        }
        HistoryDeletionRecord::DECISION_INSTANCE => {}
        other => {
            return Err(Rejection::invalid_argument(format!(
                "Expected a history deletion of a PROCESS_INSTANCE, a DECISION_INSTANCE or a \
                 PROCESS_DEFINITION, but got '{other}'"
            )))
        }
    }
    let deleted = RecordValue::HistoryDeletion(r.clone());
    ctx.event_and_respond(cmd, key, Intent::Deleted, deleted);
    Ok(())
}
