//! Camunda user tasks through the REST API v2 of a real `zest start`: a process with two
//! `zeebe:userTask`s is created over gRPC, its tasks are found with the user task search,
//! assigned, claimed, updated and completed over HTTP, and the instance completes with the
//! variables the completion handed in. Errors are problem details with the right status.

mod common;

use std::time::{Duration, Instant};

use common::{connect, create_with_result, http, start};
use serde_json::{json, Value};
use zest_gateway::proto;

/// The open user task of `element_id` in the instance, once the search shows it.
fn find_task(rest: &str, instance: i64, element_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, page) = http(
            rest,
            "POST",
            "/v2/user-tasks/search",
            Some(
                json!({"filter": {"processInstanceKey": instance.to_string(), "elementId": element_id}}),
            ),
        );
        assert_eq!(status, 200, "{page}");
        if let Some(task) = page["items"].as_array().and_then(|i| i.first()) {
            return task.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no user task {element_id} shows up"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

// One user task's life over REST, step by step: it reads best whole.
#[test]
fn user_tasks_are_assigned_updated_and_completed_over_rest() {
    let node = start("user-tasks-rest");
    let rest = node.rest.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = rt.block_on(connect(&node.gateway));
    let deployed = rt
        .block_on(c.deploy_resource(proto::DeployResourceRequest {
            resources: vec![
                proto::Resource {
                    name: "user_tasks.bpmn".into(),
                    content:
                        include_bytes!("../../../tests/compat/testdata/user_tasks.bpmn").to_vec(),
                },
                proto::Resource {
                    name: "review.form".into(),
                    content: include_bytes!("../../../tests/compat/testdata/review.form").to_vec(),
                },
            ],
            tenant_id: String::new(),
        }))
        .expect("the model and its form deploy")
        .into_inner();
    let form_key = deployed
        .deployments
        .iter()
        .find_map(|d| match &d.metadata {
            Some(proto::deployment::Metadata::Form(f)) => {
                assert_eq!((f.form_id.as_str(), f.version), ("review-form", 1));
                assert_eq!(f.resource_name, "review.form");
                Some(f.form_key)
            }
            _ => None,
        })
        .expect("the answer lists the form");
    // create with result: answers once the instance completes
    let result = rt.spawn(create_with_result(
        c.clone(),
        "user_tasks".into(),
        r#"{"owner":"demo"}"#.into(),
    ));
    // the instance key comes with the result; find the task by its element among all tasks
    let deadline = Instant::now() + Duration::from_secs(10);
    let review = loop {
        let (_, page) = http(
            &rest,
            "POST",
            "/v2/user-tasks/search",
            Some(json!({"filter": {"elementId": "review", "assignee": "demo"}})),
        );
        if let Some(t) = page["items"].as_array().and_then(|i| i.first()) {
            break t.clone();
        }
        assert!(Instant::now() < deadline, "the review task shows up");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(review["state"], "CREATED");
    assert_eq!(review["candidateGroups"], json!(["sales"]));
    assert_eq!(review["priority"], 70);
    assert_eq!(
        review["externalFormReference"],
        "https://forms.example.com/review"
    );
    let key = review["userTaskKey"].as_str().unwrap().to_string();
    let instance: i64 = review["processInstanceKey"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let (status, got) = http(&rest, "GET", &format!("/v2/user-tasks/{key}"), None);
    assert_eq!((status, &got["elementId"]), (200, &json!("review")));

    // claiming a task someone else has is a conflict
    let (status, problem) = http(
        &rest,
        "POST",
        &format!("/v2/user-tasks/{key}/assignment"),
        Some(json!({"assignee": "mary", "allowOverride": false})),
    );
    assert_eq!(status, 409, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("but it has already been assigned"),
        "{problem}"
    );
    // assigning overrides; unassigning and claiming work too
    for (method, path, body) in [
        ("POST", "assignment", Some(json!({"assignee": "john"}))),
        ("DELETE", "assignee", None),
        (
            "POST",
            "assignment",
            Some(json!({"assignee": "mary", "allowOverride": false})),
        ),
        (
            "PATCH",
            "",
            Some(
                json!({"changeset": {"priority": 10, "candidateUsers": ["mary"], "dueDate": "2031-01-02T03:04:05Z"}}),
            ),
        ),
    ] {
        let path = if path.is_empty() {
            format!("/v2/user-tasks/{key}")
        } else {
            format!("/v2/user-tasks/{key}/{path}")
        };
        let (status, body) = http(&rest, method, &path, body);
        assert_eq!(status, 204, "{method} {path}: {body}");
    }
    let task = find_task(&rest, instance, "review");
    assert_eq!(task["assignee"], "mary");
    assert_eq!(task["priority"], 10);
    assert_eq!(task["candidateUsers"], json!(["mary"]));
    assert_eq!(task["dueDate"], "2031-01-02T03:04:05Z");

    // bad input: a priority out of range, a key that is no number
    let (status, _) = http(
        &rest,
        "PATCH",
        &format!("/v2/user-tasks/{key}"),
        Some(json!({"changeset": {"priority": 101}})),
    );
    assert_eq!(status, 400);
    let (status, _) = http(&rest, "POST", "/v2/user-tasks/abc/completion", None);
    assert_eq!(status, 400);

    let (status, body) = http(
        &rest,
        "POST",
        &format!("/v2/user-tasks/{key}/completion"),
        Some(json!({"variables": {"approved": true}})),
    );
    assert_eq!(status, 204, "{body}");
    // completed: a second completion finds no task
    let (status, problem) = http(
        &rest,
        "POST",
        &format!("/v2/user-tasks/{key}/completion"),
        None,
    );
    assert_eq!(status, 404, "{problem}");
    assert_eq!(
        problem["detail"],
        format!("Command 'COMPLETE' rejected with code 'NOT_FOUND': Expected to complete user task with key '{key}', but no such user task was found")
    );

    let approve = find_task(&rest, instance, "approve");
    assert_eq!(approve["assignee"], Value::Null);
    assert_eq!(approve["formKey"], form_key.to_string(), "the linked form");
    let (status, _) = http(
        &rest,
        "POST",
        &format!(
            "/v2/user-tasks/{}/completion",
            approve["userTaskKey"].as_str().unwrap()
        ),
        Some(json!({"variables": {"done": "yes"}, "action": "approve"})),
    );
    assert_eq!(status, 204);
    let result = rt
        .block_on(result)
        .unwrap()
        .expect("the instance completes");
    let vars: Value = serde_json::from_str(&result.variables).unwrap();
    assert_eq!(result.process_instance_key, instance);
    assert_eq!(vars["approved"], true);
    assert_eq!(vars["done"], "yes");
    assert_eq!(vars["owner"], "demo");
}

/// `common::http` parses JSON bodies only; the XML comes as text.
fn http_text(addr: &str, path: &str) -> (u16, String) {
    let raw = common::http_get(addr, path);
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, body.to_string())
}

#[test]
fn forms_and_process_xml_are_served_as_camunda_serves_them() {
    let node = start("forms-rest");
    let rest = node.rest.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = rt.block_on(connect(&node.gateway));
    let embedded = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="embedded" isExecutable="true">
    <bpmn:extensionElements><zeebe:userTaskForm id="start_form">{"id":"start","components":[]}</zeebe:userTaskForm></bpmn:extensionElements>
    <bpmn:startEvent id="s"><bpmn:extensionElements><zeebe:formDefinition formKey="camunda-forms:bpmn:start_form" /></bpmn:extensionElements></bpmn:startEvent>
    <bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />
    <bpmn:endEvent id="e" />
  </bpmn:process>
</bpmn:definitions>"#;
    let resource = |name: &str, content: &[u8]| proto::Resource {
        name: name.into(),
        content: content.to_vec(),
    };
    let deployed = rt
        .block_on(c.deploy_resource(proto::DeployResourceRequest {
            resources: vec![
                resource(
                    "review.bpmn",
                    include_bytes!("../../../examples/review.bpmn"),
                ),
                resource(
                    "review.form",
                    include_bytes!("../../../examples/review.form"),
                ),
                resource("embedded.bpmn", embedded.as_bytes()),
            ],
            tenant_id: String::new(),
        }))
        .unwrap()
        .into_inner();
    let keys: Vec<i64> = deployed
        .deployments
        .iter()
        .filter_map(|d| match &d.metadata {
            Some(proto::deployment::Metadata::Process(p)) => Some(p.process_definition_key),
            _ => None,
        })
        .collect();
    let (review, with_start_form) = (keys[0], keys[1]);

    // the process's XML, as deployed
    let (status, xml) = http_text(&rest, &format!("/v2/process-definitions/{review}/xml"));
    assert_eq!(status, 200);
    assert_eq!(xml, include_str!("../../../examples/review.bpmn"));
    let (status, problem) = http(&rest, "GET", "/v2/process-definitions/1/xml", None);
    assert_eq!(status, 404, "{problem}");

    // a start form embedded in the model; none: 204
    let (status, form) = http(
        &rest,
        "GET",
        &format!("/v2/process-definitions/{with_start_form}/form"),
        None,
    );
    assert_eq!(status, 200, "{form}");
    assert_eq!(form["formKey"], "camunda-forms:bpmn:start_form");
    let schema: Value = serde_json::from_str(form["schema"].as_str().unwrap()).unwrap();
    assert_eq!(schema["id"], "start");
    let (status, _) = http(
        &rest,
        "GET",
        &format!("/v2/process-definitions/{review}/form"),
        None,
    );
    assert_eq!(status, 204);

    // the linked form of a Camunda user task
    let created = rt
        .block_on(
            c.create_process_instance(proto::CreateProcessInstanceRequest {
                bpmn_process_id: "review".into(),
                version: -1,
                ..Default::default()
            }),
        )
        .unwrap()
        .into_inner();
    let task = find_task(&rest, created.process_instance_key, "review_task");
    let key = task["userTaskKey"].as_str().unwrap();
    let (status, form) = http(&rest, "GET", &format!("/v2/user-tasks/{key}/form"), None);
    assert_eq!(status, 200, "{form}");
    assert_eq!(form["formId"], "review");
    assert_eq!(form["version"], 1);
    let schema: Value = serde_json::from_str(form["schema"].as_str().unwrap()).unwrap();
    assert_eq!(schema["components"][0]["key"], "comment");
}

/// Activates one job of `job_type` (waiting up to 10 s).
fn listener_job(
    rt: &tokio::runtime::Runtime,
    c: &mut common::Client,
    job_type: &str,
) -> proto::ActivatedJob {
    rt.block_on(common::activate_one(c, job_type))
        .unwrap_or_else(|| panic!("no {job_type} job"))
}

fn complete_listener(
    rt: &tokio::runtime::Runtime,
    c: &mut common::Client,
    job: &proto::ActivatedJob,
    result: proto::JobResult,
) {
    rt.block_on(c.complete_job(proto::CompleteJobRequest {
        job_key: job.key,
        variables: String::new(),
        result: Some(result),
    }))
    .expect("the listener's job completes");
}

#[test]
fn task_listeners_correct_and_deny_what_people_do_over_rest() {
    let node = start("task-listeners-rest");
    let rest = node.rest.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = rt.block_on(connect(&node.gateway));
    rt.block_on(c.deploy_resource(proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "task_listeners.bpmn".into(),
            content: include_bytes!("../../../tests/anchor/models/task_listeners.bpmn").to_vec(),
        }],
        tenant_id: String::new(),
    }))
    .unwrap();
    let created = rt
        .block_on(
            c.create_process_instance(proto::CreateProcessInstanceRequest {
                bpmn_process_id: "task_listeners".into(),
                version: -1,
                ..Default::default()
            }),
        )
        .unwrap()
        .into_inner();
    // the creating listeners: the first sets the assignee and the priority
    let first = listener_job(&rt, &mut c, "tl-creating");
    assert_eq!(
        first.kind,
        proto::activated_job::JobKind::TaskListener as i32
    );
    complete_listener(
        &rt,
        &mut c,
        &first,
        proto::JobResult {
            corrections: Some(proto::JobResultCorrections {
                assignee: Some("bob".into()),
                priority: Some(80),
                ..Default::default()
            }),
            ..Default::default()
        },
    );
    let second = listener_job(&rt, &mut c, "tl-creating-2");
    complete_listener(&rt, &mut c, &second, proto::JobResult::default());
    let task = find_task(&rest, created.process_instance_key, "review");
    assert_eq!(task["assignee"], "bob");
    assert_eq!(task["priority"], 80);
    let key = task["userTaskKey"].as_str().unwrap().to_string();

    // an assignment over REST is answered once its listener ran
    let assign = {
        let (rest, key) = (rest.clone(), key.clone());
        std::thread::spawn(move || {
            http(
                &rest,
                "POST",
                &format!("/v2/user-tasks/{key}/assignment"),
                Some(json!({"assignee": "carl"})),
            )
        })
    };
    let assigning = listener_job(&rt, &mut c, "tl-assigning");
    // the listener's job carries the task as the assignment would leave it
    let props = assigning
        .user_task
        .clone()
        .expect("a task listener's job has its user task");
    assert_eq!(props.assignee.as_deref(), Some("carl"));
    assert_eq!(props.action.as_deref(), Some("assign"));
    assert_eq!(props.changed_attributes, ["assignee"]);
    assert_eq!(props.user_task_key, Some(key.parse().unwrap()));
    assert_eq!(props.priority, Some(80));
    complete_listener(&rt, &mut c, &assigning, proto::JobResult::default());
    let (status, body) = assign.join().unwrap();
    assert_eq!(status, 204, "{body}");

    // a completing listener that denies: the completion is refused with its reason
    let complete = {
        let (rest, key) = (rest.clone(), key.clone());
        std::thread::spawn(move || {
            http(
                &rest,
                "POST",
                &format!("/v2/user-tasks/{key}/completion"),
                Some(json!({"variables": {"ok": false}})),
            )
        })
    };
    let completing = listener_job(&rt, &mut c, "tl-completing");
    complete_listener(
        &rt,
        &mut c,
        &completing,
        proto::JobResult {
            denied: Some(true),
            denied_reason: Some("not yet".into()),
            ..Default::default()
        },
    );
    let (status, problem) = complete.join().unwrap();
    assert_eq!(status, 409, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("not yet"),
        "{problem}"
    );
    // the task is open again, as it was
    let task = find_task(&rest, created.process_instance_key, "review");
    assert_eq!(task["assignee"], "carl");
    assert_eq!(task["state"], "CREATED");
}
