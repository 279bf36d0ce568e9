//! Running a search over a [`Resource`]: the filter (through the one compiler), a total order
//! (the requested sort fields, then the key), an exact count, and a page by offset or by
//! keyset cursor. A cursor holds the sort values of the row it stands for and a hash of the
//! query, so a cursor from another query is refused.

use crate::db::Cell as Sql;
use crate::db::Conn;
use base64::Engine as _;
use serde_json::{json, Value};

use crate::filter::{BadFilter, Conditions};
use crate::resources::{Resource, KEY};

/// Most items one page holds (8.9's bound; 8.8 sets none).
pub const MAX_LIMIT: i64 = 10_000;
const DEFAULT_LIMIT: i64 = 100;

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The request is wrong (400): the message names the field.
    #[error("{0}")]
    Bad(String),
    #[error("history store: {0}")]
    Store(#[from] crate::db::Error),
    /// The store cannot be reached (503): the message says so.
    #[error("{0}")]
    Unavailable(String),
}

impl From<BadFilter> for SearchError {
    fn from(e: BadFilter) -> Self {
        SearchError::Bad(e.0)
    }
}

fn bad(m: impl Into<String>) -> SearchError {
    SearchError::Bad(m.into())
}

struct Order {
    exprs: Vec<(String, bool)>,
}

fn order(resource: &Resource, sort: Option<&Value>) -> Result<Order, SearchError> {
    let mut exprs = Vec::new();
    let items = match sort {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => return Err(bad("Expected 'sort' to be a list of {field, order}")),
    };
    for item in items {
        let name = item
            .get("field")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("Expected each 'sort' entry to have a 'field'"))?;
        let field = resource
            .sorts
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = resource.sorts.iter().map(|f| f.name).collect();
                bad(format!(
                    "Unknown sort field '{name}'; expected one of: {}",
                    known.join(", ")
                ))
            })?;
        let desc = match item.get("order").and_then(Value::as_str) {
            None => false,
            Some(o) if o.eq_ignore_ascii_case("asc") => false,
            Some(o) if o.eq_ignore_ascii_case("desc") => true,
            Some(o) => {
                return Err(bad(format!(
                    "Unknown sort order '{o}'; expected ASC or DESC"
                )))
            }
        };
        // a field that is the same constant on every row (a job's `isDenied`) orders nothing;
        // left out, since SQLite reads an integer in ORDER BY as a column number
        if !is_constant(field.sql) {
            exprs.push((field.sql.to_string(), desc));
        }
    }
    // the key breaks ties in the direction of the last sort: an index on a sort's expression
    // holds the key ascending after it, so read backwards it gives the whole order of a
    // descending sort too (with the key ascending the planner sorted every match instead)
    if !exprs.iter().any(|(e, _)| e == KEY) {
        let desc = exprs.last().is_some_and(|(_, desc)| *desc);
        exprs.push((KEY.to_string(), desc));
    }
    Ok(Order { exprs })
}

/// Whether a field's SQL is a literal: a number, a quoted string or NULL.
fn is_constant(sql: &str) -> bool {
    sql.eq_ignore_ascii_case("NULL")
        || sql.parse::<f64>().is_ok()
        || (sql.len() >= 2 && sql.starts_with('\'') && sql.ends_with('\''))
}

struct Page {
    from: i64,
    limit: i64,
    after: Option<Vec<Sql>>,
    before: Option<Vec<Sql>>,
}

fn page(query: &Value, hash: u64, columns: usize) -> Result<Page, SearchError> {
    let p = query.get("page").unwrap_or(&Value::Null);
    let int = |name: &str| -> Result<Option<i64>, SearchError> {
        match p.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| bad(format!("Expected 'page.{name}' to be an integer"))),
        }
    };
    let limit = int("limit")?.unwrap_or(DEFAULT_LIMIT);
    if !(0..=MAX_LIMIT).contains(&limit) {
        return Err(bad(format!(
            "Expected 'page.limit' to be between 0 and {MAX_LIMIT}, but was {limit}"
        )));
    }
    let from = int("from")?.unwrap_or(0);
    if from < 0 {
        return Err(bad("Expected 'page.from' to be at least 0"));
    }
    let cursor = |name: &str| -> Result<Option<Vec<Sql>>, SearchError> {
        match p.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => decode_cursor(s, hash, columns).map(Some).ok_or_else(|| {
                bad(format!(
                    "The cursor in 'page.{name}' is not one of this query's"
                ))
            }),
            Some(_) => Err(bad(format!("Expected 'page.{name}' to be a cursor string"))),
        }
    };
    let (after, before) = (cursor("after")?, cursor("before")?);
    if after.is_some() && before.is_some() {
        return Err(bad(
            "Expected at most one of 'page.after' and 'page.before'",
        ));
    }
    Ok(Page {
        from,
        limit,
        after,
        before,
    })
}

