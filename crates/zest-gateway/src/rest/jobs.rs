//! Jobs: `POST /v2/jobs/activation` (long polling as gRPC's ActivateJobs; every partition's
//! jobs in one answer), `/v2/jobs/{jobKey}/completion`, `/failure`, `/error` and
//! `PATCH /v2/jobs/{jobKey}` (retries, timeout).

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{patch, post};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::{Call, Keyed};
use super::{int64, json_text, no_content, required, OrProblem, Problem, Rest, Routes};
use crate::commands::job::{jobs_wanted, JobFailure};
use crate::commands::job_result::WorkerResult;
use crate::proto;

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/jobs/activation", post(activate))
        .route("/v2/jobs/{jobKey}/completion", post(complete))
        .route("/v2/jobs/{jobKey}/failure", post(fail))
        .route("/v2/jobs/{jobKey}/error", post(throw_error))
        .route("/v2/jobs/{jobKey}", patch(update))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct ActivationRequest {
    #[serde(rename = "type")]
    job_type: Option<String>,
    worker: String,
    #[serde(deserialize_with = "int64")]
    timeout: Option<i64>,
    max_jobs_to_activate: Option<i32>,
    fetch_variable: Vec<String>,
    #[serde(deserialize_with = "int64")]
    request_timeout: Option<i64>,
    tenant_ids: Vec<String>,
}

/// Camunda's ActivatedJobResult, from the job as gRPC hands it out.
fn activated_job(j: proto::ActivatedJob) -> Value {
    use proto::activated_job::{JobKind, ListenerEventType};
    let object = |text: &str| serde_json::from_str::<Value>(text).unwrap_or_else(|_| json!({}));
    let kind = JobKind::try_from(j.kind).unwrap_or(JobKind::BpmnElement);
    let listener = ListenerEventType::try_from(j.listener_event_type)
        .unwrap_or(ListenerEventType::Unspecified);
    let mut job = json!({
        "type": j.r#type,
        "processDefinitionId": j.bpmn_process_id,
        "processDefinitionVersion": j.process_definition_version,
        "elementId": j.element_id,
        "customHeaders": object(&j.custom_headers),
        "worker": j.worker,
        "retries": j.retries,
        "deadline": j.deadline,
        "variables": object(&j.variables),
        "tenantId": j.tenant_id,
        "jobKey": j.key.to_string(),
        "processInstanceKey": j.process_instance_key.to_string(),
        "processDefinitionKey": j.process_definition_key.to_string(),
        "elementInstanceKey": j.element_instance_key.to_string(),
        "kind": kind.as_str_name(),
        "listenerEventType": listener.as_str_name(),
        "tags": [],
    });
    if let Some(t) = j.user_task {
        job["userTask"] = json!({
            "action": t.action,
            "assignee": t.assignee,
            "candidateGroups": t.candidate_groups,
            "candidateUsers": t.candidate_users,
            "changedAttributes": t.changed_attributes,
            "dueDate": t.due_date,
            "followUpDate": t.follow_up_date,
            "formKey": t.form_key.map(|k| k.to_string()),
            "priority": t.priority,
            "userTaskKey": t.user_task_key.map(|k| k.to_string()),
        });
    }
    job
}

async fn activate(
    State(rest): State<Rest>,
    Call { body: r, uri }: Call<ActivationRequest>,
) -> Result<Json<Value>, Problem> {
    let job_type = required(r.job_type, "type", &uri)?;
    let timeout = required(r.timeout, "timeout", &uri)?;
    let max = required(r.max_jobs_to_activate, "maxJobsToActivate", &uri)?;
    let wanted = jobs_wanted(
        "activate",
        &job_type,
        &r.worker,
        timeout,
        &r.fetch_variable,
        &r.tenant_ids,
    )
    .or_problem(&uri)?;
    let mut batches = rest
        .commands
        .poll_jobs(wanted, max, r.request_timeout.unwrap_or(0));
    let mut jobs = Vec::new();
    while let Some(batch) = batches.recv().await {
        let batch = batch.or_problem(&uri)?;
        jobs.extend(
            batch
                .into_iter()
                .map(|j| activated_job(crate::convert::activated_job(j.key, j.job))),
        );
    }
    Ok(Json(json!({ "jobs": jobs })))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct CompletionRequest {
    #[serde(deserialize_with = "json_text")]
    variables: String,
    result: Option<WorkerResult>,
}

async fn complete(
    State(rest): State<Rest>,
    Keyed { key, body: r, uri }: Keyed<CompletionRequest>,
) -> Result<StatusCode, Problem> {
    let result = r
        .result
        .map(WorkerResult::into_result)
        .transpose()
        .or_problem(&uri)?;
    no_content(
        rest.commands.complete_job(key, r.variables, result).await,
        &uri,
    )
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct FailureRequest {
    retries: i32,
    error_message: String,
    #[serde(deserialize_with = "int64")]
    retry_back_off: Option<i64>,
    #[serde(deserialize_with = "json_text")]
    variables: String,
}

async fn fail(
    State(rest): State<Rest>,
    Keyed { key, body: r, uri }: Keyed<FailureRequest>,
) -> Result<StatusCode, Problem> {
    let failure = JobFailure {
        retries: r.retries,
        error_message: r.error_message,
        retry_backoff: r.retry_back_off.unwrap_or(0),
        variables: r.variables,
    };
    no_content(rest.commands.fail_job(key, failure).await, &uri)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct ErrorRequest {
    error_code: Option<String>,
    error_message: Option<String>,
    #[serde(deserialize_with = "json_text")]
    variables: String,
}

async fn throw_error(
    State(rest): State<Rest>,
    Keyed { key, body: r, uri }: Keyed<ErrorRequest>,
) -> Result<StatusCode, Problem> {
    let code = required(r.error_code, "errorCode", &uri)?;
    let message = r.error_message.unwrap_or_default();
    let thrown = rest
        .commands
        .throw_job_error(key, code, message, r.variables);
    no_content(thrown.await, &uri)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct UpdateRequest {
    changeset: Option<Changeset>,
    operation_reference: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Changeset {
    retries: Option<i32>,
    #[serde(deserialize_with = "int64")]
    timeout: Option<i64>,
}

/// `PATCH /v2/jobs/{jobKey}`: the retries, then the timeout, each when given.
async fn update(
    State(rest): State<Rest>,
    Keyed { key, body: r, uri }: Keyed<UpdateRequest>,
) -> Result<StatusCode, Problem> {
    let _ = r.operation_reference;
    let changes = required(r.changeset, "changeset", &uri)?;
    if changes.retries.is_none() && changes.timeout.is_none() {
        return Err(Problem::bad(
            "No update data provided. Provide at least a non-null value for one of the changeset attributes \"retries\", \"timeout\".",
            &uri,
        ));
    }
    let c = &rest.commands;
    if let Some(retries) = changes.retries {
        c.update_job_retries(key, retries).await.or_problem(&uri)?;
    }
    if let Some(timeout) = changes.timeout {
        c.update_job_timeout(key, timeout).await.or_problem(&uri)?;
    }
    Ok(StatusCode::NO_CONTENT)
}
