//! Parser and validator tests of the `zeebe:` extensions (task definitions, mappings,
//! headers, listeners, forms, user tasks, ...) and of the later element kinds; the models and
//! helpers are in `support/`.

mod support;

use support::*;
use zest_model::*;
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

/// An AI agent's system prompt of more than 10 KiB in a FEEL string literal, as Camunda 8.8's
/// agent templates write it into an input mapping (quotes as `&quot;`, line breaks as `&#10;`):
/// it deploys, and evaluates to the prompt.
#[test]
fn a_long_system_prompt_in_a_feel_literal_deploys() {
    let paragraph =
        "You are \\&quot;Ada\\&quot;, the support agent of ACME. If the customer asks for \
        a refund, then check the order's date and time; for every order, list the items.&#10;\
        Never say \\&quot;maybe\\&quot;, answer in the customer's language.\\n&#10;";
    let prompt = paragraph.repeat(50);
    let body = [
        START,
        &format!(
            r#"<bpmn:serviceTask id="agent"><bpmn:extensionElements>
                <zeebe:taskDefinition type="io.camunda.agenticai:aiagent-job-worker:1" />
                <zeebe:ioMapping>
                  <zeebe:input source="={{system: &quot;{prompt}&quot;, user: question}}" target="prompt" />
                </zeebe:ioMapping>
              </bpmn:extensionElements></bpmn:serviceTask>"#
        ),
        &flow("f1", "start", "agent"),
    ]
    .join("\n");
    assert!(body.len() > 10 * 1024, "{} bytes", body.len());
    let p = parse_ok(&process(&body));
    let input = &p.element(idx(&p, "agent")).inputs[0];
    let Expression::Feel(feel) = &input.source else {
        panic!("a FEEL input: {:?}", input.source.source());
    };
    let vars = serde_json::json!({"question": "Where is my parcel?"});
    let value = feel.evaluate(vars.as_object().unwrap()).unwrap();
    let expected = paragraph
        .replace("\\&quot;", "\"")
        .replace("&#10;", "\n")
        .replace("\\n", "\n")
        .repeat(50);
    assert_eq!(value["system"], serde_json::json!(expected));
    assert_eq!(value["user"], serde_json::json!("Where is my parcel?"));
}
