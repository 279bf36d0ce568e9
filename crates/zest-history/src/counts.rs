//! Counts kept as history is written instead of counted at each request. The process instances
//! per definition, state and partition (`instance_count`) answer the exact `totalItems` of the
//! searches Operate makes most (by process and state, or none) without counting a million rows.
//! The element statistics of a process definition (the counts that colour Operate's diagram): a row per (definition,
//! element, partition) in `element_count` with its element instances that are active (with or
//! without an incident), active with an incident, completed and canceled. At 1,000,000
//! instances the count over their element instances took seconds; the counters answer in a
//! few rows. The jobs per type, state, tenant and partition (`job_count`) answer the totals of
//! the job searches by type and state (a worker dashboard's, c8ctl's).
//!
//! The counts move with the records, which the store takes in exactly once (the position
//! travels with the rows): an element activated +1 active; completed -1 active +1 completed;
//! terminated -1 active +1 canceled; an incident created on an element +1 incidents, resolved
//! -1 (the engine resolves an element's incident before it terminates it). A migrated element
//! moves its counts from its stored definition and element to its new ones (read from its row
//! before and after the upsert); a batch's jobs leave their stored rows' counts and join those
//! of the rows the upsert leaves (read once before it); retention and history deletion
//! subtract the rows they remove. Only the unfiltered statistics of a definition read the
//! counters; a request with a filter counts rows (`stats.rs`).

use std::collections::BTreeMap;

use serde_json::{json, Value};
use zest_protocol::{BpmnElementType, IncidentRecord, Intent, ProcessInstanceRecord};

use crate::db::{cells, params, Cell, Conn, Result};
use crate::filter::Conditions;

/// The counters a batch moves, per (definition, element, partition): active, incidents,
/// completed, canceled.
#[derive(Debug, Default)]
pub struct ElementCounts {
    deltas: BTreeMap<(i64, String, u32), [i64; 4]>,
    /// Element instances migrated in the batch (their counts move with their rows).
    migrated: Vec<i64>,
    /// Process instances per (definition, process id, state, partition).
    instances: BTreeMap<(i64, String, &'static str, u32), i64>,
    /// Process instances migrated in the batch.
    migrated_instances: Vec<i64>,
}

const ACTIVE: usize = 0;
const INCIDENTS: usize = 1;
const COMPLETED: usize = 2;
const CANCELED: usize = 3;

impl ElementCounts {
    fn add(&mut self, definition: i64, element: &str, partition: u32, what: usize, by: i64) {
        let entry = self
            .deltas
            .entry((definition, element.to_string(), partition))
            .or_default();
        entry[what] += by;
    }

    /// An element instance's lifecycle event (its partition: its key's, as the rows' is).
    pub fn element(&mut self, key: i64, intent: Intent, e: &ProcessInstanceRecord) {
        let partition = (key >> 51) as u32;
        if e.bpmn_element_type == BpmnElementType::Process {
            return self.instance(key, intent, partition, e);
        }
        let (def, id) = (e.process_definition_key, e.element_id.as_str());
        match intent {
            Intent::ElementActivating => self.add(def, id, partition, ACTIVE, 1),
            Intent::ElementCompleted => {
                self.add(def, id, partition, ACTIVE, -1);
                self.add(def, id, partition, COMPLETED, 1);
            }
            Intent::ElementTerminated => {
                self.add(def, id, partition, ACTIVE, -1);
                self.add(def, id, partition, CANCELED, 1);
            }
            Intent::ElementMigrated => self.migrated.push(key),
            _ => {}
        }
    }

    /// A process instance's lifecycle event.
    fn instance(&mut self, key: i64, intent: Intent, partition: u32, e: &ProcessInstanceRecord) {
        let mut add = |state: &'static str, by: i64| {
            let id = (
                e.process_definition_key,
                e.bpmn_process_id.clone(),
                state,
                partition,
            );
            *self.instances.entry(id).or_default() += by;
        };
        match intent {
            Intent::ElementActivating => add("ACTIVE", 1),
            Intent::ElementCompleted => {
                add("ACTIVE", -1);
                add("COMPLETED", 1);
            }
            Intent::ElementTerminated => {
                add("ACTIVE", -1);
                add("TERMINATED", 1);
            }
            Intent::ElementMigrated => self.migrated_instances.push(key),
            _ => {}
        }
    }

