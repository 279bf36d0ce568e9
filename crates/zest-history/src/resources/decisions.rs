//! Decisions: the deployed decision definitions and decision requirements (with their DMN
//! XML), and the decision instances of every evaluation (a business rule task's or
//! EvaluateDecision's). Definitions and requirements are deployed on every partition under
//! partition 1's key, so a search over the cluster counts them once (see
//! [`crate::search::PARTITION_OF_KEY`]). A decision instance's id is
//! `{decisionEvaluationKey}-{index}`; its row key packs both (`project/decisions.rs`).

use crate::db::Row;
use serde_json::{json, Map, Value};

use super::{date, key, put_opt, string, Resource};
use crate::filter::{field, BadFilter, Conditions, Field, Kind};
pub use crate::project::decisions::decision_instance_key;

// ---------------------------------------------------------------------------------------------
// decision definitions

const DD_FIELDS: &[Field] = &[
    field("decisionDefinitionKey", "t.key", Kind::Key),
    field("decisionDefinitionId", "t.decision_id", Kind::Str),
    field("name", "t.name", Kind::Str),
    field("version", "t.version", Kind::Int),
    field(
        "decisionRequirementsId",
        "t.decision_requirements_id",
        Kind::Str,
    ),
    field(
        "decisionRequirementsKey",
        "t.decision_requirements_key",
        Kind::Key,
    ),
    field("tenantId", "t.tenant_id", Kind::Str),
];

const DD_SORTS: &[Field] = &[
    field("decisionDefinitionKey", "t.key", Kind::Key),
    field("decisionDefinitionId", "t.decision_id", Kind::Str),
    field("name", "COALESCE(t.name, '')", Kind::Str),
    field("version", "t.version", Kind::Int),
    field(
        "decisionRequirementsId",
        "COALESCE(t.decision_requirements_id, '')",
        Kind::Str,
    ),
    field(
        "decisionRequirementsKey",
        "COALESCE(t.decision_requirements_key, 0)",
        Kind::Key,
    ),
    field("tenantId", "t.tenant_id", Kind::Str),
];

fn dd_row(row: &Row) -> crate::db::Result<Value> {
    Ok(json!({
        "decisionDefinitionKey": key(row.get(0)?),
        "decisionDefinitionId": string(row, 1)?,
        "name": string(row, 2)?,
        "version": row.get::<_, i32>(3)?,
        "decisionRequirementsId": string(row, 4)?,
        "decisionRequirementsKey": key(row.get::<_, Option<i64>>(5)?.unwrap_or(0)),
        "tenantId": string(row, 6)?,
    }))
}

pub const DECISION_DEFINITIONS: Resource = Resource {
    name: "decision definition",
    from: "decision_definition t",
    select: "t.key, t.decision_id, t.name, t.version, t.decision_requirements_id, \
             t.decision_requirements_key, t.tenant_id",
    fields: DD_FIELDS,
    sorts: DD_SORTS,
    special: None,
    row: dd_row,
};

/// A row of the XML of a definition's requirements: `{"xml": ...}`.
fn xml_row(row: &Row) -> crate::db::Result<Value> {
    Ok(json!({ "xml": string(row, 0)? }))
}

/// The DMN XML a decision definition was deployed in (`{"xml": ...}`).
pub const DECISION_DEFINITION_XML: Resource = Resource {
    name: "decision definition XML",
    from: "decision_definition t JOIN decision_requirements r \
           ON r.key = t.decision_requirements_key",
    select: "r.dmn_xml",
    fields: &[],
    sorts: &[],
    special: None,
    row: xml_row,
};

// ---------------------------------------------------------------------------------------------
// decision requirements

const DR_FIELDS: &[Field] = &[
    field("decisionRequirementsKey", "t.key", Kind::Key),
    field(
        "decisionRequirementsId",
        "t.decision_requirements_id",
        Kind::Str,
    ),
    field("decisionRequirementsName", "t.name", Kind::Str),
    field("version", "t.version", Kind::Int),
    field("resourceName", "t.resource_name", Kind::Str),
    field("tenantId", "t.tenant_id", Kind::Str),
];

