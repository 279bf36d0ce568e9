//! Camunda 8.9's job statistics (`/v2/jobs/statistics/...`), read from the per-minute counters
//! the exporter keeps (`project/job_stats.rs`), never from the jobs: global, per job type, per
//! worker of a type, over time for a type, and per error of a type. A window is the buckets
//! whose minute starts at or after `from`'s minute and before `to`.
//!
//! They take the path of the other statistics: each partition answers its groups ([`super::groups`]),
//! which are summed here (counts added, last times the latest), the worker column of the
//! by-type and by-error statistics counted into `workers`, ordered by their columns and cut
//! into a cursor page (`page.after`, `page.limit`) whose cursors hold the last group's columns.

use chrono::SecondsFormat;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{Group, Groups, Shape};
use crate::db::Cell as Sql;
use crate::filter::{parse_date, Conditions, Kind};
use crate::project::job_stats::MINUTE_MS;
use crate::search::{compare_rows, cursor_of, decode_cursor, SearchError, MAX_LIMIT};

/// Time-series buckets a default resolution gives at most over the window.
pub const DEFAULT_BUCKETS: i64 = 1000;

/// The resolutions a default is chosen from (the first that fits [`DEFAULT_BUCKETS`]).
const RESOLUTIONS: [i64; 9] = [1, 5, 15, 30, 60, 360, 720, 1440, 10080];

const DEFAULT_LIMIT: i64 = 100;

/// Which job statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Of {
    Global,
    Types,
    Workers,
    TimeSeries,
    Errors,
}

/// A job statistics request, as read from its body (or, for the global one, its query).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobStatistics {
    pub of: Of,
    /// Epoch ms of `from`'s minute.
    pub from: i64,
    /// Epoch ms of `to`.
    pub to: i64,
    /// `filter.jobType`: a string, or (by type) a string filter.
    pub job_type: Option<Value>,
    pub error_code: Option<Value>,
    pub error_message: Option<Value>,
    /// The time series' bucket width in ms.
    pub resolution: i64,
}

const METRICS: &[&str] = &[
    "created",
    "completed",
    "failed",
    "createdLast",
    "completedLast",
    "failedLast",
];

const WINDOW: &str = "t.bucket >= ?1 AND t.bucket < ?2";

const GLOBAL: Shape = Shape {
    sql: "SELECT SUM(t.created), SUM(t.completed), SUM(t.failed), MAX(t.created_last), \
            MAX(t.completed_last), MAX(t.failed_last) \
          FROM job_stat t WHERE t.bucket >= ?1 AND t.bucket < ?2 {and}",
    grouping: 0,
    columns: &[],
    counts: METRICS,
    sorts: &[],
    partition: "t.partition_id",
    workers: false,
};

const TYPES: Shape = Shape {
    sql: "SELECT t.job_type, t.worker, SUM(t.created), SUM(t.completed), SUM(t.failed), \
            MAX(t.created_last), MAX(t.completed_last), MAX(t.failed_last) \
          FROM job_stat t WHERE t.bucket >= ?1 AND t.bucket < ?2 {and} \
          GROUP BY t.job_type, t.worker ORDER BY 1, 2",
    grouping: 2,
    columns: &["jobType", "worker"],
    counts: METRICS,
    sorts: &[],
    partition: "t.partition_id",
    workers: true,
};

const WORKERS: Shape = Shape {
    sql: "SELECT t.worker, SUM(t.created), SUM(t.completed), SUM(t.failed), \
            MAX(t.created_last), MAX(t.completed_last), MAX(t.failed_last) \
          FROM job_stat t WHERE t.bucket >= ?1 AND t.bucket < ?2 AND t.worker <> '' {and} \
          GROUP BY t.worker ORDER BY 1",
    grouping: 1,
    columns: &["worker"],
    counts: METRICS,
    sorts: &[],
    partition: "t.partition_id",
    workers: false,
};

