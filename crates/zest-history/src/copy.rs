//! The copy of one partition's history from a replica whose history of it is complete to one
//! whose history has a gap (a snapshot installed there skipped log it had not exported, or
//! its log was purged behind its export position): `docs/design/history.md`, "In a cluster".
//!
//! The sender opens a [`Source`]: one read transaction (SQLite's WAL keeps it consistent while
//! its exporter goes on writing) that reads the partition's export position, the position `H`
//! its rows reflect, and then every history table's rows of the partition in key order, a
//! [`Chunk`] at a time (at most [`CHUNK_ROWS`] rows and about [`CHUNK_BYTES`] of cells), each
//! chunk asked for by the [`Cursor`] the one before gave. The receiver empties its rows of
//! the partition ([`History::copy_begin`]), writes each chunk as it comes
//! ([`History::copy_write`], upserts by the rows' keys), and only then moves its export
//! position to `H` and clears the gap ([`History::copy_finish`]). A copy cut off anywhere
//! leaves the gap marked, so the next one starts again from an empty partition: no row is
//! written twice and none is missing.
//!
//! What "the partition's rows" are, per table ([`TABLES`]): the rows whose key holds the
//! partition in its high bits (entities, sequence flows by their instance), the rows of its
//! `partition_id` (the counters: element, instance and job counts, job statistics, usage
//! assignees; copied as the sender counted them, so they agree with the rows copied), and
//! every row of the definitions (keyed by partition 1, written by every partition's
//! exporter): those are merged into what the receiver has, never emptied first.
//!
//! Only SQLite stores copy: PostgreSQL is shared by the replicas and has no gap to fill.

use serde::{Deserialize, Serialize};

use crate::db::{self, params, Cell, Conn, ToParam};
use crate::{stored, Exported, History, HistoryError};

/// Most rows in one chunk.
pub const CHUNK_ROWS: usize = 1000;

/// The cells' bytes after which a chunk ends (it holds one row more at most).
pub const CHUNK_BYTES: usize = 1 << 20;

/// Which rows of a table are a partition's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Share {
    /// The first key column holds the partition in its high bits (`key >> 51`).
    KeyRange,
    /// The `partition_id` column.
    Column,
    /// Every row, merged into the receiver's (definitions).
    All,
}

struct Table {
    name: &'static str,
    /// The primary key's columns, in its order.
    key: &'static [&'static str],
    share: Share,
}

const fn table(name: &'static str, key: &'static [&'static str], share: Share) -> Table {
    Table { name, key, share }
}

/// Every table of the history but `export_position`, in the order they are copied.
const TABLES: &[Table] = &[
    table("process_definition", &["key"], Share::All),
    table(
        "element_name",
        &["process_definition_key", "element_id"],
        Share::All,
    ),
    table("decision_requirements", &["key"], Share::All),
    table("decision_definition", &["key"], Share::All),
    table("form", &["key"], Share::All),
    table("process_instance", &["key"], Share::KeyRange),
    table("element_instance", &["key"], Share::KeyRange),
    table(
        "sequence_flow",
        &["process_instance_key", "flow_id"],
        Share::KeyRange,
    ),
    table("variable", &["key"], Share::KeyRange),
    table("incident", &["key"], Share::KeyRange),
    table("job", &["key"], Share::KeyRange),
    table("user_task", &["key"], Share::KeyRange),
    table("decision_instance", &["key"], Share::KeyRange),
    table("message_subscription", &["key"], Share::KeyRange),
    table("correlated_message", &["key"], Share::KeyRange),
    table("batch_operation", &["key"], Share::KeyRange),
    table("batch_operation_item", &["key"], Share::KeyRange),
    table("identity_user", &["key"], Share::KeyRange),
    table(
        "job_stat",
        &["bucket", "partition_id", "job_type", "worker", "tenant_id"],
        Share::Column,
    ),
    table(
        "job_error_stat",
        &[
            "bucket",
            "partition_id",
            "job_type",
            "error_code",
            "error_message",
            "worker",
        ],
        Share::Column,
    ),
    table(
        "usage_assignee",
        &["minute", "assignee", "tenant_id", "partition_id"],
        Share::Column,
    ),
    table(
        "element_count",
        &["process_definition_key", "element_id", "partition_id"],
        Share::Column,
    ),
    table(
        "instance_count",
        &["process_definition_key", "state", "partition_id"],
        Share::Column,
    ),
    table(
        "job_count",
        &["job_type", "state", "tenant_id", "partition_id"],
        Share::Column,
    ),
];

/// Where the next chunk starts: a table of [`TABLES`] and the key of the last row sent of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    pub table: usize,
    pub after: Option<Vec<Cell>>,
}

/// Rows of one table, and where the next chunk starts (None: this was the last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub table: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub next: Option<Cursor>,
}

