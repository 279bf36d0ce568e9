//! The REST API v2's reads of decisions from history: decision definitions and decision
//! requirements (search, get, DMN XML) and decision instances (search, and the get with the
//! evaluated inputs and matched rules). Each reads the cluster's history as the other history
//! reads do (`rest/history.rs`); `POST /v2/decision-definitions/evaluation` stays in
//! `rest/decisions.rs`.

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;
use zest_history::resources::decision_instance_key;
use zest_history::Named;

use super::history::{history_problem, run_get, run_search, Text};
use super::{parse_named_key, Problem, Rest};

pub(super) fn routes(router: Router<Rest>) -> Router<Rest> {
    router
        .route("/v2/decision-definitions/search", post(search_definitions))
        .route(
            "/v2/decision-definitions/{decisionDefinitionKey}",
            get(get_definition),
        )
        .route(
            "/v2/decision-definitions/{decisionDefinitionKey}/xml",
            get(definition_xml),
        )
        .route(
            "/v2/decision-requirements/search",
            post(search_requirements),
        )
        .route(
            "/v2/decision-requirements/{decisionRequirementsKey}",
            get(get_requirements),
        )
        .route(
            "/v2/decision-requirements/{decisionRequirementsKey}/xml",
            get(requirements_xml),
        )
        .route("/v2/decision-instances/search", post(search_instances))
        .route(
            "/v2/decision-instances/{decisionEvaluationInstanceKey}",
            get(get_instance),
        )
}

async fn search_definitions(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::DecisionDefinitions, &text, None, &uri).await
}

async fn get_definition(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let (name, what) = ("decisionDefinitionKey", "Decision Definition");
    run_get(&rest, Named::DecisionDefinitions, &key, name, what, &uri).await
}

/// The DMN XML of `resource` (one of the XML resources) with `key`, as `text/xml`.
async fn xml(
    rest: &Rest,
    resource: Named,
    key: &str,
    name: &str,
    what: &str,
    uri: &Uri,
) -> Result<Response, Problem> {
    let Json(item) = run_get(rest, resource, key, name, what, uri).await?;
    let text = item["xml"].as_str().unwrap_or_default().to_string();
    Ok(([("content-type", "text/xml; charset=utf-8")], text).into_response())
}

async fn definition_xml(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Response, Problem> {
    let (name, what) = ("decisionDefinitionKey", "Decision Definition");
    xml(&rest, Named::DecisionDefinitionXml, &key, name, what, &uri).await
}

async fn search_requirements(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::DecisionRequirements, &text, None, &uri).await
}

async fn get_requirements(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let (name, what) = ("decisionRequirementsKey", "Decision Requirements");
    run_get(&rest, Named::DecisionRequirements, &key, name, what, &uri).await
}

async fn requirements_xml(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Response, Problem> {
    let (name, what) = ("decisionRequirementsKey", "Decision Requirements");
    xml(
        &rest,
        Named::DecisionRequirementsXml,
        &key,
        name,
        what,
        &uri,
    )
    .await
}

async fn search_instances(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::DecisionInstances, &text, None, &uri).await
}

/// `GET /v2/decision-instances/{key}-{index}`.
async fn get_instance(
    State(rest): State<Rest>,
    Path(id): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let bad = || {
        Problem::bad(
            format!(
                "The provided decisionEvaluationInstanceKey '{id}' is not a valid key: \
                 expected '<decisionEvaluationKey>-<index>'"
            ),
            &uri,
        )
    };
    let (evaluation, index) = id.split_once('-').ok_or_else(bad)?;
    let evaluation = parse_named_key(evaluation, "decisionEvaluationKey", &uri)?;
    let index: i64 = index.parse().map_err(|_| bad())?;
    let not_found = || {
        Problem::new(
            StatusCode::NOT_FOUND,
            format!("Decision Instance with key '{id}' not found"),
            &uri,
        )
    };
    let Some(key) = decision_instance_key(evaluation, index) else {
        return Err(not_found());
    };
    let item = rest
        .broker
        .history_get(Named::DecisionInstanceFull, key)
        .await
        .map_err(|e| history_problem(e, &uri))?;
    item.map(Json).ok_or_else(not_found)
}
