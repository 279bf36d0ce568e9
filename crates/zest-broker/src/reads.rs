//! Reads of committed state for the REST API, from any node of the cluster (a standalone
//! gateway included).
//!
//! A partition replicated on this node is read here, whether this node leads it or follows:
//! such reads trail the log a little, as Camunda's secondary storage does. Another partition is
//! read by a node that replicates it, asked over the internal port (a `READ` frame): its leader
//! first, then its other replicas. A search asks the partitions one after the other, in
//! partition order (keys carry their partition in their high bits, so that is key order); each
//! skips the matches the partitions before it already counted toward the page's `from`, and
//! returns at most what is still missing of the page, with its count of matches. The gateway
//! so holds one page, never every match, however many partitions there are.
//!
//! The filters are equalities on the fields of the JSON Camunda's REST API shows, so the views
//! ([`user_task_json`], [`element_instance_json`]) are made here, where the filter runs.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use zest_engine::state::{key_i64, Ks, StateRead};
use zest_engine::types::{ElementInstance, StoredUserTask};
use zest_protocol::{codec, FormRecord, ProcessRecord};
use zest_storage::PartitionStore;

/// What a read asks one partition for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Read {
    /// Open Camunda user tasks that match.
    UserTasks(Search),
    /// Active element instances (process instances included) that match.
    ElementInstances(Search),
    /// The open Camunda user task with this key.
    UserTask(i64),
    /// The deployed process version with this key.
    Process(i64),
    /// The deployed form version with this key.
    Form(i64),
    /// The latest version of the form with this id.
    LatestForm(String),
    /// The user with this username (and whether it holds the `admin` role).
    User(String),
    /// Whether any user holds the `admin` role.
    HasAdmin,
    /// A read of the partition's history (`history_reads`), answered from the node's
    /// history store rather than its state.
    History(#[serde(with = "json_text")] crate::history_reads::HistoryRead),
}

/// One partition's part of a search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Search {
    /// The filter, a JSON object of field equalities (checked by the gateway).
    #[serde(with = "json_text")]
    pub filter: Map<String, Value>,
    /// Matches to pass over before the first one returned.
    pub skip: u64,
    /// Most matches to return.
    pub limit: u64,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Answer {
    /// A search's matches (in key order) and how many matched in all.
    Page {
        #[serde(with = "json_text")]
        items: Vec<Value>,
        total: u64,
    },
    UserTask(Option<Box<StoredUserTask>>),
    Process(Option<ProcessRecord>),
    Form(Option<FormRecord>),
    User(Option<Box<(zest_protocol::UserRecord, bool)>>),
    HasAdmin(bool),
    /// A read of history's answer, or why the request is wrong (the asker's 400).
    History(#[serde(with = "json_text")] Result<crate::history_reads::HistoryAnswer, String>),
}

/// What a search looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchKind {
    UserTasks,
    ElementInstances,
}

/// A page of search results: the matches and how many there are in all.
#[derive(Debug, Default)]
pub struct Page {
    pub items: Vec<Value>,
    pub total: u64,
}

/// JSON values cross the internal port as JSON text: the binary codec cannot carry a
/// self-describing value. Only the wire pays for it; a local read keeps the values.
mod json_text {
    use serde::{de::DeserializeOwned, Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        let text = serde_json::to_string(value).map_err(serde::ser::Error::custom)?;
        s.serialize_str(&text)
    }

    pub fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(
        d: D,
    ) -> Result<T, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(serde::de::Error::custom)
    }
}

/// Runs `read` on a partition's committed state, here, on a blocking thread (a search scans).
pub(crate) async fn read_blocking(
    partition: &crate::partition::PartitionHandle,
    read: Read,
) -> Result<Answer, String> {
    let store = partition.answered_state().into_store().await;
    tokio::task::spawn_blocking(move || read_local(&store, &read))
        .await
        .map_err(|e| e.to_string())
}

