//! DMN decisions in the engine:
//! - deployment of DMN resources: DECISION_REQUIREMENTS CREATED and one DECISION CREATED per
//!   decision, versioned like Zeebe (a graph by its id, each decision by its id); an unchanged
//!   resource is a duplicate and writes nothing;
//! - evaluation of a decision (by business rule tasks, see `bpmn/`, and by the EvaluateDecision
//!   RPC: DECISION_EVALUATION EVALUATE), written as DECISION_EVALUATION EVALUATED or FAILED with
//!   every evaluated decision, its inputs and matched rules.
//!
//! The DMN itself (parsing, hit policies, FEEL) is `zest_model::dmn`; parsed graphs are cached
//! in `Models` by decision requirements key.

use std::sync::Arc;

use serde_json::{Map, Value};
use zest_model::dmn::{DecisionRequirements, Evaluation};
use zest_protocol::{
    DecisionEvaluationRecord, DecisionMetadata, DecisionRecord, DecisionRequirementsMetadata,
    DecisionRequirementsRecord, DeploymentResource, EvaluatedDecisionValue, EvaluatedInputValue,
    EvaluatedOutputValue, Intent, MatchedRuleValue, Record, RecordValue, DEFAULT_TENANT,
};

use crate::appliers::tagged_key;
use crate::deployment::checksum;
use crate::engine::{Ctx, ProcResult, Rejection};
use crate::state::Ks;
use crate::types::LatestVersion;

/// The key in Ks::Decisions of decision `decision_id` of the graph `drg_key`.
pub(crate) fn member_key(drg_key: i64, decision_id: &str) -> Vec<u8> {
    let mut rest = drg_key.to_be_bytes().to_vec();
    rest.extend_from_slice(decision_id.as_bytes());
    tagged_key(b'm', &rest)
}

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

/// Deploys one DMN resource: a new version of its graph and decisions, or the latest ones
/// again when the resource did not change.
pub(crate) fn deploy(
    ctx: &mut Ctx<'_, '_, '_>,
    res: &DeploymentResource,
    drg: DecisionRequirements,
    tenant: &str,
    deployment_key: i64,
) -> (DecisionRequirementsMetadata, Vec<DecisionMetadata>) {
    let sum = checksum(&res.resource);
    let latest_drg: Option<LatestVersion> = ctx
        .txn
        .get(Ks::Decisions, &tagged_key(b'R', drg.id.as_bytes()));
    let duplicate_of = latest_drg.and_then(|l| {
        let stored: DecisionRequirementsRecord = ctx
            .txn
            .get(Ks::Decisions, &tagged_key(b'r', &l.key.to_be_bytes()))?;
        (stored.checksum == sum
            && stored.resource == res.resource
            && stored.resource_name == res.resource_name)
            .then_some(stored)
    });
    if let Some(stored) = duplicate_of {
        let decisions = drg
            .decisions
            .iter()
            .filter_map(|d| {
                let l: LatestVersion = ctx.txn.get(
                    Ks::Decisions,
                    &member_key(stored.decision_requirements_key, &d.id),
                )?;
                let record = by_key(ctx, l.key)?;
                Some(decision_metadata(&record, true))
            })
            .collect();
        return (drg_metadata(&stored, true), decisions);
    }
    let drg_key = ctx.next_key();
    let record = DecisionRequirementsRecord {
        decision_requirements_id: drg.id.clone(),
        decision_requirements_name: drg.name.clone(),
        decision_requirements_version: latest_drg.map(|l| l.version + 1).unwrap_or(1),
        decision_requirements_key: drg_key,
        namespace: drg.namespace.clone(),
        resource_name: res.resource_name.clone(),
        checksum: sum,
        resource: res.resource.clone(),
        tenant_id: tenant.to_string(),
        deployment_key,
    };
    ctx.event(
        drg_key,
        Intent::Created,
        RecordValue::DecisionRequirements(record.clone()),
    );
    let mut decisions = Vec::new();
    for d in &drg.decisions {
        let previous: Option<LatestVersion> = ctx
            .txn
            .get(Ks::Decisions, &tagged_key(b'D', d.id.as_bytes()));
        let key = ctx.next_key();
        let decision = DecisionRecord {
            decision_id: d.id.clone(),
            decision_name: d.name.clone(),
            version: previous.map(|l| l.version + 1).unwrap_or(1),
            decision_key: key,
            decision_requirements_id: drg.id.clone(),
            decision_requirements_key: drg_key,
            tenant_id: tenant.to_string(),
            deployment_key,
        };
        ctx.event(
            key,
            Intent::Created,
            RecordValue::Decision(decision.clone()),
        );
        decisions.push(decision_metadata(&decision, false));
    }
    ctx.models
        .insert_decision_requirements(drg_key, Arc::new(drg));
    (drg_metadata(&record, false), decisions)
}

