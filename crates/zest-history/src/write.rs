//! Writing a batch's [`Changes`] in one transaction, with the partition's export position:
//! both or neither survive a crash, so the exporter resumes exactly after what is stored.
//! Each table has one prepared upsert; a field a record did not know (`None`) keeps its stored
//! value (`COALESCE(excluded.col, col)`). Every row gets its root process instance as it is
//! inserted (a subquery on its process instance's row, or its parent's for a process
//! instance), so no row is written twice.

use std::sync::OnceLock;

use rusqlite::{params, ToSql, Transaction};

use crate::project::{Changes, Element, Incident, Instance, Job, UserTask};

type Result<T> = rusqlite::Result<T>;

/// The root process instance of a row whose process instance is parameter `?{pi}`: that
/// instance's root, or the instance itself when it is not (yet) in history.
fn root_of(pi: &str) -> String {
    format!(
        "COALESCE((SELECT p.root_process_instance_key FROM process_instance p \
         WHERE p.key = {pi}), {pi})"
    )
}

/// `INSERT INTO table (key, cols..., root_process_instance_key) VALUES (..., root) ON
/// CONFLICT(key) DO UPDATE SET col = COALESCE(excluded.col, col), ...`: the root is set by
/// the first write that knows it (`root`, an expression of the parameters) and kept.
fn upsert_sql(table: &str, columns: &[&str], root: &str) -> String {
    let names = columns.join(", ");
    let marks: Vec<String> = (1..=columns.len() + 1).map(|i| format!("?{i}")).collect();
    let mut sets: Vec<String> = columns
        .iter()
        .map(|c| format!("{c} = COALESCE(excluded.{c}, {c})"))
        .collect();
    sets.push(
        "root_process_instance_key = \
         COALESCE(root_process_instance_key, excluded.root_process_instance_key)"
            .into(),
    );
    format!(
        "INSERT INTO {table} (key, {names}, root_process_instance_key) VALUES ({}, {root}) \
         ON CONFLICT(key) DO UPDATE SET {}",
        marks.join(", "),
        sets.join(", ")
    )
}

/// The parameter of `column` in [`upsert_sql`]'s statement of `columns` (`?1` is the key).
fn param(columns: &[&str], column: &str) -> String {
    let i = columns.iter().position(|c| *c == column).unwrap_or(0);
    format!("?{}", i + 2)
}

/// A table's upsert, its SQL built once.
struct Upsert {
    table: &'static str,
    columns: &'static [&'static str],
    sql: OnceLock<String>,
}

impl Upsert {
    const fn new(table: &'static str, columns: &'static [&'static str]) -> Upsert {
        Upsert {
            table,
            columns,
            sql: OnceLock::new(),
        }
    }

    fn sql(&self) -> &str {
        self.sql.get_or_init(|| {
            let root = if self.table == "process_instance" {
                // a process instance's root is its parent's, or itself
                format!(
                    "COALESCE((SELECT p.root_process_instance_key FROM process_instance p \
                     WHERE p.key = {}), ?1)",
                    param(self.columns, "parent_process_instance_key")
                )
            } else {
                root_of(&param(self.columns, "process_instance_key"))
            };
            upsert_sql(self.table, self.columns, &root)
        })
    }

    /// Writes each of `rows`, its key and one value per column, in order (borrowed from
    /// the row: nothing is copied); a `None` keeps the stored value.
    fn write<'a, R: 'a, const N: usize>(
        &self,
        tx: &Transaction,
        rows: impl ExactSizeIterator<Item = (&'a i64, &'a R)>,
        values: impl for<'r> Fn(&'r i64, &'r R) -> [&'r dyn ToSql; N],
    ) -> Result<()> {
        if rows.len() == 0 {
            return Ok(());
        }
        debug_assert_eq!(N, self.columns.len() + 1);
        let mut stmt = tx.prepare_cached(self.sql())?;
        for (key, row) in rows {
            stmt.execute(&values(key, row)[..])?;
        }
        Ok(())
    }
}

static INSTANCE: Upsert = Upsert::new(
    "process_instance",
    &[
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
    ],
);

fn instance_values<'r>(key: &'r i64, r: &'r Instance) -> [&'r dyn ToSql; 11] {
    [
        key,
        &r.partition_id,
        &r.process_definition_key,
        &r.bpmn_process_id,
        &r.version,
        &r.tenant_id,
        &r.state,
        &r.start_date,
        &r.end_date,
        &r.parent_process_instance_key,
        &r.parent_element_instance_key,
    ]
}

static ELEMENT: Upsert = Upsert::new(
    "element_instance",
    &[
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
    ],
);

