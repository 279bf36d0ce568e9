//! Process instances: `POST /v2/process-instances` (by id or key; `awaitCompletion` answers
//! once the instance completes, like gRPC's CreateProcessInstanceWithResult), and the
//! instance's `/cancellation` (204), `/modification` and `/migration`.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use zest_protocol::MappingInstruction;

use super::call::{Call, Keyed};
use super::{int64, json_text, key_of, no_content, required, OrProblem, Problem, Rest, Routes};
use crate::commands::process_instance::{activation, NewInstance};
use crate::commands::tenant;

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/process-instances", post(create))
        .route(
            "/v2/process-instances/{processInstanceKey}/cancellation",
            post(cancel),
        )
        .route(
            "/v2/process-instances/{processInstanceKey}/modification",
            post(modify),
        )
        .route(
            "/v2/process-instances/{processInstanceKey}/migration",
            post(migrate),
        )
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct CreationRequest {
    process_definition_id: Option<String>,
    #[serde(deserialize_with = "key_of")]
    process_definition_key: Option<i64>,
    process_definition_version: Option<i32>,
    #[serde(deserialize_with = "json_text")]
    variables: String,
    start_instructions: Vec<StartInstruction>,
    runtime_instructions: Vec<Value>,
    tenant_id: Option<String>,
    operation_reference: Option<i64>,
    await_completion: bool,
    #[serde(deserialize_with = "int64")]
    request_timeout: Option<i64>,
    fetch_variables: Vec<String>,
    tags: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct StartInstruction {
    element_id: Option<String>,
}

/// Camunda's CreateProcessInstanceResult (variables only when awaiting completion).
fn created(
    id: String,
    key: i64,
    version: i32,
    instance: i64,
    tenant_id: String,
    variables: &str,
) -> Value {
    let variables: Value = serde_json::from_str(variables).unwrap_or_else(|_| json!({}));
    json!({
        "processDefinitionId": id,
        "processDefinitionKey": key.to_string(),
        "processDefinitionVersion": version,
        "processInstanceKey": instance.to_string(),
        "tenantId": tenant_id,
        "variables": variables,
        "tags": [],
    })
}

async fn create(
    State(rest): State<Rest>,
    Call { body: r, uri }: Call<CreationRequest>,
) -> Result<Json<Value>, Problem> {
    if r.process_definition_id.is_none() && r.process_definition_key.is_none() {
        return Err(Problem::bad(
            "No processDefinitionId or processDefinitionKey provided: one of them is required",
            &uri,
        ));
    }
    if !r.runtime_instructions.is_empty() || !r.tags.is_empty() {
        return Err(Problem::bad(
            "Runtime instructions and tags are not supported by this version of Zest yet",
            &uri,
        ));
    }
    let mut start_instructions = Vec::new();
    for (i, s) in r.start_instructions.into_iter().enumerate() {
        let name = format!("startInstructions[{i}].elementId");
        start_instructions.push(required(s.element_id, &name, &uri)?);
    }
    let tenant_id = tenant(
        r.tenant_id.as_deref().unwrap_or_default(),
        "request Create Process Instance",
    )
    .or_problem(&uri)?;
    let new = NewInstance {
        process_id: r.process_definition_id.unwrap_or_default(),
        version: r.process_definition_version.unwrap_or(-1),
        definition_key: r.process_definition_key.unwrap_or(-1),
        variables: r.variables,
        tenant_id,
        start_instructions,
    };
    let c = &rest.commands;
    if r.await_completion {
        let timeout = r
            .request_timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_millis(t as u64));
        let res = c
            .create_instance_with_result(new, r.fetch_variables, timeout)
            .await
            .or_problem(&uri)?;
        return Ok(Json(created(
            res.bpmn_process_id,
            res.process_definition_key,
            res.version,
            res.process_instance_key,
            res.tenant_id,
            &res.variables,
        )));
    }
    let res = c.create_instance(new).await.or_problem(&uri)?;
    Ok(Json(created(
        res.bpmn_process_id,
        res.process_definition_key,
        res.version,
        res.process_instance_key,
        res.tenant_id,
        "{}",
    )))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct OperationRequest {
    #[allow(dead_code)] // accepted, as Camunda's; Zest keeps no batch operations
    operation_reference: Option<i64>,
}

async fn cancel(
    State(rest): State<Rest>,
    Keyed { key, uri, .. }: Keyed<OperationRequest>,
) -> Result<StatusCode, Problem> {
    no_content(rest.commands.cancel_instance(key).await, &uri)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct ModificationRequest {
    activate_instructions: Vec<ActivateRequest>,
    terminate_instructions: Vec<TerminateRequest>,
    operation_reference: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ActivateRequest {
    element_id: Option<String>,
    #[serde(deserialize_with = "key_of")]
    ancestor_element_instance_key: Option<i64>,
    variable_instructions: Vec<VariableRequest>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct VariableRequest {
    #[serde(deserialize_with = "json_text")]
    variables: String,
    scope_id: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct TerminateRequest {
    #[serde(deserialize_with = "key_of")]
    element_instance_key: Option<i64>,
}

async fn modify(
    State(rest): State<Rest>,
    Keyed { key, body: r, uri }: Keyed<ModificationRequest>,
) -> Result<StatusCode, Problem> {
    let _ = r.operation_reference;
    let mut activate = Vec::new();
    for (i, a) in r.activate_instructions.into_iter().enumerate() {
        let name = format!("activateInstructions[{i}].elementId");
        let variables = a.variable_instructions.into_iter();
        activate.push(activation(
            required(a.element_id, &name, &uri)?,
            a.ancestor_element_instance_key.unwrap_or(-1),
            variables.map(|v| (v.scope_id, v.variables)),
        ));
    }
    let mut terminate = Vec::new();
    for (i, t) in r.terminate_instructions.into_iter().enumerate() {
        let name = format!("terminateInstructions[{i}].elementInstanceKey");
        terminate.push(required(t.element_instance_key, &name, &uri)?);
    }
    let modified = rest
        .commands
        .modify_instance(key, terminate, activate)
        .await;
    no_content(modified, &uri)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct MigrationRequest {
    #[serde(deserialize_with = "key_of")]
    target_process_definition_key: Option<i64>,
    mapping_instructions: Option<Vec<MappingRequest>>,
    operation_reference: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct MappingRequest {
    source_element_id: Option<String>,
    target_element_id: Option<String>,
}

async fn migrate(
    State(rest): State<Rest>,
    Keyed { key, body: r, uri }: Keyed<MigrationRequest>,
) -> Result<StatusCode, Problem> {
    let _ = r.operation_reference;
    let target = required(
        r.target_process_definition_key,
        "targetProcessDefinitionKey",
        &uri,
    )?;
    let instructions = required(r.mapping_instructions, "mappingInstructions", &uri)?;
    let mut mappings = Vec::new();
    for (i, m) in instructions.into_iter().enumerate() {
        let name = |side: &str| format!("mappingInstructions[{i}].{side}ElementId");
        mappings.push(MappingInstruction {
            source_element_id: required(m.source_element_id, &name("source"), &uri)?,
            target_element_id: required(m.target_element_id, &name("target"), &uri)?,
        });
    }
    let migrated = rest.commands.migrate_instance(key, target, mappings).await;
    no_content(migrated, &uri)
}
