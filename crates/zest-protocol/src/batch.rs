//! BATCH_OPERATION: an operation over the process instances a filter finds (Camunda 8.8's
//! batch operations: cancel, resolve incidents, migrate, modify). Kept on partition 1; the
//! broker's driver finds the items and reports each chunk it has done (EXECUTE).

use serde::{Deserialize, Serialize};

/// One batch operation, or one chunk of its progress (EXECUTE, EXECUTED).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BatchOperationRecord {
    pub batch_operation_key: i64,
    /// Camunda's `BatchOperationTypeEnum`: CANCEL_PROCESS_INSTANCE, RESOLVE_INCIDENT,
    /// MIGRATE_PROCESS_INSTANCE, MODIFY_PROCESS_INSTANCE.
    pub batch_operation_type: String,
    /// ACTIVE, SUSPENDED, COMPLETED, CANCELED (in events).
    pub state: String,
    /// The process instance filter, as the REST API's JSON.
    pub filter: String,
    /// The migration plan or the move instructions, as the REST API's JSON; empty otherwise.
    pub plan: String,
    /// Where the next chunk's search starts: the search's cursor after the last item done.
    pub cursor: String,
    /// EXECUTE: the cursor the chunk's search started from, which must still be the
    /// operation's (a chunk is recorded once, even when a deposed leader's driver reports it).
    pub from_cursor: String,
    /// Items the filter found when the first chunk was searched; -1 before.
    pub total: i64,
    /// Items done so far (after this chunk, in EXECUTED).
    pub completed: i64,
    pub failed: i64,
    /// EXECUTE and EXECUTED: the chunk's items.
    pub items: Vec<BatchOperationItem>,
    /// EXECUTE: this chunk is the last (the search found nothing after it).
    pub last_chunk: bool,
}

/// One item of a chunk: what was done to one process instance (or incident).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BatchOperationItem {
    /// The process instance key, or the incident key for RESOLVE_INCIDENT.
    pub item_key: i64,
    pub process_instance_key: i64,
    /// COMPLETED or FAILED.
    pub state: String,
    /// The rejection's reason when FAILED.
    pub error_message: String,
}

impl BatchOperationRecord {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "batchOperationKey": self.batch_operation_key,
            "batchOperationType": self.batch_operation_type,
            "state": self.state,
            "total": self.total,
            "completed": self.completed,
            "failed": self.failed,
            "items": self.items.iter().map(|i| serde_json::json!({
                "itemKey": i.item_key, "processInstanceKey": i.process_instance_key,
                "state": i.state, "errorMessage": i.error_message,
            })).collect::<Vec<_>>(),
            "lastChunk": self.last_chunk,
        })
    }
}
