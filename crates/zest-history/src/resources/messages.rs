//! Messages: process message subscriptions (`POST /v2/message-subscriptions/search`) and the
//! correlations of messages to them (`POST /v2/correlated-message-subscriptions/search`).

use crate::db::Row;
use serde_json::{json, Map, Value};

use super::{date, key, put_opt, string, Resource};
use crate::filter::{field, Field, Kind};

const MS_FIELDS: &[Field] = &[
    field("messageSubscriptionKey", "t.key", Kind::Key),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
    field("elementId", "t.element_id", Kind::Str),
    field("elementInstanceKey", "t.element_instance_key", Kind::Key),
    field("messageSubscriptionState", "t.state", Kind::Enum),
    field("lastUpdatedDate", "t.last_updated_date", Kind::Date),
    field("messageName", "t.message_name", Kind::Str),
    field("correlationKey", "t.correlation_key", Kind::Str),
    field("tenantId", "t.tenant_id", Kind::Str),
];

const MS_SORTS: &[Field] = &[
    field("messageSubscriptionKey", "t.key", Kind::Key),
    field(
        "processDefinitionId",
        "COALESCE(t.bpmn_process_id, '')",
        Kind::Str,
    ),
    field(
        "processInstanceKey",
        "COALESCE(t.process_instance_key, 0)",
        Kind::Key,
    ),
    field("elementId", "COALESCE(t.element_id, '')", Kind::Str),
    field(
        "elementInstanceKey",
        "COALESCE(t.element_instance_key, 0)",
        Kind::Key,
    ),
    field(
        "messageSubscriptionState",
        "COALESCE(t.state, '')",
        Kind::Enum,
    ),
    field(
        "lastUpdatedDate",
        "COALESCE(t.last_updated_date, 0)",
        Kind::Date,
    ),
    field("messageName", "COALESCE(t.message_name, '')", Kind::Str),
    field(
        "correlationKey",
        "COALESCE(t.correlation_key, '')",
        Kind::Str,
    ),
    field("tenantId", "COALESCE(t.tenant_id, '')", Kind::Str),
];

fn ms_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("messageSubscriptionKey".into(), key(row.get(0)?));
    out.insert("processDefinitionId".into(), json!(string(row, 1)?));
    put_opt(
        &mut out,
        "processDefinitionKey",
        row.get::<_, Option<i64>>(2)?.filter(|k| *k > 0).map(key),
    );
    out.insert(
        "processInstanceKey".into(),
        key(row.get::<_, Option<i64>>(3)?.unwrap_or(0)),
    );
    out.insert("elementId".into(), json!(string(row, 4)?));
    out.insert(
        "elementInstanceKey".into(),
        key(row.get::<_, Option<i64>>(5)?.unwrap_or(0)),
    );
    out.insert("messageSubscriptionState".into(), json!(string(row, 6)?));
    out.insert(
        "lastUpdatedDate".into(),
        row.get::<_, Option<i64>>(7)?.map_or(Value::Null, date),
    );
    out.insert("messageName".into(), json!(string(row, 8)?));
    out.insert("correlationKey".into(), json!(string(row, 9)?));
    out.insert("tenantId".into(), json!(string(row, 10)?));
    Ok(Value::Object(out))
}

pub const MESSAGE_SUBSCRIPTIONS: Resource = Resource {
    name: "message subscription",
    from: "message_subscription t",
    select: "t.key, t.bpmn_process_id, t.process_definition_key, t.process_instance_key, \
             t.element_id, t.element_instance_key, t.state, t.last_updated_date, \
             t.message_name, t.correlation_key, t.tenant_id",
    fields: MS_FIELDS,
    sorts: MS_SORTS,
    special: None,
    row: ms_row,
};