/// A consistent read of one partition's history, for a copy to another node.
pub struct Source {
    conn: Conn,
    partition: u32,
    end: Exported,
}

impl Source {
    /// Where the rows read stand: the export position they reflect.
    pub fn end(&self) -> Exported {
        self.end
    }

    /// The chunk at `at`: rows of the first table from there that has any left.
    pub fn chunk(&self, at: &Cursor) -> Result<Chunk, HistoryError> {
        let mut at = at.clone();
        while let Some(t) = TABLES.get(at.table) {
            let columns = columns(&self.conn, t.name)?;
            let rows = self.rows(t, &columns, at.after.as_deref())?;
            if rows.is_empty() {
                at = Cursor {
                    table: at.table + 1,
                    after: None,
                };
                continue;
            }
            let keys: Vec<usize> = t
                .key
                .iter()
                .map(|k| position(&columns, k, t.name))
                .collect::<Result<_, _>>()?;
            let last = rows.last().expect("not empty");
            let next = Cursor {
                table: at.table,
                after: Some(keys.iter().map(|&i| last[i].clone()).collect()),
            };
            return Ok(Chunk {
                table: t.name.to_string(),
                columns,
                rows,
                next: Some(next),
            });
        }
        Ok(Chunk {
            table: String::new(),
            columns: Vec::new(),
            rows: Vec::new(),
            next: None,
        })
    }

    /// Up to a chunk's rows of `t` after the key `after`, in key order.
    fn rows(
        &self,
        t: &Table,
        columns: &[String],
        after: Option<&[Cell]>,
    ) -> Result<Vec<Vec<Cell>>, HistoryError> {
        let mut args: Vec<Cell> = Vec::new();
        let mut sql = format!(
            "SELECT {} FROM {} WHERE {}",
            columns.join(", "),
            t.name,
            share_condition(t, self.partition, &mut args)
        );
        if let Some(after) = after {
            if after.len() != t.key.len() {
                return Err(bad(format!("a cursor of {} is not its key", t.name)));
            }
            let marks: Vec<String> = after
                .iter()
                .map(|c| {
                    args.push(c.clone());
                    format!("?{}", args.len())
                })
                .collect();
            sql.push_str(&format!(
                " AND ({}) > ({})",
                t.key.join(", "),
                marks.join(", ")
            ));
        }
        sql.push_str(&format!(
            " ORDER BY {} LIMIT {CHUNK_ROWS}",
            t.key.join(", ")
        ));
        let mut rows = Vec::new();
        let mut bytes = 0;
        self.conn.query_while(&sql, &db::cells(&args), |row| {
            bytes += row.0.iter().map(cell_bytes).sum::<usize>();
            rows.push(row.0);
            Ok(bytes < CHUNK_BYTES)
        })?;
        Ok(rows)
    }
}

/// The condition that picks `t`'s rows of `partition`, its parameters pushed onto `args`.
fn share_condition(t: &Table, partition: u32, args: &mut Vec<Cell>) -> String {
    let mut mark = |c: Cell| {
        args.push(c);
        format!("?{}", args.len())
    };
    match t.share {
        Share::All => "1 = 1".to_string(),
        Share::Column => format!("partition_id = {}", mark(Cell::Integer(partition as i64))),
        Share::KeyRange => {
            let (low, high) = key_range(partition);
            let low = mark(Cell::Integer(low));
            let high = mark(Cell::Integer(high));
            format!("{} BETWEEN {low} AND {high}", t.key[0])
        }
    }
}

/// The keys of `partition`: those whose high bits (from bit 51) are the partition.
fn key_range(partition: u32) -> (i64, i64) {
    let low = (partition as i64) << 51;
    (low, low | ((1 << 51) - 1))
}

fn cell_bytes(c: &Cell) -> usize {
    match c {
        Cell::Text(s) => s.len() + 8,
        Cell::Blob(b) => b.len() + 8,
        _ => 8,
    }
}

fn bad(message: String) -> HistoryError {
    HistoryError::Config(message)
}

/// The columns of `table` in the store's order.
fn columns(conn: &Conn, table: &str) -> Result<Vec<String>, HistoryError> {
    let sql = format!("PRAGMA table_info({table})");
    Ok(conn.query(&sql, &[], |r| r.get::<_, String>(1))?)
}

fn position(columns: &[String], name: &str, table: &str) -> Result<usize, HistoryError> {
    columns
        .iter()
        .position(|c| c == name)
        .ok_or_else(|| bad(format!("table {table} has no column {name}")))
}

/// Whether the row of `t` (its cells named by `columns`) belongs to `partition`.
fn belongs(t: &Table, columns: &[String], row: &[Cell], partition: u32) -> bool {
    let at = |name: &str| columns.iter().position(|c| c == name).map(|i| &row[i]);
    match t.share {
        Share::All => true,
        Share::Column => at("partition_id") == Some(&Cell::Integer(partition as i64)),
        Share::KeyRange => {
            let (low, high) = key_range(partition);
            matches!(at(t.key[0]), Some(Cell::Integer(k)) if (low..=high).contains(k))
        }
    }
}

