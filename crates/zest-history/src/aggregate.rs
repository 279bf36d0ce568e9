//! Camunda 8.9's statistics of active process instances, the counts Operate's dashboard
//! shows: per process definition id (`POST /v2/process-definitions/statistics/process-instances`),
//! per version of one (`.../process-instances-by-version`), per incident error
//! (`POST /v2/incidents/statistics/process-instances-by-error`) and per definition for one
//! error (`.../process-instances-by-definition`).
//!
//! One shape for all four: a partition's history answers its groups ([`groups`]: the group's
//! columns and counts, one row per definition, version or error message, never per instance),
//! the groups of every partition are summed by their columns ([`page`]), sorted by the
//! request's fields and cut to its offset page. A node holding every partition asks one
//! query for all of them. The groups a partition answers are bounded by [`MAX_GROUPS`]; a
//! partition with more (a distinct error message per instance, say) answers the first of
//! them, and the page says its total is a lower bound (`hasMoreTotalItems`).
//!
//! The job statistics (`aggregate/jobs.rs`) take the same path over the per-minute counters
//! the exporter keeps, with their own summing (last times, distinct workers) and cursor pages.

use std::collections::BTreeMap;

use crate::db::Cell as Sql;
use crate::db::Conn;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::filter::Conditions;
use crate::search::{SearchError, PARTITION_OF_KEY};

mod jobs;
pub use jobs::{JobStatistics, Of as JobsOf};

/// Groups one partition's history answers at most.
pub const MAX_GROUPS: usize = 10_000;

const DEFAULT_LIMIT: usize = 100;

/// Which statistics, with the filter that selects them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Aggregate {
    /// Active instances with and without incidents per process definition id and tenant.
    DefinitionInstances,
    /// The same per version of one process definition id.
    DefinitionVersions {
        process_definition_id: String,
        tenant_id: Option<String>,
    },
    /// Active instances with an active incident, per error message.
    IncidentsByError,
    /// Active instances with an active incident of one error, per process definition.
    IncidentsByDefinition { error_hash: i64 },
    /// Camunda 8.9's job statistics (global, by type, by worker, over time, by error).
    Jobs(jobs::JobStatistics),
}

/// One group of one partition: its columns (what it is grouped by, then what describes it)
/// and its counts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Group {
    pub columns: Vec<Value>,
    pub counts: Vec<i64>,
}

/// A partition's groups, and whether it had more than it answered.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Groups {
    pub groups: Vec<Group>,
    pub truncated: bool,
    /// Whether the partition's history misses records (a snapshot skipped part of its log:
    /// `export_position.gap_to`), which the job statistics report as `isIncomplete`.
    #[serde(default)]
    pub incomplete: bool,
}

/// The shape of an aggregate: its SQL (a column that describes a group, the same in each of
/// its rows, is read through `MIN`, as PostgreSQL asks of what is not grouped by), how many of its columns group (the rest describe the
/// group and are the same in every partition), its result's field names, and its sort fields.
struct Shape {
    sql: &'static str,
    grouping: usize,
    columns: &'static [&'static str],
    counts: &'static [&'static str],
    sorts: &'static [&'static str],
    /// The expression of a row's partition.
    partition: &'static str,
    /// Whether the last grouping column is a worker, counted (distinct, non-empty) into
    /// `workers` when the partitions' groups are summed rather than kept as a group of its
    /// own (the job statistics).
    workers: bool,
}

const DEFINITION_INSTANCES: Shape = Shape {
    sql: "SELECT t.bpmn_process_id, COALESCE(t.tenant_id, '<default>'), \
            (SELECT d.name FROM process_definition d WHERE d.bpmn_process_id = t.bpmn_process_id \
               ORDER BY d.version DESC LIMIT 1), \
            (SELECT COUNT(*) > 1 FROM process_definition d WHERE d.bpmn_process_id = t.bpmn_process_id), \
            SUM(CASE WHEN t.incidents = 0 THEN 1 ELSE 0 END), \
            SUM(CASE WHEN t.incidents > 0 THEN 1 ELSE 0 END) \
          FROM process_instance t WHERE t.state = 'ACTIVE' {and} \
          GROUP BY t.bpmn_process_id, t.tenant_id ORDER BY 1, 2",
    grouping: 2,
    columns: &[
        "processDefinitionId",
        "tenantId",
        "latestProcessDefinitionName",
        "hasMultipleVersions",
    ],
    counts: &[
        "activeInstancesWithoutIncidentCount",
        "activeInstancesWithIncidentCount",
    ],
    sorts: &[
        "processDefinitionId",
        "activeInstancesWithIncidentCount",
        "activeInstancesWithoutIncidentCount",
    ],
    partition: PARTITION_OF_KEY,
    workers: false,
};

