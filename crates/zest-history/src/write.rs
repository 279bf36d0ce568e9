//! Writing a batch's [`Changes`] in one transaction, with the partition's export position:
//! both or neither survive a crash, so the exporter resumes exactly after what is stored.
//! Each table has one upsert (up to 16 rows per statement in SQLite, 64 in PostgreSQL); a field
//! a record did not know (`None`) keeps its stored value (`COALESCE(excluded.col, col)`).
//! Every row gets its root process instance as it is inserted (a subquery on its process
//! instance's row, or its parent's for a process instance), so no row is written twice.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::db::{params, Conn, ToParam};

use crate::project::{Changes, Element, Incident, Instance, Job, UserTask, Variable};

type Result<T> = crate::db::Result<T>;

/// The root process instance of a row (parameters): `hint` when the batch knows it
/// ([`Roots`]: no lookup), else the root in history of process instance `of` (the row's
/// instance, or a process instance's parent), else `otherwise` (the instance itself, when
/// the one looked up is not, or not yet, in history).
fn root_of(hint: &str, of: &str, otherwise: &str) -> String {
    format!(
        "COALESCE({hint}, (SELECT p.root_process_instance_key FROM process_instance p \
         WHERE p.key = {of}), {otherwise})"
    )
}

/// The roots of the process instances a batch creates, known without reading the store: a
/// root's is itself, a child's its parent's when the parent is known here too. A row of any
/// of their instances passes its root as a parameter instead of a lookup of its instance's
/// row per row written (30 variables an instance: 9 % of the store's write cost).
struct Roots(HashMap<i64, i64>);

impl Roots {
    fn of(changes: &Changes) -> Roots {
        let parent = |key: &i64| changes.instances.get(key)?.parent_process_instance_key;
        let mut roots = HashMap::with_capacity(changes.instances.len());
        for key in changes.instances.keys() {
            // up the tree while the batch knows each parent (call depth is bounded by the
            // engine; the walk by the batch's instances)
            let (mut at, mut steps) = (*key, 0);
            let root = loop {
                match parent(&at) {
                    Some(p) if p <= 0 => break Some(at),
                    Some(p) if steps < changes.instances.len() => (at, steps) = (p, steps + 1),
                    _ => break None,
                }
            };
            if let Some(root) = root {
                roots.insert(*key, root);
            }
        }
        Roots(roots)
    }

    fn get(&self, process_instance: Option<i64>) -> Option<i64> {
        self.0.get(&process_instance?).copied()
    }
}

/// Rows per statement in PostgreSQL: a batch's rows of a table go in chunks of these sizes,
/// largest first, so each table keeps at most this many statements prepared, and the server
/// gets one round trip per chunk instead of one per row.
pub(crate) const CHUNKS: [usize; 7] = [64, 32, 16, 8, 4, 2, 1];

/// Rows per statement in SQLite: fewer statement steps than a row each (one-task with the
/// typical payload at 200 in flight, quiet 2-core machine: 2,818 and 3,096 PI/s against 2,291
/// with a row per statement, history off 4,256), in a few small sizes, since SQLite keeps every
/// statement it prepared and a statement of 64 rows is a program of thousands of instructions.
const SQLITE_CHUNKS: [usize; 3] = [16, 4, 1];

/// How many of the `left` rows still to write the next statement takes in `tx`'s store (one of
/// [`CHUNKS`]).
pub(crate) fn chunk(tx: &Conn, left: usize) -> usize {
    let sizes: &[usize] = match tx.is_postgres() {
        true => &CHUNKS,
        false => &SQLITE_CHUNKS,
    };
    sizes.iter().copied().find(|n| *n <= left).unwrap_or(1)
}

/// A table's upsert: `INSERT INTO table (key, cols..., root_process_instance_key) VALUES
/// (..., root), ... ON CONFLICT(key) DO UPDATE SET col = COALESCE(excluded.col, table.col),
/// ...` (a field a record did not know keeps its stored value; the `replaced` columns take the
/// new value, NULL too); the root is set by the first write that knows it and kept.
struct Upsert {
    table: &'static str,
    columns: &'static [&'static str],
    replaced: &'static [&'static str],
    /// The statement of each chunk size (`CHUNKS`' order), built once.
    sql: OnceLock<Vec<String>>,
}

