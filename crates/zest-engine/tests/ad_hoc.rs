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

#[test]
fn modification_refuses_elements_inside_an_ad_hoc_sub_process() {
    let mut h = Harness::new();
    let inner = format!("{COLLECTION}{}", service_task("a", "ah-a", ""));
    h.deploy_ok(&ad_hoc_process("modify", "", &inner));
    let pik = h.create_ok("modify", r#"{"ids":[]}"#);
    let modify = |element_id: &str| ProcessInstanceModificationRecord {
        process_instance_key: pik,
        activate_instructions: vec![ActivateInstruction {
            element_id: element_id.to_string(),
            ancestor_scope_key: -1,
            variable_instructions: Vec::new(),
        }],
        ..Default::default()
    };
    for id in ["a", "ah#innerInstance"] {
        let b = h.client(
            -1,
            Intent::Modify,
            RecordValue::ProcessInstanceModification(modify(id)),
        );
        let reason = b.rejection(RejectionType::InvalidArgument);
        assert!(reason.contains(id), "{reason}");
    }
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
