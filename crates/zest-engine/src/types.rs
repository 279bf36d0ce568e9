//! Values kept in state (encoded with the protocol codec).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use zest_protocol::DEFAULT_TENANT;
use zest_protocol::{
    IncidentRecord, Intent, JobRecord, MessageStartEventSubscriptionRecord,
    MessageSubscriptionRecord, ProcessInstanceRecord, ProcessMessageSubscriptionRecord,
    ProcessRecord,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredProcess {
    pub record: ProcessRecord,
}

/// What starting or migrating an instance needs of a deployed process: a [`StoredProcess`]
/// decoded without copying its resource (the whole BPMN XML; 244 KB for Camunda's realistic
/// model, read for every instance created).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessHead {
    pub bpmn_process_id: String,
    pub version: i32,
    pub process_definition_key: i64,
    pub tenant_id: String,
}

/// Decodes from a [`StoredProcess`]'s encoding: the byte fields are borrowed from the input
/// and skipped, so the resource is never copied.
impl<'de> Deserialize<'de> for ProcessHead {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ProcessHead, D::Error> {
        /// [`ProcessRecord`]'s fields in its order (postcard encodes a `Vec<u8>` as its length
        /// and bytes, as it does a borrowed `&[u8]`).
        #[derive(Deserialize)]
        struct RecordView<'a> {
            bpmn_process_id: String,
            version: i32,
            process_definition_key: i64,
            #[serde(borrow)]
            _resource_name: &'a str,
            #[serde(borrow)]
            _checksum: &'a [u8],
            #[serde(borrow)]
            _resource: &'a [u8],
            tenant_id: String,
        }
        #[derive(Deserialize)]
        struct StoredView<'a> {
            #[serde(borrow)]
            record: RecordView<'a>,
        }
        let v = StoredView::deserialize(d)?;
        Ok(ProcessHead {
            bpmn_process_id: v.record.bpmn_process_id,
            version: v.record.version,
            process_definition_key: v.record.process_definition_key,
            tenant_id: v.record.tenant_id,
        })
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LatestVersion {
    pub version: i32,
    pub key: i64,
}

/// Lifecycle state of an element instance: the intent of its last lifecycle event.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ElementInstance {
    pub key: i64,
    /// Key of the flow scope's element instance; -1 for a process instance.
    pub parent_key: i64,
    pub state: Intent,
    pub record: ProcessInstanceRecord,
    /// Job of a service task while it waits; -1 otherwise.
    pub job_key: i64,
    /// Timer of a timer catch event while it waits; -1 otherwise.
    pub timer_key: i64,
    /// Child element instances not yet completed or terminated.
    pub active_children: u32,
    /// Sequence flows taken inside this scope whose target is not yet activated.
    pub active_flows: u32,
    /// Tokens waiting at parallel joins: "joinId\u{0}flowId" -> count.
    pub join_tokens: BTreeMap<String, u32>,
}

impl ElementInstance {
    pub fn is_active(&self) -> bool {
        matches!(
            self.state,
            Intent::ElementActivating | Intent::ElementActivated | Intent::ElementCompleting
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobState {
    Activatable,
    Activated,
    /// Failed with retries left and waiting for its backoff.
    FailedBackoff,
    /// Failed without retries, or an error was thrown that nothing caught: an incident waits.
    Failed,
    ErrorThrown,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredJob {
    pub state: JobState,
    pub record: JobRecord,
}

/// The command an incident's resolution retries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum FailedStep {
    /// Re-run the element's activation (input mappings, job creation, gateway routing, ...).
    ActivateElement,
    /// Re-run the element's completion (output mappings, outgoing flows).
    CompleteElement,
    /// A job incident: resolving makes the job activatable again.
    Job,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredIncident {
    pub record: IncidentRecord,
    pub failed_step: FailedStep,
}

/// A variable as read from its scope's document (`scope_variables`, which is how it is stored).
#[derive(Debug, Clone)]
pub struct StoredVariable {
    pub key: i64,
    /// JSON text.
    pub value: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AwaitingResult {
    pub request_id: i64,
    pub request_stream_id: i32,
    pub fetch_variables: Vec<String>,
}

/// A message subscription on the message partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredMessageSubscription {
    pub key: i64,
    pub record: MessageSubscriptionRecord,
    /// A message was sent to the process instance and its acknowledgement is pending.
    pub correlating: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProcessMessageSubscriptionState {
    /// Asked the message partition to open it.
    Creating,
    /// The message partition opened it.
    Created,
    /// The element left; asked the message partition to close it.
    Deleting,
}

/// A message subscription on the process instance partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredProcessMessageSubscription {
    pub key: i64,
    pub record: ProcessMessageSubscriptionRecord,
    pub state: ProcessMessageSubscriptionState,
}

/// A message start event of the latest version of a process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredStartSubscription {
    pub key: i64,
    pub record: MessageStartEventSubscriptionRecord,
}

/// A signal subscription: a start event of the latest version of a process, or a catch or
/// boundary event of an element instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredSignalSubscription {
    pub key: i64,
    pub record: zest_protocol::SignalSubscriptionRecord,
}

/// An event that triggered an element and is not yet consumed by it (PROCESS_EVENT
/// TRIGGERING, consumed at TRIGGERED).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredTrigger {
    pub event_key: i64,
    pub element_id: String,
    /// JSON object text: the message's variables.
    pub variables: String,
}

/// The execution listeners an element instance has run in its current phase (start listeners
/// while ACTIVATING, end listeners while COMPLETING).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct ListenerProgress {
    /// Whether `done` counts end listeners (else start listeners).
    pub end: bool,
    /// How many listeners of that phase completed.
    pub done: u32,
}

