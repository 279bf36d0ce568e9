//! Property tests of the BPMN parser and validator on generated processes: every kind of BPMN
//! element (supported or not), `zeebe:` extensions with random FEEL, timers with random text,
//! flows between random (also missing or duplicate) ids, in random order. Whatever comes out,
//! the parser returns: a model whose references are consistent, or problems that each say what
//! is wrong (and where). Byte-level truncation and mutation is covered in `parse.rs`.

use proptest::prelude::*;
use zest_model::{parse_bpmn, ElementKind};

const IDS: &[&str] = &[
    "start", "end", "a", "b", "gw", "t", "x", "", "a b", "1", "s0", "t0", "e0",
];

const KINDS: &[&str] = &[
    "task",
    "manualTask",
    "endEvent",
    "exclusiveGateway",
    "parallelGateway",
    "startEvent",
    "endEvent",
    "serviceTask",
    "sendTask",
    "scriptTask",
    "businessRuleTask",
    "task",
    "manualTask",
    "userTask",
    "receiveTask",
    "exclusiveGateway",
    "parallelGateway",
    "inclusiveGateway",
    "eventBasedGateway",
    "intermediateCatchEvent",
    "intermediateThrowEvent",
    "boundaryEvent",
    "subProcess",
    "callActivity",
    "complexGateway",
    "somethingElse",
];

const FEEL: &[&str] = &[
    "=x",
    "=x + 1",
    "= {a: 1}",
    "=if x then 1 else 2",
    "=(",
    "=",
    "plain",
    "",
    "=\"PT1S\"",
    "=date and time(\"2024-01-01T00:00:00Z\")",
    "=[1,2][",
    "=not(",
];

const CHILDREN: &[&str] = &[
    "",
    "",
    "",
    "<bpmn:timerEventDefinition><bpmn:timeDuration>{feel}</bpmn:timeDuration></bpmn:timerEventDefinition>",
    "<bpmn:timerEventDefinition><bpmn:timeDate>{feel}</bpmn:timeDate></bpmn:timerEventDefinition>",
    "<bpmn:timerEventDefinition><bpmn:timeCycle>R3/PT1S</bpmn:timeCycle></bpmn:timerEventDefinition>",
    "<bpmn:timerEventDefinition />",
    "<bpmn:messageEventDefinition messageRef=\"m\" />",
    "<bpmn:errorEventDefinition />",
    "<bpmn:terminateEventDefinition />",
    "<bpmn:multiInstanceLoopCharacteristics />",
    "<bpmn:extensionElements><zeebe:taskDefinition type=\"{feel}\" retries=\"{feel}\" /></bpmn:extensionElements>",
    "<bpmn:extensionElements><zeebe:taskDefinition /></bpmn:extensionElements>",
    "<bpmn:extensionElements><zeebe:ioMapping><zeebe:input source=\"{feel}\" target=\"v\" /><zeebe:output source=\"{feel}\" target=\"{feel}\" /></zeebe:ioMapping></bpmn:extensionElements>",
    "<bpmn:extensionElements><zeebe:taskHeaders><zeebe:header key=\"k\" value=\"{feel}\" /><zeebe:header /></zeebe:taskHeaders></bpmn:extensionElements>",
    "<bpmn:extensionElements><zeebe:calledDecision decisionId=\"d\" resultVariable=\"r\" /></bpmn:extensionElements>",
    "<bpmn:extensionElements><zeebe:unknownThing /></bpmn:extensionElements>",
];

#[derive(Debug, Clone)]
struct Node {
    kind: &'static str,
    id: &'static str,
    children: Vec<(&'static str, &'static str)>,
    default_flow: Option<&'static str>,
}

#[derive(Debug, Clone)]
struct Flow {
    id: &'static str,
    from: &'static str,
    to: &'static str,
    condition: Option<&'static str>,
}

fn node() -> impl Strategy<Value = Node> {
    (
        prop::sample::select(KINDS),
        prop::sample::select(IDS),
        prop::collection::vec(
            (prop::sample::select(CHILDREN), prop::sample::select(FEEL)),
            0..3,
        ),
        prop::option::of(prop::sample::select(vec!["f1", "f2", "nope"])),
    )
        .prop_map(|(kind, id, children, default_flow)| Node {
            kind,
            id,
            children,
            default_flow,
        })
}

