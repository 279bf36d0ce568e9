//! The variables' value postings: what the process instance search's variable value filters
//! (`variables: [{name, value}]` with an equality) go through (`docs/design/history.md`, "What
//! the writes cost").
//!
//! An index entry per variable was the dearest part of the store's writes (one-task with the
//! typical payload: 30 entries an instance, written in 30 places of the index each batch). A
//! posting row holds instead, for one hash of (name, value) and one batch, every process
//! instance of the batch with a variable of that name and value:
//! `(hash, first_key) -> [offsets of the instances' keys from first_key]` (a JSON list, which
//! both stores expand with `json_each`). A value many instances share costs a row per batch;
//! a value of one instance (a business key) a row, as an entry did.
//!
//! Postings are a hint, never the truth: a filter takes the instances they name and checks
//! each one's variable (`variable_by_instance`), so a hash collision, a value changed since
//! or an instance removed since costs a probe, never a wrong answer. What retention and history
//! deletion remove leaves postings naming removed instances; [`sweep`] rewrites them a few at a
//! time afterwards, so they do not outgrow the history.
//!
//! Postings are kept by bucket (`first_key >> 16`, about 1,500 one-task instances' keys) before
//! their hash: a batch's postings land in the few pages of its bucket instead of a page each
//! across the whole table, which a value of one instance (a business key, an amount) would
//! otherwise cost in pages written per variable. A filter seeks the hash in each bucket
//! (`posting_bucket` lists them; the sweep drops the empty ones).
//!
//! A copy of a partition's history (`copy.rs`) writes the postings of the variables it copies
//! ([`add_rows`]); a store older than the postings fills them from its variables when it is
//! opened ([`fill`], resumable: the `posting_fill` row says where it stands).

use std::collections::BTreeMap;

use crate::db::{params, Cell, Conn, ToParam};
use crate::project::Variable;

type Result<T> = crate::db::Result<T>;

/// The hash a posting is found by: `db::value_hash` of the name and the value as stored (the
/// value cut at Camunda's preview size when longer).
pub(crate) fn hash(name: &str, value: &str) -> i64 {
    crate::db::value_hash(name.as_bytes(), value.as_bytes())
}

/// Keys per bucket: `first_key >> BUCKET_BITS`.
const BUCKET_BITS: u32 = 16;

fn bucket(first_key: i64) -> i64 {
    first_key >> BUCKET_BITS
}

/// A posting a second batch writes with the same (hash, first key) as one stored (the same
/// instance's variable set to the same value again) joins its offsets to the stored ones.
fn insert_sql(rows: usize) -> String {
    let values: Vec<String> = (0..rows)
        .map(|r| {
            format!(
                "(?{}, ?{}, ?{}, ?{})",
                4 * r + 1,
                4 * r + 2,
                4 * r + 3,
                4 * r + 4
            )
        })
        .collect();
    format!(
        "INSERT INTO variable_posting (bucket, hash, first_key, keys) VALUES {} \
         ON CONFLICT(bucket, hash, first_key) DO UPDATE SET keys = \
         substr(variable_posting.keys, 1, length(variable_posting.keys) - 1) || ',' || \
         substr(excluded.keys, 2)",
        values.join(", ")
    )
}

/// The insert of `rows` postings, for each of the tables' chunk sizes (`write::chunk`), built once.
fn statement(rows: usize) -> &'static str {
    use std::sync::OnceLock;
    static SQL: OnceLock<Vec<String>> = OnceLock::new();
    let all = SQL.get_or_init(|| {
        crate::write::CHUNKS
            .iter()
            .map(|n| insert_sql(*n))
            .collect()
    });
    let i = crate::write::CHUNKS
        .iter()
        .position(|n| *n == rows)
        .expect("a chunk size");
    &all[i]
}

/// Postings of (hash, instance key) pairs, grouped: one row per hash.
#[derive(Default)]
struct Postings(BTreeMap<i64, Vec<i64>>);

