//! Decisions in history: definitions and requirements with their XML, one decision instance
//! per evaluated decision (EVALUATED, FAILED), found by the spec's filters, removed with their
//! root instance.

use serde_json::{json, Value};
use zest_protocol::{
    BpmnElementType, BpmnEventType, DecisionEvaluationRecord, DecisionRecord,
    DecisionRequirementsRecord, EvaluatedDecisionValue, EvaluatedInputValue, EvaluatedOutputValue,
    Intent, MatchedRuleValue, ProcessInstanceRecord, RecordValue,
};

use crate::resources::{
    decision_instance_key, Resource, DECISION_DEFINITIONS, DECISION_DEFINITION_XML,
    DECISION_INSTANCES, DECISION_INSTANCE_FULL, DECISION_REQUIREMENTS,
};
use crate::{Conditions, History};

const P1: i64 = 1 << 51;

use crate::tests::event as record;

fn evaluated(id: &str, key: i64, output: &str) -> EvaluatedDecisionValue {
    EvaluatedDecisionValue {
        decision_id: id.into(),
        decision_name: format!("{id} name"),
        decision_key: key,
        decision_version: 1,
        decision_type: "DECISION_TABLE".into(),
        decision_output: output.into(),
        evaluated_inputs: vec![EvaluatedInputValue {
            input_id: "in1".into(),
            input_name: "Amount".into(),
            input_value: "120".into(),
        }],
        matched_rules: vec![MatchedRuleValue {
            rule_id: "rule2".into(),
            rule_index: 2,
            evaluated_outputs: vec![EvaluatedOutputValue {
                output_id: "out1".into(),
                output_name: "risk".into(),
                output_value: output.into(),
            }],
        }],
        tenant_id: "<default>".into(),
    }
}

fn history(name: &str) -> (std::path::PathBuf, History) {
    let (dir, h) = crate::tests::open(&format!("decisions-{name}"));
    let drg = DecisionRequirementsRecord {
        decision_requirements_id: "risk_drg".into(),
        decision_requirements_name: "Risk".into(),
        decision_requirements_version: 1,
        decision_requirements_key: P1 + 1,
        resource_name: "risk.dmn".into(),
        resource: b"<definitions id=\"risk_drg\"/>".to_vec(),
        tenant_id: "<default>".into(),
        ..Default::default()
    };
    let decision = |id: &str, key: i64| DecisionRecord {
        decision_id: id.into(),
        decision_name: format!("{id} name"),
        version: 1,
        decision_key: key,
        decision_requirements_id: "risk_drg".into(),
        decision_requirements_key: P1 + 1,
        tenant_id: "<default>".into(),
        ..Default::default()
    };
    // a business rule task of instance P1+10 evaluates `risk`, which requires `amount`
    let in_task = DecisionEvaluationRecord {
        decision_key: P1 + 2,
        decision_id: "risk".into(),
        decision_name: "risk name".into(),
        decision_version: 1,
        decision_output: "\"high\"".into(),
        bpmn_process_id: "loan".into(),
        process_definition_key: P1 + 5,
        process_instance_key: P1 + 10,
        element_id: "assess".into(),
        element_instance_key: P1 + 11,
        evaluated_decisions: vec![
            evaluated("amount", P1 + 3, "120"),
            evaluated("risk", P1 + 2, "\"high\""),
        ],
        tenant_id: "<default>".into(),
        ..Default::default()
    };
    // EvaluateDecision of `risk` alone, which fails
    let failing = DecisionEvaluationRecord {
        decision_key: P1 + 2,
        decision_id: "risk".into(),
        decision_name: "risk name".into(),
        decision_version: 1,
        process_definition_key: -1,
        process_instance_key: -1,
        element_instance_key: -1,
        evaluation_failure_message: "no rule matched 'x'".into(),
        failed_decision_id: "risk".into(),
        tenant_id: "<default>".into(),
        ..Default::default()
    };
    let process = ProcessInstanceRecord {
        bpmn_process_id: "loan".into(),
        version: 1,
        process_definition_key: P1 + 5,
        process_instance_key: P1 + 10,
        element_id: "loan".into(),
        flow_scope_key: -1,
        bpmn_element_type: BpmnElementType::Process,
        bpmn_event_type: BpmnEventType::Unspecified,
        parent_process_instance_key: -1,
        parent_element_instance_key: -1,
        tenant_id: "<default>".into(),
    };
    let records = vec![
        record(
            1,
            P1 + 10,
            Intent::ElementActivating,
            RecordValue::ProcessInstance(process.clone()),
        ),
        record(
            2,
            P1 + 1,
            Intent::Created,
            RecordValue::DecisionRequirements(drg),
        ),
        record(
            3,
            P1 + 2,
            Intent::Created,
            RecordValue::Decision(decision("risk", P1 + 2)),
        ),
        record(
            4,
            P1 + 3,
            Intent::Created,
            RecordValue::Decision(decision("amount", P1 + 3)),
        ),
        record(
            5,
            P1 + 20,
            Intent::Evaluated,
            RecordValue::DecisionEvaluation(Box::new(in_task)),
        ),
        record(
            6,
            P1 + 21,
            Intent::Failed,
            RecordValue::DecisionEvaluation(Box::new(failing)),
        ),
        record(
            7,
            P1 + 10,
            Intent::ElementCompleted,
            RecordValue::ProcessInstance(process),
        ),
    ];
    h.export(1, &records, 1).unwrap();
    (dir, h)
}

