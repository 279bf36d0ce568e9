//! Deployments and resources: `POST /v2/deployments` (multipart/form-data: `resources` parts,
//! an optional `tenantId`) answering Camunda's DeploymentResult, and
//! `POST /v2/resources/{resourceKey}/deletion`.

use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::routing::post;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use zest_protocol::{DeploymentResource, DeploymentResponse};

use super::call::Keyed;
use super::{OrProblem, Problem, Rest, Routes};
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
    #[allow(dead_code)] // accepted, as Camunda's; Zest keeps no batch operations
    operation_reference: Option<i64>,
}

/// `POST /v2/resources/{resourceKey}/deletion`: 200 once deleted.
async fn delete_resource(
    State(rest): State<Rest>,
    Keyed { key, uri, .. }: Keyed<DeletionRequest>,
) -> Result<StatusCode, Problem> {
    rest.commands.delete_resource(key).await.or_problem(&uri)?;
    Ok(StatusCode::OK)
}
