//! The REST API v2's reads of history (`zest-history`): searches and gets of process
//! instances, process definitions, element instances, variables, incidents and jobs, the
//! element statistics that colour a diagram, an instance's sequence flows and call hierarchy.
//! One handler shape for all: parse the body, run the resource's search through the one filter
//! compiler, answer `{items, page}`; a bad filter is a 400 naming the field. Each answers the
//! same from any node (a standalone gateway included): the broker asks the partitions this
//! node's history lacks of the nodes that replicate them and merges (`Broker::history_search`). Without history
//! (`--history off`) they answer Camunda's 403 ("requires a secondary storage").

use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{StatusCode, Uri};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;
use zest_broker::HistoryReadError;
use zest_history::{Named, Of};

use super::{parse_named_key, Problem, Rest};

/// A search's body as text: one that is not UTF-8 (or too large) gets a problem, as a
/// malformed JSON body does, where axum's `String` would answer text/plain.
pub(super) struct Text(pub String);

impl<S: Send + Sync> FromRequest<S> for Text {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        let uri = req.uri().clone();
        String::from_request(req, state)
            .await
            .map(Text)
            .map_err(|e| Problem::new(e.status(), e.body_text(), &uri))
    }
}

/// The history routes, added to the REST router.
pub(super) fn routes(router: Router<Rest>) -> Router<Rest> {
    router
        .route(
            "/v2/process-instances/search",
            post(search_process_instances),
        )
        .route("/v2/process-instances/{key}", get(get_process_instance))
        .route(
            "/v2/process-instances/{key}/sequence-flows",
            get(sequence_flows),
        )
        .route(
            "/v2/process-instances/{key}/statistics/element-instances",
            get(instance_statistics),
        )
        .route(
            "/v2/process-instances/{key}/call-hierarchy",
            get(call_hierarchy),
        )
        .route(
            "/v2/process-instances/{key}/incidents/search",
            post(search_instance_incidents),
        )
        .route(
            "/v2/process-definitions/search",
            post(search_process_definitions),
        )
        .route("/v2/process-definitions/{key}", get(get_process_definition))
        .route(
            "/v2/process-definitions/{key}/statistics/element-instances",
            post(definition_statistics),
        )
        .route(
            "/v2/element-instances/search",
            post(search_element_instances),
        )
        .route("/v2/element-instances/{key}", get(get_element_instance))
        .route("/v2/variables/search", post(search_variables))
        .route("/v2/variables/{key}", get(get_variable))
        .route("/v2/incidents/search", post(search_incidents))
        .route("/v2/incidents/{key}", get(get_incident))
        .route("/v2/jobs/search", post(search_jobs))
}

/// Camunda's answer when no secondary storage is configured.
pub(super) fn no_history(uri: &Uri) -> Problem {
    Problem::new(
        StatusCode::FORBIDDEN,
        "This endpoint requires a secondary storage, but none is set. Start Zest with its \
         history on (the default; `--history off` turns it off).",
        uri,
    )
}

/// A failed read of history as the REST API answers it.
pub(super) fn history_problem(e: HistoryReadError, uri: &Uri) -> Problem {
    match e {
        HistoryReadError::Off => no_history(uri),
        HistoryReadError::Bad(m) => Problem::new(StatusCode::BAD_REQUEST, m, uri),
        HistoryReadError::Store(e) => {
            tracing::error!("history search failed: {e}");
            Problem::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("The history store failed to answer: {e}"),
                uri,
            )
        }
        HistoryReadError::StoreUnavailable(m) => {
            Problem::new(StatusCode::SERVICE_UNAVAILABLE, m, uri)
        }
        HistoryReadError::Unavailable(e) => super::broker_problem(e, uri),
    }
}

/// A search body: a JSON object (an empty body is `{}`).
pub(super) fn query(text: &str, uri: &Uri) -> Result<Value, Problem> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(Problem::new(
            StatusCode::BAD_REQUEST,
            "Expected the search request to be a JSON object",
            uri,
        )),
        Err(e) => Err(Problem::new(
            StatusCode::BAD_REQUEST,
            format!("Expected a valid JSON request body, but it was not: {e}"),
            uri,
        )),
    }
}

/// A search of `resource` over every partition (`instance`: of that process instance's rows).
pub(super) async fn run_search(
    rest: &Rest,
    resource: Named,
    text: &str,
    instance: Option<i64>,
    uri: &Uri,
) -> Result<Json<Value>, Problem> {
    let q = query(text, uri)?;
    rest.broker
        .history_search(resource, &q, instance)
        .await
        .map(Json)
        .map_err(|e| history_problem(e, uri))
}