const TIME_SERIES: Shape = Shape {
    sql:
        "SELECT CAST(?1 AS BIGINT) + ((t.bucket - ?1) / CAST(?3 AS BIGINT)) * CAST(?3 AS BIGINT), \
            SUM(t.created), SUM(t.completed), SUM(t.failed), \
            MAX(t.created_last), MAX(t.completed_last), MAX(t.failed_last) \
          FROM job_stat t WHERE t.bucket >= ?1 AND t.bucket < ?2 {and} \
          GROUP BY 1 ORDER BY 1",
    grouping: 1,
    columns: &["time"],
    counts: METRICS,
    sorts: &[],
    partition: "t.partition_id",
    workers: false,
};

const ERRORS: Shape = Shape {
    sql: "SELECT t.error_code, t.error_message, t.worker, SUM(t.count), MAX(t.last) \
          FROM job_error_stat t WHERE t.bucket >= ?1 AND t.bucket < ?2 {and} \
          GROUP BY t.error_code, t.error_message, t.worker ORDER BY 1, 2, 3",
    grouping: 3,
    columns: &["errorCode", "errorMessage", "worker"],
    counts: &["count", "last"],
    sorts: &[],
    partition: "t.partition_id",
    workers: true,
};

fn bad(m: impl Into<String>) -> SearchError {
    SearchError::Bad(m.into())
}

impl JobStatistics {
    pub(super) fn shape(&self) -> &'static Shape {
        match self.of {
            Of::Global => &GLOBAL,
            Of::Types => &TYPES,
            Of::Workers => &WORKERS,
            Of::TimeSeries => &TIME_SERIES,
            Of::Errors => &ERRORS,
        }
    }

    /// The window (`?1`, `?2`), the resolution (`?3`, time series) and the filters.
    pub(super) fn conditions(&self) -> Result<Conditions, SearchError> {
        debug_assert!(self.shape().sql.contains(WINDOW));
        let mut c = Conditions::default();
        c.bind(Sql::Integer(self.from));
        c.bind(Sql::Integer(self.to));
        if self.of == Of::TimeSeries {
            c.bind(Sql::Integer(self.resolution));
        }
        let filters = [
            ("t.job_type", "jobType", &self.job_type),
            ("t.error_code", "errorCode", &self.error_code),
            ("t.error_message", "errorMessage", &self.error_message),
        ];
        for (sql, name, value) in filters {
            if let Some(v) = value {
                c.field(sql, &format!("filter.{name}"), Kind::Str, v)?;
            }
        }
        Ok(c)
    }

    /// The statistics `of` a request's body (for the global one: its query parameters as
    /// `{"filter": {...}}`); a 400 names what is wrong.
    pub fn of_request(of: Of, query: &Value) -> Result<JobStatistics, SearchError> {
        let body = query
            .as_object()
            .ok_or_else(|| bad("Expected the request to be a JSON object"))?;
        let allowed: &[&str] = match of {
            Of::Global => &["filter"],
            _ => &["filter", "page"],
        };
        known(body, allowed, "")?;
        let filter = match body.get("filter") {
            Some(Value::Object(f)) => f,
            None | Some(Value::Null) => {
                return Err(bad(
                    "No filter provided: 'filter.from' and 'filter.to' are required",
                ))
            }
            Some(_) => return Err(bad("Expected 'filter' to be an object")),
        };
        let fields: &[&str] = match of {
            Of::Global | Of::Types | Of::Workers => &["from", "to", "jobType"],
            Of::TimeSeries => &["from", "to", "jobType", "resolution"],
            Of::Errors => &["from", "to", "jobType", "errorCode", "errorMessage"],
        };
        known(filter, fields, "filter.")?;
        let from = date(filter, "from")?;
        let to = date(filter, "to")?;
        if to <= from {
            return Err(bad(
                "Expected 'filter.to' to be after 'filter.from', but it was not",
            ));
        }
        let resolution = match filter.get("resolution") {
            None | Some(Value::Null) => default_resolution(to - from),
            Some(Value::String(s)) => resolution(s)?,
            Some(_) => {
                return Err(bad(
                    "Expected 'filter.resolution' to be an ISO 8601 duration such as PT1M",
                ))
            }
        };
        let optional = |name: &str| filter.get(name).filter(|v| !v.is_null()).cloned();
        Ok(JobStatistics {
            of,
            from: from.div_euclid(MINUTE_MS) * MINUTE_MS,
            to,
            job_type: job_type(of, filter)?,
            error_code: optional("errorCode"),
            error_message: optional("errorMessage"),
            resolution,
        })
    }
}

