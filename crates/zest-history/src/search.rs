//! Running a search over a [`Resource`]: the filter (through the one compiler), a total order
//! (the requested sort fields, then the key), an exact count, and a page by offset or by
//! keyset cursor. A cursor holds the sort values of the row it stands for and a hash of the
//! query, so a cursor from another query is refused.

use base64::Engine as _;
use rusqlite::types::Value as Sql;
use rusqlite::Connection;
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
    Store(#[from] rusqlite::Error),
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
        exprs.push((field.sql.to_string(), desc));
    }
    if !exprs.iter().any(|(e, _)| e == KEY) {
        exprs.push((KEY.to_string(), false));
    }
    Ok(Order { exprs })
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

fn sql_json(v: &Sql) -> Value {
    match v {
        Sql::Integer(i) => json!(i),
        Sql::Real(f) => json!(f),
        Sql::Text(s) => json!(s),
        _ => Value::Null,
    }
}

fn encode_cursor(values: &[Sql], hash: u64) -> String {
    let body =
        json!({"q": format!("{hash:x}"), "v": values.iter().map(sql_json).collect::<Vec<_>>()});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(body.to_string())
}

fn decode_cursor(text: &str, hash: u64, columns: usize) -> Option<Vec<Sql>> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
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
/// conditions added (a path's key, say); answers the REST API's `{items, page}`.
pub fn search(
    conn: &Connection,
    resource: &Resource,
    query: &Value,
    base: Conditions,
) -> Result<Value, SearchError> {
    if !query.is_object() && !query.is_null() {
        return Err(bad("Expected the search request to be a JSON object"));
    }
    let mut c = base;
    c.compile(
        query.get("filter").unwrap_or(&Value::Null),
        resource.fields,
        resource.special,
    )?;
    let order = order(resource, query.get("sort"))?;
    let hash = query_hash(resource, query);
    let page = page(query, hash, order.exprs.len())?;
    let total: i64 = {
        let sql = format!("SELECT count(*) FROM {}{}", resource.from, c.where_clause());
        conn.prepare_cached(&sql)?
            .query_row(rusqlite::params_from_iter(c.params.iter()), |r| r.get(0))?
    };
    let backwards = page.before.is_some();
    if let Some(v) = page.after.as_ref().or(page.before.as_ref()) {
        keyset(&mut c, &order, v, !backwards);
    }
    let order_by: Vec<String> = order
        .exprs
        .iter()
        .map(|(e, desc)| format!("{e} {}", if *desc != backwards { "DESC" } else { "ASC" }))
        .collect();
    let sort_columns: Vec<&str> = order.exprs.iter().map(|(e, _)| e.as_str()).collect();
    let offset = if page.after.is_some() || backwards {
        0
    } else {
        page.from
    };
    let sql = format!(
        "SELECT {}, {} FROM {}{} ORDER BY {} LIMIT {} OFFSET {}",
        resource.select,
        sort_columns.join(", "),
        resource.from,
        c.where_clause(),
        order_by.join(", "),
        page.limit,
        offset
    );
    let columns = select_columns(resource.select);
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(c.params.iter()))?;
    let mut items = Vec::new();
    while let Some(row) = rows.next()? {
        let item = (resource.row)(row)?;
        let sort_values: Vec<Sql> = (0..order.exprs.len())
            .map(|i| row.get::<_, Sql>(columns + i))
            .collect::<rusqlite::Result<_>>()?;
        items.push((item, sort_values));
    }
    if backwards {
        items.reverse();
    }
    let start = items.first().map(|(_, v)| encode_cursor(v, hash));
    let end = items.last().map(|(_, v)| encode_cursor(v, hash));
    Ok(json!({
        "items": items.into_iter().map(|(i, _)| i).collect::<Vec<_>>(),
        "page": {
            "totalItems": total,
            "hasMoreTotalItems": false,
            "startCursor": start,
            "endCursor": end,
        }
    }))
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
pub fn get(conn: &Connection, resource: &Resource, key: i64) -> Result<Option<Value>, SearchError> {
    let sql = format!(
        "SELECT {} FROM {} WHERE {KEY} = ?1",
        resource.select, resource.from
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([key])?;
    match rows.next()? {
        Some(row) => Ok(Some((resource.row)(row)?)),
        None => Ok(None),
    }
}
