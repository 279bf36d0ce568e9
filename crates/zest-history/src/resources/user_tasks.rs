//! User tasks (every state, not only open ones) and the variables a user task sees: its own
//! scope's (`/v2/user-tasks/{key}/variables/search`) and the effective ones, its scope and
//! every scope above it with the nearest of each name
//! (`/v2/user-tasks/{key}/effective-variables/search`). A task's `name` is its element's name
//! (`element_name`), `processName` its process's.

use crate::db::Row;
use serde_json::{json, Map, Value};

use super::{date, key, opt_date, put_opt, string, Resource, VARIABLES, VARIABLE_FULL};
use crate::filter::{field, BadFilter, Conditions, Field, Kind};

/// A due date (the text the records carry, "2030-01-01T10:00Z") as epoch milliseconds, for
/// filters and sorts (NULL when unset); the same for a follow-up date.
const DUE_MS: &str =
    "CAST(ROUND((julianday(NULLIF(t.due_date, '')) - 2440587.5) * 86400000) AS BIGINT)";
const FOLLOW_UP_MS: &str =
    "CAST(ROUND((julianday(NULLIF(t.follow_up_date, '')) - 2440587.5) * 86400000) AS BIGINT)";

const FIELDS: &[Field] = &[
    field("userTaskKey", "t.key", Kind::Key),
    field("state", "t.state", Kind::Enum),
    field("assignee", "NULLIF(t.assignee, '')", Kind::Str),
    field("priority", "t.priority", Kind::Int),
    field("elementId", "t.element_id", Kind::Str),
    field("name", "n.name", Kind::Str),
    field("tenantId", "t.tenant_id", Kind::Str),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field("creationDate", "t.creation_date", Kind::Date),
    field("completionDate", "t.completion_date", Kind::Date),
    field("followUpDate", FOLLOW_UP_MS, Kind::Date),
    field("dueDate", DUE_MS, Kind::Date),
    field(
        "processDefinitionKey",
        "t.process_definition_key",
        Kind::Key,
    ),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
    field("elementInstanceKey", "t.element_instance_key", Kind::Key),
];

/// The spec's sort fields (`UserTaskSearchQuerySortRequest`), none NULL; unset dates sort last.
const SORTS: &[Field] = &[
    field("creationDate", "COALESCE(t.creation_date, 0)", Kind::Date),
    field(
        "completionDate",
        "COALESCE(t.completion_date, 9223372036854775807)",
        Kind::Date,
    ),
    field(
        "followUpDate",
        "COALESCE(CAST(ROUND((julianday(NULLIF(t.follow_up_date, '')) - 2440587.5) * 86400000) \
         AS BIGINT), 9223372036854775807)",
        Kind::Date,
    ),
    field(
        "dueDate",
        "COALESCE(CAST(ROUND((julianday(NULLIF(t.due_date, '')) - 2440587.5) * 86400000) \
         AS BIGINT), 9223372036854775807)",
        Kind::Date,
    ),
    field("priority", "COALESCE(t.priority, 0)", Kind::Int),
    field("name", "COALESCE(n.name, '')", Kind::Str),
];

/// Filters that read more than a column: the candidates (JSON lists) and the variables.
fn special(name: &str, value: &Value, c: &mut Conditions) -> Option<Result<(), BadFilter>> {
    Some(match name {
        "candidateGroup" => candidate(c, "t.candidate_groups", name, value),
        "candidateUser" => candidate(c, "t.candidate_users", name, value),
        "processInstanceVariables" => variables(
            c,
            name,
            value,
            "v.process_instance_key = t.process_instance_key",
        ),
        "localVariables" => variables(c, name, value, "v.scope_key = t.element_instance_key"),
        _ => return None,
    })
}

/// One of the task's candidates (a JSON list in `column`) matches the filter.
fn candidate(c: &mut Conditions, column: &str, name: &str, value: &Value) -> Result<(), BadFilter> {
    let mut inner = Conditions {
        sql: Vec::new(),
        params: std::mem::take(&mut c.params),
    };
    let r = inner.field("j.value", name, Kind::Str, value);
    c.params = inner.params;
    r?;
    c.sql.push(format!(
        "EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid({column}) THEN {column} \
         ELSE '[]' END) j WHERE {})",
        inner.sql.join(" AND ")
    ));
    Ok(())
}

/// `[{name, value}]`: for each, a variable (where `link` says) with that name whose value (its
/// JSON text) matches the value's string filter.
fn variables(c: &mut Conditions, what: &str, value: &Value, link: &str) -> Result<(), BadFilter> {
    let bad = |m: String| BadFilter(m);
    let Value::Array(items) = value else {
        return Err(bad(format!(
            "Expected '{what}' to be a list of {{name, value}} filters"
        )));
    };
    for item in items {
        let name = item.get("name").and_then(Value::as_str).ok_or_else(|| {
            bad(format!(
                "Expected each '{what}' filter to have a 'name' string"
            ))
        })?;
        let mut inner = Conditions {
            sql: Vec::new(),
            params: std::mem::take(&mut c.params),
        };
        let mark = inner.bind(crate::db::Cell::Text(name.to_string()));
        inner.sql.push(format!("v.name = {mark}"));
        let r = match item.get("value") {
            Some(v) => inner.field("v.value", &format!("{what}.value"), Kind::Str, v),
            None => Ok(()),
        };
        c.params = inner.params;
        r?;
        c.sql.push(format!(
            "EXISTS (SELECT 1 FROM variable v WHERE {link} AND {})",
            inner.sql.join(" AND ")
        ));
    }
    Ok(())
}

