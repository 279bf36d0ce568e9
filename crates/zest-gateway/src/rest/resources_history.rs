//! `GET /v2/resources/{resourceKey}` and `GET /v2/resources/{resourceKey}/content`: a deployed
//! resource and its text. Processes, decision requirements and forms come from history (any
//! node, any partition, as the other history reads); a form history lacks (deployed before
//! history kept forms) from the partitions' state.

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use zest_history::Named;

use super::history::history_problem;
use super::{broker_problem, parse_named_key, Problem, Rest};

pub(super) fn routes(router: Router<Rest>) -> Router<Rest> {
    router
        .route("/v2/resources/{resourceKey}", get(resource))
        .route("/v2/resources/{resourceKey}/content", get(content))
}

/// The resource `key` names, as `resource` (metadata or content) of history, else the form
/// with that key in the partitions' state as `form` makes it; 404 when neither is.
async fn read(
    rest: &Rest,
    key: &str,
    resource: Named,
    form: fn(zest_protocol::FormRecord) -> Value,
    uri: &Uri,
) -> Result<Value, Problem> {
    let key = parse_named_key(key, "resourceKey", uri)?;
    let item = rest
        .broker
        .history_get(resource, key)
        .await
        .map_err(|e| history_problem(e, uri))?;
    if let Some(item) = item {
        return Ok(item);
    }
    let found = rest
        .broker
        .form(key)
        .await
        .map_err(|e| broker_problem(e, uri))?;
    found.map(form).ok_or_else(|| {
        Problem::new(
            StatusCode::NOT_FOUND,
            format!("Resource with key '{key}' not found"),
            uri,
        )
    })
}

async fn resource(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let form = |f: zest_protocol::FormRecord| {
        json!({
            "resourceKey": f.form_key.to_string(),
            "resourceId": f.form_id,
            "resourceName": f.resource_name,
            "version": f.version,
            "tenantId": f.tenant_id,
        })
    };
    read(&rest, &key, Named::DeployedResources, form, &uri)
        .await
        .map(Json)
}

/// The text, as a JSON string (the spec's `application/json` `string`).
async fn content(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let form =
        |f: zest_protocol::FormRecord| json!({"content": String::from_utf8_lossy(&f.resource)});
    let item = read(&rest, &key, Named::ResourceContent, form, &uri).await?;
    Ok(Json(item["content"].clone()))
}