const CM_FIELDS: &[Field] = &[
    field("correlationKey", "t.correlation_key", Kind::Str),
    field("correlationTime", "t.correlation_time", Kind::Date),
    field("elementId", "t.element_id", Kind::Str),
    field("elementInstanceKey", "t.element_instance_key", Kind::Key),
    field("messageKey", "t.message_key", Kind::Key),
    field("messageName", "t.message_name", Kind::Str),
    field("partitionId", "t.partition_id", Kind::Int),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field(
        "processDefinitionKey",
        "t.process_definition_key",
        Kind::Key,
    ),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
    field("subscriptionKey", "t.subscription_key", Kind::Key),
    field("tenantId", "t.tenant_id", Kind::Str),
];

const CM_SORTS: &[Field] = &[
    field(
        "correlationKey",
        "COALESCE(t.correlation_key, '')",
        Kind::Str,
    ),
    field(
        "correlationTime",
        "COALESCE(t.correlation_time, 0)",
        Kind::Date,
    ),
    field("elementId", "COALESCE(t.element_id, '')", Kind::Str),
    field(
        "elementInstanceKey",
        "COALESCE(t.element_instance_key, 0)",
        Kind::Key,
    ),
    field("messageKey", "COALESCE(t.message_key, 0)", Kind::Key),
    field("messageName", "COALESCE(t.message_name, '')", Kind::Str),
    field("partitionId", "COALESCE(t.partition_id, 0)", Kind::Int),
    field(
        "processDefinitionId",
        "COALESCE(t.bpmn_process_id, '')",
        Kind::Str,
    ),
    field(
        "processDefinitionKey",
        "COALESCE(t.process_definition_key, 0)",
        Kind::Key,
    ),
    field(
        "processInstanceKey",
        "COALESCE(t.process_instance_key, 0)",
        Kind::Key,
    ),
    field(
        "subscriptionKey",
        "COALESCE(t.subscription_key, 0)",
        Kind::Key,
    ),
    field("tenantId", "COALESCE(t.tenant_id, '')", Kind::Str),
];

fn cm_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("correlationKey".into(), json!(string(row, 0)?));
    out.insert(
        "correlationTime".into(),
        row.get::<_, Option<i64>>(1)?.map_or(Value::Null, date),
    );
    out.insert("elementId".into(), json!(string(row, 2)?));
    put_opt(
        &mut out,
        "elementInstanceKey",
        row.get::<_, Option<i64>>(3)?.filter(|k| *k > 0).map(key),
    );
    out.insert(
        "messageKey".into(),
        key(row.get::<_, Option<i64>>(4)?.unwrap_or(0)),
    );
    out.insert("messageName".into(), json!(string(row, 5)?));
    out.insert(
        "partitionId".into(),
        json!(row.get::<_, Option<i64>>(6)?.unwrap_or(0)),
    );
    out.insert("processDefinitionId".into(), json!(string(row, 7)?));
    put_opt(
        &mut out,
        "processDefinitionKey",
        row.get::<_, Option<i64>>(8)?.filter(|k| *k > 0).map(key),
    );
    out.insert(
        "processInstanceKey".into(),
        key(row.get::<_, Option<i64>>(9)?.unwrap_or(0)),
    );
    out.insert(
        "subscriptionKey".into(),
        key(row.get::<_, Option<i64>>(10)?.unwrap_or(0)),
    );
    out.insert("tenantId".into(), json!(string(row, 11)?));
    Ok(Value::Object(out))
}

pub const CORRELATED_MESSAGES: Resource = Resource {
    name: "correlated message subscription",
    from: "correlated_message t",
    select: "t.correlation_key, t.correlation_time, t.element_id, t.element_instance_key, \
             t.message_key, t.message_name, t.partition_id, t.bpmn_process_id, \
             t.process_definition_key, t.process_instance_key, t.subscription_key, t.tenant_id",
    fields: CM_FIELDS,
    sorts: CM_SORTS,
    special: None,
    row: cm_row,
};

#[cfg(test)]
mod tests;
