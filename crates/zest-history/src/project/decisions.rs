//! DECISION_REQUIREMENTS, DECISION and DECISION_EVALUATION records to rows: the deployed
//! decision requirements (with their DMN XML) and decisions, and one decision instance per
//! decision an evaluation evaluated (EVALUATED, or FAILED at the decision that failed).

use crate::db::{params, Conn};
use serde_json::{json, Value};
use zest_protocol::{
    DecisionEvaluationRecord, DecisionRecord, DecisionRequirementsRecord, EvaluatedDecisionValue,
    Intent,
};

/// Most decisions one evaluation keeps (the index packed in a decision instance's key).
pub const MAX_DECISIONS: usize = 64;

/// What a batch's decision records change.
#[derive(Default, Debug)]
pub struct Decisions {
    pub requirements: Vec<DecisionRequirementsRecord>,
    pub definitions: Vec<DecisionRecord>,
    pub instances: Vec<DecisionInstance>,
}

#[derive(Debug)]
pub struct DecisionInstance {
    pub key: i64,
    pub evaluation_key: i64,
    pub index: i64,
    pub state: &'static str,
    pub evaluation_date: i64,
    pub failure: Option<String>,
    pub decision_key: i64,
    pub decision_id: String,
    pub decision_name: String,
    pub decision_version: i32,
    pub decision_type: String,
    pub result: String,
    pub inputs: String,
    pub rules: String,
    pub process_definition_key: i64,
    pub process_instance_key: i64,
    pub element_instance_key: i64,
    pub element_id: String,
    pub tenant_id: String,
}

/// The key of the `index`th (from 1) decision instance of the evaluation `evaluation_key`, in
/// the evaluation key's partition; None past [`MAX_DECISIONS`] or for a key out of range.
pub fn decision_instance_key(evaluation_key: i64, index: i64) -> Option<i64> {
    let partition = evaluation_key >> 51;
    let counter = evaluation_key & ((1 << 51) - 1);
    if !(1..=MAX_DECISIONS as i64).contains(&index) || counter >= 1 << 45 || evaluation_key < 0 {
        return None;
    }
    Some((partition << 51) | (counter << 6) | (index - 1))
}

/// Camunda's decision types; others are UNKNOWN.
fn decision_type(t: &str) -> &'static str {
    match t {
        "DECISION_TABLE" => "DECISION_TABLE",
        "LITERAL_EXPRESSION" => "LITERAL_EXPRESSION",
        "" => "UNSPECIFIED",
        _ => "UNKNOWN",
    }
}

