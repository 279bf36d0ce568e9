use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ValueType;

pub const DEFAULT_TENANT: &str = "<default>";

/// BPMN element types with Zeebe's names (records carry them as `bpmnElementType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BpmnElementType {
    Unspecified,
    Process,
    SubProcess,
    EventSubProcess,
    StartEvent,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    BoundaryEvent,
    EndEvent,
    ServiceTask,
    ReceiveTask,
    UserTask,
    ManualTask,
    Task,
    ExclusiveGateway,
    InclusiveGateway,
    ParallelGateway,
    EventBasedGateway,
    SequenceFlow,
    MultiInstanceBody,
    CallActivity,
    BusinessRuleTask,
    ScriptTask,
    SendTask,
    AdHocSubProcess,
    /// One flow inside an ad-hoc sub-process: the scope of each element it activates.
    AdHocSubProcessInnerInstance,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BpmnEventType {
    Unspecified,
    None,
    Timer,
    Message,
    Error,
    Signal,
    Escalation,
    Terminate,
    Link,
    Compensation,
    Conditional,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeploymentResource {
    pub resource_name: String,
    pub resource: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessMetadata {
    pub bpmn_process_id: String,
    pub version: i32,
    pub process_definition_key: i64,
    pub resource_name: String,
    pub checksum: Vec<u8>,
    pub duplicate: bool,
    pub tenant_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeploymentRecord {
    pub resources: Vec<DeploymentResource>,
    pub processes_metadata: Vec<ProcessMetadata>,
    pub tenant_id: String,
}

/// Stored in state as the engine's `StoredProcess`; the engine's `ProcessHead` decodes those
/// bytes by this field order (its test fails to build when a field is added here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
    pub bpmn_process_id: String,
    pub version: i32,
    pub process_definition_key: i64,
    pub resource_name: String,
    pub checksum: Vec<u8>,
    pub resource: Vec<u8>,
    pub tenant_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessInstanceRecord {
    pub bpmn_process_id: String,
    pub version: i32,
    pub process_definition_key: i64,
    pub process_instance_key: i64,
    pub element_id: String,
    pub flow_scope_key: i64,
    pub bpmn_element_type: BpmnElementType,
    pub bpmn_event_type: BpmnEventType,
    pub parent_process_instance_key: i64,
    pub parent_element_instance_key: i64,
    pub tenant_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessInstanceCreationRecord {
    pub bpmn_process_id: String,
    /// -1: latest version.
    pub version: i32,
    pub process_definition_key: i64,
    /// A JSON object (text); empty means no variables.
    pub variables: String,
    pub process_instance_key: i64,
    pub fetch_variables: Vec<String>,
    pub tenant_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessInstanceResultRecord {
    pub bpmn_process_id: String,
    pub process_definition_key: i64,
    pub version: i32,
    pub process_instance_key: i64,
    pub variables: String,
    pub tenant_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobRecord {
    pub job_type: String,
    pub worker: String,
    pub retries: i32,
    pub retry_backoff: i64,
    pub recurring_time: i64,
    /// Epoch millis when an activated job times out; -1 when not activated.
    pub deadline: i64,
    pub timeout: i64,
    pub custom_headers: BTreeMap<String, String>,
    /// A JSON object (text): completion/fail variables on commands, fetched variables on
    /// activation.
    pub variables: String,
    pub error_message: String,
    pub error_code: String,
    pub element_id: String,
    pub element_instance_key: i64,
    pub process_instance_key: i64,
    pub bpmn_process_id: String,
    pub process_definition_version: i32,
    pub process_definition_key: i64,
    pub tenant_id: String,
    /// What the job is for (Zeebe's `jobKind`).
    pub kind: JobKind,
    /// The lifecycle event an execution listener job runs for (Zeebe's
    /// `jobListenerEventType`); UNSPECIFIED for other jobs.
    pub listener_event_type: JobListenerEventType,
    /// What the worker decided, on COMPLETE and COMPLETED (Zeebe's `result`).
    pub result: JobResult,
}

/// The result a worker completes a job with (Zeebe's `JobResult`). Only the ad-hoc sub-process
/// kind has behaviour in Zest: the elements to activate and whether the sub-process is done.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobResult {
    pub result_type: JobResultType,
    /// Elements of the ad-hoc sub-process to activate, each in an inner instance of its own.
    pub activate_elements: Vec<AdHocActivateElement>,
    /// The ad-hoc sub-process completes (once its flows are done, or at once with
    /// `cancel_remaining_instances`).
    pub completion_condition_fulfilled: bool,
    pub cancel_remaining_instances: bool,
    /// A task listener denies the transition (assigning, updating, completing).
    pub denied: bool,
    pub denied_reason: String,
    /// A task listener's corrections of the user task; `corrected_attributes` names the ones
    /// given (Zeebe's names: assignee, dueDate, followUpDate, candidateUsersList,
    /// candidateGroupsList, priority).
    pub corrections: JobResultCorrections,
    pub corrected_attributes: Vec<String>,
}

/// What a task listener corrects in its user task (Zeebe's `JobResultCorrections`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobResultCorrections {
    pub assignee: String,
    pub due_date: String,
    pub follow_up_date: String,
    pub candidate_users: Vec<String>,
    pub candidate_groups: Vec<String>,
    pub priority: i32,
}

/// Zeebe's `JobResultType`, with its names. A completion without a result is USER_TASK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobResultType {
    #[default]
    UserTask,
    AdHocSubProcess,
}

/// Zeebe's `JobKind`, with its names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobKind {
    /// The job of a task or event (service, send, script, business rule, user task, message
    /// throw event).
    #[default]
    BpmnElement,
    ExecutionListener,
    TaskListener,
    AdHocSubProcess,
}

/// Zeebe's `JobListenerEventType`, with its names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobListenerEventType {
    #[default]
    Unspecified,
    Start,
    End,
    Creating,
    Assigning,
    Updating,
    Completing,
    Canceling,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobBatchRecord {
    pub job_type: String,
    pub worker: String,
    pub timeout: i64,
    pub max_jobs_to_activate: i32,
    pub fetch_variables: Vec<String>,
    pub job_keys: Vec<i64>,
    pub jobs: Vec<JobRecord>,
    pub truncated: bool,
    pub tenant_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariableRecord {
    pub name: String,
    /// JSON text of the value.
    pub value: String,
    pub scope_key: i64,
    pub process_instance_key: i64,
    pub process_definition_key: i64,
    pub bpmn_process_id: String,
    pub tenant_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VariableDocumentUpdateSemantic {
    Local,
    Propagate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariableDocumentRecord {
    pub scope_key: i64,
    pub update_semantics: VariableDocumentUpdateSemantic,
    pub variables: String,
    pub tenant_id: String,
}

/// Zeebe's incident error types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorType {
    Unknown,
    IoMappingError,
    JobNoRetries,
    ExecutionListenerNoRetries,
    ConditionError,
    ExtractValueError,
    CalledElementError,
    UnhandledErrorEvent,
    MessageSizeExceeded,
    CalledDecisionError,
    DecisionEvaluationError,
    FormNotFound,
    ResourceNotFound,
    /// The job of an ad-hoc sub-process (its job worker implementation) failed without retries.
    AdHocSubProcessNoRetries,
    /// A task listener's job failed without retries.
    TaskListenerNoRetries,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncidentRecord {
    pub error_type: ErrorType,
    pub error_message: String,
    pub bpmn_process_id: String,
    pub process_definition_key: i64,
    pub process_instance_key: i64,
    pub element_id: String,
    pub element_instance_key: i64,
    /// -1 when the incident is not about a job.
    pub job_key: i64,
    pub variable_scope_key: i64,
    pub tenant_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimerRecord {
    pub element_instance_key: i64,
    pub process_instance_key: i64,
    pub process_definition_key: i64,
    pub due_date: i64,
    pub target_element_id: String,
    pub repetitions: i32,
    pub tenant_id: String,
}

/// MESSAGE: a published message, buffered until its time to live ends.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MessageRecord {
    pub name: String,
    pub correlation_key: String,
    /// Milliseconds the message stays buffered; 0 or less: correlated only at publish time.
    pub time_to_live: i64,
    /// A JSON object (text); empty means no variables.
    pub variables: String,
    /// Empty, or an id unique among buffered messages of the same name and correlation key.
    pub message_id: String,
    /// Epoch millis when the message expires (publish time + time to live); -1 on commands.
    pub deadline: i64,
    pub tenant_id: String,
}

/// MESSAGE_CORRELATION: a message correlated at once to a waiting subscription or message
/// start event, never buffered (Zeebe 8.8's `POST /v2/messages/correlation`). The command
/// carries name, correlation key, variables and tenant; CORRELATED adds the message's key and
/// the process instance it reached.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MessageCorrelationRecord {
    pub name: String,
    pub correlation_key: String,
    /// A JSON object (text); empty means no variables.
    pub variables: String,
    pub tenant_id: String,
    pub message_key: i64,
    pub process_instance_key: i64,
}

/// MESSAGE_BATCH: expires many buffered messages in one command.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MessageBatchRecord {
    pub message_keys: Vec<i64>,
}

/// MESSAGE_SUBSCRIPTION: the message partition's side of a waiting catch element.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MessageSubscriptionRecord {
    pub process_instance_key: i64,
    pub element_instance_key: i64,
    pub bpmn_process_id: String,
    /// The correlated message; -1 until one correlates.
    pub message_key: i64,
    pub message_name: String,
    pub correlation_key: String,
    pub interrupting: bool,
    pub variables: String,
    pub tenant_id: String,
}

/// PROCESS_MESSAGE_SUBSCRIPTION: the process instance partition's side of a waiting catch
/// element.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessMessageSubscriptionRecord {
    /// The partition of the message subscription (from the correlation key).
    pub subscription_partition_id: u32,
    pub process_instance_key: i64,
    pub element_instance_key: i64,
    pub process_definition_key: i64,
    pub bpmn_process_id: String,
    pub message_key: i64,
    pub message_name: String,
    pub variables: String,
    pub interrupting: bool,
    pub correlation_key: String,
    pub element_id: String,
    pub tenant_id: String,
}

/// MESSAGE_START_EVENT_SUBSCRIPTION: a message start event of the latest process version.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MessageStartEventSubscriptionRecord {
    pub process_definition_key: i64,
    pub bpmn_process_id: String,
    pub message_name: String,
    pub start_event_id: String,
    /// The instance a correlation created; -1 otherwise.
    pub process_instance_key: i64,
    pub message_key: i64,
    pub correlation_key: String,
    pub variables: String,
    pub tenant_id: String,
}

