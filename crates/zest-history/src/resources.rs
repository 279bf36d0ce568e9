//! The searchable resources: for each, the table it reads, its filter and sort fields (REST
//! names to SQL), and how a row becomes the REST API's JSON. [`crate::search`] runs them all
//! the same way, through the one filter compiler.

use crate::db::Row;
use serde_json::{json, Map, Value};

use crate::filter::{field, Conditions, Field, Kind, Special};

mod decisions;
mod deployed;
mod messages;
mod users;

pub use deployed::{FORMS, RESOURCES, RESOURCE_CONTENT};
mod user_tasks;

pub use decisions::{
    decision_instance_key, DECISION_DEFINITIONS, DECISION_DEFINITION_XML, DECISION_INSTANCES,
    DECISION_INSTANCE_FULL, DECISION_REQUIREMENTS, DECISION_REQUIREMENTS_XML,
};
pub use messages::{CORRELATED_MESSAGES, MESSAGE_SUBSCRIPTIONS};
pub use user_tasks::{EFFECTIVE_AT, EFFECTIVE_VARIABLES, EFFECTIVE_VARIABLES_FULL, USER_TASKS};
pub use users::USERS;

/// A searchable resource.
pub struct Resource {
    /// Its name, as errors say it.
    pub name: &'static str,
    /// `FROM` clause: the table as `t`, with what it joins.
    pub from: &'static str,
    /// The columns a row's JSON is built from (read by position in `row`).
    pub select: &'static str,
    pub fields: &'static [Field],
    /// Sortable fields; each expression is never NULL, so keyset cursors compare exactly.
    pub sorts: &'static [Field],
    pub special: Option<Special>,
    pub row: fn(&Row) -> crate::db::Result<Value>,
}

/// A resource by name, as a read of history names it across the internal port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Named {
    ProcessInstances,
    ProcessDefinitions,
    ElementInstances,
    Variables,
    /// Variables with their whole values (a get, or a search's `truncateValues=false`).
    VariableFull,
    Incidents,
    Jobs,
    UserTasks,
    /// Variables effective at an element instance (a user task's), nearest scope first.
    EffectiveVariables,
    DecisionDefinitions,
    /// A decision definition's DMN XML (`{"xml": ...}`).
    DecisionDefinitionXml,
    DecisionRequirements,
    /// Decision requirements' DMN XML (`{"xml": ...}`).
    DecisionRequirementsXml,
    DecisionInstances,
    /// A decision instance with its inputs and matched rules.
    DecisionInstanceFull,
    MessageSubscriptions,
    CorrelatedMessages,
    /// A deployed process or decision requirements resource.
    DeployedResources,
    /// Its text (`{"content": ...}`).
    ResourceContent,
    BatchOperations,
    BatchOperationItems,
    /// [`Named::EffectiveVariables`] with their whole values (`truncateValues=false`).
    EffectiveVariablesFull,
    /// Deployed forms, deleted ones too (`FormResult`).
    Forms,
    /// Users (`UserResult`).
    Users,
}

impl Named {
    pub fn resource(self) -> &'static Resource {
        match self {
            Named::ProcessInstances => &PROCESS_INSTANCES,
            Named::ProcessDefinitions => &PROCESS_DEFINITIONS,
            Named::ElementInstances => &ELEMENT_INSTANCES,
            Named::Variables => &VARIABLES,
            Named::VariableFull => &VARIABLE_FULL,
            Named::Incidents => &INCIDENTS,
            Named::Jobs => &JOBS,
            Named::UserTasks => &USER_TASKS,
            Named::EffectiveVariables => &EFFECTIVE_VARIABLES,
            Named::DecisionDefinitions => &DECISION_DEFINITIONS,
            Named::DecisionDefinitionXml => &DECISION_DEFINITION_XML,
            Named::DecisionRequirements => &DECISION_REQUIREMENTS,
            Named::DecisionRequirementsXml => &DECISION_REQUIREMENTS_XML,
            Named::DecisionInstances => &DECISION_INSTANCES,
            Named::DecisionInstanceFull => &DECISION_INSTANCE_FULL,
            Named::MessageSubscriptions => &MESSAGE_SUBSCRIPTIONS,
            Named::CorrelatedMessages => &CORRELATED_MESSAGES,
            Named::DeployedResources => &RESOURCES,
            Named::ResourceContent => &RESOURCE_CONTENT,
            Named::BatchOperations => &crate::batch::BATCH_OPERATIONS,
            Named::BatchOperationItems => &crate::batch::BATCH_OPERATION_ITEMS,
            Named::EffectiveVariablesFull => &EFFECTIVE_VARIABLES_FULL,
            Named::Forms => &FORMS,
            Named::Users => &USERS,
        }
    }
}