impl Postings {
    fn add(&mut self, hash: i64, instance: i64) {
        self.0.entry(hash).or_default().push(instance);
    }

    /// Writes one row per hash: its smallest instance key and the others' offsets from it,
    /// and the buckets of those rows.
    fn write(mut self, tx: &Conn) -> Result<()> {
        let rows: Vec<(i64, i64, i64, String)> = std::mem::take(&mut self.0)
            .into_iter()
            .map(|(hash, mut keys)| {
                keys.sort_unstable();
                keys.dedup();
                let first = keys[0];
                let offsets: Vec<String> = keys.iter().map(|k| (k - first).to_string()).collect();
                (
                    bucket(first),
                    hash,
                    first,
                    format!("[{}]", offsets.join(",")),
                )
            })
            .collect();
        let mut buckets: Vec<i64> = rows.iter().map(|r| r.0).collect();
        buckets.sort_unstable();
        buckets.dedup();
        for b in buckets {
            tx.execute(
                "INSERT INTO posting_bucket (bucket) VALUES (?1) ON CONFLICT DO NOTHING",
                params![b],
            )?;
        }
        let mut at = 0;
        let mut params: Vec<&dyn ToParam> = Vec::new();
        while at < rows.len() {
            let n = crate::write::chunk(tx, rows.len() - at);
            params.clear();
            for (bucket, hash, first, keys) in &rows[at..at + n] {
                params.extend([bucket as &dyn ToParam, hash, first, keys]);
            }
            tx.execute(statement(n), &params)?;
            at += n;
        }
        Ok(())
    }
}

/// The postings of a batch's variables (their new values).
pub fn write(tx: &Conn, variables: &BTreeMap<i64, Variable>) -> Result<()> {
    let mut postings = Postings::default();
    for v in variables.values() {
        postings.add(hash(&v.name, &v.value), v.process_instance_key);
    }
    postings.write(tx)
}

/// The postings of variable rows copied from another replica (`copy.rs`): the rows' `name`,
/// `value` and `process_instance_key` columns, by name.
pub fn add_rows(tx: &Conn, columns: &[String], rows: &[Vec<Cell>]) -> Result<()> {
    let at = |name: &str| columns.iter().position(|c| c == name);
    let (Some(n), Some(v), Some(p)) = (at("name"), at("value"), at("process_instance_key")) else {
        return Ok(());
    };
    let mut postings = Postings::default();
    for row in rows {
        if let (Cell::Text(name), Cell::Text(value), Cell::Integer(pi)) =
            (&row[n], &row[v], &row[p])
        {
            postings.add(hash(name, value), *pi);
        }
    }
    postings.write(tx)
}

/// Removes the postings of partition `partition` (its keys' high bits), before a copy of
/// its history is written again (its buckets are a range of them).
pub fn remove_partition(tx: &Conn, partition: u32) -> Result<()> {
    let low = bucket(i64::from(partition) << 51);
    let high = bucket(i64::from(partition + 1) << 51);
    for table in ["variable_posting", "posting_bucket"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE bucket >= ?1 AND bucket < ?2"),
            params![low, high],
        )?;
    }
    Ok(())
}

/// Variables read a chunk at a time by [`fill`].
const FILL_CHUNK: i64 = 20_000;