/// Runs `read` on a partition's committed state, here.
fn read_local(store: &PartitionStore, read: &Read) -> Answer {
    match read {
        Read::UserTasks(s) => search_local(store, SearchKind::UserTasks, s),
        Read::ElementInstances(s) => search_local(store, SearchKind::ElementInstances, s),
        Read::UserTask(key) => Answer::UserTask(
            store
                .get(Ks::UserTasks, &zest_engine::user_task_key(b't', *key))
                .and_then(|b| codec::decode(&b).ok())
                .map(Box::new),
        ),
        Read::Process(key) => Answer::Process(zest_engine::queries::process(store, *key)),
        Read::Form(key) => Answer::Form(zest_engine::queries::form(store, *key)),
        Read::LatestForm(id) => Answer::Form(zest_engine::queries::latest_form(store, id)),
        Read::User(name) => Answer::User(
            zest_engine::queries::user(store, name)
                .map(|u| Box::new((u, zest_engine::queries::is_admin(store, name)))),
        ),
        Read::HasAdmin => Answer::HasAdmin(zest_engine::queries::has_admin(store)),
        // answered by the node's history (`Local::history_here`), never from the state
        Read::History(_) => Answer::History(Err("a read of history reached the state".into())),
    }
}

/// One partition's matches, read from its state one at a time: it keeps only its part of the
/// page.
fn search_local(store: &PartitionStore, kind: SearchKind, search: &Search) -> Answer {
    let filter = &search.filter;
    let mut items = Vec::new();
    let mut total = 0u64;
    let mut offer = |item: Value| {
        if !matches(kind, &item, filter) {
            return;
        }
        if total >= search.skip && (items.len() as u64) < search.limit {
            items.push(item);
        }
        total += 1;
    };
    match kind {
        SearchKind::UserTasks => visit_open_user_tasks(store, &mut |t| offer(user_task_json(&t))),
        SearchKind::ElementInstances => visit_active_element_instances(store, &mut |inst, inc| {
            offer(element_instance_json(&inst, inc))
        }),
    }
    Answer::Page { items, total }
}

/// Every open Camunda user task of the partition, in key order.
fn visit_open_user_tasks(store: &PartitionStore, f: &mut dyn FnMut(StoredUserTask)) {
    store.scan_prefix(Ks::UserTasks, b"t", &mut |_, v| {
        match codec::decode::<StoredUserTask>(v) {
            Ok(t) => f(t),
            Err(e) => tracing::error!("undecodable user task in state: {e}"),
        }
        true
    });
}

/// The partition's active element instances, in key order, each with the key of its open
/// incident (-1 without one).
fn visit_active_element_instances(store: &PartitionStore, f: &mut dyn FnMut(ElementInstance, i64)) {
    store.scan_prefix(Ks::ElementInstances, b"", &mut |_, v| {
        match codec::decode::<ElementInstance>(v) {
            Ok(inst) if inst.is_active() => {
                // an incident is indexed by its element instance, or by its job
                let incident = [inst.key, inst.job_key]
                    .into_iter()
                    .filter(|&k| k > 0)
                    .find_map(|k| store.get(Ks::IncidentIndex, &key_i64(k)))
                    .and_then(|b| codec::decode::<i64>(&b).ok())
                    .unwrap_or(-1);
                f(inst, incident)
            }
            Ok(_) => {}
            Err(e) => tracing::error!("undecodable element instance in state: {e}"),
        }
        true
    });
}

