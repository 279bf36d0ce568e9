//! Deployed resources: deleted on partition 1, which distributes the deletion.

use zest_protocol::{Intent, RecordValue, ResourceDeletionRecord, DEFAULT_TENANT};

use super::{CommandError, Commands};

impl Commands {
    /// Deletes the process definition, decision requirements or form `key`.
    /// A key that is not partition 1's is no resource's (they are all deployed there): NOT_FOUND
    /// as the engine words it, since partition 1 would take such a command for one distributed
    /// by another partition and not answer the client.
    pub async fn delete_resource(&self, key: i64) -> Result<(), CommandError> {
        if key <= 0 || self.broker.partition_of(key) != 1 {
            return Err(CommandError::NotFound(format!(
                "Command 'DELETE' rejected with code 'NOT_FOUND': Expected to delete resource but \
                 no resource found with key `{key}`"
            )));
        }
        let value = RecordValue::ResourceDeletion(ResourceDeletionRecord {
            resource_key: key,
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.send(1, key, Intent::Delete, value).await?;
        Ok(())
    }
}