    /// An incident's event: counted on its element (not on a process instance's own).
    pub fn incident(&mut self, intent: Intent, i: &IncidentRecord) {
        if i.element_instance_key == i.process_instance_key || i.element_instance_key <= 0 {
            return;
        }
        let partition = (i.element_instance_key >> 51) as u32;
        let by = match intent {
            Intent::Created => 1,
            Intent::Resolved => -1,
            _ => return,
        };
        self.add(
            i.process_definition_key,
            &i.element_id,
            partition,
            INCIDENTS,
            by,
        );
    }

    /// Before the batch's element rows are written: the migrated elements' counts leave
    /// their stored definition and element.
    pub fn before_rows(&self, tx: &Conn) -> Result<()> {
        for key in &self.migrated {
            move_rows(tx, -1, "e.key = ?1", *key)?;
        }
        for key in &self.migrated_instances {
            move_instances(tx, -1, "t.key = ?1", *key)?;
        }
        Ok(())
    }

    /// After the batch's element rows are written: the migrated elements' counts join their
    /// new definition and element, and the batch's deltas are added.
    pub fn after_rows(&self, tx: &Conn) -> Result<()> {
        for key in &self.migrated {
            move_rows(tx, 1, "e.key = ?1", *key)?;
        }
        for key in &self.migrated_instances {
            move_instances(tx, 1, "t.key = ?1", *key)?;
        }
        for ((def, id, state, partition), n) in &self.instances {
            tx.execute(
                "INSERT INTO instance_count (process_definition_key, bpmn_process_id, state, \
                 partition_id, n) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT \
                 (process_definition_key, state, partition_id) DO UPDATE SET \
                 n = instance_count.n + excluded.n",
                params![def, id, state, partition, n],
            )?;
        }
        for ((def, element, partition), [active, incidents, completed, canceled]) in &self.deltas {
            tx.execute(
                &format!("{INSERT} VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) {ADD}"),
                params![def, element, partition, active, incidents, completed, canceled],
            )?;
        }
        Ok(())
    }
}

const INSERT: &str = "INSERT INTO element_count (process_definition_key, element_id, \
                      partition_id, active, incidents, completed, canceled)";
const ADD: &str = "ON CONFLICT (process_definition_key, element_id, partition_id) DO UPDATE SET \
                   active = element_count.active + excluded.active, \
                   incidents = element_count.incidents + excluded.incidents, \
                   completed = element_count.completed + excluded.completed, \
                   canceled = element_count.canceled + excluded.canceled";

/// Adds (`sign` 1) or subtracts (-1) the counts of the element rows `condition` selects
/// (on `e`, with its one parameter `key`), as they are stored.
fn move_rows(tx: &Conn, sign: i64, condition: &str, key: i64) -> Result<()> {
    tx.execute(
        &format!(
            "{INSERT} SELECT e.process_definition_key, e.element_id, e.key >> 51, \
             ?2 * SUM(CASE WHEN e.state = 'ACTIVE' THEN 1 ELSE 0 END), \
             ?2 * SUM(CASE WHEN e.state = 'ACTIVE' AND e.incident_key IS NOT NULL \
                      THEN 1 ELSE 0 END), \
             ?2 * SUM(CASE WHEN e.state = 'COMPLETED' THEN 1 ELSE 0 END), \
             ?2 * SUM(CASE WHEN e.state = 'TERMINATED' THEN 1 ELSE 0 END) \
             FROM element_instance e WHERE {condition} \
             AND e.process_definition_key IS NOT NULL AND e.element_id IS NOT NULL \
             GROUP BY e.process_definition_key, e.element_id, e.key >> 51 {ADD}"
        ),
        params![key, sign],
    )?;
    Ok(())
}

