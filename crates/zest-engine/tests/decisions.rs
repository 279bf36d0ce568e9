//! DMN decisions: what users see besides the record order of business rule tasks (which
//! tests/anchor.rs checks against Zeebe): EvaluateDecision's answer, versioning and duplicates
//! of re-deployed graphs, deploy-time rejections, and the realistic benchmark workload (a bank
//! dispute process with ten business rule tasks) running to completion.

mod support;

use serde_json::{json, Value};
use support::*;
use zest_protocol::{
    DecisionEvaluationRecord, DeploymentResponse, ErrorType, Intent, RecordType, RecordValue,
    RejectionType, ValueType,
};

/// Evaluates a decision (the EvaluateDecision RPC's command) by id or key.
fn evaluate(h: &mut Harness, id: &str, key: i64, variables: &str) -> Batch {
    h.client(
        -1,
        Intent::Evaluate,
        RecordValue::DecisionEvaluation(Box::new(DecisionEvaluationRecord {
            decision_id: id.to_string(),
            decision_key: key,
            variables: variables.to_string(),
            ..Default::default()
        })),
    )
}

fn evaluation(b: &Batch) -> (Intent, DecisionEvaluationRecord) {
    let r = b.response();
    assert_eq!(r.record_type, RecordType::Event, "{}", r.rejection_reason);
    let RecordValue::DecisionEvaluation(d) = &r.value else {
        panic!("decision evaluation expected, got {r:?}")
    };
    (r.intent, *d.clone())
}

fn deployed(b: &Batch) -> DeploymentResponse {
    let RecordValue::DeploymentResponse(d) = &b.accepted().value else {
        panic!("deployment response expected")
    };
    d.clone()
}

