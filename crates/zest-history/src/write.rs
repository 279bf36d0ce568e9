//! Writing a batch's [`Changes`] in one transaction, with the partition's export position:
//! both or neither survive a crash, so the exporter resumes exactly after what is stored.
//! Each table has one prepared upsert; a field a record did not know (`None`) keeps its stored
//! value (`COALESCE(excluded.col, col)`).

use rusqlite::types::Value;
use rusqlite::{params, Transaction};

use crate::project::{Changes, Element, Incident, Instance, Job, UserTask};

type Result<T> = rusqlite::Result<T>;

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, Into::into)
}

fn text(v: &Option<String>) -> Value {
    v.clone().map_or(Value::Null, Value::Text)
}

/// `INSERT INTO table (key, cols...) VALUES (...) ON CONFLICT(key) DO UPDATE SET col =
/// COALESCE(excluded.col, col), ...`
fn upsert_sql(table: &str, columns: &[&str]) -> String {
    let names = columns.join(", ");
    let marks: Vec<String> = (1..=columns.len() + 1).map(|i| format!("?{i}")).collect();
    let sets: Vec<String> = columns
        .iter()
        .map(|c| format!("{c} = COALESCE(excluded.{c}, {c})"))
        .collect();
    format!(
        "INSERT INTO {table} (key, {names}) VALUES ({}) ON CONFLICT(key) DO UPDATE SET {}",
        marks.join(", "),
        sets.join(", ")
    )
}

fn upsert(
    tx: &Transaction,
    table: &str,
    columns: &[&str],
    key: i64,
    values: Vec<Value>,
) -> Result<()> {
    let sql = upsert_sql(table, columns);
    let mut stmt = tx.prepare_cached(&sql)?;
    let mut all = Vec::with_capacity(values.len() + 1);
    all.push(Value::Integer(key));
    all.extend(values);
    stmt.execute(rusqlite::params_from_iter(all))?;
    Ok(())
}

const INSTANCE: &[&str] = &[
    "partition_id",
    "process_definition_key",
    "bpmn_process_id",
    "version",
    "tenant_id",
    "state",
    "start_date",
    "end_date",
    "parent_process_instance_key",
    "parent_element_instance_key",
];

fn instance(tx: &Transaction, key: i64, r: &Instance) -> Result<()> {
    let values = vec![
        opt(r.partition_id.map(i64::from)),
        opt(r.process_definition_key),
        text(&r.bpmn_process_id),
        opt(r.version),
        text(&r.tenant_id),
        opt(r.state.map(str::to_string)),
        opt(r.start_date),
        opt(r.end_date),
        opt(r.parent_process_instance_key),
        opt(r.parent_element_instance_key),
    ];
    upsert(tx, "process_instance", INSTANCE, key, values)
}

const ELEMENT: &[&str] = &[
    "process_instance_key",
    "process_definition_key",
    "bpmn_process_id",
    "element_id",
    "element_type",
    "state",
    "flow_scope_key",
    "start_date",
    "end_date",
    "tenant_id",
];

fn element(tx: &Transaction, key: i64, r: &Element) -> Result<()> {
    let values = vec![
        opt(r.process_instance_key),
        opt(r.process_definition_key),
        text(&r.bpmn_process_id),
        text(&r.element_id),
        text(&r.element_type),
        opt(r.state.map(str::to_string)),
        opt(r.flow_scope_key),
        opt(r.start_date),
        opt(r.end_date),
        text(&r.tenant_id),
    ];
    upsert(tx, "element_instance", ELEMENT, key, values)
}

const INCIDENT: &[&str] = &[
    "process_instance_key",
    "process_definition_key",
    "bpmn_process_id",
    "element_id",
    "element_instance_key",
    "job_key",
    "error_type",
    "error_message",
    "error_message_hash",
    "state",
    "creation_time",
    "tenant_id",
];