fn flow() -> impl Strategy<Value = Flow> {
    (
        prop::sample::select(vec!["f1", "f2", "f3", "f4", ""]),
        prop::sample::select(IDS),
        prop::sample::select(IDS),
        prop::option::of(prop::sample::select(FEEL)),
    )
        .prop_map(|(id, from, to, condition)| Flow {
            id,
            from,
            to,
            condition,
        })
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A valid process to build on: start -> t -> end.
const SKELETON: &str = r#"<bpmn:startEvent id="s0" />
<bpmn:serviceTask id="t0"><bpmn:extensionElements><zeebe:taskDefinition type="job" /></bpmn:extensionElements></bpmn:serviceTask>
<bpmn:endEvent id="e0" />
<bpmn:sequenceFlow id="k1" sourceRef="s0" targetRef="t0" />
<bpmn:sequenceFlow id="k2" sourceRef="t0" targetRef="e0" />
"#;

fn render(skeleton: bool, nodes: &[Node], flows: &[Flow]) -> String {
    let mut body = String::new();
    if skeleton {
        body.push_str(SKELETON);
    }
    for n in nodes {
        let default = n
            .default_flow
            .map(|d| format!(" default=\"{d}\""))
            .unwrap_or_default();
        body.push_str(&format!("<bpmn:{} id=\"{}\"{default}>", n.kind, n.id));
        for (child, feel) in &n.children {
            body.push_str(&child.replace("{feel}", &xml_escape(feel)));
        }
        body.push_str(&format!("</bpmn:{}>\n", n.kind));
    }
    for f in flows {
        match f.condition {
            Some(c) => body.push_str(&format!(
                "<bpmn:sequenceFlow id=\"{}\" sourceRef=\"{}\" targetRef=\"{}\"><bpmn:conditionExpression>{}</bpmn:conditionExpression></bpmn:sequenceFlow>\n",
                f.id, f.from, f.to, xml_escape(c)
            )),
            None => body.push_str(&format!(
                "<bpmn:sequenceFlow id=\"{}\" sourceRef=\"{}\" targetRef=\"{}\" />\n",
                f.id, f.from, f.to
            )),
        }
    }
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs">
<bpmn:process id="p" isExecutable="true">
{body}</bpmn:process>
</bpmn:definitions>
"#
    )
}

const CHAIN_IDS: &[&str] = &["n0", "n1", "n2", "n3", "n4", "n5"];

fn chain(nodes: &[Node]) -> String {
    let mut nodes: Vec<Node> = nodes.to_vec();
    let mut ids = vec!["s0"];
    for (n, id) in nodes.iter_mut().zip(CHAIN_IDS) {
        n.id = id;
        n.default_flow = None;
        ids.push(id);
    }
    ids.push("e0");
    let start = Node {
        kind: "startEvent",
        id: "s0",
        children: vec![],
        default_flow: None,
    };
    let end = Node {
        kind: "endEvent",
        id: "e0",
        children: vec![],
        default_flow: None,
    };
    let all: Vec<Node> = std::iter::once(start)
        .chain(nodes)
        .chain(std::iter::once(end))
        .collect();
    const FLOW_IDS: &[&str] = &["c0", "c1", "c2", "c3", "c4", "c5", "c6"];
    let flows: Vec<Flow> = ids
        .windows(2)
        .zip(FLOW_IDS)
        .map(|(w, id)| Flow {
            id,
            from: w[0],
            to: w[1],
            condition: None,
        })
        .collect();
    render(false, &all, &flows)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn generated_processes_parse_consistently_or_report_every_problem(
        mode in 0..3u8,
        nodes in prop::collection::vec(node(), 0..6),
        flows in prop::collection::vec(flow(), 0..6),
    ) {
        let xml = match mode {
            0 => render(false, &nodes, &flows),
            1 => render(true, &nodes, &flows),
            // a chain start -> n0 -> n1 -> ... -> end of the generated nodes, unique ids
            _ => chain(&nodes),
        };
        match parse_bpmn("generated.bpmn", xml.as_bytes()) {
            Ok(processes) => {
                for p in &processes {
                    prop_assert!(matches!(p.element(0).kind, ElementKind::Process));
                    // a none, timer, message or signal start event in the process itself (a
                    // process whose only start is a timer is valid: `start_events` lists the
                    // none start events only)
                    prop_assert!(
                        p.elements.iter().any(|e| e.flow_scope == Some(0)
                            && matches!(
                                e.kind,
                                ElementKind::NoneStartEvent
                                    | ElementKind::TimerStartEvent
                                    | ElementKind::MessageStartEvent
                                    | ElementKind::SignalStartEvent
                            )),
                        "an executable process has a start"
                    );
                    for f in &p.flows {
                        prop_assert!(f.source < p.elements.len() && f.target < p.elements.len());
                        prop_assert!(p.element(f.source).outgoing.iter().any(|&o| p.flows[o].id == f.id));
                    }
                    for (i, e) in p.elements.iter().enumerate() {
                        prop_assert_eq!(p.by_id.get(&e.id).copied(), Some(i), "ids are unique");
                        if matches!(e.kind, ElementKind::JobWorkerTask) {
                            prop_assert!(e.task_definition.is_some());
                        }
                    }
                }
            }
            Err(e) => {
                prop_assert!(!e.problems.is_empty(), "an error has problems: {}", xml);
                for p in &e.problems {
                    prop_assert!(!p.message.trim().is_empty());
                    prop_assert!(p.line >= 1, "{p:?}");
                }
                prop_assert!(e.to_string().starts_with("'generated.bpmn': "));
            }
        }
    }
}

#[test]
fn skeleton_alone_is_valid() {
    let xml = render(true, &[], &[]);
    if let Err(e) = parse_bpmn("generated.bpmn", xml.as_bytes()) {
        panic!("{e}\n{xml}");
    }
}