fn list(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .filter(Value::is_array)
        .unwrap_or_else(|| json!([]))
}

fn non_empty(row: &Row, i: usize) -> crate::db::Result<Option<Value>> {
    Ok(row
        .get::<_, Option<String>>(i)?
        .filter(|s| !s.is_empty())
        .map(Value::String))
}

fn row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("userTaskKey".into(), key(row.get(0)?));
    put_opt(&mut out, "name", non_empty(row, 1)?);
    out.insert("state".into(), json!(string(row, 2)?));
    put_opt(&mut out, "assignee", non_empty(row, 3)?);
    out.insert("elementId".into(), json!(string(row, 4)?));
    out.insert("candidateGroups".into(), list(row.get(5)?));
    out.insert("candidateUsers".into(), list(row.get(6)?));
    out.insert("processDefinitionId".into(), json!(string(row, 7)?));
    put_opt(
        &mut out,
        "creationDate",
        row.get::<_, Option<i64>>(8)?.map(date),
    );
    put_opt(&mut out, "completionDate", opt_date(row, 9)?);
    put_opt(&mut out, "followUpDate", non_empty(row, 10)?);
    put_opt(&mut out, "dueDate", non_empty(row, 11)?);
    out.insert("tenantId".into(), json!(string(row, 12)?));
    put_opt(&mut out, "externalFormReference", non_empty(row, 13)?);
    out.insert(
        "processDefinitionVersion".into(),
        json!(row.get::<_, Option<i32>>(14)?.unwrap_or(0)),
    );
    let headers: Value = row
        .get::<_, Option<String>>(15)?
        .and_then(|h| serde_json::from_str(&h).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    out.insert("customHeaders".into(), headers);
    out.insert(
        "priority".into(),
        json!(row.get::<_, Option<i32>>(16)?.unwrap_or(50)),
    );
    out.insert(
        "elementInstanceKey".into(),
        key(row.get::<_, Option<i64>>(17)?.unwrap_or(0)),
    );
    put_opt(&mut out, "processName", non_empty(row, 18)?);
    out.insert(
        "processDefinitionKey".into(),
        key(row.get::<_, Option<i64>>(19)?.unwrap_or(0)),
    );
    out.insert(
        "processInstanceKey".into(),
        key(row.get::<_, Option<i64>>(20)?.unwrap_or(0)),
    );
    put_opt(
        &mut out,
        "formKey",
        row.get::<_, Option<i64>>(21)?.filter(|k| *k > 0).map(key),
    );
    Ok(Value::Object(out))
}

pub const USER_TASKS: Resource = Resource {
    name: "user task",
    from: "user_task t \
           LEFT JOIN element_name n \
           ON n.process_definition_key = t.process_definition_key AND n.element_id = t.element_id \
           LEFT JOIN process_definition d ON d.key = t.process_definition_key",
    select: "t.key, n.name, t.state, t.assignee, t.element_id, t.candidate_groups, \
             t.candidate_users, t.bpmn_process_id, t.creation_date, t.completion_date, \
             t.follow_up_date, t.due_date, t.tenant_id, t.external_form_reference, \
             t.process_definition_version, t.custom_headers, t.priority, t.element_instance_key, \
             COALESCE(d.name, t.bpmn_process_id), t.process_definition_key, \
             t.process_instance_key, t.form_key",
    fields: FIELDS,
    sorts: SORTS,
    special: Some(special),
    row,
};

/// The filter field (internal: the gateway sets it, a client's filter cannot reach it) that
/// keeps the variables effective at an element instance: those of its scope and of every scope
/// above it, the nearest of each name.
pub const EFFECTIVE_AT: &str = "$effectiveAt";

fn effective_special(
    name: &str,
    value: &Value,
    c: &mut Conditions,
) -> Option<Result<(), BadFilter>> {
    if name != EFFECTIVE_AT {
        return None;
    }
    Some(effective_at(value, c))
}

/// The scopes from the element instance up (a bounded walk: scopes nest at most as deep as
/// the engine lets them), each variable there with its distance, the nearest of each name.
fn effective_at(value: &Value, c: &mut Conditions) -> Result<(), BadFilter> {
    let scope = crate::filter::sql_value(EFFECTIVE_AT, Kind::Key, value)?;
    let mark = c.bind(scope);
    c.sql.push(format!(
        "t.key IN (WITH RECURSIVE s(k, d) AS (SELECT CAST({mark} AS BIGINT), 0 UNION ALL \
         SELECT e.flow_scope_key, s.d + 1 FROM element_instance e JOIN s ON e.key = s.k \
         WHERE e.flow_scope_key > 0 AND s.d < 10000), \
         c(key, name, d) AS (SELECT v.key, v.name, s.d FROM variable v JOIN s ON v.scope_key = s.k) \
         SELECT c.key FROM c WHERE c.d = (SELECT MIN(c2.d) FROM c c2 WHERE c2.name = c.name))"
    ));
    Ok(())
}

/// Variables with the effective-scope filter ([`EFFECTIVE_AT`]).
pub const EFFECTIVE_VARIABLES: Resource = Resource {
    name: "effective variable",
    special: Some(effective_special),
    ..VARIABLES
};

/// [`EFFECTIVE_VARIABLES`] with their whole values (`truncateValues=false`).
pub const EFFECTIVE_VARIABLES_FULL: Resource = Resource {
    select: VARIABLE_FULL.select,
    ..EFFECTIVE_VARIABLES
};

#[cfg(test)]
mod tests;
