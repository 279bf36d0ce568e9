//! Messages and signals: `POST /v2/messages/publication` (MessagePublicationResult),
//! `POST /v2/messages/correlation` (MessageCorrelationResult, or 404 when nothing waits for
//! the message) and `POST /v2/signals/broadcast` (SignalBroadcastResult).

use axum::extract::State;
use axum::routing::post;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::call::Call;
use super::{int64, json_text, required, OrProblem, Problem, Rest, Routes};
use crate::commands::message::NewMessage;
use crate::commands::tenant;

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/messages/publication", post(publish))
        .route("/v2/messages/correlation", post(correlate))
        .route("/v2/signals/broadcast", post(broadcast))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct PublicationRequest {
    name: Option<String>,
    correlation_key: String,
    #[serde(deserialize_with = "int64")]
    time_to_live: Option<i64>,
    message_id: String,
    #[serde(deserialize_with = "json_text")]
    variables: String,
    tenant_id: String,
}

async fn publish(
    State(rest): State<Rest>,
    Call { body: r, uri }: Call<PublicationRequest>,
) -> Result<Json<Value>, Problem> {
    let name = required(r.name, "name", &uri)?;
    tenant(&r.tenant_id, "request Publish Message").or_problem(&uri)?;
    let published = rest
        .commands
        .publish_message(NewMessage {
            name,
            correlation_key: r.correlation_key,
            time_to_live: r.time_to_live.unwrap_or(0),
            message_id: r.message_id,
            variables: r.variables,
        })
        .await
        .or_problem(&uri)?;
    Ok(Json(json!({
        "messageKey": published.key.to_string(),
        "tenantId": published.tenant_id,
    })))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct CorrelationRequest {
    name: Option<String>,
    correlation_key: String,
    #[serde(deserialize_with = "json_text")]
    variables: String,
    tenant_id: String,
}

async fn correlate(
    State(rest): State<Rest>,
    Call { body: r, uri }: Call<CorrelationRequest>,
) -> Result<Json<Value>, Problem> {
    let name = required(r.name, "name", &uri)?;
    tenant(&r.tenant_id, "request Correlate Message").or_problem(&uri)?;
    let correlated = rest
        .commands
        .correlate_message(name, r.correlation_key, r.variables)
        .await
        .or_problem(&uri)?;
    Ok(Json(json!({
        "messageKey": correlated.key.to_string(),
        "tenantId": correlated.tenant_id,
        "processInstanceKey": correlated.process_instance_key.to_string(),
    })))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct BroadcastRequest {
    signal_name: Option<String>,
    #[serde(deserialize_with = "json_text")]
    variables: String,
    tenant_id: String,
}

async fn broadcast(
    State(rest): State<Rest>,
    Call { body: r, uri }: Call<BroadcastRequest>,
) -> Result<Json<Value>, Problem> {
    let name = required(r.signal_name, "signalName", &uri)?;
    tenant(&r.tenant_id, "request Broadcast Signal").or_problem(&uri)?;
    let sent = rest
        .commands
        .broadcast_signal(name, r.variables)
        .await
        .or_problem(&uri)?;
    Ok(Json(json!({
        "signalKey": sent.key.to_string(),
        "tenantId": sent.tenant_id,
    })))
}
