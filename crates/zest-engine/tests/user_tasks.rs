//! Camunda user tasks (`zeebe:userTask`): what users see besides the record order (which
//! tests/anchor.rs checks against Zeebe for creation, assignment, claims, updates, completion,
//! cancellation and boundary timers): the benchmark workloads run to completion, property
//! failures raise incidents that resolve, bad commands are rejected with Zeebe's reasons, and
//! no task outlives its element.

mod support;

use serde_json::json;
use support::*;
use zest_protocol::{ErrorType, Intent, RecordValue, RejectionType, UserTaskRecord, ValueType};

const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">
<bpmn:process id="p" isExecutable="true">
<bpmn:startEvent id="start" />
<bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="ut" />
<bpmn:sequenceFlow id="f2" sourceRef="ut" targetRef="end" />
<bpmn:endEvent id="end" />
"#;

/// A process `p`: start, the user task `ut` with extension elements `ext` (and `inner` inside
/// the task element), end.
fn model(ext: &str, inner: &str) -> String {
    format!(
        r#"{HEAD}<bpmn:userTask id="ut"><bpmn:extensionElements><zeebe:userTask />{ext}</bpmn:extensionElements>{inner}</bpmn:userTask>
</bpmn:process></bpmn:definitions>"#
    )
}

/// The USER_TASK records of a batch, as (intent, assignee).
fn task_events(b: &Batch) -> Vec<(Intent, String)> {
    b.records
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::UserTask(u) => Some((r.intent, u.assignee.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn the_user_task_workloads_run_to_completion() {
    for (name, process, tasks) in [
        ("user_task.bpmn", "benchmark", &["user_task"][..]),
        (
            "two_user_tasks.bpmn",
            "batch-modification-benchmark",
            &["userTaskA", "userTaskB"][..],
        ),
        (
            "variants/one_task.camunda-211e724.bpmn",
            "benchmark",
            &["user_task"][..],
        ),
        (
            "variants/one_task.camunda-f18daec.bpmn",
            "benchmark",
            &["user_task"][..],
        ),
    ] {
        let Some(xml) = workload(name) else {
            return;
        };
        let mut h = Harness::new();
        h.deploy_ok(&xml);
        let pik = h.create_ok(process, r#"{"n":1}"#);
        // the f18daec variant has a service task first
        for (key, _) in h.activate("benchmark-task", 10) {
            h.complete(key, "").accepted();
        }
        for (i, id) in tasks.iter().enumerate() {
            let key = h.user_task_key(id);
            let vars = json!({ format!("step{i}"): true }).to_string();
            h.complete_user_task(key, &vars).accepted();
            h.settle();
        }
        assert!(
            h.element_instance(pik).is_none(),
            "{name}: the instance completed"
        );
        assert_eq!(
            h.log
                .iter()
                .filter(|r| r.value_type == ValueType::UserTask && r.intent == Intent::Completed)
                .count(),
            tasks.len(),
            "{name}"
        );
        h.assert_no_runtime_state();
    }
}

#[test]
fn a_failing_assignee_expression_raises_an_incident_that_resolves() {
    let mut h = Harness::new();
    h.deploy_ok(&model(
        r#"<zeebe:assignmentDefinition assignee="=owner" />"#,
        "",
    ));
    let pik = h.create_ok("p", "");
    let (incident_key, incident) = h.incidents().pop().expect("an incident");
    assert_eq!(incident.record.error_type, ErrorType::ExtractValueError);
    assert!(
        incident.record.error_message.starts_with(
            "Expected result of the expression 'owner' to be 'STRING', but was 'NULL'."
        ),
        "{}",
        incident.record.error_message
    );
    assert_eq!(h.count(zest_engine::state::Ks::UserTasks), 0, "no task yet");
    h.set_variables(pik, r#"{"owner":"demo"}"#, false)
        .accepted();
    let b = h.resolve(incident_key);
    assert_eq!(
        task_events(&b),
        vec![
            (Intent::Creating, "demo".to_string()),
            (Intent::Created, String::new()),
            (Intent::Assigning, "demo".to_string()),
            (Intent::Assigned, "demo".to_string()),
        ]
    );
    let key = h.user_task_key("ut");
    h.complete_user_task(key, "").accepted();
    assert!(h.element_instance(pik).is_none());
    h.assert_no_runtime_state();
}

#[test]
fn a_priority_out_of_range_raises_an_incident() {
    let mut h = Harness::new();
    h.deploy_ok(&model(r#"<zeebe:priorityDefinition priority="=p" />"#, ""));
    h.create_ok("p", r#"{"p":101}"#);
    let (_, incident) = h.incidents().pop().expect("an incident");
    assert_eq!(incident.record.error_type, ErrorType::ExtractValueError);
    assert_eq!(
        incident.record.error_message,
        "Expected result of the expression 'p' to be a number between 0 and 100, but was '101'."
    );
}

#[test]
fn commands_on_a_task_are_checked_like_zeebe_checks_them() {
    let mut h = Harness::new();
    h.deploy_ok(&model("", ""));
    h.create_ok("p", "");
    let key = h.user_task_key("ut");
    let unknown = key + 1000;
    let r = h.complete_user_task(unknown, "");
    assert_eq!(
        r.rejection(RejectionType::NotFound),
        format!(
            "Expected to complete user task with key '{unknown}', but no such user task was found"
        )
    );
    let r = h.assign_user_task(key, Intent::Claim, " ");
    assert_eq!(
        r.rejection(RejectionType::InvalidState),
        format!("Expected to claim user task with key '{key}', but provided assignee is empty")
    );
    let r = h.complete_user_task(key, "[1]");
    r.rejection(RejectionType::InvalidArgument);
    let r = h.user_task(
        key,
        Intent::Update,
        UserTaskRecord {
            due_date: "next week".into(),
            changed_attributes: vec!["dueDate".into()],
            ..UserTaskRecord::command()
        },
    );
    assert!(r
        .rejection(RejectionType::InvalidArgument)
        .contains("Expected dueDate to be an ISO 8601 date-time"));
    // claiming a task one already has is fine and changes nothing
    h.assign_user_task(key, Intent::Claim, "ann").accepted();
    let b = h.assign_user_task(key, Intent::Claim, "ann");
    let assigned = b.find(ValueType::UserTask, Intent::Assigned);
    let RecordValue::UserTask(u) = &assigned[0].value else {
        unreachable!()
    };
    assert!(u.changed_attributes.is_empty());
    // an update clears a date with an empty value
    h.user_task(
        key,
        Intent::Update,
        UserTaskRecord {
            follow_up_date: "2031-01-01T00:00:00Z".into(),
            changed_attributes: vec!["followUpDate".into()],
            ..UserTaskRecord::command()
        },
    )
    .accepted();
    let b = h.user_task(
        key,
        Intent::Update,
        UserTaskRecord {
            changed_attributes: vec!["followUpDate".into()],
            ..UserTaskRecord::command()
        },
    );
    let updated = b.find(ValueType::UserTask, Intent::Updated);
    let RecordValue::UserTask(u) = &updated[0].value else {
        unreachable!()
    };
    assert_eq!(u.follow_up_date, "");
    assert_eq!(u.assignee, "ann", "an update keeps the assignee");
    h.settle();
}

#[test]
fn completion_variables_go_through_output_mappings() {
    let mut h = Harness::new();
    h.deploy_ok(&model(
        r#"<zeebe:ioMapping><zeebe:output source="=decision = &quot;yes&quot;" target="approved" /></zeebe:ioMapping>"#,
        "",
    ));
    let pik = h.create_ok("p", "");
    let key = h.user_task_key("ut");
    h.complete_user_task(key, r#"{"decision":"yes"}"#)
        .accepted();
    let out = h.log.iter().find_map(|r| match &r.value {
        RecordValue::Variable(v) if v.name == "approved" && v.scope_key == pik => {
            Some(v.value.clone())
        }
        _ => None,
    });
    assert_eq!(out.as_deref(), Some("true"));
    assert!(
        !h.log.iter().any(|r| matches!(&r.value, RecordValue::Variable(v) if v.name == "decision" && v.scope_key == pik)),
        "with output mappings only the mapped result reaches the process"
    );
}

#[test]
fn a_multi_instance_user_task_creates_one_task_per_item() {
    let mut h = Harness::new();
    h.deploy_ok(&model(
        r#"<zeebe:assignmentDefinition assignee="=reviewer" />"#,
        r#"<bpmn:multiInstanceLoopCharacteristics><bpmn:extensionElements><zeebe:loopCharacteristics inputCollection="=reviewers" inputElement="reviewer" outputCollection="votes" outputElement="=vote" /></bpmn:extensionElements></bpmn:multiInstanceLoopCharacteristics>"#,
    ));
    let pik = h.create_ok("p", r#"{"reviewers":["ann","bob"]}"#);
    let tasks: Vec<(i64, String)> = h
        .log
        .iter()
        .filter(|r| r.intent == Intent::Assigned)
        .filter_map(|r| match &r.value {
            RecordValue::UserTask(u) => Some((r.key, u.assignee.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        tasks.iter().map(|(_, a)| a.as_str()).collect::<Vec<_>>(),
        vec!["ann", "bob"]
    );
    h.complete_user_task(tasks[1].0, r#"{"vote":"no"}"#)
        .accepted();
    h.complete_user_task(tasks[0].0, r#"{"vote":"yes"}"#)
        .accepted();
    let votes = h.log.iter().rev().find_map(|r| match &r.value {
        RecordValue::Variable(v) if v.name == "votes" && v.scope_key == pik => {
            Some(serde_json::from_str::<serde_json::Value>(&v.value).unwrap())
        }
        _ => None,
    });
    assert_eq!(votes, Some(json!(["yes", "no"])));
    assert!(h.element_instance(pik).is_none());
    h.assert_no_runtime_state();
}

#[test]
fn canceling_the_instance_cancels_its_tasks() {
    let mut h = Harness::new();
    h.deploy_ok(&model("", ""));
    let pik = h.create_ok("p", "");
    let key = h.user_task_key("ut");
    let b = h.cancel(pik);
    assert_eq!(
        task_events(&b),
        vec![
            (Intent::Canceling, String::new()),
            (Intent::Canceled, String::new())
        ]
    );
    let r = h.complete_user_task(key, "");
    r.rejection(RejectionType::NotFound);
    h.assert_no_runtime_state();
}

/// Deploys a form and returns its metadata from the deployment's answer.
fn deploy_form(h: &mut Harness, name: &str, json: &str) -> zest_protocol::FormMetadata {
    let b = h.deploy(name, json);
    let RecordValue::DeploymentResponse(d) = &b.accepted().value else {
        panic!("deployment response expected")
    };
    assert!(d.processes_metadata.is_empty());
    d.forms_metadata[0].clone()
}

#[test]
fn forms_are_versioned_and_linked_by_id() {
    let mut h = Harness::new();
    let v1 = deploy_form(&mut h, "review.form", r#"{"id":"review","components":[]}"#);
    assert_eq!(
        (v1.form_id.as_str(), v1.version, v1.duplicate),
        ("review", 1, false)
    );
    let again = deploy_form(&mut h, "review.form", r#"{"id":"review","components":[]}"#);
    assert_eq!(
        (again.form_key, again.version, again.duplicate),
        (v1.form_key, 1, true)
    );
    let v2 = deploy_form(
        &mut h,
        "review.form",
        r#"{"id":"review","components":[{"key":"ok","type":"checkbox"}]}"#,
    );
    assert_eq!((v2.version, v2.duplicate), (2, false));
    assert_ne!(v2.form_key, v1.form_key);
    // a Camunda user task links the latest version
    h.deploy_ok(&model(r#"<zeebe:formDefinition formId="review" />"#, ""));
    h.create_ok("p", "");
    let created = h
        .log
        .iter()
        .rev()
        .find_map(|r| match &r.value {
            RecordValue::UserTask(u) if r.intent == Intent::Created => Some(u.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(created.form_key, v2.form_key);
    // a job-worker user task gets the key as its form key header
    let job_model = format!(
        r#"{HEAD}<bpmn:userTask id="ut"><bpmn:extensionElements><zeebe:formDefinition formId="review" /></bpmn:extensionElements></bpmn:userTask>
</bpmn:process></bpmn:definitions>"#
    )
    .replace(r#"id="p""#, r#"id="jobs""#);
    h.deploy_ok(&job_model);
    h.create_ok("jobs", "");
    let (_, job) = h.activate_one("io.camunda.zeebe:userTask");
    assert_eq!(
        job.custom_headers.get("io.camunda.zeebe:formKey"),
        Some(&v2.form_key.to_string())
    );
}

#[test]
fn a_form_without_an_id_or_not_json_is_rejected() {
    let mut h = Harness::new();
    let r = h.deploy("a.form", r#"{"components":[]}"#);
    assert!(r
        .rejection(RejectionType::InvalidArgument)
        .contains("Expected the form id to be present, but none given"));
    let r = h.deploy("b.form", "not json");
    assert!(r
        .rejection(RejectionType::InvalidArgument)
        .contains("Failed to parse form JSON. 'b.form'"));
    let r = h.deploy(
        "p.bpmn",
        &model(
            r#"<zeebe:formDefinition formId="f" bindingType="deployment" />"#,
            "",
        ),
    );
    let reason = r.rejection(RejectionType::InvalidArgument);
    assert!(
        reason.contains("the form binding type 'deployment' is not supported"),
        "{reason}"
    );
}

#[test]
fn embedded_forms_reach_their_user_task_and_the_model() {
    // Camunda 8.0 to 8.2 kept forms in the process (zeebe:userTaskForm) and linked them with
    // the form key camunda-forms:bpmn:<id>
    let xml = format!(
        r#"{HEAD}<bpmn:extensionElements><zeebe:userTaskForm id="form_1">{{"components":[{{"key":"ok","type":"checkbox"}}],"id":"embedded"}}</zeebe:userTaskForm></bpmn:extensionElements>
<bpmn:userTask id="ut"><bpmn:extensionElements><zeebe:formDefinition formKey="camunda-forms:bpmn:form_1" /></bpmn:extensionElements></bpmn:userTask>
</bpmn:process></bpmn:definitions>"#
    )
    .replace(
        r#"<bpmn:startEvent id="start" />"#,
        r#"<bpmn:startEvent id="start"><bpmn:extensionElements><zeebe:formDefinition formKey="camunda-forms:bpmn:form_1" /></bpmn:extensionElements></bpmn:startEvent>"#,
    );
    let process = zest_model::parse_bpmn("embedded.bpmn", xml.as_bytes())
        .unwrap()
        .remove(0);
    let form = process.embedded_form("camunda-forms:bpmn:form_1").unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&form.schema).unwrap()["id"],
        "embedded"
    );
    assert_eq!(
        process.start_form,
        Some(zest_model::StartForm::Key(
            "camunda-forms:bpmn:form_1".into()
        ))
    );
    let mut h = Harness::new();
    h.deploy_ok(&xml);
    h.create_ok("p", "");
    let (key, job) = h.activate_one("io.camunda.zeebe:userTask");
    assert_eq!(
        job.custom_headers
            .get("io.camunda.zeebe:formKey")
            .map(String::as_str),
        Some("camunda-forms:bpmn:form_1")
    );
    h.complete(key, r#"{"ok":true}"#).accepted();
    h.assert_replay_matches();
}

#[test]
fn a_start_event_links_its_form() {
    let xml = HEAD.replace(
        r#"<bpmn:startEvent id="start" />"#,
        r#"<bpmn:startEvent id="start"><bpmn:extensionElements><zeebe:formDefinition formId="request" /></bpmn:extensionElements></bpmn:startEvent>"#,
    ) + r#"<bpmn:userTask id="ut"><bpmn:extensionElements><zeebe:userTask /></bpmn:extensionElements></bpmn:userTask></bpmn:process></bpmn:definitions>"#;
    let process = zest_model::parse_bpmn("start.bpmn", xml.as_bytes())
        .unwrap()
        .remove(0);
    assert_eq!(
        process.start_form,
        Some(zest_model::StartForm::Linked("request".into()))
    );
    let both = xml.replace(
        r#"formId="request""#,
        r#"formId="request" formKey="camunda-forms:bpmn:x""#,
    );
    let mut h = Harness::new();
    let reason = h
        .deploy("both.bpmn", &both)
        .rejection(RejectionType::InvalidArgument);
    assert!(
        reason.contains("Element: start") && reason.contains("Exactly one of the attributes"),
        "{reason}"
    );
    let no_id = format!(
        r#"{HEAD}<bpmn:extensionElements><zeebe:userTaskForm>{{}}</zeebe:userTaskForm></bpmn:extensionElements><bpmn:userTask id="ut" /></bpmn:process></bpmn:definitions>"#
    );
    let reason = h
        .deploy("no_id.bpmn", &no_id)
        .rejection(RejectionType::InvalidArgument);
    assert!(reason.contains("'zeebe:userTaskForm'"), "{reason}");
    h.deploy_ok(&xml);
    h.create_ok("p", "");
}
