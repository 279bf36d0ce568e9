//! Records to rows: what one batch of committed records changes in the history, coalesced per
//! row before anything is written (an element activated and completed in the same batch is one
//! row written once). Each field is an `Option`: a record sets what it knows, and the upsert
//! keeps the stored value of every field left `None` (`write.rs`).

use std::collections::BTreeMap;

pub mod decisions;
pub mod job_stats;
pub mod messages;
pub mod users;

use serde::Serialize;
use zest_protocol::{
    BpmnElementType, Intent, JobRecord, ProcessInstanceRecord, Record, RecordType, RecordValue,
    UserTaskRecord,
};

/// Longest variable value kept whole in `value` (Camunda's `variableSizeThreshold`); a longer
/// one is cut there, flagged `is_truncated`, and kept whole in `full_value`.
pub const PREVIEW_CHARS: usize = 8191;

#[derive(Default, Debug)]
pub struct Changes {
    pub definitions: Vec<Definition>,
    /// Forms deployed (FORM CREATED), and the keys of forms deleted (FORM DELETED), in order.
    pub forms: Vec<zest_protocol::FormRecord>,
    pub deleted_forms: Vec<i64>,
    pub instances: BTreeMap<i64, Instance>,
    pub elements: BTreeMap<i64, Element>,
    pub flows: Vec<Flow>,
    pub variables: BTreeMap<i64, Variable>,
    pub incidents: BTreeMap<i64, Incident>,
    /// Incidents opened (+1) and resolved (-1) per process instance.
    pub incident_counts: BTreeMap<i64, i64>,
    /// The incident key an element instance now has (0: none any more).
    pub element_incidents: BTreeMap<i64, i64>,
    /// The element statistics' counters the batch moves (`counts.rs`).
    pub counts: crate::counts::ElementCounts,
    pub jobs: BTreeMap<i64, Job>,
    /// The job statistics' increments.
    pub job_stats: job_stats::JobStats,
    pub user_tasks: BTreeMap<i64, UserTask>,
    pub decisions: decisions::Decisions,
    pub messages: messages::Messages,
    pub batch_operations: crate::batch::BatchChanges,
    /// Users created, changed and deleted (partition 1's records).
    pub users: users::Users,
    /// Users assigned a user task (usage metrics), by minute: (minute, assignee, tenant) to
    /// the first and the last assignment of the minute in this batch (epoch ms).
    pub assignments: BTreeMap<(i64, String, String), (i64, i64)>,
    /// Records taken in, for the metrics.
    pub records: usize,
}

#[derive(Debug)]
pub struct Definition {
    pub key: i64,
    pub bpmn_process_id: String,
    pub name: Option<String>,
    pub version: i32,
    pub version_tag: Option<String>,
    pub resource_name: String,
    pub tenant_id: String,
    pub has_start_form: bool,
    pub xml: String,
    /// (element id, name) of every named element of the process.
    pub element_names: Vec<(String, String)>,
}

#[derive(Default, Debug)]
pub struct Instance {
    pub partition_id: Option<u32>,
    pub process_definition_key: Option<i64>,
    pub bpmn_process_id: Option<String>,
    pub version: Option<i32>,
    pub tenant_id: Option<String>,
    pub state: Option<&'static str>,
    pub start_date: Option<i64>,
    pub end_date: Option<i64>,
    pub parent_process_instance_key: Option<i64>,
    pub parent_element_instance_key: Option<i64>,
}

#[derive(Default, Debug)]
pub struct Element {
    pub process_instance_key: Option<i64>,
    pub process_definition_key: Option<i64>,
    pub bpmn_process_id: Option<String>,
    pub element_id: Option<String>,
    pub element_type: Option<String>,
    pub state: Option<&'static str>,
    pub flow_scope_key: Option<i64>,
    pub start_date: Option<i64>,
    pub end_date: Option<i64>,
    pub tenant_id: Option<String>,
}

#[derive(Debug)]
pub struct Flow {
    pub process_instance_key: i64,
    pub flow_id: String,
    pub process_definition_key: i64,
    pub bpmn_process_id: String,
    pub tenant_id: String,
}

/// A variable as its last record in the batch says it is (every record carries all of it).
#[derive(Default, Debug)]
pub struct Variable {
    pub name: String,
    pub value: String,
    pub full_value: Option<String>,
    pub is_truncated: bool,
    pub scope_key: i64,
    pub process_instance_key: i64,
    pub process_definition_key: i64,
    pub bpmn_process_id: String,
    pub tenant_id: String,
}