/// A hash of what decides a query's rows and order (FNV-1a): a cursor is only valid with it.
fn query_hash(resource: &Resource, query: &Value) -> u64 {
    let text = format!(
        "{}|{}|{}",
        resource.name,
        query.get("filter").unwrap_or(&Value::Null),
        query.get("sort").unwrap_or(&Value::Null)
    );
    text.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// A SQL value as JSON (a blob or NULL as null).
pub(crate) fn sql_json(v: &Sql) -> Value {
    match v {
        Sql::Integer(i) => json!(i),
        Sql::Real(f) => json!(f),
        Sql::Text(s) => json!(s),
        _ => Value::Null,
    }
}

fn encode_cursor(values: &[Sql], hash: u64) -> String {
    cursor_of(&values.iter().map(sql_json).collect::<Vec<_>>(), hash)
}

/// The cursor of the row whose sort values are `values` (as JSON): padded base64 of the
/// standard alphabet, the pattern Camunda's spec gives `startCursor` and `endCursor`.
pub(crate) fn cursor_of(values: &[Value], hash: u64) -> String {
    let body = json!({"q": format!("{hash:x}"), "v": values});
    base64::engine::general_purpose::STANDARD.encode(body.to_string())
}

/// A cursor's sort values; the URL-safe unpadded spelling (Zest's cursors before they followed
/// the spec's pattern) is read too.
pub(crate) fn decode_cursor(text: &str, hash: u64, columns: usize) -> Option<Vec<Sql>> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    let bytes = STANDARD
        .decode(text)
        .or_else(|_| URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')))
        .ok()?;
    let body: Value = serde_json::from_slice(&bytes).ok()?;
    if body.get("q")?.as_str()? != format!("{hash:x}") {
        return None;
    }
    let values = body.get("v")?.as_array()?;
    if values.len() != columns {
        return None;
    }
    values
        .iter()
        .map(|v| match v {
            Value::Number(n) => n.as_i64().map(Sql::Integer),
            Value::String(s) => Some(Sql::Text(s.clone())),
            _ => None,
        })
        .collect()
}

/// Rows strictly after (or before) `values` in `order`: (a > x) OR (a = x AND b > y) ...
fn keyset(c: &mut Conditions, order: &Order, values: &[Sql], after: bool) {
    let mut branches = Vec::new();
    for i in 0..order.exprs.len() {
        let mut parts = Vec::new();
        for (j, (expr, _)) in order.exprs.iter().enumerate().take(i) {
            let mark = c.bind(values[j].clone());
            parts.push(format!("{expr} = {mark}"));
        }
        let (expr, desc) = &order.exprs[i];
        let greater = after != *desc;
        let mark = c.bind(values[i].clone());
        parts.push(format!("{expr} {} {mark}", if greater { ">" } else { "<" }));
        branches.push(format!("({})", parts.join(" AND ")));
    }
    c.sql.push(format!("({})", branches.join(" OR ")));
}

/// Runs `query` (a REST search request: filter, sort, page) over `resource`, with `base`
/// conditions added (a path's key, say); answers the REST API's `{items, page}`. One query over
/// every partition this store holds.
pub fn search(
    conn: &Conn,
    resource: &Resource,
    query: &Value,
    base: Conditions,
) -> Result<Value, SearchError> {
    let prepared = Prepared::new(resource, query)?;
    let (rows, total) = prepared.rows(conn, resource, base, None)?;
    Ok(prepared.answer(rows, total))
}

/// One share of a search that several stores (or several partitions) answer: the rows of the
/// given partitions only, each with its item and the values of the order's columns, the
/// partitions' count of matches, and the order's directions. A page by offset holds the first
/// `from + limit` rows (the merge passes over `from` of all parts together); a page by cursor
/// the `limit` rows after (or before) it, as the one-store search would.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Part {
    /// Each row's item and its sort values, in the order's direction.
    pub rows: Vec<(Value, Vec<Value>)>,
    pub total: i64,
    /// Whether each sort column descends.
    pub desc: Vec<bool>,
}