impl Decisions {
    pub fn evaluation(&mut self, key: i64, at: i64, intent: Intent, e: &DecisionEvaluationRecord) {
        let failed = intent == Intent::Failed;
        if !failed && intent != Intent::Evaluated {
            return;
        }
        let mut decisions: Vec<&EvaluatedDecisionValue> = e.evaluated_decisions.iter().collect();
        let missing_failed = failed
            && !e
                .evaluated_decisions
                .iter()
                .any(|d| d.decision_id == e.failed_decision_id);
        let failed_alone = EvaluatedDecisionValue {
            decision_id: e.failed_decision_id.clone(),
            decision_name: if e.decision_id == e.failed_decision_id {
                e.decision_name.clone()
            } else {
                String::new()
            },
            decision_key: if e.decision_id == e.failed_decision_id {
                e.decision_key
            } else {
                0
            },
            decision_version: if e.decision_id == e.failed_decision_id {
                e.decision_version
            } else {
                0
            },
            ..Default::default()
        };
        if missing_failed {
            decisions.push(&failed_alone);
        }
        for (i, d) in decisions.into_iter().enumerate() {
            let index = i as i64 + 1;
            let Some(row_key) = decision_instance_key(key, index) else {
                break;
            };
            let this_failed = failed && d.decision_id == e.failed_decision_id;
            let inputs: Vec<Value> = d
                .evaluated_inputs
                .iter()
                .map(|i| json!({"inputId": i.input_id, "inputName": i.input_name, "inputValue": i.input_value}))
                .collect();
            let rules: Vec<Value> = d
                .matched_rules
                .iter()
                .map(|r| {
                    let outputs: Vec<Value> = r
                        .evaluated_outputs
                        .iter()
                        .map(|o| json!({"outputId": o.output_id, "outputName": o.output_name, "outputValue": o.output_value}))
                        .collect();
                    json!({"ruleId": r.rule_id, "ruleIndex": r.rule_index, "evaluatedOutputs": outputs})
                })
                .collect();
            self.instances.push(DecisionInstance {
                key: row_key,
                evaluation_key: key,
                index,
                state: if this_failed { "FAILED" } else { "EVALUATED" },
                evaluation_date: at,
                failure: this_failed.then(|| e.evaluation_failure_message.clone()),
                decision_key: d.decision_key,
                decision_id: d.decision_id.clone(),
                decision_name: d.decision_name.clone(),
                decision_version: d.decision_version,
                decision_type: decision_type(&d.decision_type).to_string(),
                result: d.decision_output.clone(),
                inputs: Value::Array(inputs).to_string(),
                rules: Value::Array(rules).to_string(),
                process_definition_key: e.process_definition_key,
                process_instance_key: e.process_instance_key,
                element_instance_key: e.element_instance_key,
                element_id: e.element_id.clone(),
                tenant_id: e.tenant_id.clone(),
            });
        }
    }

    /// Writes the batch's decision rows in `tx` (a deployment seen again, after a restart of
    /// export, changes nothing), after the batch's process instances: a business rule task's
    /// evaluation belongs to its instance's root (retention removes it with it).
    pub fn write(&self, tx: &Conn) -> crate::db::Result<()> {
        for r in &self.requirements {
            tx.execute(
                "INSERT INTO decision_requirements (key, decision_requirements_id, name, version, \
                 resource_name, tenant_id, dmn_xml) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                 ON CONFLICT(key) DO NOTHING",
                params![
                    r.decision_requirements_key,
                    r.decision_requirements_id,
                    r.decision_requirements_name,
                    r.decision_requirements_version,
                    r.resource_name,
                    r.tenant_id,
                    String::from_utf8_lossy(&r.resource)
                ],
            )?;
        }
        for d in &self.definitions {
            tx.execute(
                "INSERT INTO decision_definition (key, decision_id, name, version, \
                 decision_requirements_id, decision_requirements_key, tenant_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(key) DO NOTHING",
                params![
                    d.decision_key,
                    d.decision_id,
                    d.decision_name,
                    d.version,
                    d.decision_requirements_id,
                    d.decision_requirements_key,
                    d.tenant_id
                ],
            )?;
        }
        for i in &self.instances {
            tx.execute(
                "INSERT INTO decision_instance (key, evaluation_key, idx, state, evaluation_date, \
                 evaluation_failure, decision_key, decision_id, decision_name, decision_version, \
                 decision_type, result, evaluated_inputs, matched_rules, process_definition_key, \
                 process_instance_key, element_instance_key, element_id, tenant_id, \
                 root_process_instance_key) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
                 ?17, ?18, ?19, CASE WHEN CAST(?16 AS BIGINT) > 0 THEN COALESCE((SELECT p.root_process_instance_key \
                 FROM process_instance p WHERE p.key = ?16), ?16) END) \
                 ON CONFLICT(key) DO NOTHING",
            params![
                i.key,
                i.evaluation_key,
                i.index,
                i.state,
                i.evaluation_date,
                i.failure,
                i.decision_key,
                i.decision_id,
                i.decision_name,
                i.decision_version,
                i.decision_type,
                i.result,
                i.inputs,
                i.rules,
                i.process_definition_key,
                i.process_instance_key,
                i.element_instance_key,
                i.element_id,
                i.tenant_id
            ])?;
        }
        Ok(())
    }
}
