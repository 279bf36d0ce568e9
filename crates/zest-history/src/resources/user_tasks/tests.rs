//! User tasks from history: every state, named after their element, found by the spec's
//! filters and sorts; the variables effective at a task, nearest scope first.

use serde_json::{json, Value};
use zest_protocol::{
    BpmnElementType, BpmnEventType, Intent, ProcessInstanceRecord, ProcessRecord, Record,
    RecordValue, UserTaskRecord, VariableRecord,
};

use crate::resources::{Resource, EFFECTIVE_AT, EFFECTIVE_VARIABLES, USER_TASKS};
use crate::{Conditions, History};

const XML: &str = r#"<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL">
  <bpmn:process id="claims" name="Claims"><bpmn:subProcess id="sub">
    <bpmn:userTask id="review" name="Review" /></bpmn:subProcess>
    <bpmn:userTask id="approve" /></bpmn:process>
</bpmn:definitions>"#;

const PI: i64 = 100;
const SUB: i64 = 101;

use crate::tests::event as record;

fn element(key: i64, id: &str, ty: BpmnElementType, scope: i64) -> (i64, RecordValue) {
    let pi = ProcessInstanceRecord {
        bpmn_process_id: "claims".into(),
        version: 1,
        process_definition_key: 10,
        process_instance_key: PI,
        element_id: id.into(),
        flow_scope_key: scope,
        bpmn_element_type: ty,
        bpmn_event_type: BpmnEventType::Unspecified,
        parent_process_instance_key: -1,
        parent_element_instance_key: -1,
        tenant_id: "<default>".into(),
    };
    (key, RecordValue::ProcessInstance(pi))
}

fn variable(key: i64, name: &str, value: &str, scope: i64) -> (i64, RecordValue) {
    let v = VariableRecord {
        name: name.into(),
        value: value.into(),
        scope_key: scope,
        process_instance_key: PI,
        process_definition_key: 10,
        bpmn_process_id: "claims".into(),
        tenant_id: "<default>".into(),
    };
    (key, RecordValue::Variable(v))
}

fn task(element: i64, id: &str, edit: impl FnOnce(&mut UserTaskRecord)) -> RecordValue {
    let mut t = UserTaskRecord {
        element_id: id.into(),
        element_instance_key: element,
        bpmn_process_id: "claims".into(),
        process_definition_version: 1,
        process_definition_key: 10,
        process_instance_key: PI,
        tenant_id: "<default>".into(),
        ..UserTaskRecord::command()
    };
    edit(&mut t);
    RecordValue::UserTask(Box::new(t))
}

/// Instance 100: sub-process 101 holds task 201 ("review", element 102: created, assigned to
/// mary, completed); task 202 ("approve", element 103, no name) is created and canceled; task
/// 203 ("approve", element 104) stays open. Variables: `a` on the instance and on the
/// sub-process, `b` on the instance, `c` on element 102.
fn history(name: &str) -> (std::path::PathBuf, History) {
    let (dir, h) = crate::tests::open(&format!("user-tasks-{name}"));
    let process = ProcessRecord {
        bpmn_process_id: "claims".into(),
        version: 1,
        process_definition_key: 10,
        resource_name: "claims.bpmn".into(),
        checksum: vec![],
        resource: XML.as_bytes().to_vec(),
        tenant_id: "<default>".into(),
    };
    let review = |e: &mut UserTaskRecord| {
        e.candidate_groups = vec!["sales".into(), "legal".into()];
        e.due_date = "2030-01-02T10:00Z".into();
        e.priority = 70;
        e.custom_headers = [("k".to_string(), "v".to_string())].into();
    };
    let events: Vec<(i64, Intent, RecordValue)> = vec![
        (10, Intent::Created, RecordValue::Process(process)),
        {
            let (k, v) = element(PI, "claims", BpmnElementType::Process, -1);
            (k, Intent::ElementActivating, v)
        },
        {
            let (k, v) = element(SUB, "sub", BpmnElementType::SubProcess, PI);
            (k, Intent::ElementActivating, v)
        },
        {
            let (k, v) = element(102, "review", BpmnElementType::UserTask, SUB);
            (k, Intent::ElementActivating, v)
        },
        {
            let (k, v) = element(103, "approve", BpmnElementType::UserTask, PI);
            (k, Intent::ElementActivating, v)
        },
        {
            let (k, v) = element(104, "approve", BpmnElementType::UserTask, PI);
            (k, Intent::ElementActivating, v)
        },
        {
            let (k, v) = variable(301, "a", "\"outer\"", PI);
            (k, Intent::Created, v)
        },
        {
            let (k, v) = variable(302, "b", "2", PI);
            (k, Intent::Created, v)
        },
        {
            let (k, v) = variable(303, "a", "\"inner\"", SUB);
            (k, Intent::Created, v)
        },
        {
            let (k, v) = variable(304, "c", "true", 102);
            (k, Intent::Created, v)
        },
        (201, Intent::Creating, task(102, "review", review)),
        (201, Intent::Created, task(102, "review", review)),
        (
            201,
            Intent::Assigned,
            task(102, "review", |e| {
                review(e);
                e.assignee = "mary".into();
            }),
        ),
        (202, Intent::Creating, task(103, "approve", |_| {})),
        (202, Intent::Created, task(103, "approve", |_| {})),
        (
            201,
            Intent::Completed,
            task(102, "review", |e| {
                review(e);
                e.assignee = "mary".into();
            }),
        ),
        (202, Intent::Canceled, task(103, "approve", |_| {})),
        (
            203,
            Intent::Creating,
            task(104, "approve", |e| {
                e.candidate_users = vec!["john".into()];
                e.priority = 10;
            }),
        ),
        (
            203,
            Intent::Created,
            task(104, "approve", |e| {
                e.candidate_users = vec!["john".into()];
                e.priority = 10;
            }),
        ),
    ];
    let records: Vec<Record> = events
        .into_iter()
        .enumerate()
        .map(|(i, (k, intent, v))| record(i as u64 + 1, k, intent, v))
        .collect();
    h.export(1, &records, 1).unwrap();
    (dir, h)
}