const DEFINITION_VERSIONS: Shape = Shape {
    sql: "SELECT t.process_definition_key, MIN(t.bpmn_process_id), MIN(d.name), MIN(t.version), \
            MIN(COALESCE(t.tenant_id, '<default>')), SUM(CASE WHEN t.incidents = 0 THEN 1 ELSE 0 END), \
            SUM(CASE WHEN t.incidents > 0 THEN 1 ELSE 0 END) \
          FROM process_instance t LEFT JOIN process_definition d ON d.key = t.process_definition_key \
          WHERE t.state = 'ACTIVE' AND t.bpmn_process_id = ?1 \
            AND (CAST(?2 AS TEXT) IS NULL OR COALESCE(t.tenant_id, '<default>') = ?2) {and} \
          GROUP BY t.process_definition_key ORDER BY 1",
    grouping: 1,
    columns: &[
        "processDefinitionKey",
        "processDefinitionId",
        "processDefinitionName",
        "processDefinitionVersion",
        "tenantId",
    ],
    counts: &[
        "activeInstancesWithoutIncidentCount",
        "activeInstancesWithIncidentCount",
    ],
    sorts: &[
        "processDefinitionId",
        "processDefinitionKey",
        "processDefinitionName",
        "processDefinitionVersion",
        "activeInstancesWithIncidentCount",
        "activeInstancesWithoutIncidentCount",
    ],
    partition: PARTITION_OF_KEY,
    workers: false,
};

const INCIDENTS_BY_ERROR: Shape = Shape {
    sql: "SELECT t.error_message_hash, COALESCE(t.error_message, ''), \
            COUNT(DISTINCT t.process_instance_key) \
          FROM incident t WHERE t.state = 'ACTIVE' {and} \
          GROUP BY t.error_message_hash, t.error_message ORDER BY 1, 2",
    grouping: 2,
    columns: &["errorHashCode", "errorMessage"],
    counts: &["activeInstancesWithErrorCount"],
    sorts: &["errorMessage", "activeInstancesWithErrorCount"],
    partition: PARTITION_OF_KEY,
    workers: false,
};

const INCIDENTS_BY_DEFINITION: Shape = Shape {
    sql: "SELECT t.process_definition_key, MIN(COALESCE(d.bpmn_process_id, t.bpmn_process_id)), \
            MIN(COALESCE(d.name, d.bpmn_process_id, t.bpmn_process_id)), MIN(d.version), \
            MIN(COALESCE(t.tenant_id, '<default>')), COUNT(DISTINCT t.process_instance_key) \
          FROM incident t LEFT JOIN process_definition d ON d.key = t.process_definition_key \
          WHERE t.state = 'ACTIVE' AND t.error_message_hash = ?1 {and} \
          GROUP BY t.process_definition_key ORDER BY 1",
    grouping: 1,
    columns: &[
        "processDefinitionKey",
        "processDefinitionId",
        "processDefinitionName",
        "processDefinitionVersion",
        "tenantId",
    ],
    counts: &["activeInstancesWithErrorCount"],
    sorts: &[
        "activeInstancesWithErrorCount",
        "processDefinitionKey",
        "tenantId",
    ],
    partition: PARTITION_OF_KEY,
    workers: false,
};

