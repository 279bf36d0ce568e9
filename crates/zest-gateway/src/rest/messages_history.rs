//! The REST API v2's reads of message subscriptions from history: the process message
//! subscriptions (`POST /v2/message-subscriptions/search`) and each correlation of a message
//! to one (`POST /v2/correlated-message-subscriptions/search`). Publishing and correlating
//! stay in `rest/messages.rs`.

use axum::extract::State;
use axum::http::Uri;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::Value;
use zest_history::Named;

use super::history::{run_search, Text};
use super::{Problem, Rest};

pub(super) fn routes(router: Router<Rest>) -> Router<Rest> {
    router
        .route("/v2/message-subscriptions/search", post(subscriptions))
        .route(
            "/v2/correlated-message-subscriptions/search",
            post(correlated),
        )
}

async fn subscriptions(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::MessageSubscriptions, &text, None, &uri).await
}

async fn correlated(
    State(rest): State<Rest>,
    uri: Uri,
    Text(text): Text,
) -> Result<Json<Value>, Problem> {
    run_search(&rest, Named::CorrelatedMessages, &text, None, &uri).await
}