/// The key column, every order's last tie-breaker.
pub const KEY: &str = "t.key";

/// `2025-01-01T00:00:00.000Z` for epoch milliseconds.
pub fn date(ms: i64) -> Value {
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(d) => Value::String(d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()),
        None => Value::Null,
    }
}

fn key(k: i64) -> Value {
    Value::String(k.to_string())
}

/// Inserts `name` when the column holds a value (optional fields are left out, not null).
fn put_opt(out: &mut Map<String, Value>, name: &str, v: Option<Value>) {
    if let Some(v) = v {
        out.insert(name.to_string(), v);
    }
}

fn opt_key(row: &Row, i: usize) -> crate::db::Result<Option<Value>> {
    Ok(row.get::<_, Option<i64>>(i)?.filter(|k| *k > 0).map(key))
}

fn opt_date(row: &Row, i: usize) -> crate::db::Result<Option<Value>> {
    Ok(row.get::<_, Option<i64>>(i)?.map(date))
}

fn string(row: &Row, i: usize) -> crate::db::Result<String> {
    Ok(row.get::<_, Option<String>>(i)?.unwrap_or_default())
}

// ---------------------------------------------------------------------------------------------
// process instances

const PI_FIELDS: &[Field] = &[
    field("processInstanceKey", "t.key", Kind::Key),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field(
        "processDefinitionName",
        "COALESCE(d.name, t.bpmn_process_id)",
        Kind::Str,
    ),
    field("processDefinitionVersion", "t.version", Kind::Int),
    field("processDefinitionVersionTag", "d.version_tag", Kind::Str),
    field(
        "processDefinitionKey",
        "t.process_definition_key",
        Kind::Key,
    ),
    field(
        "parentProcessInstanceKey",
        "NULLIF(t.parent_process_instance_key, -1)",
        Kind::Key,
    ),
    field(
        "parentElementInstanceKey",
        "NULLIF(t.parent_element_instance_key, -1)",
        Kind::Key,
    ),
    // as the sort reads it, so that a date window goes through the same index (V14)
    field("startDate", "COALESCE(t.start_date, 0)", Kind::Date),
    field("endDate", "t.end_date", Kind::Date),
    field("state", "t.state", Kind::Enum),
    field("hasIncident", "(t.incidents > 0)", Kind::Bool),
    field("tenantId", "t.tenant_id", Kind::Str),
];

const PI_SORTS: &[Field] = &[
    field("processInstanceKey", "t.key", Kind::Key),
    field(
        "processDefinitionId",
        "COALESCE(t.bpmn_process_id, '')",
        Kind::Str,
    ),
    field(
        "processDefinitionName",
        "COALESCE(d.name, t.bpmn_process_id, '')",
        Kind::Str,
    ),
    field(
        "processDefinitionVersion",
        "COALESCE(t.version, 0)",
        Kind::Int,
    ),
    field(
        "processDefinitionVersionTag",
        "COALESCE(d.version_tag, '')",
        Kind::Str,
    ),
    field(
        "processDefinitionKey",
        "COALESCE(t.process_definition_key, 0)",
        Kind::Key,
    ),
    field(
        "parentProcessInstanceKey",
        "COALESCE(t.parent_process_instance_key, -1)",
        Kind::Key,
    ),
    field(
        "parentElementInstanceKey",
        "COALESCE(t.parent_element_instance_key, -1)",
        Kind::Key,
    ),
    field("startDate", "COALESCE(t.start_date, 0)", Kind::Date),
    field(
        "endDate",
        "COALESCE(t.end_date, 9223372036854775807)",
        Kind::Date,
    ),
    field("state", "COALESCE(t.state, '')", Kind::Enum),
    field("hasIncident", "(t.incidents > 0)", Kind::Bool),
    field("tenantId", "COALESCE(t.tenant_id, '')", Kind::Str),
];

