//! Deployed definitions over the REST API: a process definition's BPMN XML and its start form,
//! and the form of a user task, as Camunda 8.8 serves them
//! (`GET /v2/process-definitions/{key}/xml`, `GET /v2/process-definitions/{key}/form`,
//! `GET /v2/user-tasks/{key}/form`). Forms linked by id (`zeebe:formDefinition formId`) are
//! the deployed forms; forms embedded in the model (`zeebe:userTaskForm`, referred to as
//! `camunda-forms:bpmn:<id>`) come from the process's own XML.

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use zest_model::StartForm;
use zest_protocol::FormRecord;

use super::{broker_problem, parse_named_key, Problem, Rest};

fn not_found(what: &str, key: i64, uri: &Uri) -> Problem {
    Problem::new(
        StatusCode::NOT_FOUND,
        format!("{what} with key '{key}' not found"),
        uri,
    )
}

/// `GET /v2/process-definitions/{key}/xml`: the BPMN XML the process was deployed with.
pub(super) async fn process_xml(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Response, Problem> {
    let key = parse_named_key(&key, "processDefinitionKey", &uri)?;
    let process = rest
        .broker
        .process_definition(key)
        .await
        .map_err(|e| broker_problem(e, &uri))?
        .ok_or_else(|| not_found("Process definition", key, &uri))?;
    Ok((
        [("content-type", "text/xml; charset=utf-8")],
        process.resource,
    )
        .into_response())
}

/// A deployed form as Camunda's `FormResult`.
fn form_json(f: &FormRecord) -> Value {
    json!({
        "formKey": f.form_key.to_string(),
        "formId": f.form_id,
        "version": f.version,
        "schema": String::from_utf8_lossy(&f.resource),
        "tenantId": f.tenant_id,
    })
}

/// `GET /v2/process-definitions/{key}/form`: the form of the process's none start event, or
/// 204 when it has none (or names a form kept elsewhere).
pub(super) async fn start_form(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Response, Problem> {
    let key = parse_named_key(&key, "processDefinitionKey", &uri)?;
    let record = rest
        .broker
        .process_definition(key)
        .await
        .map_err(|e| broker_problem(e, &uri))?
        .ok_or_else(|| not_found("Process definition", key, &uri))?;
    let process = zest_model::parse_bpmn(&record.resource_name, &record.resource)
        .ok()
        .and_then(|ps| ps.into_iter().find(|p| p.id == record.bpmn_process_id));
    let Some(process) = process else {
        return Ok(StatusCode::NO_CONTENT.into_response());
    };
    let body = match &process.start_form {
        Some(StartForm::Linked(form_id)) => rest
            .broker
            .latest_form(form_id)
            .await
            .map_err(|e| broker_problem(e, &uri))?
            .map(|f| form_json(&f)),
        Some(StartForm::Key(form_key)) => process.embedded_form(form_key).map(|f| {
            json!({
                "formKey": form_key,
                "formId": f.id,
                "version": Value::Null,
                "schema": f.schema,
                "tenantId": record.tenant_id,
            })
        }),
        Some(StartForm::External(_)) | None => None,
    };
    Ok(match body {
        Some(b) => Json(b).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

/// `GET /v2/user-tasks/{key}/form`: the linked form of a Camunda user task, or 204.
pub(super) async fn user_task_form(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Response, Problem> {
    let key = parse_named_key(&key, "userTaskKey", &uri)?;
    let task = rest
        .broker
        .open_user_task(key)
        .await
        .map_err(|e| broker_problem(e, &uri))?
        .ok_or_else(|| {
            Problem::new(
                StatusCode::NOT_FOUND,
                format!("User task with key '{key}' not found (Zest keeps open user tasks only)"),
                &uri,
            )
        })?;
    let form_key = task.record.form_key;
    let form = match form_key > 0 {
        true => rest
            .broker
            .form(form_key)
            .await
            .map_err(|e| broker_problem(e, &uri))?,
        false => None,
    };
    Ok(match form {
        Some(f) => Json(form_json(&f)).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}