impl Aggregate {
    fn shape(&self) -> &'static Shape {
        match self {
            Aggregate::DefinitionInstances => &DEFINITION_INSTANCES,
            Aggregate::DefinitionVersions { .. } => &DEFINITION_VERSIONS,
            Aggregate::IncidentsByError => &INCIDENTS_BY_ERROR,
            Aggregate::IncidentsByDefinition { .. } => &INCIDENTS_BY_DEFINITION,
            Aggregate::Jobs(j) => j.shape(),
        }
    }

    fn params(&self) -> Vec<Sql> {
        match self {
            Aggregate::DefinitionVersions {
                process_definition_id,
                tenant_id,
            } => vec![
                Sql::Text(process_definition_id.clone()),
                tenant_id.clone().map(Sql::Text).unwrap_or(Sql::Null),
            ],
            Aggregate::IncidentsByError | Aggregate::DefinitionInstances => Vec::new(),
            Aggregate::IncidentsByDefinition { error_hash } => vec![Sql::Integer(*error_hash)],
            Aggregate::Jobs(_) => Vec::new(),
        }
    }

    /// The conditions added to the statistics' own, with their parameters after its own.
    fn conditions(&self) -> Result<Conditions, SearchError> {
        match self {
            Aggregate::Jobs(j) => j.conditions(),
            _ => Ok(Conditions {
                sql: Vec::new(),
                params: self.params(),
            }),
        }
    }

    /// The aggregate a request names, with its filter read from the request's body; a 400
    /// names what is wrong.
    pub fn of_request(kind: AggregateKind, query: &Value) -> Result<Aggregate, SearchError> {
        let filter = query.get("filter").filter(|f| !f.is_null());
        let required = |name: &str| -> Result<&Value, SearchError> {
            filter
                .and_then(|f| f.get(name))
                .filter(|v| !v.is_null())
                .ok_or_else(|| {
                    SearchError::Bad(format!(
                        "No filter.{name} provided: 'filter.{name}' is required"
                    ))
                })
        };
        Ok(match kind {
            AggregateKind::Jobs(of) => Aggregate::Jobs(jobs::JobStatistics::of_request(of, query)?),
            AggregateKind::DefinitionInstances => Aggregate::DefinitionInstances,
            AggregateKind::IncidentsByError => Aggregate::IncidentsByError,
            AggregateKind::DefinitionVersions => Aggregate::DefinitionVersions {
                process_definition_id: required("processDefinitionId")?
                    .as_str()
                    .ok_or_else(|| {
                        SearchError::Bad(
                            "Expected 'filter.processDefinitionId' to be a string".into(),
                        )
                    })?
                    .to_string(),
                tenant_id: match filter.and_then(|f| f.get("tenantId")) {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => {
                        return Err(SearchError::Bad(
                            "Expected 'filter.tenantId' to be a string".into(),
                        ))
                    }
                },
            },
            AggregateKind::IncidentsByDefinition => Aggregate::IncidentsByDefinition {
                error_hash: required("errorHashCode")?.as_i64().ok_or_else(|| {
                    SearchError::Bad("Expected 'filter.errorHashCode' to be an integer".into())
                })?,
            },
        })
    }
}

/// The four statistics requests, before their filter is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregateKind {
    DefinitionInstances,
    DefinitionVersions,
    IncidentsByError,
    IncidentsByDefinition,
    /// One of the job statistics.
    Jobs(jobs::Of),
}

/// The groups of `partitions` (None: all in this store).
pub fn groups(
    conn: &Conn,
    aggregate: &Aggregate,
    partitions: Option<&[u32]>,
) -> Result<Groups, SearchError> {
    let shape = aggregate.shape();
    let mut c = aggregate.conditions()?;
    c.partitions(shape.partition, partitions);
    let and: String = c.sql.iter().map(|s| format!("AND {s} ")).collect();
    let params = c.params;
    let sql = format!(
        "{} LIMIT {}",
        shape.sql.replace("{and}", &and),
        MAX_GROUPS + 1
    );
    let rows = conn.query(&sql, &crate::db::cells(&params), |r| Ok(r.clone()))?;
    let width = shape.columns.len();
    let mut out = Groups::default();
    for row in &rows {
        if out.groups.len() == MAX_GROUPS {
            out.truncated = true;
            break;
        }
        let mut columns = Vec::with_capacity(width);
        for i in 0..width {
            columns.push(crate::search::sql_json(&row.get::<_, Sql>(i)?));
        }
        let mut counts = Vec::with_capacity(shape.counts.len());
        for i in 0..shape.counts.len() {
            counts.push(row.get::<_, Option<i64>>(width + i)?.unwrap_or(0));
        }
        out.groups.push(Group { columns, counts });
    }
    if let Aggregate::Jobs(_) = aggregate {
        out.incomplete = jobs::has_gap(conn, partitions)?;
    }
    Ok(out)
}