/// Process instance filters that read other tables: variables, element instances, incidents.
fn pi_special(
    name: &str,
    value: &Value,
    c: &mut Conditions,
) -> Option<Result<(), crate::filter::BadFilter>> {
    let sub = |c: &mut Conditions, table: &str, column: &str, kind: Kind| {
        let mut inner = Conditions {
            sql: Vec::new(),
            params: std::mem::take(&mut c.params),
        };
        let r = inner.field(column, name, kind, value);
        c.params = inner.params;
        r.map(|()| {
            c.sql.push(format!(
                "EXISTS (SELECT 1 FROM {table} x WHERE x.process_instance_key = t.key AND {})",
                inner.sql.join(" AND ")
            ))
        })
    };
    Some(match name {
        // a plain true as the partial index of instances with incidents reads it (a count of
        // the dashboard's instances with incidents: 10,000 index entries, not a scan)
        "hasIncident" if value.is_boolean() => {
            let yes = value == &Value::Bool(true);
            c.sql
                .push(format!("t.incidents {} 0", if yes { ">" } else { "=" }));
            Ok(())
        }
        "variables" => variables_filter(value, c),
        "elementId" => sub(c, "element_instance", "x.element_id", Kind::Str),
        "elementInstanceState" => sub(c, "element_instance", "x.state", Kind::Enum),
        "hasElementInstanceIncident" => sub(
            c,
            "element_instance",
            "(x.incident_key IS NOT NULL)",
            Kind::Bool,
        ),
        "errorMessage" => sub(c, "incident", "x.error_message", Kind::Str),
        "incidentErrorHashCode" => sub(c, "incident", "x.error_message_hash", Kind::Int),
        "hasRetriesLeft" => sub(c, "job", "(x.retries > 0)", Kind::Bool),
        _ => return None,
    })
}

/// `variables: [{name, value}]`: each a variable of the instance (any scope) with that name
/// and a value matching the value's filter (a string filter property on the JSON text).
/// An equality (`value`, `$eq`, `$in`) takes its candidate instances from the postings of
/// their (name, value) hash (`postings.rs`, migration V13) and checks each one's variable: at
/// 1,000,000 instances a millisecond, not a probe of every instance's variables. Any other
/// operator (`$like`, `$neq`, `$exists`, ...) or a name alone is probed per candidate instance
/// through the variables by instance and name, so it costs what the rest of the filter leaves.
fn variables_filter(value: &Value, c: &mut Conditions) -> Result<(), crate::filter::BadFilter> {
    let bad = |m: &str| crate::filter::BadFilter(m.to_string());
    let Value::Array(items) = value else {
        return Err(bad(
            "Expected 'variables' to be a list of {name, value} filters",
        ));
    };
    for item in items {
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("Expected each 'variables' filter to have a 'name' string"))?;
        let mut inner = Conditions {
            sql: Vec::new(),
            params: std::mem::take(&mut c.params),
        };
        let mark = inner.bind(crate::db::Cell::Text(name.to_string()));
        inner.sql.push(format!("v.name = {mark}"));
        let equal = item.get("value").and_then(equal_values);
        // each bucket, then the hash in it (SQLite takes a CROSS JOIN's order as written; the
        // other order reads every posting)
        let postings = equal.as_ref().map(|values| {
            let hashes: Vec<String> = values
                .iter()
                .map(|v| inner.bind(crate::db::Cell::Integer(crate::postings::hash(name, v))))
                .collect();
            format!(
                "t.key IN (SELECT p.first_key + CAST(j.value AS BIGINT) \
                 FROM posting_bucket b CROSS JOIN variable_posting p \
                 CROSS JOIN json_each(p.keys) j WHERE p.bucket = b.bucket AND p.hash IN ({}))",
                hashes.join(", ")
            )
        });
        let r = match item.get("value") {
            Some(v) => inner.field("v.value", "variables.value", Kind::Str, v),
            None => Ok(()),
        };
        c.params = inner.params;
        r?;
        let conditions = inner.sql.join(" AND ");
        let probe = format!(
            "EXISTS (SELECT 1 FROM variable v WHERE v.process_instance_key = t.key \
             AND {conditions})"
        );
        c.sql.push(match postings {
            // the postings name candidates; each one's variable is checked
            Some(candidates) => format!("{candidates} AND {probe}"),
            None => probe,
        });
    }
    Ok(())
}

