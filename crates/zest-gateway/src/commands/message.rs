//! Messages: published on the partition of their correlation key (its hash, as Zeebe routes
//! them).

use zest_protocol::{Intent, MessageCorrelationRecord, MessageRecord, RecordValue, DEFAULT_TENANT};

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

/// A correlated message: its key, tenant and the process instance it reached.
#[derive(Debug)]
pub struct Correlated {
    pub key: i64,
    pub tenant_id: String,
    pub process_instance_key: i64,
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

    /// Correlates a message now, to a waiting subscription or a message start event, without
    /// buffering it: NOT_FOUND when nothing waits for it (MESSAGE_CORRELATION CORRELATE, on the
    /// partition of its correlation key).
    pub async fn correlate_message(
        &self,
        name: String,
        correlation_key: String,
        variables: String,
    ) -> Result<Correlated, CommandError> {
        if name.trim().is_empty() {
            return Err(CommandError::Invalid(
                "Expected to correlate a message with a name, but the name is empty".into(),
            ));
        }
        let partition = zest_protocol::partition_for_correlation_key(
            &correlation_key,
            self.broker.partition_count(),
        );
        let value = RecordValue::MessageCorrelation(MessageCorrelationRecord {
            name,
            correlation_key,
            variables: variables_document(variables, "variables")?,
            tenant_id: DEFAULT_TENANT.into(),
            message_key: -1,
            process_instance_key: -1,
        });
        let event = self.send(partition, -1, Intent::Correlate, value).await?;
        match event.value {
            RecordValue::MessageCorrelation(c) => Ok(Correlated {
                key: event.key,
                tenant_id: c.tenant_id,
                process_instance_key: c.process_instance_key,
            }),
            _ => Err(CommandError::Internal(
                "unexpected answer to a message correlation".into(),
            )),
        }
    }
}
