//! Camunda user tasks and ad-hoc sub-process activations (REST only).

use zest_protocol::{AdHocSubProcessInstructionRecord, Intent, RecordValue, UserTaskRecord};

use super::{CommandError, Commands};

impl Commands {
    /// Sends a USER_TASK command (complete, assign, claim, update) for task `key`; answers
    /// once the task's listeners, if any, have let the transition through.
    pub async fn user_task(
        &self,
        key: i64,
        intent: Intent,
        value: UserTaskRecord,
    ) -> Result<(), CommandError> {
        let verb = intent.name().to_lowercase();
        let value = RecordValue::UserTask(Box::new(value));
        self.send_keyed(key, intent, value, || {
            format!(
                "Expected to {verb} user task with key '{key}', but no such user task was found"
            )
        })
        .await?;
        Ok(())
    }

    /// Activates elements of the active ad-hoc sub-process instance `key`.
    pub async fn activate_ad_hoc(
        &self,
        key: i64,
        value: AdHocSubProcessInstructionRecord,
    ) -> Result<(), CommandError> {
        let partition = self.route(key, Intent::Activate, || {
            format!("Expected to activate activities for ad-hoc sub-process but no ad-hoc sub-process instance found with key '{key}'.")
        })?;
        let value = RecordValue::AdHocSubProcessInstruction(value);
        self.send(partition, -1, Intent::Activate, value).await?;
        Ok(())
    }
}