/// The values a variable value filter asks equality with: a plain value, `{"$eq": v}` or
/// `{"$in": [...]}` (alone, or both); None for any other operator (or a value that is not a
/// string, which the filter compiler refuses with its own message).
fn equal_values(filter: &Value) -> Option<Vec<&str>> {
    match filter {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Object(ops) if !ops.is_empty() => {
            let mut out: Option<Vec<&str>> = None;
            for (op, v) in ops {
                let values: Vec<&str> = match (op.as_str(), v) {
                    ("$eq", Value::String(s)) => vec![s.as_str()],
                    ("$in", Value::Array(items)) => {
                        items.iter().map(Value::as_str).collect::<Option<_>>()?
                    }
                    _ => return None,
                };
                // both given: a value must be in both, so the hash must be in either list
                out.get_or_insert_with(Vec::new).extend(values);
            }
            // `$in: []` sets no condition (the filter compiler's rule): nothing to look up
            out.filter(|values| !values.is_empty())
        }
        _ => None,
    }
}

fn pi_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("processInstanceKey".into(), key(row.get(0)?));
    let id = string(row, 1)?;
    out.insert("processDefinitionId".into(), json!(id));
    let name: Option<String> = row.get(2)?;
    out.insert(
        "processDefinitionName".into(),
        json!(name.unwrap_or_else(|| id.clone())),
    );
    out.insert(
        "processDefinitionVersion".into(),
        json!(row.get::<_, Option<i32>>(3)?.unwrap_or(0)),
    );
    put_opt(
        &mut out,
        "processDefinitionVersionTag",
        row.get::<_, Option<String>>(4)?.map(Value::String),
    );
    out.insert(
        "processDefinitionKey".into(),
        key(row.get::<_, Option<i64>>(5)?.unwrap_or(0)),
    );
    put_opt(&mut out, "parentProcessInstanceKey", opt_key(row, 6)?);
    put_opt(&mut out, "parentElementInstanceKey", opt_key(row, 7)?);
    out.insert(
        "startDate".into(),
        row.get::<_, Option<i64>>(8)?.map_or(Value::Null, date),
    );
    put_opt(&mut out, "endDate", opt_date(row, 9)?);
    out.insert("state".into(), json!(string(row, 10)?));
    out.insert("hasIncident".into(), json!(row.get::<_, i64>(11)? > 0));
    out.insert("tenantId".into(), json!(string(row, 12)?));
    out.insert("tags".into(), json!([]));
    Ok(Value::Object(out))
}

pub const PROCESS_INSTANCES: Resource = Resource {
    name: "process instance",
    from: "process_instance t LEFT JOIN process_definition d ON d.key = t.process_definition_key",
    select: "t.key, t.bpmn_process_id, d.name, t.version, d.version_tag, t.process_definition_key, \
             t.parent_process_instance_key, t.parent_element_instance_key, t.start_date, t.end_date, \
             t.state, t.incidents, t.tenant_id",
    fields: PI_FIELDS,
    sorts: PI_SORTS,
    special: Some(pi_special),
    row: pi_row,
};

// ---------------------------------------------------------------------------------------------
// element instances

const EI_FIELDS: &[Field] = &[
    field("elementInstanceKey", "t.key", Kind::Key),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
    field(
        "processDefinitionKey",
        "t.process_definition_key",
        Kind::Key,
    ),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field("elementId", "t.element_id", Kind::Str),
    field("elementName", "COALESCE(n.name, t.element_id)", Kind::Str),
    field("type", "t.element_type", Kind::Enum),
    field("state", "t.state", Kind::Enum),
    field("hasIncident", "(t.incident_key IS NOT NULL)", Kind::Bool),
    field("incidentKey", "t.incident_key", Kind::Key),
    field("startDate", "t.start_date", Kind::Date),
    field("endDate", "t.end_date", Kind::Date),
    field("tenantId", "t.tenant_id", Kind::Str),
    field("elementInstanceScopeKey", "t.flow_scope_key", Kind::Key),
];