/// The page of the statistics `query` asks for, from every partition's groups.
pub fn page(
    aggregate: &Aggregate,
    parts: Vec<Groups>,
    query: &Value,
) -> Result<Value, SearchError> {
    if let Aggregate::Jobs(j) = aggregate {
        return jobs::page(j, parts, query);
    }
    let shape = aggregate.shape();
    let order = sort_order(shape, query)?;
    let (from, limit) = offset_page(query)?;
    let truncated = parts.iter().any(|p| p.truncated);
    let mut summed: BTreeMap<String, Group> = BTreeMap::new();
    for group in parts.into_iter().flat_map(|p| p.groups) {
        let id = Value::Array(group.columns[..shape.grouping].to_vec()).to_string();
        match summed.get_mut(&id) {
            Some(g) => {
                for (sum, n) in g.counts.iter_mut().zip(&group.counts) {
                    *sum += n;
                }
            }
            None => {
                summed.insert(id, group);
            }
        }
    }
    // each group with its sort values, compared as the searches' merge compares rows
    let desc: Vec<bool> = order.iter().map(|(_, d)| *d).collect();
    let mut groups: Vec<(Vec<Value>, Group)> = summed
        .into_values()
        .map(|g| {
            (
                order
                    .iter()
                    .map(|(f, _)| sort_value(shape, &g, f))
                    .collect(),
                g,
            )
        })
        .collect();
    groups.sort_by(|(a, _), (b, _)| crate::search::compare_rows(a, b, &desc));
    let items: Vec<Value> = groups.into_iter().map(|(_, g)| item(shape, g)).collect();
    let total = items.len();
    let items: Vec<Value> = items.into_iter().skip(from).take(limit).collect();
    Ok(json!({
        "items": items,
        "page": {
            "totalItems": total,
            "hasMoreTotalItems": truncated,
            "startCursor": null,
            "endCursor": null,
        }
    }))
}

fn item(shape: &Shape, g: Group) -> Value {
    let mut out = Map::new();
    for (name, v) in shape.columns.iter().zip(g.columns) {
        let v = match (*name, v) {
            // keys are strings in the REST API
            ("processDefinitionKey", Value::Number(n)) => Value::String(n.to_string()),
            ("hasMultipleVersions", Value::Number(n)) => Value::Bool(n.as_i64() == Some(1)),
            // Java's String.hashCode, an int32 (stored as an integer)
            (_, v) => v,
        };
        out.insert((*name).to_string(), v);
    }
    for (name, n) in shape.counts.iter().zip(g.counts) {
        out.insert((*name).to_string(), json!(n));
    }
    Value::Object(out)
}

/// The request's sort fields, each with whether it is descending, then every grouping
/// column ascending, so that the order is total.
fn sort_order(shape: &Shape, query: &Value) -> Result<Vec<(String, bool)>, SearchError> {
    let mut order = Vec::new();
    let sort = match query.get("sort") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => return Err(SearchError::Bad("Expected 'sort' to be an array".into())),
    };
    for (i, s) in sort.iter().enumerate() {
        let field = s.get("field").and_then(Value::as_str).ok_or_else(|| {
            SearchError::Bad(format!("Expected 'sort[{i}].field' to be a string"))
        })?;
        if !shape.sorts.contains(&field) {
            return Err(SearchError::Bad(format!(
                "Unknown sort field 'sort[{i}].field': '{field}'; expected one of {}",
                shape.sorts.join(", ")
            )));
        }
        let desc = match s.get("order").and_then(Value::as_str) {
            None => false,
            Some(o) if o.eq_ignore_ascii_case("asc") => false,
            Some(o) if o.eq_ignore_ascii_case("desc") => true,
            Some(o) => {
                return Err(SearchError::Bad(format!(
                    "Expected 'sort[{i}].order' to be ASC or DESC, but was '{o}'"
                )))
            }
        };
        order.push((field.to_string(), desc));
    }
    for name in &shape.columns[..shape.grouping] {
        order.push((name.to_string(), false));
    }
    Ok(order)
}

