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

impl RecordType {
    pub fn name(self) -> &'static str {
        match self {
            RecordType::Command => "COMMAND",
            RecordType::Event => "EVENT",
            RecordType::CommandRejection => "COMMAND_REJECTION",
        }
    }
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
    Message,
    MessageBatch,
    MessageSubscription,
    ProcessMessageSubscription,
    MessageStartEventSubscription,
    ProcessEvent,
    Signal,
    SignalSubscription,
    ProcessInstanceBatch,
    UserTask,
    Form,
    Escalation,
    DecisionRequirements,
    Decision,
    DecisionEvaluation,
    ProcessInstanceModification,
    ResourceDeletion,
    ProcessInstanceMigration,
    CompensationSubscription,
    AdHocSubProcessInstruction,
    CommandDistribution,
    MessageCorrelation,
    BatchOperation,
    HistoryDeletion,
    User,
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
            ValueType::Message => "MESSAGE",
            ValueType::MessageBatch => "MESSAGE_BATCH",
            ValueType::MessageSubscription => "MESSAGE_SUBSCRIPTION",
            ValueType::ProcessMessageSubscription => "PROCESS_MESSAGE_SUBSCRIPTION",
            ValueType::MessageStartEventSubscription => "MESSAGE_START_EVENT_SUBSCRIPTION",
            ValueType::ProcessEvent => "PROCESS_EVENT",
            ValueType::Signal => "SIGNAL",
            ValueType::SignalSubscription => "SIGNAL_SUBSCRIPTION",
            ValueType::ProcessInstanceBatch => "PROCESS_INSTANCE_BATCH",
            ValueType::UserTask => "USER_TASK",
            ValueType::Form => "FORM",
            ValueType::Escalation => "ESCALATION",
            ValueType::DecisionRequirements => "DECISION_REQUIREMENTS",
            ValueType::Decision => "DECISION",
            ValueType::DecisionEvaluation => "DECISION_EVALUATION",
            ValueType::ProcessInstanceModification => "PROCESS_INSTANCE_MODIFICATION",
            ValueType::ResourceDeletion => "RESOURCE_DELETION",
            ValueType::ProcessInstanceMigration => "PROCESS_INSTANCE_MIGRATION",
            ValueType::CompensationSubscription => "COMPENSATION_SUBSCRIPTION",
            ValueType::AdHocSubProcessInstruction => "AD_HOC_SUB_PROCESS_INSTRUCTION",
            ValueType::CommandDistribution => "COMMAND_DISTRIBUTION",
            ValueType::MessageCorrelation => "MESSAGE_CORRELATION",
            ValueType::BatchOperation => "BATCH_OPERATION",
            ValueType::HistoryDeletion => "HISTORY_DELETION",
            ValueType::User => "USER",
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
    // message (new intents go last: records are encoded by variant index)
    Publish,
    Published,
    Expire,
    Expired,
    // message subscriptions
    Creating,
    Correlate,
    Correlating,
    Correlated,
    Reject,
    Rejected,
    Delete,
    Deleting,
    Deleted,
    // process event
    Triggering,
    // signal
    Broadcast,
    Broadcasted,
    // process instance batch (ACTIVATE and ACTIVATED are the job batch's)
    Terminate,
    Terminated,
    // user task (CREATING, CREATED, COMPLETE, COMPLETED, CANCELED, UPDATE, UPDATED are shared)
    Assign,
    Assigning,
    Assigned,
    Claim,
    Claiming,
    Updating,
    Completing,
    Canceling,
    // escalation
    Escalated,
    NotEscalated,
    // decision evaluation (FAILED is the job's)
    Evaluate,
    Evaluated,
    // process instance modification
    Modify,
    Modified,
    // execution listeners
    CompleteExecutionListener,
    // process instance migration (MIGRATED is also JOB's, INCIDENT's, VARIABLE's, ...)
    Migrate,
    Migrated,
    ElementMigrated,
    /// An element instance of a process called by a migrated call activity.
    AncestorMigrated,
    // job push: a pushed job that its stream could not deliver goes back
    Yield,
    Yielded,
    /// A taken sequence flow that a migration moves away from its joining gateway.
    SequenceFlowDeleted,
    // user task listeners
    CompleteTaskListener,
    DenyTaskListener,
    Corrected,
    AssignmentDenied,
    UpdateDenied,
    CompletionDenied,
    /// A terminating element whose user task's canceling listeners are done goes on.
    ContinueTerminatingElement,
    // command distribution (FINISHED is also written when every partition acknowledged)
    Started,
    Distributing,
    Acknowledge,
    Acknowledged,
    Finished,
    // batch operations (CREATE, CREATED, CANCEL, CANCELED, COMPLETED are shared)
    Execute,
    Executed,
    Suspend,
    Suspended,
    Resume,
    Resumed,
    // users (CREATE, CREATED, UPDATE, UPDATED, DELETE, DELETED are shared)
    CreateInitialAdmin,
    InitialAdminCreated,
}

