//! Models as Camunda users have them (Modeler output, blueprints, Camunda 7 leftovers): what
//! Zeebe 8.8 accepts, Zest accepts; what it refuses, Zest refuses with Zeebe's reason. Their
//! behaviour is checked against Zeebe by the anchor scenarios (end_output, mi_cardinality,
//! embedded_form, start_form).

use zest_model::parse_bpmn;

fn model(messages: &str, body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
{messages}
<bpmn:process id="p" isExecutable="true">
{body}
</bpmn:process>
</bpmn:definitions>"#
    )
}

const WAIT: &str = r#"<bpmn:startEvent id="start" />
<bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait" />
<bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="msg" /></bpmn:intermediateCatchEvent>
<bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end" />
<bpmn:endEvent id="end" />"#;

fn message(key: &str) -> String {
    format!(
        r#"<bpmn:message id="msg" name="ping"><bpmn:extensionElements><zeebe:subscription correlationKey="{key}" /></bpmn:extensionElements></bpmn:message>"#
    )
}

#[test]
fn a_static_correlation_key_is_refused_as_zeebe_refuses_it() {
    let err = parse_bpmn("m.bpmn", model(&message("order-1"), WAIT).as_bytes()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("Element: msg")
            && text.contains("Expected expression but found static value 'order-1'. An expression must start with '=' (e.g. '=order-1')."),
        "{text}"
    );
    // an expression is fine
    assert!(parse_bpmn("m.bpmn", model(&message("=orderId"), WAIT).as_bytes()).is_ok());
}

fn user_task(ext: &str) -> String {
    model(
        "",
        &format!(
            r#"<bpmn:startEvent id="start" /><bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="ut" />
<bpmn:userTask id="ut"><bpmn:extensionElements>{ext}</bpmn:extensionElements></bpmn:userTask>
<bpmn:sequenceFlow id="f2" sourceRef="ut" targetRef="end" /><bpmn:endEvent id="end" />"#
        ),
    )
}

#[test]
fn task_listeners_are_read_as_zeebe_8_8_reads_them() {
    use zest_model::TaskListenerEventType as E;
    let xml = user_task(
        r#"<zeebe:userTask /><zeebe:taskListeners>
        <zeebe:taskListener eventType="creating" type="a" retries="2" />
        <zeebe:taskListener eventType="assignment" type="b" />
        <zeebe:taskListener eventType="complete" type="c" />
        <zeebe:taskListener eventType="canceling" type="=&quot;d&quot;" />
        </zeebe:taskListeners>"#,
    );
    let p = parse_bpmn("t.bpmn", xml.as_bytes()).unwrap().remove(0);
    let (_, ut) = p.element_by_id("ut").unwrap();
    let events: Vec<E> = ut.task_listeners.iter().map(|l| l.event_type).collect();
    // 8.7's names (assignment, complete) are read as 8.8's
    assert_eq!(
        events,
        [E::Creating, E::Assigning, E::Completing, E::Canceling]
    );
    assert_eq!(ut.task_listeners_of(E::Assigning).count(), 1);
    // only Camunda user tasks have them
    let job_based = user_task(
        r#"<zeebe:taskListeners><zeebe:taskListener eventType="creating" type="a" /></zeebe:taskListeners>"#,
    );
    let err = parse_bpmn("t.bpmn", job_based.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Task listeners are only allowed on Camunda user tasks."),
        "{err}"
    );
    let bad = user_task(
        r#"<zeebe:userTask /><zeebe:taskListeners><zeebe:taskListener eventType="sometime" type="a" /><zeebe:taskListener eventType="creating" /></zeebe:taskListeners>"#,
    );
    let err = parse_bpmn("t.bpmn", bad.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(err.contains("but is 'sometime'"), "{err}");
    assert!(err.contains("'type'"), "{err}");
}
