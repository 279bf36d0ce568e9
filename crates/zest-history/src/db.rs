//! The one interface over the two history stores: SQLite, embedded (the default,
//! `data/history.sqlite`), and PostgreSQL (`--history-url postgres://...`). The rest of the
//! crate writes its SQL once, in the dialect both accept, with `?N` placeholders; this module
//! binds the parameters, reads the rows into owned [`Cell`]s and, for PostgreSQL, spells the
//! placeholders `$N` and keeps each statement prepared.
//!
//! What the dialects do not share is kept out of the SQL text: a scalar `MAX(a, b)` or a
//! `SUM` of a comparison is written as a `CASE`; `julianday`, `json_valid` and `json_each`
//! (SQLite's built-ins) are functions of the same name in the PostgreSQL schema
//! (`migrations/postgres`); every text column there collates as "C", so text sorts by its
//! bytes in both stores, as the merge of several partitions' pages compares it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use postgres::types::{FromSql, IsNull, ToSql, Type};

/// An owned SQL value: a column of a row read, or a parameter kept (a filter's), or a cell of
/// a row copied between nodes (`copy`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A parameter as it is bound, borrowed from what it is read from.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{}", pg_message(.0))]
    Postgres(#[from] postgres::Error),
    #[error("column {0}: {1}")]
    Type(usize, String),
    #[error("the query returned no row")]
    NoRows,
    #[error("the connection is closed")]
    Closed,
}

/// A PostgreSQL error with the server's own message (the client's alone says "db error").
fn pg_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        // "error connecting to server" says why only in its source
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// What can be bound as a parameter.
pub trait ToParam {
    fn to_param(&self) -> Param<'_>;
}

macro_rules! int_param {
    ($($t:ty),*) => {$(
        impl ToParam for $t {
            fn to_param(&self) -> Param<'_> {
                Param::Integer(*self as i64)
            }
        }
    )*};
}
int_param!(i64, i32, i16, u32, u16, u8, u64, usize);

impl ToParam for bool {
    fn to_param(&self) -> Param<'_> {
        Param::Integer(*self as i64)
    }
}
impl ToParam for f64 {
    fn to_param(&self) -> Param<'_> {
        Param::Real(*self)
    }
}
impl ToParam for str {
    fn to_param(&self) -> Param<'_> {
        Param::Text(self)
    }
}
impl ToParam for String {
    fn to_param(&self) -> Param<'_> {
        Param::Text(self)
    }
}
impl ToParam for std::borrow::Cow<'_, str> {
    fn to_param(&self) -> Param<'_> {
        Param::Text(self)
    }
}
impl<T: ToParam> ToParam for Option<T> {
    fn to_param(&self) -> Param<'_> {
        match self {
            Some(v) => v.to_param(),
            None => Param::Null,
        }
    }
}
impl<T: ToParam + ?Sized> ToParam for &T {
    fn to_param(&self) -> Param<'_> {
        (**self).to_param()
    }
}
impl ToParam for Cell {
    fn to_param(&self) -> Param<'_> {
        match self {
            Cell::Null => Param::Null,
            Cell::Integer(i) => Param::Integer(*i),
            Cell::Real(f) => Param::Real(*f),
            Cell::Text(s) => Param::Text(s),
            Cell::Blob(b) => Param::Blob(b),
        }
    }
}

/// `params![a, b, c]`: parameters of any [`ToParam`] types, as a slice.
macro_rules! params {
    ($($x:expr),* $(,)?) => {
        &[$(&$x as &dyn $crate::db::ToParam),*][..]
    };
}
pub(crate) use params;

