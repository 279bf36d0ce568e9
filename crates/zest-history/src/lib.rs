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
pub mod copy;
mod counts;
pub mod db;
pub mod filter;
mod postings;
mod project;
pub mod resources;
mod retention;
pub mod search;
mod stats;
pub mod usage;
mod write;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde_json::Value;
use zest_protocol::Record;

use db::{params, Conn, Source};

pub use filter::{BadFilter, Conditions, Kind};
pub use project::{message_hash, PREVIEW_CHARS};
pub use resources::{Named, Resource};
pub use search::{Part, SearchError};

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("history store: {0}")]
    Sql(#[from] db::Error),
    #[error("history schema migration: {0}")]
    Migration(String),
    #[error("{0}")]
    Config(String),
    /// The store could not be reached (PostgreSQL down): the exporter retries.
    #[error("the secondary storage {store} is unreachable: {error}")]
    Unreachable { store: String, error: String },
}

/// Readers kept open at most (each has its own page cache, or its own server session).
const READERS: usize = 4;

/// The writer's connection (opened again when PostgreSQL dropped it), with each partition's
/// position as it last wrote it in SQLite (read once from the store, then kept here). In
/// PostgreSQL, which several nodes may share, the position is read and locked in each
/// export's transaction instead, so that two nodes exporting the same partition's records
/// take each record in once.
struct Writer {
    conn: Option<Conn>,
    positions: HashMap<u32, Exported>,
    /// Where the sweep of the value postings stands (`postings.rs`).
    sweep: postings::Sweep,
}

impl Writer {
    /// The writer's connection, opened when there is none or the one there is broke; the
    /// first one opened migrates the schema (`ready` then says so).
    fn conn(&mut self, source: &Source, ready: &AtomicBool) -> Result<&Conn, HistoryError> {
        if self.conn.as_ref().is_none_or(Conn::is_broken) {
            self.conn = None;
            self.positions.clear();
            let mut conn = source.connect(false).map_err(|e| unreachable(source, e))?;
            if !ready.load(Ordering::SeqCst) {
                conn.migrate().map_err(HistoryError::Migration)?;
                ready.store(true, Ordering::SeqCst);
            }
            // the postings of variables stored before there were postings (once)
            postings::fill(&conn)?;
            self.conn = Some(conn);
        }
        Ok(self.conn.as_ref().expect("opened above"))
    }
}

fn unreachable(source: &Source, e: db::Error) -> HistoryError {
    HistoryError::Unreachable {
        store: source.describe(),
        error: e.to_string(),
    }
}

/// The history store of one node: an embedded SQLite file, or a PostgreSQL database.
pub struct History {
    source: Source,
    writer: Mutex<Writer>,
    readers: Mutex<Vec<Conn>>,
    /// Whether the schema was migrated (reads before answer [`SearchError::Unavailable`]).
    ready: AtomicBool,
}

impl History {
    /// Opens (or creates) the SQLite store at `path`, migrating its schema to this
    /// version's, with `cache_bytes` of page cache split between the writer and the readers.
    pub fn open(path: &Path, cache_bytes: u64) -> Result<History, HistoryError> {
        let cache_kib = ((cache_bytes / 1024) as i64 / (READERS as i64 + 1)).max(256);
        History::with(Source::Sqlite {
            path: path.to_path_buf(),
            cache_kib,
        })
    }

    /// Opens the PostgreSQL store at `url` (`postgres://user:password@host:port/database`),
    /// migrating its schema to this version's.
    pub fn open_postgres(url: &str) -> Result<History, HistoryError> {
        let history = History::postgres(url)?;
        history.connect()?;
        Ok(history)
    }

    /// The PostgreSQL store at `url`, not yet connected to: the first write (the exporter's,
    /// retried while the server is down) connects and migrates the schema; reads before that
    /// answer [`SearchError::Unavailable`]. A malformed URL is an error here.
    pub fn postgres(url: &str) -> Result<History, HistoryError> {
        Ok(History::unopened(
            Source::postgres(url).map_err(HistoryError::Config)?,
        ))
    }

