//! What colours a diagram and draws an instance's path: element instance counts per element,
//! the sequence flows taken, the call hierarchy; and a definition's XML.

use crate::db::params;
use crate::db::Conn;
use serde_json::{json, Value};

use crate::filter::Conditions;
use crate::resources::PROCESS_INSTANCES;
use crate::search::SearchError;

/// Whose element instances are counted.
#[derive(Clone, Copy, Debug)]
pub enum Of {
    /// The instances of a process definition (filtered by the request's process instance
    /// filter).
    Definition(i64),
    /// One process instance.
    Instance(i64),
}

pub fn process_xml(conn: &Conn, key: i64) -> Result<Option<String>, SearchError> {
    Ok(conn.query_opt(
        "SELECT bpmn_xml FROM process_definition WHERE key = ?1",
        params![key],
        |r| r.get(0),
    )?)
}

/// `{items: [{elementId, active, canceled, incidents, completed}]}`: an element instance
/// with an open incident counts under `incidents`, not `active`.
/// With `partitions`, only the instances of those (see [`crate::search::PARTITION_OF_KEY`]).
pub fn element_statistics(
    conn: &Conn,
    of: Of,
    filter: &Value,
    partitions: Option<&[u32]>,
) -> Result<Value, SearchError> {
    // the unfiltered statistics of a definition: its counters, kept as history is written
    let unfiltered = filter.is_null() || filter.as_object().is_some_and(|o| o.is_empty());
    if let (Of::Definition(key), true) = (of, unfiltered) {
        return Ok(crate::counts::statistics(conn, key, partitions)?);
    }
    let mut c = Conditions::default();
    c.partitions(crate::search::PARTITION_OF_KEY, partitions);
    match of {
        Of::Definition(key) => {
            let mark = c.bind(crate::db::Cell::Integer(key));
            c.sql.push(format!("t.process_definition_key = {mark}"));
            c.compile(filter, PROCESS_INSTANCES.fields, PROCESS_INSTANCES.special)?;
        }
        Of::Instance(key) => {
            let mark = c.bind(crate::db::Cell::Integer(key));
            c.sql.push(format!("t.key = {mark}"));
        }
    }
    let sql = format!(
        "SELECT e.element_id, \
           SUM(CASE WHEN e.state = 'ACTIVE' AND e.incident_key IS NULL THEN 1 ELSE 0 END), \
           SUM(CASE WHEN e.state = 'TERMINATED' THEN 1 ELSE 0 END), \
           SUM(CASE WHEN e.state = 'ACTIVE' AND e.incident_key IS NOT NULL THEN 1 ELSE 0 END), \
           SUM(CASE WHEN e.state = 'COMPLETED' THEN 1 ELSE 0 END) \
         FROM {} JOIN element_instance e ON e.process_instance_key = t.key{} \
         GROUP BY e.element_id ORDER BY e.element_id",
        PROCESS_INSTANCES.from,
        c.where_clause()
    );
    let items = conn.query(&sql, &crate::db::cells(&c.params), |r| {
        Ok(json!({
            "elementId": r.get::<_, String>(0)?,
            "active": r.get::<_, i64>(1)?,
            "canceled": r.get::<_, i64>(2)?,
            "incidents": r.get::<_, i64>(3)?,
            "completed": r.get::<_, i64>(4)?,
        }))
    })?;
    Ok(json!({ "items": items }))
}

/// The element statistics of several partitions (each answered by
/// [`element_statistics`] for its own): the counts of each element summed, in element order.
pub fn merge_element_statistics(parts: &[Value]) -> Value {
    let mut sums: std::collections::BTreeMap<String, [i64; 4]> = Default::default();
    for part in parts {
        for item in part["items"].as_array().into_iter().flatten() {
            let id = item["elementId"].as_str().unwrap_or_default().to_string();
            let sum = sums.entry(id).or_default();
            for (i, name) in ["active", "canceled", "incidents", "completed"]
                .iter()
                .enumerate()
            {
                sum[i] += item[*name].as_i64().unwrap_or(0);
            }
        }
    }
    let items: Vec<Value> = sums
        .into_iter()
        .map(|(id, [active, canceled, incidents, completed])| {
            json!({
                "elementId": id,
                "active": active,
                "canceled": canceled,
                "incidents": incidents,
                "completed": completed,
            })
        })
        .collect();
    json!({ "items": items })
}

pub fn sequence_flows(conn: &Conn, process_instance: i64) -> Result<Value, SearchError> {
    let items = conn.query(
        "SELECT flow_id, process_definition_key, bpmn_process_id, tenant_id \
         FROM sequence_flow WHERE process_instance_key = ?1 ORDER BY flow_id",
        params![process_instance],
        |r| {
            let flow: String = r.get(0)?;
            Ok(json!({
                "sequenceFlowId": flow,
                "processInstanceKey": process_instance.to_string(),
                "processDefinitionKey": r.get::<_, Option<i64>>(1)?.unwrap_or(0).to_string(),
                "processDefinitionId": r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                "elementId": flow,
                "tenantId": r.get::<_, Option<String>>(3)?.unwrap_or_default(),
            }))
        },
    )?;
    Ok(json!({ "items": items }))
}

/// One link of a call hierarchy: the instance's entry and the key of the instance that called
/// it (None for a root); `None` when history lacks the instance. A caller may live on another
/// partition (and another node): [`call_hierarchy`] follows the chain within one store.
pub fn call_hierarchy_link(
    conn: &Conn,
    process_instance: i64,
) -> Result<Option<(Value, Option<i64>)>, SearchError> {
    let row = conn.query_opt(
        "SELECT t.parent_process_instance_key, t.process_definition_key, \
                COALESCE(d.name, t.bpmn_process_id) \
         FROM process_instance t LEFT JOIN process_definition d ON d.key = t.process_definition_key \
         WHERE t.key = ?1",
        params![process_instance],
        |r| Ok(r.clone()),
    )?;
    let Some(r) = row else {
        return Ok(None);
    };
    let parent: Option<i64> = r.get(0)?;
    let entry = json!({
        "processInstanceKey": process_instance.to_string(),
        "processDefinitionKey": r.get::<_, Option<i64>>(1)?.unwrap_or(0).to_string(),
        "processDefinitionName": r.get::<_, Option<String>>(2)?.unwrap_or_default(),
    });
    Ok(Some((entry, parent.filter(|p| *p > 0))))
}

/// The instance and the instances that called it, root first; `None` when history lacks it.
pub fn call_hierarchy(conn: &Conn, process_instance: i64) -> Result<Option<Value>, SearchError> {
    let mut chain = Vec::new();
    let mut key = process_instance;
    // a chain of calls is at most as deep as the engine lets calls nest; the bound only
    // guards against a cycle in damaged data
    for _ in 0..1000 {
        let Some((entry, parent)) = call_hierarchy_link(conn, key)? else {
            break;
        };
        chain.push(entry);
        match parent {
            Some(p) => key = p,
            None => break,
        }
    }
    if chain.is_empty() {
        return Ok(None);
    }
    chain.reverse();
    Ok(Some(Value::Array(chain)))
}