const DR_SORTS: &[Field] = &[
    field("decisionRequirementsKey", "t.key", Kind::Key),
    field(
        "decisionRequirementsName",
        "COALESCE(t.name, '')",
        Kind::Str,
    ),
    field("version", "t.version", Kind::Int),
    field(
        "decisionRequirementsId",
        "t.decision_requirements_id",
        Kind::Str,
    ),
    field("tenantId", "t.tenant_id", Kind::Str),
];

fn dr_row(row: &Row) -> crate::db::Result<Value> {
    Ok(json!({
        "decisionRequirementsKey": key(row.get(0)?),
        "decisionRequirementsId": string(row, 1)?,
        "decisionRequirementsName": string(row, 2)?,
        "version": row.get::<_, i32>(3)?,
        "resourceName": string(row, 4)?,
        "tenantId": string(row, 5)?,
    }))
}

pub const DECISION_REQUIREMENTS: Resource = Resource {
    name: "decision requirements",
    from: "decision_requirements t",
    select: "t.key, t.decision_requirements_id, t.name, t.version, t.resource_name, t.tenant_id",
    fields: DR_FIELDS,
    sorts: DR_SORTS,
    special: None,
    row: dr_row,
};

/// The DMN XML of decision requirements (`{"xml": ...}`).
pub const DECISION_REQUIREMENTS_XML: Resource = Resource {
    name: "decision requirements XML",
    from: "decision_requirements t",
    select: "t.dmn_xml",
    fields: &[],
    sorts: &[],
    special: None,
    row: xml_row,
};

// ---------------------------------------------------------------------------------------------
// decision instances

/// `{key}-{index}` as the instance's id in SQL.
const DI_ID: &str = "(t.evaluation_key || '-' || t.idx)";

const DI_FIELDS: &[Field] = &[
    field("state", "t.state", Kind::Enum),
    field("evaluationFailure", "t.evaluation_failure", Kind::Str),
    // as the sort and the index (V15) read it
    field(
        "evaluationDate",
        "COALESCE(t.evaluation_date, 0)",
        Kind::Date,
    ),
    field("decisionDefinitionId", "t.decision_id", Kind::Str),
    field("decisionDefinitionName", "t.decision_name", Kind::Str),
    field("decisionDefinitionVersion", "t.decision_version", Kind::Int),
    field("decisionDefinitionType", "t.decision_type", Kind::Enum),
    field("tenantId", "t.tenant_id", Kind::Str),
    field("decisionEvaluationKey", "t.evaluation_key", Kind::Key),
    field(
        "processDefinitionKey",
        "NULLIF(t.process_definition_key, -1)",
        Kind::Key,
    ),
    field(
        "processInstanceKey",
        "NULLIF(t.process_instance_key, -1)",
        Kind::Key,
    ),
    field("decisionDefinitionKey", "t.decision_key", Kind::Key),
    field(
        "elementInstanceKey",
        "NULLIF(t.element_instance_key, -1)",
        Kind::Key,
    ),
];

const DI_SORTS: &[Field] = &[
    field("decisionEvaluationInstanceKey", "t.key", Kind::Key),
    field(
        "decisionDefinitionId",
        "COALESCE(t.decision_id, '')",
        Kind::Str,
    ),
    field(
        "decisionDefinitionKey",
        "COALESCE(t.decision_key, 0)",
        Kind::Key,
    ),
    field(
        "decisionDefinitionName",
        "COALESCE(t.decision_name, '')",
        Kind::Str,
    ),
    field(
        "decisionDefinitionType",
        "COALESCE(t.decision_type, '')",
        Kind::Enum,
    ),
    field(
        "decisionDefinitionVersion",
        "COALESCE(t.decision_version, 0)",
        Kind::Int,
    ),
    field("decisionEvaluationKey", "t.evaluation_key", Kind::Key),
    field(
        "elementInstanceKey",
        "COALESCE(t.element_instance_key, -1)",
        Kind::Key,
    ),
    field(
        "evaluationDate",
        "COALESCE(t.evaluation_date, 0)",
        Kind::Date,
    ),
    field(
        "evaluationFailure",
        "COALESCE(t.evaluation_failure, '')",
        Kind::Str,
    ),
    field(
        "processDefinitionKey",
        "COALESCE(t.process_definition_key, -1)",
        Kind::Key,
    ),
    field(
        "processInstanceKey",
        "COALESCE(t.process_instance_key, -1)",
        Kind::Key,
    ),
    field("state", "t.state", Kind::Enum),
    field("tenantId", "COALESCE(t.tenant_id, '')", Kind::Str),
];