#[test]
fn evaluate_decision_answers_with_every_evaluated_decision() {
    let mut h = Harness::new();
    let d = deployed(&h.deploy("decisions.dmn", &anchor_model("decisions.dmn")));
    assert_eq!(d.decision_requirements_metadata.len(), 1);
    assert_eq!(
        d.decision_requirements_metadata[0].decision_requirements_id,
        "pricing"
    );
    let ids: Vec<&str> = d
        .decisions_metadata
        .iter()
        .map(|m| m.decision_id.as_str())
        .collect();
    assert_eq!(ids, ["discount", "price", "labels", "score"]);

    // a literal expression requiring a decision table: both are reported, required first
    let (intent, e) = evaluation(&evaluate(
        &mut h,
        "price",
        -1,
        r#"{"customer":"gold","amount":150}"#,
    ));
    assert_eq!(intent, Intent::Evaluated);
    assert_eq!(json(&e.decision_output), json!(120));
    assert_eq!(e.decision_version, 1);
    assert_eq!(e.decision_requirements_id, "pricing");
    let price = d
        .decisions_metadata
        .iter()
        .find(|m| m.decision_id == "price")
        .unwrap();
    assert_eq!(e.decision_key, price.decision_key);
    let kinds: Vec<(&str, &str)> = e
        .evaluated_decisions
        .iter()
        .map(|x| (x.decision_id.as_str(), x.decision_type.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("discount", "DECISION_TABLE"),
            ("price", "LITERAL_EXPRESSION")
        ]
    );
    let table = &e.evaluated_decisions[0];
    assert_eq!(json(&table.decision_output), json!(0.2));
    let inputs: Vec<(&str, Value)> = table
        .evaluated_inputs
        .iter()
        .map(|i| (i.input_name.as_str(), json(&i.input_value)))
        .collect();
    assert_eq!(
        inputs,
        [("Customer", json!("gold")), ("Amount", json!(150))]
    );
    assert_eq!(table.matched_rules.len(), 1);
    assert_eq!(table.matched_rules[0].rule_id, "gold_big");
    assert_eq!(table.matched_rules[0].rule_index, 1);
    assert!(table.decision_key > 0 && table.decision_version == 1);

    // by key, a multi-output COLLECT table: a list of contexts in rule order
    let labels = d
        .decisions_metadata
        .iter()
        .find(|m| m.decision_id == "labels")
        .unwrap();
    let (_, e) = evaluation(&evaluate(
        &mut h,
        "",
        labels.decision_key,
        r#"{"amount":5}"#,
    ));
    assert_eq!(
        json(&e.decision_output),
        json!([{"label": "any", "weight": 1}])
    );

    // a UNIQUE table with two matching rules fails; the answer says which decision and why
    h.deploy("late.dmn", &anchor_model("decisions_late.dmn"))
        .accepted();
    let b = evaluate(&mut h, "tier", -1, r#"{"amount":150}"#);
    let (intent, e) = evaluation(&b);
    assert_eq!(intent, Intent::Failed);
    assert_eq!(e.failed_decision_id, "tier");
    assert!(
        e.evaluation_failure_message
            .contains("multiple values aren't allowed for UNIQUE hit policy"),
        "{}",
        e.evaluation_failure_message
    );
    assert_eq!(e.evaluated_decisions[0].matched_rules.len(), 2);
    assert_eq!(b.count(ValueType::DecisionEvaluation, Intent::Failed), 1);

    // unknown decisions are NOT_FOUND, as in Zeebe
    let reason = evaluate(&mut h, "nope", -1, "{}").rejection(RejectionType::NotFound);
    assert_eq!(
        reason,
        "Expected to evaluate decision 'nope', but no decision found for id 'nope'"
    );
    evaluate(&mut h, "", 123, "{}").rejection(RejectionType::NotFound);
    h.assert_replay_matches();
}

#[test]
fn a_changed_graph_is_a_new_version_and_an_unchanged_one_a_duplicate() {
    let mut h = Harness::new();
    let dmn = anchor_model("decisions_late.dmn");
    let first = deployed(&h.deploy("late.dmn", &dmn));
    assert!(first
        .decisions_metadata
        .iter()
        .all(|m| !m.duplicate && m.version == 1));

    let again = h.deploy("late.dmn", &dmn);
    let d = deployed(&again);
    assert!(d.decision_requirements_metadata[0].duplicate);
    assert!(d
        .decisions_metadata
        .iter()
        .all(|m| m.duplicate && m.version == 1));
    assert_eq!(again.count(ValueType::Decision, Intent::Created), 0);
    assert_eq!(
        d.decisions_metadata[0].decision_key,
        first.decisions_metadata[0].decision_key
    );

    // a new version of the graph: every decision gets a new version, the latest is evaluated
    let changed = dmn.replace("\"deployed \" + customer", "\"v2 \" + customer");
    let d = deployed(&h.deploy("late.dmn", &changed));
    assert_eq!(
        d.decision_requirements_metadata[0].decision_requirements_version,
        2
    );
    assert!(d
        .decisions_metadata
        .iter()
        .all(|m| !m.duplicate && m.version == 2));
    let (_, e) = evaluation(&evaluate(
        &mut h,
        "no_such_decision",
        -1,
        r#"{"customer":"x"}"#,
    ));
    assert_eq!(json(&e.decision_output), json!("v2 x"));
    assert_eq!(e.decision_version, 2);
    // the first version can still be evaluated by its key
    let old = first
        .decisions_metadata
        .iter()
        .find(|m| m.decision_id == "no_such_decision");
    let (_, e) = evaluation(&evaluate(
        &mut h,
        "",
        old.unwrap().decision_key,
        r#"{"customer":"x"}"#,
    ));
    assert_eq!(json(&e.decision_output), json!("deployed x"));
    h.assert_replay_matches();
}

#[test]
fn bad_dmn_is_rejected_naming_the_decision() {
    let mut h = Harness::new();
    let bad = anchor_model("decisions_late.dmn").replace("&gt; 100<", "[1..<");
    let reason = h
        .deploy("bad.dmn", &bad)
        .rejection(RejectionType::InvalidArgument);
    assert!(
        reason.contains("'bad.dmn'") && reason.contains("tier"),
        "{reason}"
    );

    // a decision id deployed in another graph is a new version of the decision in that graph,
    // as in Zeebe (tests/anchor/scenarios/decision_shared)
    h.deploy("late.dmn", &anchor_model("decisions_late.dmn"))
        .accepted();
    let other = anchor_model("decisions_late.dmn").replace("id=\"late\"", "id=\"other\"");
    h.deploy("other.dmn", &other).accepted();
    // within one deployment a decision id is still unique
    let reason = h
        .deploy_many(&[
            ("one.dmn", &other),
            ("two.dmn", &other.replace("id=\"other\"", "id=\"third\"")),
        ])
        .rejection(RejectionType::InvalidArgument);
    assert!(
        reason.contains("Expected the decision ids to be unique within a deployment"),
        "{reason}"
    );

    // a business rule task needs a result variable
    let model = bpmn(
        "p",
        r#"<bpmn:startEvent id="s" /><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t" />
        <bpmn:businessRuleTask id="t"><bpmn:extensionElements><zeebe:calledDecision decisionId="tier" /></bpmn:extensionElements></bpmn:businessRuleTask>"#,
    );
    let reason = h
        .deploy("p.bpmn", &model)
        .rejection(RejectionType::InvalidArgument);
    assert!(reason.contains("resultVariable"), "{reason}");
}

#[test]
fn a_failed_evaluation_raises_an_incident_that_resolves_once_the_decision_is_fixed() {
    let mut h = Harness::new();
    h.deploy("late.dmn", &anchor_model("decisions_late.dmn"))
        .accepted();
    let model = bpmn(
        "p",
        r#"<bpmn:startEvent id="s" /><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t" />
        <bpmn:businessRuleTask id="t"><bpmn:extensionElements><zeebe:calledDecision decisionId="=which" resultVariable="r" /></bpmn:extensionElements></bpmn:businessRuleTask>
        <bpmn:sequenceFlow id="g" sourceRef="t" targetRef="e" /><bpmn:endEvent id="e" />"#,
    );
    h.deploy("p.bpmn", &model).accepted();
    let pi = h.create_ok("p", r#"{"which":"tier","amount":150}"#);
    let incidents = h.incidents();
    assert_eq!(incidents.len(), 1);
    assert_eq!(
        incidents[0].1.record.error_type,
        ErrorType::DecisionEvaluationError
    );

    // a fixed graph (only one rule matches now), then the incident is resolved
    let fixed = anchor_model("decisions_late.dmn").replace("&gt; 100", "&gt; 1000");
    h.deploy("late.dmn", &fixed).accepted();
    let b = h.resolve(incidents[0].0);
    assert_eq!(b.count(ValueType::DecisionEvaluation, Intent::Evaluated), 1);
    let written: Vec<(String, String)> = b
        .records
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::Variable(v) if v.process_instance_key == pi => {
                Some((v.name.clone(), v.value.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(written, [("r".to_string(), "\"medium\"".to_string())]);
    assert_eq!(
        b.count(ValueType::ProcessInstance, Intent::ElementCompleted),
        3
    );
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

/// The job types of a model (`zeebe:taskDefinition type`).
fn job_types(xml: &str) -> Vec<String> {
    let mut types: Vec<String> = xml
        .split("zeebe:taskDefinition type=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next().map(str::to_string))
        .collect();
    types.sort();
    types.dedup();
    types
}

/// Message subscriptions that are open now: (message name, correlation key).
fn open_subscriptions(h: &Harness) -> Vec<(String, String)> {
    let mut open: Vec<(i64, String, String)> = Vec::new();
    for r in &h.log {
        let RecordValue::MessageSubscription(s) = &r.value else {
            continue;
        };
        let id = (s.element_instance_key, s.message_name.clone());
        match r.intent {
            Intent::Created => open.push((id.0, id.1, s.correlation_key.clone())),
            Intent::Correlated | Intent::Deleted => {
                open.retain(|(k, n, _)| (*k, n) != (id.0, &id.1))
            }
            _ => {}
        }
    }
    open.into_iter().map(|(_, n, c)| (n, c)).collect()
}

#[test]
fn the_realistic_workload_runs_to_completion_with_its_decisions() {
    let (Some(dmn), Some(bank), Some(refunding), Some(payload)) = (
        workload("realistic/determineFraudRatingConfidence.dmn"),
        workload("realistic/bankCustomerComplaintDisputeHandling.bpmn"),
        workload("realistic/refundingProcess.bpmn"),
        workload("realistic/realisticPayload.json"),
    ) else {
        return;
    };
    let mut h = Harness::new();
    h.deploy("determineFraudRatingConfidence.dmn", &dmn)
        .accepted();
    h.deploy("refundingProcess.bpmn", &refunding).accepted();
    // the user task links a form that the workload does not ship
    let form = r#"{"id":"decide-on-fraud-case-000115q","type":"default","components":[]}"#;
    h.deploy("decide.form", form).accepted();
    h.deploy("bank.bpmn", &bank).accepted();
    let pi = h.create_ok("bankDisputeHandling", &payload);

    let mut types = job_types(&bank);
    types.extend(job_types(&refunding));
    types.push("io.camunda.zeebe:userTask".to_string());
    let finished = |h: &Harness| {
        h.log.iter().any(|r| {
            r.key == pi
                && r.intent == Intent::ElementCompleted
                && matches!(r.value, RecordValue::ProcessInstance(_))
        })
    };
    for _ in 0..200 {
        if finished(&h) {
            break;
        }
        assert!(h.incidents().is_empty(), "{:?}", h.incidents());
        let mut progressed = false;
        for t in &types {
            for (key, _) in h.activate(t, 100) {
                h.complete(key, "{}");
                progressed = true;
            }
        }
        if let Some((name, correlation_key)) = open_subscriptions(&h).into_iter().next() {
            h.publish(&name, &correlation_key, 0, "", "{}");
            progressed = true;
        }
        if !progressed {
            h.advance(2 * 24 * 3600 * 1000 + 1);
            h.run_scheduler();
        }
    }
    assert!(finished(&h), "the bank process did not complete");
    let evaluations = h
        .log
        .iter()
        .filter(|r| r.value_type == ValueType::DecisionEvaluation)
        .count();
    assert!(evaluations >= 1, "no decision was evaluated");
    assert!(h
        .log
        .iter()
        .all(|r| r.value_type != ValueType::DecisionEvaluation || r.intent == Intent::Evaluated));
    h.assert_no_runtime_state();
    h.assert_replay_matches();
}

#[test]
fn deleting_a_graph_version_makes_the_one_before_it_the_latest() {
    let mut h = Harness::new();
    let dmn = anchor_model("decisions_late.dmn");
    let v1 = deployed(&h.deploy("late.dmn", &dmn));
    let changed = dmn.replacen("name=\"", "name=\"Changed ", 1);
    let v2 = deployed(&h.deploy("late.dmn", &changed));
    let v2_key = v2.decision_requirements_metadata[0].decision_requirements_key;
    h.delete_resource(v2_key).accepted();
    // evaluating by id now finds version 1
    let id = &v1.decisions_metadata[0].decision_id;
    let (_, e) = evaluation(&evaluate(&mut h, id, -1, r#"{"amount":1}"#));
    assert_eq!(e.decision_key, v1.decisions_metadata[0].decision_key);
    // the deleted key is gone
    let msg = h.delete_resource(v2_key).rejection(RejectionType::NotFound);
    assert!(msg.contains("no resource found"), "{msg}");
    // deleting the last version leaves no decision by that id
    let v1_key = v1.decision_requirements_metadata[0].decision_requirements_key;
    h.delete_resource(v1_key).accepted();
    let r = evaluate(&mut h, id, -1, "{}");
    assert_eq!(r.response().record_type, RecordType::CommandRejection);
}
