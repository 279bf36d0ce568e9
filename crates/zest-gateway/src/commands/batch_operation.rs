//! Batch operations (`docs/design/history.md`, "Batch operations"): created, canceled,
//! suspended and resumed on partition 1, where they are kept; the broker's driver
//! (`zest_broker::batch_ops`) does the items.

use zest_protocol::{BatchOperationRecord, Intent, RecordValue};

use super::{CommandError, Commands};

impl Commands {
    /// Creates a batch operation of `operation_type` over the process instances `filter` (the
    /// REST API's JSON, checked by the caller) finds, with its `plan` (JSON, or empty).
    /// Answers its key.
    pub async fn create_batch_operation(
        &self,
        operation_type: &str,
        filter: String,
        plan: String,
    ) -> Result<i64, CommandError> {
        let value = RecordValue::BatchOperation(Box::new(BatchOperationRecord {
            batch_operation_type: operation_type.to_string(),
            filter,
            plan,
            ..Default::default()
        }));
        let created = self.send(1, -1, Intent::Create, value).await?;
        Ok(created.key)
    }

    /// CANCEL, SUSPEND or RESUME of batch operation `key`.
    pub async fn batch_operation_lifecycle(
        &self,
        key: i64,
        intent: Intent,
    ) -> Result<(), CommandError> {
        let value = RecordValue::BatchOperation(Box::new(BatchOperationRecord {
            batch_operation_key: key,
            ..Default::default()
        }));
        let what = || {
            format!(
                "Expected to {} batch operation with key '{key}', but no such batch operation \
                 was found",
                intent.name().to_lowercase()
            )
        };
        self.route(key, intent, what)?;
        self.send(1, key, intent, value).await?;
        Ok(())
    }
}