/// PROCESS_EVENT: an event (message, timer, ...) triggers an element of a scope.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessEventRecord {
    /// The element instance the event belongs to (for start events: the process definition).
    pub scope_key: i64,
    pub target_element_id: String,
    pub variables: String,
    pub process_definition_key: i64,
    pub process_instance_key: i64,
    pub tenant_id: String,
}

/// SIGNAL: a signal broadcast to every subscription with its name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SignalRecord {
    pub signal_name: String,
    pub variables: String,
    pub tenant_id: String,
}

/// SIGNAL_SUBSCRIPTION: a signal catch event waiting (a signal start event of the latest
/// process version, or an element instance's catch or boundary event).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SignalSubscriptionRecord {
    pub process_definition_key: i64,
    pub bpmn_process_id: String,
    pub catch_event_id: String,
    /// The element instance holding the subscription; -1 for a start event.
    pub catch_event_instance_key: i64,
    pub signal_name: String,
    pub tenant_id: String,
}

/// PROCESS_INSTANCE_BATCH: the children of an element instance activated (a parallel
/// multi-instance body's) or terminated one command at a time, each command writing the next.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessInstanceBatchRecord {
    pub process_instance_key: i64,
    pub process_definition_key: i64,
    /// The element instance whose children the batch activates or terminates.
    pub batch_element_instance_key: i64,
    /// ACTIVATE: how many children are left to activate; TERMINATE: the key of the next child
    /// to terminate (-1: from the first).
    pub index: i64,
    pub tenant_id: String,
}

