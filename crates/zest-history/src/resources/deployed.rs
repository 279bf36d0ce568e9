//! Deployed resources (`GET /v2/resources/{key}` and its `/content`): processes (BPMN) and
//! decision requirements (DMN), by the key of the process definition or of the decision
//! requirements. Forms are read from the partitions' state (the gateway asks the broker).

use crate::db::Row;
use serde_json::{json, Map, Value};

use super::{key, put_opt, string, Resource};

/// Every deployed resource history keeps, as one table `t` (key, resource id, name, version,
/// version tag, tenant, content).
const DEPLOYED: &str = "(SELECT key, bpmn_process_id AS resource_id, resource_name, version, \
                        version_tag, tenant_id, bpmn_xml AS content FROM process_definition \
                        UNION ALL SELECT key, decision_requirements_id, resource_name, version, \
                        NULL, tenant_id, dmn_xml FROM decision_requirements) t";

fn row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("resourceKey".into(), key(row.get(0)?));
    out.insert("resourceId".into(), json!(string(row, 1)?));
    out.insert("resourceName".into(), json!(string(row, 2)?));
    out.insert("version".into(), json!(row.get::<_, i32>(3)?));
    put_opt(
        &mut out,
        "versionTag",
        row.get::<_, Option<String>>(4)?.map(Value::String),
    );
    out.insert("tenantId".into(), json!(string(row, 5)?));
    Ok(Value::Object(out))
}

/// A deployed resource's `ResourceResult` (a get only: no filters, no sorts).
pub const RESOURCES: Resource = Resource {
    name: "resource",
    from: DEPLOYED,
    select: "t.key, t.resource_id, t.resource_name, t.version, t.version_tag, t.tenant_id",
    fields: &[],
    sorts: &[],
    special: None,
    row,
};

fn content_row(row: &Row) -> crate::db::Result<Value> {
    Ok(json!({ "content": string(row, 0)? }))
}

/// A deployed resource's text (`{"content": ...}`).
pub const RESOURCE_CONTENT: Resource = Resource {
    name: "resource content",
    from: DEPLOYED,
    select: "t.content",
    fields: &[],
    sorts: &[],
    special: None,
    row: content_row,
};