    fn with(source: Source) -> Result<History, HistoryError> {
        let history = History::unopened(source);
        history.connect()?;
        Ok(history)
    }

    fn unopened(source: Source) -> History {
        History {
            source,
            writer: Mutex::new(Writer {
                conn: None,
                positions: HashMap::new(),
                sweep: postings::Sweep::default(),
            }),
            readers: Mutex::new(Vec::new()),
            ready: AtomicBool::new(false),
        }
    }

    /// Connects the writer (if it is not) and migrates the schema (if not yet done).
    pub fn connect(&self) -> Result<(), HistoryError> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        w.conn(&self.source, &self.ready).map(|_| ())
    }

    /// Whether the store was reached and its schema migrated.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    /// Where the store is, without a password (`postgres://user@host:port/db`, or the file).
    pub fn describe(&self) -> String {
        self.source.describe()
    }

    /// Whether this store is PostgreSQL (else SQLite).
    pub fn is_postgres(&self) -> bool {
        self.source.is_postgres()
    }

    /// Where the partition's history stands: the position of the last record exported (0:
    /// none yet) and the first log index not yet exported.
    pub fn position(&self, partition: u32) -> Result<Exported, HistoryError> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = w.positions.get(&partition) {
            return Ok(*at);
        }
        let at = stored(w.conn(&self.source, &self.ready)?, partition, false)?;
        if !self.is_postgres() {
            w.positions.insert(partition, at);
        }
        Ok(at)
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
        let pg = self.is_postgres();
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let cached = guard.positions.get(&partition).copied();
        // nothing new past what SQLite's writer knows it stored: no transaction
        if let Some(at) = cached {
            let news = records.iter().any(|r| r.position > at.position);
            if !news && next_index <= at.next_index {
                return Ok(0);
            }
        }
        let w = &mut *guard;
        let conn = w.conn(&self.source, &self.ready)?;
        let mut deleted = false;
        let written = conn.transaction(|tx| {
            let before = match cached {
                Some(at) => at,
                None => stored(tx, partition, pg)?,
            };
            let mut changes = project::Changes::default();
            let mut position = before.position;
            let mut taken = 0;
            for record in records.iter().filter(|r| r.position > before.position) {
                if let Some(deletion) = history_deletion(record) {
                    // what came before it is written first: the deletion finds it all
                    write::write(tx, partition, &changes, position, before.next_index)?;
                    retention::remove(tx, deletion)?;
                    deleted = true;
                    taken += changes.records + 1;
                    changes = project::Changes::default();
                } else {
                    changes.add(record);
                }
                position = record.position;
            }
            let after = Exported {
                position,
                next_index: next_index.max(before.next_index),
                ..before
            };
            if changes.records > 0 || after != before {
                write::write(tx, partition, &changes, after.position, after.next_index)?;
            }
            Ok((taken + changes.records, after))
        });
        let (taken, after) = written?;
        if deleted {
            w.sweep.removed();
        }
        if !pg {
            w.positions.insert(partition, after);
        }
        Ok(taken)
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
        w.conn(&self.source, &self.ready)?.execute(
            "INSERT INTO export_position (partition_id, position, next_index, gap_to) \
             VALUES (?1, ?2, ?3, ?2) ON CONFLICT(partition_id) DO UPDATE SET \
             position = CASE WHEN excluded.position > export_position.position \
             THEN excluded.position ELSE export_position.position END, \
             next_index = CASE WHEN excluded.next_index > export_position.next_index \
             THEN excluded.next_index ELSE export_position.next_index END, \
             gap_to = excluded.gap_to",
            params![partition, position as i64, next_index as i64],
        )?;
        Ok(())
    }

    /// Removes up to `batch` finished root instances that ended before `cutoff` (epoch ms),
    /// with everything under them; answers how many roots went.
    pub fn remove_expired(&self, cutoff: i64, batch: usize) -> Result<usize, HistoryError> {
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let w = &mut *guard;
        let mut sweep = std::mem::take(&mut w.sweep);
        let conn = w.conn(&self.source, &self.ready)?;
        let removed = conn.transaction(|tx| {
            let removed = retention::remove_expired(tx, cutoff, batch)?;
            if removed > 0 {
                sweep.removed();
            }
            // the postings naming what went, after the removals: as many a pass as a root's
            // variables can have written (one-task with the typical payload: 30)
            postings::sweep(tx, &mut sweep, 1000 + removed * 64)?;
            Ok(removed)
        });
        w.sweep = sweep;
        Ok(removed?)
    }

    /// Runs `f` on the writer's connection (tests that set a store up as an older version
    /// left it).
    #[cfg(test)]
    pub(crate) fn write_with<T>(&self, f: impl FnOnce(&Conn) -> db::Result<T>) -> T {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        f(w.conn(&self.source, &self.ready).unwrap()).unwrap()
    }

    /// Runs `f` on a reader connection (opened on first use, kept for the next read).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Conn) -> Result<T, SearchError>,
    ) -> Result<T, SearchError> {
        let conn = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let unavailable = |e: String| {
            SearchError::Unavailable(format!(
                "The secondary storage ({}) is unavailable: {e}",
                self.describe()
            ))
        };
        if !self.is_ready() {
            return Err(unavailable("not reached yet; retrying".into()));
        }
        let conn = match conn {
            Some(c) if !c.is_broken() => c,
            _ => self
                .source
                .connect(true)
                .map_err(|e| unavailable(e.to_string()))?,
        };
        let result = f(&conn);
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        if readers.len() < READERS && !conn.is_broken() {
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

    /// The usage metrics of `window` over every partition this store holds.
    pub fn usage(&self, window: &usage::Window) -> Result<usage::Tally, SearchError> {
        self.read(|c| usage::tally(c, window, None))
    }

    /// `partitions`' share of a round of usage metrics (`after`: the round's cursor), for a
    /// [`usage::Tally`] of several stores' shares.
    pub fn usage_share(
        &self,
        window: &usage::Window,
        after: Option<&usage::Name>,
        partitions: &[u32],
    ) -> Result<usage::Share, SearchError> {
        self.read(|c| usage::share(c, window, after, Some(partitions)))
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

/// The deletion a HISTORY_DELETION DELETED event makes (`docs/design/history.md`, "History
/// deletion"): the replicated fact each replica's exporter applies where the log has it.
fn history_deletion(record: &Record) -> Option<&zest_protocol::HistoryDeletionRecord> {
    match &record.value {
        zest_protocol::RecordValue::HistoryDeletion(d)
            if record.record_type == zest_protocol::RecordType::Event
                && record.intent == zest_protocol::Intent::Deleted =>
        {
            Some(d)
        }
        _ => None,
    }
}

/// The partition's stored position; with `lock`, its row locked until the transaction ends
/// (PostgreSQL: another node exporting the same partition waits, then reads what this one
/// wrote).
fn stored(conn: &Conn, partition: u32, lock: bool) -> db::Result<Exported> {
    let mut sql = String::from(
        "SELECT position, next_index, gap_to FROM export_position WHERE partition_id = ?1",
    );
    if lock {
        conn.execute(
            "INSERT INTO export_position (partition_id, position) VALUES (?1, 0) \
             ON CONFLICT(partition_id) DO NOTHING",
            params![partition],
        )?;
        sql.push_str(" FOR UPDATE");
    }
    let row = conn.query_opt(&sql, params![partition], |r| {
        Ok(Exported {
            position: r.get::<_, i64>(0)?.max(0) as u64,
            next_index: r.get::<_, i64>(1)?.max(0) as u64,
            gap_to: r.get::<_, i64>(2)?.max(0) as u64,
        })
    })?;
    Ok(row.unwrap_or_default())
}

#[cfg(test)]
mod tests;
