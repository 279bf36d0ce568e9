//! Zest's history: what finished (and running) work looked like, kept for the REST API v2's
//! searches (Operate, Tasklist, c8ctl, the clients' search API). A projection of each
//! partition's committed records into an embedded SQLite database (`history.sqlite` in the
//! data directory), written by the partition's exporter (`zest-broker`'s `export`), with the
//! partition's export position in the same transaction as the rows: a crash keeps both or
//! neither, so export resumes exactly after what is stored. See `docs/design/history.md`.
//!
//! Layer: beside `zest-storage` (it knows records, not the engine or the broker).

pub mod aggregate;
mod batch;
mod bpmn;
pub mod filter;
mod project;
pub mod resources;
mod retention;
pub mod search;
mod stats;
mod write;

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use zest_protocol::Record;

pub use filter::{BadFilter, Conditions, Kind};
pub use project::{message_hash, PREVIEW_CHARS};
pub use resources::{Named, Resource};
pub use search::{Part, SearchError};

mod migrations {
    refinery::embed_migrations!("migrations/sqlite");
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("history store: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("history schema migration: {0}")]
    Migration(String),
}

/// Readers kept open at most (each has its own page cache).
const READERS: usize = 4;

/// Prepared statements the writer keeps.
const WRITER_STATEMENTS: usize = 64;

/// The writer's connection, with each partition's position as it last wrote it (read once
/// from the store, then kept here: one row per partition).
struct Writer {
    conn: Connection,
    positions: std::collections::HashMap<u32, Exported>,
}

impl Writer {
    fn position(&mut self, partition: u32) -> rusqlite::Result<Exported> {
        if let Some(at) = self.positions.get(&partition) {
            return Ok(*at);
        }
        let at = stored(&self.conn, partition)?;
        self.positions.insert(partition, at);
        Ok(at)
    }
}

/// The history store of one node.
pub struct History {
    path: std::path::PathBuf,
    writer: Mutex<Writer>,
    readers: Mutex<Vec<Connection>>,
    /// Page cache of each connection, in KiB.
    cache_kib: i64,
}

impl History {
    /// Opens (or creates) the store at `path`, migrating its schema to this version's, with
    /// `cache_bytes` of page cache split between the writer and the readers.
    pub fn open(path: &Path, cache_bytes: u64) -> Result<History, HistoryError> {
        let cache_kib = ((cache_bytes / 1024) as i64 / (READERS as i64 + 1)).max(256);
        let mut writer = Connection::open(path)?;
        configure(&writer, cache_kib)?;
        // every statement of a batch stays prepared (the default of 16 is fewer than a
        // batch uses once the tables' upserts, inserts and updates are counted)
        writer.set_prepared_statement_cache_capacity(WRITER_STATEMENTS);
        writer.pragma_update(None, "journal_mode", "WAL")?;
        migrations::migrations::runner()
            .run(&mut writer)
            .map_err(|e| HistoryError::Migration(e.to_string()))?;
        Ok(History {
            path: path.to_path_buf(),
            writer: Mutex::new(Writer {
                conn: writer,
                positions: Default::default(),
            }),
            readers: Mutex::new(Vec::new()),
            cache_kib,
        })
    }

    /// Where the partition's history stands: the position of the last record exported (0:
    /// none yet) and the first log index not yet exported.
    pub fn position(&self, partition: u32) -> Result<Exported, HistoryError> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        Ok(w.position(partition)?)
    }