#[derive(Default, Debug)]
pub struct Incident {
    pub process_instance_key: Option<i64>,
    pub process_definition_key: Option<i64>,
    pub bpmn_process_id: Option<String>,
    pub element_id: Option<String>,
    pub element_instance_key: Option<i64>,
    pub job_key: Option<i64>,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
    pub error_message_hash: Option<i64>,
    pub state: Option<&'static str>,
    pub creation_time: Option<i64>,
    pub tenant_id: Option<String>,
}

#[derive(Default, Debug)]
pub struct Job {
    pub job_type: Option<String>,
    pub worker: Option<String>,
    pub state: Option<&'static str>,
    pub kind: Option<String>,
    pub listener_event_type: Option<String>,
    pub retries: Option<i32>,
    pub deadline: Option<i64>,
    pub end_time: Option<i64>,
    pub error_message: Option<String>,
    pub error_code: Option<String>,
    pub has_failed_with_retries_left: Option<bool>,
    pub custom_headers: Option<String>,
    pub element_id: Option<String>,
    pub element_instance_key: Option<i64>,
    pub process_instance_key: Option<i64>,
    pub process_definition_key: Option<i64>,
    pub bpmn_process_id: Option<String>,
    pub tenant_id: Option<String>,
}

#[derive(Default, Debug)]
pub struct UserTask {
    pub state: Option<&'static str>,
    pub assignee: Option<String>,
    pub candidate_groups: Option<String>,
    pub candidate_users: Option<String>,
    pub due_date: Option<String>,
    pub follow_up_date: Option<String>,
    pub creation_date: Option<i64>,
    pub completion_date: Option<i64>,
    pub priority: Option<i32>,
    pub form_key: Option<i64>,
    pub external_form_reference: Option<String>,
    pub custom_headers: Option<String>,
    pub element_id: Option<String>,
    pub element_instance_key: Option<i64>,
    pub process_instance_key: Option<i64>,
    pub process_definition_key: Option<i64>,
    pub process_definition_version: Option<i32>,
    pub bpmn_process_id: Option<String>,
    pub tenant_id: Option<String>,
}

/// A value's name as the records carry it (`SCREAMING_SNAKE_CASE` through serde).
pub fn enum_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Camunda's `errorMessageHash`: a stable 32-bit hash of the message (Java's String hashCode,
/// which Operate uses to group incidents by message).
pub fn message_hash(message: &str) -> i64 {
    let mut h: i32 = 0;
    for unit in message.encode_utf16() {
        h = h.wrapping_mul(31).wrapping_add(unit as i32);
    }
    h as i64
}

impl Changes {
    /// Takes in one committed record (commands and rejections change nothing).
    pub fn add(&mut self, record: &Record) {
        self.records += 1;
        if record.record_type != RecordType::Event {
            return;
        }
        let (key, at, intent) = (record.key, record.timestamp, record.intent);
        match &record.value {
            RecordValue::Process(p) if intent == Intent::Created => {
                let xml = String::from_utf8_lossy(&p.resource).into_owned();
                let parsed = crate::bpmn::describe(&xml, &p.bpmn_process_id);
                self.definitions.push(Definition {
                    key: p.process_definition_key,
                    bpmn_process_id: p.bpmn_process_id.clone(),
                    name: parsed.name,
                    version: p.version,
                    version_tag: parsed.version_tag,
                    resource_name: p.resource_name.clone(),
                    tenant_id: p.tenant_id.clone(),
                    has_start_form: parsed.has_start_form,
                    xml,
                    element_names: parsed.element_names,
                });
            }
            RecordValue::Form(f) if intent == Intent::Created => self.forms.push(f.clone()),
            RecordValue::Form(f) if intent == Intent::Deleted => {
                self.deleted_forms.push(f.form_key)
            }
            RecordValue::ProcessInstance(pi) => {
                self.counts.element(key, intent, pi);
                self.process_instance(key, at, intent, record.partition_id, pi)
            }
            RecordValue::Variable(v) if matches!(intent, Intent::Created | Intent::Updated) => {
                let truncated = v.value.chars().count() > PREVIEW_CHARS;
                let (value, full_value) = if truncated {
                    (
                        v.value.chars().take(PREVIEW_CHARS).collect(),
                        Some(v.value.clone()),
                    )
                } else {
                    (v.value.clone(), None)
                };
                self.variables.insert(
                    key,
                    Variable {
                        name: v.name.clone(),
                        value,
                        full_value,
                        is_truncated: truncated,
                        scope_key: v.scope_key,
                        process_instance_key: v.process_instance_key,
                        process_definition_key: v.process_definition_key,
                        bpmn_process_id: v.bpmn_process_id.clone(),
                        tenant_id: v.tenant_id.clone(),
                    },
                );
            }
            RecordValue::Incident(i) => {
                self.counts.incident(intent, i);
                self.incident(key, at, intent, i)
            }
            RecordValue::BatchOperation(b) => self.batch_operations.add(key, at, intent, b),
            RecordValue::User(u) => self.users.add(record.partition_id, intent, u),
            RecordValue::Job(j) => {
                self.job_stats.add(record.partition_id, at, intent, j);
                self.job(key, at, intent, j)
            }
            RecordValue::JobBatch(b) if intent == Intent::Activated => {
                for (key, job) in b.job_keys.iter().zip(&b.jobs) {
                    let row = self.jobs.entry(*key).or_default();
                    row.worker = Some(job.worker.clone());
                    row.deadline = Some(job.deadline);
                    row.retries = Some(job.retries);
                }
            }
            RecordValue::UserTask(t) => self.user_task(key, at, intent, t),
            RecordValue::DecisionRequirements(r) if intent == Intent::Created => {
                self.decisions.requirements.push(r.clone())
            }
            RecordValue::Decision(d) if intent == Intent::Created => {
                self.decisions.definitions.push(d.clone())
            }
            RecordValue::DecisionEvaluation(e) => self.decisions.evaluation(key, at, intent, e),
            RecordValue::ProcessMessageSubscription(m) => {
                self.messages
                    .subscription(key, at, intent, record.partition_id, record.position, m)
            }
            _ => {}
        }
    }