/// USER_TASK: a Camunda user task (`zeebe:userTask`), worked on through the REST API.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UserTaskRecord {
    pub user_task_key: i64,
    pub assignee: String,
    pub candidate_groups: Vec<String>,
    pub candidate_users: Vec<String>,
    /// ISO 8601 date-time as Zeebe writes it ("2030-01-01T10:00Z"); empty when not set.
    pub due_date: String,
    pub follow_up_date: String,
    /// Key of a linked (deployed) form; -1 when none.
    pub form_key: i64,
    pub external_form_reference: String,
    /// Attributes a command changed (Zeebe's names: assignee, candidateGroupsList,
    /// candidateUsersList, dueDate, followUpDate, priority).
    pub changed_attributes: Vec<String>,
    /// A JSON object (text): the variables a COMPLETE command hands to the process.
    pub variables: String,
    /// What the user did ("complete", "assign", "claim", "unassign", "update", or a custom
    /// action from the client).
    pub action: String,
    pub custom_headers: BTreeMap<String, String>,
    pub creation_timestamp: i64,
    /// 0 to 100; 50 unless the model says otherwise.
    pub priority: i32,
    pub element_id: String,
    pub element_instance_key: i64,
    pub bpmn_process_id: String,
    pub process_definition_version: i32,
    pub process_definition_key: i64,
    pub process_instance_key: i64,
    pub tenant_id: String,
    /// Why a task listener denied the transition (on DENY_TASK_LISTENER and the *_DENIED
    /// events).
    pub denied_reason: String,
}

/// The custom headers that carry a user task to the job of its task listener (and of a
/// job-worker user task), as Zeebe names them; the gateway turns them into the activated job's
/// `userTask` properties.
pub mod user_task_headers {
    pub const ACTION: &str = "io.camunda.zeebe:action";
    pub const ASSIGNEE: &str = "io.camunda.zeebe:assignee";
    pub const CANDIDATE_GROUPS: &str = "io.camunda.zeebe:candidateGroups";
    pub const CANDIDATE_USERS: &str = "io.camunda.zeebe:candidateUsers";
    pub const CHANGED_ATTRIBUTES: &str = "io.camunda.zeebe:changedAttributes";
    pub const DUE_DATE: &str = "io.camunda.zeebe:dueDate";
    pub const FOLLOW_UP_DATE: &str = "io.camunda.zeebe:followUpDate";
    pub const FORM_KEY: &str = "io.camunda.zeebe:formKey";
    pub const PRIORITY: &str = "io.camunda.zeebe:priority";
    pub const USER_TASK_KEY: &str = "io.camunda.zeebe:userTaskKey";
}

/// FORM: a form (Camunda Forms JSON) deployed for user tasks to link by id (`formId`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FormRecord {
    /// The form's `id` property.
    pub form_id: String,
    pub version: i32,
    pub form_key: i64,
    pub resource_name: String,
    pub checksum: Vec<u8>,
    pub resource: Vec<u8>,
    pub tenant_id: String,
    pub deployment_key: i64,
}

/// A deployed (or re-deployed, `duplicate`) form, as a deployment's answer lists it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FormMetadata {
    pub form_id: String,
    pub version: i32,
    pub form_key: i64,
    pub resource_name: String,
    pub duplicate: bool,
    pub tenant_id: String,
}

/// The answer to a deployment (sent to the client, never written): DEPLOYMENT CREATED's
/// processes and the forms of the same deployment.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeploymentResponse {
    pub deployment_key: i64,
    pub processes_metadata: Vec<ProcessMetadata>,
    pub forms_metadata: Vec<FormMetadata>,
    pub tenant_id: String,
    pub decision_requirements_metadata: Vec<DecisionRequirementsMetadata>,
    pub decisions_metadata: Vec<DecisionMetadata>,
}

/// DECISION_REQUIREMENTS: a deployed DMN resource (a decision requirements graph).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DecisionRequirementsRecord {
    pub decision_requirements_id: String,
    pub decision_requirements_name: String,
    pub decision_requirements_version: i32,
    pub decision_requirements_key: i64,
    pub namespace: String,
    pub resource_name: String,
    pub checksum: Vec<u8>,
    pub resource: Vec<u8>,
    pub tenant_id: String,
    pub deployment_key: i64,
}

/// A deployed (or re-deployed, `duplicate`) decision requirements graph, as a deployment's
/// answer lists it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DecisionRequirementsMetadata {
    pub decision_requirements_id: String,
    pub decision_requirements_name: String,
    pub decision_requirements_version: i32,
    pub decision_requirements_key: i64,
    pub namespace: String,
    pub resource_name: String,
    pub duplicate: bool,
    pub tenant_id: String,
}

/// DECISION: a decision of a deployed decision requirements graph (versioned by decision id).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DecisionRecord {
    pub decision_id: String,
    pub decision_name: String,
    pub version: i32,
    pub decision_key: i64,
    pub decision_requirements_id: String,
    pub decision_requirements_key: i64,
    pub tenant_id: String,
    pub deployment_key: i64,
}

/// A deployed (or re-deployed, `duplicate`) decision, as a deployment's answer lists it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DecisionMetadata {
    pub decision_id: String,
    pub decision_name: String,
    pub version: i32,
    pub decision_key: i64,
    pub decision_requirements_id: String,
    pub decision_requirements_key: i64,
    pub duplicate: bool,
    pub tenant_id: String,
}