fn incident(tx: &Transaction, key: i64, r: &Incident) -> Result<()> {
    let values = vec![
        opt(r.process_instance_key),
        opt(r.process_definition_key),
        text(&r.bpmn_process_id),
        text(&r.element_id),
        opt(r.element_instance_key),
        opt(r.job_key),
        text(&r.error_type),
        text(&r.error_message),
        opt(r.error_message_hash),
        opt(r.state.map(str::to_string)),
        opt(r.creation_time),
        text(&r.tenant_id),
    ];
    upsert(tx, "incident", INCIDENT, key, values)
}

const JOB: &[&str] = &[
    "job_type",
    "worker",
    "state",
    "kind",
    "listener_event_type",
    "retries",
    "deadline",
    "end_time",
    "error_message",
    "error_code",
    "has_failed_with_retries_left",
    "custom_headers",
    "element_id",
    "element_instance_key",
    "process_instance_key",
    "process_definition_key",
    "bpmn_process_id",
    "tenant_id",
];

fn job(tx: &Transaction, key: i64, r: &Job) -> Result<()> {
    let values = vec![
        text(&r.job_type),
        text(&r.worker),
        opt(r.state.map(str::to_string)),
        text(&r.kind),
        text(&r.listener_event_type),
        opt(r.retries),
        opt(r.deadline),
        opt(r.end_time),
        text(&r.error_message),
        text(&r.error_code),
        opt(r.has_failed_with_retries_left),
        text(&r.custom_headers),
        text(&r.element_id),
        opt(r.element_instance_key),
        opt(r.process_instance_key),
        opt(r.process_definition_key),
        text(&r.bpmn_process_id),
        text(&r.tenant_id),
    ];
    upsert(tx, "job", JOB, key, values)
}

const USER_TASK: &[&str] = &[
    "state",
    "assignee",
    "candidate_groups",
    "candidate_users",
    "due_date",
    "follow_up_date",
    "creation_date",
    "completion_date",
    "priority",
    "form_key",
    "external_form_reference",
    "custom_headers",
    "element_id",
    "element_instance_key",
    "process_instance_key",
    "process_definition_key",
    "process_definition_version",
    "bpmn_process_id",
    "tenant_id",
];

fn user_task(tx: &Transaction, key: i64, r: &UserTask) -> Result<()> {
    let values = vec![
        opt(r.state.map(str::to_string)),
        text(&r.assignee),
        text(&r.candidate_groups),
        text(&r.candidate_users),
        text(&r.due_date),
        text(&r.follow_up_date),
        opt(r.creation_date),
        opt(r.completion_date),
        opt(r.priority),
        opt(r.form_key),
        text(&r.external_form_reference),
        text(&r.custom_headers),
        text(&r.element_id),
        opt(r.element_instance_key),
        opt(r.process_instance_key),
        opt(r.process_definition_key),
        opt(r.process_definition_version),
        text(&r.bpmn_process_id),
        text(&r.tenant_id),
    ];
    upsert(tx, "user_task", USER_TASK, key, values)
}