impl Intent {
    /// Zeebe's name of the intent (the same as its serde name).
    pub fn name(self) -> &'static str {
        match self {
            Intent::Create => "CREATE",
            Intent::Created => "CREATED",
            Intent::Distribute => "DISTRIBUTE",
            Intent::Distributed => "DISTRIBUTED",
            Intent::FullyDistributed => "FULLY_DISTRIBUTED",
            Intent::Cancel => "CANCEL",
            Intent::SequenceFlowTaken => "SEQUENCE_FLOW_TAKEN",
            Intent::ElementActivating => "ELEMENT_ACTIVATING",
            Intent::ElementActivated => "ELEMENT_ACTIVATED",
            Intent::ElementCompleting => "ELEMENT_COMPLETING",
            Intent::ElementCompleted => "ELEMENT_COMPLETED",
            Intent::ElementTerminating => "ELEMENT_TERMINATING",
            Intent::ElementTerminated => "ELEMENT_TERMINATED",
            Intent::ActivateElement => "ACTIVATE_ELEMENT",
            Intent::CompleteElement => "COMPLETE_ELEMENT",
            Intent::TerminateElement => "TERMINATE_ELEMENT",
            Intent::CreateWithAwaitingResult => "CREATE_WITH_AWAITING_RESULT",
            Intent::Completed => "COMPLETED",
            Intent::Complete => "COMPLETE",
            Intent::TimeOut => "TIME_OUT",
            Intent::TimedOut => "TIMED_OUT",
            Intent::Fail => "FAIL",
            Intent::Failed => "FAILED",
            Intent::UpdateRetries => "UPDATE_RETRIES",
            Intent::RetriesUpdated => "RETRIES_UPDATED",
            Intent::Canceled => "CANCELED",
            Intent::ThrowError => "THROW_ERROR",
            Intent::ErrorThrown => "ERROR_THROWN",
            Intent::RecurAfterBackoff => "RECUR_AFTER_BACKOFF",
            Intent::RecurredAfterBackoff => "RECURRED_AFTER_BACKOFF",
            Intent::UpdateTimeout => "UPDATE_TIMEOUT",
            Intent::TimeoutUpdated => "TIMEOUT_UPDATED",
            Intent::Activate => "ACTIVATE",
            Intent::Activated => "ACTIVATED",
            Intent::Updated => "UPDATED",
            Intent::Update => "UPDATE",
            Intent::Resolve => "RESOLVE",
            Intent::Resolved => "RESOLVED",
            Intent::Trigger => "TRIGGER",
            Intent::Triggered => "TRIGGERED",
            Intent::Publish => "PUBLISH",
            Intent::Published => "PUBLISHED",
            Intent::Expire => "EXPIRE",
            Intent::Expired => "EXPIRED",
            Intent::Creating => "CREATING",
            Intent::Correlate => "CORRELATE",
            Intent::Correlating => "CORRELATING",
            Intent::Correlated => "CORRELATED",
            Intent::Reject => "REJECT",
            Intent::Rejected => "REJECTED",
            Intent::Delete => "DELETE",
            Intent::Deleting => "DELETING",
            Intent::Deleted => "DELETED",
            Intent::Triggering => "TRIGGERING",
            Intent::Broadcast => "BROADCAST",
            Intent::Broadcasted => "BROADCASTED",
            Intent::Terminate => "TERMINATE",
            Intent::Terminated => "TERMINATED",
            Intent::Assign => "ASSIGN",
            Intent::Assigning => "ASSIGNING",
            Intent::Assigned => "ASSIGNED",
            Intent::Claim => "CLAIM",
            Intent::Claiming => "CLAIMING",
            Intent::Updating => "UPDATING",
            Intent::Completing => "COMPLETING",
            Intent::Canceling => "CANCELING",
            Intent::Escalated => "ESCALATED",
            Intent::NotEscalated => "NOT_ESCALATED",
            Intent::Evaluate => "EVALUATE",
            Intent::Evaluated => "EVALUATED",
            Intent::Modify => "MODIFY",
            Intent::Modified => "MODIFIED",
            Intent::CompleteExecutionListener => "COMPLETE_EXECUTION_LISTENER",
            Intent::Migrate => "MIGRATE",
            Intent::Migrated => "MIGRATED",
            Intent::ElementMigrated => "ELEMENT_MIGRATED",
            Intent::AncestorMigrated => "ANCESTOR_MIGRATED",
            Intent::Yield => "YIELD",
            Intent::Yielded => "YIELDED",
            Intent::SequenceFlowDeleted => "SEQUENCE_FLOW_DELETED",
            Intent::CompleteTaskListener => "COMPLETE_TASK_LISTENER",
            Intent::DenyTaskListener => "DENY_TASK_LISTENER",
            Intent::Corrected => "CORRECTED",
            Intent::AssignmentDenied => "ASSIGNMENT_DENIED",
            Intent::UpdateDenied => "UPDATE_DENIED",
            Intent::CompletionDenied => "COMPLETION_DENIED",
            Intent::ContinueTerminatingElement => "CONTINUE_TERMINATING_ELEMENT",
            Intent::Started => "STARTED",
            Intent::Distributing => "DISTRIBUTING",
            Intent::Acknowledge => "ACKNOWLEDGE",
            Intent::Acknowledged => "ACKNOWLEDGED",
            Intent::Finished => "FINISHED",
            Intent::Execute => "EXECUTE",
            Intent::Executed => "EXECUTED",
            Intent::Suspend => "SUSPEND",
            Intent::Suspended => "SUSPENDED",
            Intent::Resume => "RESUME",
            Intent::Resumed => "RESUMED",
            Intent::CreateInitialAdmin => "CREATE_INITIAL_ADMIN",
            Intent::InitialAdminCreated => "INITIAL_ADMIN_CREATED",
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
    /// The caller may not do this (Zeebe's FORBIDDEN: 403, PERMISSION_DENIED).
    Forbidden,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every record of a batch is moved several times between the engine and the log, so its
    /// size is a cost per record: a value type that grows past the others belongs in a box
    /// (as `RecordValue::Job` is).
    #[test]
    fn a_record_stays_small() {
        let size = std::mem::size_of::<Record>();
        assert!(
            size <= 288,
            "a Record takes {size} bytes; box its largest value type"
        );
    }

    #[test]
    fn static_names_match_serde_names() {
        let all = [
            Intent::Create,
            Intent::Created,
            Intent::Distribute,
            Intent::Distributed,
            Intent::FullyDistributed,
            Intent::Cancel,
            Intent::SequenceFlowTaken,
            Intent::ElementActivating,
            Intent::ElementActivated,
            Intent::ElementCompleting,
            Intent::ElementCompleted,
            Intent::ElementTerminating,
            Intent::ElementTerminated,
            Intent::ActivateElement,
            Intent::CompleteElement,
            Intent::TerminateElement,
            Intent::CreateWithAwaitingResult,
            Intent::Completed,
            Intent::Complete,
            Intent::TimeOut,
            Intent::TimedOut,
            Intent::Fail,
            Intent::Failed,
            Intent::UpdateRetries,
            Intent::RetriesUpdated,
            Intent::Canceled,
            Intent::ThrowError,
            Intent::ErrorThrown,
            Intent::RecurAfterBackoff,
            Intent::RecurredAfterBackoff,
            Intent::UpdateTimeout,
            Intent::TimeoutUpdated,
            Intent::Activate,
            Intent::Activated,
            Intent::Updated,
            Intent::Update,
            Intent::Resolve,
            Intent::Resolved,
            Intent::Trigger,
            Intent::Triggered,
            Intent::Modify,
            Intent::Modified,
            Intent::CompleteExecutionListener,
            Intent::Migrate,
            Intent::Migrated,
            Intent::ElementMigrated,
            Intent::AncestorMigrated,
            Intent::Yield,
            Intent::Yielded,
            Intent::SequenceFlowDeleted,
            Intent::Started,
            Intent::Distributing,
            Intent::Acknowledge,
            Intent::Acknowledged,
            Intent::Finished,
        ];
        for intent in all {
            assert_eq!(
                serde_json::to_value(intent).unwrap(),
                intent.name(),
                "{intent:?}"
            );
        }
        for t in [
            RecordType::Command,
            RecordType::Event,
            RecordType::CommandRejection,
        ] {
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
        }
    }
}
