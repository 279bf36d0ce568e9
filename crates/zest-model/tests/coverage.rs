//! Keeps the README's BPMN coverage table true: every row is deployed (parsed and validated) as
//! a small model that uses the element, and the row's "yes" or "no" must match whether the
//! model is accepted. A row without a model here, or a model without a row, fails the test.

use zest_model::parse_bpmn;

const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs">
<bpmn:message id="msg" name="m"><bpmn:extensionElements><zeebe:subscription correlationKey="=key" /></bpmn:extensionElements></bpmn:message>
<bpmn:signal id="sig" name="s" />
<bpmn:error id="err" errorCode="e" />
<bpmn:escalation id="esc" escalationCode="c" />
<bpmn:process id="p" isExecutable="true">
"#;
const TAIL: &str = "\n</bpmn:process>\n</bpmn:definitions>\n";

/// start -> link throw "l" (id "x") ... link catch "l" (id "xc") -> end
const LINK: &str = r#"<bpmn:startEvent id="s" />
<bpmn:intermediateThrowEvent id="x"><bpmn:linkEventDefinition name="l" /></bpmn:intermediateThrowEvent>
<bpmn:intermediateCatchEvent id="xc"><bpmn:linkEventDefinition name="l" /></bpmn:intermediateCatchEvent>
<bpmn:endEvent id="e" />
<bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="x" />
<bpmn:sequenceFlow id="f2" sourceRef="xc" targetRef="e" />"#;

const JOB: &str =
    r#"<bpmn:extensionElements><zeebe:taskDefinition type="job" /></bpmn:extensionElements>"#;

