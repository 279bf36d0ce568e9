//! Camunda 8.9's statistics of active process instances, read from history and summed over
//! every partition (`zest_history::aggregate`): per process definition, per version of one,
//! per incident error and per definition for one error. Offset pages only, as the spec has
//! them; a bad filter, sort or page is a 400 naming the field; `--history off` gives the 403.

use axum::extract::State;
use axum::http::Uri;
use axum::routing::post;
use axum::Json;
use serde_json::Value;
use zest_history::aggregate::{Aggregate, AggregateKind};
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
    })?;
    rest.broker
        .history_aggregate(aggregate, &q)
        .await
        .map(Json)
        .map_err(|e| history_problem(e, &uri))
}