impl History {
    /// A consistent read of `partition`'s history to copy to another node; refused when this
    /// store is PostgreSQL (shared: nothing to copy) or its history of the partition has a gap
    /// itself.
    pub fn copy_source(&self, partition: u32) -> Result<Source, HistoryError> {
        if self.is_postgres() {
            return Err(bad("a PostgreSQL history is shared: nothing to copy".into()));
        }
        let conn = self.source.connect(true)?;
        conn.batch("BEGIN")?;
        // the transaction's first read fixes what every later read of it sees
        let end = stored(&conn, partition, false)?;
        if end.gap_to > 0 {
            return Err(bad(format!(
                "this node's history of partition {partition} has a gap itself"
            )));
        }
        Ok(Source {
            conn,
            partition,
            end,
        })
    }

    /// Starts a copy of `partition`'s history from another node: removes the rows of the
    /// partition held here (the definitions stay; a copy merges them). The gap stays marked
    /// until [`History::copy_finish`], so a copy cut off starts again from here.
    pub fn copy_begin(&self, partition: u32) -> Result<(), HistoryError> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        w.positions.remove(&partition);
        let conn = w.conn(&self.source, &self.ready)?;
        Ok(conn.transaction(|tx| {
            for t in TABLES.iter().filter(|t| t.share != Share::All) {
                let mut args = Vec::new();
                let sql = format!(
                    "DELETE FROM {} WHERE {}",
                    t.name,
                    share_condition(t, partition, &mut args)
                );
                tx.execute(&sql, &db::cells(&args))?;
            }
            crate::postings::remove_partition(tx, partition)
        })?)
    }

    /// Writes a chunk of the copy of `partition`'s history (in one transaction; each row an
    /// upsert by its key). A chunk of a table this store does not know, with a column its table
    /// lacks, or with a row of another partition is refused.
    pub fn copy_write(&self, partition: u32, chunk: &Chunk) -> Result<(), HistoryError> {
        if chunk.rows.is_empty() {
            return Ok(());
        }
        let t = TABLES
            .iter()
            .find(|t| t.name == chunk.table)
            .ok_or_else(|| bad(format!("no history table {} to copy into", chunk.table)))?;
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let conn = w.conn(&self.source, &self.ready)?;
        let here = columns(conn, t.name)?;
        // the names written into the statement are this store's own columns
        for c in &chunk.columns {
            position(&here, c, t.name)?;
        }
        for k in t.key {
            position(&chunk.columns, k, t.name)?;
        }
        let sql = upsert(t, &chunk.columns);
        Ok(conn.transaction(|tx| {
            for row in &chunk.rows {
                if row.len() != chunk.columns.len() || !belongs(t, &chunk.columns, row, partition) {
                    return Err(db::Error::Type(
                        0,
                        format!("a row of {} that is not partition {partition}'s", t.name),
                    ));
                }
                let params: Vec<&dyn ToParam> = row.iter().map(|c| c as &dyn ToParam).collect();
                tx.execute(&sql, &params)?;
            }
            if t.name == "variable" {
                // the value postings are derived from the rows, not copied
                crate::postings::add_rows(tx, &chunk.columns, &chunk.rows)?;
            }
            Ok(())
        })?)
    }

    /// Ends a copy of `partition`'s history: its export position is the one the copied rows
    /// reflect (`end`, the sender's), and its gap is cleared.
    pub fn copy_finish(&self, partition: u32, end: Exported) -> Result<(), HistoryError> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        w.positions.remove(&partition);
        w.conn(&self.source, &self.ready)?.execute(
            "INSERT INTO export_position (partition_id, position, next_index, gap_to) \
             VALUES (?1, ?2, ?3, 0) ON CONFLICT(partition_id) DO UPDATE SET \
             position = excluded.position, next_index = excluded.next_index, gap_to = 0",
            params![partition, end.position as i64, end.next_index as i64],
        )?;
        Ok(())
    }
}

/// `INSERT INTO t (columns) VALUES (...) ON CONFLICT (key) DO UPDATE SET` every other column.
fn upsert(t: &Table, columns: &[String]) -> String {
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    let sets: Vec<String> = columns
        .iter()
        .filter(|c| !t.key.contains(&c.as_str()))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect();
    let on_conflict = if sets.is_empty() {
        "DO NOTHING".to_string()
    } else {
        format!("DO UPDATE SET {}", sets.join(", "))
    };
    format!(
        "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) {on_conflict}",
        t.name,
        columns.join(", "),
        marks.join(", "),
        t.key.join(", ")
    )
}

#[cfg(test)]
mod tests;
