use serde::{Deserialize, Serialize};

use crate::{PartitionId, RecordValue};

/// Position of a record in its partition's log: strictly increasing, starting at 1.
pub type Position = u64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RecordType {
    Command,
    Event,
    CommandRejection,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ValueType {
    Deployment,
    Process,
    ProcessInstance,
    ProcessInstanceCreation,
    ProcessInstanceResult,
    Job,
    JobBatch,
    Variable,
    VariableDocument,
    Incident,
    Timer,
}

impl ValueType {
    pub fn name(self) -> &'static str {
        match self {
            ValueType::Deployment => "DEPLOYMENT",
            ValueType::Process => "PROCESS",
            ValueType::ProcessInstance => "PROCESS_INSTANCE",
            ValueType::ProcessInstanceCreation => "PROCESS_INSTANCE_CREATION",
            ValueType::ProcessInstanceResult => "PROCESS_INSTANCE_RESULT",
            ValueType::Job => "JOB",
            ValueType::JobBatch => "JOB_BATCH",
            ValueType::Variable => "VARIABLE",
            ValueType::VariableDocument => "VARIABLE_DOCUMENT",
            ValueType::Incident => "INCIDENT",
            ValueType::Timer => "TIMER",
        }
    }
}

/// Intents of all value types, with Zeebe's names. Which intents belong to which value type
/// follows Zeebe (e.g. JOB: CREATED, COMPLETE, COMPLETED, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Intent {
    // generic
    Create,
    Created,
    // deployment
    Distribute,
    Distributed,
    FullyDistributed,
    // process instance
    Cancel,
    SequenceFlowTaken,
    ElementActivating,
    ElementActivated,
    ElementCompleting,
    ElementCompleted,
    ElementTerminating,
    ElementTerminated,
    ActivateElement,
    CompleteElement,
    TerminateElement,
    // process instance creation
    CreateWithAwaitingResult,
    // process instance result
    Completed,
    // job
    Complete,
    TimeOut,
    TimedOut,
    Fail,
    Failed,
    UpdateRetries,
    RetriesUpdated,
    Canceled,
    ThrowError,
    ErrorThrown,
    RecurAfterBackoff,
    RecurredAfterBackoff,
    UpdateTimeout,
    TimeoutUpdated,
    // job batch
    Activate,
    Activated,
    // variable / variable document
    Updated,
    Update,
    // incident
    Resolve,
    Resolved,
    // timer
    Trigger,
    Triggered,
}

impl Intent {
    pub fn name(self) -> String {
        // serde gives the SCREAMING_SNAKE_CASE name
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => s,
            _ => format!("{self:?}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RejectionType {
    NullVal,
    InvalidArgument,
    NotFound,
    AlreadyExists,
    InvalidState,
    ProcessingError,
    ExceededBatchRecordSize,
}

/// One record of a partition's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub position: Position,
    pub partition_id: PartitionId,
    /// Key of the entity the record is about (-1 for commands without a key yet).
    pub key: i64,
    /// Milliseconds since the epoch, taken from the processing clock of the batch.
    pub timestamp: i64,
    pub record_type: RecordType,
    pub value_type: ValueType,
    pub intent: Intent,
    pub rejection_type: RejectionType,
    pub rejection_reason: String,
    /// Position of the command that caused this record (-1 for client commands).
    pub source_record_position: i64,
    pub request_id: i64,
    pub request_stream_id: i32,
    pub value: RecordValue,
}

impl Record {
    pub fn is_event(&self) -> bool {
        self.record_type == RecordType::Event
    }

    /// The record as Zeebe-style JSON, as exporters and people who know Zeebe read it.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "position": self.position,
            "partitionId": self.partition_id,
            "key": self.key,
            "timestamp": self.timestamp,
            "recordType": self.record_type,
            "valueType": self.value_type.name(),
            "intent": self.intent.name(),
            "sourceRecordPosition": self.source_record_position,
            "value": self.value.to_json(),
        });
        if self.record_type == RecordType::CommandRejection {
            v["rejectionType"] = serde_json::to_value(self.rejection_type).unwrap_or_default();
            v["rejectionReason"] = self.rejection_reason.clone().into();
        }
        v
    }
}
