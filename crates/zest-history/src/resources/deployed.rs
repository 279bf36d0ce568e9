//! Deployed resources (`GET /v2/resources/{key}` and its `/content`): processes (BPMN),
//! decision requirements (DMN) and forms, by the key of the process definition, of the
//! decision requirements or of the form; and the forms themselves (`FormResult`: a user task's
//! form, a process's start form). A form stays after its resource is deleted (marked
//! `deleted`), as a definition does: a finished task's form is still found.

use crate::db::Row;
use serde_json::{json, Map, Value};

use super::{key, put_opt, string, Resource};
use crate::filter::{field, Field, Kind};

/// Every deployed resource history keeps, as one table `t` (key, resource id, name, version,
/// version tag, tenant, content).
const DEPLOYED: &str = "(SELECT key, bpmn_process_id AS resource_id, resource_name, version, \
                        version_tag, tenant_id, bpmn_xml AS content FROM process_definition \
                        UNION ALL SELECT key, decision_requirements_id, resource_name, version, \
                        NULL, tenant_id, dmn_xml FROM decision_requirements \
                        UNION ALL SELECT key, form_id, resource_name, version, NULL, tenant_id, \
                        form_schema FROM form) t";

fn row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("resourceKey".into(), key(row.get(0)?));
    out.insert("resourceId".into(), json!(string(row, 1)?));
    out.insert("resourceName".into(), json!(string(row, 2)?));
    out.insert("version".into(), json!(row.get::<_, i32>(3)?));
    // left out when the resource has none: 8.8's ResourceResult has it a string, never null
    // (8.9's requires it, nullable; the 8.8 spec is the one this endpoint answers to, and
    // schemathesis checks it)
    let tag = row.get::<_, Option<String>>(4)?.filter(|t| !t.is_empty());
    put_opt(&mut out, "versionTag", tag.map(Value::String));
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

const FORM_FIELDS: &[Field] = &[
    field("formKey", "t.key", Kind::Key),
    field("formId", "t.form_id", Kind::Str),
    field("version", "t.version", Kind::Int),
    field("tenantId", "t.tenant_id", Kind::Str),
    // whether its resource was deleted (the gateway's search for a latest version skips those)
    field("isDeleted", "t.deleted", Kind::Bool),
];

const FORM_SORTS: &[Field] = &[
    field("formKey", "t.key", Kind::Key),
    field("formId", "t.form_id", Kind::Str),
    field("version", "t.version", Kind::Int),
];

fn form_row(row: &Row) -> crate::db::Result<Value> {
    Ok(json!({
        "formKey": key(row.get(0)?),
        "formId": string(row, 1)?,
        "version": row.get::<_, i64>(2)?,
        "schema": string(row, 3)?,
        "tenantId": string(row, 4)?,
    }))
}

/// Deployed forms as Camunda's `FormResult`.
pub const FORMS: Resource = Resource {
    name: "form",
    from: "form t",
    select: "t.key, t.form_id, t.version, t.form_schema, t.tenant_id",
    fields: FORM_FIELDS,
    sorts: FORM_SORTS,
    special: None,
    row: form_row,
};

#[cfg(test)]
mod tests;
