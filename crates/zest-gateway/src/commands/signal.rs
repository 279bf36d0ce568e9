//! Signals: broadcast from partition 1 (like a deployment) to every subscription.

use zest_protocol::{Intent, RecordValue, SignalRecord, DEFAULT_TENANT};

use super::message::Published;
use super::{variables_document, CommandError, Commands};

impl Commands {
    /// Broadcasts the signal `name` with variables (JSON object text); answers its key and
    /// tenant.
    pub async fn broadcast_signal(
        &self,
        name: String,
        variables: String,
    ) -> Result<Published, CommandError> {
        if name.trim().is_empty() {
            return Err(CommandError::Invalid(
                "Expected to broadcast a signal with a name, but the name is empty".into(),
            ));
        }
        let signal = SignalRecord {
            signal_name: name,
            variables: variables_document(variables, "variables")?,
            tenant_id: DEFAULT_TENANT.into(),
        };
        // with one partition per node that is every subscription
        let value = RecordValue::Signal(signal);
        let event = self.send(1, -1, Intent::Broadcast, value).await?;
        let tenant_id = match &event.value {
            RecordValue::Signal(s) => s.tenant_id.clone(),
            _ => DEFAULT_TENANT.into(),
        };
        Ok(Published {
            key: event.key,
            tenant_id,
        })
    }
}
