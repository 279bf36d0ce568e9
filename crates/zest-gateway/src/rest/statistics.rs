//! Camunda 8.9's statistics of active process instances, read from history and summed over
//! every partition (`zest_history::aggregate`): per process definition, per version of one,
//! per incident error and per definition for one error (offset pages, as the spec has them);
//! and the job statistics (`/v2/jobs/statistics/...`: global, by type, by worker, time series,
//! errors; cursor pages), read from the counters the exporter keeps. A bad filter, sort or
//! page is a 400 naming the field; `--history off` gives the 403.

use axum::extract::Query;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::routing::{get, post};
use axum::Json;
use serde_json::Value;
use zest_history::aggregate::{Aggregate, AggregateKind, JobsOf};
use zest_history::SearchError;

use super::history::{history_problem, query, Text};
use super::{Problem, Rest, Routes};

pub(super) fn routes(r: Routes) -> Routes {
    r.route(
        "/v2/process-definitions/statistics/process-instances",
        post(|s: State<Rest>, uri: Uri, Text(body): Text| {
            statistics(s, uri, body, AggregateKind::DefinitionInstances)
        }),
    )
    .route(
        "/v2/process-definitions/statistics/process-instances-by-version",
        post(|s: State<Rest>, uri: Uri, Text(body): Text| {
            statistics(s, uri, body, AggregateKind::DefinitionVersions)
        }),
    )
    .route(
        "/v2/incidents/statistics/process-instances-by-error",
        post(|s: State<Rest>, uri: Uri, Text(body): Text| {
            statistics(s, uri, body, AggregateKind::IncidentsByError)
        }),
    )
    .route(
        "/v2/incidents/statistics/process-instances-by-definition",
        post(|s: State<Rest>, uri: Uri, Text(body): Text| {
            statistics(s, uri, body, AggregateKind::IncidentsByDefinition)
        }),
    )
    .route("/v2/jobs/statistics/global", get(global_jobs))
    .route("/v2/jobs/statistics/by-types", jobs(JobsOf::Types))
    .route("/v2/jobs/statistics/by-workers", jobs(JobsOf::Workers))
    .route("/v2/jobs/statistics/time-series", jobs(JobsOf::TimeSeries))
    .route("/v2/jobs/statistics/errors", jobs(JobsOf::Errors))
}

/// `POST` of one of the job statistics.
fn jobs(of: JobsOf) -> axum::routing::MethodRouter<Rest> {
    post(move |s: State<Rest>, uri: Uri, Text(body): Text| {
        statistics(s, uri, body, AggregateKind::Jobs(of))
    })
}

/// `GET /v2/jobs/statistics/global?from=...&to=...&jobType=...`: its query parameters are
/// the filter of the other job statistics.
async fn global_jobs(state: State<Rest>, uri: Uri) -> Result<Json<Value>, Problem> {
    let params = Query::<Vec<(String, String)>>::try_from_uri(&uri)
        .map_err(|e| Problem::bad(format!("Expected a valid query string: {e}"), &uri))?;
    let filter: serde_json::Map<String, Value> = params
        .0
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let body = serde_json::json!({ "filter": filter }).to_string();
    statistics(state, uri, body, AggregateKind::Jobs(JobsOf::Global)).await
}

async fn statistics(
    State(rest): State<Rest>,
    uri: Uri,
    body: String,
    kind: AggregateKind,
) -> Result<Json<Value>, Problem> {
    let q = query(&body, &uri)?;
    let aggregate = Aggregate::of_request(kind, &q).map_err(|e| match e {
        SearchError::Bad(m) => Problem::bad(m, &uri),
        SearchError::Store(e) => Problem::bad(e.to_string(), &uri),
        SearchError::Unavailable(m) => Problem::new(StatusCode::SERVICE_UNAVAILABLE, m, &uri),
    })?;
    rest.broker
        .history_aggregate(aggregate, &q)
        .await
        .map(Json)
        .map_err(|e| history_problem(e, &uri))
}
