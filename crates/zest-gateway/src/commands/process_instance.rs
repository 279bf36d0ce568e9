//! Process instances: creation (with or without awaiting the result), cancellation,
//! modification and migration.

use std::time::Duration;

use zest_engine::new_command;
use zest_protocol::{
    ActivateInstruction, BpmnElementType, BpmnEventType, Intent, MappingInstruction, PartitionId,
    ProcessInstanceCreationRecord, ProcessInstanceMigrationRecord,
    ProcessInstanceModificationRecord, ProcessInstanceRecord, ProcessInstanceResultRecord, Record,
    RecordType, RecordValue, RejectionType, TerminateInstruction, VariableInstruction,
    DEFAULT_TENANT,
};

use super::{variables_document, CommandError, Commands};

/// What a new instance is created from: a process by id (and version, -1 the latest) or by
/// definition key, its variables (JSON object text) and tenant.
#[derive(Debug, Default)]
pub struct NewInstance {
    pub process_id: String,
    pub version: i32,
    pub definition_key: i64,
    pub variables: String,
    pub tenant_id: String,
    /// Elements to start at instead of the none start event (not supported yet).
    pub start_instructions: Vec<String>,
}

impl NewInstance {
    fn record(self) -> Result<ProcessInstanceCreationRecord, CommandError> {
        if !self.start_instructions.is_empty() {
            return Err(CommandError::Invalid(
                "Start instructions are not supported by this version of Zest yet; create the instance without them".into(),
            ));
        }
        if self.process_id.is_empty() && self.definition_key <= 0 {
            return Err(CommandError::Invalid(
                "Expected at least a bpmnProcessId or a key greater than -1, but none given".into(),
            ));
        }
        Ok(ProcessInstanceCreationRecord {
            bpmn_process_id: self.process_id,
            version: if self.version == 0 { -1 } else { self.version },
            process_definition_key: self.definition_key,
            variables: variables_document(self.variables, "variables")?,
            process_instance_key: -1,
            fetch_variables: Vec::new(),
            tenant_id: if self.tenant_id.is_empty() {
                DEFAULT_TENANT.to_string()
            } else {
                self.tenant_id
            },
        })
    }
}

/// One activation of a modification: `element_id`, under the element instance `ancestor`
/// (0 or less: wherever the element's flow scope is), with variables (JSON object text) for
/// the scopes named by their element ids (empty: the activated element's).
pub fn activation(
    element_id: String,
    ancestor: i64,
    variables: impl IntoIterator<Item = (String, String)>,
) -> ActivateInstruction {
    ActivateInstruction {
        element_id,
        ancestor_scope_key: if ancestor > 0 { ancestor } else { -1 },
        variable_instructions: variables
            .into_iter()
            .map(|(element_id, variables)| VariableInstruction {
                variables,
                element_id,
            })
            .collect(),
    }
}

impl Commands {
    /// Creates an instance; answers once it is created (waiting at its first wait state).
    pub async fn create_instance(
        &self,
        new: NewInstance,
    ) -> Result<ProcessInstanceCreationRecord, CommandError> {
        let creation = new.record()?;
        let command = new_command(
            -1,
            Intent::Create,
            RecordValue::ProcessInstanceCreation(creation),
            -1,
            -1,
        );
        let event = self
            .submit_creation(self.broker.next_partition(), command)
            .await?;
        match event.value {
            RecordValue::ProcessInstanceCreation(c) => Ok(c),
            _ => Err(CommandError::Internal(
                "unexpected answer to a process instance creation".into(),
            )),
        }
    }

