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

/// An [`ElementInstance`]'s encoding with its record left encoded: the fields its events
/// change (state, job, timer, counters, join tokens) decoded, and the record's bytes borrowed.
/// An update of those fields writes the record's bytes back as they are, instead of decoding
/// its three strings and encoding them again (an element instance is updated four to six
/// times in its life, its flow scope once or twice more for each child).
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceHead<'a> {
    pub key: i64,
    pub parent_key: i64,
    pub state: Intent,
    /// The record's encoding, as the instance's encoding holds it.
    record: &'a [u8],
    pub job_key: i64,
    pub timer_key: i64,
    pub active_children: u32,
    pub active_flows: u32,
    pub join_tokens: BTreeMap<String, u32>,
}

/// The fields of an [`ElementInstance`] before its record, in its order.
type HeadFields = (i64, i64, Intent);
/// The fields after its record, in its order.
type TailFields = (i64, i64, u32, u32, BTreeMap<String, u32>);

impl<'a> InstanceHead<'a> {
    /// Decodes from an [`ElementInstance`]'s encoding.
    pub fn decode(bytes: &'a [u8]) -> postcard::Result<InstanceHead<'a>> {
        let ((key, parent_key, state), rest) = postcard::take_from_bytes::<HeadFields>(bytes)?;
        let (_, after) = postcard::take_from_bytes::<RecordSkip<'_>>(rest)?;
        let record = &rest[..rest.len() - after.len()];
        let ((job_key, timer_key, active_children, active_flows, join_tokens), _) =
            postcard::take_from_bytes::<TailFields>(after)?;
        Ok(InstanceHead {
            key,
            parent_key,
            state,
            record,
            job_key,
            timer_key,
            active_children,
            active_flows,
            join_tokens,
        })
    }

    /// The encoding of the [`ElementInstance`] it holds: what [`codec::encode`] gives for it.
    ///
    /// [`codec::encode`]: zest_protocol::codec::encode
    pub fn encode(&self) -> Vec<u8> {
        let head: HeadFields = (self.key, self.parent_key, self.state);
        let mut out = Vec::with_capacity(self.record.len() + 48);
        out = postcard::to_extend(&head, out).expect("postcard writes into a vector");
        out.extend_from_slice(self.record);
        let tail = (
            self.job_key,
            self.timer_key,
            self.active_children,
            self.active_flows,
            &self.join_tokens,
        );
        postcard::to_extend(&tail, out).expect("postcard writes into a vector")
    }
}

/// The first fields of an [`ElementInstance`]: its key, its flow scope's key and its state,
/// decoded from its encoding without the rest (postcard reads a prefix of the fields). For the
/// checks and walks that need no more: a whole instance's decoding allocates its record's
/// three strings and its join tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceState {
    pub key: i64,
    /// The flow scope's element instance; -1 for a process instance.
    pub parent_key: i64,
    pub state: Intent,
}

impl InstanceState {
    pub fn decode(bytes: &[u8]) -> postcard::Result<InstanceState> {
        let ((key, parent_key, state), _) = postcard::take_from_bytes::<HeadFields>(bytes)?;
        Ok(InstanceState {
            key,
            parent_key,
            state,
        })
    }
}

/// [`ProcessInstanceRecord`]'s fields in its order, read past without decoding its strings
/// (postcard encodes a `String` as its length and bytes, as it does a borrowed `&[u8]`).
#[derive(Deserialize)]
struct RecordSkip<'a> {
    #[serde(borrow)]
    _bpmn_process_id: &'a [u8],
    _version: i32,
    _process_definition_key: i64,
    _process_instance_key: i64,
    #[serde(borrow)]
    _element_id: &'a [u8],
    _flow_scope_key: i64,
    _bpmn_element_type: zest_protocol::BpmnElementType,
    _bpmn_event_type: zest_protocol::BpmnEventType,
    _parent_process_instance_key: i64,
    _parent_element_instance_key: i64,
    #[serde(borrow)]
    _tenant_id: &'a [u8],
}

