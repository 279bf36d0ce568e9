//! Camunda 8.9's history deletion (`docs/design/history.md`, "History deletion"):
//! `POST /v2/process-instances/{processInstanceKey}/deletion` and
//! `/v2/decision-instances/{decisionEvaluationKey}/deletion` (204; 404 when history does not
//! hold the key, asked here since the engine keeps no finished instance; 409 from the engine
//! while the instance runs), and the batch operations by filter `POST
//! /v2/process-instances/deletion` (DELETE_PROCESS_INSTANCE) and
//! `/v2/decision-instances/deletion` (DELETE_DECISION_INSTANCE). They need history: with
//! `--history off` every one answers Camunda's 403.

use axum::http::{StatusCode, Uri};
use axum::routing::post;
use axum::Json;
use serde::Deserialize;
use serde_json::Value;
use zest_history::resources::decision_instance_key;
use zest_history::Named;
use zest_protocol::HistoryDeletionRecord;

use super::batch_operations::{checked_filter_of, create, history_needed};
use super::call::{Call, Keyed};
use super::history::history_problem;
use super::{no_content, Problem, Rest, Routes};
use axum::extract::State;

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/process-instances/deletion", post(delete_instances))
        .route(
            "/v2/process-instances/{processInstanceKey}/deletion",
            post(delete_instance),
        )
        .route("/v2/decision-instances/deletion", post(delete_evaluations))
        .route(
            "/v2/decision-instances/{decisionEvaluationKey}/deletion",
            post(delete_evaluation),
        )
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct OperationRequest {
    #[allow(dead_code)] // accepted, as Camunda's
    operation_reference: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct FilterRequest {
    filter: Option<Value>,
    #[allow(dead_code)] // accepted, as Camunda's
    operation_reference: Option<i64>,
}

/// A 404 unless history holds `key` of `resource` (`what` names it in the problem).
async fn found(
    rest: &Rest,
    resource: Named,
    key: i64,
    what: &str,
    uri: &Uri,
) -> Result<(), Problem> {
    let item = rest.broker.history_get(resource, key).await;
    match item.map_err(|e| history_problem(e, uri))? {
        Some(_) => Ok(()),
        None => Err(Problem::new(
            StatusCode::NOT_FOUND,
            format!("{what} not found"),
            uri,
        )),
    }
}

async fn delete_instance(
    State(rest): State<Rest>,
    Keyed { key, uri, .. }: Keyed<OperationRequest>,
) -> Result<StatusCode, Problem> {
    history_needed(&rest, &uri)?;
    let what = format!("Process instance with key '{key}'");
    found(&rest, Named::ProcessInstances, key, &what, &uri).await?;
    let done = rest
        .commands
        .delete_history(key, HistoryDeletionRecord::PROCESS_INSTANCE)
        .await;
    no_content(done, &uri)
}

async fn delete_evaluation(
    State(rest): State<Rest>,
    Keyed { key, uri, .. }: Keyed<OperationRequest>,
) -> Result<StatusCode, Problem> {
    history_needed(&rest, &uri)?;
    let what = format!("Decision evaluation with key '{key}'");
    // every evaluation has a first decision instance; a key past their range has none
    let first = decision_instance_key(key, 1)
        .ok_or_else(|| Problem::new(StatusCode::NOT_FOUND, format!("{what} not found"), &uri))?;
    found(&rest, Named::DecisionInstances, first, &what, &uri).await?;
    let done = rest
        .commands
        .delete_history(key, HistoryDeletionRecord::DECISION_INSTANCE)
        .await;
    no_content(done, &uri)
}

async fn delete_instances(
    State(rest): State<Rest>,
    Call { body, uri }: Call<FilterRequest>,
) -> Result<Json<Value>, Problem> {
    history_needed(&rest, &uri)?;
    let filter = checked_filter_of(Named::ProcessInstances, body.filter, &uri)?;
    create(
        &rest,
        "DELETE_PROCESS_INSTANCE",
        filter,
        String::new(),
        &uri,
    )
    .await
}

async fn delete_evaluations(
    State(rest): State<Rest>,
    Call { body, uri }: Call<FilterRequest>,
) -> Result<Json<Value>, Problem> {
    history_needed(&rest, &uri)?;
    let filter = checked_filter_of(Named::DecisionInstances, body.filter, &uri)?;
    create(
        &rest,
        "DELETE_DECISION_INSTANCE",
        filter,
        String::new(),
        &uri,
    )
    .await
}
