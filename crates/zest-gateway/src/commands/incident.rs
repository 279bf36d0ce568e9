//! Incidents: resolved on the partition of their key.

use zest_protocol::{ErrorType, IncidentRecord, Intent, RecordValue, DEFAULT_TENANT};

use super::{CommandError, Commands};

impl Commands {
    /// Resolves incident `key`: its element tries again (a job's incident: once the job has
    /// retries again).
    pub async fn resolve_incident(&self, key: i64) -> Result<(), CommandError> {
        let value = RecordValue::Incident(IncidentRecord {
            error_type: ErrorType::Unknown,
            error_message: String::new(),
            bpmn_process_id: String::new(),
            process_definition_key: -1,
            process_instance_key: -1,
            element_id: String::new(),
            element_instance_key: -1,
            job_key: -1,
            variable_scope_key: -1,
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.send_keyed(key, Intent::Resolve, value, || {
            format!("Expected to resolve incident with key '{key}', but no such incident was found")
        })
        .await?;
        Ok(())
    }
}