/// `decisionEvaluationInstanceKey`: `{key}-{index}`, compared as a string.
fn di_special(name: &str, value: &Value, c: &mut Conditions) -> Option<Result<(), BadFilter>> {
    match name {
        "decisionEvaluationInstanceKey" => Some(c.field(DI_ID, name, Kind::Str, value)),
        _ => None,
    }
}

fn positive_key(row: &Row, i: usize) -> crate::db::Result<Option<Value>> {
    Ok(row.get::<_, Option<i64>>(i)?.filter(|k| *k > 0).map(key))
}

fn di_common(row: &Row) -> crate::db::Result<Map<String, Value>> {
    let mut out = Map::new();
    out.insert(
        "decisionEvaluationInstanceKey".into(),
        json!(format!(
            "{}-{}",
            row.get::<_, i64>(0)?,
            row.get::<_, i64>(1)?
        )),
    );
    out.insert("state".into(), json!(string(row, 2)?));
    out.insert(
        "evaluationDate".into(),
        row.get::<_, Option<i64>>(3)?.map_or(Value::Null, date),
    );
    put_opt(
        &mut out,
        "evaluationFailure",
        row.get::<_, Option<String>>(4)?.map(Value::String),
    );
    out.insert("decisionDefinitionId".into(), json!(string(row, 5)?));
    out.insert("decisionDefinitionName".into(), json!(string(row, 6)?));
    out.insert(
        "decisionDefinitionVersion".into(),
        json!(row.get::<_, Option<i32>>(7)?.unwrap_or(0)),
    );
    out.insert("decisionDefinitionType".into(), json!(string(row, 8)?));
    out.insert("result".into(), json!(string(row, 9)?));
    out.insert("tenantId".into(), json!(string(row, 10)?));
    out.insert("decisionEvaluationKey".into(), key(row.get(0)?));
    put_opt(&mut out, "processDefinitionKey", positive_key(row, 11)?);
    put_opt(&mut out, "processInstanceKey", positive_key(row, 12)?);
    out.insert(
        "decisionDefinitionKey".into(),
        key(row.get::<_, Option<i64>>(13)?.unwrap_or(0)),
    );
    put_opt(&mut out, "elementInstanceKey", positive_key(row, 14)?);
    Ok(out)
}

fn di_row(row: &Row) -> crate::db::Result<Value> {
    Ok(Value::Object(di_common(row)?))
}

/// A decision instance with its inputs and matched rules (`DecisionInstanceGetQueryResult`).
fn di_full_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = di_common(row)?;
    let parsed = |i: usize| -> crate::db::Result<Value> {
        Ok(row
            .get::<_, Option<String>>(i)?
            .and_then(|t| serde_json::from_str(&t).ok())
            .filter(Value::is_array)
            .unwrap_or_else(|| json!([])))
    };
    out.insert("evaluatedInputs".into(), parsed(15)?);
    out.insert("matchedRules".into(), parsed(16)?);
    Ok(Value::Object(out))
}

pub const DECISION_INSTANCES: Resource = Resource {
    name: "decision instance",
    from: "decision_instance t",
    select: "t.evaluation_key, t.idx, t.state, t.evaluation_date, t.evaluation_failure, \
             t.decision_id, t.decision_name, t.decision_version, t.decision_type, t.result, \
             t.tenant_id, t.process_definition_key, t.process_instance_key, t.decision_key, \
             t.element_instance_key",
    fields: DI_FIELDS,
    sorts: DI_SORTS,
    special: Some(di_special),
    row: di_row,
};

/// A decision instance with its evaluated inputs and matched rules (the get).
pub const DECISION_INSTANCE_FULL: Resource = Resource {
    select: "t.evaluation_key, t.idx, t.state, t.evaluation_date, t.evaluation_failure, \
             t.decision_id, t.decision_name, t.decision_version, t.decision_type, t.result, \
             t.tenant_id, t.process_definition_key, t.process_instance_key, t.decision_key, \
             t.element_instance_key, t.evaluated_inputs, t.matched_rules",
    row: di_full_row,
    ..DECISION_INSTANCES
};

#[cfg(test)]
mod tests;
