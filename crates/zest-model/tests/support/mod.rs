//! Models and helpers shared by the parser tests (parse.rs, parse_extensions.rs).
#![allow(dead_code)]

use zest_model::*;

pub const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="defs">
<bpmn:process id="p" isExecutable="true">
"#;
pub const TAIL: &str = "\n</bpmn:process>\n</bpmn:definitions>\n";

/// A process `p` around `body`; the body starts on line 4.
pub fn process(body: &str) -> String {
    format!("{HEAD}{body}{TAIL}")
}

pub fn task(id: &str) -> String {
    format!(
        r#"<bpmn:serviceTask id="{id}"><bpmn:extensionElements><zeebe:taskDefinition type="t" /></bpmn:extensionElements></bpmn:serviceTask>"#
    )
}

pub fn flow(id: &str, from: &str, to: &str) -> String {
    format!(r#"<bpmn:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}" />"#)
}

pub fn cond_flow(id: &str, from: &str, to: &str, cond: &str) -> String {
    format!(
        r#"<bpmn:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">{cond}</bpmn:conditionExpression></bpmn:sequenceFlow>"#
    )
}

pub const START: &str = r#"<bpmn:startEvent id="start" />"#;
pub const END: &str = r#"<bpmn:endEvent id="end" />"#;

pub fn parse_ok(xml: &str) -> Process {
    match parse_bpmn("test.bpmn", xml.as_bytes()) {
        Ok(mut ps) => {
            assert_eq!(ps.len(), 1);
            ps.remove(0)
        }
        Err(e) => panic!("expected the model to parse, got:\n{e}"),
    }
}

pub fn problems(xml: &str) -> Vec<Problem> {
    match parse_bpmn("test.bpmn", xml.as_bytes()) {
        Ok(_) => panic!("expected the model to be rejected"),
        Err(e) => {
            assert_eq!(e.resource_name, "test.bpmn");
            assert!(!e.problems.is_empty());
            e.problems
        }
    }
}

/// Asserts one problem names `id` and contains `text`; returns it.
#[track_caller]
pub fn has(problems: &[Problem], id: &str, text: &str) -> Problem {
    problems
        .iter()
        .find(|p| p.element_id.as_deref() == Some(id) && p.message.contains(text))
        .cloned()
        .unwrap_or_else(|| panic!("no problem for '{id}' containing '{text}' in {problems:#?}"))
}

/// A valid minimal process body: start -> task -> end.
pub fn simple_body() -> String {
    [
        START,
        &task("task"),
        END,
        &flow("f1", "start", "task"),
        &flow("f2", "task", "end"),
    ]
    .join("\n")
}

pub fn workload(rel: &str) -> Option<Vec<u8>> {
    let path = format!(
        "{}/../../../shared/workloads/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => {
            println!("NOTE: skipping workload {path}: {e}");
            None
        }
    }
}

pub fn idx(p: &Process, id: &str) -> ElementIdx {
    p.element_by_id(id)
        .unwrap_or_else(|| panic!("no element {id}"))
        .0
}

pub fn flow_idx(p: &Process, id: &str) -> FlowIdx {
    p.flows
        .iter()
        .position(|f| f.id == id)
        .unwrap_or_else(|| panic!("no flow {id}"))
}

/// Follows the single outgoing flow of `from`.
pub fn next(p: &Process, from: &str) -> String {
    let e = p.element(idx(p, from));
    assert_eq!(e.outgoing.len(), 1, "{from} should have one outgoing flow");
    p.element(p.flow(e.outgoing[0]).target).id.clone()
}

pub fn static_text(e: &Expression) -> &str {
    match e {
        Expression::Static(s) => s,
        Expression::Feel(_) => panic!("expected a static value, got {e:?}"),
    }
}