const EI_SORTS: &[Field] = &[
    field("elementInstanceKey", "t.key", Kind::Key),
    field(
        "processInstanceKey",
        "COALESCE(t.process_instance_key, 0)",
        Kind::Key,
    ),
    field(
        "processDefinitionKey",
        "COALESCE(t.process_definition_key, 0)",
        Kind::Key,
    ),
    field(
        "processDefinitionId",
        "COALESCE(t.bpmn_process_id, '')",
        Kind::Str,
    ),
    field("startDate", "COALESCE(t.start_date, 0)", Kind::Date),
    field(
        "endDate",
        "COALESCE(t.end_date, 9223372036854775807)",
        Kind::Date,
    ),
    field("elementId", "COALESCE(t.element_id, '')", Kind::Str),
    field(
        "elementName",
        "COALESCE(n.name, t.element_id, '')",
        Kind::Str,
    ),
    field("type", "COALESCE(t.element_type, '')", Kind::Enum),
    field("state", "COALESCE(t.state, '')", Kind::Enum),
    field("incidentKey", "COALESCE(t.incident_key, 0)", Kind::Key),
    field("tenantId", "COALESCE(t.tenant_id, '')", Kind::Str),
];

fn ei_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("elementInstanceKey".into(), key(row.get(0)?));
    out.insert(
        "processInstanceKey".into(),
        key(row.get::<_, Option<i64>>(1)?.unwrap_or(0)),
    );
    out.insert(
        "processDefinitionKey".into(),
        key(row.get::<_, Option<i64>>(2)?.unwrap_or(0)),
    );
    out.insert("processDefinitionId".into(), json!(string(row, 3)?));
    let id = string(row, 4)?;
    let name: Option<String> = row.get(5)?;
    out.insert("elementId".into(), json!(id));
    out.insert("elementName".into(), json!(name.unwrap_or(id)));
    out.insert("type".into(), json!(string(row, 6)?));
    out.insert("state".into(), json!(string(row, 7)?));
    let incident: Option<i64> = row.get(8)?;
    out.insert("hasIncident".into(), json!(incident.is_some()));
    put_opt(&mut out, "incidentKey", incident.map(key));
    out.insert(
        "startDate".into(),
        row.get::<_, Option<i64>>(9)?.map_or(Value::Null, date),
    );
    put_opt(&mut out, "endDate", opt_date(row, 10)?);
    out.insert("tenantId".into(), json!(string(row, 11)?));
    Ok(Value::Object(out))
}

pub const ELEMENT_INSTANCES: Resource = Resource {
    name: "element instance",
    from: "element_instance t LEFT JOIN element_name n \
           ON n.process_definition_key = t.process_definition_key AND n.element_id = t.element_id",
    select: "t.key, t.process_instance_key, t.process_definition_key, t.bpmn_process_id, \
             t.element_id, n.name, t.element_type, t.state, t.incident_key, t.start_date, \
             t.end_date, t.tenant_id",
    fields: EI_FIELDS,
    sorts: EI_SORTS,
    special: None,
    row: ei_row,
};

// ---------------------------------------------------------------------------------------------
// variables

const VAR_FIELDS: &[Field] = &[
    field("variableKey", "t.key", Kind::Key),
    field("name", "t.name", Kind::Str),
    field("value", "t.value", Kind::Str),
    field("tenantId", "t.tenant_id", Kind::Str),
    field("isTruncated", "t.is_truncated", Kind::Bool),
    field("scopeKey", "t.scope_key", Kind::Key),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
];

const VAR_SORTS: &[Field] = &[
    field("variableKey", "t.key", Kind::Key),
    field("value", "COALESCE(t.value, '')", Kind::Str),
    field("name", "COALESCE(t.name, '')", Kind::Str),
    field("tenantId", "COALESCE(t.tenant_id, '')", Kind::Str),
    field("scopeKey", "COALESCE(t.scope_key, 0)", Kind::Key),
    field(
        "processInstanceKey",
        "COALESCE(t.process_instance_key, 0)",
        Kind::Key,
    ),
];