    /// Creates an instance and answers once it completes, with the variables named in
    /// `fetch_variables` (all when empty), or DEADLINE_EXCEEDED after `timeout` (the gateway's
    /// default when none).
    pub async fn create_instance_with_result(
        &self,
        new: NewInstance,
        fetch_variables: Vec<String>,
        timeout: Option<Duration>,
    ) -> Result<ProcessInstanceResultRecord, CommandError> {
        let mut creation = new.record()?;
        creation.fetch_variables = fetch_variables;
        let timeout = timeout.unwrap_or(self.config.default_request_timeout);
        let partition = self.broker.next_partition();
        let command = new_command(
            -1,
            Intent::CreateWithAwaitingResult,
            RecordValue::ProcessInstanceCreation(creation),
            -1,
            -1,
        );
        let answer = tokio::time::timeout(timeout, self.submit_creation(partition, command))
            .await
            .map_err(|_| {
                CommandError::Timeout(format!(
                    "Time out between gateway and broker: Request ProcessInstanceCreationRequest to partition {partition} timed out after {timeout:?}; the process instance did not complete in time"
                ))
            })??;
        match answer.value {
            RecordValue::ProcessInstanceResult(r) => Ok(r),
            _ => Err(CommandError::Internal(
                "unexpected answer to a process instance creation with result".into(),
            )),
        }
    }

    /// A process instance creation on `partition`. Deployments are distributed from partition
    /// 1 to the others after they are answered (as in Zeebe), so right after a deployment
    /// another partition may not know the process yet: then the instance is created on
    /// partition 1, which has every deployment first.
    async fn submit_creation(
        &self,
        partition: PartitionId,
        command: Record,
    ) -> Result<Record, CommandError> {
        if partition == 1 {
            return self.submit(1, command).await;
        }
        let (key, intent) = (command.key, command.intent);
        // no copy kept for the retry: a call with result holds it until its instance completes
        let answer = self.broker.submit(partition, command).await?;
        if answer.record_type == RecordType::CommandRejection
            && answer.rejection_type == RejectionType::NotFound
        {
            // a rejection carries its command's value: the same command, on partition 1
            return self
                .submit(1, new_command(key, intent, answer.value, -1, -1))
                .await;
        }
        super::expect_event(answer)
    }

    /// Cancels the instance `key`.
    pub async fn cancel_instance(&self, key: i64) -> Result<(), CommandError> {
        let value = RecordValue::ProcessInstance(ProcessInstanceRecord {
            bpmn_process_id: String::new(),
            version: -1,
            process_definition_key: -1,
            process_instance_key: key,
            element_id: String::new(),
            flow_scope_key: -1,
            bpmn_element_type: BpmnElementType::Unspecified,
            bpmn_event_type: BpmnEventType::Unspecified,
            parent_process_instance_key: -1,
            parent_element_instance_key: -1,
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.send_keyed(key, Intent::Cancel, value, || {
            format!("Expected to cancel a process instance with key '{key}', but no such process was found")
        })
        .await?;
        Ok(())
    }

    /// Modifies the instance `key`: terminates the element instances named, then activates the
    /// elements named (their variables checked as JSON objects).
    pub async fn modify_instance(
        &self,
        key: i64,
        terminate: Vec<i64>,
        mut activate: Vec<ActivateInstruction>,
    ) -> Result<(), CommandError> {
        for a in &mut activate {
            for v in &mut a.variable_instructions {
                v.variables = variables_document(std::mem::take(&mut v.variables), "variables")?;
            }
        }
        let value = RecordValue::ProcessInstanceModification(ProcessInstanceModificationRecord {
            process_instance_key: key,
            terminate_instructions: terminate
                .into_iter()
                .map(|k| TerminateInstruction {
                    element_instance_key: k,
                })
                .collect(),
            activate_instructions: activate,
            activated_element_instance_keys: Vec::new(),
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.send_keyed(key, Intent::Modify, value, || {
            format!("Expected to modify process instance but no process instance found with key '{key}'")
        })
        .await?;
        Ok(())
    }

    /// Migrates the instance `key` to the process `target` along `mappings`.
    pub async fn migrate_instance(
        &self,
        key: i64,
        target: i64,
        mappings: Vec<MappingInstruction>,
    ) -> Result<(), CommandError> {
        let value = RecordValue::ProcessInstanceMigration(ProcessInstanceMigrationRecord {
            process_instance_key: key,
            target_process_definition_key: target,
            mapping_instructions: mappings,
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.send_keyed(key, Intent::Migrate, value, || {
            format!("Expected to migrate process instance but no process instance found with key '{key}'")
        })
        .await?;
        Ok(())
    }
}
