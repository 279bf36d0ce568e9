//! Ad-hoc sub-processes: what users see besides the record streams that tests/anchor.rs checks
//! against Zeebe (the `adhoc*` scenarios).

mod support;

use support::*;
use zest_protocol::{
    ActivateInstruction, Intent, ProcessInstanceModificationRecord, RecordValue, RejectionType,
};

/// start -> ad-hoc sub-process `ah` (its `attrs` and `inner` XML) -> end
fn ad_hoc_process(id: &str, attrs: &str, inner: &str) -> String {
    process(
        id,
        &[
            start_event("s"),
            format!(r#"<bpmn:adHocSubProcess id="ah" {attrs}>{inner}</bpmn:adHocSubProcess>"#),
            end_event("e"),
            flow("f1", "s", "ah"),
            flow("f2", "ah", "e"),
        ],
    )
}

const COLLECTION: &str = r#"<bpmn:extensionElements><zeebe:adHoc activeElementsCollection="=ids" outputCollection="results" outputElement="=r" /></bpmn:extensionElements>"#;

#[test]
fn a_multi_instance_ad_hoc_sub_process_runs_its_elements_per_item_and_collects_their_output() {
    let mut h = Harness::new();
    let inner = format!(
        r#"{COLLECTION}{}{}<bpmn:multiInstanceLoopCharacteristics><bpmn:extensionElements><zeebe:loopCharacteristics inputCollection="=items" inputElement="item" /></bpmn:extensionElements></bpmn:multiInstanceLoopCharacteristics>"#,
        service_task("a", "ah-a", ""),
        service_task("b", "ah-b", ""),
    );
    h.deploy_ok(&ad_hoc_process("mi", "", &inner));
    let pik = h.create_ok("mi", r#"{"items":[1,2],"ids":["a","b"]}"#);
    // two items, two elements each: four jobs
    let a = h.activate("ah-a", 10);
    let b = h.activate("ah-b", 10);
    assert_eq!((a.len(), b.len()), (2, 2));
    for (key, _) in a.into_iter().chain(b) {
        h.complete(key, r#"{"r":"done"}"#);
    }
    let completed = h
        .log
        .iter()
        .filter(|r| r.intent == Intent::ElementCompleted)
        .filter_map(|r| match &r.value {
            RecordValue::ProcessInstance(p) if p.element_id == "mi" => Some(p.process_instance_key),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(completed, [pik]);
    h.assert_state_consistent();
    h.assert_replay_matches();
}

#[test]
fn a_completion_condition_that_does_not_hold_keeps_the_sub_process_waiting() {
    let mut h = Harness::new();
    let inner = format!(
        r#"{COLLECTION}{}<bpmn:completionCondition>=false</bpmn:completionCondition>"#,
        service_task("a", "ah-a", "")
    );
    h.deploy_ok(&ad_hoc_process("wait", "", &inner));
    let pik = h.create_ok("wait", r#"{"ids":["a"]}"#);
    let (job, _) = h.activate_one("ah-a");
    h.complete(job, r#"{"r":1}"#);
    // the flow is done, the condition does not hold: the sub-process stays active
    let ah = h.instance_of("ah");
    assert_eq!(ah.state, Intent::ElementActivated);
    assert_eq!(ah.active_children, 0);
    assert_eq!(h.variables(ah.key)["results"], json("[1]"));
    h.cancel(pik);
    h.assert_no_runtime_state();
}

fn activate_instruction(pik: i64, element_id: &str, ancestor: i64) -> RecordValue {
    RecordValue::ProcessInstanceModification(ProcessInstanceModificationRecord {
        process_instance_key: pik,
        activate_instructions: vec![ActivateInstruction {
            element_id: element_id.to_string(),
            ancestor_scope_key: ancestor,
            variable_instructions: Vec::new(),
        }],
        ..Default::default()
    })
}

#[test]
fn modification_activates_elements_inside_an_ad_hoc_sub_process_but_not_its_inner_instance() {
    let mut h = Harness::new();
    let inner = format!(
        "{COLLECTION}{}{}",
        service_task("a", "ah-a", ""),
        service_task("b", "ah-b", "")
    );
    h.deploy_ok(&ad_hoc_process("modify", "", &inner));
    let pik = h.create_ok("modify", r#"{"ids":["a","b"]}"#);
    let b = h.client(
        -1,
        Intent::Modify,
        activate_instruction(pik, "ah#innerInstance", -1),
    );
    let reason = b.rejection(RejectionType::InvalidArgument);
    assert!(reason.contains("'ah#innerInstance'"), "{reason}");
    // two inner instances: the element's flow scope is ambiguous...
    let b = h.client(-1, Intent::Modify, activate_instruction(pik, "a", -1));
    let reason = b.rejection(RejectionType::InvalidArgument);
    assert!(reason.contains("more than one active instance"), "{reason}");
    // ...until the instruction names one of them
    let inner_key = h
        .element_instances()
        .into_iter()
        .find(|i| i.record.element_id == "ah#innerInstance")
        .map(|i| i.key)
        .unwrap_or(-1);
    h.client(
        -1,
        Intent::Modify,
        activate_instruction(pik, "a", inner_key),
    )
    .accepted();
    // three jobs now; the inner instance that holds two of them completes (and gives its
    // output) once both are done
    let jobs = [h.activate("ah-a", 10), h.activate("ah-b", 10)].concat();
    assert_eq!(jobs.len(), 3);
    for (n, (key, _)) in jobs.into_iter().enumerate() {
        h.complete(key, &format!(r#"{{"r":{n}}}"#));
    }
    let results = h
        .log
        .iter()
        .filter(|r| r.intent == Intent::Updated)
        .filter_map(|r| match &r.value {
            RecordValue::Variable(v) if v.name == "results" => Some(v.value.clone()),
            _ => None,
        })
        .next_back();
    assert_eq!(results.as_deref(), Some("[1,2]"));
    assert!(h
        .log
        .iter()
        .any(|r| r.key == pik && r.intent == Intent::ElementCompleted));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn modification_creates_an_ad_hoc_sub_process_with_an_empty_output_collection() {
    // Zeebe 8.8 leaves the collection out and then fails the element's completion with a
    // processing error; in Zest the element's output is collected and the instance completes
    let mut h = Harness::new();
    let inner = format!("{COLLECTION}{}", service_task("a", "ah-a", ""));
    h.deploy_ok(&process(
        "later",
        &[
            start_event("s"),
            service_task("x", "x", ""),
            format!(r#"<bpmn:adHocSubProcess id="ah">{inner}</bpmn:adHocSubProcess>"#),
            end_event("e"),
            flow("f1", "s", "x"),
            flow("f2", "x", "ah"),
            flow("f3", "ah", "e"),
        ],
    ));
    let pik = h.create_ok("later", r#"{"ids":[]}"#);
    h.client(-1, Intent::Modify, activate_instruction(pik, "a", -1))
        .accepted();
    let ah = h.instance_of("ah");
    assert_eq!(h.variables(ah.key)["results"], json("[]"));
    // the active elements collection is not evaluated: only the instruction's element runs
    assert!(!h.variables(ah.key).contains_key("adHocSubProcessElements"));
    let (job, _) = h.activate_one("ah-a");
    h.complete(job, r#"{"r":"done"}"#);
    assert_eq!(h.variables(pik)["results"], json(r#"["done"]"#));
    let (job, _) = h.activate_one("x");
    h.complete(job, "{}");
    // x's flow enters the sub-process again, now as an activation: with no ids it waits
    assert_eq!(h.instance_of("ah").state, Intent::ElementActivated);
    h.cancel(pik);
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn a_gateway_without_outgoing_flows_ends_its_token() {
    // Zeebe deploys and runs such a gateway: it completes, and so does its scope
    let mut h = Harness::new();
    h.deploy_ok(&process(
        "dead_end",
        &[
            start_event("s"),
            exclusive_gateway("gw"),
            flow("f1", "s", "gw"),
        ],
    ));
    let pik = h.create_ok("dead_end", "{}");
    assert!(h
        .log
        .iter()
        .any(|r| r.key == pik && r.intent == Intent::ElementCompleted));
    h.assert_no_runtime_state();
}