/// DECISION_EVALUATION: a decision evaluated for a business rule task or by EvaluateDecision
/// (EVALUATED, or FAILED with the failing decision and Zeebe's message). The EVALUATE command
/// names the decision by id (latest version) or key, with the variables.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DecisionEvaluationRecord {
    pub decision_key: i64,
    pub decision_id: String,
    pub decision_name: String,
    pub decision_version: i32,
    pub decision_requirements_id: String,
    pub decision_requirements_key: i64,
    /// JSON of the result.
    pub decision_output: String,
    /// JSON object (the command's variables; empty in events).
    pub variables: String,
    pub bpmn_process_id: String,
    pub process_definition_key: i64,
    pub process_instance_key: i64,
    pub element_id: String,
    pub element_instance_key: i64,
    pub evaluated_decisions: Vec<EvaluatedDecisionValue>,
    pub evaluation_failure_message: String,
    pub failed_decision_id: String,
    pub tenant_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EvaluatedDecisionValue {
    pub decision_id: String,
    pub decision_name: String,
    pub decision_key: i64,
    pub decision_version: i32,
    /// DECISION_TABLE, LITERAL_EXPRESSION, CONTEXT, INVOCATION, ... (as Zeebe names them).
    pub decision_type: String,
    /// JSON of the decision's result.
    pub decision_output: String,
    pub evaluated_inputs: Vec<EvaluatedInputValue>,
    pub matched_rules: Vec<MatchedRuleValue>,
    pub tenant_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EvaluatedInputValue {
    pub input_id: String,
    pub input_name: String,
    /// JSON.
    pub input_value: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MatchedRuleValue {
    pub rule_id: String,
    pub rule_index: i32,
    pub evaluated_outputs: Vec<EvaluatedOutputValue>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EvaluatedOutputValue {
    pub output_id: String,
    pub output_name: String,
    /// JSON.
    pub output_value: String,
}

/// ESCALATION: an escalation thrown by an escalation throw or end event, and the boundary
/// event that caught it (empty when nothing did: NOT_ESCALATED).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EscalationRecord {
    pub process_instance_key: i64,
    pub escalation_code: String,
    pub throw_element_id: String,
    pub catch_element_id: String,
}

/// PROCESS_INSTANCE_MODIFICATION: elements to activate (with variables) and element instances
/// to terminate in one process instance, in one command.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessInstanceModificationRecord {
    pub process_instance_key: i64,
    pub terminate_instructions: Vec<TerminateInstruction>,
    pub activate_instructions: Vec<ActivateInstruction>,
    /// The keys of the element instances the activations created (flow scopes and elements),
    /// filled in the MODIFIED event.
    pub activated_element_instance_keys: Vec<i64>,
    pub tenant_id: String,
}

/// COMPENSATION_SUBSCRIPTION: a completed activity that a compensation throw event can undo
/// (through its compensation handler), or a completed sub-process with such activities.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompensationSubscriptionRecord {
    pub process_instance_key: i64,
    pub process_definition_key: i64,
    pub compensable_activity_id: String,
    /// The flow scope instance the activity completed in.
    pub compensable_activity_scope_key: i64,
    pub compensable_activity_instance_key: i64,
    pub throw_event_id: String,
    pub throw_event_instance_key: i64,
    /// Empty for a sub-process (its own activities have handlers).
    pub compensation_handler_id: String,
    pub compensation_handler_instance_key: i64,
    /// A JSON object (text).
    pub variables: String,
    pub tenant_id: String,
}

/// PROCESS_INSTANCE_MIGRATION: move a running process instance to another process definition,
/// each active element to the element a mapping instruction names.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessInstanceMigrationRecord {
    pub process_instance_key: i64,
    pub target_process_definition_key: i64,
    pub mapping_instructions: Vec<MappingInstruction>,
    pub tenant_id: String,
}

