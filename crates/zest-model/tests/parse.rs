//! Parser and validator tests: the benchmark workloads, one inline model per validation rule,
//! malformed input, and a deterministic no-panic fuzz loop.

mod support;

use support::*;
use zest_model::*;

// ---------------------------------------------------------------------------------------------
// Workloads

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
