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