/// AD_HOC_SUB_PROCESS_INSTRUCTION: ACTIVATE elements of an active ad-hoc sub-process (the
/// REST API's `POST /v2/element-instances/ad-hoc-activities/{key}/activation`, or the result of
/// its job), or COMPLETE it (its job's result said its completion condition is fulfilled).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AdHocSubProcessInstructionRecord {
    pub ad_hoc_sub_process_instance_key: i64,
    pub activate_elements: Vec<AdHocActivateElement>,
    pub tenant_id: String,
    /// COMPLETE (written for an ad-hoc sub-process job's result): the sub-process is done.
    pub completion_condition_fulfilled: bool,
    /// COMPLETE: its remaining flows are terminated instead of waited for.
    pub cancel_remaining_instances: bool,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AdHocActivateElement {
    pub element_id: String,
    /// A JSON object (text), local variables of the element's inner instance; empty: none.
    pub variables: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MappingInstruction {
    pub source_element_id: String,
    pub target_element_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TerminateInstruction {
    pub element_instance_key: i64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ActivateInstruction {
    pub element_id: String,
    /// The flow scope instance to activate the element in; -1 lets the engine choose (the one
    /// active instance of the flow scope, or a new one).
    pub ancestor_scope_key: i64,
    pub variable_instructions: Vec<VariableInstruction>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VariableInstruction {
    /// A JSON document.
    pub variables: String,
    /// The element in whose scope the variables are created; empty: the process instance.
    pub element_id: String,
}

/// RESOURCE_DELETION: a deployed process, decision requirements graph or form, by key.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceDeletionRecord {
    pub resource_key: i64,
    pub tenant_id: String,
}

impl UserTaskRecord {
    /// An empty record with Zeebe's defaults (no form: -1; priority 50), the start of every
    /// USER_TASK command.
    pub fn command() -> Self {
        UserTaskRecord {
            form_key: -1,
            priority: 50,
            ..Default::default()
        }
    }
}

/// The typed value of a record. The values much larger than the others are boxed, so that a
/// [`crate::Record`] stays small: every record of a batch is moved several times on its way to
/// the log (see the size test in `record.rs`). A box is encoded as what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RecordValue {
    Deployment(DeploymentRecord),
    Process(ProcessRecord),
    ProcessInstance(ProcessInstanceRecord),
    ProcessInstanceCreation(ProcessInstanceCreationRecord),
    ProcessInstanceResult(ProcessInstanceResultRecord),
    Job(Box<JobRecord>),
    JobBatch(JobBatchRecord),
    Variable(VariableRecord),
    VariableDocument(VariableDocumentRecord),
    Incident(IncidentRecord),
    Timer(TimerRecord),
    Message(MessageRecord),
    MessageBatch(MessageBatchRecord),
    MessageSubscription(MessageSubscriptionRecord),
    ProcessMessageSubscription(ProcessMessageSubscriptionRecord),
    MessageStartEventSubscription(MessageStartEventSubscriptionRecord),
    ProcessEvent(ProcessEventRecord),
    Signal(SignalRecord),
    SignalSubscription(SignalSubscriptionRecord),
    ProcessInstanceBatch(ProcessInstanceBatchRecord),
    UserTask(Box<UserTaskRecord>),
    Form(FormRecord),
    DeploymentResponse(DeploymentResponse),
    Escalation(EscalationRecord),
    DecisionRequirements(DecisionRequirementsRecord),
    Decision(DecisionRecord),
    DecisionEvaluation(Box<DecisionEvaluationRecord>),
    ProcessInstanceModification(ProcessInstanceModificationRecord),
    ResourceDeletion(ResourceDeletionRecord),
    ProcessInstanceMigration(ProcessInstanceMigrationRecord),
    CompensationSubscription(CompensationSubscriptionRecord),
    AdHocSubProcessInstruction(AdHocSubProcessInstructionRecord),
    CommandDistribution(crate::CommandDistributionRecord),
    /// A deployment sent from partition 1 to the others (DEPLOYMENT CREATE there).
    DistributedDeployment(crate::DistributedDeployment),
    MessageCorrelation(MessageCorrelationRecord),
    BatchOperation(Box<crate::BatchOperationRecord>),
    HistoryDeletion(crate::HistoryDeletionRecord),
    User(crate::UserRecord),
}

impl RecordValue {
    pub fn value_type(&self) -> ValueType {
        match self {
            RecordValue::Deployment(_) => ValueType::Deployment,
            RecordValue::Process(_) => ValueType::Process,
            RecordValue::ProcessInstance(_) => ValueType::ProcessInstance,
            RecordValue::ProcessInstanceCreation(_) => ValueType::ProcessInstanceCreation,
            RecordValue::ProcessInstanceResult(_) => ValueType::ProcessInstanceResult,
            RecordValue::Job(_) => ValueType::Job,
            RecordValue::JobBatch(_) => ValueType::JobBatch,
            RecordValue::Variable(_) => ValueType::Variable,
            RecordValue::VariableDocument(_) => ValueType::VariableDocument,
            RecordValue::Incident(_) => ValueType::Incident,
            RecordValue::Timer(_) => ValueType::Timer,
            RecordValue::Message(_) => ValueType::Message,
            RecordValue::MessageBatch(_) => ValueType::MessageBatch,
            RecordValue::MessageSubscription(_) => ValueType::MessageSubscription,
            RecordValue::ProcessMessageSubscription(_) => ValueType::ProcessMessageSubscription,
            RecordValue::MessageStartEventSubscription(_) => {
                ValueType::MessageStartEventSubscription
            }
            RecordValue::ProcessEvent(_) => ValueType::ProcessEvent,
            RecordValue::Signal(_) => ValueType::Signal,
            RecordValue::SignalSubscription(_) => ValueType::SignalSubscription,
            RecordValue::ProcessInstanceBatch(_) => ValueType::ProcessInstanceBatch,
            RecordValue::UserTask(_) => ValueType::UserTask,
            RecordValue::Form(_) => ValueType::Form,
            RecordValue::DeploymentResponse(_) => ValueType::Deployment,
            RecordValue::Escalation(_) => ValueType::Escalation,
            RecordValue::DecisionRequirements(_) => ValueType::DecisionRequirements,
            RecordValue::Decision(_) => ValueType::Decision,
            RecordValue::DecisionEvaluation(_) => ValueType::DecisionEvaluation,
            RecordValue::ProcessInstanceModification(_) => ValueType::ProcessInstanceModification,
            RecordValue::ResourceDeletion(_) => ValueType::ResourceDeletion,
            RecordValue::ProcessInstanceMigration(_) => ValueType::ProcessInstanceMigration,
            RecordValue::CompensationSubscription(_) => ValueType::CompensationSubscription,
            RecordValue::AdHocSubProcessInstruction(_) => ValueType::AdHocSubProcessInstruction,
            RecordValue::CommandDistribution(_) => ValueType::CommandDistribution,
            RecordValue::DistributedDeployment(_) => ValueType::Deployment,
            RecordValue::MessageCorrelation(_) => ValueType::MessageCorrelation,
            RecordValue::BatchOperation(_) => ValueType::BatchOperation,
            RecordValue::HistoryDeletion(_) => ValueType::HistoryDeletion,
            RecordValue::User(_) => ValueType::User,
        }
    }

    /// Bytes of the value's documents and resources (variables, deployed resources): what makes
    /// a command large. The rest of a record is some hundred bytes at most.
    pub fn payload_bytes(&self) -> usize {
        match self {
            RecordValue::Deployment(d) => d.resources.iter().map(|r| r.resource.len()).sum(),
            RecordValue::DistributedDeployment(d) => d.payload_bytes(),
            RecordValue::ProcessInstanceCreation(c) => c.variables.len(),
            RecordValue::Job(j) => j.variables.len() + j.error_message.len(),
            RecordValue::JobBatch(b) => b.jobs.iter().map(|j| j.variables.len()).sum(),
            RecordValue::VariableDocument(v) => v.variables.len(),
            RecordValue::Variable(v) => v.value.len(),
            RecordValue::Message(m) => m.variables.len(),
            RecordValue::Signal(s) => s.variables.len(),
            RecordValue::MessageCorrelation(m) => m.variables.len(),
            RecordValue::BatchOperation(b) => b.filter.len() + b.plan.len() + b.items.len() * 64,
            RecordValue::UserTask(u) => u.variables.len(),
            RecordValue::DecisionEvaluation(d) => d.variables.len(),
            RecordValue::ProcessInstanceModification(m) => m
                .activate_instructions
                .iter()
                .flat_map(|a| a.variable_instructions.iter())
                .map(|v| v.variables.len())
                .sum(),
            RecordValue::AdHocSubProcessInstruction(a) => {
                a.activate_elements.iter().map(|e| e.variables.len()).sum()
            }
            _ => 0,
        }
    }

    /// Bytes the value holds in a box of its own, outside `size_of::<Record>()` (the value
    /// types much larger than the others, see [`RecordValue`]); 0 for the others.
    pub fn boxed_bytes(&self) -> usize {
        match self {
            RecordValue::Job(_) => std::mem::size_of::<JobRecord>(),
            RecordValue::UserTask(_) => std::mem::size_of::<UserTaskRecord>(),
            RecordValue::DecisionEvaluation(_) => std::mem::size_of::<DecisionEvaluationRecord>(),
            RecordValue::BatchOperation(_) => std::mem::size_of::<crate::BatchOperationRecord>(),
            _ => 0,
        }
    }

    /// Zeebe-style JSON of the value (camelCase field names; JSON documents inlined).
    // One arm per value type, each a short table of field names: it reads best as one table,
    // and splitting it would scatter the mapping a reader compares against Zeebe's records.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{json, Value};
        fn doc(s: &str) -> Value {
            if s.is_empty() {
                json!({})
            } else {
                serde_json::from_str(s).unwrap_or(Value::String(s.to_string()))
            }
        }
        match self {
            RecordValue::Deployment(d) => json!({
                "resources": d.resources.iter().map(|r| json!({"resourceName": r.resource_name})).collect::<Vec<_>>(),
                "processesMetadata": d.processes_metadata.iter().map(|p| json!({
                    "bpmnProcessId": p.bpmn_process_id, "version": p.version,
                    "processDefinitionKey": p.process_definition_key, "resourceName": p.resource_name,
                    "duplicate": p.duplicate, "tenantId": p.tenant_id})).collect::<Vec<_>>(),
                "tenantId": d.tenant_id,
            }),
            RecordValue::Process(p) => json!({
                "bpmnProcessId": p.bpmn_process_id, "version": p.version,
                "processDefinitionKey": p.process_definition_key, "resourceName": p.resource_name,
                "tenantId": p.tenant_id,
            }),
            RecordValue::ProcessInstance(p) => json!({
                "bpmnProcessId": p.bpmn_process_id, "version": p.version,
                "processDefinitionKey": p.process_definition_key,
                "processInstanceKey": p.process_instance_key, "elementId": p.element_id,
                "flowScopeKey": p.flow_scope_key, "bpmnElementType": p.bpmn_element_type,
                "bpmnEventType": p.bpmn_event_type,
                "parentProcessInstanceKey": p.parent_process_instance_key,
                "parentElementInstanceKey": p.parent_element_instance_key,
                "tenantId": p.tenant_id,
            }),
            RecordValue::ProcessInstanceCreation(c) => json!({
                "bpmnProcessId": c.bpmn_process_id, "version": c.version,
                "processDefinitionKey": c.process_definition_key,
                "processInstanceKey": c.process_instance_key, "variables": doc(&c.variables),
                "fetchVariables": c.fetch_variables, "tenantId": c.tenant_id,
            }),
            RecordValue::ProcessInstanceResult(r) => json!({
                "bpmnProcessId": r.bpmn_process_id, "version": r.version,
                "processDefinitionKey": r.process_definition_key,
                "processInstanceKey": r.process_instance_key, "variables": doc(&r.variables),
                "tenantId": r.tenant_id,
            }),
            RecordValue::Job(j) => json!({
                "type": j.job_type, "worker": j.worker, "retries": j.retries,
                "retryBackoff": j.retry_backoff, "recurringTime": j.recurring_time,
                "deadline": j.deadline, "timeout": j.timeout, "customHeaders": j.custom_headers,
                "variables": doc(&j.variables), "errorMessage": j.error_message,
                "errorCode": j.error_code, "elementId": j.element_id,
                "elementInstanceKey": j.element_instance_key,
                "processInstanceKey": j.process_instance_key, "bpmnProcessId": j.bpmn_process_id,
                "processDefinitionVersion": j.process_definition_version,
                "processDefinitionKey": j.process_definition_key, "tenantId": j.tenant_id,
                "jobKind": j.kind, "jobListenerEventType": j.listener_event_type,
                "result": json!({
                    "type": j.result.result_type, "denied": false, "deniedReason": "",
                    "correctedAttributes": [],
                    "activateElements": j.result.activate_elements.iter().map(|e| json!({
                        "elementId": e.element_id, "variables": doc(&e.variables),
                    })).collect::<Vec<_>>(),
                    "completionConditionFulfilled": j.result.completion_condition_fulfilled,
                    "cancelRemainingInstances": j.result.cancel_remaining_instances,
                }),
            }),
            RecordValue::JobBatch(b) => json!({
                "type": b.job_type, "worker": b.worker, "timeout": b.timeout,
                "maxJobsToActivate": b.max_jobs_to_activate, "jobKeys": b.job_keys,
                "truncated": b.truncated, "tenantIds": b.tenant_ids,
            }),
            RecordValue::Variable(v) => json!({
                "name": v.name, "value": v.value, "scopeKey": v.scope_key,
                "processInstanceKey": v.process_instance_key,
                "processDefinitionKey": v.process_definition_key,
                "bpmnProcessId": v.bpmn_process_id, "tenantId": v.tenant_id,
            }),
            RecordValue::VariableDocument(d) => json!({
                "scopeKey": d.scope_key, "updateSemantics": d.update_semantics,
                "variables": doc(&d.variables), "tenantId": d.tenant_id,
            }),
            RecordValue::Incident(i) => json!({
                "errorType": i.error_type, "errorMessage": i.error_message,
                "bpmnProcessId": i.bpmn_process_id, "processDefinitionKey": i.process_definition_key,
                "processInstanceKey": i.process_instance_key, "elementId": i.element_id,
                "elementInstanceKey": i.element_instance_key, "jobKey": i.job_key,
                "variableScopeKey": i.variable_scope_key, "tenantId": i.tenant_id,
            }),
            RecordValue::Timer(t) => json!({
                "elementInstanceKey": t.element_instance_key,
                "processInstanceKey": t.process_instance_key,
                "processDefinitionKey": t.process_definition_key, "dueDate": t.due_date,
                "targetElementId": t.target_element_id, "repetitions": t.repetitions,
                "tenantId": t.tenant_id,
            }),
            RecordValue::Message(m) => json!({
                "name": m.name, "correlationKey": m.correlation_key,
                "timeToLive": m.time_to_live, "variables": doc(&m.variables),
                "messageId": m.message_id, "deadline": m.deadline, "tenantId": m.tenant_id,
            }),
            RecordValue::MessageBatch(b) => json!({"messageKeys": b.message_keys}),
            RecordValue::MessageSubscription(m) => json!({
                "processInstanceKey": m.process_instance_key,
                "elementInstanceKey": m.element_instance_key,
                "bpmnProcessId": m.bpmn_process_id, "messageKey": m.message_key,
                "messageName": m.message_name, "correlationKey": m.correlation_key,
                "interrupting": m.interrupting, "variables": doc(&m.variables),
                "tenantId": m.tenant_id,
            }),
            RecordValue::ProcessMessageSubscription(m) => json!({
                "processInstanceKey": m.process_instance_key,
                "elementInstanceKey": m.element_instance_key,
                "processDefinitionKey": m.process_definition_key,
                "bpmnProcessId": m.bpmn_process_id, "messageKey": m.message_key,
                "messageName": m.message_name, "variables": doc(&m.variables),
                "interrupting": m.interrupting, "correlationKey": m.correlation_key,
                "elementId": m.element_id, "tenantId": m.tenant_id,
            }),
            RecordValue::MessageStartEventSubscription(m) => json!({
                "processDefinitionKey": m.process_definition_key,
                "bpmnProcessId": m.bpmn_process_id, "messageName": m.message_name,
                "startEventId": m.start_event_id, "processInstanceKey": m.process_instance_key,
                "messageKey": m.message_key, "correlationKey": m.correlation_key,
                "variables": doc(&m.variables), "tenantId": m.tenant_id,
            }),
            RecordValue::ProcessEvent(e) => json!({
                "scopeKey": e.scope_key, "targetElementId": e.target_element_id,
                "variables": doc(&e.variables), "processDefinitionKey": e.process_definition_key,
                "processInstanceKey": e.process_instance_key, "tenantId": e.tenant_id,
            }),
            RecordValue::Signal(s) => json!({
                "signalName": s.signal_name, "variables": doc(&s.variables),
                "tenantId": s.tenant_id,
            }),
            RecordValue::MessageCorrelation(m) => json!({
                "name": m.name, "correlationKey": m.correlation_key,
                "variables": doc(&m.variables), "tenantId": m.tenant_id,
                "messageKey": m.message_key, "processInstanceKey": m.process_instance_key,
            }),
            RecordValue::SignalSubscription(s) => json!({
                "processDefinitionKey": s.process_definition_key,
                "bpmnProcessId": s.bpmn_process_id, "catchEventId": s.catch_event_id,
                "catchEventInstanceKey": s.catch_event_instance_key,
                "signalName": s.signal_name, "tenantId": s.tenant_id,
            }),
            RecordValue::ProcessInstanceBatch(b) => json!({
                "processInstanceKey": b.process_instance_key,
                "processDefinitionKey": b.process_definition_key,
                "batchElementInstanceKey": b.batch_element_instance_key,
                "index": b.index, "tenantId": b.tenant_id,
            }),
            RecordValue::DecisionRequirements(d) => json!({
                "decisionRequirementsId": d.decision_requirements_id,
                "decisionRequirementsName": d.decision_requirements_name,
                "decisionRequirementsVersion": d.decision_requirements_version,
                "decisionRequirementsKey": d.decision_requirements_key,
                "namespace": d.namespace, "resourceName": d.resource_name,
                "tenantId": d.tenant_id, "deploymentKey": d.deployment_key,
            }),
            RecordValue::Decision(d) => json!({
                "decisionId": d.decision_id, "decisionName": d.decision_name,
                "version": d.version, "decisionKey": d.decision_key,
                "decisionRequirementsId": d.decision_requirements_id,
                "decisionRequirementsKey": d.decision_requirements_key,
                "tenantId": d.tenant_id, "deploymentKey": d.deployment_key,
            }),
            RecordValue::DecisionEvaluation(d) => json!({
                "decisionKey": d.decision_key, "decisionId": d.decision_id,
                "decisionName": d.decision_name, "decisionVersion": d.decision_version,
                "decisionRequirementsId": d.decision_requirements_id,
                "decisionRequirementsKey": d.decision_requirements_key,
                "decisionOutput": d.decision_output, "variables": doc(&d.variables),
                "bpmnProcessId": d.bpmn_process_id,
                "processDefinitionKey": d.process_definition_key,
                "processInstanceKey": d.process_instance_key,
                "elementId": d.element_id, "elementInstanceKey": d.element_instance_key,
                "evaluatedDecisions": d.evaluated_decisions.iter().map(|e| json!({
                    "decisionId": e.decision_id, "decisionName": e.decision_name,
                    "decisionKey": e.decision_key, "decisionVersion": e.decision_version,
                    "decisionType": e.decision_type, "decisionOutput": e.decision_output,
                    "evaluatedInputs": e.evaluated_inputs.iter().map(|i| json!({
                        "inputId": i.input_id, "inputName": i.input_name,
                        "inputValue": i.input_value})).collect::<Vec<_>>(),
                    "matchedRules": e.matched_rules.iter().map(|m| json!({
                        "ruleId": m.rule_id, "ruleIndex": m.rule_index,
                        "evaluatedOutputs": m.evaluated_outputs.iter().map(|o| json!({
                            "outputId": o.output_id, "outputName": o.output_name,
                            "outputValue": o.output_value})).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                    "tenantId": e.tenant_id,
                })).collect::<Vec<_>>(),
                "evaluationFailureMessage": d.evaluation_failure_message,
                "failedDecisionId": d.failed_decision_id, "tenantId": d.tenant_id,
            }),
            RecordValue::ProcessInstanceModification(m) => json!({
                "processInstanceKey": m.process_instance_key,
                "terminateInstructions": m.terminate_instructions.iter().map(|t| json!({
                    "elementInstanceKey": t.element_instance_key})).collect::<Vec<_>>(),
                "activateInstructions": m.activate_instructions.iter().map(|a| json!({
                    "elementId": a.element_id, "ancestorScopeKey": a.ancestor_scope_key,
                    "variableInstructions": a.variable_instructions.iter().map(|v| json!({
                        "variables": doc(&v.variables), "elementId": v.element_id,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "activatedElementInstanceKeys": m.activated_element_instance_keys,
                "tenantId": m.tenant_id,
            }),
            RecordValue::ResourceDeletion(r) => json!({
                "resourceKey": r.resource_key, "tenantId": r.tenant_id,
            }),
            RecordValue::CompensationSubscription(c) => json!({
                "processInstanceKey": c.process_instance_key,
                "processDefinitionKey": c.process_definition_key,
                "compensableActivityId": c.compensable_activity_id,
                "compensableActivityScopeKey": c.compensable_activity_scope_key,
                "compensableActivityInstanceKey": c.compensable_activity_instance_key,
                "throwEventId": c.throw_event_id,
                "throwEventInstanceKey": c.throw_event_instance_key,
                "compensationHandlerId": c.compensation_handler_id,
                "compensationHandlerInstanceKey": c.compensation_handler_instance_key,
                "variables": doc(&c.variables),
                "tenantId": c.tenant_id,
            }),
            RecordValue::CommandDistribution(c) => c.to_json(),
            RecordValue::BatchOperation(b) => b.to_json(),
            RecordValue::HistoryDeletion(h) => h.to_json(),
            RecordValue::User(u) => u.to_json(),
            RecordValue::DistributedDeployment(d) => {
                let mut v = RecordValue::Deployment(d.deployment.clone()).to_json();
                for (_, created) in &d.created {
                    let (field, value) = match created {
                        RecordValue::DecisionRequirements(_) => {
                            ("decisionRequirementsMetadata", created.to_json())
                        }
                        RecordValue::Decision(_) => ("decisionsMetadata", created.to_json()),
                        RecordValue::Form(_) => ("formMetadata", created.to_json()),
                        _ => continue,
                    };
                    match v[field].as_array_mut() {
                        Some(list) => list.push(value),
                        None => v[field] = json!([value]),
                    }
                }
                v
            }
            RecordValue::AdHocSubProcessInstruction(a) => json!({
                "adHocSubProcessInstanceKey": a.ad_hoc_sub_process_instance_key.to_string(),
                "activateElements": a.activate_elements.iter().map(|e| json!({
                    "elementId": e.element_id, "variables": doc(&e.variables),
                })).collect::<Vec<_>>(),
                "cancelRemainingInstances": a.cancel_remaining_instances,
                "completionConditionFulfilled": a.completion_condition_fulfilled,
                "tenantId": a.tenant_id,
            }),
            RecordValue::ProcessInstanceMigration(m) => json!({
                "processInstanceKey": m.process_instance_key,
                "targetProcessDefinitionKey": m.target_process_definition_key,
                "mappingInstructions": m.mapping_instructions.iter().map(|i| json!({
                    "sourceElementId": i.source_element_id,
                    "targetElementId": i.target_element_id,
                })).collect::<Vec<_>>(),
                "tenantId": m.tenant_id,
            }),
            RecordValue::Escalation(e) => json!({
                "processInstanceKey": e.process_instance_key,
                "escalationCode": e.escalation_code,
                "throwElementId": e.throw_element_id, "catchElementId": e.catch_element_id,
            }),
            RecordValue::Form(f) => json!({
                "formId": f.form_id, "version": f.version, "formKey": f.form_key,
                "resourceName": f.resource_name, "tenantId": f.tenant_id,
                "deploymentKey": f.deployment_key,
            }),
            RecordValue::DeploymentResponse(d) => json!({
                "deploymentKey": d.deployment_key,
                "processesMetadata": d.processes_metadata.iter().map(|p| json!({
                    "bpmnProcessId": p.bpmn_process_id, "version": p.version,
                    "processDefinitionKey": p.process_definition_key, "resourceName": p.resource_name,
                    "duplicate": p.duplicate, "tenantId": p.tenant_id})).collect::<Vec<_>>(),
                "decisionRequirementsMetadata": d.decision_requirements_metadata.iter().map(|m| json!({
                    "decisionRequirementsId": m.decision_requirements_id,
                    "decisionRequirementsName": m.decision_requirements_name,
                    "decisionRequirementsVersion": m.decision_requirements_version,
                    "decisionRequirementsKey": m.decision_requirements_key,
                    "namespace": m.namespace, "resourceName": m.resource_name,
                    "duplicate": m.duplicate, "tenantId": m.tenant_id})).collect::<Vec<_>>(),
                "decisionsMetadata": d.decisions_metadata.iter().map(|m| json!({
                    "decisionId": m.decision_id, "decisionName": m.decision_name,
                    "version": m.version, "decisionKey": m.decision_key,
                    "decisionRequirementsId": m.decision_requirements_id,
                    "decisionRequirementsKey": m.decision_requirements_key,
                    "duplicate": m.duplicate, "tenantId": m.tenant_id})).collect::<Vec<_>>(),
                "formMetadata": d.forms_metadata.iter().map(|f| json!({
                    "formId": f.form_id, "version": f.version, "formKey": f.form_key,
                    "resourceName": f.resource_name, "duplicate": f.duplicate,
                    "tenantId": f.tenant_id})).collect::<Vec<_>>(),
                "tenantId": d.tenant_id,
            }),
            RecordValue::UserTask(u) => json!({
                "userTaskKey": u.user_task_key, "assignee": u.assignee,
                "candidateGroupsList": u.candidate_groups,
                "candidateUsersList": u.candidate_users, "dueDate": u.due_date,
                "followUpDate": u.follow_up_date, "formKey": u.form_key,
                "externalFormReference": u.external_form_reference,
                "changedAttributes": u.changed_attributes, "variables": doc(&u.variables),
                "action": u.action, "customHeaders": u.custom_headers,
                "creationTimestamp": u.creation_timestamp, "priority": u.priority,
                "elementId": u.element_id, "elementInstanceKey": u.element_instance_key,
                "bpmnProcessId": u.bpmn_process_id,
                "processDefinitionVersion": u.process_definition_version,
                "processDefinitionKey": u.process_definition_key,
                "processInstanceKey": u.process_instance_key, "tenantId": u.tenant_id,
            }),
        }
    }
}
