//! Parser and validator tests: the benchmark workloads, one inline model per validation rule,
//! malformed input, and a deterministic no-panic fuzz loop.

use zest_model::*;

const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="defs">
<bpmn:process id="p" isExecutable="true">
"#;
const TAIL: &str = "\n</bpmn:process>\n</bpmn:definitions>\n";

/// A process `p` around `body`; the body starts on line 4.
fn process(body: &str) -> String {
    format!("{HEAD}{body}{TAIL}")
}

fn task(id: &str) -> String {
    format!(
        r#"<bpmn:serviceTask id="{id}"><bpmn:extensionElements><zeebe:taskDefinition type="t" /></bpmn:extensionElements></bpmn:serviceTask>"#
    )
}

fn flow(id: &str, from: &str, to: &str) -> String {
    format!(r#"<bpmn:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}" />"#)
}

fn cond_flow(id: &str, from: &str, to: &str, cond: &str) -> String {
    format!(
        r#"<bpmn:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">{cond}</bpmn:conditionExpression></bpmn:sequenceFlow>"#
    )
}

const START: &str = r#"<bpmn:startEvent id="start" />"#;
const END: &str = r#"<bpmn:endEvent id="end" />"#;

fn parse_ok(xml: &str) -> Process {
    match parse_bpmn("test.bpmn", xml.as_bytes()) {
        Ok(mut ps) => {
            assert_eq!(ps.len(), 1);
            ps.remove(0)
        }
        Err(e) => panic!("expected the model to parse, got:\n{e}"),
    }
}

fn problems(xml: &str) -> Vec<Problem> {
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
fn has(problems: &[Problem], id: &str, text: &str) -> Problem {
    problems
        .iter()
        .find(|p| p.element_id.as_deref() == Some(id) && p.message.contains(text))
        .cloned()
        .unwrap_or_else(|| panic!("no problem for '{id}' containing '{text}' in {problems:#?}"))
}

/// A valid minimal process body: start -> task -> end.
fn simple_body() -> String {
    [
        START,
        &task("task"),
        END,
        &flow("f1", "start", "task"),
        &flow("f2", "task", "end"),
    ]
    .join("\n")
}

// ---------------------------------------------------------------------------------------------
// Workloads

fn workload(rel: &str) -> Option<Vec<u8>> {
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

fn parse_workload(rel: &str) -> Option<Process> {
    let xml = workload(rel)?;
    match parse_bpmn(rel, &xml) {
        Ok(mut ps) => {
            assert_eq!(ps.len(), 1, "{rel}");
            Some(ps.remove(0))
        }
        Err(e) => panic!("{rel} must deploy, got:\n{e}"),
    }
}

fn idx(p: &Process, id: &str) -> ElementIdx {
    p.element_by_id(id)
        .unwrap_or_else(|| panic!("no element {id}"))
        .0
}

fn flow_idx(p: &Process, id: &str) -> FlowIdx {
    p.flows
        .iter()
        .position(|f| f.id == id)
        .unwrap_or_else(|| panic!("no flow {id}"))
}

/// Follows the single outgoing flow of `from`.
fn next(p: &Process, from: &str) -> String {
    let e = p.element(idx(p, from));
    assert_eq!(e.outgoing.len(), 1, "{from} should have one outgoing flow");
    p.element(p.flow(e.outgoing[0]).target).id.clone()
}

fn static_text(e: &Expression) -> &str {
    match e {
        Expression::Static(s) => s,
        Expression::Feel(_) => panic!("expected a static value, got {e:?}"),
    }
}

/// Invariants every parsed process must satisfy.
fn check_invariants(p: &Process) {
    let root = p.element(Process::ROOT);
    assert_eq!(root.id, p.id);
    assert!(matches!(root.kind, ElementKind::Process));
    assert_eq!(root.element_type, BpmnElementType::Process);
    assert_eq!(root.event_type, BpmnEventType::Unspecified);
    assert_eq!(root.flow_scope, None);
    assert_eq!(root.start_events.len(), 1);
    assert!(matches!(
        p.element(root.start_events[0]).kind,
        ElementKind::NoneStartEvent
    ));
    for (i, e) in p.elements.iter().enumerate().skip(1) {
        assert_eq!(e.flow_scope, Some(Process::ROOT));
        assert_eq!(p.by_id[&e.id], i);
        assert!(e.line > 0);
        for &f in &e.outgoing {
            assert_eq!(p.flow(f).source, i);
        }
        for &f in &e.incoming {
            assert_eq!(p.flow(f).target, i);
        }
    }
    for (i, f) in p.flows.iter().enumerate() {
        assert!(p.element(f.source).outgoing.contains(&i));
        assert!(p.element(f.target).incoming.contains(&i));
    }
}

#[test]
fn one_task() {
    let Some(p) = parse_workload("one_task.bpmn") else {
        return;
    };
    check_invariants(&p);
    assert_eq!(p.id, "benchmark");
    assert_eq!(p.name.as_deref(), Some("One task process"));
    assert_eq!(p.elements.len(), 4);
    assert_eq!(p.flows.len(), 2);
    let (_, t) = p.element_by_id("task").unwrap();
    assert!(matches!(t.kind, ElementKind::JobWorkerTask));
    assert_eq!(t.element_type, BpmnElementType::ServiceTask);
    assert_eq!(t.event_type, BpmnEventType::Unspecified);
    let td = t.task_definition.as_ref().unwrap();
    assert_eq!(static_text(&td.job_type), "benchmark-task");
    assert_eq!(static_text(&td.retries), "3");
    assert_eq!(next(&p, "start"), "task");
    assert_eq!(next(&p, "task"), "end");
    let (_, s) = p.element_by_id("start").unwrap();
    assert_eq!(
        (s.element_type, s.event_type),
        (BpmnElementType::StartEvent, BpmnEventType::None)
    );
    assert_eq!(s.line, 4);
    let (_, e) = p.element_by_id("end").unwrap();
    assert_eq!(
        (e.element_type, e.event_type),
        (BpmnElementType::EndEvent, BpmnEventType::None)
    );
}

#[test]
fn typical_process() {
    let Some(p) = parse_workload("typical_process.bpmn") else {
        return;
    };
    check_invariants(&p);
    assert_eq!(p.id, "benchmark");
    let tasks: Vec<&Element> = p
        .elements
        .iter()
        .filter(|e| matches!(e.kind, ElementKind::JobWorkerTask))
        .collect();
    assert_eq!(tasks.len(), 10);
    for t in &tasks {
        assert_eq!(
            static_text(&t.task_definition.as_ref().unwrap().job_type),
            "benchmark-task"
        );
    }
    let (_, gw) = p.element_by_id("Gateway_09jrxib").unwrap();
    assert!(matches!(gw.kind, ElementKind::ExclusiveGateway));
    assert_eq!(gw.element_type, BpmnElementType::ExclusiveGateway);
    assert_eq!(gw.default_flow, None);
    assert_eq!(gw.outgoing.len(), 2);
    let conditions: Vec<String> = gw
        .outgoing
        .iter()
        .map(|&f| p.flow(f).condition.as_ref().unwrap().source())
        .collect();
    assert_eq!(conditions, ["=var2=true", "=var2=false"]);
    for &f in &gw.outgoing {
        assert!(matches!(p.flow(f).condition, Some(Expression::Feel(_))));
    }
    let yes = p.flow(flow_idx(&p, "Flow_0z2tud8"));
    assert_eq!(p.element(yes.target).id, "timer1");
    let timers: Vec<&Element> = p
        .elements
        .iter()
        .filter(|e| matches!(e.kind, ElementKind::TimerIntermediateCatchEvent))
        .collect();
    assert_eq!(timers.len(), 2);
    for t in timers {
        assert_eq!(t.element_type, BpmnElementType::IntermediateCatchEvent);
        assert_eq!(t.event_type, BpmnEventType::Timer);
        match &t.timer {
            Some(TimerDefinition::Duration(d)) => assert_eq!(static_text(d), "PT1M"),
            other => panic!("unexpected timer {other:?}"),
        }
    }
    // task1 -> task2 -> task3 -> gateway; yes -> timer1 -> task4..6 -> timer2 -> task7..10 -> end.
    let mut chain = vec!["start".to_string()];
    let mut at = "start".to_string();
    while at != "Gateway_09jrxib" {
        at = next(&p, &at);
        chain.push(at.clone());
    }
    at = "timer1".to_string();
    chain.push(at.clone());
    while at != "end" {
        at = next(&p, &at);
        chain.push(at.clone());
    }
    assert_eq!(
        chain.join(","),
        "start,task1,task2,task3,Gateway_09jrxib,timer1,task4,task5,task6,timer2,task7,task8,task9,task10,end"
    );
    let no = p.flow(flow_idx(&p, "Flow_11ozwsi"));
    assert_eq!(p.element(no.target).id, "Event_1bcf2he");
}

#[test]
fn ten_tasks() {
    let Some(p) = parse_workload("ten_tasks.bpmn") else {
        return;
    };
    check_invariants(&p);
    let tasks = p
        .elements
        .iter()
        .filter(|e| matches!(e.kind, ElementKind::JobWorkerTask))
        .count();
    assert_eq!(tasks, 10);
    let timers: Vec<&Element> = p.elements.iter().filter(|e| e.timer.is_some()).collect();
    assert_eq!(timers.len(), 2);
    for t in timers {
        match &t.timer {
            Some(TimerDefinition::Duration(d)) => assert_eq!(static_text(d), "PT20M"),
            other => panic!("unexpected timer {other:?}"),
        }
    }
}

#[test]
fn ten_tasks_no_timers() {
    let Some(p) = parse_workload("ten_tasks_no_timers.bpmn") else {
        return;
    };
    check_invariants(&p);
    // No <incoming>/<outgoing> children: topology from sequenceFlow only.
    let mut at = "start".to_string();
    let mut chain = vec![at.clone()];
    while at != "end" {
        at = next(&p, &at);
        chain.push(at.clone());
    }
    assert_eq!(chain.len(), 12);
    assert_eq!(
        chain[1..11],
        (1..=10).map(|i| format!("task{i}")).collect::<Vec<_>>()[..]
    );
}

#[test]
fn four_parallel_tasks() {
    let Some(p) = parse_workload("four_parallel_tasks.bpmn") else {
        return;
    };
    check_invariants(&p);
    let (_, split) = p.element_by_id("split").unwrap();
    assert!(matches!(split.kind, ElementKind::ParallelGateway));
    assert_eq!(split.element_type, BpmnElementType::ParallelGateway);
    let targets: Vec<&str> = split
        .outgoing
        .iter()
        .map(|&f| p.element(p.flow(f).target).id.as_str())
        .collect();
    assert_eq!(targets, ["task1", "task2", "task3", "task4"]);
    let (_, join) = p.element_by_id("join").unwrap();
    assert_eq!(join.incoming.len(), 4);
    assert_eq!(next(&p, "join"), "end");
}

#[test]
fn simple_process() {
    let Some(p) = parse_workload("simpleProcess.bpmn") else {
        return;
    };
    check_invariants(&p);
    assert_eq!(p.id, "simpleProcess");
    assert_eq!(p.elements.len(), 3);
    assert_eq!(next(&p, "StartEvent_1"), "EndEvent_0ir1yv6");
}

#[test]
fn timer_process() {
    let Some(p) = parse_workload("timerProcess.bpmn") else {
        return;
    };
    check_invariants(&p);
    assert_eq!(p.id, "timerProcess");
    let (_, t) = p.element_by_id("IntermediateCatchEvent_0vwombs").unwrap();
    match &t.timer {
        Some(TimerDefinition::Duration(d)) => assert_eq!(static_text(d), "PT1S"),
        other => panic!("unexpected timer {other:?}"),
    }
    assert_eq!(next(&p, "StartEvent_1"), "IntermediateCatchEvent_0vwombs");
    assert_eq!(
        next(&p, "IntermediateCatchEvent_0vwombs"),
        "EndEvent_1khq409"
    );
}

#[test]
fn camunda_user_task_workloads_parse() {
    for (rel, tasks) in [
        ("user_task.bpmn", &["user_task"][..]),
        ("two_user_tasks.bpmn", &["userTaskA", "userTaskB"][..]),
        ("variants/one_task.camunda-211e724.bpmn", &["user_task"][..]),
        ("variants/one_task.camunda-f18daec.bpmn", &["user_task"][..]),
    ] {
        let Some(p) = parse_workload(rel) else {
            continue;
        };
        check_invariants(&p);
        for id in tasks {
            let el = p.element(idx(&p, id));
            assert!(matches!(el.kind, ElementKind::UserTask), "{rel} {id}");
            assert_eq!(el.element_type, BpmnElementType::UserTask);
            assert!(el.user_task.is_some(), "{rel} {id}");
            assert!(el.task_definition.is_none(), "{rel} {id}: no job");
        }
    }
}

#[test]
fn camunda_user_task_properties_are_validated() {
    let ut = |ext: &str| {
        process(&format!(
            r#"{START}<bpmn:userTask id="ut"><bpmn:extensionElements><zeebe:userTask />{ext}</bpmn:extensionElements></bpmn:userTask>{}"#,
            flow("f", "start", "ut")
        ))
    };
    let p = &parse_bpmn(
        "ok.bpmn",
        ut(r#"<zeebe:assignmentDefinition assignee="=owner" candidateGroups="a, b" /><zeebe:formDefinition externalReference="=url" /><zeebe:priorityDefinition priority="=p" /><zeebe:taskSchedule dueDate="2030-01-01T10:00:00Z" /><zeebe:taskHeaders><zeebe:header key="k" value="v" /></zeebe:taskHeaders>"#).as_bytes(),
    )
    .expect("a Camunda user task with every property deploys")[0];
    let el = p.element(idx(p, "ut"));
    let props = el.user_task.as_ref().unwrap();
    assert_eq!(props.assignee.as_ref().unwrap().source(), "=owner");
    assert_eq!(props.external_reference.as_ref().unwrap().source(), "=url");
    assert_eq!(props.priority.as_ref().unwrap().source(), "=p");
    assert_eq!(el.task_headers, vec![("k".to_string(), "v".to_string())]);
    for (ext, wanted) in [
        (
            r#"<zeebe:priorityDefinition priority="200" />"#,
            "Priority must be a number between 0 and 100, but was '200'.",
        ),
        (
            r#"<zeebe:priorityDefinition priority="high" />"#,
            "Expected static value to be a valid Number between 0 and 100, but found 'high'.",
        ),
        (
            r#"<zeebe:formDefinition formKey="custom:form" />"#,
            "Exactly one of the attributes 'formId, externalReference' must be present and not blank for native user tasks",
        ),
        (
            r#"<zeebe:formDefinition formId="f" externalReference="x" />"#,
            "Exactly one of the attributes 'formId, externalReference' must be present",
        ),
        (
            r#"<zeebe:taskSchedule dueDate="tomorrow" />"#,
            "Attribute 'dueDate' must be an ISO 8601 date-time",
        ),
    ] {
        let ps = problems(&ut(ext));
        has(&ps, "ut", wanted);
        assert_eq!(ps.len(), 1, "{ext}: {ps:#?}");
    }
}

#[test]
fn message_start_workload_parses() {
    let Some(p) = parse_workload("msg_one_task.bpmn") else {
        return;
    };
    let start = p.element(idx(&p, "start"));
    assert!(matches!(start.kind, ElementKind::MessageStartEvent));
    assert_eq!(start.event_type, BpmnEventType::Message);
    let m = start.message.as_ref().expect("the start event's message");
    assert_eq!(m.name.source(), "msg");
    assert!(m.correlation_key.is_none());
    assert_eq!(
        p.element(Process::ROOT).message_start_events,
        vec![idx(&p, "start")]
    );
    assert!(p.element(Process::ROOT).start_events.is_empty());
}

fn with_messages(body: &str, messages: &str) -> String {
    process(body).replace(
        "</bpmn:definitions>",
        &format!("{messages}\n</bpmn:definitions>"),
    )
}

#[test]
fn message_references_are_validated() {
    let body = [
        START,
        r#"<bpmn:intermediateCatchEvent id="no_key"><bpmn:messageEventDefinition messageRef="plain" /></bpmn:intermediateCatchEvent>"#,
        r#"<bpmn:receiveTask id="no_name" messageRef="nameless" />"#,
        r#"<bpmn:receiveTask id="bad_feel" messageRef="bad" />"#,
        r#"<bpmn:startEvent id="s1"><bpmn:messageEventDefinition messageRef="plain" /></bpmn:startEvent>"#,
        r#"<bpmn:startEvent id="s2"><bpmn:messageEventDefinition messageRef="plain2" /></bpmn:startEvent>"#,
        END,
        &flow("f1", "start", "no_key"),
        &flow("f2", "no_key", "no_name"),
        &flow("f3", "no_name", "bad_feel"),
        &flow("f4", "bad_feel", "end"),
        &flow("f5", "s1", "end"),
        &flow("f6", "s2", "end"),
    ]
    .join("\n");
    let messages = r#"<bpmn:message id="plain" name="m" />
<bpmn:message id="plain2" name="=&quot;m&quot;" />
<bpmn:message id="nameless" />
<bpmn:message id="bad" name="b"><bpmn:extensionElements><zeebe:subscription correlationKey="=a +" /></bpmn:extensionElements></bpmn:message>"#;
    let ps = problems(&with_messages(&body, messages));
    has(
        &ps,
        "no_key",
        "Must have a correlation key: the message 'plain' needs a 'zeebe:subscription'",
    );
    has(
        &ps,
        "no_name",
        "the message 'nameless' has no 'name' attribute",
    );
    has(&ps, "bad_feel", "Attribute 'correlationKey'");
    has(
        &ps,
        "s2",
        "Multiple message start events with the same message name 'm'",
    );
    assert_eq!(ps.len(), 4, "{ps:#?}");
}

#[test]
fn realistic_parses_with_its_business_rule_tasks() {
    let Some(p) = parse_workload("realistic/bankCustomerComplaintDisputeHandling.bpmn") else {
        return;
    };
    let task = p.element(idx(&p, "Activity_0iv8gg2"));
    assert!(matches!(task.kind, ElementKind::BusinessRuleTask));
    let called = task.called_decision.as_ref().unwrap();
    assert!(
        matches!(&called.decision_id, Expression::Static(id) if id == "determine-fraud-rating-1dmmwcu")
    );
    assert_eq!(called.result_variable, "fraud_score_result");
}

#[test]
fn refunding_process_parses_with_its_error_boundary_event() {
    let Some(p) = parse_workload("realistic/refundingProcess.bpmn") else {
        return;
    };
    let b = p.element(idx(&p, "Event_014zd88"));
    assert!(matches!(b.kind, ElementKind::BoundaryEvent));
    assert_eq!(b.event_type, BpmnEventType::Error);
    assert!(b.interrupting);
    assert_eq!(b.error_code.as_deref(), Some("refundingError"));
    assert_eq!(b.attached_to, Some(idx(&p, "Activity_19w3iwm")));
    assert_eq!(
        p.element(idx(&p, "Activity_19w3iwm")).boundary_events,
        vec![idx(&p, "Event_014zd88")]
    );
}

#[test]
fn boundary_events_follow_zeebes_rules() {
    let with_boundary = |attrs: &str, def: &str, extra: &str| {
        let body = [
            START.to_string(),
            task("task"),
            END.to_string(),
            flow("f1", "start", "task"),
            flow("f2", "task", "end"),
            format!(r#"<bpmn:boundaryEvent id="b" {attrs}>{def}</bpmn:boundaryEvent>"#),
            extra.to_string(),
        ]
        .join("\n");
        format!(
            "{HEAD}{body}\n</bpmn:process>\n<bpmn:error id=\"err\" errorCode=\"E1\" />\n</bpmn:definitions>\n"
        )
    };
    let timer = "<bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition>";
    let error = r#"<bpmn:errorEventDefinition errorRef="err" />"#;
    let p = parse_ok(&with_boundary(
        r#"attachedToRef="task" cancelActivity="false""#,
        timer,
        "",
    ));
    assert!(!p.element(idx(&p, "b")).interrupting);
    let p = parse_ok(&with_boundary(
        r#"attachedToRef="task""#,
        "<bpmn:errorEventDefinition />",
        "",
    ));
    assert_eq!(p.element(idx(&p, "b")).error_code, None, "catch-all");
    has(
        &problems(&with_boundary("", timer, "")),
        "b",
        "Must be attached to an activity",
    );
    has(
        &problems(&with_boundary(r#"attachedToRef="nope""#, timer, "")),
        "b",
        "no element has the id 'nope'",
    );
    has(
        &problems(&with_boundary(r#"attachedToRef="end""#, timer, "")),
        "b",
        "must reference an activity, but 'end' is a 'endEvent'",
    );
    has(
        &problems(&with_boundary(
            r#"attachedToRef="task" cancelActivity="false""#,
            error,
            "",
        )),
        "b",
        "must be interrupting",
    );
    has(
        &problems(&with_boundary(
            r#"attachedToRef="task""#,
            timer,
            &flow("f3", "start", "b"),
        )),
        "b",
        "Boundary events must not have incoming sequence flows",
    );
    has(
        &problems(&with_boundary(
            r#"attachedToRef="task""#,
            "<bpmn:timerEventDefinition><bpmn:timeCycle>R2/PT1M</bpmn:timeCycle></bpmn:timerEventDefinition>",
            "",
        )),
        "b",
        "Interrupting timer event with time cycle is not allowed.",
    );
    // a non-interrupting one repeats
    let ok = with_boundary(
        r#"attachedToRef="task" cancelActivity="false""#,
        "<bpmn:timerEventDefinition><bpmn:timeCycle>R2/PT1M</bpmn:timeCycle></bpmn:timerEventDefinition>",
        "",
    );
    let p = parse_bpmn("b.bpmn", ok.as_bytes()).unwrap().remove(0);
    assert!(matches!(
        p.element(idx(&p, "b")).timer,
        Some(TimerDefinition::Cycle(_))
    ));
    has(
        &problems(&with_boundary(
            r#"attachedToRef="task""#,
            r#"<bpmn:errorEventDefinition errorRef="missing" />"#,
            "",
        )),
        "b",
        "no error has the id 'missing'",
    );
}

#[test]
fn error_end_events_need_an_error_code() {
    let with_end = |def: &str, errors: &str| {
        let body = [
            START.to_string(),
            format!(r#"<bpmn:endEvent id="fail">{def}</bpmn:endEvent>"#),
            flow("f1", "start", "fail"),
        ]
        .join("\n");
        format!("{HEAD}{body}\n</bpmn:process>\n{errors}\n</bpmn:definitions>\n")
    };
    let p = parse_ok(&with_end(
        r#"<bpmn:errorEventDefinition errorRef="e" />"#,
        r#"<bpmn:error id="e" errorCode="boom" />"#,
    ));
    let e = p.element(idx(&p, "fail"));
    assert!(matches!(e.kind, ElementKind::ErrorEndEvent));
    assert_eq!(e.error_code.as_deref(), Some("boom"));
    has(
        &problems(&with_end("<bpmn:errorEventDefinition />", "")),
        "fail",
        "Must reference an error",
    );
    has(
        &problems(&with_end(
            r#"<bpmn:errorEventDefinition errorRef="e" />"#,
            r#"<bpmn:error id="e" />"#,
        )),
        "fail",
        "ErrorCode must be present and not empty",
    );
}

// ---------------------------------------------------------------------------------------------
// Structure

#[test]
fn topology_comes_from_sequence_flows_only() {
    // Flows before the nodes, no <incoming>/<outgoing>, misleading <outgoing> children ignored.
    let body = [
        &flow("f2", "task", "end"),
        &flow("f1", "start", "task"),
        r#"<bpmn:startEvent id="start" name="Start"><bpmn:outgoing>bogus</bpmn:outgoing></bpmn:startEvent>"#,
        &task("task"),
        END,
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    check_invariants(&p);
    assert_eq!(
        p.flows.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
        ["f2", "f1"]
    );
    assert_eq!(next(&p, "start"), "task");
    assert_eq!(next(&p, "task"), "end");
    assert_eq!(p.element(idx(&p, "start")).name.as_deref(), Some("Start"));
    assert_eq!(
        p.elements.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["p", "start", "task", "end"]
    );
    assert_eq!(p.flow(0).line, 4);
}

#[test]
fn outgoing_follows_flow_document_order() {
    let body = [
        START,
        r#"<bpmn:parallelGateway id="fork" />"#,
        &task("a"),
        &task("b"),
        &task("c"),
        &flow("f0", "start", "fork"),
        &flow("fc", "fork", "c"),
        &flow("fa", "fork", "a"),
        &flow("fb", "fork", "b"),
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    let fork = p.element(idx(&p, "fork"));
    let ids: Vec<&str> = fork
        .outgoing
        .iter()
        .map(|&f| p.flow(f).id.as_str())
        .collect();
    assert_eq!(ids, ["fc", "fa", "fb"]);
    // Tasks without outgoing flows are fine: they complete the scope.
    assert!(p.element(idx(&p, "a")).outgoing.is_empty());
}

#[test]
fn ignores_non_executable_content() {
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:modeler="http://camunda.org/schema/modeler/1.0" id="d">
  <bpmn:collaboration id="c"><bpmn:participant id="part" processRef="p" /></bpmn:collaboration>
  <bpmn:message id="m" name="msg" />
  <bpmn:error id="err" errorCode="e" />
  <bpmn:signal id="sig" name="s" />
  <bpmn:escalation id="esc" />
  <bpmn:category id="cat" />
  <bpmn:process id="other" isExecutable="false"><bpmn:userTask id="ut" /></bpmn:process>
  <bpmn:process id="p" isExecutable="true">
    <bpmn:documentation>doc</bpmn:documentation>
    <bpmn:extensionElements><zeebe:versionTag value="1" /><zeebe:properties><zeebe:property name="a" value="b" /></zeebe:properties><camunda:foo /></bpmn:extensionElements>
    <bpmn:laneSet id="ls"><bpmn:lane id="lane"><bpmn:flowNodeRef>start</bpmn:flowNodeRef></bpmn:lane></bpmn:laneSet>
    <bpmn:startEvent id="start"><bpmn:documentation>x</bpmn:documentation><bpmn:extensionElements><zeebe:properties /><modeler:x /></bpmn:extensionElements></bpmn:startEvent>
    {task}
    <bpmn:endEvent id="end" />
    {f1}{f2}
    <bpmn:textAnnotation id="ta"><bpmn:text>note</bpmn:text></bpmn:textAnnotation>
    <bpmn:association id="as" sourceRef="task" targetRef="ta" />
    <bpmn:dataObject id="do" />
    <bpmn:dataObjectReference id="dor" dataObjectRef="do" />
    <bpmn:dataStoreReference id="dsr" />
    <bpmn:group id="g" categoryValueRef="cv" />
    <camunda:whatever />
  </bpmn:process>
  <bpmndi:BPMNDiagram id="di"><bpmndi:BPMNPlane id="plane" bpmnElement="missing" /></bpmndi:BPMNDiagram>
</bpmn:definitions>"#,
        task = task("task"),
        f1 = flow("f1", "start", "task"),
        f2 = flow("f2", "task", "end"),
    );
    let ps = parse_bpmn("x.bpmn", xml.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].id, "p");
    assert_eq!(ps[0].elements.len(), 4);
}

#[test]
fn several_executable_processes() {
    let body = simple_body();
    let xml = format!(
        r#"<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0">
<bpmn:process id="a" isExecutable="true">{body}</bpmn:process>
<bpmn:process id="b" isExecutable="true">{}</bpmn:process>
</bpmn:definitions>"#,
        body.replace("id=\"", "id=\"b_")
            .replace("Ref=\"", "Ref=\"b_")
    );
    let ps = parse_bpmn("x.bpmn", xml.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        ps.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    for p in &ps {
        check_invariants(p);
    }
}

// ---------------------------------------------------------------------------------------------
// Malformed resources

#[test]
fn malformed_xml_reports_line_and_column() {
    let xml = "<?xml version=\"1.0\"?>\n<bpmn:definitions xmlns:bpmn=\"http://www.omg.org/spec/BPMN/20100524/MODEL\">\n  <bpmn:process id=\"p\">\n</bpmn:definitions>\n";
    let ps = problems(xml);
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].element_id, None);
    assert!(
        ps[0].message.starts_with("XML is not well-formed: "),
        "{}",
        ps[0].message
    );
    assert_eq!((ps[0].line, ps[0].column), (4, 1), "{}", ps[0].message);

    let ps = problems("<a>\n  <b x=\"1\" x=\"2\"/></a>");
    assert_eq!(ps[0].line, 2);
    assert!(
        ps[0].to_string().starts_with("- line 2, column "),
        "{}",
        ps[0]
    );

    for bad in [
        "",
        "   ",
        "<",
        "<a",
        "<a></b>",
        "text",
        "<a/><b/>",
        "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>",
    ] {
        let ps = problems(bad);
        assert!(
            ps[0].message.starts_with("XML is not well-formed"),
            "{bad:?}: {:?}",
            ps[0]
        );
        assert!(ps[0].line >= 1 && ps[0].column >= 1);
    }
}

#[test]
fn not_utf8() {
    let mut xml = b"<?xml version=\"1.0\"?>\n<bpm".to_vec();
    xml.push(0xff);
    xml.extend_from_slice(b"n:definitions/>");
    let ps = problems(std::str::from_utf8(&xml[..0]).unwrap()); // sanity: empty input fails too
    assert!(!ps.is_empty());
    let e = parse_bpmn("x.bpmn", &xml).unwrap_err();
    assert_eq!(e.problems.len(), 1);
    assert_eq!((e.problems[0].line, e.problems[0].column), (2, 5));
    assert!(e.problems[0].message.contains("not valid UTF-8"));
}

#[test]
fn utf8_bom_is_accepted() {
    let xml = format!("\u{feff}{}", process(&simple_body()));
    parse_ok(&xml);
}

#[test]
fn root_must_be_bpmn_definitions() {
    let ps = problems("<definitions/>");
    assert!(
        ps[0].message.contains("root element must be 'definitions'"),
        "{:?}",
        ps[0]
    );
    let ps = problems("<x:definitions xmlns:x=\"urn:other\"/>");
    assert!(ps[0].message.contains("urn:other"), "{:?}", ps[0]);
    let ps =
        problems("<dmn:definitions xmlns:dmn=\"https://www.omg.org/spec/DMN/20191111/MODEL/\"/>");
    assert_eq!((ps[0].line, ps[0].column), (1, 1));
}

#[test]
fn needs_an_executable_process() {
    let xml = process(&simple_body()).replace("isExecutable=\"true\"", "isExecutable=\"false\"");
    let ps = problems(&xml);
    assert_eq!(ps.len(), 1);
    assert!(ps[0].message.contains("no executable process"));
    let ps = problems(r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" />"#);
    assert!(ps[0].message.contains("no executable process"));
    // Default namespace instead of a prefix is fine.
    let xml = process(&simple_body());
    let unprefixed = xml
        .replace("xmlns:bpmn=", "xmlns=")
        .replace("<bpmn:", "<")
        .replace("</bpmn:", "</");
    parse_ok(&unprefixed);
}

// ---------------------------------------------------------------------------------------------
// Unsupported elements

#[test]
fn escalation_events_follow_zeebes_rules() {
    let defs = r#"<bpmn:escalation id="esc" escalationCode="late" />
<bpmn:escalation id="nocode" />"#;
    let body = [
        START,
        r#"<bpmn:subProcess id="sub"><bpmn:startEvent id="ss" /><bpmn:sequenceFlow id="sf" sourceRef="ss" targetRef="inner" /><bpmn:endEvent id="inner"><bpmn:escalationEventDefinition escalationRef="esc" /></bpmn:endEvent></bpmn:subProcess>"#,
        r#"<bpmn:boundaryEvent id="caught" attachedToRef="sub"><bpmn:escalationEventDefinition escalationRef="esc" /></bpmn:boundaryEvent>"#,
        r#"<bpmn:boundaryEvent id="any" cancelActivity="false" attachedToRef="sub"><bpmn:escalationEventDefinition /></bpmn:boundaryEvent>"#,
        r#"<bpmn:boundaryEvent id="on_task" attachedToRef="task"><bpmn:escalationEventDefinition escalationRef="esc" /></bpmn:boundaryEvent>"#,
        r#"<bpmn:intermediateThrowEvent id="no_ref"><bpmn:escalationEventDefinition /></bpmn:intermediateThrowEvent>"#,
        r#"<bpmn:intermediateThrowEvent id="no_code"><bpmn:escalationEventDefinition escalationRef="nocode" /></bpmn:intermediateThrowEvent>"#,
        r#"<bpmn:intermediateThrowEvent id="unknown"><bpmn:escalationEventDefinition escalationRef="nope" /></bpmn:intermediateThrowEvent>"#,
        &task("task"),
        END,
        &flow("f1", "start", "sub"),
        &flow("f2", "sub", "no_ref"),
        &flow("f3", "no_ref", "no_code"),
        &flow("f4", "no_code", "unknown"),
        &flow("f5", "unknown", "task"),
        &flow("f6", "task", "end"),
        &flow("f7", "caught", "end"),
        &flow("f8", "any", "end"),
        &flow("f9", "on_task", "end"),
    ]
    .join("\n");
    let xml = process(&body).replace(
        "</bpmn:definitions>",
        &format!("{defs}\n</bpmn:definitions>"),
    );
    let ps = problems(&xml);
    has(
        &ps,
        "on_task",
        "An escalation boundary event should only be attached to a subprocess, or a call activity",
    );
    has(&ps, "no_ref", "Must reference an escalation");
    has(
        &ps,
        "no_code",
        "EscalationCode must be present and not empty",
    );
    has(&ps, "unknown", "no escalation has the id 'nope'");
    assert_eq!(ps.len(), 4, "{ps:#?}");
    // the valid part on its own
    let ok = process(
        &[
            START,
            r#"<bpmn:subProcess id="sub"><bpmn:startEvent id="ss" /><bpmn:sequenceFlow id="sf" sourceRef="ss" targetRef="inner" /><bpmn:endEvent id="inner"><bpmn:escalationEventDefinition escalationRef="esc" /></bpmn:endEvent></bpmn:subProcess>"#,
            r#"<bpmn:boundaryEvent id="caught" attachedToRef="sub"><bpmn:escalationEventDefinition escalationRef="esc" /></bpmn:boundaryEvent>"#,
            r#"<bpmn:boundaryEvent id="any" cancelActivity="false" attachedToRef="sub"><bpmn:escalationEventDefinition /></bpmn:boundaryEvent>"#,
            END,
            &flow("f1", "start", "sub"),
            &flow("f2", "sub", "end"),
            &flow("f7", "caught", "end"),
            &flow("f8", "any", "end"),
        ]
        .join("\n"),
    )
    .replace("</bpmn:definitions>", &format!("{defs}\n</bpmn:definitions>"));
    let p = &parse_bpmn("esc.bpmn", ok.as_bytes()).expect("deploys")[0];
    let inner = p.element(idx(p, "inner"));
    assert!(matches!(inner.kind, ElementKind::EscalationThrowEvent));
    assert_eq!(inner.escalation_code.as_deref(), Some("late"));
    assert_eq!(
        p.element(idx(p, "caught")).escalation_code.as_deref(),
        Some("late")
    );
    assert_eq!(p.element(idx(p, "any")).escalation_code, None);
    assert!(!p.element(idx(p, "any")).interrupting);
}

#[test]
fn unsupported_elements_are_all_reported() {
    let body = [
        START,
        r#"<bpmn:complexGateway id="complex" />"#,
        r#"<bpmn:scriptTask id="script" />"#,
        r#"<bpmn:subProcess id="sub" triggeredByEvent="true"><bpmn:startEvent id="inner_start" /></bpmn:subProcess>"#,
        r#"<bpmn:boundaryEvent id="boundary" attachedToRef="task"><bpmn:compensateEventDefinition /></bpmn:boundaryEvent>"#,
        r#"<bpmn:startEvent id="cond_start"><bpmn:conditionalEventDefinition /></bpmn:startEvent>"#,
        r#"<bpmn:intermediateCatchEvent id="msg_catch"><bpmn:messageEventDefinition messageRef="m" /></bpmn:intermediateCatchEvent>"#,
        r#"<bpmn:eventBasedGateway id="ebg" />"#,
        r#"<bpmn:callActivity id="call" />"#,
        r#"<bpmn:businessRuleTask id="brt" />"#,
        r#"<bpmn:sendTask id="send" />"#,
        r#"<bpmn:receiveTask id="receive" />"#,
        r#"<bpmn:task id="plain" />"#,
        r#"<bpmn:serviceTask id="mi"><bpmn:extensionElements><zeebe:taskDefinition type="t" /></bpmn:extensionElements><bpmn:multiInstanceLoopCharacteristics /></bpmn:serviceTask>"#,
        &task("task"),
        END,
        &flow("f1", "start", "complex"),
        &flow("f2", "complex", "task"),
        &flow("f3", "task", "end"),
        &flow("f4", "boundary", "end"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    for (id, kind) in [
        ("complex", "'complexGateway'"),
        (
            "cond_start",
            "'startEvent' with 'conditionalEventDefinition'",
        ),
    ] {
        has(&ps, id, &format!("the element kind {kind}"));
    }
    // a compensation boundary event needs its handler and has no flows
    has(
        &ps,
        "boundary",
        "must be associated with a compensation handler",
    );
    has(&ps, "boundary", "must not have outgoing sequence flows");
    has(
        &ps,
        "inner_start",
        "Start events in event sub-processes must have exactly one event definition",
    );
    // message elements need a message of the definitions
    has(
        &ps,
        "msg_catch",
        "Attribute 'messageRef' must reference a 'bpmn:message' of the definitions, but no message has the id 'm'",
    );
    has(
        &ps,
        "receive",
        "Must reference a message (attribute 'messageRef')",
    );
    // job-based tasks need their job's definition; undefined tasks ('plain') pass through
    has(
        &ps,
        "send",
        "Must have exactly one 'zeebe:taskDefinition' extension element",
    );
    has(
        &ps,
        "script",
        "Must have either one 'zeebe:script' or one 'zeebe:taskDefinition' extension element",
    );
    has(
        &ps,
        "brt",
        "Must have either one 'zeebe:calledDecision' or one 'zeebe:taskDefinition' extension element",
    );
    has(
        &ps,
        "mi",
        "Must have exactly one 'zeebe:loopCharacteristics' extension element",
    );
    has(
        &ps,
        "call",
        "Must have exactly one 'zeebe:calledElement' extension element",
    );
    // Nothing else: flows to unsupported elements are not reported as dangling.
    assert_eq!(ps.len(), 14, "{ps:#?}");
    has(
        &ps,
        "ebg",
        "Event-based gateway must have at least 2 outgoing sequence flows.",
    );
    let p = has(&ps, "complex", "'complexGateway'");
    assert_eq!(
        p.to_string(),
        "- Element: complex (line 5): the element kind 'complexGateway' is not supported by this version of Zest"
    );
    // Sorted by position.
    assert!(ps
        .windows(2)
        .all(|w| (w[0].line, w[0].column) <= (w[1].line, w[1].column)));
}

fn with_listeners(element_id: &str, listeners: &str) -> String {
    let xml = process(&simple_body());
    let at = xml.find(&format!("id=\"{element_id}\"")).unwrap();
    let close = at + xml[at..].find('>').unwrap();
    let self_closing = xml[..close].ends_with('/');
    let ext = format!(
        "<bpmn:extensionElements><zeebe:executionListeners>{listeners}</zeebe:executionListeners></bpmn:extensionElements>"
    );
    if self_closing {
        let tag = xml[..at].rfind('<').unwrap();
        let name: String = xml[tag + 1..]
            .chars()
            .take_while(|c| !c.is_whitespace())
            .collect();
        format!("{}>{ext}</{name}>{}", &xml[..close - 1], &xml[close + 1..])
    } else {
        format!("{}>{ext}{}", &xml[..close], &xml[close + 1..])
    }
}

#[test]
fn execution_listeners_are_read_in_document_order() {
    let xml = with_listeners(
        "task",
        r#"<zeebe:executionListener eventType="end" type="e" /><zeebe:executionListener eventType="start" type="=&quot;s&quot;" retries="5" /><zeebe:executionListener type="s2" />"#,
    );
    let p = parse_ok(&xml);
    let (_, task) = p.element_by_id("task").unwrap();
    let starts = task.listeners(ListenerEventType::Start);
    assert_eq!(starts.len(), 2, "eventType defaults to start");
    assert!(matches!(&starts[0].job.job_type, Expression::Feel(_)));
    assert!(matches!(&starts[0].job.retries, Expression::Static(r) if r == "5"));
    assert!(matches!(&starts[1].job.job_type, Expression::Static(t) if t == "s2"));
    assert!(matches!(&starts[1].job.retries, Expression::Static(r) if r == "3"));
    let ends = task.listeners(ListenerEventType::End);
    assert!(matches!(&ends[0].job.job_type, Expression::Static(t) if t == "e"));
    // at process level too
    let xml = process(&simple_body()).replace(
        "isExecutable=\"true\">",
        "isExecutable=\"true\"><bpmn:extensionElements><zeebe:executionListeners><zeebe:executionListener eventType=\"end\" type=\"pe\" /></zeebe:executionListeners></bpmn:extensionElements>",
    );
    let p = parse_ok(&xml);
    assert_eq!(p.element(Process::ROOT).execution_listeners.len(), 1);
}

#[test]
fn execution_listeners_zeebe_cannot_run_are_rejected() {
    let cases = [
        (
            "start",
            r#"<zeebe:executionListener eventType="start" type="l" />"#,
            "Execution listeners of type 'start' are not supported by start events",
        ),
        (
            "task",
            r#"<zeebe:executionListener eventType="end" type="l" /><zeebe:executionListener eventType="end" type="l" />"#,
            "Found '2' duplicates based on eventType[end] and type[l], these combinations should be unique.",
        ),
        (
            "task",
            r#"<zeebe:executionListener eventType="end" />"#,
            "Attribute 'type' must be present and not empty",
        ),
        (
            "task",
            r#"<zeebe:executionListener eventType="later" type="l" />"#,
            "Attribute 'eventType' of an execution listener must be 'start' or 'end', but is 'later'",
        ),
        (
            "task",
            r#"<zeebe:executionListener type="l" retries="many" />"#,
            "Attribute 'retries' must be an integer or an expression, but is 'many'",
        ),
    ];
    for (element, listeners, message) in cases {
        let ps = problems(&with_listeners(element, listeners));
        has(&ps, element, message);
    }
}

#[test]
fn unknown_zeebe_extensions_are_reported() {
    let body = simple_body().replace(
        "<zeebe:taskDefinition type=\"t\" />",
        "<zeebe:taskDefinition type=\"t\" /><zeebe:linkedResources />",
    );
    has(
        &problems(&process(&body)),
        "task",
        "'zeebe:linkedResources' on 'serviceTask' elements is not supported",
    );
}

// ---------------------------------------------------------------------------------------------
// Zeebe extensions

#[test]
fn task_definition() {
    let body = [
        START,
        r#"<bpmn:serviceTask id="task"><bpmn:extensionElements><zeebe:taskDefinition type="=&quot;job-&quot; + kind" retries="5" /></bpmn:extensionElements></bpmn:serviceTask>"#,
        r#"<bpmn:serviceTask id="task2"><bpmn:extensionElements><zeebe:taskDefinition type="t" retries="=count" /></bpmn:extensionElements></bpmn:serviceTask>"#,
        &flow("f1", "start", "task"),
        &flow("f2", "task", "task2"),
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    let td = p.element(idx(&p, "task")).task_definition.clone().unwrap();
    assert!(matches!(&td.job_type, Expression::Feel(e) if e.source() == "\"job-\" + kind"));
    assert_eq!(static_text(&td.retries), "5");
    let td = p.element(idx(&p, "task2")).task_definition.clone().unwrap();
    assert!(matches!(td.retries, Expression::Feel(_)));
}

#[test]
fn task_definition_problems() {
    let st = |id: &str, ext: &str| {
        format!(
            r#"<bpmn:serviceTask id="{id}"><bpmn:extensionElements>{ext}</bpmn:extensionElements></bpmn:serviceTask>"#
        )
    };
    let body = [
        START,
        r#"<bpmn:serviceTask id="none" />"#,
        &st("empty", r#"<zeebe:taskDefinition type="" />"#),
        &st("blank", r#"<zeebe:taskDefinition type="  " />"#),
        &st("missing", r#"<zeebe:taskDefinition retries="3" />"#),
        &st(
            "two",
            r#"<zeebe:taskDefinition type="a" /><zeebe:taskDefinition type="b" />"#,
        ),
        &st(
            "retries",
            r#"<zeebe:taskDefinition type="a" retries="many" />"#,
        ),
        &flow("f1", "start", "none"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(
        &ps,
        "none",
        "Must have exactly one 'zeebe:taskDefinition' extension element",
    );
    has(
        &ps,
        "empty",
        "Attribute 'type' must be present and not empty",
    );
    has(
        &ps,
        "blank",
        "Attribute 'type' must be present and not empty",
    );
    has(
        &ps,
        "missing",
        "Attribute 'type' must be present and not empty",
    );
    has(
        &ps,
        "two",
        "Must have exactly one 'zeebe:taskDefinition' extension element",
    );
    has(&ps, "retries", "Attribute 'retries' must be an integer");
    assert_eq!(ps.len(), 6, "{ps:#?}");
}

#[test]
fn io_mappings_and_headers() {
    let body = [
        r#"<bpmn:startEvent id="start"><bpmn:extensionElements><zeebe:ioMapping><zeebe:output source="=1" target="one" /></zeebe:ioMapping></bpmn:extensionElements></bpmn:startEvent>"#,
        r#"<bpmn:serviceTask id="task"><bpmn:extensionElements>
            <zeebe:taskDefinition type="t" />
            <zeebe:ioMapping>
              <zeebe:input source="=a" target="x" />
              <zeebe:input source="static" target="y.z" />
              <zeebe:input target="empty" />
              <zeebe:output source="=x + 1" target="result" />
              <zeebe:output source="=y" target="b" />
            </zeebe:ioMapping>
            <zeebe:taskHeaders><zeebe:header key="k1" value="v1" /><zeebe:header key="k2" value="" /><zeebe:header key="k0" /></zeebe:taskHeaders>
          </bpmn:extensionElements></bpmn:serviceTask>"#,
        r#"<bpmn:endEvent id="end"><bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="=2" target="two" /></zeebe:ioMapping></bpmn:extensionElements></bpmn:endEvent>"#,
        &flow("f1", "start", "task"),
        &flow("f2", "task", "end"),
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    let t = p.element(idx(&p, "task"));
    let inputs: Vec<(String, String)> = t
        .inputs
        .iter()
        .map(|m| (m.source.source(), m.target.clone()))
        .collect();
    assert_eq!(
        inputs,
        [
            ("=a".into(), "x".into()),
            ("static".into(), "y.z".into()),
            ("=null".into(), "empty".into())
        ]
    );
    let outputs: Vec<(String, String)> = t
        .outputs
        .iter()
        .map(|m| (m.source.source(), m.target.clone()))
        .collect();
    assert_eq!(
        outputs,
        [
            ("=x + 1".into(), "result".into()),
            ("=y".into(), "b".into())
        ]
    );
    assert_eq!(
        t.task_headers,
        [
            ("k1".into(), "v1".into()),
            ("k2".into(), "".into()),
            ("k0".into(), "".into())
        ]
    );
    assert_eq!(p.element(idx(&p, "start")).outputs.len(), 1);
    // Zeebe 8.8 evaluates no input mappings of a none end event: accepted, left out
    assert_eq!(p.element(idx(&p, "end")).inputs.len(), 0);
}

#[test]
fn io_mapping_problems() {
    let body = [
        r#"<bpmn:startEvent id="start"><bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="=1" target="one" /></zeebe:ioMapping></bpmn:extensionElements></bpmn:startEvent>"#,
        r#"<bpmn:serviceTask id="task"><bpmn:extensionElements>
            <zeebe:taskDefinition type="t" />
            <zeebe:ioMapping>
              <zeebe:input source="=a" />
              <zeebe:input source="=a" target="" />
              <zeebe:output target="x" />
            </zeebe:ioMapping>
            <zeebe:taskHeaders><zeebe:header value="v" /></zeebe:taskHeaders>
          </bpmn:extensionElements></bpmn:serviceTask>"#,
        r#"<bpmn:exclusiveGateway id="gw"><bpmn:extensionElements><zeebe:ioMapping /></bpmn:extensionElements></bpmn:exclusiveGateway>"#,
        r#"<bpmn:endEvent id="end"><bpmn:extensionElements><zeebe:ioMapping><zeebe:output source="=2" target="two" /></zeebe:ioMapping></bpmn:extensionElements></bpmn:endEvent>"#,
        &flow("f1", "start", "task"),
        &flow("f2", "task", "gw"),
        &flow("f3", "gw", "end"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(
        &ps,
        "start",
        "input mappings ('zeebe:input') on 'startEvent' elements are not supported",
    );
    let p = has(
        &ps,
        "task",
        "Attribute 'target' must be present and not empty",
    );
    assert_eq!(p.line, 8);
    assert_eq!(
        ps.iter().filter(|p| p.message.contains("'target'")).count(),
        2
    );
    has(
        &ps,
        "task",
        "Attribute 'source' must be present and not empty",
    );
    has(
        &ps,
        "task",
        "Attribute 'key' of 'zeebe:header' must be present",
    );
    has(
        &ps,
        "gw",
        "('zeebe:ioMapping') on 'exclusiveGateway' elements are not supported",
    );
    // output mappings on an end event are Zeebe's (tests/anchor/scenarios/end_output)
    assert!(!ps.iter().any(|p| p.element_id.as_deref() == Some("end")));
    assert_eq!(ps.len(), 6, "{ps:#?}");
}

// ---------------------------------------------------------------------------------------------
// Timers

fn timer_event(id: &str, def: &str) -> String {
    format!(
        r#"<bpmn:intermediateCatchEvent id="{id}"><bpmn:timerEventDefinition>{def}</bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>"#
    )
}

#[test]
fn timers() {
    let body = [
        START,
        &timer_event("dur", "<bpmn:timeDuration xsi:type=\"bpmn:tFormalExpression\">\n  PT0.5S\n</bpmn:timeDuration>"),
        &timer_event("date", "<bpmn:timeDate>2024-01-01T10:00:00+01:00[Europe/Berlin]</bpmn:timeDate>"),
        &timer_event("feel", "<bpmn:timeDuration>=duration(\"PT\" + n + \"S\")</bpmn:timeDuration>"),
        &timer_event("cdata", "<bpmn:timeDuration><![CDATA[PT1M]]></bpmn:timeDuration>"),
        &flow("f1", "start", "dur"),
        &flow("f2", "dur", "date"),
        &flow("f3", "date", "feel"),
        &flow("f4", "feel", "cdata"),
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    match &p.element(idx(&p, "dur")).timer {
        Some(TimerDefinition::Duration(e)) => assert_eq!(static_text(e), "PT0.5S"),
        other => panic!("{other:?}"),
    }
    match &p.element(idx(&p, "date")).timer {
        Some(TimerDefinition::Date(e)) => {
            assert_eq!(static_text(e), "2024-01-01T10:00:00+01:00[Europe/Berlin]")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &p.element(idx(&p, "feel")).timer,
        Some(TimerDefinition::Duration(Expression::Feel(_)))
    ));
    match &p.element(idx(&p, "cdata")).timer {
        Some(TimerDefinition::Duration(e)) => assert_eq!(static_text(e), "PT1M"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn timer_problems() {
    let body = [
        START,
        &timer_event("bad_dur", "<bpmn:timeDuration>PTX</bpmn:timeDuration>"),
        &timer_event("bad_date", "<bpmn:timeDate>2024-13-01T00:00:00Z</bpmn:timeDate>"),
        &timer_event("cycle", "<bpmn:timeCycle>R5/PT1S</bpmn:timeCycle>"),
        &timer_event("two", "<bpmn:timeDuration>PT1S</bpmn:timeDuration><bpmn:timeDate>2024-01-01T00:00:00Z</bpmn:timeDate>"),
        &timer_event("zero", ""),
        &timer_event("empty", "<bpmn:timeDuration>  </bpmn:timeDuration>"),
        r#"<bpmn:intermediateCatchEvent id="nodef" />"#,
        &flow("f1", "start", "bad_dur"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(&ps, "bad_dur", "Invalid timer duration 'PTX'");
    has(&ps, "bad_date", "Invalid timer date '2024-13-01T00:00:00Z'");
    has(
        &ps,
        "cycle",
        "Intermediate timer catch event must have either a time duration or a time date.",
    );
    has(
        &ps,
        "two",
        "Must be exactly one type of timer: timeDuration, timeDate or timeCycle",
    );
    has(&ps, "zero", "Must be exactly one type of timer");
    has(&ps, "empty", "Invalid timer duration ''");
    has(&ps, "nodef", "Must have exactly one event definition");
    assert_eq!(ps.len(), 7, "{ps:#?}");
}

// ---------------------------------------------------------------------------------------------
// Flows, gateways, events

#[test]
fn conditions_and_default_flows() {
    let body = [
        START,
        r#"<bpmn:exclusiveGateway id="gw" default="fd" />"#,
        &task("a"),
        &task("b"),
        &task("c"),
        &flow("f0", "start", "gw"),
        &cond_flow("fa", "gw", "a", "\n  = x &gt; 1\n"),
        &cond_flow("fb", "gw", "b", "=x &lt; 0"),
        &flow("fd", "gw", "c"),
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    let gw = p.element(idx(&p, "gw"));
    assert_eq!(gw.default_flow, Some(flow_idx(&p, "fd")));
    assert_eq!(
        p.flow(flow_idx(&p, "fa"))
            .condition
            .as_ref()
            .unwrap()
            .source(),
        "=x > 1"
    );
    assert!(p.flow(flow_idx(&p, "fd")).condition.is_none());
    // A single unconditional outgoing flow needs no condition.
    let body = [
        START,
        r#"<bpmn:exclusiveGateway id="gw" />"#,
        &task("a"),
        &flow("f0", "start", "gw"),
        &flow("f1", "gw", "a"),
    ]
    .join("\n");
    parse_ok(&process(&body));
}

#[test]
fn exclusive_gateway_problems() {
    let body = [
        START,
        r#"<bpmn:exclusiveGateway id="gw" default="f_other" />"#,
        r#"<bpmn:exclusiveGateway id="gw2" default="nope" />"#,
        r#"<bpmn:exclusiveGateway id="dead_end" />"#,
        r#"<bpmn:parallelGateway id="par_dead_end" />"#,
        &task("a"),
        &task("b"),
        &flow("f0", "start", "gw"),
        &flow("f1", "gw", "a"),
        &cond_flow("f2", "gw", "b", "=ok"),
        &flow("f3", "gw", "dead_end"),
        &flow("f_other", "a", "gw2"),
        &flow("f4", "gw2", "par_dead_end"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(&ps, "f1", "Must have a condition or be default flow");
    has(&ps, "f3", "Must have a condition or be default flow");
    has(&ps, "gw", "Default flow must start at gateway");
    has(
        &ps,
        "gw2",
        "Default flow 'nope' does not reference a sequence flow",
    );
    // gateways without outgoing flows are accepted, as Zeebe accepts them (the token ends)
    assert!(!ps
        .iter()
        .any(|p| p.message.contains("outgoing sequence flow")));
    assert_eq!(ps.len(), 4, "{ps:#?}");
    let p = has(&ps, "f1", "condition");
    assert_eq!((p.line, p.column), (4 + 8, 1));
}

#[test]
fn condition_problems() {
    let body = [
        START,
        r#"<bpmn:exclusiveGateway id="gw" />"#,
        &task("a"),
        &task("b"),
        &task("c"),
        &flow("f0", "start", "gw"),
        &cond_flow("static", "gw", "a", "x > 1"),
        &cond_flow("empty", "gw", "b", "  "),
        &cond_flow("on_task", "a", "c", "=true"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(&ps, "static", "Expected expression but found static value 'x > 1'. An expression must start with '=' (e.g. '=x > 1').");
    has(&ps, "empty", "Condition expression must not be empty");
    has(
        &ps,
        "on_task",
        "conditions on sequence flows leaving 'serviceTask' elements are not supported",
    );
    // The broken conditions are not also reported as missing.
    assert_eq!(ps.len(), 3, "{ps:#?}");
}

#[test]
fn start_events() {
    let ps = problems(&process(
        &[&task("a") as &str, END, &flow("f", "a", "end")].join("\n"),
    ));
    has(&ps, "p", "Must have at least one start event");
    let p = has(&ps, "p", "start event");
    assert_eq!(p.line, 3);

    let body = [
        START,
        r#"<bpmn:startEvent id="start2" />"#,
        END,
        &flow("f1", "start", "end"),
        &flow("f2", "start2", "end"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(&ps, "p", "Multiple none start events are not allowed");
    assert_eq!(ps.len(), 1);

    let body = [
        START,
        &task("a"),
        &flow("f1", "start", "a"),
        &flow("f2", "a", "start"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(
        &ps,
        "start",
        "Start events must not have incoming sequence flows",
    );
    assert_eq!(ps.len(), 1);

    let p = parse_ok(&process(&simple_body()));
    assert_eq!(p.element(Process::ROOT).start_events, [idx(&p, "start")]);
}

#[test]
fn end_event_without_outgoing() {
    let body = [
        START,
        END,
        &task("a"),
        &flow("f1", "start", "end"),
        &flow("f2", "end", "a"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(
        &ps,
        "end",
        "End events must not have outgoing sequence flows to other elements.",
    );
    assert_eq!(ps.len(), 1);
}

#[test]
fn dangling_flow_references() {
    let body = [
        &simple_body() as &str,
        &flow("f3", "task", "ghost"),
        &flow("f4", "phantom", "end"),
        r#"<bpmn:sequenceFlow id="f5" targetRef="end" />"#,
        &flow("f6", "p", "end"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(
        &ps,
        "f3",
        "sequence flow 'f3' references missing element 'ghost'",
    );
    has(
        &ps,
        "f4",
        "sequence flow 'f4' references missing element 'phantom'",
    );
    has(
        &ps,
        "f5",
        "Attribute 'sourceRef' must reference a valid flow node",
    );
    has(&ps, "f6", "references missing element 'p'");
    assert_eq!(ps.len(), 4, "{ps:#?}");
}

#[test]
fn duplicate_ids() {
    let body = [
        &simple_body() as &str,
        &task("task"),
        &flow("f1", "task", "end"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    let dups: Vec<&Problem> = ps
        .iter()
        .filter(|p| p.message.contains("Duplicate id"))
        .collect();
    assert_eq!(dups.len(), 2, "{ps:#?}");
    has(&ps, "task", "Duplicate id 'task': already used on line 5");
    has(&ps, "f1", "Duplicate id 'f1'");
}

#[test]
fn missing_ids() {
    let body = [
        START,
        r#"<bpmn:serviceTask name="x" />"#,
        r#"<bpmn:sequenceFlow sourceRef="start" targetRef="start" />"#,
    ]
    .join("\n");
    let ps = problems(&process(&body));
    assert_eq!(ps.len(), 2, "{ps:#?}");
    assert!(ps
        .iter()
        .all(|p| p.element_id.is_none() && p.message.contains("no 'id' attribute")));
}

#[test]
fn all_problems_are_collected() {
    let body = [
        r#"<bpmn:complexGateway id="u" />"#,
        r#"<bpmn:serviceTask id="t" />"#,
        &timer_event("tm", "<bpmn:timeDuration>PTX</bpmn:timeDuration>"),
        &flow("f", "t", "missing"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(&ps, "p", "Must have at least one start event");
    has(&ps, "u", "'complexGateway'");
    has(&ps, "t", "zeebe:taskDefinition");
    has(&ps, "tm", "Invalid timer duration 'PTX'");
    has(&ps, "f", "missing element 'missing'");
    assert_eq!(ps.len(), 5, "{ps:#?}");
}

// ---------------------------------------------------------------------------------------------
// Never panic

/// A model touching every feature of the parser.
fn rich_model() -> String {
    let body = [
        r#"<bpmn:startEvent id="start" name="s"><bpmn:extensionElements><zeebe:ioMapping><zeebe:output source="=1" target="one" /></zeebe:ioMapping></bpmn:extensionElements></bpmn:startEvent>"#,
        r#"<bpmn:serviceTask id="task"><bpmn:extensionElements><zeebe:taskDefinition type="=t" retries="2" /><zeebe:ioMapping><zeebe:input source="=a" target="x" /><zeebe:output source="=x" target="y" /></zeebe:ioMapping><zeebe:taskHeaders><zeebe:header key="k" value="v" /></zeebe:taskHeaders></bpmn:extensionElements></bpmn:serviceTask>"#,
        r#"<bpmn:exclusiveGateway id="gw" default="fd" />"#,
        r#"<bpmn:parallelGateway id="fork" />"#,
        r#"<bpmn:parallelGateway id="join" />"#,
        &timer_event("t1", "<bpmn:timeDuration>PT1M</bpmn:timeDuration>"),
        &timer_event("t2", "<bpmn:timeDate>2024-01-01T00:00:00Z</bpmn:timeDate>"),
        END,
        r#"<bpmn:userTask id="u"><bpmn:extensionElements><zeebe:assignmentDefinition assignee="=a" candidateGroups="g1, g2" /><zeebe:formDefinition formKey="k" /><zeebe:taskSchedule dueDate="2030-01-01T00:00:00Z" /></bpmn:extensionElements></bpmn:userTask>"#,
        &flow("f0", "start", "task"),
        &flow("f1", "task", "gw"),
        &cond_flow("fc", "gw", "fork", "= x = 1"),
        &flow("fd", "gw", "end"),
        &flow("fa", "fork", "t1"),
        &flow("fb", "fork", "t2"),
        &flow("fj1", "t1", "join"),
        &flow("fj2", "t2", "join"),
        &flow("fe", "join", "u"),
    ]
    .join("\n");
    process(&body)
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn fuzz(seed_model: &[u8], prefix_step: usize, mutations: usize) {
    // Every prefix (truncated uploads).
    let mut len = 0;
    while len <= seed_model.len() {
        let _ = parse_bpmn("fuzz.bpmn", &seed_model[..len]);
        len += prefix_step;
    }
    // Random byte mutations, deletions, insertions and duplicated slices.
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D ^ seed_model.len() as u64);
    let interesting: &[&[u8]] = &[
        b"<",
        b">",
        b"/>",
        b"\"",
        b"=",
        b"&",
        b"&amp;",
        b"]]>",
        b"<![CDATA[",
        b"\xff",
        b"\xc3",
        b"\xe2\x80",
        b"id=\"task\"",
        b"sourceRef=\"x\"",
        b"default=\"\"",
        b"PT",
        b"R/",
        b"<bpmn:userTask id=\"q\"/>",
        b"\n",
        b"\0",
        b"<!--",
        b"-->",
        b"xmlns=\"\"",
    ];
    for _ in 0..mutations {
        let mut m = seed_model.to_vec();
        for _ in 0..=rng.below(4) {
            let pos = rng.below(m.len() + 1);
            match rng.below(5) {
                0 if !m.is_empty() => {
                    let p = pos.min(m.len() - 1);
                    m[p] = rng.next() as u8;
                }
                1 if !m.is_empty() => {
                    let end = (pos + rng.below(40)).min(m.len());
                    m.drain(pos.min(end)..end);
                }
                2 => {
                    let ins = interesting[rng.below(interesting.len())];
                    m.splice(pos..pos, ins.iter().copied());
                }
                3 if !m.is_empty() => {
                    let start = rng.below(m.len());
                    let end = (start + rng.below(200)).min(m.len());
                    let chunk = m[start..end].to_vec();
                    m.splice(pos..pos, chunk);
                }
                _ => m.truncate(pos),
            }
        }
        if let Err(e) = parse_bpmn("fuzz.bpmn", &m) {
            assert!(!e.problems.is_empty());
            let _ = e.to_string();
        }
    }
}

#[test]
fn never_panics_on_truncated_or_mutated_input() {
    let model = rich_model();
    // The rich model itself is valid.
    parse_ok(&model);
    fuzz(model.as_bytes(), 1, 3000);
    if let Some(xml) = workload("typical_process.bpmn") {
        fuzz(&xml, 7, 500);
    }
    if let Some(xml) = workload("realistic/bankCustomerComplaintDisputeHandling.bpmn") {
        fuzz(&xml, xml.len() / 40, 0);
    }
}

#[test]
fn feel_parse_errors_are_reported() {
    let bad = "a +* (";
    assert!(
        zest_feel::Expression::parse(bad).is_err(),
        "the FEEL implementation must reject '{bad}'"
    );
    let body = [
        START,
        &task("task").replace(r#"type="t""#, &format!(r#"type="={bad}""#)),
        r#"<bpmn:exclusiveGateway id="gw" />"#,
        &flow("f0", "start", "gw"),
        &cond_flow("f1", "gw", "task", &format!("={bad}")),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    let p = has(&ps, "task", "Attribute 'type': ");
    assert!(p.message.contains(bad), "{p:?}");
    let p = has(&ps, "f1", "Condition: ");
    assert!(p.message.contains(bad), "{p:?}");
    assert_eq!(ps.len(), 2, "{ps:#?}");
}

#[test]
fn no_executable_process_is_reported_with_other_problems() {
    let xml = r#"<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL">
<bpmn:message id="m" /><bpmn:message id="m" />
<bpmn:process id="p"><bpmn:startEvent id="s" /></bpmn:process>
</bpmn:definitions>"#;
    let ps = problems(xml);
    has(&ps, "m", "Duplicate id 'm'");
    assert!(
        ps.iter()
            .any(|p| p.message.contains("no executable process")),
        "{ps:#?}"
    );
}

#[test]
fn embedded_sub_processes_are_scopes() {
    let body = [
        START,
        r#"<bpmn:subProcess id="sub">
             <bpmn:startEvent id="sub_start" />
             <bpmn:serviceTask id="inner"><bpmn:extensionElements><zeebe:taskDefinition type="t" /></bpmn:extensionElements></bpmn:serviceTask>
             <bpmn:endEvent id="sub_end" />
             <bpmn:sequenceFlow id="s1" sourceRef="sub_start" targetRef="inner" />
             <bpmn:sequenceFlow id="s2" sourceRef="inner" targetRef="sub_end" />
           </bpmn:subProcess>"#,
        END,
        &flow("f1", "start", "sub"),
        &flow("f2", "sub", "end"),
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    let sub = idx(&p, "sub");
    assert!(matches!(p.element(sub).kind, ElementKind::SubProcess));
    assert_eq!(p.element(sub).start_events, vec![idx(&p, "sub_start")]);
    assert_eq!(p.element(idx(&p, "inner")).flow_scope, Some(sub));
    assert_eq!(
        p.element(Process::ROOT).start_events,
        vec![idx(&p, "start")]
    );

    // no start event inside, a message start inside, and a flow leaving the sub-process
    let body = [
        START,
        r#"<bpmn:subProcess id="empty"><bpmn:task id="t1" /></bpmn:subProcess>"#,
        r#"<bpmn:subProcess id="msg"><bpmn:startEvent id="ms"><bpmn:messageEventDefinition /></bpmn:startEvent><bpmn:startEvent id="ok_start" /></bpmn:subProcess>"#,
        END,
        &flow("f1", "start", "empty"),
        &flow("f2", "empty", "msg"),
        &flow("f3", "msg", "end"),
        &flow("out", "t1", "end"),
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(
        &ps,
        "empty",
        "Must have exactly one none start event, but the sub-process has 0",
    );
    has(
        &ps,
        "ms",
        "Start events in sub-processes must be of type none",
    );
    has(
        &ps,
        "out",
        "A sequence flow must connect elements of the same scope",
    );
    assert_eq!(ps.len(), 3, "{ps:#?}");
}

fn mi_task(loop_attrs: &str, inner: &str, sequential: bool) -> String {
    let seq = if sequential {
        r#" isSequential="true""#
    } else {
        ""
    };
    process(
        &[
            START,
            &format!(
                r#"<bpmn:serviceTask id="mi"><bpmn:extensionElements><zeebe:taskDefinition type="t" /></bpmn:extensionElements><bpmn:multiInstanceLoopCharacteristics{seq}><bpmn:extensionElements><zeebe:loopCharacteristics {loop_attrs} /></bpmn:extensionElements>{inner}</bpmn:multiInstanceLoopCharacteristics></bpmn:serviceTask>"#
            ),
            END,
            &flow("f1", "start", "mi"),
            &flow("f2", "mi", "end"),
        ]
        .join("\n"),
    )
}

#[test]
fn multi_instance_loop_characteristics_are_read() {
    let xml = mi_task(
        r#"inputCollection="=items" inputElement="item" outputCollection="results" outputElement="=result.value""#,
        r#"<bpmn:completionCondition xsi:type="bpmn:tFormalExpression" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">=numberOfCompletedInstances &gt; 1</bpmn:completionCondition>"#,
        true,
    );
    let ps = parse_bpmn("mi.bpmn", xml.as_bytes()).unwrap();
    let el = ps[0].element(idx(&ps[0], "mi"));
    let mi = el.multi_instance.as_ref().expect("multi-instance");
    assert!(mi.sequential);
    assert_eq!(mi.input_collection.source(), "=items");
    assert_eq!(mi.input_element.as_deref(), Some("item"));
    assert_eq!(mi.output_collection.as_deref(), Some("results"));
    // an output element that is a path into a variable: that variable starts as a local null
    assert_eq!(mi.output_element_variable(), Some("result"));
    assert!(mi.completion_condition.is_some());
}

#[test]
fn multi_instance_mistakes_are_reported() {
    let cases = [
        (mi_task("", "", false), "Attribute 'inputCollection' must be present and not empty"),
        (
            mi_task(r#"inputCollection="items""#, "", false),
            "Attribute 'inputCollection' must be a FEEL expression (starting with '='), but was 'items'",
        ),
        (
            mi_task(r#"inputCollection="=items" outputCollection="out""#, "", false),
            "Attribute 'outputElement' must be present if the attribute 'outputCollection' is set",
        ),
        (
            mi_task(r#"inputCollection="=items" outputElement="=x""#, "", false),
            "Attribute 'outputCollection' must be present if the attribute 'outputElement' is set",
        ),
        (
            mi_task(r#"inputCollection="=[1,""#, "", false),
            "Attribute 'inputCollection'",
        ),
    ];
    for (xml, expected) in cases {
        let ps = problems(&xml);
        has(&ps, "mi", expected);
    }
    // a loopCardinality beside zeebe:loopCharacteristics is ignored, as in Zeebe
    let with_cardinality = mi_task(
        r#"inputCollection="=items""#,
        "<bpmn:loopCardinality>3</bpmn:loopCardinality>",
        false,
    );
    assert!(parse_bpmn("test.bpmn", with_cardinality.as_bytes()).is_ok());
    let standard = process(
        &[
            START,
            r#"<bpmn:task id="mi"><bpmn:standardLoopCharacteristics /></bpmn:task>"#,
            END,
            &flow("f1", "start", "mi"),
            &flow("f2", "mi", "end"),
        ]
        .join("\n"),
    );
    has(
        &problems(&standard),
        "mi",
        "loops ('standardLoopCharacteristics') are not supported",
    );
}

#[test]
fn event_sub_processes_subscribe_on_their_scope() {
    let esp = |id: &str, interrupting: &str, def: &str| {
        format!(
            r#"<bpmn:subProcess id="{id}" triggeredByEvent="true"><bpmn:startEvent id="{id}_s" isInterrupting="{interrupting}">{def}</bpmn:startEvent><bpmn:sequenceFlow id="{id}_f" sourceRef="{id}_s" targetRef="{id}_e" /><bpmn:endEvent id="{id}_e" /></bpmn:subProcess>"#
        )
    };
    let timer = "<bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition>";
    let body = [
        START,
        &task("task"),
        END,
        &flow("f1", "start", "task"),
        &flow("f2", "task", "end"),
        &esp("late", "false", timer),
        &esp("failed", "true", r#"<bpmn:errorEventDefinition />"#),
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    let late = p.element(idx(&p, "late"));
    assert_eq!(late.element_type, BpmnElementType::EventSubProcess);
    assert!(matches!(late.kind, ElementKind::SubProcess));
    assert_eq!(late.start_events, vec![idx(&p, "late_s")]);
    let start = p.element(idx(&p, "late_s"));
    assert!(matches!(start.kind, ElementKind::EventSubProcessStart));
    assert_eq!(start.event_type, BpmnEventType::Timer);
    assert!(!start.interrupting);
    assert!(p.element(idx(&p, "failed_s")).interrupting);
    assert_eq!(p.element(idx(&p, "failed_s")).error_code, None);
    // the process holds its event sub-processes' start events, in document order
    assert_eq!(
        p.element(Process::ROOT).event_sub_process_starts,
        vec![idx(&p, "late_s"), idx(&p, "failed_s")]
    );
}

#[test]
fn bad_event_sub_processes_are_reported() {
    let body = [
        START,
        &task("task"),
        END,
        &flow("f1", "start", "task"),
        &flow("f2", "task", "end"),
        // an error start event must interrupt
        r#"<bpmn:subProcess id="a" triggeredByEvent="true"><bpmn:startEvent id="a_s" isInterrupting="false"><bpmn:errorEventDefinition /></bpmn:startEvent></bpmn:subProcess>"#,
        // two start events
        r#"<bpmn:subProcess id="b" triggeredByEvent="true"><bpmn:startEvent id="b1"><bpmn:errorEventDefinition /></bpmn:startEvent><bpmn:startEvent id="b2"><bpmn:errorEventDefinition /></bpmn:startEvent></bpmn:subProcess>"#,
        // sequence flows into an event sub-process
        r#"<bpmn:subProcess id="c" triggeredByEvent="true"><bpmn:startEvent id="c_s"><bpmn:errorEventDefinition /></bpmn:startEvent></bpmn:subProcess>"#,
        &flow("f3", "task", "c"),
        // no boundary events on an event sub-process
        r#"<bpmn:boundaryEvent id="d" attachedToRef="c"><bpmn:errorEventDefinition /></bpmn:boundaryEvent>"#,
        // a start event without an event definition
        r#"<bpmn:subProcess id="e" triggeredByEvent="true"><bpmn:startEvent id="e_s" /></bpmn:subProcess>"#,
    ]
    .join("\n");
    let ps = problems(&process(&body));
    has(&ps, "a_s", "must be interrupting");
    has(
        &ps,
        "b",
        "Must have exactly one start event, but the event sub-process has 2",
    );
    has(
        &ps,
        "c",
        "An event sub-process must not have incoming or outgoing sequence flows",
    );
    has(
        &ps,
        "d",
        "is an event sub-process, which cannot have boundary events",
    );
    has(
        &ps,
        "e_s",
        "Start events in event sub-processes must have exactly one event definition",
    );
}

fn compensable(handler_attrs: &str, extra: &str) -> String {
    let body = [
        START,
        &task("task"),
        r#"<bpmn:boundaryEvent id="undo" attachedToRef="task"><bpmn:compensateEventDefinition /></bpmn:boundaryEvent>"#,
        &format!(
            r#"<bpmn:serviceTask id="handler" {handler_attrs}><bpmn:extensionElements><zeebe:taskDefinition type="h" /></bpmn:extensionElements></bpmn:serviceTask>"#
        ),
        r#"<bpmn:intermediateThrowEvent id="throw"><bpmn:compensateEventDefinition activityRef="task" /></bpmn:intermediateThrowEvent>"#,
        END,
        &flow("f1", "start", "task"),
        &flow("f2", "task", "throw"),
        &flow("f3", "throw", "end"),
        extra,
        r#"<bpmn:association id="a" sourceRef="undo" targetRef="handler" />"#,
    ]
    .join("\n");
    process(&body)
}

#[test]
fn compensation_links_boundary_events_to_their_handlers() {
    let p = parse_ok(&compensable(r#"isForCompensation="true""#, ""));
    let (_, task) = p.element_by_id("task").unwrap();
    let boundary = p.element(task.compensation_boundary.expect("compensable"));
    assert!(matches!(boundary.kind, ElementKind::CompensationBoundary));
    assert!(
        task.boundary_events.is_empty(),
        "not an event to subscribe to"
    );
    let handler = p.element(boundary.compensation_handler.expect("a handler"));
    assert_eq!(handler.id, "handler");
    assert!(handler.is_for_compensation);
    assert_eq!(handler.event_type, BpmnEventType::Compensation);
    let (_, throw) = p.element_by_id("throw").unwrap();
    assert!(matches!(throw.kind, ElementKind::CompensationThrowEvent));
    assert_eq!(throw.compensation_activity.as_deref(), Some("task"));
}

#[test]
fn bad_compensation_is_reported() {
    // the associated activity is not a compensation handler
    let ps = problems(&compensable("", ""));
    has(
        &ps,
        "undo",
        "must be associated with a compensation handler",
    );
    // a handler takes no sequence flows
    let ps = problems(&compensable(
        r#"isForCompensation="true""#,
        &flow("f4", "handler", "end"),
    ));
    has(
        &ps,
        "handler",
        "must not have incoming or outgoing sequence flows",
    );
    // activityRef names an activity of the throw event's scope
    let ps = problems(
        &compensable(r#"isForCompensation="true""#, "")
            .replace(r#"activityRef="task""#, r#"activityRef="nope""#),
    );
    has(
        &ps,
        "throw",
        "Attribute 'activityRef' must reference an activity",
    );
}

#[test]
fn ad_hoc_sub_process_lists_its_activities_and_their_metadata() {
    let body = [
        START,
        r#"<bpmn:adHocSubProcess id="ah" cancelRemainingInstances="false">
  <bpmn:extensionElements><zeebe:adHoc activeElementsCollection="=ids" outputCollection="results" outputElement="=r" /></bpmn:extensionElements>
  <bpmn:serviceTask id="a" name="Task A"><bpmn:documentation>Does A</bpmn:documentation><bpmn:extensionElements><zeebe:taskDefinition type="t" /><zeebe:properties><zeebe:property name="z" value="1" /><zeebe:property name="a" value="2" /></zeebe:properties></bpmn:extensionElements></bpmn:serviceTask>
  <bpmn:task id="b" />
  <bpmn:task id="after_a" />
  <bpmn:sequenceFlow id="ia" sourceRef="a" targetRef="after_a" />
  <bpmn:completionCondition xsi:type="bpmn:tFormalExpression">=done</bpmn:completionCondition>
</bpmn:adHocSubProcess>"#,
        END,
        &flow("f1", "start", "ah"),
        &flow("f2", "ah", "end"),
    ]
    .join("\n");
    let p = parse_ok(&process(&body));
    let (ah_idx, ah) = p.element_by_id("ah").unwrap();
    assert!(matches!(ah.kind, ElementKind::AdHocSubProcess));
    let ad_hoc = ah.ad_hoc.as_ref().unwrap();
    assert!(!ad_hoc.cancel_remaining_instances);
    assert!(ad_hoc.active_elements_collection.is_some());
    assert!(ad_hoc.completion_condition.is_some());
    assert_eq!(ad_hoc.output_collection.as_deref(), Some("results"));
    assert_eq!(ad_hoc.output_element_variable(), Some("r"));
    // the inner instance is the flow scope of the elements inside
    let inner = p.element(ad_hoc.inner);
    assert_eq!(inner.id, "ah#innerInstance");
    assert!(matches!(inner.kind, ElementKind::AdHocInnerInstance));
    assert_eq!(inner.flow_scope, Some(ah_idx));
    assert_eq!(
        p.element_by_id("after_a").unwrap().1.flow_scope,
        Some(ad_hoc.inner)
    );
    // only elements without incoming flows can be activated
    let ids: Vec<&str> = ad_hoc
        .activities
        .iter()
        .map(|&i| p.element(i).id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(
        ad_hoc.elements_variable.to_string(),
        r#"[{"elementId":"a","elementName":"Task A","documentation":"Does A","properties":{"z":"1","a":"2"}},{"elementId":"b"}]"#
    );
}

#[test]
fn ad_hoc_sub_process_problems() {
    let wrap = |inner: &str| {
        process(
            &[
                START,
                &format!(r#"<bpmn:adHocSubProcess id="ah">{inner}</bpmn:adHocSubProcess>"#),
                END,
                &flow("f1", "start", "ah"),
                &flow("f2", "ah", "end"),
            ]
            .join("\n"),
        )
    };
    has(
        &problems(&wrap("")),
        "ah",
        "Must have at least one activity.",
    );
    has(
        &problems(&wrap(r#"<bpmn:startEvent id="s2" /><bpmn:task id="t" />"#)),
        "ah",
        "Must not contain a start event.",
    );
    has(
        &problems(&wrap(r#"<bpmn:task id="t" /><bpmn:endEvent id="e2" />"#)),
        "ah",
        "Must not contain an end event.",
    );
    has(
        &problems(&wrap(
            r#"<bpmn:extensionElements><zeebe:taskDefinition type="agent" /><zeebe:adHoc activeElementsCollection="=[&quot;t&quot;]" /></bpmn:extensionElements><bpmn:task id="t" /><bpmn:completionCondition>=true</bpmn:completionCondition>"#,
        )),
        "ah",
        "Must not define completionCondition in combination with zeebe:taskDefinition.",
    );
    has(
        &problems(&wrap(
            r#"<bpmn:extensionElements><zeebe:taskDefinition type="agent" /><zeebe:adHoc activeElementsCollection="=[&quot;t&quot;]" /></bpmn:extensionElements><bpmn:task id="t" />"#,
        )),
        "ah",
        "Must not define activeElementsCollection in combination with zeebe:taskDefinition.",
    );
    has(
        &problems(&wrap(
            r#"<bpmn:extensionElements><zeebe:taskDefinition type="agent" /><zeebe:taskDefinition type="other" /></bpmn:extensionElements><bpmn:task id="t" />"#,
        )),
        "ah",
        "Must have exactly one 'zeebe:taskDefinition' extension element",
    );
    has(
        &problems(&wrap(
            r#"<bpmn:task id="t" /><bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:startEvent><bpmn:endEvent id="ee" /><bpmn:sequenceFlow id="ef" sourceRef="es" targetRef="ee" /></bpmn:subProcess>"#,
        )),
        "esp",
        "An interrupting event subprocess is not allowed inside an ad-hoc subprocess",
    );
    // a non-interrupting one is fine: it belongs to the sub-process, not to its inner instance
    let ok = wrap(
        r#"<bpmn:extensionElements><zeebe:adHoc activeElementsCollection="=[&quot;t&quot;]" /></bpmn:extensionElements><bpmn:task id="t" /><bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es" isInterrupting="false"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:startEvent><bpmn:endEvent id="ee" /><bpmn:sequenceFlow id="ef" sourceRef="es" targetRef="ee" /></bpmn:subProcess>"#,
    );
    let model = parse_bpmn("test.bpmn", ok.as_bytes()).expect("a non-interrupting one deploys");
    let p = &model[0];
    let (ah, el) = p.element_by_id("ah").unwrap();
    let (es, _) = p.element_by_id("es").unwrap();
    assert_eq!(el.event_sub_process_starts, vec![es]);
    assert_eq!(p.element_by_id("esp").unwrap().1.flow_scope, Some(ah));
    let activities: Vec<&str> = el
        .ad_hoc
        .as_ref()
        .unwrap()
        .activities
        .iter()
        .map(|&i| p.element(i).id.as_str())
        .collect();
    assert_eq!(activities, ["t"]);
    has(
        &problems(&wrap(
            r#"<bpmn:extensionElements><zeebe:adHoc outputCollection="results" /></bpmn:extensionElements><bpmn:task id="t" />"#,
        )),
        "ah",
        "Attribute 'outputElement' must be present",
    );
}