fn var_row(row: &Row) -> crate::db::Result<Value> {
    Ok(json!({
        "variableKey": key(row.get(0)?),
        "name": string(row, 1)?,
        "value": string(row, 2)?,
        "isTruncated": row.get::<_, Option<bool>>(3)?.unwrap_or(false),
        "scopeKey": key(row.get::<_, Option<i64>>(4)?.unwrap_or(0)),
        "processInstanceKey": key(row.get::<_, Option<i64>>(5)?.unwrap_or(0)),
        "tenantId": string(row, 6)?,
    }))
}

pub const VARIABLES: Resource = Resource {
    name: "variable",
    from: "variable t",
    select:
        "t.key, t.name, t.value, t.is_truncated, t.scope_key, t.process_instance_key, t.tenant_id",
    fields: VAR_FIELDS,
    sorts: VAR_SORTS,
    special: None,
    row: var_row,
};

/// Variables with their whole values (`GET /v2/variables/{key}`, and a search with
/// `truncateValues=false`).
pub const VARIABLE_FULL: Resource = Resource {
    select: "t.key, t.name, COALESCE(t.full_value, t.value), 0, t.scope_key, \
             t.process_instance_key, t.tenant_id",
    ..VARIABLES
};

// ---------------------------------------------------------------------------------------------
// incidents

const INC_FIELDS: &[Field] = &[
    field("incidentKey", "t.key", Kind::Key),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field("errorType", "t.error_type", Kind::Enum),
    field("errorMessage", "t.error_message", Kind::Str),
    field("elementId", "t.element_id", Kind::Str),
    field("creationTime", "t.creation_time", Kind::Date),
    field("state", "t.state", Kind::Enum),
    field("tenantId", "t.tenant_id", Kind::Str),
    field(
        "processDefinitionKey",
        "t.process_definition_key",
        Kind::Key,
    ),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
    field("elementInstanceKey", "t.element_instance_key", Kind::Key),
    field("jobKey", "NULLIF(t.job_key, -1)", Kind::Key),
];

const INC_SORTS: &[Field] = &[
    field("incidentKey", "t.key", Kind::Key),
    field(
        "processDefinitionKey",
        "COALESCE(t.process_definition_key, 0)",
        Kind::Key,
    ),
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
    field("errorType", "COALESCE(t.error_type, '')", Kind::Enum),
    field("errorMessage", "COALESCE(t.error_message, '')", Kind::Str),
    field("elementId", "COALESCE(t.element_id, '')", Kind::Str),
    field(
        "elementInstanceKey",
        "COALESCE(t.element_instance_key, 0)",
        Kind::Key,
    ),
    field("creationTime", "COALESCE(t.creation_time, 0)", Kind::Date),
    field("state", "COALESCE(t.state, '')", Kind::Enum),
    field("jobKey", "COALESCE(t.job_key, -1)", Kind::Key),
    field("tenantId", "COALESCE(t.tenant_id, '')", Kind::Str),
];

fn inc_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("incidentKey".into(), key(row.get(0)?));
    out.insert(
        "processDefinitionKey".into(),
        key(row.get::<_, Option<i64>>(1)?.unwrap_or(0)),
    );
    out.insert("processDefinitionId".into(), json!(string(row, 2)?));
    out.insert(
        "processInstanceKey".into(),
        key(row.get::<_, Option<i64>>(3)?.unwrap_or(0)),
    );
    out.insert("errorType".into(), json!(string(row, 4)?));
    out.insert("errorMessage".into(), json!(string(row, 5)?));
    out.insert("elementId".into(), json!(string(row, 6)?));
    out.insert(
        "elementInstanceKey".into(),
        key(row.get::<_, Option<i64>>(7)?.unwrap_or(0)),
    );
    out.insert(
        "creationTime".into(),
        row.get::<_, Option<i64>>(8)?.map_or(Value::Null, date),
    );
    out.insert("state".into(), json!(string(row, 9)?));
    put_opt(&mut out, "jobKey", opt_key(row, 10)?);
    out.insert("tenantId".into(), json!(string(row, 11)?));
    Ok(Value::Object(out))
}