/// Whether `item` passes every equality of `filter`; a user task's `candidateGroup` and
/// `candidateUser` ask for one of its lists to hold the value.
fn matches(kind: SearchKind, item: &Value, filter: &Map<String, Value>) -> bool {
    filter.iter().all(|(name, want)| {
        let list = match (kind, name.as_str()) {
            (SearchKind::UserTasks, "candidateGroup") => Some("candidateGroups"),
            (SearchKind::UserTasks, "candidateUser") => Some("candidateUsers"),
            _ => None,
        };
        match list {
            Some(list) => {
                let want = text_of(want);
                item[list]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|v| v.as_str() == Some(&want)))
            }
            None => field_matches(item, name, want),
        }
    })
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether the JSON field `field` of `item` equals the filter value `want` (keys are strings in
/// responses and may be numbers or strings in filters).
fn field_matches(item: &Value, field: &str, want: &Value) -> bool {
    let want_text = text_of(want);
    match &item[field] {
        Value::String(s) => *s == want_text,
        Value::Null => want.is_null(),
        other => serde_json::from_str::<Value>(&want_text).ok().as_ref() == Some(other),
    }
}

/// A user task as the REST API shows it (keys as strings, as Camunda 8.8 writes them).
pub fn user_task_json(t: &StoredUserTask) -> Value {
    let r = &t.record;
    let opt = |s: &str| {
        if s.is_empty() {
            Value::Null
        } else {
            Value::String(s.to_string())
        }
    };
    json!({
        "userTaskKey": r.user_task_key.to_string(),
        "state": "CREATED",
        "assignee": opt(&r.assignee),
        "elementId": r.element_id,
        "candidateGroups": r.candidate_groups,
        "candidateUsers": r.candidate_users,
        "processDefinitionId": r.bpmn_process_id,
        "creationDate": zest_model::time::format_date_time_utc(r.creation_timestamp),
        "dueDate": opt(&r.due_date),
        "followUpDate": opt(&r.follow_up_date),
        "tenantId": r.tenant_id,
        "externalFormReference": opt(&r.external_form_reference),
        "processDefinitionVersion": r.process_definition_version,
        "customHeaders": r.custom_headers,
        "priority": r.priority,
        "elementInstanceKey": r.element_instance_key.to_string(),
        "processInstanceKey": r.process_instance_key.to_string(),
        "processDefinitionKey": r.process_definition_key.to_string(),
        "formKey": if r.form_key > 0 { Value::String(r.form_key.to_string()) } else { Value::Null },
    })
}

/// An element instance as Camunda's REST API shows it (keys as strings).
pub fn element_instance_json(inst: &ElementInstance, incident: i64) -> Value {
    let r = &inst.record;
    let element_type = serde_json::to_value(r.bpmn_element_type).unwrap_or(Value::Null);
    let mut item = json!({
        "elementInstanceKey": inst.key.to_string(),
        "processInstanceKey": r.process_instance_key.to_string(),
        "processDefinitionKey": r.process_definition_key.to_string(),
        "processDefinitionId": r.bpmn_process_id,
        "elementId": r.element_id,
        "type": element_type,
        "state": "ACTIVE",
        "hasIncident": incident > 0,
        "tenantId": r.tenant_id,
    });
    if incident > 0 {
        item["incidentKey"] = Value::String(incident.to_string());
    }
    item
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page and a filter cross the internal port as JSON text and come back as the values.
    #[test]
    fn pages_and_filters_cross_the_wire_whole() {
        let items = vec![json!({"userTaskKey": "1", "customHeaders": {"a": [1, null]}})];
        let wire = codec::encode(&Answer::Page {
            items: items.clone(),
            total: 7,
        });
        match codec::decode::<Answer>(&wire).unwrap() {
            Answer::Page { items: back, total } => assert_eq!((back, total), (items, 7)),
            other => panic!("unexpected {other:?}"),
        }
        let filter = json!({"priority": 50, "assignee": null});
        let read = Read::UserTasks(Search {
            filter: filter.as_object().cloned().unwrap(),
            skip: 3,
            limit: 10,
        });
        match codec::decode::<Read>(&codec::encode(&read)).unwrap() {
            Read::UserTasks(s) => {
                assert_eq!(Value::Object(s.filter), filter);
                assert_eq!((s.skip, s.limit), (3, 10));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn filters_compare_keys_as_text_and_candidates_by_membership() {
        let task = json!({
            "userTaskKey": "2251799813685249",
            "priority": 50,
            "assignee": null,
            "candidateGroups": ["sales", "ops"],
        });
        let filter = |v: Value| v.as_object().cloned().unwrap();
        let kind = SearchKind::UserTasks;
        assert!(matches(
            kind,
            &task,
            &filter(json!({"userTaskKey": 2251799813685249i64}))
        ));
        assert!(matches(
            kind,
            &task,
            &filter(json!({"userTaskKey": "2251799813685249"}))
        ));
        assert!(!matches(kind, &task, &filter(json!({"userTaskKey": "1"}))));
        assert!(matches(kind, &task, &filter(json!({"priority": 50}))));
        assert!(matches(kind, &task, &filter(json!({"assignee": null}))));
        assert!(matches(
            kind,
            &task,
            &filter(json!({"candidateGroup": "ops"}))
        ));
        assert!(!matches(
            kind,
            &task,
            &filter(json!({"candidateGroup": "hr"}))
        ));
        // only user tasks have candidate lists
        assert!(!matches(
            SearchKind::ElementInstances,
            &task,
            &filter(json!({"candidateGroup": "ops"}))
        ));
    }
}