fn offset_page(query: &Value) -> Result<(usize, usize), SearchError> {
    let page = query.get("page").unwrap_or(&Value::Null);
    let int = |name: &str| -> Result<Option<i64>, SearchError> {
        match page.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| {
                SearchError::Bad(format!("Expected 'page.{name}' to be an integer"))
            }),
        }
    };
    let limit = int("limit")?.unwrap_or(DEFAULT_LIMIT as i64);
    if !(1..=crate::search::MAX_LIMIT).contains(&limit) {
        return Err(SearchError::Bad(format!(
            "Expected 'page.limit' to be between 1 and {}, but was {limit}",
            crate::search::MAX_LIMIT
        )));
    }
    let from = int("from")?.unwrap_or(0);
    if from < 0 {
        return Err(SearchError::Bad(
            "Expected 'page.from' to be at least 0".into(),
        ));
    }
    for name in ["after", "before"] {
        if page.get(name).is_some_and(|v| !v.is_null()) {
            return Err(SearchError::Bad(format!(
                "Expected an offset page: statistics take 'page.from' and 'page.limit', not 'page.{name}'"
            )));
        }
    }
    Ok((from as usize, limit as usize))
}

/// The value of sort field `field` of a group: one of its columns or counts.
fn sort_value(shape: &Shape, g: &Group, field: &str) -> Value {
    if let Some(i) = shape.columns.iter().position(|c| *c == field) {
        return g.columns[i].clone();
    }
    let i = shape.counts.iter().position(|c| *c == field);
    i.map(|i| json!(g.counts[i])).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(groups: &[(&str, i64, i64)]) -> Groups {
        Groups {
            groups: groups
                .iter()
                .map(|(id, without, with)| Group {
                    columns: vec![json!(id), json!("<default>"), json!(id), json!(0)],
                    counts: vec![*without, *with],
                })
                .collect(),
            truncated: false,
            incomplete: false,
        }
    }

    #[test]
    fn the_partitions_groups_are_summed_sorted_and_paged() {
        let parts = vec![
            part(&[("a", 1, 0), ("b", 5, 2)]),
            part(&[("b", 1, 1), ("c", 0, 7)]),
        ];
        let query = json!({"sort": [{"field": "activeInstancesWithIncidentCount", "order": "DESC"}],
                           "page": {"from": 0, "limit": 2}});
        let page = page(&Aggregate::DefinitionInstances, parts, &query).unwrap();
        assert_eq!(page["page"]["totalItems"], 3);
        let items = page["items"].as_array().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0]["processDefinitionId"], "c");
        assert_eq!(items[1]["processDefinitionId"], "b");
        assert_eq!(items[1]["activeInstancesWithoutIncidentCount"], 6);
        assert_eq!(items[1]["activeInstancesWithIncidentCount"], 3);
        assert_eq!(items[1]["hasMultipleVersions"], false);
    }

    #[test]
    fn a_truncated_partition_makes_the_total_a_lower_bound() {
        let mut p = part(&[("a", 1, 0)]);
        p.truncated = true;
        let whole = page(&Aggregate::DefinitionInstances, vec![part(&[])], &json!({})).unwrap();
        assert_eq!(whole["page"]["hasMoreTotalItems"], false);
        let cut = page(&Aggregate::DefinitionInstances, vec![p], &json!({})).unwrap();
        assert_eq!(cut["page"]["hasMoreTotalItems"], true);
    }

    #[test]
    fn bad_requests_name_the_field() {
        let e = Aggregate::of_request(AggregateKind::DefinitionVersions, &json!({})).unwrap_err();
        assert!(e.to_string().contains("filter.processDefinitionId"), "{e}");
        let e = Aggregate::of_request(
            AggregateKind::IncidentsByDefinition,
            &json!({"filter": {"errorHashCode": "x"}}),
        )
        .unwrap_err();
        assert!(e.to_string().contains("filter.errorHashCode"), "{e}");
        let e = page(
            &Aggregate::DefinitionInstances,
            vec![],
            &json!({"page": {"after": "abc"}}),
        )
        .unwrap_err();
        assert!(e.to_string().contains("page.after"), "{e}");
    }
}
