//! Messages: published on the partition of their correlation key (its hash, as Zeebe routes
//! them).

use zest_protocol::{Intent, MessageRecord, RecordValue, DEFAULT_TENANT};

use super::{variables_document, CommandError, Commands};

/// A message to publish: name, correlation key, time to live (ms), id (for deduplication) and
/// variables (JSON object text).
#[derive(Debug, Default)]
pub struct NewMessage {
    pub name: String,
    pub correlation_key: String,
    pub time_to_live: i64,
    pub message_id: String,
    pub variables: String,
}

/// A published message: its key and tenant.
#[derive(Debug)]
pub struct Published {
    pub key: i64,
    pub tenant_id: String,
}

impl Commands {
    /// Publishes a message: correlated at once to the subscriptions waiting for it, and
    /// buffered for its time to live.
    pub async fn publish_message(&self, m: NewMessage) -> Result<Published, CommandError> {
        if m.name.trim().is_empty() {
            return Err(CommandError::Invalid(
                "Expected to publish a message with a name, but the name is empty".into(),
            ));
        }
        let message = MessageRecord {
            name: m.name,
            variables: variables_document(m.variables, "variables")?,
            correlation_key: m.correlation_key,
            time_to_live: m.time_to_live,
            message_id: m.message_id,
            deadline: -1,
            tenant_id: DEFAULT_TENANT.into(),
        };
        let partition = zest_protocol::partition_for_correlation_key(
            &message.correlation_key,
            self.broker.partition_count(),
        );
        let value = RecordValue::Message(message);
        let event = self.send(partition, -1, Intent::Publish, value).await?;
        let tenant_id = match &event.value {
            RecordValue::Message(m) => m.tenant_id.clone(),
            _ => DEFAULT_TENANT.into(),
        };
        Ok(Published {
            key: event.key,
            tenant_id,
        })
    }
}