/// A 400 naming the first field of `object` that is not one of `fields`.
fn known(object: &Map<String, Value>, fields: &[&str], prefix: &str) -> Result<(), SearchError> {
    match object.keys().find(|k| !fields.contains(&k.as_str())) {
        Some(k) => Err(bad(format!(
            "Unknown field '{prefix}{k}': expected one of {}",
            fields.join(", ")
        ))),
        None => Ok(()),
    }
}

/// `filter.jobType`: optional for the global and by-type statistics (by type: a string
/// filter), a string the others require.
fn job_type(of: Of, filter: &Map<String, Value>) -> Result<Option<Value>, SearchError> {
    match (of, filter.get("jobType")) {
        (Of::Global | Of::Types, None | Some(Value::Null)) => Ok(None),
        (_, None | Some(Value::Null)) => Err(bad(
            "No filter.jobType provided: 'filter.jobType' is required",
        )),
        (Of::Types, Some(v)) => Ok(Some(v.clone())),
        (_, Some(v @ Value::String(_))) => Ok(Some(v.clone())),
        (_, Some(_)) => Err(bad("Expected 'filter.jobType' to be a string")),
    }
}

fn date(filter: &Map<String, Value>, name: &str) -> Result<i64, SearchError> {
    match filter.get(name) {
        None | Some(Value::Null) => Err(bad(format!(
            "No filter.{name} provided: 'filter.{name}' is required"
        ))),
        Some(Value::String(s)) => parse_date(s).ok_or_else(|| {
            bad(format!(
                "Expected 'filter.{name}' to be an ISO 8601 date-time, but was '{s}'"
            ))
        }),
        Some(_) => Err(bad(format!(
            "Expected 'filter.{name}' to be an ISO 8601 date-time string"
        ))),
    }
}

/// The smallest of [`RESOLUTIONS`] that splits `window` ms into at most [`DEFAULT_BUCKETS`].
fn default_resolution(window: i64) -> i64 {
    let minutes = RESOLUTIONS
        .into_iter()
        .find(|m| window <= m * MINUTE_MS * DEFAULT_BUCKETS)
        .unwrap_or(RESOLUTIONS[RESOLUTIONS.len() - 1]);
    minutes * MINUTE_MS
}

/// An ISO 8601 duration (`PnW`, `PnDTnHnMnS`, whole numbers) in ms: a whole number of
/// minutes, at least one (the counters' buckets are minutes).
fn resolution(text: &str) -> Result<i64, SearchError> {
    let wrong = || {
        bad(format!(
            "Expected 'filter.resolution' to be an ISO 8601 duration of whole minutes \
             such as PT1M or PT1H, but was '{text}'"
        ))
    };
    let rest = text.strip_prefix('P').ok_or_else(wrong)?;
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) if !t.is_empty() => (d, Some(t)),
        Some(_) => return Err(wrong()),
        None => (rest, None),
    };
    let mut ms: i64 = 0;
    let mut units = |part: &str, of: &[(char, i64)]| -> Result<(), SearchError> {
        let mut number = String::new();
        let mut next = 0;
        for ch in part.chars() {
            if ch.is_ascii_digit() {
                number.push(ch);
                continue;
            }
            let i = of[next..]
                .iter()
                .position(|(u, _)| *u == ch)
                .ok_or_else(wrong)?;
            let n: i64 = number.parse().map_err(|_| wrong())?;
            ms = n
                .checked_mul(of[next + i].1)
                .and_then(|v| ms.checked_add(v))
                .ok_or_else(wrong)?;
            number.clear();
            next += i + 1;
        }
        if number.is_empty() {
            Ok(())
        } else {
            Err(wrong())
        }
    };
    units(date, &[('W', 7 * 86_400_000), ('D', 86_400_000)])?;
    if let Some(t) = time {
        units(t, &[('H', 3_600_000), ('M', MINUTE_MS), ('S', 1000)])?;
    }
    if ms < MINUTE_MS || ms % MINUTE_MS != 0 {
        return Err(wrong());
    }
    Ok(ms)
}