/// Fills the postings of the variables a store held before it had postings (migration V13
/// leaves a `posting_fill` row when there are any): a chunk of variables a transaction, in key
/// order, the row saying how far it went, so a fill cut off goes on at the next open. Nodes
/// sharing a PostgreSQL database take turns (an advisory lock per chunk).
pub fn fill(conn: &Conn) -> Result<()> {
    let mut done = 0u64;
    loop {
        let more = conn.transaction(|tx| {
            if tx.is_postgres() {
                tx.batch(&format!(
                    "SELECT pg_advisory_xact_lock({})",
                    crate::db::MIGRATION_LOCK
                ))?;
            }
            let after: Vec<i64> =
                tx.query("SELECT after_key FROM posting_fill", params![], |r| {
                    r.get(0)
                })?;
            let Some(after) = after.first().copied() else {
                return Ok(None);
            };
            let rows: Vec<(i64, String, String, i64)> = tx.query(
                "SELECT key, name, value, process_instance_key FROM variable \
                 WHERE key > ?1 ORDER BY key LIMIT ?2",
                params![after, FILL_CHUNK],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )?;
            let mut postings = Postings::default();
            for (_, name, value, pi) in &rows {
                postings.add(hash(name, value), *pi);
            }
            postings.write(tx)?;
            match rows.last() {
                Some((last, ..)) if rows.len() as i64 == FILL_CHUNK => {
                    tx.execute("UPDATE posting_fill SET after_key = ?1", params![last])?;
                }
                _ => {
                    tx.execute("DELETE FROM posting_fill", params![])?;
                }
            }
            Ok(Some(rows.len()))
        })?;
        match more {
            Some(n) => {
                done += n as u64;
                if n as i64 == FILL_CHUNK && done % 1_000_000 < FILL_CHUNK as u64 {
                    tracing::info!(variables = done, "history: filling the value postings");
                }
                if (n as i64) < FILL_CHUNK {
                    return Ok(());
                }
            }
            None => return Ok(()),
        }
    }
}

/// Where [`sweep`] stands: the last posting it looked at, and whether anything was removed
/// from history since it last went through every posting.
#[derive(Debug, Default)]
pub struct Sweep {
    after: Option<(i64, i64, i64)>,
    dirty: bool,
}

impl Sweep {
    /// Something was removed from history: the postings need a pass.
    pub fn removed(&mut self) {
        self.dirty = true;
    }
}

/// Looks at up to `budget` postings after where the last pass stopped, while something was
/// removed since the sweep last went through them all: each keeps the instances history still
/// holds, and goes when it names none. At the end of a pass, the buckets left without a
/// posting go too.
pub fn sweep(tx: &Conn, at: &mut Sweep, budget: usize) -> Result<()> {
    if !at.dirty && at.after.is_none() {
        return Ok(());
    }
    let (b, h, f) = at.after.unwrap_or((i64::MIN, i64::MIN, i64::MIN));
    let postings: Vec<(i64, i64, i64, String)> = tx.query(
        "SELECT bucket, hash, first_key, keys FROM variable_posting \
         WHERE (bucket, hash, first_key) > (?1, ?2, ?3) ORDER BY bucket, hash, first_key LIMIT ?4",
        params![b, h, f, budget as i64],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    if postings.len() < budget {
        // through them all: a new pass only after the next removal
        *at = Sweep::default();
        tx.execute(
            "DELETE FROM posting_bucket WHERE NOT EXISTS \
             (SELECT 1 FROM variable_posting p WHERE p.bucket = posting_bucket.bucket)",
            params![],
        )?;
    } else {
        at.after = postings.last().map(|(b, h, f, _)| (*b, *h, *f));
    }
    for (bucket, hash, first, keys) in postings {
        let held: Vec<i64> = tx.query(
            "SELECT p.key FROM process_instance p WHERE p.key IN \
             (SELECT ?1 + CAST(j.value AS BIGINT) FROM json_each(?2) j) ORDER BY p.key",
            params![first, keys],
            |r| r.get(0),
        )?;
        let offsets: Vec<String> = held.iter().map(|k| (k - first).to_string()).collect();
        let kept = format!("[{}]", offsets.join(","));
        let at = params![bucket, hash, first];
        if held.is_empty() {
            tx.execute(
                "DELETE FROM variable_posting WHERE bucket = ?1 AND hash = ?2 AND first_key = ?3",
                at,
            )?;
        } else if kept != keys {
            let mut with = at.to_vec();
            with.push(&kept);
            tx.execute(
                "UPDATE variable_posting SET keys = ?4 \
                 WHERE bucket = ?1 AND hash = ?2 AND first_key = ?3",
                &with,
            )?;
        }
    }
    Ok(())
}