fn search(h: &History, r: &Resource, q: Value) -> Value {
    h.search(r, &q, Conditions::default()).unwrap()
}

fn keys(v: &Value, field: &str) -> Vec<String> {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[field].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn user_tasks_of_every_state_are_found_with_the_specs_fields() {
    let (_dir, h) = history("found");
    let all = search(&h, &USER_TASKS, json!({}));
    assert_eq!(all["page"]["totalItems"], 3);
    let review = h.get(&USER_TASKS, 201).unwrap().unwrap();
    assert_eq!(review["name"], "Review", "the element's name");
    assert_eq!(review["elementId"], "review");
    assert_eq!(review["state"], "COMPLETED");
    assert_eq!(review["assignee"], "mary");
    assert_eq!(review["candidateGroups"], json!(["sales", "legal"]));
    assert_eq!(review["candidateUsers"], json!([]));
    assert_eq!(review["dueDate"], "2030-01-02T10:00Z");
    assert_eq!(review["priority"], 70);
    assert_eq!(review["customHeaders"], json!({"k": "v"}));
    assert_eq!(review["processName"], "Claims");
    assert_eq!(review["processDefinitionId"], "claims");
    assert_eq!(review["processDefinitionKey"], "10");
    assert_eq!(review["processInstanceKey"], "100");
    assert_eq!(review["elementInstanceKey"], "102");
    assert_eq!(review["creationDate"], "2025-01-01T00:00:11.000Z");
    assert_eq!(review["completionDate"], "2025-01-01T00:00:16.000Z");
    assert!(review.get("formKey").is_none(), "no form: {review}");
    assert!(review.get("followUpDate").is_none());
    let approve = h.get(&USER_TASKS, 202).unwrap().unwrap();
    assert_eq!(approve["state"], "CANCELED");
    assert!(
        approve.get("name").is_none(),
        "an unnamed element: {approve}"
    );
    assert!(approve.get("assignee").is_none());

    let by = |filter: Value| {
        keys(
            &search(&h, &USER_TASKS, json!({"filter": filter})),
            "userTaskKey",
        )
    };
    assert_eq!(by(json!({"state": "COMPLETED"})), ["201"]);
    assert_eq!(
        by(json!({"state": {"$in": ["CANCELED", "CREATED"]}})),
        ["202", "203"]
    );
    assert_eq!(by(json!({"name": "Review"})), ["201"]);
    assert_eq!(by(json!({"candidateGroup": "legal"})), ["201"]);
    assert_eq!(by(json!({"candidateUser": {"$like": "jo*"}})), ["203"]);
    assert_eq!(by(json!({"assignee": {"$exists": false}})), ["202", "203"]);
    assert_eq!(by(json!({"priority": {"$gte": 50}})), ["201", "202"]);
    assert_eq!(
        by(json!({"dueDate": {"$gt": "2030-01-02T09:59:00Z", "$lt": "2030-01-03T00:00:00Z"}})),
        ["201"]
    );
    assert_eq!(
        by(json!({"completionDate": {"$exists": true}})),
        ["201", "202"]
    );
    assert_eq!(
        by(json!({"localVariables": [{"name": "c", "value": "true"}]})),
        ["201"]
    );
    assert_eq!(
        by(json!({"processInstanceVariables": [{"name": "b", "value": "2"}]})),
        ["201", "202", "203"]
    );

    let sorted = search(
        &h,
        &USER_TASKS,
        json!({"sort": [{"field": "priority", "order": "DESC"}]}),
    );
    assert_eq!(keys(&sorted, "userTaskKey"), ["201", "202", "203"]);
    let sorted = search(&h, &USER_TASKS, json!({"sort": [{"field": "priority"}]}));
    assert_eq!(keys(&sorted, "userTaskKey"), ["203", "202", "201"]);
    let bad = h.search(
        &USER_TASKS,
        &json!({"sort": [{"field": "elementId"}]}),
        Conditions::default(),
    );
    assert!(matches!(bad, Err(crate::SearchError::Bad(m)) if m.contains("'elementId'")));
    let bad = h.search(
        &USER_TASKS,
        &json!({"filter": {"dueDate": "soon"}}),
        Conditions::default(),
    );
    assert!(matches!(bad, Err(crate::SearchError::Bad(m)) if m.contains("'dueDate'")));
}

#[test]
fn effective_variables_are_the_nearest_of_each_name() {
    let (_dir, h) = history("effective");
    let at = |scope: i64, filter: Value| {
        let mut f = filter;
        f[EFFECTIVE_AT] = json!(scope.to_string());
        let page = search(
            &h,
            &EFFECTIVE_VARIABLES,
            json!({"filter": f, "sort": [{"field": "name"}]}),
        );
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap().to_string(),
                    v["value"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let pair = |n: &str, v: &str| (n.to_string(), v.to_string());
    // the task's scope (102) sees c, the sub-process's a, the instance's b
    assert_eq!(
        at(102, json!({})),
        [pair("a", "\"inner\""), pair("b", "2"), pair("c", "true")]
    );
    // a task directly under the instance sees the instance's a
    assert_eq!(at(104, json!({})), [pair("a", "\"outer\""), pair("b", "2")]);
    assert_eq!(at(102, json!({"name": "a"})), [pair("a", "\"inner\"")]);
}