fn flows(ids: &[&str]) -> String {
    ids.windows(2)
        .enumerate()
        .map(|(i, w)| {
            format!(
                r#"<bpmn:sequenceFlow id="f{i}" sourceRef="{}" targetRef="{}" />"#,
                w[0], w[1]
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// start -> `element` (id "x") -> end
fn between(element: &str) -> String {
    format!(
        "<bpmn:startEvent id=\"s\" />\n{element}\n<bpmn:endEvent id=\"e\" />\n{}",
        flows(&["s", "x", "e"])
    )
}

/// `start` (id "x") -> service task -> end
fn as_start(start: &str) -> String {
    format!(
        "{start}\n<bpmn:serviceTask id=\"t\">{JOB}</bpmn:serviceTask>\n<bpmn:endEvent id=\"e\" />\n{}",
        flows(&["x", "t", "e"])
    )
}

/// start -> service task -> `end` (id "x")
fn as_end(end: &str) -> String {
    format!(
        "<bpmn:startEvent id=\"s\" />\n<bpmn:serviceTask id=\"t\">{JOB}</bpmn:serviceTask>\n{end}\n{}",
        flows(&["s", "t", "x"])
    )
}

/// start -> service task (with the boundary event `def` attached) -> end; boundary -> end2
fn boundary(def: &str) -> String {
    format!(
        "<bpmn:startEvent id=\"s\" />\n<bpmn:serviceTask id=\"t\">{JOB}</bpmn:serviceTask>\n<bpmn:endEvent id=\"e\" />\n\
         <bpmn:boundaryEvent id=\"x\" attachedToRef=\"t\">{def}</bpmn:boundaryEvent>\n<bpmn:endEvent id=\"e2\" />\n{}\n\
         <bpmn:sequenceFlow id=\"fb\" sourceRef=\"x\" targetRef=\"e2\" />",
        flows(&["s", "t", "e"])
    )
}

fn event(kind: &str, def: &str) -> String {
    format!("<bpmn:{kind} id=\"x\">{def}</bpmn:{kind}>")
}

const TIMER_DURATION: &str =
    "<bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition>";
const MESSAGE: &str = r#"<bpmn:messageEventDefinition messageRef="msg" />"#;
const SIGNAL: &str = r#"<bpmn:signalEventDefinition signalRef="sig" />"#;
const ERROR: &str = r#"<bpmn:errorEventDefinition errorRef="err" />"#;
const ESCALATION: &str = r#"<bpmn:escalationEventDefinition escalationRef="esc" />"#;
const COMPENSATION: &str = "<bpmn:compensateEventDefinition />";

/// The model body for a README row, by the row's element name.
fn model(row: &str) -> Option<String> {
    let body = match row {
        "none start event" => as_start(r#"<bpmn:startEvent id="x" />"#),
        "message start event" => as_start(&event("startEvent", MESSAGE)),
        "timer start event" => as_start(&event(
            "startEvent",
            "<bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1H</bpmn:timeCycle></bpmn:timerEventDefinition>",
        )),
        "signal start event" => as_start(&event("startEvent", SIGNAL)),
        "event sub-process (error, escalation, message, timer, signal starts)" => format!(
            "{}\n<bpmn:subProcess id=\"x\" triggeredByEvent=\"true\"><bpmn:startEvent id=\"es\">{TIMER_DURATION}</bpmn:startEvent><bpmn:endEvent id=\"ee\" /><bpmn:sequenceFlow id=\"ef\" sourceRef=\"es\" targetRef=\"ee\" /></bpmn:subProcess>",
            between(&format!("<bpmn:serviceTask id=\"x0\">{JOB}</bpmn:serviceTask>")).replace("\"x\"", "\"x0\"")
        ),
        "timer intermediate catch event (timeDuration, timeDate)" => between(&format!(
            "{}\n<bpmn:intermediateCatchEvent id=\"x2\"><bpmn:timerEventDefinition><bpmn:timeDate>2030-01-01T00:00:00Z</bpmn:timeDate></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>",
            event("intermediateCatchEvent", TIMER_DURATION)
        ))
        .replace(r#"sourceRef="x" targetRef="e""#, r#"sourceRef="x" targetRef="x2" /><bpmn:sequenceFlow id="fx" sourceRef="x2" targetRef="e""#),
        "timer intermediate catch event (timeCycle)" => between(&event(
            "intermediateCatchEvent",
            "<bpmn:timerEventDefinition><bpmn:timeCycle>R3/PT10S</bpmn:timeCycle></bpmn:timerEventDefinition>",
        )),
        "message intermediate catch event" => between(&event("intermediateCatchEvent", MESSAGE)),
        "signal intermediate catch event" => between(&event("intermediateCatchEvent", SIGNAL)),
        "link intermediate catch event" | "link intermediate throw event" => LINK.to_string(),
        "none intermediate throw event" => between(r#"<bpmn:intermediateThrowEvent id="x" />"#),
        "message intermediate throw event" => between(&format!(
            "<bpmn:intermediateThrowEvent id=\"x\">{JOB}{MESSAGE}</bpmn:intermediateThrowEvent>"
        )),
        "signal intermediate throw event" => between(&event("intermediateThrowEvent", SIGNAL)),
        "escalation intermediate throw event" => {
            between(&event("intermediateThrowEvent", ESCALATION))
        }
        "compensation intermediate throw event" => {
            between(&event("intermediateThrowEvent", COMPENSATION))
        }
        "timer boundary event" => boundary(TIMER_DURATION),
        "message boundary event" => boundary(MESSAGE),
        "signal boundary event" => boundary(SIGNAL),
        "error boundary event" => boundary(ERROR),
        // (Zeebe attaches escalation boundary events to sub-processes and call activities only)
        "escalation boundary event" => format!(
            "<bpmn:startEvent id=\"s\" />\n<bpmn:subProcess id=\"t\"><bpmn:startEvent id=\"ss\" /></bpmn:subProcess>\n<bpmn:endEvent id=\"e\" />\n\
             <bpmn:boundaryEvent id=\"x\" attachedToRef=\"t\">{ESCALATION}</bpmn:boundaryEvent>\n<bpmn:endEvent id=\"e2\" />\n{}\n\
             <bpmn:sequenceFlow id=\"fb\" sourceRef=\"x\" targetRef=\"e2\" />",
            flows(&["s", "t", "e"])
        ),
        // a compensation boundary event has no flows: an association leads to its handler
        "compensation boundary event" => format!(
            "<bpmn:startEvent id=\"s\" />\n<bpmn:serviceTask id=\"t\">{JOB}</bpmn:serviceTask>\n<bpmn:endEvent id=\"e\" />\n\
             <bpmn:boundaryEvent id=\"x\" attachedToRef=\"t\">{COMPENSATION}</bpmn:boundaryEvent>\n\
             <bpmn:serviceTask id=\"h\" isForCompensation=\"true\">{JOB}</bpmn:serviceTask>\n{}\n\
             <bpmn:association id=\"a\" sourceRef=\"x\" targetRef=\"h\" />",
            flows(&["s", "t", "e"])
        ),
        "none end event" => as_end(r#"<bpmn:endEvent id="x" />"#),
        "message end event" => as_end(&format!(
            "<bpmn:endEvent id=\"x\">{JOB}{MESSAGE}</bpmn:endEvent>"
        )),
        "error end event" => as_end(&event("endEvent", ERROR)),
        "signal end event" => as_end(&event("endEvent", SIGNAL)),
        "escalation end event" => as_end(&event("endEvent", ESCALATION)),
        "terminate end event" => as_end(&event("endEvent", "<bpmn:terminateEventDefinition />")),
        "compensation end event" => as_end(&event("endEvent", COMPENSATION)),
        "service task" => between(&format!("<bpmn:serviceTask id=\"x\">{JOB}</bpmn:serviceTask>")),
        "send task (job worker)" => {
            between(&format!("<bpmn:sendTask id=\"x\">{JOB}</bpmn:sendTask>"))
        }
        "script task (job worker)" => {
            between(&format!("<bpmn:scriptTask id=\"x\">{JOB}</bpmn:scriptTask>"))
        }
        "script task (zeebe:script, FEEL)" => between(
            r#"<bpmn:scriptTask id="x"><bpmn:extensionElements><zeebe:script expression="=1 + 1" resultVariable="two" /></bpmn:extensionElements></bpmn:scriptTask>"#,
        ),
        "business rule task (job worker)" => between(&format!(
            "<bpmn:businessRuleTask id=\"x\">{JOB}</bpmn:businessRuleTask>"
        )),
        "business rule task (zeebe:calledDecision, DMN)" => between(
            r#"<bpmn:businessRuleTask id="x"><bpmn:extensionElements><zeebe:calledDecision decisionId="d" resultVariable="r" /></bpmn:extensionElements></bpmn:businessRuleTask>"#,
        ),
        "user task (Camunda user task, zeebe:userTask)" => between(
            r#"<bpmn:userTask id="x"><bpmn:extensionElements><zeebe:userTask /></bpmn:extensionElements></bpmn:userTask>"#,
        ),
        "user task (job worker)" => between(
            r#"<bpmn:userTask id="x"><bpmn:extensionElements><zeebe:assignmentDefinition assignee="demo" /></bpmn:extensionElements></bpmn:userTask>"#,
        ),
        "receive task" => between(r#"<bpmn:receiveTask id="x" messageRef="msg" />"#),
        "manual task" => between(r#"<bpmn:manualTask id="x" />"#),
        "undefined task" => between(r#"<bpmn:task id="x" />"#),
        "exclusive gateway" => between(r#"<bpmn:exclusiveGateway id="x" />"#),
        "parallel gateway" => between(r#"<bpmn:parallelGateway id="x" />"#),
        "inclusive gateway" => between(r#"<bpmn:inclusiveGateway id="x" />"#),
        "event-based gateway" => format!(
            "<bpmn:startEvent id=\"s\" />\n<bpmn:eventBasedGateway id=\"x\" />\n{}\n{}\n<bpmn:endEvent id=\"e\" />\n{}\n{}\n<bpmn:sequenceFlow id=\"f9\" sourceRef=\"s\" targetRef=\"x\" />",
            event("intermediateCatchEvent", TIMER_DURATION).replace("\"x\"", "\"c\""),
            event("intermediateCatchEvent", r#"<bpmn:messageEventDefinition messageRef="msg" />"#)
                .replace("\"x\"", "\"d\""),
            flows(&["x", "c", "e"]).replace("id=\"f", "id=\"g"),
            flows(&["x", "d", "e"]).replace("id=\"f", "id=\"h")
        ),
        "embedded sub-process" => between(
            r#"<bpmn:subProcess id="x"><bpmn:startEvent id="is" /><bpmn:endEvent id="ie" /><bpmn:sequenceFlow id="if" sourceRef="is" targetRef="ie" /></bpmn:subProcess>"#,
        ),
        "call activity" => between(
            r#"<bpmn:callActivity id="x"><bpmn:extensionElements><zeebe:calledElement processId="other" propagateAllChildVariables="false" /></bpmn:extensionElements></bpmn:callActivity>"#,
        ),
        "ad-hoc sub-process (activeElementsCollection, completion condition, output collection)" => between(
            r#"<bpmn:adHocSubProcess id="x" cancelRemainingInstances="false"><bpmn:extensionElements><zeebe:adHoc activeElementsCollection="=ids" outputCollection="results" outputElement="=r" /></bpmn:extensionElements><bpmn:task id="inner" /><bpmn:completionCondition>=done</bpmn:completionCondition></bpmn:adHocSubProcess>"#,
        ),
        "ad-hoc sub-process (job worker implementation, zeebe:taskDefinition)" => between(
            r#"<bpmn:adHocSubProcess id="x"><bpmn:extensionElements><zeebe:taskDefinition type="agent" /></bpmn:extensionElements><bpmn:task id="inner" /></bpmn:adHocSubProcess>"#,
        ),
        "ad-hoc sub-process with a non-interrupting event sub-process" => between(
            r#"<bpmn:adHocSubProcess id="x"><bpmn:extensionElements><zeebe:adHoc activeElementsCollection="=ids" /></bpmn:extensionElements><bpmn:task id="inner" /><bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es" isInterrupting="false"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:startEvent><bpmn:endEvent id="ee" /><bpmn:sequenceFlow id="ef" sourceRef="es" targetRef="ee" /></bpmn:subProcess></bpmn:adHocSubProcess>"#,
        ),
        "multi-instance (parallel, sequential)" => between(&format!(
            "<bpmn:serviceTask id=\"x\">{JOB}<bpmn:multiInstanceLoopCharacteristics><bpmn:extensionElements><zeebe:loopCharacteristics inputCollection=\"=items\" inputElement=\"item\" /></bpmn:extensionElements></bpmn:multiInstanceLoopCharacteristics></bpmn:serviceTask>"
        )),
        "execution listeners" => between(
            r#"<bpmn:serviceTask id="x"><bpmn:extensionElements><zeebe:taskDefinition type="job" /><zeebe:executionListeners><zeebe:executionListener eventType="start" type="listener" /></zeebe:executionListeners></bpmn:extensionElements></bpmn:serviceTask>"#,
        ),
        "input/output mappings (zeebe:ioMapping)" => between(
            r#"<bpmn:serviceTask id="x"><bpmn:extensionElements><zeebe:taskDefinition type="job" /><zeebe:ioMapping><zeebe:input source="=a" target="b" /><zeebe:output source="=b" target="c" /></zeebe:ioMapping></bpmn:extensionElements></bpmn:serviceTask>"#,
        ),
        "user task listeners (zeebe:taskListeners)" => between(
            r#"<bpmn:userTask id="x"><bpmn:extensionElements><zeebe:userTask /><zeebe:taskListeners><zeebe:taskListener eventType="completing" type="audit" /></zeebe:taskListeners></bpmn:extensionElements></bpmn:userTask>"#,
        ),
        "embedded forms (zeebe:userTaskForm, formKey camunda-forms:bpmn:)" => format!(
            "<bpmn:extensionElements><zeebe:userTaskForm id=\"f\">{{\"components\": []}}</zeebe:userTaskForm></bpmn:extensionElements>\n{}",
            between(
                r#"<bpmn:userTask id="x"><bpmn:extensionElements><zeebe:formDefinition formKey="camunda-forms:bpmn:f" /></bpmn:extensionElements></bpmn:userTask>"#
            )
        ),
        "start form (zeebe:formDefinition on a none start event)" => as_start(
            r#"<bpmn:startEvent id="x"><bpmn:extensionElements><zeebe:formDefinition formId="start-form" /></bpmn:extensionElements></bpmn:startEvent>"#,
        ),
        "output mappings on end events" => as_end(
            r#"<bpmn:endEvent id="x"><bpmn:extensionElements><zeebe:ioMapping><zeebe:output source="=1" target="done" /></zeebe:ioMapping></bpmn:extensionElements></bpmn:endEvent>"#,
        ),
        "task headers (zeebe:taskHeaders)" => between(
            r#"<bpmn:serviceTask id="x"><bpmn:extensionElements><zeebe:taskDefinition type="job" /><zeebe:taskHeaders><zeebe:header key="k" value="v" /></zeebe:taskHeaders></bpmn:extensionElements></bpmn:serviceTask>"#,
        ),
        _ => return None,
    };
    Some(format!("{HEAD}{body}{TAIL}"))
}

/// (element, supported) rows of the README's coverage table.
fn readme_rows() -> Vec<(String, bool)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md next to the workspace");
    let start = readme
        .find("<!-- bpmn-coverage")
        .expect("the README has the coverage table");
    let end = readme
        .find("<!-- /bpmn-coverage -->")
        .expect("the coverage table ends");
    readme[start..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| kind") && !l.starts_with("| ---"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 3, "row {l:?} has kind, element, yes/no");
            let supported = match cells[2] {
                "yes" => true,
                "no" => false,
                other => panic!("row {l:?}: '{other}' is neither yes nor no"),
            };
            (cells[1].to_string(), supported)
        })
        .collect()
}

#[test]
fn the_readme_coverage_table_matches_what_deploys() {
    let rows = readme_rows();
    assert!(rows.len() > 40, "{} rows", rows.len());
    let mut wrong = Vec::new();
    for (element, supported) in &rows {
        let xml = model(element)
            .unwrap_or_else(|| panic!("no model for the README row '{element}': add one here"));
        match (parse_bpmn("coverage.bpmn", xml.as_bytes()), supported) {
            (Ok(_), true) => {}
            (Err(e), false) => {
                // rejected for the element itself, naming it
                if !e.problems.iter().any(|p| {
                    p.element_id
                        .as_deref()
                        .is_some_and(|id| id.starts_with('x') || id == "es")
                }) {
                    wrong.push(format!(
                        "'{element}' is rejected, but not for the element: {e}"
                    ));
                }
            }
            (Ok(_), false) => wrong.push(format!(
                "'{element}' deploys, but the README says it is not supported"
            )),
            (Err(e), true) => wrong.push(format!(
                "'{element}' is rejected, but the README says it is supported: {e}"
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
