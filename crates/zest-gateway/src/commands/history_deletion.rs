//! History deletion (`docs/design/history.md`, "History deletion"): HISTORY_DELETION DELETE on
//! the partition of the key; the engine refuses a process instance still running (409), and
//! its DELETED is what every replica's exporter applies. Whether history holds the key (404)
//! is the caller's to check first: the engine cannot know a finished instance.

use zest_protocol::{HistoryDeletionRecord, Intent, RecordValue};

use super::{CommandError, Commands};

impl Commands {
    /// Deletes the history of `key`: a process instance (`HistoryDeletionRecord::
    /// PROCESS_INSTANCE`, with everything under it) or a decision evaluation
    /// (`DECISION_INSTANCE`, its decision instances).
    pub async fn delete_history(&self, key: i64, resource_type: &str) -> Result<(), CommandError> {
        let value = RecordValue::HistoryDeletion(HistoryDeletionRecord {
            resource_key: key,
            resource_type: resource_type.to_string(),
        });
        let what = || {
            format!(
                "Expected to delete the history of {} with key '{key}', but none was found",
                resource_type.to_lowercase().replace('_', " ")
            )
        };
        self.send_keyed(key, Intent::Delete, value, what).await?;
        Ok(())
    }
}
