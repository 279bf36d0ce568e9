//! Decisions, incidents and element instance variables: `POST /v2/decision-definitions/evaluation`
//! (EvaluateDecisionResult), `POST /v2/incidents/{incidentKey}/resolution` and
//! `PUT /v2/element-instances/{elementInstanceKey}/variables`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{post, put};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use zest_protocol::EvaluatedDecisionValue;

use super::call::{Call, Keyed};
use super::{json_text, key_of, no_content, OrProblem, Problem, Rest, Routes};
use crate::commands::decision::Evaluated;
use crate::commands::tenant;

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/decision-definitions/evaluation", post(evaluate))
        .route(
            "/v2/incidents/{incidentKey}/resolution",
            post(resolve_incident),
        )
        .route(
            "/v2/element-instances/{elementInstanceKey}/variables",
            put(set_variables),
        )
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct EvaluationRequest {
    decision_definition_id: Option<String>,
    #[serde(deserialize_with = "key_of")]
    decision_definition_key: Option<i64>,
    #[serde(deserialize_with = "json_text")]
    variables: String,
    tenant_id: String,
}

async fn evaluate(
    State(rest): State<Rest>,
    Call { body: r, uri }: Call<EvaluationRequest>,
) -> Result<Json<Value>, Problem> {
    if r.decision_definition_id.is_none() && r.decision_definition_key.is_none() {
        return Err(Problem::bad(
            "No decisionDefinitionId or decisionDefinitionKey provided: one of them is required",
            &uri,
        ));
    }
    tenant(&r.tenant_id, "request Evaluate Decision").or_problem(&uri)?;
    let key = r.decision_definition_key.unwrap_or(-1);
    let id = r.decision_definition_id.unwrap_or_default();
    let evaluated = rest
        .commands
        .evaluate_decision(key, &id, r.variables)
        .await
        .or_problem(&uri)?;
    Ok(Json(evaluation_result(evaluated)))
}

/// Camunda's EvaluateDecisionResult.
fn evaluation_result(e: Evaluated) -> Value {
    let (key, d) = (e.key, e.evaluation);
    let evaluated: Vec<Value> = d
        .evaluated_decisions
        .into_iter()
        .enumerate()
        .map(|(i, e)| evaluated_decision(key, i, e))
        .collect();
    json!({
        "decisionDefinitionId": d.decision_id,
        "decisionDefinitionKey": d.decision_key.to_string(),
        "decisionDefinitionName": d.decision_name,
        "decisionDefinitionVersion": d.decision_version,
        "decisionRequirementsId": d.decision_requirements_id,
        "decisionRequirementsKey": d.decision_requirements_key.to_string(),
        "output": d.decision_output,
        "failedDecisionDefinitionId": d.failed_decision_id,
        "failureMessage": d.evaluation_failure_message,
        "tenantId": d.tenant_id,
        "decisionInstanceKey": key.to_string(),
        "decisionEvaluationKey": key.to_string(),
        "evaluatedDecisions": evaluated,
    })
}

fn evaluated_decision(key: i64, i: usize, e: EvaluatedDecisionValue) -> Value {
    let rules: Vec<Value> = e
        .matched_rules
        .into_iter()
        .map(|m| {
            let outputs: Vec<Value> = m
                .evaluated_outputs
                .into_iter()
                .map(|o| json!({"outputId": o.output_id, "outputName": o.output_name, "outputValue": o.output_value}))
                .collect();
            json!({"ruleId": m.rule_id, "ruleIndex": m.rule_index, "evaluatedOutputs": outputs})
        })
        .collect();
    let inputs: Vec<Value> = e
        .evaluated_inputs
        .into_iter()
        .map(|i| json!({"inputId": i.input_id, "inputName": i.input_name, "inputValue": i.input_value}))
        .collect();
    json!({
        "decisionDefinitionId": e.decision_id,
        "decisionDefinitionKey": e.decision_key.to_string(),
        "decisionDefinitionName": e.decision_name,
        "decisionDefinitionVersion": e.decision_version,
        "decisionDefinitionType": e.decision_type,
        "output": e.decision_output,
        "tenantId": e.tenant_id,
        "matchedRules": rules,
        "evaluatedInputs": inputs,
        // Zeebe: the evaluation's key and the decision's position in it
        "decisionEvaluationInstanceKey": format!("{key}-{}", i + 1),
    })
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct ResolutionRequest {
    #[allow(dead_code)] // accepted, as Camunda's; Zest keeps no batch operations
    operation_reference: Option<i64>,
}

async fn resolve_incident(
    State(rest): State<Rest>,
    Keyed { key, uri, .. }: Keyed<ResolutionRequest>,
) -> Result<StatusCode, Problem> {
    no_content(rest.commands.resolve_incident(key).await, &uri)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct VariablesRequest {
    variables: Option<Value>,
    local: bool,
    #[allow(dead_code)] // accepted, as Camunda's
    operation_reference: Option<i64>,
}

async fn set_variables(
    State(rest): State<Rest>,
    Keyed { key, body: r, uri }: Keyed<VariablesRequest>,
) -> Result<StatusCode, Problem> {
    let variables = match r.variables {
        Some(v @ Value::Object(_)) => v.to_string(),
        Some(_) => {
            return Err(Problem::bad(
                "Property 'variables' is invalid: expected a JSON object",
                &uri,
            ))
        }
        None => {
            return Err(Problem::bad(
                "No variables provided: 'variables' is required",
                &uri,
            ))
        }
    };
    let set = rest.commands.set_variables(key, variables, r.local).await;
    set.map(|_| StatusCode::NO_CONTENT).or_problem(&uri)
}