impl Upsert {
    const fn new(table: &'static str, columns: &'static [&'static str]) -> Upsert {
        Upsert::replacing(table, columns, &[])
    }

    const fn replacing(
        table: &'static str,
        columns: &'static [&'static str],
        replaced: &'static [&'static str],
    ) -> Upsert {
        Upsert {
            table,
            columns,
            replaced,
            sql: OnceLock::new(),
        }
    }

    /// Parameters per row: its key, one per column, and its root when the batch knows it.
    fn stride(&self) -> usize {
        self.columns.len() + 2
    }

    /// The parameter of `column` in row `row` of a statement (`?1` is the first row's key).
    fn param(&self, row: usize, column: &str) -> String {
        let i = self.columns.iter().position(|c| *c == column).unwrap_or(0);
        format!("?{}", row * self.stride() + i + 2)
    }

    /// Row `row`'s values: its parameters and its root.
    fn values(&self, row: usize) -> String {
        let stride = self.stride();
        let marks: Vec<String> = (1..stride)
            .map(|i| format!("?{}", row * stride + i))
            .collect();
        let hint = format!("?{}", row * stride + stride);
        let root = if self.table == "process_instance" {
            // a process instance's root is its parent's, or itself
            let parent = self.param(row, "parent_process_instance_key");
            root_of(&hint, &parent, &format!("?{}", row * stride + 1))
        } else {
            let pi = self.param(row, "process_instance_key");
            root_of(&hint, &pi, &pi)
        };
        format!("({}, {root})", marks.join(", "))
    }

    fn build(&self, rows: usize) -> String {
        let table = self.table;
        let mut sets: Vec<String> = self
            .columns
            .iter()
            .map(|c| match self.replaced.contains(c) {
                true => format!("{c} = excluded.{c}"),
                false => format!("{c} = COALESCE(excluded.{c}, {table}.{c})"),
            })
            .collect();
        sets.push(format!(
            "root_process_instance_key = \
             COALESCE({table}.root_process_instance_key, excluded.root_process_instance_key)"
        ));
        let values: Vec<String> = (0..rows).map(|r| self.values(r)).collect();
        format!(
            "INSERT INTO {table} (key, {}, root_process_instance_key) VALUES {} \
             ON CONFLICT(key) DO UPDATE SET {}",
            self.columns.join(", "),
            values.join(", "),
            sets.join(", ")
        )
    }

    fn sql(&self, rows: usize) -> &str {
        let all = self
            .sql
            .get_or_init(|| CHUNKS.iter().map(|n| self.build(*n)).collect());
        let i = CHUNKS
            .iter()
            .position(|n| *n == rows)
            .expect("a chunk size");
        &all[i]
    }

    /// Writes each of `rows`, its key and one value per column, in order (borrowed from
    /// the row: nothing is copied), in chunks of [`CHUNKS`]; a `None` keeps the stored value.
    /// `root` gives a row's root when the batch knows it (else the statement looks it up).
    fn write<'a, R: 'a, const N: usize>(
        &self,
        tx: &Conn,
        rows: impl ExactSizeIterator<Item = (&'a i64, &'a R)>,
        values: impl for<'r> Fn(&'r i64, &'r R) -> [&'r dyn ToParam; N],
        root: impl Fn(&i64, &R) -> Option<i64>,
    ) -> Result<()> {
        debug_assert_eq!(N, self.columns.len() + 1);
        let rows: Vec<(&i64, &R)> = rows.collect();
        let roots: Vec<Option<i64>> = rows.iter().map(|(k, r)| root(k, r)).collect();
        let mut at = 0;
        let mut params: Vec<&dyn ToParam> = Vec::with_capacity(CHUNKS[0] * (N + 1));
        while at < rows.len() {
            let chunk = chunk(tx, rows.len() - at);
            params.clear();
            for ((key, row), root) in rows[at..at + chunk].iter().zip(&roots[at..]) {
                params.extend(values(key, row));
                params.push(root);
            }
            tx.execute(self.sql(chunk), &params)?;
            at += chunk;
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

fn instance_values<'r>(key: &'r i64, r: &'r Instance) -> [&'r dyn ToParam; 11] {
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

fn element_values<'r>(key: &'r i64, r: &'r Element) -> [&'r dyn ToParam; 11] {
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

fn incident_values<'r>(key: &'r i64, r: &'r Incident) -> [&'r dyn ToParam; 13] {
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

fn job_values<'r>(key: &'r i64, r: &'r Job) -> [&'r dyn ToParam; 19] {
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

fn user_task_values<'r>(key: &'r i64, r: &'r UserTask) -> [&'r dyn ToParam; 20] {
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

fn definitions(tx: &Conn, changes: &Changes) -> Result<()> {
    for d in &changes.definitions {
        tx.execute(
            "INSERT INTO process_definition (key, bpmn_process_id, name, version, version_tag, \
             resource_name, tenant_id, has_start_form, bpmn_xml) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(key) DO NOTHING",
            params![
                d.key,
                d.bpmn_process_id,
                d.name,
                d.version,
                d.version_tag,
                d.resource_name,
                d.tenant_id,
                d.has_start_form,
                d.xml
            ],
        )?;
        for (id, name) in &d.element_names {
            tx.execute(
                "INSERT INTO element_name (process_definition_key, element_id, name) \
                 VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                params![d.key, id, name],
            )?;
        }
    }
    for f in &changes.forms {
        tx.execute(
            "INSERT INTO form (key, form_id, version, resource_name, tenant_id, deployment_key, \
             form_schema) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(key) DO NOTHING",
            params![
                f.form_key,
                f.form_id,
                f.version,
                f.resource_name,
                f.tenant_id,
                f.deployment_key,
                String::from_utf8_lossy(&f.resource)
            ],
        )?;
    }
    for key in &changes.deleted_forms {
        tx.execute("UPDATE form SET deleted = 1 WHERE key = ?1", params![key])?;
    }
    Ok(())
}

fn flows_and_variables(tx: &Conn, changes: &Changes, roots: &Roots) -> Result<()> {
    static FLOW: OnceLock<String> = OnceLock::new();
    let flows = FLOW.get_or_init(|| {
        format!(
            "INSERT INTO sequence_flow (process_instance_key, flow_id, process_definition_key, \
             bpmn_process_id, tenant_id, root_process_instance_key) \
             VALUES (?1, ?2, ?3, ?4, ?5, {}) ON CONFLICT DO NOTHING",
            root_of("?6", "?1", "?1")
        )
    });
    for f in &changes.flows {
        tx.execute(
            flows,
            params![
                f.process_instance_key,
                f.flow_id,
                f.process_definition_key,
                f.bpmn_process_id,
                f.tenant_id,
                roots.get(Some(f.process_instance_key))
            ],
        )?;
    }
    VARIABLE.write(tx, changes.variables.iter(), variable_values, |_, v| {
        roots.get(Some(v.process_instance_key))
    })?;
    crate::postings::write(tx, &changes.variables)
}

/// A variable's value is replaced by each write (a value that is no longer cut has no full
/// value); its other columns never change.
static VARIABLE: Upsert = Upsert::replacing(
    "variable",
    &[
        "name",
        "value",
        "full_value",
        "is_truncated",
        "scope_key",
        "process_instance_key",
        "process_definition_key",
        "bpmn_process_id",
        "tenant_id",
    ],
    &["value", "full_value", "is_truncated"],
);

fn variable_values<'r>(key: &'r i64, v: &'r Variable) -> [&'r dyn ToParam; 10] {
    [
        key,
        &v.name,
        &v.value,
        &v.full_value,
        &v.is_truncated,
        &v.scope_key,
        &v.process_instance_key,
        &v.process_definition_key,
        &v.bpmn_process_id,
        &v.tenant_id,
    ]
}

fn incident_links(tx: &Conn, changes: &Changes) -> Result<()> {
    for (key, delta) in &changes.incident_counts {
        tx.execute(
            "UPDATE process_instance SET incidents = \
             CASE WHEN incidents + ?2 < 0 THEN 0 ELSE incidents + ?2 END WHERE key = ?1",
            params![key, delta],
        )?;
    }
    for (key, incident) in &changes.element_incidents {
        tx.execute(
            "UPDATE element_instance SET incident_key = NULLIF(CAST(?2 AS BIGINT), 0) WHERE key = ?1",
            params![key, incident],
        )?;
    }
    Ok(())
}

/// Writes `changes` and the partition's new position in `tx` (not committed here).
pub fn write(
    tx: &Conn,
    partition: u32,
    changes: &Changes,
    position: u64,
    next_index: u64,
) -> Result<()> {
    definitions(tx, changes)?;
    // an instance whose parent is written in the same batch takes its root from the parent's
    // row, which a statement of several rows would not see yet: those go one at a time, after
    let (children, roots): (Vec<_>, Vec<_>) = changes.instances.iter().partition(|(_, i)| {
        i.parent_process_instance_key
            .is_some_and(|p| changes.instances.contains_key(&p))
    });
    changes.counts.before_rows(tx)?;
    let known = Roots::of(changes);
    let own = |key: &i64, _: &Instance| known.get(Some(*key));
    INSTANCE.write(tx, roots.into_iter(), instance_values, own)?;
    for child in children {
        INSTANCE.write(tx, std::iter::once(child), instance_values, own)?;
    }
    ELEMENT.write(tx, changes.elements.iter(), element_values, |_, r| {
        known.get(r.process_instance_key)
    })?;
    INCIDENT.write(tx, changes.incidents.iter(), incident_values, |_, r| {
        known.get(r.process_instance_key)
    })?;
    // the jobs' counts leave their stored rows and join the rows written (`counts.rs`)
    crate::counts::move_batch_jobs(tx, &changes.jobs)?;
    JOB.write(tx, changes.jobs.iter(), job_values, |_, r| {
        known.get(r.process_instance_key)
    })?;
    changes.job_stats.write(tx)?;
    USER_TASK.write(tx, changes.user_tasks.iter(), user_task_values, |_, r| {
        known.get(r.process_instance_key)
    })?;
    crate::batch::write(tx, &changes.batch_operations)?;
    changes.users.write(tx)?;
    crate::usage::write(tx, partition, &changes.assignments)?;
    flows_and_variables(tx, changes, &known)?;
    changes.decisions.write(tx)?;
    changes.messages.write(tx)?;
    incident_links(tx, changes)?;
    changes.counts.after_rows(tx)?;
    tx.execute(
        "INSERT INTO export_position (partition_id, position, next_index) VALUES (?1, ?2, ?3) \
         ON CONFLICT(partition_id) DO UPDATE SET position = excluded.position, \
         next_index = excluded.next_index",
        params![partition, position as i64, next_index as i64],
    )?;
    Ok(())
}
