//! HISTORY_DELETION: Camunda 8.9's deletion of a finished process instance's or a decision
//! evaluation's history, as a replicated fact (`docs/design/history.md`, "History
//! deletion"). DELETE is written to the partition of the resource's key; the engine answers
//! it (an instance still running is refused) and writes DELETED, which each replica's
//! exporter applies to its history store.

use serde::{Deserialize, Serialize};

/// One history deletion: the key of the process instance (with everything under it), of the
/// decision evaluation (with all its decision instances), or of the process definition (its
/// row, once history holds no instance of it: the last step of DELETE_PROCESS_DEFINITION).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HistoryDeletionRecord {
    pub resource_key: i64,
    /// PROCESS_INSTANCE, DECISION_INSTANCE or PROCESS_DEFINITION (Camunda's
    /// `HistoryDeletionType`).
    pub resource_type: String,
}

impl HistoryDeletionRecord {
    /// What a history deletion removes: a process instance and everything under it, a
    /// decision evaluation's decision instances, or a process definition without instances.
    pub const PROCESS_INSTANCE: &'static str = "PROCESS_INSTANCE";
    pub const DECISION_INSTANCE: &'static str = "DECISION_INSTANCE";
    pub const PROCESS_DEFINITION: &'static str = "PROCESS_DEFINITION";

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "resourceKey": self.resource_key,
            "resourceType": self.resource_type,
        })
    }
}