/// Counts kept for multi-instance activities. For a body: how many inner instances were
/// activated (the last loop counter), completed and terminated. For an inner instance: its
/// loop counter (1-based).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct MultiInstanceCounters {
    pub loop_counter: i64,
    pub completed: i64,
    pub terminated: i64,
}

/// Where a Camunda user task is in its lifecycle (Zeebe's `LifecycleState`): CREATED between
/// commands, the transitional states while a command is being carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UserTaskState {
    Creating,
    Created,
    Assigning,
    Claiming,
    Updating,
    Completing,
    Canceling,
}

impl UserTaskState {
    /// Zeebe's name, as rejections quote it.
    pub fn name(self) -> &'static str {
        match self {
            UserTaskState::Creating => "CREATING",
            UserTaskState::Created => "CREATED",
            UserTaskState::Assigning => "ASSIGNING",
            UserTaskState::Claiming => "CLAIMING",
            UserTaskState::Updating => "UPDATING",
            UserTaskState::Completing => "COMPLETING",
            UserTaskState::Canceling => "CANCELING",
        }
    }
}

/// A transition of a Camunda user task in progress (CREATING, ASSIGNING, CLAIMING, UPDATING,
/// COMPLETING, CANCELING), while its task listeners run: the record its first event wrote
/// (the new assignee, the changes, the completion's variables), with the corrections of the
/// listeners so far.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingTransition {
    pub record: zest_protocol::UserTaskRecord,
    /// Listeners of the transition whose jobs completed.
    pub done: u32,
    /// Attributes the listeners corrected so far (Zeebe's names).
    pub corrected: Vec<String>,
    /// The command that started the transition and waits for its end (-1: none).
    pub request_id: i64,
    pub request_stream_id: i32,
}

/// A Camunda user task: its state and its record as last written (without the per-command
/// fields: changed attributes, action, variables).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredUserTask {
    pub state: UserTaskState,
    pub record: zest_protocol::UserTaskRecord,
}

pub(crate) fn tenant(t: &str) -> String {
    if t.is_empty() {
        DEFAULT_TENANT.to_string()
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process's head decodes from the stored process's own bytes: same fields, whatever
    /// the resource's size; bytes that are not a stored process are an error, not a panic.
    #[test]
    fn a_process_head_decodes_from_a_stored_process() {
        for resource_len in [0, 1, 127, 128, 300_000] {
            let stored = StoredProcess {
                record: ProcessRecord {
                    bpmn_process_id: "bankDisputeHandling".into(),
                    version: 7,
                    process_definition_key: 2251799813685249,
                    resource_name: "dispute.bpmn".into(),
                    checksum: vec![9; 32],
                    resource: vec![b'x'; resource_len],
                    tenant_id: "tenant-a".into(),
                },
            };
            let head: ProcessHead =
                zest_protocol::codec::decode(&zest_protocol::codec::encode(&stored)).unwrap();
            assert_eq!(
                head,
                ProcessHead {
                    bpmn_process_id: "bankDisputeHandling".into(),
                    version: 7,
                    process_definition_key: 2251799813685249,
                    tenant_id: "tenant-a".into(),
                },
                "resource of {resource_len} bytes"
            );
        }
        assert!(zest_protocol::codec::decode::<ProcessHead>(&[0xff, 0xff, 0xff]).is_err());
        assert!(zest_protocol::codec::decode::<ProcessHead>(&[]).is_err());
    }
}
