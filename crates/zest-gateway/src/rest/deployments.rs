//! Deployments and resources: `POST /v2/deployments` (multipart/form-data: `resources` parts,
//! an optional `tenantId`) answering Camunda's DeploymentResult, and
//! `POST /v2/resources/{resourceKey}/deletion` (8.9's `deleteHistory` included).

use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::extract::State;
use axum::http::Uri;
use axum::routing::post;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use zest_protocol::{DeploymentResource, DeploymentResponse};

use super::batch_operations::{create, history_needed};
use super::call::Keyed;
use super::{broker_problem, OrProblem, Problem, Rest, Routes};
use crate::commands::tenant;

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/deployments", post(deploy)).route(
        "/v2/resources/{resourceKey}/deletion",
        post(delete_resource),
    )
}

async fn deploy(
    State(rest): State<Rest>,
    uri: Uri,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Json<Value>, Problem> {
    let form = form.map_err(|e| {
        Problem::bad(
            format!("Expected a multipart/form-data request with 'resources' parts: {e}"),
            &uri,
        )
    })?;
    let (resources, tenant_id) = read_form(form, &uri).await?;
    if resources.is_empty() {
        return Err(Problem::bad(
            "No resources provided: 'resources' must hold at least one file to deploy",
            &uri,
        ));
    }
    let tenant_id = tenant(&tenant_id, "request Deploy Resources").or_problem(&uri)?;
    let d = rest
        .commands
        .deploy(resources, tenant_id)
        .await
        .or_problem(&uri)?;
    Ok(Json(deployment_result(&d)))
}

/// The form's `resources` files and its `tenantId`.
async fn read_form(
    mut form: Multipart,
    uri: &Uri,
) -> Result<(Vec<DeploymentResource>, String), Problem> {
    let bad = |e: axum::extract::multipart::MultipartError| {
        Problem::bad(
            format!("Expected a valid multipart/form-data body: {e}"),
            uri,
        )
    };
    let mut resources = Vec::new();
    let mut tenant_id = String::new();
    while let Some(field) = form.next_field().await.map_err(bad)? {
        match field.name().unwrap_or_default() {
            "resources" => {
                let resource_name = field.file_name().unwrap_or_default().to_string();
                let resource = field.bytes().await.map_err(bad)?.to_vec();
                resources.push(DeploymentResource {
                    resource_name,
                    resource,
                });
            }
            "tenantId" => tenant_id = field.text().await.map_err(bad)?,
            other => {
                return Err(Problem::bad(
                    format!("Expected the parts 'resources' and 'tenantId', but got '{other}'"),
                    uri,
                ))
            }
        }
    }
    Ok((resources, tenant_id))
}

/// Camunda's DeploymentResult: one entry per deployed process, decision, decision
/// requirements graph and form.
fn deployment_result(d: &DeploymentResponse) -> Value {
    let processes = d.processes_metadata.iter().map(|p| {
        json!({"processDefinition": {
            "processDefinitionId": p.bpmn_process_id,
            "processDefinitionVersion": p.version,
            "resourceName": p.resource_name,
            "processDefinitionKey": p.process_definition_key.to_string(),
            "tenantId": p.tenant_id,
        }})
    });
    let decisions = d.decisions_metadata.iter().map(|m| {
        json!({"decisionDefinition": {
            "decisionDefinitionId": m.decision_id,
            "version": m.version,
            "name": m.decision_name,
            "tenantId": m.tenant_id,
            "decisionRequirementsId": m.decision_requirements_id,
            "decisionDefinitionKey": m.decision_key.to_string(),
            "decisionRequirementsKey": m.decision_requirements_key.to_string(),
        }})
    });
    let graphs = d.decision_requirements_metadata.iter().map(|m| {
        json!({"decisionRequirements": {
            "decisionRequirementsId": m.decision_requirements_id,
            "version": m.decision_requirements_version,
            "decisionRequirementsName": m.decision_requirements_name,
            "tenantId": m.tenant_id,
            "resourceName": m.resource_name,
            "decisionRequirementsKey": m.decision_requirements_key.to_string(),
        }})
    });
    let forms = d.forms_metadata.iter().map(|f| {
        json!({"form": {
            "formId": f.form_id,
            "version": f.version,
            "resourceName": f.resource_name,
            "tenantId": f.tenant_id,
            "formKey": f.form_key.to_string(),
        }})
    });
    let deployments: Vec<Value> = processes
        .chain(decisions)
        .chain(graphs)
        .chain(forms)
        .collect();
    json!({
        "deploymentKey": d.deployment_key.to_string(),
        "tenantId": d.tenant_id,
        "deployments": deployments,
    })
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct DeletionRequest {
    #[allow(dead_code)] // accepted, as Camunda's
    operation_reference: Option<i64>,
    /// 8.9: delete a process definition's history too, by a batch operation.
    delete_history: bool,
}

/// `POST /v2/resources/{resourceKey}/deletion`: 200 once deleted, with 8.9's `{resourceKey,
/// batchOperation}`. With `deleteHistory` and a process definition, `batchOperation` is the
/// DELETE_PROCESS_DEFINITION operation created after the resource's deletion, which deletes
/// the history of the definition's instances, then the definition's own (`batch_ops.rs`);
/// otherwise it is null (the spec: decision requirements and forms keep their history). A
/// process version one of whose instances still runs is refused (409) as without the flag.
async fn delete_resource(
    State(rest): State<Rest>,
    Keyed { key, body, uri }: Keyed<DeletionRequest>,
) -> Result<Json<Value>, Problem> {
    let history = body.delete_history && is_process(&rest, key, &uri).await?;
    if history {
        history_needed(&rest, &uri)?;
    }
    rest.commands.delete_resource(key).await.or_problem(&uri)?;
    let batch_operation = match history {
        true => {
            let filter = json!({"processDefinitionKey": key.to_string()}).to_string();
            let created = create(
                &rest,
                "DELETE_PROCESS_DEFINITION",
                filter,
                String::new(),
                &uri,
            );
            created.await?.0
        }
        false => Value::Null,
    };
    Ok(Json(json!({
        "resourceKey": key.to_string(),
        "batchOperation": batch_operation,
    })))
}

/// Whether `key` is a deployed process definition's (resources are partition 1's).
async fn is_process(rest: &Rest, key: i64, uri: &Uri) -> Result<bool, Problem> {
    if key <= 0 || rest.broker.partition_of(key) != 1 {
        return Ok(false);
    }
    let found = rest.broker.process_definition(key).await;
    Ok(found.map_err(|e| broker_problem(e, uri))?.is_some())
}