fn definitions(tx: &Transaction, changes: &Changes) -> Result<()> {
    for d in &changes.definitions {
        tx.prepare_cached(
            "INSERT INTO process_definition (key, bpmn_process_id, name, version, version_tag, \
             resource_name, tenant_id, has_start_form, bpmn_xml) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(key) DO NOTHING",
        )?
        .execute(params![
            d.key,
            d.bpmn_process_id,
            d.name,
            d.version,
            d.version_tag,
            d.resource_name,
            d.tenant_id,
            d.has_start_form,
            d.xml
        ])?;
        let mut names = tx.prepare_cached(
            "INSERT INTO element_name (process_definition_key, element_id, name) \
             VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        )?;
        for (id, name) in &d.element_names {
            names.execute(params![d.key, id, name])?;
        }
    }
    Ok(())
}

fn flows_and_variables(tx: &Transaction, changes: &Changes) -> Result<()> {
    let mut flows = tx.prepare_cached(
        "INSERT INTO sequence_flow (process_instance_key, flow_id, process_definition_key, \
         bpmn_process_id, tenant_id) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
    )?;
    for f in &changes.flows {
        flows.execute(params![
            f.process_instance_key,
            f.flow_id,
            f.process_definition_key,
            f.bpmn_process_id,
            f.tenant_id
        ])?;
    }
    let mut vars = tx.prepare_cached(
        "INSERT INTO variable (key, name, value, full_value, is_truncated, scope_key, \
         process_instance_key, process_definition_key, bpmn_process_id, tenant_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT(key) DO UPDATE SET \
         value = excluded.value, full_value = excluded.full_value, \
         is_truncated = excluded.is_truncated",
    )?;
    for (key, v) in &changes.variables {
        vars.execute(params![
            key,
            v.name,
            v.value,
            v.full_value,
            v.is_truncated,
            v.scope_key,
            v.process_instance_key,
            v.process_definition_key,
            v.bpmn_process_id,
            v.tenant_id
        ])?;
    }
    Ok(())
}

fn incident_links(tx: &Transaction, changes: &Changes) -> Result<()> {
    let mut counts = tx.prepare_cached(
        "UPDATE process_instance SET incidents = MAX(0, incidents + ?2) WHERE key = ?1",
    )?;
    for (key, delta) in &changes.incident_counts {
        counts.execute(params![key, delta])?;
    }
    let mut links = tx.prepare_cached(
        "UPDATE element_instance SET incident_key = NULLIF(?2, 0) WHERE key = ?1",
    )?;
    for (key, incident) in &changes.element_incidents {
        links.execute(params![key, incident])?;
    }
    Ok(())
}

/// The root process instance of every row written without one: a process instance's is its
/// parent's root (or itself), every other row's is its process instance's.
fn roots(tx: &Transaction) -> Result<()> {
    tx.execute_batch(
        "UPDATE process_instance SET root_process_instance_key = COALESCE(\
             (SELECT p.root_process_instance_key FROM process_instance p \
              WHERE p.key = process_instance.parent_process_instance_key), key) \
         WHERE root_process_instance_key IS NULL;",
    )?;
    for table in [
        "element_instance",
        "variable",
        "incident",
        "job",
        "user_task",
        "sequence_flow",
    ] {
        tx.prepare_cached(&format!(
            "UPDATE {table} SET root_process_instance_key = COALESCE(\
                 (SELECT p.root_process_instance_key FROM process_instance p \
                  WHERE p.key = {table}.process_instance_key), process_instance_key) \
             WHERE root_process_instance_key IS NULL"
        ))?
        .execute([])?;
    }
    Ok(())
}

/// Writes `changes` and the partition's new position in `tx` (not committed here).
pub fn write(
    tx: &Transaction,
    partition: u32,
    changes: &Changes,
    position: u64,
    next_index: u64,
) -> Result<()> {
    definitions(tx, changes)?;
    for (key, r) in &changes.instances {
        instance(tx, *key, r)?;
    }
    for (key, r) in &changes.elements {
        element(tx, *key, r)?;
    }
    for (key, r) in &changes.incidents {
        incident(tx, *key, r)?;
    }
    for (key, r) in &changes.jobs {
        job(tx, *key, r)?;
    }
    for (key, r) in &changes.user_tasks {
        user_task(tx, *key, r)?;
    }
    crate::batch::write(tx, &changes.batch_operations)?;
    flows_and_variables(tx, changes)?;
    incident_links(tx, changes)?;
    roots(tx)?;
    tx.prepare_cached(
        "INSERT INTO export_position (partition_id, position, next_index) VALUES (?1, ?2, ?3) \
         ON CONFLICT(partition_id) DO UPDATE SET position = excluded.position, \
         next_index = excluded.next_index",
    )?
    .execute(params![partition, position as i64, next_index as i64])?;
    Ok(())
}