fn drg_metadata(r: &DecisionRequirementsRecord, duplicate: bool) -> DecisionRequirementsMetadata {
    DecisionRequirementsMetadata {
        decision_requirements_id: r.decision_requirements_id.clone(),
        decision_requirements_name: r.decision_requirements_name.clone(),
        decision_requirements_version: r.decision_requirements_version,
        decision_requirements_key: r.decision_requirements_key,
        namespace: r.namespace.clone(),
        resource_name: r.resource_name.clone(),
        duplicate,
        tenant_id: r.tenant_id.clone(),
    }
}

fn decision_metadata(d: &DecisionRecord, duplicate: bool) -> DecisionMetadata {
    DecisionMetadata {
        decision_id: d.decision_id.clone(),
        decision_name: d.decision_name.clone(),
        version: d.version,
        decision_key: d.decision_key,
        decision_requirements_id: d.decision_requirements_id.clone(),
        decision_requirements_key: d.decision_requirements_key,
        duplicate,
        tenant_id: d.tenant_id.clone(),
    }
}

/// An evaluated decision: the DECISION_EVALUATION value to write (without the process
/// instance fields) and the decision's result or Zeebe's failure message.
pub(crate) struct Outcome {
    pub record: DecisionEvaluationRecord,
    pub result: Result<Value, String>,
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

/// DECISION_EVALUATION EVALUATE (the EvaluateDecision RPC): evaluates the decision named by key
/// or by id (latest version) with the command's variables and answers with the evaluation.
pub fn evaluate_command(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    d: &DecisionEvaluationRecord,
) -> ProcResult {
    let tenant = if d.tenant_id.is_empty() {
        DEFAULT_TENANT
    } else {
        d.tenant_id.as_str()
    };
    let decision = if d.decision_key > 0 {
        by_key(ctx, d.decision_key).ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to evaluate decision with key '{}', but no such decision found",
                d.decision_key
            ))
        })?
    } else if !d.decision_id.is_empty() {
        latest(ctx, &d.decision_id).ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to evaluate decision '{}', but no decision found for id '{}'",
                d.decision_id, d.decision_id
            ))
        })?
    } else {
        return Err(Rejection::invalid_argument(
            "Expected either a decision id or a valid decision key, but none provided",
        ));
    };
    if decision.tenant_id != tenant {
        return Err(Rejection::not_found(format!(
            "Expected to evaluate decision '{}', but no decision found for id '{}'",
            decision.decision_id, decision.decision_id
        )));
    }
    let vars = if d.variables.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str::<Value>(&d.variables) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(Rejection::invalid_argument(format!(
                    "Expected variables to be a JSON object, but got '{}'",
                    d.variables
                )))
            }
        }
    };
    let Some(outcome) = evaluate(ctx, &decision, &vars) else {
        return Err(Rejection::invalid_state(format!(
            "Expected to evaluate decision '{}', but its decision requirements graph could not be loaded",
            decision.decision_id
        )));
    };
    let intent = if outcome.result.is_ok() {
        Intent::Evaluated
    } else {
        Intent::Failed
    };
    let key = ctx.next_key();
    let record = ctx
        .event(key, intent, RecordValue::DecisionEvaluation(outcome.record))
        .clone();
    ctx.respond(cmd, record);
    Ok(())
}

/// Deletes a version of a decision requirements graph and its decisions (in the order they
/// were created); the versions before them (if any are left) become the latest, as in Zeebe.
pub(crate) fn delete(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &zest_protocol::Record,
    key: i64,
    drg: DecisionRequirementsRecord,
) -> ProcResult {
    let tenant = drg.tenant_id.clone();
    crate::deployment::resource_deletion(ctx, cmd, key, &tenant, |ctx| {
        let mut members: Vec<i64> = ctx
            .txn
            .scan_prefix(
                Ks::Decisions,
                &tagged_key(b'm', &key.to_be_bytes()),
                usize::MAX,
            )
            .into_iter()
            .filter_map(|(_, v)| zest_protocol::codec::decode::<LatestVersion>(&v).ok())
            .map(|l| l.key)
            .collect();
        members.sort_unstable();
        for decision_key in members {
            if let Some(decision) = by_key(ctx, decision_key) {
                ctx.event(
                    decision_key,
                    zest_protocol::Intent::Deleted,
                    zest_protocol::RecordValue::Decision(decision),
                );
            }
        }
        ctx.event(
            key,
            zest_protocol::Intent::Deleted,
            zest_protocol::RecordValue::DecisionRequirements(drg),
        );
    })
}