fn search(h: &History, r: &Resource, q: Value) -> Value {
    h.search(r, &q, Conditions::default()).unwrap()
}

fn ids(v: &Value) -> Vec<String> {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            i["decisionEvaluationInstanceKey"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn decisions_and_their_instances_are_found_with_the_specs_fields() {
    let (_dir, h) = history("found");
    let defs = search(
        &h,
        &DECISION_DEFINITIONS,
        json!({"sort": [{"field": "decisionDefinitionId"}]}),
    );
    assert_eq!(defs["page"]["totalItems"], 2);
    assert_eq!(
        defs["items"][0],
        json!({"decisionDefinitionKey": (P1 + 3).to_string(), "decisionDefinitionId": "amount",
               "name": "amount name", "version": 1, "decisionRequirementsId": "risk_drg",
               "decisionRequirementsKey": (P1 + 1).to_string(), "tenantId": "<default>"})
    );
    let xml = h.get(&DECISION_DEFINITION_XML, P1 + 2).unwrap().unwrap();
    assert_eq!(xml["xml"], "<definitions id=\"risk_drg\"/>");
    let drg = search(
        &h,
        &DECISION_REQUIREMENTS,
        json!({"filter": {"decisionRequirementsId": "risk_drg"}}),
    );
    assert_eq!(drg["items"][0]["decisionRequirementsName"], "Risk");
    assert_eq!(drg["items"][0]["resourceName"], "risk.dmn");

    let all = search(&h, &DECISION_INSTANCES, json!({}));
    let e = P1 + 20;
    let f = P1 + 21;
    assert_eq!(
        ids(&all),
        [format!("{e}-1"), format!("{e}-2"), format!("{f}-1")]
    );
    let risk = &all["items"][1];
    assert_eq!(risk["state"], "EVALUATED");
    assert_eq!(risk["decisionDefinitionId"], "risk");
    assert_eq!(risk["decisionDefinitionType"], "DECISION_TABLE");
    assert_eq!(risk["result"], "\"high\"");
    assert_eq!(risk["decisionEvaluationKey"], e.to_string());
    assert_eq!(risk["processInstanceKey"], (P1 + 10).to_string());
    assert_eq!(risk["elementInstanceKey"], (P1 + 11).to_string());
    assert_eq!(risk["evaluationDate"], "2025-01-01T00:00:05.000Z");
    let failed = &all["items"][2];
    assert_eq!(failed["state"], "FAILED");
    assert_eq!(failed["evaluationFailure"], "no rule matched 'x'");
    assert!(failed.get("processInstanceKey").is_none(), "{failed}");

    let by = |filter: Value| ids(&search(&h, &DECISION_INSTANCES, json!({"filter": filter})));
    assert_eq!(by(json!({"state": "FAILED"})), [format!("{f}-1")]);
    assert_eq!(
        by(json!({"decisionEvaluationInstanceKey": format!("{e}-2")})),
        [format!("{e}-2")]
    );
    assert_eq!(
        by(json!({"processInstanceKey": (P1 + 10).to_string(), "decisionDefinitionId": "amount"})),
        [format!("{e}-1")]
    );
    assert_eq!(
        by(json!({"decisionDefinitionKey": {"$in": [(P1 + 2).to_string()]}})).len(),
        2
    );

    let full = h
        .get(
            &DECISION_INSTANCE_FULL,
            decision_instance_key(e, 2).unwrap(),
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        full["evaluatedInputs"],
        json!([{"inputId": "in1", "inputName": "Amount", "inputValue": "120"}])
    );
    assert_eq!(
        full["matchedRules"],
        json!([{"ruleId": "rule2", "ruleIndex": 2, "evaluatedOutputs": [{"outputId": "out1", "outputName": "risk", "outputValue": "\"high\""}]}])
    );
}

#[test]
fn a_decision_instance_key_keeps_its_evaluations_partition() {
    let e = (3i64 << 51) | 12345;
    let k = decision_instance_key(e, 2).unwrap();
    assert_eq!(k >> 51, 3);
    assert_ne!(k, decision_instance_key(e, 1).unwrap());
    assert_ne!(k, decision_instance_key(e + 1, 1).unwrap());
    assert_eq!(decision_instance_key(e, 0), None);
    assert_eq!(decision_instance_key(e, 65), None);
}

#[test]
fn decision_instances_go_with_their_root_instance_or_their_own_date() {
    let (_dir, h) = history("retention");
    let count =
        |h: &History| search(h, &DECISION_INSTANCES, json!({}))["page"]["totalItems"].clone();
    assert_eq!(count(&h), 3);
    // before the instance ended and the evaluations happened: nothing goes
    assert_eq!(h.remove_expired(1_735_689_600_000, 10).unwrap(), 0);
    assert_eq!(count(&h), 3);
    // after: the instance's two and the standalone one
    assert_eq!(h.remove_expired(1_735_689_700_000, 10).unwrap(), 1);
    assert_eq!(count(&h), 0);
    // definitions stay
    assert_eq!(
        search(&h, &DECISION_DEFINITIONS, json!({}))["page"]["totalItems"],
        2
    );
}

#[test]
fn a_deleted_evaluation_takes_its_decision_instances_only() {
    let (_dir, h) = history("deletion");
    let deleted = |position, key| {
        let value = RecordValue::HistoryDeletion(zest_protocol::HistoryDeletionRecord {
            resource_key: key,
            resource_type: zest_protocol::HistoryDeletionRecord::DECISION_INSTANCE.into(),
        });
        record(position, key, Intent::Deleted, value)
    };
    h.export(1, &[deleted(8, P1 + 21)], 2).unwrap();
    let left = search(&h, &DECISION_INSTANCES, json!({}));
    assert_eq!(
        ids(&left),
        [format!("{}-1", P1 + 20), format!("{}-2", P1 + 20)]
    );
    h.export(1, &[deleted(9, P1 + 20)], 3).unwrap();
    let left = search(&h, &DECISION_INSTANCES, json!({}));
    assert_eq!(left["page"]["totalItems"], 0);
    // the process instance and the definitions stay
    assert_eq!(
        search(&h, &DECISION_DEFINITIONS, json!({}))["page"]["totalItems"],
        2
    );
    let pis = search(&h, &crate::resources::PROCESS_INSTANCES, json!({}));
    assert_eq!(pis["page"]["totalItems"], 1);
}