    fn process_instance(
        &mut self,
        key: i64,
        at: i64,
        intent: Intent,
        partition: u32,
        pi: &ProcessInstanceRecord,
    ) {
        if intent == Intent::SequenceFlowTaken {
            self.flows.push(Flow {
                process_instance_key: pi.process_instance_key,
                flow_id: pi.element_id.clone(),
                process_definition_key: pi.process_definition_key,
                bpmn_process_id: pi.bpmn_process_id.clone(),
                tenant_id: pi.tenant_id.clone(),
            });
            return;
        }
        let (state, start, end) = match intent {
            Intent::ElementActivating => ("ACTIVE", Some(at), None),
            Intent::ElementCompleted => ("COMPLETED", None, Some(at)),
            Intent::ElementTerminated => ("TERMINATED", None, Some(at)),
            Intent::ElementMigrated => ("ACTIVE", None, None),
            _ => return,
        };
        if pi.bpmn_element_type == BpmnElementType::Process {
            let row = self.instances.entry(key).or_default();
            row.state = Some(state);
            row.start_date = start.or(row.start_date);
            row.end_date = end.or(row.end_date);
            row.partition_id = Some(partition);
            row.process_definition_key = Some(pi.process_definition_key);
            row.bpmn_process_id = Some(pi.bpmn_process_id.clone());
            row.version = Some(pi.version);
            row.tenant_id = Some(pi.tenant_id.clone());
            row.parent_process_instance_key = Some(pi.parent_process_instance_key);
            row.parent_element_instance_key = Some(pi.parent_element_instance_key);
            return;
        }
        let row = self.elements.entry(key).or_default();
        row.state = Some(state);
        row.start_date = start.or(row.start_date);
        row.end_date = end.or(row.end_date);
        row.process_instance_key = Some(pi.process_instance_key);
        row.process_definition_key = Some(pi.process_definition_key);
        row.bpmn_process_id = Some(pi.bpmn_process_id.clone());
        row.element_id = Some(pi.element_id.clone());
        row.element_type = Some(enum_name(&pi.bpmn_element_type));
        row.flow_scope_key = Some(pi.flow_scope_key);
        row.tenant_id = Some(pi.tenant_id.clone());
    }

    fn incident(&mut self, key: i64, at: i64, intent: Intent, i: &zest_protocol::IncidentRecord) {
        let row = self.incidents.entry(key).or_default();
        match intent {
            Intent::Created => {
                row.state = Some("ACTIVE");
                row.creation_time = Some(at);
                *self
                    .incident_counts
                    .entry(i.process_instance_key)
                    .or_default() += 1;
                self.element_incidents.insert(i.element_instance_key, key);
            }
            Intent::Resolved => {
                row.state = Some("RESOLVED");
                *self
                    .incident_counts
                    .entry(i.process_instance_key)
                    .or_default() -= 1;
                self.element_incidents.insert(i.element_instance_key, 0);
            }
            Intent::Migrated => {}
            _ => return,
        }
        row.process_instance_key = Some(i.process_instance_key);
        row.process_definition_key = Some(i.process_definition_key);
        row.bpmn_process_id = Some(i.bpmn_process_id.clone());
        row.element_id = Some(i.element_id.clone());
        row.element_instance_key = Some(i.element_instance_key);
        row.job_key = Some(i.job_key);
        row.error_type = Some(enum_name(&i.error_type));
        row.error_message = Some(i.error_message.clone());
        row.error_message_hash = Some(message_hash(&i.error_message));
        row.tenant_id = Some(i.tenant_id.clone());
    }

