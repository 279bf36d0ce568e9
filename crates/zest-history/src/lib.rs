//! Zest's history: what finished (and running) work looked like, kept for the REST API v2's
//! searches (Operate, Tasklist, c8ctl, the clients' search API). A projection of each
//! partition's committed records into an embedded SQLite database (`history.sqlite` in the
//! data directory), written by the partition's exporter (`zest-broker`'s `export`), with the
//! partition's export position in the same transaction as the rows: a crash keeps both or
//! neither, so export resumes exactly after what is stored. See `docs/design/history.md`.
//!
//! Layer: beside `zest-storage` (it knows records, not the engine or the broker).

mod bpmn;
pub mod filter;
mod project;
pub mod resources;
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
pub use resources::Resource;
pub use search::SearchError;

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

/// The history store of one node.
pub struct History {
    path: std::path::PathBuf,
    writer: Mutex<Connection>,
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
        writer.pragma_update(None, "journal_mode", "WAL")?;
        migrations::migrations::runner()
            .run(&mut writer)
            .map_err(|e| HistoryError::Migration(e.to_string()))?;
        Ok(History {
            path: path.to_path_buf(),
            writer: Mutex::new(writer),
            readers: Mutex::new(Vec::new()),
            cache_kib,
        })
    }

    /// Where the partition's history stands: the position of the last record exported (0:
    /// none yet).
    pub fn position(&self, partition: u32) -> Result<u64, HistoryError> {
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let position: Option<i64> = conn
            .query_row(
                "SELECT position FROM export_position WHERE partition_id = ?1",
                [partition],
                |r| r.get(0),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?;
        Ok(position.unwrap_or(0).max(0) as u64)
    }

    /// Exports `records` of `partition` (those after its stored position, in log order) and
    /// stores `last_position` as its position, in one transaction. Answers how many records
    /// were taken in.
    pub fn export(
        &self,
        partition: u32,
        records: &[Record],
        last_position: u64,
    ) -> Result<usize, HistoryError> {
        let mut conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let stored = {
            let p: Option<i64> = conn
                .query_row(
                    "SELECT position FROM export_position WHERE partition_id = ?1",
                    [partition],
                    |r| r.get(0),
                )
                .ok();
            p.unwrap_or(0).max(0) as u64
        };
        if last_position <= stored {
            return Ok(0);
        }
        let mut changes = project::Changes::default();
        for record in records.iter().filter(|r| r.position > stored) {
            changes.add(record);
        }
        let tx = conn.transaction()?;
        write::write(&tx, partition, &changes, last_position)?;
        tx.commit()?;
        Ok(changes.records)
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
        self.read(|c| stats::element_statistics(c, of, filter))
    }

    /// The sequence flows a process instance took.
    pub fn sequence_flows(&self, process_instance: i64) -> Result<Value, SearchError> {
        self.read(|c| stats::sequence_flows(c, process_instance))
    }

    /// The instance and its ancestors, root first (`call-hierarchy`).
    pub fn call_hierarchy(&self, process_instance: i64) -> Result<Option<Value>, SearchError> {
        self.read(|c| stats::call_hierarchy(c, process_instance))
    }
}

pub use stats::Of;

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