    /// Exports `records` of `partition`, the records of the log entries before `next_index`
    /// not yet exported (those after its stored position, in log order), and stores
    /// `next_index` and the last record's position, in one transaction. Answers how many
    /// records were taken in.
    pub fn export(
        &self,
        partition: u32,
        records: &[Record],
        next_index: u64,
    ) -> Result<usize, HistoryError> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let before = w.position(partition)?;
        let mut changes = project::Changes::default();
        let mut position = before.position;
        for record in records.iter().filter(|r| r.position > before.position) {
            changes.add(record);
            position = record.position;
        }
        if changes.records == 0 && next_index <= before.next_index {
            return Ok(0);
        }
        let after = Exported {
            position,
            next_index: next_index.max(before.next_index),
            ..before
        };
        let tx = w.conn.transaction()?;
        write::write(&tx, partition, &changes, after.position, after.next_index)?;
        tx.commit()?;
        w.positions.insert(partition, after);
        Ok(changes.records)
    }

    /// Marks the partition's history as missing the records before `position` that it did
    /// not export (a snapshot skipped them here), and moves it on to `next_index`.
    pub fn skip_to(
        &self,
        partition: u32,
        position: u64,
        next_index: u64,
    ) -> Result<(), HistoryError> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        // read again from the store at the next export
        w.positions.remove(&partition);
        w.conn.execute(
            "INSERT INTO export_position (partition_id, position, next_index, gap_to) \
             VALUES (?1, ?2, ?3, ?2) ON CONFLICT(partition_id) DO UPDATE SET \
             position = MAX(position, excluded.position), \
             next_index = MAX(next_index, excluded.next_index), gap_to = excluded.gap_to",
            rusqlite::params![partition, position as i64, next_index as i64],
        )?;
        Ok(())
    }

    /// Removes up to `batch` finished root instances that ended before `cutoff` (epoch ms),
    /// with everything under them; answers how many roots went.
    pub fn remove_expired(&self, cutoff: i64, batch: usize) -> Result<usize, HistoryError> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        Ok(retention::remove_expired(&mut w.conn, cutoff, batch)?)
    }

    /// Runs `f` on a reader connection (opened on first use, kept for the next read).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, SearchError>,
    ) -> Result<T, SearchError> {
        let conn = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match conn {
            Some(c) => c,
            None => {
                let c = Connection::open_with_flags(
                    &self.path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                configure(&c, self.cache_kib)?;
                c
            }
        };
        let result = f(&conn);
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        if readers.len() < READERS {
            readers.push(conn);
        }
        result
    }

    /// A search of `resource` (`query`: the REST request), with `base` conditions.
    pub fn search(
        &self,
        resource: &Resource,
        query: &Value,
        base: Conditions,
    ) -> Result<Value, SearchError> {
        self.read(|c| search::search(c, resource, query, base))
    }

    /// `partitions`' share of a search, for a merge with the other partitions' shares
    /// ([`search::part`], [`search::merge`]).
    pub fn search_part(
        &self,
        resource: &Resource,
        query: &Value,
        base: Conditions,
        partitions: &[u32],
    ) -> Result<search::Part, SearchError> {
        self.read(|c| search::part(c, resource, query, base, partitions))
    }

    /// The item of `resource` with `key`.
    pub fn get(&self, resource: &Resource, key: i64) -> Result<Option<Value>, SearchError> {
        self.read(|c| search::get(c, resource, key))
    }

    /// The BPMN XML of a process definition.
    pub fn process_xml(&self, key: i64) -> Result<Option<String>, SearchError> {
        self.read(|c| stats::process_xml(c, key))
    }

    /// Element instance counts per element (active, canceled, incidents, completed) of a
    /// process definition's instances, or of one process instance.
    pub fn element_statistics(&self, of: stats::Of, filter: &Value) -> Result<Value, SearchError> {
        self.read(|c| stats::element_statistics(c, of, filter, None))
    }

    /// [`History::element_statistics`] of the instances of `partitions` only (to be summed
    /// with the other partitions' by [`merge_element_statistics`]).
    pub fn element_statistics_of(
        &self,
        of: stats::Of,
        filter: &Value,
        partitions: &[u32],
    ) -> Result<Value, SearchError> {
        self.read(|c| stats::element_statistics(c, of, filter, Some(partitions)))
    }

    /// The groups of an 8.9 statistics request in `partitions` (None: every partition this
    /// store holds), for [`aggregate::page`].
    pub fn aggregate(
        &self,
        aggregate: &aggregate::Aggregate,
        partitions: Option<&[u32]>,
    ) -> Result<aggregate::Groups, SearchError> {
        self.read(|c| aggregate::groups(c, aggregate, partitions))
    }

    /// The sequence flows a process instance took.
    pub fn sequence_flows(&self, process_instance: i64) -> Result<Value, SearchError> {
        self.read(|c| stats::sequence_flows(c, process_instance))
    }

    /// The instance's entry in a call hierarchy and the key of its caller, if any.
    pub fn call_hierarchy_link(
        &self,
        process_instance: i64,
    ) -> Result<Option<(Value, Option<i64>)>, SearchError> {
        self.read(|c| stats::call_hierarchy_link(c, process_instance))
    }

    /// The instance and its ancestors, root first (`call-hierarchy`).
    pub fn call_hierarchy(&self, process_instance: i64) -> Result<Option<Value>, SearchError> {
        self.read(|c| stats::call_hierarchy(c, process_instance))
    }
}

pub use stats::{merge_element_statistics, Of};

/// Where a partition's export stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exported {
    /// The position of the last record exported (0: none).
    pub position: u64,
    /// The first log index not yet exported.
    pub next_index: u64,
    /// History lacks records before this position that a snapshot skipped (0: no gap).
    pub gap_to: u64,
}

fn stored(conn: &Connection, partition: u32) -> rusqlite::Result<Exported> {
    let row = conn.query_row(
        "SELECT position, next_index, gap_to FROM export_position WHERE partition_id = ?1",
        [partition],
        |r| {
            Ok(Exported {
                position: r.get::<_, i64>(0)?.max(0) as u64,
                next_index: r.get::<_, i64>(1)?.max(0) as u64,
                gap_to: r.get::<_, i64>(2)?.max(0) as u64,
            })
        },
    );
    match row {
        Ok(e) => Ok(e),
        Err(rusqlite::Error::QueryReturnedNoRows) => Ok(Exported::default()),
        Err(e) => Err(e),
    }
}

fn configure(conn: &Connection, cache_kib: i64) -> rusqlite::Result<()> {
    conn.pragma_update(None, "cache_size", -cache_kib)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "case_sensitive_like", true)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(())
}

#[cfg(test)]
mod tests;