pub(super) async fn run_get(
    rest: &Rest,
    resource: Named,
    key: &str,
    name: &str,
    what: &str,
    uri: &Uri,
) -> Result<Json<Value>, Problem> {
    let key = parse_named_key(key, name, uri)?;
    let item = rest.broker.history_get(resource, key).await;
    match item.map_err(|e| history_problem(e, uri))? {
        Some(v) => Ok(Json(v)),
        None => Err(Problem::new(
            StatusCode::NOT_FOUND,
            format!("{what} with key '{key}' not found"),
            uri,
        )),
    }
}

async fn search_process_instances(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::ProcessInstances, &text, None, &uri).await
}

async fn get_process_instance(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let what = "Process Instance";
    run_get(
        &rest,
        Named::ProcessInstances,
        &key,
        "processInstanceKey",
        what,
        &uri,
    )
    .await
}

async fn search_instance_incidents(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    let key = parse_named_key(&key, "processInstanceKey", &uri)?;
    run_search(&rest, Named::Incidents, &text, Some(key), &uri).await
}

async fn sequence_flows(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let key = parse_named_key(&key, "processInstanceKey", &uri)?;
    rest.broker
        .history_sequence_flows(key)
        .await
        .map(Json)
        .map_err(|e| history_problem(e, &uri))
}

async fn instance_statistics(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let key = parse_named_key(&key, "processInstanceKey", &uri)?;
    rest.broker
        .history_statistics(Of::Instance(key), &Value::Null)
        .await
        .map(Json)
        .map_err(|e| history_problem(e, &uri))
}

async fn call_hierarchy(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let key = parse_named_key(&key, "processInstanceKey", &uri)?;
    let chain = rest.broker.history_call_hierarchy(key).await;
    match chain.map_err(|e| history_problem(e, &uri))? {
        Some(v) => Ok(Json(v)),
        None => Err(Problem::new(
            StatusCode::NOT_FOUND,
            format!("Process Instance with key '{key}' not found"),
            &uri,
        )),
    }
}

async fn search_process_definitions(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::ProcessDefinitions, &text, None, &uri).await
}

async fn get_process_definition(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let what = "Process Definition";
    run_get(
        &rest,
        Named::ProcessDefinitions,
        &key,
        "processDefinitionKey",
        what,
        &uri,
    )
    .await
}

async fn definition_statistics(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    let key = parse_named_key(&key, "processDefinitionKey", &uri)?;
    let q = query(&text, &uri)?;
    let filter = q.get("filter").cloned().unwrap_or(Value::Null);
    rest.broker
        .history_statistics(Of::Definition(key), &filter)
        .await
        .map(Json)
        .map_err(|e| history_problem(e, &uri))
}

/// The search of every element instance in history (finished ones too), over every partition;
/// with `--history off`, the active ones in the partitions' state, read across the cluster, as
/// before history existed.
async fn search_element_instances(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    if !rest.broker.history_on() {
        return super::search_active_element_instances(&rest, &uri, &text).await;
    }
    run_search(&rest, Named::ElementInstances, &text, None, &uri).await
}

async fn get_element_instance(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let what = "Element Instance";
    run_get(
        &rest,
        Named::ElementInstances,
        &key,
        "elementInstanceKey",
        what,
        &uri,
    )
    .await
}

async fn search_variables(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    let resource = match truncate_values(&uri)? {
        true => Named::Variables,
        false => Named::VariableFull,
    };
    run_search(&rest, resource, &text, None, &uri).await
}

/// A variable search's `truncateValues` query parameter: true (Camunda's default, values cut
/// to their preview) unless it says `false`; anything but `true` or `false` is a 400.
pub(super) fn truncate_values(uri: &Uri) -> Result<bool, Problem> {
    let params = Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map_err(|e| Problem::bad(format!("Expected a valid query string: {e}"), uri))?;
    let mut truncate = true;
    for (_, value) in params.0.iter().filter(|(n, _)| n == "truncateValues") {
        truncate = match value.as_str() {
            "true" => true,
            "false" => false,
            other => {
                return Err(Problem::bad(
                    format!("Expected 'truncateValues' to be true or false, but got '{other}'"),
                    uri,
                ))
            }
        };
    }
    Ok(truncate)
}

async fn get_variable(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    run_get(
        &rest,
        Named::VariableFull,
        &key,
        "variableKey",
        "Variable",
        &uri,
    )
    .await
}

async fn search_incidents(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::Incidents, &text, None, &uri).await
}

async fn get_incident(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    run_get(
        &rest,
        Named::Incidents,
        &key,
        "incidentKey",
        "Incident",
        &uri,
    )
    .await
}

async fn search_jobs(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::Jobs, &text, None, &uri).await
}
