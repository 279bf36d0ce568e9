//! History deletion (HISTORY_DELETION DELETED, as the exporter meets it in the log): the store
//! forgets exactly the deleted tree (a root with its child instances, or a child with its own
//! descendants), with its elements, variables and incidents; the other instances stay. A
//! process definition goes once no instance of it is left.

use serde_json::json;
use zest_protocol::{
    BpmnElementType, BpmnEventType, HistoryDeletionRecord, Intent, ProcessInstanceRecord,
    ProcessRecord, Record, RecordValue, VariableRecord,
};

use crate::resources::{ELEMENT_INSTANCES, PROCESS_DEFINITIONS, PROCESS_INSTANCES, VARIABLES};
use crate::tests::{event, open};
use crate::{Conditions, History, Resource};

fn process(pi: i64, parent: i64) -> RecordValue {
    RecordValue::ProcessInstance(ProcessInstanceRecord {
        bpmn_process_id: "order".into(),
        version: 1,
        process_definition_key: 10,
        process_instance_key: pi,
        element_id: "order".into(),
        flow_scope_key: -1,
        bpmn_element_type: BpmnElementType::Process,
        bpmn_event_type: BpmnEventType::Unspecified,
        parent_process_instance_key: parent,
        parent_element_instance_key: if parent > 0 { parent + 1 } else { -1 },
        tenant_id: "<default>".into(),
    })
}

fn task(pi: i64) -> RecordValue {
    let RecordValue::ProcessInstance(mut r) = process(pi, -1) else {
        unreachable!()
    };
    r.element_id = "call".into();
    r.flow_scope_key = pi;
    r.bpmn_element_type = BpmnElementType::CallActivity;
    RecordValue::ProcessInstance(r)
}

fn variable(pi: i64) -> RecordValue {
    RecordValue::Variable(VariableRecord {
        name: "n".into(),
        value: pi.to_string(),
        scope_key: pi,
        process_instance_key: pi,
        process_definition_key: 10,
        bpmn_process_id: "order".into(),
        tenant_id: "<default>".into(),
    })
}

fn deleted(key: i64) -> RecordValue {
    deleted_of(key, HistoryDeletionRecord::PROCESS_INSTANCE)
}

fn deleted_of(key: i64, resource_type: &str) -> RecordValue {
    RecordValue::HistoryDeletion(HistoryDeletionRecord {
        resource_key: key,
        resource_type: resource_type.into(),
    })
}

/// Finished trees 100 -> 200 -> 300 and 1000 -> 2000 (each instance with a call activity
/// element `key + 1` and a variable `key + 2`), from position `from`.
fn trees(from: u64) -> Vec<Record> {
    let mut out = Vec::new();
    let mut at = from;
    let mut push = |key, intent, value| {
        out.push(event(at, key, intent, value));
        at += 1;
    };
    let tree = [(100, -1), (200, 100), (300, 200), (1000, -1), (2000, 1000)];
    for (pi, parent) in tree {
        push(pi, Intent::ElementActivating, process(pi, parent));
        push(pi + 1, Intent::ElementActivating, task(pi));
        push(pi + 2, Intent::Created, variable(pi));
    }
    for (pi, parent) in tree.into_iter().rev() {
        push(pi + 1, Intent::ElementCompleted, task(pi));
        push(pi, Intent::ElementCompleted, process(pi, parent));
    }
    out
}

fn keys(h: &History, r: &Resource, field: &str) -> Vec<String> {
    let found = h.search(r, &json!({}), Conditions::default()).unwrap();
    let mut keys: Vec<String> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[field].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    keys
}

fn instances(h: &History) -> Vec<String> {
    keys(h, &PROCESS_INSTANCES, "processInstanceKey")
}

#[test]
fn a_deleted_root_takes_its_tree_and_nothing_else() {
    let (_dir, h) = open("deletion-root");
    // the deletion in the same batch as the records it deletes: they are written first
    let mut records = trees(1);
    let next = records.last().unwrap().position + 1;
    records.push(event(next, 100, Intent::Deleted, deleted(100)));
    assert_eq!(h.export(1, &records, 2).unwrap(), records.len());
    assert_eq!(h.position(1).unwrap().position, next);
    assert_eq!(instances(&h), ["1000", "2000"]);
    assert_eq!(
        keys(&h, &ELEMENT_INSTANCES, "elementInstanceKey"),
        ["1001", "2001"]
    );
    assert_eq!(keys(&h, &VARIABLES, "variableKey"), ["1002", "2002"]);
    // exported again (a replica replaying its log): the position skips it all
    assert_eq!(h.export(1, &records, 2).unwrap(), 0);
    assert_eq!(instances(&h), ["1000", "2000"]);
}

#[test]
fn a_deleted_child_takes_its_descendants_and_leaves_its_parent() {
    let (_dir, h) = open("deletion-child");
    let records = trees(1);
    let next = records.last().unwrap().position + 1;
    h.export(1, &records, 2).unwrap();
    // a later batch: the deletion alone, of a child (200, which called 300)
    let deletion = [event(next, 200, Intent::Deleted, deleted(200))];
    assert_eq!(h.export(1, &deletion, 3).unwrap(), 1);
    assert_eq!(instances(&h), ["100", "1000", "2000"]);
    assert_eq!(keys(&h, &VARIABLES, "variableKey"), ["1002", "102", "2002"]);
    // a key history does not hold deletes nothing
    let unknown = [event(next + 1, 555, Intent::Deleted, deleted(555))];
    h.export(1, &unknown, 4).unwrap();
    assert_eq!(instances(&h), ["100", "1000", "2000"]);
    assert_eq!(h.position(1).unwrap().position, next + 1);
}

#[test]
fn a_deleted_definition_goes_once_no_instance_of_it_is_left() {
    let (_dir, h) = open("deletion-definition");
    let xml = r#"<definitions><process id="order" name="Order"><task id="call" name="Call"/></process></definitions>"#;
    let definition = RecordValue::Process(ProcessRecord {
        bpmn_process_id: "order".into(),
        version: 1,
        process_definition_key: 10,
        resource_name: "order.bpmn".into(),
        checksum: vec![],
        resource: xml.as_bytes().to_vec(),
        tenant_id: "<default>".into(),
    });
    let mut records = vec![event(1, 10, Intent::Created, definition)];
    records.extend(trees(2));
    let mut at = records.last().unwrap().position;
    let mut push = |records: &mut Vec<Record>, key, value| {
        at += 1;
        records.push(event(at, key, Intent::Deleted, value));
    };
    let of_definition = || deleted_of(10, HistoryDeletionRecord::PROCESS_DEFINITION);
    // its instances are still there: it stays
    push(&mut records, 10, of_definition());
    h.export(1, &records, 2).unwrap();
    let names = || -> i64 {
        h.read(|c| Ok(c.query_one("SELECT count(*) FROM element_name", &[], |r| r.get(0))?))
            .unwrap()
    };
    assert!(h.get(&PROCESS_DEFINITIONS, 10).unwrap().is_some());
    assert_eq!(instances(&h).len(), 5);
    assert!(names() > 0, "its elements have names");

    let mut later = Vec::new();
    push(&mut later, 100, deleted(100));
    push(&mut later, 1000, deleted(1000));
    push(&mut later, 10, of_definition());
    h.export(1, &later, 3).unwrap();
    assert!(instances(&h).is_empty());
    assert!(h.get(&PROCESS_DEFINITIONS, 10).unwrap().is_none());
    assert_eq!(names(), 0, "its elements' names went with it");
}