/// Adds (`sign` 1) or subtracts (-1) the process instance rows `condition` selects (on `t`,
/// with its one parameter `key`), as they are stored.
fn move_instances(tx: &Conn, sign: i64, condition: &str, key: i64) -> Result<()> {
    tx.execute(
        &format!(
            "INSERT INTO instance_count (process_definition_key, bpmn_process_id, state, \
             partition_id, n) SELECT t.process_definition_key, COALESCE(MIN(t.bpmn_process_id), ''), \
             t.state, t.key >> 51, ?2 * COUNT(*) FROM process_instance t WHERE {condition} \
             AND t.process_definition_key IS NOT NULL AND t.state IS NOT NULL \
             GROUP BY t.process_definition_key, t.state, t.key >> 51 \
             ON CONFLICT (process_definition_key, state, partition_id) DO UPDATE SET \
             n = instance_count.n + excluded.n"
        ),
        params![key, sign],
    )?;
    Ok(())
}

/// Adds (`sign` 1) or subtracts (-1) the job rows `condition` selects (on `j`, with its one
/// parameter `arg`), as they are stored: a column a row does not know counts as ''.
fn move_jobs(tx: &Conn, sign: i64, condition: &str, arg: &dyn crate::db::ToParam) -> Result<()> {
    const GROUP: &str =
        "COALESCE(j.job_type, ''), COALESCE(j.state, ''), COALESCE(j.tenant_id, ''), j.key >> 51";
    tx.execute(
        &format!(
            "INSERT INTO job_count (job_type, state, tenant_id, partition_id, n) \
             SELECT {GROUP}, ?2 * COUNT(*) FROM job j WHERE {condition} GROUP BY {GROUP} \
             ON CONFLICT (job_type, state, tenant_id, partition_id) DO UPDATE SET \
             n = job_count.n + excluded.n"
        ),
        &[arg, &sign],
    )?;
    Ok(())
}

/// A job's counted columns: its type, state and tenant ('' where the row has none).
type JobGroup = (String, String, String);

/// The jobs a batch writes move their counts (`job_count`), before their rows are written:
/// each stored row leaves its (type, state, tenant), and the row the upsert will leave joins
/// its own, which is the batch's value of each column or else the stored one (the jobs'
/// upsert keeps a stored value the batch does not know, `write.rs`). One read of the stored
/// rows and an upsert per group that changes, whatever the records changed (a state, a type a
/// later record brought); a job new to the store subtracts nothing.
pub fn move_batch_jobs(tx: &Conn, jobs: &BTreeMap<i64, crate::project::Job>) -> Result<()> {
    if jobs.is_empty() {
        return Ok(());
    }
    let keys: Vec<String> = jobs.keys().map(i64::to_string).collect();
    let stored: std::collections::HashMap<i64, [Option<String>; 3]> = tx
        .query(
            "SELECT key, job_type, state, tenant_id FROM job \
             WHERE key IN (SELECT CAST(x.value AS BIGINT) FROM json_each(?1) x)",
            params![format!("[{}]", keys.join(","))],
            |r| Ok((r.get(0)?, [r.get(1)?, r.get(2)?, r.get(3)?])),
        )?
        .into_iter()
        .collect();
    let mut deltas: BTreeMap<(JobGroup, i64), i64> = BTreeMap::new();
    for (key, job) in jobs {
        let old = stored.get(key);
        let column = |new: Option<&str>, i: usize| -> String {
            new.or_else(|| old.and_then(|o| o[i].as_deref()))
                .unwrap_or_default()
                .to_string()
        };
        let partition = key >> 51;
        if let Some([t, s, tenant]) = old {
            let group = |c: &Option<String>| c.clone().unwrap_or_default();
            *deltas
                .entry(((group(t), group(s), group(tenant)), partition))
                .or_default() -= 1;
        }
        let group = (
            column(job.job_type.as_deref(), 0),
            column(job.state, 1),
            column(job.tenant_id.as_deref(), 2),
        );
        *deltas.entry((group, partition)).or_default() += 1;
    }
    for (((job_type, state, tenant), partition), n) in deltas {
        if n != 0 {
            tx.execute(
                "INSERT INTO job_count (job_type, state, tenant_id, partition_id, n) \
                 VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (job_type, state, tenant_id, partition_id) DO UPDATE SET \
                 n = job_count.n + excluded.n",
                params![job_type, state, tenant, partition, n],
            )?;
        }
    }
    Ok(())
}