/// Whether the history of `partitions` (None: all this store holds) misses records.
pub(super) fn has_gap(
    conn: &crate::db::Conn,
    partitions: Option<&[u32]>,
) -> Result<bool, SearchError> {
    let gaps: Vec<i64> = conn.query(
        "SELECT partition_id FROM export_position WHERE gap_to > 0",
        &[],
        |r| r.get(0),
    )?;
    Ok(gaps
        .iter()
        .any(|p| partitions.is_none_or(|ps| ps.contains(&(*p as u32)))))
}

/// A hash of what decides the groups and their order (FNV-1a): a cursor is only valid with it.
fn hash(stats: &JobStatistics) -> u64 {
    let text = serde_json::to_string(stats).unwrap_or_default();
    text.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// Sums `parts`' groups by `key` columns: counts added, last times (`*Last`, `last`) the
/// latest; with `worker` the column after the key is a worker, counted (non-empty, distinct)
/// into a count appended to the group's.
fn sum(shape: &Shape, parts: Vec<Groups>, key: usize, worker: bool) -> Vec<Group> {
    let latest: Vec<bool> = shape
        .counts
        .iter()
        .map(|c| *c == "last" || c.ends_with("Last"))
        .collect();
    let mut summed: std::collections::BTreeMap<String, Group> = Default::default();
    for g in parts.into_iter().flat_map(|p| p.groups) {
        let id = Value::Array(g.columns[..key].to_vec()).to_string();
        let counted = worker && g.columns.get(key).is_some_and(|w| w != "");
        let entry = summed.entry(id).or_insert_with(|| Group {
            columns: g.columns[..key].to_vec(),
            counts: vec![0; g.counts.len() + usize::from(worker)],
        });
        for (i, n) in g.counts.iter().enumerate() {
            let s = &mut entry.counts[i];
            *s = if latest[i] { (*s).max(*n) } else { *s + n };
        }
        if counted {
            // each (key, worker) is one group once the partitions are summed
            *entry.counts.last_mut().expect("a workers count") += 1;
        }
    }
    summed.into_values().collect()
}

/// The answer to `stats` from every partition's groups.
pub(super) fn page(
    stats: &JobStatistics,
    parts: Vec<Groups>,
    query: &Value,
) -> Result<Value, SearchError> {
    let shape = stats.shape();
    let truncated = parts.iter().any(|p| p.truncated);
    let incomplete = parts.iter().any(|p| p.incomplete);
    if stats.of == Of::Global {
        let g = sum(shape, parts, 0, false).pop();
        let counts = g
            .map(|g| g.counts)
            .unwrap_or_else(|| vec![0; METRICS.len()]);
        let mut out = metrics(&counts);
        out.insert("isIncomplete".into(), json!(incomplete));
        return Ok(Value::Object(out));
    }
    let (after, limit) = cursor_page(stats, query)?;
    // a worker is counted once per (key, worker): first sum the partitions per worker
    let groups = if shape.workers {
        let per_worker = sum(shape, parts, shape.grouping, false);
        let key = shape.grouping - 1;
        sum(
            shape,
            vec![Groups {
                groups: per_worker,
                ..Groups::default()
            }],
            key,
            true,
        )
    } else {
        sum(shape, parts, shape.grouping, false)
    };
    // `sum` answers its groups in the order of their key's JSON text; the page's order is
    // the columns' order as the searches compare them
    let mut groups = groups;
    let asc = vec![false; groups.first().map_or(0, |g| g.columns.len())];
    groups.sort_by(|a, b| compare_rows(&a.columns, &b.columns, &asc));
    let total = groups.len();
    let page: Vec<Group> = groups
        .into_iter()
        .filter(|g| {
            after
                .as_ref()
                .is_none_or(|a| compare_rows(&g.columns, a, &asc) == std::cmp::Ordering::Greater)
        })
        .take(limit)
        .collect();
    let h = hash(stats);
    let start = page.first().map(|g| cursor_of(&g.columns, h));
    let end = page.last().map(|g| cursor_of(&g.columns, h));
    let items: Vec<Value> = page.into_iter().map(|g| item(stats.of, g)).collect();
    Ok(json!({
        "items": items,
        "page": {
            "totalItems": total,
            "hasMoreTotalItems": truncated,
            "startCursor": start,
            "endCursor": end,
        }
    }))
}

/// `page.after` (the columns of the group it stands for) and `page.limit`.
fn cursor_page(
    stats: &JobStatistics,
    query: &Value,
) -> Result<(Option<Vec<Value>>, usize), SearchError> {
    let page = match query.get("page") {
        None | Some(Value::Null) => return Ok((None, DEFAULT_LIMIT as usize)),
        Some(Value::Object(p)) => p,
        Some(_) => return Err(bad("Expected 'page' to be an object")),
    };
    if let Some(k) = page
        .keys()
        .find(|k| !["after", "limit"].contains(&k.as_str()))
    {
        return Err(bad(format!(
            "Unknown field 'page.{k}': the job statistics take a cursor page \
             ('page.after', 'page.limit')"
        )));
    }
    let limit = match page.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| bad("Expected 'page.limit' to be an integer"))?,
    };
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(bad(format!(
            "Expected 'page.limit' to be between 1 and {MAX_LIMIT}, but was {limit}"
        )));
    }
    let width = stats.shape().grouping - usize::from(stats.shape().workers);
    let after = match page.get("after") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(
            decode_cursor(s, hash(stats), width)
                .ok_or_else(|| bad("The cursor in 'page.after' is not one of this query's"))?
                .iter()
                .map(crate::search::sql_json)
                .collect(),
        ),
        Some(_) => return Err(bad("Expected 'page.after' to be a cursor string")),
    };
    Ok((after, limit as usize))
}