/// The parameters of owned cells (a filter's).
pub fn cells(cells: &[Cell]) -> Vec<&dyn ToParam> {
    cells.iter().map(|c| c as &dyn ToParam).collect()
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match *self {
            Param::Null => ValueRef::Null,
            Param::Integer(i) => ValueRef::Integer(i),
            Param::Real(f) => ValueRef::Real(f),
            Param::Text(s) => ValueRef::Text(s.as_bytes()),
            Param::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

/// A parameter in the type PostgreSQL inferred for its place (SQLite takes any value
/// anywhere; PostgreSQL asks for the column's type): a number where text is expected is
/// sent as its text, an integer as the integer width asked for, and so on.
impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, BoxError> {
        match (*self, ty) {
            (Param::Null, _) => return Ok(IsNull::Yes),
            (Param::Integer(i), &Type::INT8) => i.to_sql(ty, out)?,
            (Param::Integer(i), &Type::INT4) => i32::try_from(i)?.to_sql(ty, out)?,
            (Param::Integer(i), &Type::INT2) => i16::try_from(i)?.to_sql(ty, out)?,
            (Param::Integer(i), &Type::FLOAT8) => (i as f64).to_sql(ty, out)?,
            (Param::Integer(i), &Type::BOOL) => (i != 0).to_sql(ty, out)?,
            (Param::Integer(i), _) if is_text(ty) => i.to_string().as_str().to_sql(ty, out)?,
            (Param::Real(f), &Type::FLOAT8) => f.to_sql(ty, out)?,
            (Param::Real(f), &Type::INT8) if f.fract() == 0.0 => (f as i64).to_sql(ty, out)?,
            (Param::Real(f), _) if is_text(ty) => f.to_string().as_str().to_sql(ty, out)?,
            (Param::Text(s), _) if is_text(ty) => s.to_sql(ty, out)?,
            (Param::Text(s), &Type::INT8) => s.parse::<i64>()?.to_sql(ty, out)?,
            (Param::Blob(b), &Type::BYTEA) => b.to_sql(ty, out)?,
            (p, ty) => return Err(format!("a parameter {p:?} where {ty} is expected").into()),
        };
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

fn is_text(ty: &Type) -> bool {
    matches!(
        *ty,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN
    )
}

/// Any column of a PostgreSQL row as a cell (the types the history schema has).
impl<'a> FromSql<'a> for Cell {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> std::result::Result<Cell, BoxError> {
        Ok(match *ty {
            Type::INT8 => Cell::Integer(i64::from_sql(ty, raw)?),
            Type::INT4 => Cell::Integer(i32::from_sql(ty, raw)? as i64),
            Type::INT2 => Cell::Integer(i16::from_sql(ty, raw)? as i64),
            Type::BOOL => Cell::Integer(bool::from_sql(ty, raw)? as i64),
            Type::FLOAT8 => Cell::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Cell::Real(f32::from_sql(ty, raw)? as f64),
            Type::NUMERIC => numeric(raw)?,
            Type::BYTEA => Cell::Blob(raw.to_vec()),
            _ => Cell::Text(<&str>::from_sql(ty, raw)?.to_string()),
        })
    }

    fn from_sql_null(_: &Type) -> std::result::Result<Cell, BoxError> {
        Ok(Cell::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A `NUMERIC` in PostgreSQL's binary form (what `SUM` of a `BIGINT` column answers): an
/// integer when it has no fraction, else a real.
fn numeric(raw: &[u8]) -> std::result::Result<Cell, BoxError> {
    let word = |i: usize| -> std::result::Result<i64, BoxError> {
        let b = raw.get(i..i + 2).ok_or("a short NUMERIC")?;
        Ok(i16::from_be_bytes([b[0], b[1]]) as i64)
    };
    let (digits, weight, sign, scale) = (word(0)?, word(2)?, word(4)?, word(6)?);
    if sign == 0xC000u16 as i16 as i64 {
        return Ok(Cell::Real(f64::NAN));
    }
    let mut value = 0f64;
    for d in 0..digits {
        let digit = word(8 + 2 * d as usize)? as f64;
        value += digit * 10_000f64.powi((weight - d) as i32);
    }
    if sign == 0x4000 {
        value = -value;
    }
    if scale == 0 && value.abs() < 9.0e15 {
        Ok(Cell::Integer(value as i64))
    } else {
        Ok(Cell::Real(value))
    }
}

/// A row read: its columns, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<Cell>);

/// A column's index (only `usize`, so that a literal `row.get(0)` needs no annotation).
pub trait RowIndex {
    fn index(self) -> usize;
}
impl RowIndex for usize {
    fn index(self) -> usize {
        self
    }
}

/// A Rust value from a column.
pub trait FromCell: Sized {
    fn from_cell(cell: &Cell) -> std::result::Result<Self, String>;
}

impl FromCell for i64 {
    fn from_cell(cell: &Cell) -> std::result::Result<i64, String> {
        match cell {
            Cell::Integer(i) => Ok(*i),
            Cell::Real(f) if f.fract() == 0.0 => Ok(*f as i64),
            other => Err(format!("expected an integer, found {other:?}")),
        }
    }
}

macro_rules! int_from_cell {
    ($($t:ty),*) => {$(
        impl FromCell for $t {
            fn from_cell(cell: &Cell) -> std::result::Result<$t, String> {
                let i = i64::from_cell(cell)?;
                <$t>::try_from(i).map_err(|_| format!("{i} is out of range"))
            }
        }
    )*};
}
int_from_cell!(i32, u32, u64, usize);

impl FromCell for bool {
    fn from_cell(cell: &Cell) -> std::result::Result<bool, String> {
        Ok(i64::from_cell(cell)? != 0)
    }
}
impl FromCell for f64 {
    fn from_cell(cell: &Cell) -> std::result::Result<f64, String> {
        match cell {
            Cell::Integer(i) => Ok(*i as f64),
            Cell::Real(f) => Ok(*f),
            other => Err(format!("expected a number, found {other:?}")),
        }
    }
}
impl FromCell for String {
    fn from_cell(cell: &Cell) -> std::result::Result<String, String> {
        match cell {
            Cell::Text(s) => Ok(s.clone()),
            Cell::Integer(i) => Ok(i.to_string()),
            Cell::Real(f) => Ok(f.to_string()),
            Cell::Blob(b) => String::from_utf8(b.clone()).map_err(|e| e.to_string()),
            Cell::Null => Err("expected text, found NULL".into()),
        }
    }
}
impl FromCell for Cell {
    fn from_cell(cell: &Cell) -> std::result::Result<Cell, String> {
        Ok(cell.clone())
    }
}
impl<T: FromCell> FromCell for Option<T> {
    fn from_cell(cell: &Cell) -> std::result::Result<Option<T>, String> {
        match cell {
            Cell::Null => Ok(None),
            c => T::from_cell(c).map(Some),
        }
    }
}

impl Row {
    /// Column `i` as a `T` (`row.get::<_, Option<i64>>(3)`, as rusqlite's rows read).
    pub fn get<I: RowIndex, T: FromCell>(&self, i: I) -> Result<T> {
        let i = i.index();
        let cell = self.0.get(i).unwrap_or(&Cell::Null);
        T::from_cell(cell).map_err(|m| Error::Type(i, m))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The advisory lock (PostgreSQL) held while the schema migrates: "zest" in ASCII.
pub(crate) const MIGRATION_LOCK: i64 = 0x7a65_7374;

/// Statements a PostgreSQL connection keeps prepared, at most.
const PG_STATEMENTS: usize = 256;

struct Pg {
    client: postgres::Client,
    statements: HashMap<String, postgres::Statement>,
}

impl Pg {
    fn statement(&mut self, sql: &str) -> Result<postgres::Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        if self.statements.len() >= PG_STATEMENTS {
            self.statements.clear();
        }
        let s = blocking(|| self.client.prepare(&pg_sql(sql))).inspect_err(|e| {
            tracing::debug!("PostgreSQL refused a statement ({}): {sql}", pg_message(e))
        })?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

enum Inner {
    Lite(rusqlite::Connection),
    Pg(Box<RefCell<Pg>>),
    /// What a PostgreSQL connection leaves when it is dropped (see `Drop for Conn`).
    Closed,
}

/// Runs a call of the PostgreSQL client, which blocks on a runtime of its own: on a worker of
/// tokio's multi-threaded runtime (the node's, where a few calls come from async code) the
/// worker is handed over first; elsewhere (the blocking threads the reads and exports run on)
/// it just runs.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// A PostgreSQL client says goodbye to the server when dropped, blocking on its runtime:
/// inside tokio (the node's shutdown) that is done on a thread of its own.
impl Drop for Conn {
    fn drop(&mut self) {
        if let Inner::Pg(pg) = std::mem::replace(&mut self.0, Inner::Closed) {
            if tokio::runtime::Handle::try_current().is_ok() {
                let _ = std::thread::Builder::new()
                    .name("history-pg-close".into())
                    .spawn(move || drop(pg));
            }
        }
    }
}

/// A connection to either store.
pub struct Conn(Inner);

/// Where a store is, to open connections to it.
#[derive(Clone)]
pub enum Source {
    Sqlite {
        path: std::path::PathBuf,
        cache_kib: i64,
    },
    Postgres(Box<postgres::Config>),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Sqlite { path, .. } => write!(f, "sqlite:{}", path.display()),
            Source::Postgres(c) => write!(f, "postgres://{:?}/{:?}", c.get_hosts(), c.get_dbname()),
        }
    }
}

impl Source {
    /// A PostgreSQL store at `url` (`postgres://user:password@host:port/db?options=...`).
    /// Without a `connect_timeout` in the URL, a connection waits at most 10 s (a server
    /// that drops packets holds no exporter for minutes).
    pub fn postgres(url: &str) -> std::result::Result<Source, String> {
        let mut config = url
            .parse::<postgres::Config>()
            .map_err(|e| format!("invalid PostgreSQL URL: {e}"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        Ok(Source::Postgres(Box::new(config)))
    }

    /// Where the store is, as a log may name it: no password.
    pub fn describe(&self) -> String {
        match self {
            Source::Sqlite { path, .. } => path.display().to_string(),
            Source::Postgres(c) => {
                let hosts: Vec<String> = c
                    .get_hosts()
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let host = match h {
                            postgres::config::Host::Tcp(name) => name.clone(),
                            postgres::config::Host::Unix(path) => path.display().to_string(),
                        };
                        match c.get_ports().get(i).or(c.get_ports().first()) {
                            Some(port) => format!("{host}:{port}"),
                            None => host,
                        }
                    })
                    .collect();
                let user = c.get_user().map(|u| format!("{u}@")).unwrap_or_default();
                let db = c.get_dbname().unwrap_or_default();
                format!("postgres://{user}{}/{db}", hosts.join(","))
            }
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Source::Postgres(_))
    }

    /// A new connection: the writer's (`read_only` false) or a reader's.
    pub fn connect(&self, read_only: bool) -> Result<Conn> {
        match self {
            Source::Sqlite { path, cache_kib } => sqlite(path, read_only, *cache_kib),
            Source::Postgres(config) => {
                let client = blocking(|| config.connect(postgres::NoTls))?;
                Ok(Conn(Inner::Pg(Box::new(RefCell::new(Pg {
                    client,
                    statements: HashMap::new(),
                })))))
            }
        }
    }
}

/// Statements the SQLite writer keeps prepared (a batch uses more than the default 16 once
/// the tables' upserts, inserts and updates are counted).
const SQLITE_STATEMENTS: usize = 128;

fn sqlite(path: &Path, read_only: bool, cache_kib: i64) -> Result<Conn> {
    use rusqlite::OpenFlags;
    let conn = if read_only {
        rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?
    } else {
        let c = rusqlite::Connection::open(path)?;
        c.set_prepared_statement_cache_capacity(SQLITE_STATEMENTS);
        c.pragma_update(None, "journal_mode", "WAL")?;
        c
    };
    register_value_hash(&conn)?;
    conn.pragma_update(None, "cache_size", -cache_kib)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "case_sensitive_like", true)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(Conn(Inner::Lite(conn)))
}

/// `zest_value_hash(name, value)`: [`value_hash`] in SQL, which migration V12's index (dropped
/// by V13 for the value postings, `postings.rs`) was built on; registered on every connection
/// so that a new store can still run V12. NULL when either argument is NULL.
fn register_value_hash(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "zest_value_hash",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let (name, value) = (ctx.get_raw(0), ctx.get_raw(1));
            let (Ok(name), Ok(value)) = (name.as_bytes(), value.as_bytes()) else {
                return Ok(None);
            };
            Ok(Some(value_hash(name, value)))
        },
    )
}

/// FNV-1a (64 bits) over `name`, 0x01, `value`: the hash the value postings are found by. Never
/// change it: the postings hold its results.
pub(crate) fn value_hash(name: &[u8], value: &[u8]) -> i64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let bytes = name.iter().chain(std::iter::once(&1u8)).chain(value);
    bytes.fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME)) as i64
}

fn lite_row(row: &rusqlite::Row<'_>, columns: usize) -> rusqlite::Result<Row> {
    use rusqlite::types::ValueRef;
    let mut cells = Vec::with_capacity(columns);
    for i in 0..columns {
        cells.push(match row.get_ref(i)? {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(i) => Cell::Integer(i),
            ValueRef::Real(f) => Cell::Real(f),
            ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
        });
    }
    Ok(Row(cells))
}

fn pg_row(row: &postgres::Row) -> Result<Row> {
    let mut cells = Vec::with_capacity(row.len());
    for i in 0..row.len() {
        cells.push(row.try_get::<_, Cell>(i)?);
    }
    Ok(Row(cells))
}

impl Conn {
    pub fn is_postgres(&self) -> bool {
        matches!(self.0, Inner::Pg(_))
    }

    /// Whether the connection is gone (PostgreSQL restarted, say) and must be replaced.
    pub fn is_broken(&self) -> bool {
        match &self.0 {
            Inner::Lite(_) => false,
            Inner::Pg(pg) => pg.borrow().client.is_closed(),
            Inner::Closed => true,
        }
    }

    /// Runs one statement; answers how many rows it changed.
    pub fn execute(&self, sql: &str, params: &[&dyn ToParam]) -> Result<usize> {
        let params: Vec<Param<'_>> = params.iter().map(|p| p.to_param()).collect();
        match &self.0 {
            Inner::Closed => Err(Error::Closed),
            Inner::Lite(c) => Ok(c
                .prepare_cached(sql)?
                .execute(rusqlite::params_from_iter(params.iter()))?),
            Inner::Pg(pg) => {
                let mut pg = pg.borrow_mut();
                let stmt = pg.statement(sql)?;
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                let done = blocking(|| pg.client.execute(&stmt, &refs)).inspect_err(|e| {
                    tracing::debug!("PostgreSQL failed ({}): {sql} {params:?}", pg_message(e))
                });
                Ok(done? as usize)
            }
        }
    }

    /// The rows of a query, each through `f`.
    pub fn query<T>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        mut f: impl FnMut(&Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        let params: Vec<Param<'_>> = params.iter().map(|p| p.to_param()).collect();
        let mut out = Vec::new();
        match &self.0 {
            Inner::Closed => return Err(Error::Closed),
            Inner::Lite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let columns = stmt.column_count();
                let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
                while let Some(row) = rows.next()? {
                    out.push(f(&lite_row(row, columns)?)?);
                }
            }
            Inner::Pg(pg) => {
                let mut pg = pg.borrow_mut();
                let stmt = pg.statement(sql)?;
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                let rows = blocking(|| pg.client.query(&stmt, &refs)).inspect_err(|e| {
                    tracing::debug!("PostgreSQL failed ({}): {sql} {params:?}", pg_message(e))
                });
                for row in rows? {
                    out.push(f(&pg_row(&row)?)?);
                }
            }
        }
        Ok(out)
    }

    /// The rows of a query through `f` while it answers true: the rows after the one it
    /// answered false for are not read (SQLite steps no further; PostgreSQL's client reads
    /// them all first, so its callers bound the rows with a `LIMIT` too).
    pub fn query_while(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        mut f: impl FnMut(Row) -> Result<bool>,
    ) -> Result<()> {
        match &self.0 {
            Inner::Lite(c) => {
                let params: Vec<Param<'_>> = params.iter().map(|p| p.to_param()).collect();
                let mut stmt = c.prepare_cached(sql)?;
                let columns = stmt.column_count();
                let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
                while let Some(row) = rows.next()? {
                    if !f(lite_row(row, columns)?)? {
                        break;
                    }
                }
                Ok(())
            }
            _ => {
                for row in self.query(sql, params, |r| Ok(r.clone()))? {
                    if !f(row)? {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    /// The first row of a query through `f`, if it has one.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<Option<T>> {
        // the statements asked this way answer one row (a key's, a count)
        let rows = self.query(sql, params, |r| Ok(r.clone()))?;
        rows.first().map(f).transpose()
    }

    /// The first row of a query through `f`; [`Error::NoRows`] when it has none.
    pub fn query_one<T>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<T> {
        self.query_opt(sql, params, f)?.ok_or(Error::NoRows)
    }

    /// Runs statements with no parameters, separated by `;`.
    pub fn batch(&self, sql: &str) -> Result<()> {
        match &self.0 {
            Inner::Closed => Err(Error::Closed),
            Inner::Lite(c) => Ok(c.execute_batch(sql)?),
            Inner::Pg(pg) => Ok(blocking(|| pg.borrow_mut().client.batch_execute(sql))?),
        }
    }

    /// Runs `f` in one transaction: committed when it answers Ok, rolled back otherwise.
    pub fn transaction<T>(&self, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        self.batch("BEGIN")?;
        match f(self) {
            Ok(v) => {
                self.batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Migrates the store's schema to this version's.
    pub fn migrate(&mut self) -> std::result::Result<(), String> {
        mod lite {
            refinery::embed_migrations!("migrations/sqlite");
        }
        mod pg {
            refinery::embed_migrations!("migrations/postgres");
        }
        let done = match &mut self.0 {
            Inner::Closed => return Err(Error::Closed.to_string()),
            Inner::Lite(c) => lite::migrations::runner().run(c).map(|_| ()),
            Inner::Pg(pg) => blocking(|| {
                // nodes sharing the database start together: one migrates, the others wait
                // for it and then find nothing to do
                let client = &mut pg.get_mut().client;
                client
                    .batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
                    .map_err(|e| pg_message(&e))?;
                let done = pg::migrations::runner().run(client).map(|_| ());
                let _ =
                    client.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"));
                Ok::<_, String>(done)
            })?,
        };
        done.map_err(|e| {
            // refinery's own message says only "db error": the server's is in the source
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                text.push_str(": ");
                match s.downcast_ref::<postgres::Error>() {
                    Some(pg) => text.push_str(&pg_message(pg)),
                    None => text.push_str(&s.to_string()),
                }
                source = s.source();
            }
            text
        })
    }
}

/// `?N` (and `?`) placeholders as PostgreSQL's `$N`, outside string literals and quoted names.
pub fn pg_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    let mut highest = 0u32;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                let n = digits.parse::<u32>().unwrap_or(highest + 1);
                highest = highest.max(n);
                out.push('$');
                out.push_str(&n.to_string());
            }
            (None, c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollar_numbers_outside_quotes() {
        assert_eq!(
            pg_sql("SELECT '?', \"a?\" FROM t WHERE a = ?2 AND b = ? AND c LIKE ?1 ESCAPE '\\'"),
            "SELECT '?', \"a?\" FROM t WHERE a = $2 AND b = $3 AND c LIKE $1 ESCAPE '\\'"
        );
    }

    #[test]
    fn numerics_read_as_integers_or_reals() {
        // 12345678 = 1234 * 10000 + 5678: two digits, weight 1, positive, scale 0
        let raw = [0, 2, 0, 1, 0, 0, 0, 0, 0x04, 0xD2, 0x16, 0x2E];
        assert_eq!(numeric(&raw).unwrap(), Cell::Integer(12_345_678));
        // -1.5 = -(1 + 5000 / 10000): weight 0, negative, scale 1
        let raw = [0, 2, 0, 0, 0x40, 0, 0, 1, 0, 1, 0x13, 0x88];
        assert_eq!(numeric(&raw).unwrap(), Cell::Real(-1.5));
    }
}