/// The partition of a row: an entity key carries it in its high bits (a process definition's
/// key is partition 1's: it is deployed on every partition, and counted once so).
pub const PARTITION_OF_KEY: &str = "(t.key >> 51)";

/// `partitions`' share of `query` (see [`Part`]).
pub fn part(
    conn: &Conn,
    resource: &Resource,
    query: &Value,
    base: Conditions,
    partitions: &[u32],
) -> Result<Part, SearchError> {
    let prepared = Prepared::new(resource, query)?;
    let (rows, total) = prepared.rows(conn, resource, base, Some(partitions))?;
    Ok(Part {
        rows: rows
            .into_iter()
            .map(|(item, values)| (item, values.iter().map(sql_json).collect()))
            .collect(),
        total,
        desc: prepared.order.exprs.iter().map(|(_, d)| *d).collect(),
    })
}

/// The page of `query` that the parts of every partition make together: their rows merged by
/// the sort values, the page cut from them (`from` passed over, or after the cursor), and the
/// counts summed. A cursor of the answer is one of the same query's, valid for each part.
pub fn merge(resource: &Resource, query: &Value, parts: Vec<Part>) -> Result<Value, SearchError> {
    let prepared = Prepared::new(resource, query)?;
    let desc: Vec<bool> = prepared.order.exprs.iter().map(|(_, d)| *d).collect();
    let total = parts.iter().map(|p| p.total).sum();
    let mut rows: Vec<(Value, Vec<Value>)> = parts.into_iter().flat_map(|p| p.rows).collect();
    rows.sort_by(|a, b| compare_rows(&a.1, &b.1, &desc));
    let limit = prepared.page.limit as usize;
    let rows: Vec<(Value, Vec<Value>)> = if prepared.page.before.is_some() {
        // the `limit` rows right before the cursor: the last of the merged ones
        let skip = rows.len().saturating_sub(limit);
        rows.into_iter().skip(skip).collect()
    } else {
        let from = prepared.page.skipped() as usize;
        rows.into_iter().skip(from).take(limit).collect()
    };
    let hash = prepared.hash;
    let start = rows.first().map(|(_, v)| cursor_of(v, hash));
    let end = rows.last().map(|(_, v)| cursor_of(v, hash));
    Ok(page_json(
        rows.into_iter().map(|(i, _)| i).collect(),
        total,
        start,
        end,
    ))
}

/// Two rows' order: their sort values compared column by column, as SQLite compares them
/// (numbers before text, text by its bytes), each column in its direction.
pub(crate) fn compare_rows(a: &[Value], b: &[Value], desc: &[bool]) -> std::cmp::Ordering {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let o = compare_values(x, y);
        let o = if desc.get(i).copied().unwrap_or(false) {
            o.reverse()
        } else {
            o
        };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    std::cmp::Ordering::Equal
}

fn compare_values(x: &Value, y: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let rank = |v: &Value| match v {
        Value::Null => 0,
        Value::Number(_) => 1,
        Value::String(_) => 2,
        _ => 3,
    };
    match (x, y) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => {
                let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                a.partial_cmp(&b).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(a), Value::String(b)) => a.as_bytes().cmp(b.as_bytes()),
        _ => rank(x).cmp(&rank(y)),
    }
}

/// A query checked and compiled once: its order, its hash (what cursors are bound to), its
/// page.
struct Prepared<'q> {
    query: &'q Value,
    order: Order,
    hash: u64,
    page: Page,
}

impl Page {
    /// The rows passed over before the page (a cursor page passes over none).
    fn skipped(&self) -> i64 {
        if self.after.is_some() || self.before.is_some() {
            0
        } else {
            self.from
        }
    }
}