fn element_values<'r>(key: &'r i64, r: &'r Element) -> [&'r dyn ToSql; 11] {
    [
        key,
        &r.process_instance_key,
        &r.process_definition_key,
        &r.bpmn_process_id,
        &r.element_id,
        &r.element_type,
        &r.state,
        &r.flow_scope_key,
        &r.start_date,
        &r.end_date,
        &r.tenant_id,
    ]
}

static INCIDENT: Upsert = Upsert::new(
    "incident",
    &[
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
    ],
);

fn incident_values<'r>(key: &'r i64, r: &'r Incident) -> [&'r dyn ToSql; 13] {
    [
        key,
        &r.process_instance_key,
        &r.process_definition_key,
        &r.bpmn_process_id,
        &r.element_id,
        &r.element_instance_key,
        &r.job_key,
        &r.error_type,
        &r.error_message,
        &r.error_message_hash,
        &r.state,
        &r.creation_time,
        &r.tenant_id,
    ]
}

static JOB: Upsert = Upsert::new(
    "job",
    &[
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
    ],
);

fn job_values<'r>(key: &'r i64, r: &'r Job) -> [&'r dyn ToSql; 19] {
    [
        key,
        &r.job_type,
        &r.worker,
        &r.state,
        &r.kind,
        &r.listener_event_type,
        &r.retries,
        &r.deadline,
        &r.end_time,
        &r.error_message,
        &r.error_code,
        &r.has_failed_with_retries_left,
        &r.custom_headers,
        &r.element_id,
        &r.element_instance_key,
        &r.process_instance_key,
        &r.process_definition_key,
        &r.bpmn_process_id,
        &r.tenant_id,
    ]
}

static USER_TASK: Upsert = Upsert::new(
    "user_task",
    &[
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
    ],
);

fn user_task_values<'r>(key: &'r i64, r: &'r UserTask) -> [&'r dyn ToSql; 20] {
    [
        key,
        &r.state,
        &r.assignee,
        &r.candidate_groups,
        &r.candidate_users,
        &r.due_date,
        &r.follow_up_date,
        &r.creation_date,
        &r.completion_date,
        &r.priority,
        &r.form_key,
        &r.external_form_reference,
        &r.custom_headers,
        &r.element_id,
        &r.element_instance_key,
        &r.process_instance_key,
        &r.process_definition_key,
        &r.process_definition_version,
        &r.bpmn_process_id,
        &r.tenant_id,
    ]
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
    static FLOW: OnceLock<String> = OnceLock::new();
    let mut flows = tx.prepare_cached(FLOW.get_or_init(|| {
        format!(
            "INSERT INTO sequence_flow (process_instance_key, flow_id, process_definition_key, \
             bpmn_process_id, tenant_id, root_process_instance_key) \
             VALUES (?1, ?2, ?3, ?4, ?5, {}) ON CONFLICT DO NOTHING",
            root_of("?1")
        )
    }))?;
    for f in &changes.flows {
        flows.execute(params![
            f.process_instance_key,
            f.flow_id,
            f.process_definition_key,
            f.bpmn_process_id,
            f.tenant_id
        ])?;
    }
    static VARIABLE: OnceLock<String> = OnceLock::new();
    let mut vars = tx.prepare_cached(VARIABLE.get_or_init(|| {
        format!(
            "INSERT INTO variable (key, name, value, full_value, is_truncated, scope_key, \
             process_instance_key, process_definition_key, bpmn_process_id, tenant_id, \
             root_process_instance_key) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, {}) ON CONFLICT(key) DO UPDATE SET \
             value = excluded.value, full_value = excluded.full_value, \
             is_truncated = excluded.is_truncated",
            root_of("?7")
        )
    }))?;
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

/// Writes `changes` and the partition's new position in `tx` (not committed here).
pub fn write(
    tx: &Transaction,
    partition: u32,
    changes: &Changes,
    position: u64,
    next_index: u64,
) -> Result<()> {
    definitions(tx, changes)?;
    INSTANCE.write(tx, changes.instances.iter(), instance_values)?;
    ELEMENT.write(tx, changes.elements.iter(), element_values)?;
    INCIDENT.write(tx, changes.incidents.iter(), incident_values)?;
    JOB.write(tx, changes.jobs.iter(), job_values)?;
    USER_TASK.write(tx, changes.user_tasks.iter(), user_task_values)?;
    crate::batch::write(tx, &changes.batch_operations)?;
    flows_and_variables(tx, changes)?;
    changes.decisions.write(tx)?;
    changes.messages.write(tx)?;
    incident_links(tx, changes)?;
    tx.prepare_cached(
        "INSERT INTO export_position (partition_id, position, next_index) VALUES (?1, ?2, ?3) \
         ON CONFLICT(partition_id) DO UPDATE SET position = excluded.position, \
         next_index = excluded.next_index",
    )?
    .execute(params![partition, position as i64, next_index as i64])?;
    Ok(())
}