/// Fails to compile when [`ElementInstance`] or [`ProcessInstanceRecord`] gains or loses a
/// field: [`InstanceHead`], [`InstanceState`] and [`RecordSkip`] must then follow them
/// (their order and types are checked by the tests).
#[allow(dead_code)]
fn instance_head_follows_the_instance(inst: ElementInstance) {
    let ElementInstance {
        key: _,
        parent_key: _,
        state: _,
        record: r,
        job_key: _,
        timer_key: _,
        active_children: _,
        active_flows: _,
        join_tokens: _,
    } = inst;
    let ProcessInstanceRecord {
        bpmn_process_id: _,
        version: _,
        process_definition_key: _,
        process_instance_key: _,
        element_id: _,
        flow_scope_key: _,
        bpmn_element_type: _,
        bpmn_event_type: _,
        parent_process_instance_key: _,
        parent_element_instance_key: _,
        tenant_id: _,
    } = r;
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

    /// An instance's head (and its first fields alone) decodes from its encoding, and encodes
    /// back to what the whole instance, changed the same way, encodes to: for records with long
    /// and non-ASCII strings, negative keys, join tokens; bytes that are no instance are an
    /// error.
    #[test]
    fn an_instance_head_updates_as_the_whole_instance_does() {
        use zest_protocol::{BpmnElementType, BpmnEventType};
        for (id_len, tokens) in [(0, 0), (3, 1), (200, 3)] {
            let mut inst = ElementInstance {
                key: 2251799813685300,
                parent_key: -1,
                state: Intent::ElementActivating,
                record: ProcessInstanceRecord {
                    bpmn_process_id: "bankDisputeHandling".into(),
                    version: 3,
                    process_definition_key: 2251799813685249,
                    process_instance_key: 2251799813685260,
                    element_id: "é".repeat(id_len),
                    flow_scope_key: -7,
                    bpmn_element_type: BpmnElementType::MultiInstanceBody,
                    bpmn_event_type: BpmnEventType::Message,
                    parent_process_instance_key: 4503599627370497,
                    parent_element_instance_key: 300,
                    tenant_id: "tenant-a".into(),
                },
                job_key: 12,
                timer_key: -1,
                active_children: 127,
                active_flows: 2,
                join_tokens: (0..tokens).map(|i| (format!("join\u{0}f{i}"), i)).collect(),
            };
            let bytes = zest_protocol::codec::encode(&inst);
            assert_eq!(
                InstanceState::decode(&bytes).unwrap(),
                InstanceState {
                    key: inst.key,
                    parent_key: inst.parent_key,
                    state: inst.state
                }
            );
            let mut head = InstanceHead::decode(&bytes).unwrap();
            assert_eq!(
                (
                    head.key,
                    head.parent_key,
                    head.state,
                    head.job_key,
                    head.timer_key
                ),
                (
                    inst.key,
                    inst.parent_key,
                    inst.state,
                    inst.job_key,
                    inst.timer_key
                )
            );
            assert_eq!(
                (head.active_children, head.active_flows, &head.join_tokens),
                (inst.active_children, inst.active_flows, &inst.join_tokens)
            );
            assert_eq!(head.encode(), bytes, "unchanged, element id of {id_len}");
            // 127 + 1 takes two bytes: the tail's length changes
            head.state = Intent::ElementCompleting;
            head.active_children += 1;
            head.job_key = -1;
            head.timer_key = 99;
            head.active_flows = 0;
            head.join_tokens.insert("j\u{0}g".into(), 1);
            inst.state = Intent::ElementCompleting;
            inst.active_children += 1;
            inst.job_key = -1;
            inst.timer_key = 99;
            inst.active_flows = 0;
            inst.join_tokens.insert("j\u{0}g".into(), 1);
            assert_eq!(head.encode(), zest_protocol::codec::encode(&inst));
        }
        assert!(InstanceHead::decode(&[0xff, 0xff, 0xff]).is_err());
        assert!(InstanceHead::decode(&[]).is_err());
        assert!(InstanceState::decode(&[]).is_err());
    }

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