/// Retention: the counts of a root instance's rows (its instances', their elements' and
/// jobs'), before they are removed.
pub fn remove_root(tx: &Conn, root: i64) -> Result<()> {
    move_rows(tx, -1, "e.root_process_instance_key = ?1", root)?;
    move_jobs(tx, -1, "j.root_process_instance_key = ?1", &root)?;
    move_instances(tx, -1, "t.root_process_instance_key = ?1", root)
}

/// History deletion of a child instance: the counts of its own rows, before they are removed.
pub fn remove_instance(tx: &Conn, instance: i64) -> Result<()> {
    move_rows(tx, -1, "e.process_instance_key = ?1", instance)?;
    move_jobs(tx, -1, "j.process_instance_key = ?1", &instance)?;
    move_instances(tx, -1, "t.key = ?1", instance)
}

/// The exact number of process instances a search's `filter` matches, from the counters,
/// when the filter asks only for a process (`processDefinitionId`, `processDefinitionKey`)
/// and a `state`, each one plain value, or nothing (None: the rows must be counted).
pub fn instance_total(
    conn: &Conn,
    filter: Option<&Value>,
    partitions: Option<&[u32]>,
) -> Result<Option<i64>> {
    let Some(fields) = filter_fields(filter) else {
        return Ok(None);
    };
    let mut c = Conditions::default();
    let mut equals = |column: &str, cell: Cell| {
        let mark = c.bind(cell);
        c.sql.push(format!("{column} = {mark}"));
    };
    for (name, value) in fields {
        match (name, value) {
            ("processDefinitionId", Value::String(id)) => {
                equals("bpmn_process_id", Cell::Text(id.clone()))
            }
            ("processDefinitionKey", v) => match key_value(v) {
                Some(k) => equals("process_definition_key", Cell::Integer(k)),
                None => return Ok(None),
            },
            ("state", Value::String(s))
                if ["ACTIVE", "COMPLETED", "TERMINATED"]
                    .contains(&s.to_ascii_uppercase().as_str()) =>
            {
                equals("state", Cell::Text(s.to_ascii_uppercase()))
            }
            _ => return Ok(None),
        }
    }
    sum(conn, "n", "instance_count", c, partitions)
}