    fn job(&mut self, key: i64, at: i64, intent: Intent, j: &JobRecord) {
        let state = match intent {
            Intent::Created => "CREATED",
            Intent::Completed => "COMPLETED",
            Intent::Failed => "FAILED",
            Intent::TimedOut => "TIMED_OUT",
            Intent::RetriesUpdated => "RETRIES_UPDATED",
            Intent::ErrorThrown => "ERROR_THROWN",
            Intent::Canceled => "CANCELED",
            Intent::Migrated => "MIGRATED",
            Intent::TimeoutUpdated | Intent::RecurredAfterBackoff | Intent::Yielded => "",
            _ => return,
        };
        let row = self.jobs.entry(key).or_default();
        if !state.is_empty() {
            row.state = Some(state);
        }
        if matches!(
            intent,
            Intent::Completed | Intent::Canceled | Intent::ErrorThrown
        ) {
            row.end_time = Some(at);
        }
        if intent == Intent::Failed {
            row.has_failed_with_retries_left = Some(j.retries > 0);
        } else if intent == Intent::Created {
            row.has_failed_with_retries_left = Some(false);
        }
        row.job_type = Some(j.job_type.clone());
        row.worker = Some(j.worker.clone());
        row.kind = Some(enum_name(&j.kind));
        row.listener_event_type = Some(enum_name(&j.listener_event_type));
        row.retries = Some(j.retries);
        row.deadline = (j.deadline > 0).then_some(j.deadline).or(row.deadline);
        row.error_message = Some(j.error_message.clone());
        row.error_code = Some(j.error_code.clone());
        row.custom_headers = Some(serde_json::to_string(&j.custom_headers).unwrap_or_default());
        row.element_id = Some(j.element_id.clone());
        row.element_instance_key = Some(j.element_instance_key);
        row.process_instance_key = Some(j.process_instance_key);
        row.process_definition_key = Some(j.process_definition_key);
        row.bpmn_process_id = Some(j.bpmn_process_id.clone());
        row.tenant_id = Some(j.tenant_id.clone());
    }

    fn user_task(&mut self, key: i64, at: i64, intent: Intent, t: &UserTaskRecord) {
        let state = match intent {
            Intent::Creating => "CREATING",
            Intent::Created
            | Intent::Assigned
            | Intent::Updated
            | Intent::Corrected
            | Intent::AssignmentDenied
            | Intent::UpdateDenied
            | Intent::CompletionDenied => "CREATED",
            Intent::Assigning | Intent::Claiming => "ASSIGNING",
            Intent::Updating => "UPDATING",
            Intent::Completing => "COMPLETING",
            Intent::Completed => "COMPLETED",
            Intent::Canceling => "CANCELING",
            Intent::Canceled => "CANCELED",
            Intent::Migrated => "CREATED",
            _ => return,
        };
        if intent == Intent::Assigned && !t.assignee.is_empty() {
            // Camunda's "task users" (TU): an assignment with an assignee (not an unassign)
            let minute = at.div_euclid(crate::usage::MINUTE);
            let id = (minute, t.assignee.clone(), t.tenant_id.clone());
            let span = self.assignments.entry(id).or_insert((at, at));
            span.0 = span.0.min(at);
            span.1 = span.1.max(at);
        }
        let row = self.user_tasks.entry(key).or_default();
        row.state = Some(state);
        if intent == Intent::Creating {
            row.creation_date = Some(at);
        }
        if matches!(intent, Intent::Completed | Intent::Canceled) {
            row.completion_date = Some(at);
        }
        let list = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_default();
        row.assignee = Some(t.assignee.clone());
        row.candidate_groups = Some(list(&t.candidate_groups));
        row.candidate_users = Some(list(&t.candidate_users));
        row.due_date = Some(t.due_date.clone());
        row.follow_up_date = Some(t.follow_up_date.clone());
        row.priority = Some(t.priority);
        row.form_key = Some(t.form_key);
        row.external_form_reference = Some(t.external_form_reference.clone());
        row.custom_headers = Some(serde_json::to_string(&t.custom_headers).unwrap_or_default());
        row.element_id = Some(t.element_id.clone());
        row.element_instance_key = Some(t.element_instance_key);
        row.process_instance_key = Some(t.process_instance_key);
        row.process_definition_key = Some(t.process_definition_key);
        row.process_definition_version = Some(t.process_definition_version);
        row.bpmn_process_id = Some(t.bpmn_process_id.clone());
        row.tenant_id = Some(t.tenant_id.clone());
    }
}
