//! DMN decisions in the engine: finding a deployed decision and evaluating it (for business
//! rule tasks, `element/business_rule_task.rs`, and for the EvaluateDecision RPC,
//! `processors/decision.rs`), with every evaluated decision, its inputs and matched rules for
//! DECISION_EVALUATION EVALUATED or FAILED. Deploying DMN resources (DECISION_REQUIREMENTS and
//! DECISION CREATED, versioned like Zeebe) is `processors/deployment.rs`.
//!
//! The DMN itself (parsing, hit policies, FEEL) is `zest_model::dmn`; parsed graphs are cached
//! in `Models` by decision requirements key.

use serde_json::{Map, Value};
use zest_model::dmn::Evaluation;
use zest_protocol::{
    DecisionEvaluationRecord, DecisionRecord, EvaluatedDecisionValue, EvaluatedInputValue,
    EvaluatedOutputValue, MatchedRuleValue,
};

use crate::behaviour::variables;
use crate::context::Ctx;
use crate::keys::decision::member_key;
use crate::keys::tagged_key;
use crate::state::Ks;
use crate::types::LatestVersion;

/// The latest version of decision `decision_id`.
pub(crate) fn latest(ctx: &Ctx<'_, '_, '_>, decision_id: &str) -> Option<DecisionRecord> {
    let l: LatestVersion = ctx
        .txn
        .get(Ks::Decisions, &tagged_key(b'D', decision_id.as_bytes()))?;
    by_key(ctx, l.key)
}

pub(crate) fn by_key(ctx: &Ctx<'_, '_, '_>, decision_key: i64) -> Option<DecisionRecord> {
    ctx.txn.get(
        Ks::Decisions,
        &tagged_key(b'd', &decision_key.to_be_bytes()),
    )
}

/// An evaluated decision: the DECISION_EVALUATION value to write (without the process
/// instance fields) and the decision's result or Zeebe's failure message.
pub(crate) struct Outcome {
    pub record: DecisionEvaluationRecord,
    pub result: Result<Value, String>,
}

/// The variables visible from `scope_key` that evaluating `decision` reads, in the parts read
/// (all of them, whole, when the graph's reads are not known: see
/// [`zest_model::dmn::DecisionRequirements::variable_reads`]).
pub(crate) fn variables(
    ctx: &mut Ctx<'_, '_, '_>,
    decision: &DecisionRecord,
    scope_key: i64,
) -> Map<String, Value> {
    let reads = ctx
        .models
        .decision_requirements(ctx.txn, decision.decision_requirements_key)
        .and_then(|drg| drg.variable_reads(&decision.decision_id));
    match reads {
        Some(reads) if reads.is_empty() => Map::new(),
        Some(reads) => variables::visible_read(ctx, scope_key, reads.as_slice()),
        None => variables::visible(ctx, scope_key),
    }
}

/// Evaluates `decision` with `vars`; `None` when its graph cannot be loaded (which a deployed
/// graph always can).
pub(crate) fn evaluate(
    ctx: &mut Ctx<'_, '_, '_>,
    decision: &DecisionRecord,
    vars: &Map<String, Value>,
) -> Option<Outcome> {
    let drg = ctx
        .models
        .decision_requirements(ctx.txn, decision.decision_requirements_key)?;
    let Evaluation { evaluated, result } = drg.evaluate(&decision.decision_id, vars)?;
    let evaluated_decisions = evaluated
        .iter()
        .map(|e| {
            // the version and key of the decision of this graph version
            let member: Option<LatestVersion> = ctx.txn.get(
                Ks::Decisions,
                &member_key(decision.decision_requirements_key, &e.decision_id),
            );
            EvaluatedDecisionValue {
                decision_id: e.decision_id.clone(),
                decision_name: e.decision_name.clone(),
                decision_key: member.map(|m| m.key).unwrap_or(-1),
                decision_version: member.map(|m| m.version).unwrap_or(-1),
                decision_type: e.decision_type.to_string(),
                decision_output: e.output.to_string(),
                evaluated_inputs: e
                    .inputs
                    .iter()
                    .map(|i| EvaluatedInputValue {
                        input_id: i.id.clone(),
                        input_name: i.name.clone(),
                        input_value: i.value.to_string(),
                    })
                    .collect(),
                matched_rules: e
                    .matched_rules
                    .iter()
                    .map(|m| MatchedRuleValue {
                        rule_id: m.id.clone(),
                        rule_index: m.index,
                        evaluated_outputs: m
                            .outputs
                            .iter()
                            .map(|o| EvaluatedOutputValue {
                                output_id: o.id.clone(),
                                output_name: o.name.clone(),
                                output_value: o.value.to_string(),
                            })
                            .collect(),
                    })
                    .collect(),
                tenant_id: decision.tenant_id.clone(),
            }
        })
        .collect();
    let mut record = DecisionEvaluationRecord {
        decision_key: decision.decision_key,
        decision_id: decision.decision_id.clone(),
        decision_name: decision.decision_name.clone(),
        decision_version: decision.version,
        decision_requirements_id: decision.decision_requirements_id.clone(),
        decision_requirements_key: decision.decision_requirements_key,
        decision_output: "null".to_string(),
        evaluated_decisions,
        tenant_id: decision.tenant_id.clone(),
        process_definition_key: -1,
        process_instance_key: -1,
        element_instance_key: -1,
        ..Default::default()
    };
    let result = match result {
        Ok(value) => {
            record.decision_output = value.to_string();
            Ok(value)
        }
        Err(failure) => {
            record.failed_decision_id = failure.decision_id;
            record.evaluation_failure_message = failure.message.clone();
            Err(failure.message)
        }
    };
    Some(Outcome { record, result })
}