/// The exact number of element instances a search's `filter` matches, from the counters,
/// when the filter asks only for a definition's (`processDefinitionKey`) element
/// (`elementId`), each one plain value, and maybe a `state` (None: the rows must be counted).
pub fn element_total(
    conn: &Conn,
    filter: Option<&Value>,
    partitions: Option<&[u32]>,
) -> Result<Option<i64>> {
    let Some(Value::Object(fields)) = filter else {
        return Ok(None);
    };
    let (mut definition, mut element) = (None, None);
    let mut counted = "active + completed + canceled";
    for (name, value) in fields {
        match (name.as_str(), value) {
            ("processDefinitionKey", v) => definition = key_value(v),
            ("elementId", Value::String(id)) => element = Some(id.clone()),
            ("state", Value::String(s)) => {
                counted = match s.to_ascii_uppercase().as_str() {
                    "ACTIVE" => "active",
                    "COMPLETED" => "completed",
                    "TERMINATED" => "canceled",
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        }
    }
    let (Some(definition), Some(element)) = (definition, element) else {
        return Ok(None);
    };
    let mut c = Conditions::key_equals("process_definition_key", definition);
    let mark = c.bind(Cell::Text(element));
    c.sql.push(format!("element_id = {mark}"));
    sum(conn, counted, "element_count", c, partitions)
}

/// The exact number of jobs a search's `filter` matches, from the counters, when the filter
/// asks only for a `type`, a `state` and a `tenantId` (c8ctl sends its tenant with every
/// search), each one plain, non-empty value (or `{"$eq": value}`), or nothing (None: the rows
/// must be counted).
pub fn job_total(
    conn: &Conn,
    filter: Option<&Value>,
    partitions: Option<&[u32]>,
) -> Result<Option<i64>> {
    let Some(fields) = filter_fields(filter) else {
        return Ok(None);
    };
    let mut c = Conditions::default();
    for (name, value) in fields {
        let column = match name {
            "type" => "job_type",
            "state" => "state",
            "tenantId" => "tenant_id",
            _ => return Ok(None),
        };
        let Some(text) = plain(value)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        else {
            return Ok(None);
        };
        // states compare in upper case, as the filter compiler's enums do
        let text = match column {
            "state" => text.to_ascii_uppercase(),
            _ => text.to_string(),
        };
        let mark = c.bind(Cell::Text(text));
        c.sql.push(format!("{column} = {mark}"));
    }
    sum(conn, "n", "job_count", c, partitions)
}

/// The sum of `counted` over the rows of the counters' `table` that `c` selects (of
/// `partitions` only, when given).
fn sum(
    conn: &Conn,
    counted: &str,
    table: &str,
    mut c: Conditions,
    partitions: Option<&[u32]>,
) -> Result<Option<i64>> {
    c.partitions("partition_id", partitions);
    let sql = format!(
        "SELECT CAST(COALESCE(SUM({counted}), 0) AS BIGINT) FROM {table}{}",
        c.where_clause()
    );
    Ok(Some(conn.query_one(&sql, &cells(&c.params), |r| r.get(0))?))
}

/// A search's filter as its (field, value) pairs (no filter: none), or None when it is not a
/// JSON object.
fn filter_fields(filter: Option<&Value>) -> Option<Vec<(&str, &Value)>> {
    match filter {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Object(o)) => Some(o.iter().map(|(k, v)| (k.as_str(), v)).collect()),
        Some(_) => None,
    }
}

/// A filter property's one plain value: the value itself, or the `$eq` of an object that
/// holds nothing else (but the empty `$in` and `$notIn` Camunda's Java client sends beside it).
fn plain(v: &Value) -> Option<&Value> {
    let Value::Object(ops) = v else {
        return Some(v);
    };
    let empty = |op: &str| {
        ops.get(op)
            .is_none_or(|l| l.as_array().is_some_and(Vec::is_empty))
    };
    let others = ops
        .keys()
        .all(|k| ["$eq", "$in", "$notIn"].contains(&k.as_str()));
    ops.get("$eq")
        .filter(|_| others && empty("$in") && empty("$notIn"))
}

/// The element statistics of definition `key` from the counters (of `partitions` only, when
/// given): `{items: [{elementId, active, canceled, incidents, completed}]}`, in element order,
/// the elements that have none left out.
pub fn statistics(conn: &Conn, key: i64, partitions: Option<&[u32]>) -> Result<Value> {
    let mut c = Conditions::key_equals("process_definition_key", key);
    c.partitions("partition_id", partitions);
    let sql = format!(
        "SELECT element_id, CAST(SUM(active - incidents) AS BIGINT), \
         CAST(SUM(canceled) AS BIGINT), CAST(SUM(incidents) AS BIGINT), \
         CAST(SUM(completed) AS BIGINT) FROM element_count{} \
         GROUP BY element_id ORDER BY element_id",
        c.where_clause()
    );
    let rows = conn.query(&sql, &cells(&c.params), |r| {
        Ok((
            r.get::<_, String>(0)?,
            [r.get::<_, i64>(1)?, r.get(2)?, r.get(3)?, r.get(4)?],
        ))
    })?;
    let items: Vec<Value> = rows
        .into_iter()
        .filter(|(_, counts)| counts.iter().any(|c| *c != 0))
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
    Ok(json!({ "items": items }))
}

/// A key given as a number or as its text (the API sends keys as strings).
fn key_value(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}
