//! Deployed definitions over the REST API: a process definition's BPMN XML and its start form,
//! and the form of a user task, as Camunda 8.8 serves them
//! (`GET /v2/process-definitions/{key}/xml`, `GET /v2/process-definitions/{key}/form`,
//! `GET /v2/user-tasks/{key}/form`). Forms linked by id (`zeebe:formDefinition formId`) are
//! the deployed forms; forms embedded in the model (`zeebe:userTaskForm`, referred to as
//! `camunda-forms:bpmn:<id>`) come from the process's own XML.
//!
//! Camunda serves the XML and the two forms from its secondary storage (eventually
//! consistent), and so does Zest: the definition, its XML, the task and the deployed forms
//! come from history, which keeps
//! every form version deployed, a deleted one too (a finished task's form is still found).
//! A form history lacks (deployed before history kept forms) is read from the partitions'
//! state; with `--history off` everything is.

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use zest_history::Named;
use zest_model::StartForm;
use zest_protocol::FormRecord;

use super::history::history_problem;
use super::{broker_problem, parse_named_key, Problem, Rest};

fn not_found(what: &str, key: i64, uri: &Uri) -> Problem {
    Problem::new(
        StatusCode::NOT_FOUND,
        format!("{what} with key '{key}' not found"),
        uri,
    )
}

/// `GET /v2/process-definitions/{key}/xml`: the BPMN XML the process was deployed with, from
/// history when it is on (the spec marks it eventually consistent), else from the state.
pub(super) async fn process_xml(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Response, Problem> {
    let key = parse_named_key(&key, "processDefinitionKey", &uri)?;
    let deployed = deployed_process(&rest, key, &uri).await?;
    Ok(([("content-type", "text/xml; charset=utf-8")], deployed.xml).into_response())
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

/// The form `form_key` (`FormResult`): from history, else from the partitions' state.
async fn form_by_key(rest: &Rest, form_key: i64, uri: &Uri) -> Result<Option<Value>, Problem> {
    if rest.broker.history_on() {
        let found = rest.broker.history_get(Named::Forms, form_key).await;
        if let Some(form) = found.map_err(|e| history_problem(e, uri))? {
            return Ok(Some(form));
        }
    }
    let found = rest.broker.form(form_key).await;
    Ok(found
        .map_err(|e| broker_problem(e, uri))?
        .map(|f| form_json(&f)))
}

/// The latest version of the form `form_id` of `tenant` whose resource is not deleted: from
/// history, else from the partitions' state.
async fn latest_form(
    rest: &Rest,
    form_id: &str,
    tenant: &str,
    uri: &Uri,
) -> Result<Option<Value>, Problem> {
    if rest.broker.history_on() {
        let q = json!({
            "filter": {"formId": form_id, "tenantId": tenant, "isDeleted": false},
            "sort": [{"field": "version", "order": "DESC"}],
            "page": {"limit": 1},
        });
        let page = rest.broker.history_search(Named::Forms, &q, None).await;
        let page = page.map_err(|e| history_problem(e, uri))?;
        if let Some(form) = page["items"].get(0) {
            return Ok(Some(form.clone()));
        }
    }
    let found = rest.broker.latest_form(form_id).await;
    Ok(found
        .map_err(|e| broker_problem(e, uri))?
        .map(|f| form_json(&f)))
}

/// What a start form is found from: a process definition's resource name, XML, process id and
/// tenant, from history (else the state).
struct Deployed {
    resource_name: String,
    xml: Vec<u8>,
    process_id: String,
    tenant_id: String,
}

async fn deployed_process(rest: &Rest, key: i64, uri: &Uri) -> Result<Deployed, Problem> {
    if !rest.broker.history_on() {
        let record = rest.broker.process_definition(key).await;
        let record = record
            .map_err(|e| broker_problem(e, uri))?
            .ok_or_else(|| not_found("Process definition", key, uri))?;
        return Ok(Deployed {
            resource_name: record.resource_name,
            xml: record.resource,
            process_id: record.bpmn_process_id,
            tenant_id: record.tenant_id,
        });
    }
    let get = |named| rest.broker.history_get(named, key);
    let definition = get(Named::ProcessDefinitions).await;
    let definition = definition
        .map_err(|e| history_problem(e, uri))?
        .ok_or_else(|| not_found("Process definition", key, uri))?;
    let content = get(Named::ResourceContent).await;
    let content = content.map_err(|e| history_problem(e, uri))?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    Ok(Deployed {
        resource_name: text(&definition["resourceName"]),
        xml: content
            .map(|c| text(&c["content"]))
            .unwrap_or_default()
            .into_bytes(),
        process_id: text(&definition["processDefinitionId"]),
        tenant_id: text(&definition["tenantId"]),
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
    let deployed = deployed_process(&rest, key, &uri).await?;
    let process = zest_model::parse_bpmn(&deployed.resource_name, &deployed.xml)
        .ok()
        .and_then(|ps| ps.into_iter().find(|p| p.id == deployed.process_id));
    let Some(process) = process else {
        return Ok(StatusCode::NO_CONTENT.into_response());
    };
    let body = match &process.start_form {
        Some(StartForm::Linked(form_id)) => {
            latest_form(&rest, form_id, &deployed.tenant_id, &uri).await?
        }
        Some(StartForm::Key(form_key)) => process.embedded_form(form_key).map(|f| {
            json!({
                "formKey": form_key,
                "formId": f.id,
                "version": Value::Null,
                "schema": f.schema,
                "tenantId": deployed.tenant_id,
            })
        }),
        Some(StartForm::External(_)) | None => None,
    };
    Ok(match body {
        Some(b) => Json(b).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

/// The form key of user task `key` (0: none): from history (every state), else from the
/// open tasks in the state.
async fn task_form_key(rest: &Rest, key: i64, uri: &Uri) -> Result<i64, Problem> {
    let missing = |note: &str| {
        Problem::new(
            StatusCode::NOT_FOUND,
            format!("User task with key '{key}' not found{note}"),
            uri,
        )
    };
    if rest.broker.history_on() {
        let task = rest.broker.history_get(Named::UserTasks, key).await;
        let task = task
            .map_err(|e| history_problem(e, uri))?
            .ok_or_else(|| missing(""))?;
        let form_key = task["formKey"].as_str().and_then(|k| k.parse().ok());
        return Ok(form_key.unwrap_or(0));
    }
    let task = rest.broker.open_user_task(key).await;
    let task = task
        .map_err(|e| broker_problem(e, uri))?
        .ok_or_else(|| missing(" (Zest keeps open user tasks only)"))?;
    Ok(task.record.form_key)
}

/// `GET /v2/user-tasks/{key}/form`: the linked form of a Camunda user task, or 204.
pub(super) async fn user_task_form(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Response, Problem> {
    let key = parse_named_key(&key, "userTaskKey", &uri)?;
    let form_key = task_form_key(&rest, key, &uri).await?;
    let form = match form_key > 0 {
        true => form_by_key(&rest, form_key, &uri).await?,
        false => None,
    };
    Ok(match form {
        Some(f) => Json(f).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}
