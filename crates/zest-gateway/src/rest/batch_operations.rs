//! Batch operations (Camunda 8.8): `POST /v2/process-instances/cancellation`,
//! `/incident-resolution`, `/migration` and `/modification` create one over the process
//! instances a filter finds (the process instance search's filter, checked by the one filter
//! compiler: a bad field is a 400 naming it); `/v2/batch-operations/{key}` gets one,
//! `/search` and `/v2/batch-operation-items/search` search them in history, and
//! `/cancellation`, `/suspension`, `/resumption` act on one (204); 8.9's
//! `/v2/process-instances/{key}/incident-resolution` is one over a single instance. They need history to find
//! their items: with `--history off` every one answers Camunda's 403.

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::routing::{get, post};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use zest_history::{Conditions, Named};
use zest_protocol::Intent;

use super::call::Call;
use super::history::{history_problem, no_history, query};
use super::{key_of, parse_named_key, required, OrProblem, Problem, Rest, Routes};

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/process-instances/cancellation", post(cancel_instances))
        .route(
            "/v2/process-instances/incident-resolution",
            post(resolve_incidents),
        )
        .route(
            "/v2/process-instances/{processInstanceKey}/incident-resolution",
            post(resolve_instance_incidents),
        )
        .route("/v2/process-instances/migration", post(migrate_instances))
        .route("/v2/process-instances/modification", post(modify_instances))
        .route("/v2/batch-operations/search", post(search))
        .route("/v2/batch-operations/{batchOperationKey}", get(get_one))
        .route(
            "/v2/batch-operations/{batchOperationKey}/cancellation",
            post(cancel),
        )
        .route(
            "/v2/batch-operations/{batchOperationKey}/suspension",
            post(suspend),
        )
        .route(
            "/v2/batch-operations/{batchOperationKey}/resumption",
            post(resume),
        )
        .route("/v2/batch-operation-items/search", post(search_items))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct FilterRequest {
    filter: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct MigrationRequest {
    filter: Option<Value>,
    migration_plan: Option<MigrationPlan>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct MigrationPlan {
    #[serde(deserialize_with = "key_of")]
    target_process_definition_key: Option<i64>,
    mapping_instructions: Option<Vec<Mapping>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct Mapping {
    source_element_id: Option<String>,
    target_element_id: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct ModificationRequest {
    filter: Option<Value>,
    move_instructions: Option<Vec<Mapping>>,
}

/// The filter, checked by the process instance search's compiler: a 400 naming a bad field.
fn checked_filter(filter: Option<Value>, uri: &Uri) -> Result<String, Problem> {
    checked_filter_of(Named::ProcessInstances, filter, uri)
}

/// The filter, checked by `resource`'s search compiler: a 400 naming a bad field.
pub(super) fn checked_filter_of(
    resource: Named,
    filter: Option<Value>,
    uri: &Uri,
) -> Result<String, Problem> {
    let filter = required(filter, "filter", uri)?;
    let r = resource.resource();
    Conditions::default()
        .compile(&filter, r.fields, r.special)
        .map_err(|e| Problem::bad(e.0, uri))?;
    Ok(filter.to_string())
}

/// Creates the operation: `{batchOperationKey, batchOperationType}`.
pub(super) async fn create(
    rest: &Rest,
    operation_type: &str,
    filter: String,
    plan: String,
    uri: &Uri,
) -> Result<Json<Value>, Problem> {
    let key = rest
        .commands
        .create_batch_operation(operation_type, filter, plan)
        .await
        .or_problem(uri)?;
    Ok(Json(json!({
        "batchOperationKey": key.to_string(),
        "batchOperationType": operation_type,
    })))
}

pub(super) fn history_needed(rest: &Rest, uri: &Uri) -> Result<(), Problem> {
    if rest.broker.history_on() {
        Ok(())
    } else {
        Err(no_history(uri))
    }
}

async fn cancel_instances(
    State(rest): State<Rest>,
    Call { body, uri }: Call<FilterRequest>,
) -> Result<Json<Value>, Problem> {
    history_needed(&rest, &uri)?;
    let filter = checked_filter(body.filter, &uri)?;
    create(
        &rest,
        "CANCEL_PROCESS_INSTANCE",
        filter,
        String::new(),
        &uri,
    )
    .await
}

async fn resolve_incidents(
    State(rest): State<Rest>,
    Call { body, uri }: Call<FilterRequest>,
) -> Result<Json<Value>, Problem> {
    history_needed(&rest, &uri)?;
    // the body is optional here: no filter is every instance with an incident
    let filter = checked_filter(Some(body.filter.unwrap_or_else(|| json!({}))), &uri)?;
    create(&rest, "RESOLVE_INCIDENT", filter, String::new(), &uri).await
}

/// Camunda 8.9's `POST /v2/process-instances/{key}/incident-resolution`: every incident of one
/// instance, resolved by a batch operation over it (404 when history has no such instance).
async fn resolve_instance_incidents(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    history_needed(&rest, &uri)?;
    let key = parse_named_key(&key, "processInstanceKey", &uri)?;
    let found = rest
        .broker
        .history_get(Named::ProcessInstances, key)
        .await
        .map_err(|e| history_problem(e, &uri))?;
    if found.is_none() {
        return Err(Problem::new(
            StatusCode::NOT_FOUND,
            format!("Process instance with key '{key}' not found"),
            &uri,
        ));
    }
    let filter = json!({ "processInstanceKey": key.to_string() }).to_string();
    create(&rest, "RESOLVE_INCIDENT", filter, String::new(), &uri).await
}

/// Each mapping's two element ids, or a 400 naming the one missing (`list[i].sourceElementId`).
fn mappings(list: Vec<Mapping>, name: &str, uri: &Uri) -> Result<Vec<Value>, Problem> {
    let mut out = Vec::new();
    for (i, m) in list.into_iter().enumerate() {
        let field = |side: &str| format!("{name}[{i}].{side}ElementId");
        out.push(json!({
            "sourceElementId": required(m.source_element_id, &field("source"), uri)?,
            "targetElementId": required(m.target_element_id, &field("target"), uri)?,
        }));
    }
    Ok(out)
}

async fn migrate_instances(
    State(rest): State<Rest>,
    Call { body, uri }: Call<MigrationRequest>,
) -> Result<Json<Value>, Problem> {
    history_needed(&rest, &uri)?;
    let filter = checked_filter(body.filter, &uri)?;
    let plan = required(body.migration_plan, "migrationPlan", &uri)?;
    let target = required(
        plan.target_process_definition_key,
        "migrationPlan.targetProcessDefinitionKey",
        &uri,
    )?;
    let name = "migrationPlan.mappingInstructions";
    let list = required(plan.mapping_instructions, name, &uri)?;
    let plan = json!({
        "targetProcessDefinitionKey": target.to_string(),
        "mappingInstructions": mappings(list, name, &uri)?,
    });
    let plan = plan.to_string();
    create(&rest, "MIGRATE_PROCESS_INSTANCE", filter, plan, &uri).await
}

async fn modify_instances(
    State(rest): State<Rest>,
    Call { body, uri }: Call<ModificationRequest>,
) -> Result<Json<Value>, Problem> {
    history_needed(&rest, &uri)?;
    let filter = checked_filter(body.filter, &uri)?;
    let list = required(body.move_instructions, "moveInstructions", &uri)?;
    let plan = Value::Array(mappings(list, "moveInstructions", &uri)?).to_string();
    create(&rest, "MODIFY_PROCESS_INSTANCE", filter, plan, &uri).await
}

async fn search(State(rest): State<Rest>, uri: Uri, text: String) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::BatchOperations, &text, &uri).await
}

async fn search_items(
    State(rest): State<Rest>,
    uri: Uri,
    text: String,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::BatchOperationItems, &text, &uri).await
}

async fn run_search(
    rest: &Rest,
    resource: Named,
    text: &str,
    uri: &Uri,
) -> Result<Json<Value>, Problem> {
    let q = query(text, uri)?;
    rest.broker
        .history_search(resource, &q, None)
        .await
        .map(Json)
        .map_err(|e| history_problem(e, uri))
}

async fn get_one(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let key = parse_named_key(&key, "batchOperationKey", &uri)?;
    let item = rest.broker.history_get(Named::BatchOperations, key).await;
    match item.map_err(|e| history_problem(e, &uri))? {
        Some(v) => Ok(Json(v)),
        None => Err(Problem::new(
            StatusCode::NOT_FOUND,
            format!("Batch operation with key '{key}' not found"),
            &uri,
        )),
    }
}

async fn lifecycle(
    rest: &Rest,
    key: &str,
    intent: Intent,
    uri: &Uri,
) -> Result<StatusCode, Problem> {
    history_needed(rest, uri)?;
    let key = parse_named_key(key, "batchOperationKey", uri)?;
    let done = rest.commands.batch_operation_lifecycle(key, intent).await;
    done.or_problem(uri).map(|()| StatusCode::NO_CONTENT)
}

async fn cancel(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<StatusCode, Problem> {
    lifecycle(&rest, &key, Intent::Cancel, &uri).await
}

async fn suspend(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<StatusCode, Problem> {
    lifecycle(&rest, &key, Intent::Suspend, &uri).await
}

async fn resume(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<StatusCode, Problem> {
    lifecycle(&rest, &key, Intent::Resume, &uri).await
}
