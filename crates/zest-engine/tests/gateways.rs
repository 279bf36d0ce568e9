//! Inclusive and event-based gateways, link and terminate end events, job-worker user tasks:
//! what users see besides the record order (which tests/anchor.rs checks against Zeebe).

mod support;

use support::*;
use zest_protocol::{ErrorType, Intent, ValueType};

#[test]
fn a_job_worker_user_task_tells_its_worker_the_assignment_form_and_due_date() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("user_task_job.bpmn"));
    let pik = h.create_ok("user_task_job", "");
    let (job, record) = h.activate_one("io.camunda.zeebe:userTask");
    assert_eq!(record.retries, 1, "Zeebe gives user task jobs one retry");
    let headers = &record.custom_headers;
    let header = |k: &str| headers.get(&format!("io.camunda.zeebe:{k}")).cloned();
    assert_eq!(header("assignee").as_deref(), Some("demo"));
    assert_eq!(
        header("candidateGroups").as_deref(),
        Some(r#"["sales","ops"]"#)
    );
    assert_eq!(header("candidateUsers").as_deref(), Some(r#"["a","b"]"#));
    assert_eq!(
        header("formKey").as_deref(),
        Some("camunda-forms:bpmn:form1")
    );
    assert_eq!(header("dueDate").as_deref(), Some("2030-01-01T10:00Z"));
    h.complete(job, r#"{"approved":true}"#).accepted();
    assert!(h.element_instance(pik).is_none(), "the instance completed");
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn a_user_task_assignee_expression_that_fails_raises_an_incident() {
    let mut h = Harness::new();
    let xml = anchor_model("user_task_job.bpmn")
        .replace(r#"assignee="demo""#, r#"assignee="=owner.name""#);
    h.deploy_ok(&xml);
    h.create_ok("user_task_job", r#"{"owner":{"name":["x"]}}"#);
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    assert_eq!(
        incidents[0].1.record.error_type,
        ErrorType::ExtractValueError
    );
    assert!(
        incidents[0]
            .1
            .record
            .error_message
            .contains("expression 'owner.name'"),
        "{}",
        incidents[0].1.record.error_message
    );
    h.settle();
}

#[test]
fn an_inclusive_gateway_joins_only_the_branches_it_took() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("inclusive.bpmn"));
    // x = 5: a and b are taken, c (default) is not
    let pik = h.create_ok("inclusive", r#"{"x":5}"#);
    assert!(h.activate("c", 10).is_empty());
    let (a, _) = h.activate_one("a");
    let b = h.complete(a, r#"{"fromA":1}"#);
    assert_eq!(
        b.count(ValueType::ProcessInstance, Intent::ElementActivated),
        0,
        "the join waits for b"
    );
    let (bj, _) = h.activate_one("b");
    h.complete(bj, "").accepted();
    assert!(h.element_instance(pik).is_none(), "the instance completed");
    // x = 0: only the default flow
    let pik = h.create_ok("inclusive", r#"{"x":0}"#);
    assert!(h.activate("a", 10).is_empty() && h.activate("b", 10).is_empty());
    let (c, _) = h.activate_one("c");
    h.complete(c, "").accepted();
    assert!(h.element_instance(pik).is_none());
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn an_inclusive_gateway_without_a_true_condition_or_default_raises_an_incident() {
    let mut h = Harness::new();
    let xml = anchor_model("inclusive.bpmn").replace(r#" default="fc""#, "").replace(
        r#"<bpmn:sequenceFlow id="fc" sourceRef="fork" targetRef="c" />"#,
        r#"<bpmn:sequenceFlow id="fc" sourceRef="fork" targetRef="c"><bpmn:conditionExpression>=x &lt; 0</bpmn:conditionExpression></bpmn:sequenceFlow>"#,
    );
    h.deploy_ok(&xml);
    h.create_ok("inclusive", r#"{"x":0}"#);
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    assert_eq!(incidents[0].1.record.error_type, ErrorType::ConditionError);
    assert_eq!(incidents[0].1.record.element_id, "fork");
    // fix the variable and resolve: the gateway retries its conditions
    let (incident, stored) = incidents[0].clone();
    h.set_variables(stored.record.process_instance_key, r#"{"x":3}"#, false)
        .accepted();
    h.resolve(incident).accepted();
    assert_eq!(h.activate("a", 10).len(), 1);
    assert_eq!(h.activate("b", 10).len(), 1);
    h.settle();
}

#[test]
fn an_event_based_gateway_takes_the_first_event_and_its_variables() {
    let mut h = Harness::new();
    h.deploy_ok(&anchor_model("event_gateway.bpmn"));
    let pik = h.create_ok("event_gateway", r#"{"orderId":"o-1"}"#);
    let b = h.publish("go", "o-1", 0, "", r#"{"paid":true}"#);
    b.accepted();
    assert_eq!(b.count(ValueType::Timer, Intent::Canceled), 1);
    assert!(
        b.find(ValueType::Variable, Intent::Created)
            .iter()
            .any(|r| matches!(
                &r.value,
                zest_protocol::RecordValue::Variable(v) if v.name == "paid" && v.scope_key == pik
            )),
        "the message's variables reach the process"
    );
    assert!(h.element_instance(pik).is_none(), "the instance completed");
    h.assert_no_runtime_state();
    h.settle();
}

#[test]
fn a_link_throw_event_needs_its_catch_event() {
    let mut h = Harness::new();
    let xml = anchor_model("link.bpmn").replace(
        r#"name="A" /></bpmn:intermediateCatchEvent>"#,
        r#"name="B" /></bpmn:intermediateCatchEvent>"#,
    );
    let b = h.deploy("link.bpmn", &xml);
    let reason = b.rejection(zest_protocol::RejectionType::InvalidArgument);
    assert!(
        reason.contains("Element: throw") && reason.contains("'A'"),
        "{reason}"
    );
}
