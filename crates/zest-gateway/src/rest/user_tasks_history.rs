//! The REST API v2's reads of user tasks from history, every state (CREATED, COMPLETED,
//! CANCELED, ...): the search, the get, and the variables a task sees (its own scope's, and the
//! effective ones: its scope and every scope above, the nearest of each name). With
//! `--history off` the search and the get read the open tasks in the partitions' state, as
//! before history existed. The user task commands stay in `rest/mod.rs`.

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Map, Value};
use zest_history::resources::EFFECTIVE_AT;
use zest_history::Named;

use super::history::{history_problem, query, run_get, run_search, truncate_values, Text};
use super::{parse_named_key, Problem, Rest};

pub(super) fn routes(router: Router<Rest>) -> Router<Rest> {
    router
        .route("/v2/user-tasks/search", post(search))
        .route("/v2/user-tasks/{userTaskKey}", get(get_one))
        .route(
            "/v2/user-tasks/{userTaskKey}/variables/search",
            post(variables),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/effective-variables/search",
            post(effective_variables),
        )
}

async fn search(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    if !rest.broker.history_on() {
        return super::search_user_tasks(State(rest), uri, text).await;
    }
    run_search(&rest, Named::UserTasks, &text, None, &uri).await
}

async fn get_one(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    if !rest.broker.history_on() {
        return super::get_user_task(State(rest), Path(key), uri).await;
    }
    run_get(
        &rest,
        Named::UserTasks,
        &key,
        "userTaskKey",
        "User Task",
        &uri,
    )
    .await
}

/// The task's element instance: the scope of its own variables.
async fn task_scope(rest: &Rest, key: &str, uri: &Uri) -> Result<String, Problem> {
    let key = parse_named_key(key, "userTaskKey", uri)?;
    let task = rest
        .broker
        .history_get(Named::UserTasks, key)
        .await
        .map_err(|e| history_problem(e, uri))?
        .ok_or_else(|| {
            Problem::new(
                StatusCode::NOT_FOUND,
                format!("User Task with key '{key}' not found"),
                uri,
            )
        })?;
    Ok(task["elementInstanceKey"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// The request with its filter (only `name`, as `UserTaskVariableFilter` has) bound to the
/// task's scope: `scope_field` set to `scope`.
fn scoped(text: &str, uri: &Uri, scope_field: &str, scope: String) -> Result<String, Problem> {
    let mut q = query(text, uri)?;
    let mut filter = match q.get("filter") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(f)) => f.clone(),
        Some(_) => {
            return Err(Problem::bad("Expected 'filter' to be an object", uri));
        }
    };
    if let Some(other) = filter.keys().find(|k| k.as_str() != "name") {
        return Err(Problem::bad(
            format!("Unknown filter field '{other}'; expected one of: name"),
            uri,
        ));
    }
    filter.insert(scope_field.to_string(), json!(scope));
    q["filter"] = Value::Object(filter);
    Ok(q.to_string())
}

async fn variables(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    let scope = task_scope(&rest, &key, &uri).await?;
    let text = scoped(&text, &uri, "scopeKey", scope)?;
    let resource = match truncate_values(&uri)? {
        true => Named::Variables,
        false => Named::VariableFull,
    };
    run_search(&rest, resource, &text, None, &uri).await
}

async fn effective_variables(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    let scope = task_scope(&rest, &key, &uri).await?;
    let text = scoped(&text, &uri, EFFECTIVE_AT, scope)?;
    let resource = match truncate_values(&uri)? {
        true => Named::EffectiveVariables,
        false => Named::EffectiveVariablesFull,
    };
    run_search(&rest, resource, &text, None, &uri).await
}