pub const INCIDENTS: Resource = Resource {
    name: "incident",
    from: "incident t",
    select: "t.key, t.process_definition_key, t.bpmn_process_id, t.process_instance_key, \
             t.error_type, t.error_message, t.element_id, t.element_instance_key, \
             t.creation_time, t.state, t.job_key, t.tenant_id",
    fields: INC_FIELDS,
    sorts: INC_SORTS,
    special: None,
    row: inc_row,
};

// ---------------------------------------------------------------------------------------------
// jobs

const JOB_FIELDS: &[Field] = &[
    field("jobKey", "t.key", Kind::Key),
    field("type", "t.job_type", Kind::Str),
    field("worker", "t.worker", Kind::Str),
    field("state", "t.state", Kind::Enum),
    field("kind", "t.kind", Kind::Enum),
    field("listenerEventType", "t.listener_event_type", Kind::Enum),
    field("retries", "t.retries", Kind::Int),
    field("deadline", "t.deadline", Kind::Date),
    field("endTime", "t.end_time", Kind::Date),
    field("errorCode", "t.error_code", Kind::Str),
    field("errorMessage", "t.error_message", Kind::Str),
    field(
        "hasFailedWithRetriesLeft",
        "t.has_failed_with_retries_left",
        Kind::Bool,
    ),
    field("isDenied", "0", Kind::Bool),
    field("deniedReason", "NULL", Kind::Str),
    field("elementId", "t.element_id", Kind::Str),
    field("elementInstanceKey", "t.element_instance_key", Kind::Key),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
    field(
        "processDefinitionKey",
        "t.process_definition_key",
        Kind::Key,
    ),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field("tenantId", "t.tenant_id", Kind::Str),
];

const JOB_SORTS: &[Field] = &[
    field("jobKey", "t.key", Kind::Key),
    field("type", "COALESCE(t.job_type, '')", Kind::Str),
    field("worker", "COALESCE(t.worker, '')", Kind::Str),
    field("state", "COALESCE(t.state, '')", Kind::Enum),
    field("kind", "COALESCE(t.kind, '')", Kind::Enum),
    field(
        "listenerEventType",
        "COALESCE(t.listener_event_type, '')",
        Kind::Enum,
    ),
    field("retries", "COALESCE(t.retries, 0)", Kind::Int),
    field("deadline", "COALESCE(t.deadline, 0)", Kind::Date),
    field(
        "endTime",
        "COALESCE(t.end_time, 9223372036854775807)",
        Kind::Date,
    ),
    field("errorCode", "COALESCE(t.error_code, '')", Kind::Str),
    field("errorMessage", "COALESCE(t.error_message, '')", Kind::Str),
    field("isDenied", "0", Kind::Bool),
    field("deniedReason", "''", Kind::Str),
    field("elementId", "COALESCE(t.element_id, '')", Kind::Str),
    field(
        "elementInstanceKey",
        "COALESCE(t.element_instance_key, 0)",
        Kind::Key,
    ),
    field(
        "processInstanceKey",
        "COALESCE(t.process_instance_key, 0)",
        Kind::Key,
    ),
    field(
        "processDefinitionKey",
        "COALESCE(t.process_definition_key, 0)",
        Kind::Key,
    ),
    field(
        "processDefinitionId",
        "COALESCE(t.bpmn_process_id, '')",
        Kind::Str,
    ),
    field("tenantId", "COALESCE(t.tenant_id, '')", Kind::Str),
];