impl<'q> Prepared<'q> {
    fn new(resource: &Resource, query: &'q Value) -> Result<Prepared<'q>, SearchError> {
        if !query.is_object() && !query.is_null() {
            return Err(bad("Expected the search request to be a JSON object"));
        }
        let order = order(resource, query.get("sort"))?;
        let hash = query_hash(resource, query);
        let page = page(query, hash, order.exprs.len())?;
        Ok(Prepared {
            query,
            order,
            hash,
            page,
        })
    }

    /// The matching rows (with their sort values) in the order's direction, and the count of
    /// matches. With `partitions`, only theirs, and a page by offset holds the first
    /// `from + limit` rows (the merge cuts the page); without, the page itself.
    #[allow(clippy::type_complexity)]
    fn rows(
        &self,
        conn: &Conn,
        resource: &Resource,
        base: Conditions,
        partitions: Option<&[u32]>,
    ) -> Result<(Vec<(Value, Vec<Sql>)>, i64), SearchError> {
        // the process instances of a process and state: their count kept as history is written;
        let counted = match (resource.name, base.sql.is_empty()) {
            (name, true) if name == crate::resources::PROCESS_INSTANCES.name => {
                crate::counts::instance_total(conn, self.query.get("filter"), partitions)?
            }
            // a definition's element instances at an element (by state): theirs too
            (name, true) if name == crate::resources::ELEMENT_INSTANCES.name => {
                crate::counts::element_total(conn, self.query.get("filter"), partitions)?
            }
            // jobs of a type and state (a worker dashboard's, c8ctl's): theirs too
            (name, true) if name == crate::resources::JOBS.name => {
                crate::counts::job_total(conn, self.query.get("filter"), partitions)?
            }
            _ => None,
        };
        let mut c = base;
        c.compile(
            self.query.get("filter").unwrap_or(&Value::Null),
            resource.fields,
            resource.special,
        )?;
        c.partitions(PARTITION_OF_KEY, partitions);
        let total: i64 = match counted {
            Some(total) => total,
            None => {
                let sql = format!("SELECT count(*) FROM {}{}", resource.from, c.where_clause());
                conn.query_one(&sql, &crate::db::cells(&c.params), |r| r.get(0))?
            }
        };
        let page = &self.page;
        let order = &self.order;
        let backwards = page.before.is_some();
        if let Some(v) = page.after.as_ref().or(page.before.as_ref()) {
            keyset(&mut c, order, v, !backwards);
        }
        let order_by: Vec<String> = order
            .exprs
            .iter()
            .map(|(e, desc)| format!("{e} {}", if *desc != backwards { "DESC" } else { "ASC" }))
            .collect();
        let sort_columns: Vec<&str> = order.exprs.iter().map(|(e, _)| e.as_str()).collect();
        let (limit, offset) = match partitions {
            Some(_) => (page.limit + page.skipped(), 0),
            None => (page.limit, page.skipped()),
        };
        let sql = format!(
            "SELECT {}, {} FROM {}{} ORDER BY {} LIMIT {} OFFSET {}",
            resource.select,
            sort_columns.join(", "),
            resource.from,
            c.where_clause(),
            order_by.join(", "),
            limit,
            offset
        );
        let columns = select_columns(resource.select);
        let mut items = conn.query(&sql, &crate::db::cells(&c.params), |row| {
            let item = (resource.row)(row)?;
            let sort_values: Vec<Sql> = row.0[columns..].to_vec();
            Ok((item, sort_values))
        })?;
        if backwards {
            items.reverse();
        }
        Ok((items, total))
    }

    /// The REST API's `{items, page}` of one store's page.
    fn answer(&self, items: Vec<(Value, Vec<Sql>)>, total: i64) -> Value {
        let start = items.first().map(|(_, v)| encode_cursor(v, self.hash));
        let end = items.last().map(|(_, v)| encode_cursor(v, self.hash));
        page_json(
            items.into_iter().map(|(i, _)| i).collect(),
            total,
            start,
            end,
        )
    }
}

fn page_json(items: Vec<Value>, total: i64, start: Option<String>, end: Option<String>) -> Value {
    json!({
        "items": items,
        "page": {
            "totalItems": total,
            "hasMoreTotalItems": false,
            "startCursor": start,
            "endCursor": end,
        }
    })
}

/// How many columns a `SELECT` list names (commas inside parentheses do not count).
fn select_columns(select: &str) -> usize {
    let mut depth = 0i32;
    let mut n = 1;
    for c in select.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => n += 1,
            _ => {}
        }
    }
    n
}

/// The item of `resource` whose key is `key`, if history has it.
pub fn get(conn: &Conn, resource: &Resource, key: i64) -> Result<Option<Value>, SearchError> {
    let sql = format!(
        "SELECT {} FROM {} WHERE {KEY} = ?1",
        resource.select, resource.from
    );
    Ok(conn.query_opt(&sql, crate::db::params![key], |row| (resource.row)(row))?)
}