fn iso(ms: i64) -> Value {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| json!(d.to_rfc3339_opts(SecondsFormat::Millis, true)))
        .unwrap_or(Value::Null)
}

/// `created`, `completed`, `failed` as Camunda's StatusMetric: a count and the time of the
/// last (null when none).
fn metrics(counts: &[i64]) -> Map<String, Value> {
    let mut out = Map::new();
    for (i, name) in ["created", "completed", "failed"].iter().enumerate() {
        let last = counts[i + 3];
        out.insert(
            (*name).into(),
            json!({
                "count": counts[i],
                "lastUpdatedAt": if last > 0 { iso(last) } else { Value::Null },
            }),
        );
    }
    out
}

fn item(of: Of, g: Group) -> Value {
    let column = |i: usize| g.columns.get(i).cloned().unwrap_or(Value::Null);
    let mut out = match of {
        Of::Errors => Map::new(),
        _ => metrics(&g.counts),
    };
    match of {
        Of::Global => {}
        Of::Types => {
            out.insert("jobType".into(), column(0));
            out.insert("workers".into(), json!(g.counts[METRICS.len()]));
        }
        Of::Workers => {
            out.insert("worker".into(), column(0));
        }
        Of::TimeSeries => {
            out.insert("time".into(), iso(column(0).as_i64().unwrap_or(0)));
        }
        Of::Errors => {
            out.insert("errorCode".into(), column(0));
            out.insert("errorMessage".into(), column(1));
            out.insert("workers".into(), json!(g.counts[2]));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod store_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolutions_are_whole_minutes_of_iso_8601() {
        assert_eq!(resolution("PT1M").unwrap(), 60_000);
        assert_eq!(resolution("PT1H30M").unwrap(), 90 * 60_000);
        assert_eq!(resolution("P1D").unwrap(), 86_400_000);
        assert_eq!(resolution("P1W").unwrap(), 7 * 86_400_000);
        assert_eq!(resolution("PT120S").unwrap(), 120_000);
        for wrong in [
            "", "1M", "PT", "PT30S", "PT1.5M", "PTM", "P1H", "PT1M1H", "PT0M", "x",
        ] {
            let e = resolution(wrong).unwrap_err();
            assert!(e.to_string().contains("filter.resolution"), "{wrong}: {e}");
        }
    }

    #[test]
    fn the_default_resolution_keeps_to_a_thousand_buckets() {
        assert_eq!(default_resolution(60 * MINUTE_MS), MINUTE_MS);
        assert_eq!(default_resolution(1000 * MINUTE_MS), MINUTE_MS);
        assert_eq!(default_resolution(1001 * MINUTE_MS), 5 * MINUTE_MS);
        assert_eq!(default_resolution(30 * 86_400_000), 60 * MINUTE_MS);
        assert_eq!(default_resolution(i64::MAX / 2), 10080 * MINUTE_MS);
    }

    #[test]
    fn bad_requests_name_the_field() {
        let window = json!({"from": "2025-01-01T00:00:00Z", "to": "2025-01-02T00:00:00Z"});
        let cases = [
            (Of::Types, json!({}), "filter.from"),
            (
                Of::Types,
                json!({"filter": {"to": "2025-01-01T00:00:00Z"}}),
                "filter.from",
            ),
            (
                Of::Types,
                json!({"filter": {"from": "yesterday", "to": "2025-01-01T00:00:00Z"}}),
                "filter.from",
            ),
            (
                Of::Global,
                json!({"filter": {"from": "2025-01-01T00:00:00Z"}}),
                "filter.to",
            ),
            (
                Of::Global,
                json!({"filter": {"from": "2025-01-02T00:00:00Z", "to": "2025-01-01T00:00:00Z"}}),
                "filter.to",
            ),
            (Of::Workers, json!({"filter": window}), "filter.jobType"),
            (Of::Types, json!({"filter": window, "sort": []}), "'sort'"),
            (
                Of::Types,
                json!({"filter": {"from": "2025-01-01T00:00:00Z", "to": "2025-01-02T00:00:00Z", "x": 1}}),
                "filter.x",
            ),
            (
                Of::TimeSeries,
                json!({"filter": {"from": "2025-01-01T00:00:00Z", "to": "2025-01-02T00:00:00Z", "jobType": "a", "resolution": "1 minute"}}),
                "filter.resolution",
            ),
        ];
        for (of, q, field) in cases {
            let e = JobStatistics::of_request(of, &q).unwrap_err();
            assert!(e.to_string().contains(field), "{q}: {e}");
        }
        let ok = JobStatistics::of_request(Of::Types, &json!({"filter": window})).unwrap();
        for (p, field) in [
            (json!({"from": 0}), "page.from"),
            (json!({"limit": 0}), "page.limit"),
            (json!({"after": "bm90IG91cnM="}), "page.after"),
        ] {
            let e = page(&ok, vec![], &json!({"page": p})).unwrap_err();
            assert!(e.to_string().contains(field), "{p}: {e}");
        }
    }
}
