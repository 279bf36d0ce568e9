//! Deployed resources: deleted on partition 1, which distributes the deletion.

use zest_protocol::{Intent, RecordValue, ResourceDeletionRecord, DEFAULT_TENANT};

use super::{CommandError, Commands};

impl Commands {
    /// Deletes the process definition, decision requirements or form `key`.
    pub async fn delete_resource(&self, key: i64) -> Result<(), CommandError> {
        let value = RecordValue::ResourceDeletion(ResourceDeletionRecord {
            resource_key: key,
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.send(1, key, Intent::Delete, value).await?;
        Ok(())
    }
}