fn job_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("jobKey".into(), key(row.get(0)?));
    out.insert("type".into(), json!(string(row, 1)?));
    out.insert("worker".into(), json!(string(row, 2)?));
    out.insert("state".into(), json!(string(row, 3)?));
    out.insert("kind".into(), json!(string(row, 4)?));
    out.insert("listenerEventType".into(), json!(string(row, 5)?));
    out.insert(
        "retries".into(),
        json!(row.get::<_, Option<i32>>(6)?.unwrap_or(0)),
    );
    put_opt(
        &mut out,
        "deadline",
        row.get::<_, Option<i64>>(7)?.filter(|d| *d > 0).map(date),
    );
    put_opt(&mut out, "endTime", opt_date(row, 8)?);
    put_opt(
        &mut out,
        "errorCode",
        row.get::<_, Option<String>>(9)?
            .filter(|s| !s.is_empty())
            .map(Value::String),
    );
    put_opt(
        &mut out,
        "errorMessage",
        row.get::<_, Option<String>>(10)?
            .filter(|s| !s.is_empty())
            .map(Value::String),
    );
    out.insert(
        "hasFailedWithRetriesLeft".into(),
        json!(row.get::<_, Option<bool>>(11)?.unwrap_or(false)),
    );
    out.insert("isDenied".into(), json!(false));
    let headers: Value = serde_json::from_str(&string(row, 12)?).unwrap_or_else(|_| json!({}));
    out.insert("customHeaders".into(), headers);
    out.insert("elementId".into(), json!(string(row, 13)?));
    out.insert(
        "elementInstanceKey".into(),
        key(row.get::<_, Option<i64>>(14)?.unwrap_or(0)),
    );
    out.insert(
        "processInstanceKey".into(),
        key(row.get::<_, Option<i64>>(15)?.unwrap_or(0)),
    );
    out.insert(
        "processDefinitionKey".into(),
        key(row.get::<_, Option<i64>>(16)?.unwrap_or(0)),
    );
    out.insert("processDefinitionId".into(), json!(string(row, 17)?));
    out.insert("tenantId".into(), json!(string(row, 18)?));
    Ok(Value::Object(out))
}

pub const JOBS: Resource = Resource {
    name: "job",
    from: "job t",
    select: "t.key, t.job_type, t.worker, t.state, t.kind, t.listener_event_type, t.retries, \
             t.deadline, t.end_time, t.error_code, t.error_message, \
             t.has_failed_with_retries_left, t.custom_headers, t.element_id, \
             t.element_instance_key, t.process_instance_key, t.process_definition_key, \
             t.bpmn_process_id, t.tenant_id",
    fields: JOB_FIELDS,
    sorts: JOB_SORTS,
    special: None,
    row: job_row,
};

// ---------------------------------------------------------------------------------------------
// process definitions

const PD_FIELDS: &[Field] = &[
    field("processDefinitionKey", "t.key", Kind::Key),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field("name", "t.name", Kind::Str),
    field("resourceName", "t.resource_name", Kind::Str),
    field("version", "t.version", Kind::Int),
    field("versionTag", "t.version_tag", Kind::Str),
    field("tenantId", "t.tenant_id", Kind::Str),
    field("hasStartForm", "t.has_start_form", Kind::Bool),
    field(
        "isLatestVersion",
        "(t.version = (SELECT MAX(l.version) FROM process_definition l \
          WHERE l.bpmn_process_id = t.bpmn_process_id AND l.tenant_id = t.tenant_id))",
        Kind::Bool,
    ),
];

const PD_SORTS: &[Field] = &[
    field("processDefinitionKey", "t.key", Kind::Key),
    field("processDefinitionId", "t.bpmn_process_id", Kind::Str),
    field("name", "COALESCE(t.name, '')", Kind::Str),
    field("resourceName", "t.resource_name", Kind::Str),
    field("version", "t.version", Kind::Int),
    field("versionTag", "COALESCE(t.version_tag, '')", Kind::Str),
    field("tenantId", "t.tenant_id", Kind::Str),
];

fn pd_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("processDefinitionKey".into(), key(row.get(0)?));
    out.insert("processDefinitionId".into(), json!(string(row, 1)?));
    put_opt(
        &mut out,
        "name",
        row.get::<_, Option<String>>(2)?.map(Value::String),
    );
    out.insert("resourceName".into(), json!(string(row, 3)?));
    out.insert("version".into(), json!(row.get::<_, i32>(4)?));
    put_opt(
        &mut out,
        "versionTag",
        row.get::<_, Option<String>>(5)?.map(Value::String),
    );
    out.insert("tenantId".into(), json!(string(row, 6)?));
    out.insert("hasStartForm".into(), json!(row.get::<_, bool>(7)?));
    Ok(Value::Object(out))
}

pub const PROCESS_DEFINITIONS: Resource = Resource {
    name: "process definition",
    from: "process_definition t",
    select: "t.key, t.bpmn_process_id, t.name, t.resource_name, t.version, t.version_tag, \
             t.tenant_id, t.has_start_form",
    fields: PD_FIELDS,
    sorts: PD_SORTS,
    special: None,
    row: pd_row,
};
