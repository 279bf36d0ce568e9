//! The one filter compiler: a REST API v2 search's `filter` (JSON) to an SQL condition with
//! parameters. Every resource describes its fields once ([`Field`]); values never reach the
//! SQL text, and every error names the field it is about (a 400 for the client).
//!
//! A field takes a plain value (exact match) or an object of operators: `$eq $neq $exists $gt
//! $gte $lt $lte $in $notIn $like`. `$or` takes a list of filter objects, ORed together and
//! ANDed with the other fields. `$like` takes `*` (any run) and `?` (one character), `\`
//! escaping them.

use crate::db::Cell as Sql;
use serde_json::{Map, Value};

/// What a field holds, which decides what its values may be and which operators it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A key: a string or number of digits (`LongKey`).
    Key,
    Int,
    Str,
    /// A date-time (RFC 3339), stored as epoch milliseconds.
    Date,
    /// One of fixed upper-case names; requests may use any casing.
    Enum,
    Bool,
}

/// A field of a resource: its name in the REST API, the SQL expression it reads, its kind.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub sql: &'static str,
    pub kind: Kind,
}

pub const fn field(name: &'static str, sql: &'static str, kind: Kind) -> Field {
    Field { name, sql, kind }
}

/// A filter the client got wrong: the message names the field and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct BadFilter(pub String);

type Result<T> = std::result::Result<T, BadFilter>;

/// A filter that a resource handles itself (e.g. `variables`, which reads another table):
/// given the field's name and value, it adds a condition, or says it does not know the name.
pub type Special = fn(&str, &Value, &mut Conditions) -> Option<Result<()>>;

/// Conditions ANDed together, and the parameters they bind, in order.
#[derive(Default, Debug)]
pub struct Conditions {
    pub sql: Vec<String>,
    pub params: Vec<Sql>,
}

impl Conditions {
    /// The one condition `column = key` (a key from a request's path).
    pub fn key_equals(column: &str, key: i64) -> Conditions {
        let mut c = Conditions::default();
        let mark = c.bind(Sql::Integer(key));
        c.sql.push(format!("{column} = {mark}"));
        c
    }

    /// A placeholder for `value`: `?N`, numbered in the order the parameters are bound.
    pub fn bind(&mut self, value: Sql) -> String {
        self.params.push(value);
        format!("?{}", self.params.len())
    }

    /// `column IN (...)` of `partitions`, when given (a search or count of those partitions'
    /// rows only).
    pub fn partitions(&mut self, column: &str, partitions: Option<&[u32]>) {
        if let Some(partitions) = partitions {
            let marks: Vec<String> = partitions
                .iter()
                .map(|p| self.bind(Sql::Integer(*p as i64)))
                .collect();
            self.sql.push(format!("{column} IN ({})", marks.join(", ")));
        }
    }

    /// The `WHERE` clause (empty when there is no condition).
    pub fn where_clause(&self) -> String {
        if self.sql.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.sql.join(" AND "))
        }
    }

    /// Compiles `filter` (a JSON object, or null) over `fields`.
    pub fn compile(
        &mut self,
        filter: &Value,
        fields: &[Field],
        special: Option<Special>,
    ) -> Result<()> {
        let object = match filter {
            Value::Null => return Ok(()),
            Value::Object(o) => o,
            _ => return Err(BadFilter("Expected 'filter' to be an object".into())),
        };
        self.compile_object(object, fields, special)
    }

    fn compile_object(
        &mut self,
        object: &Map<String, Value>,
        fields: &[Field],
        special: Option<Special>,
    ) -> Result<()> {
        for (name, value) in object {
            if name == "$or" {
                self.or(value, fields, special)?;
                continue;
            }
            // a list field left empty (`tags: []`, `variables: []`) sets no condition: Camunda's
            // Java client sends every list of its filter, empty when the user set none
            if value.as_array().is_some_and(|a| a.is_empty()) {
                continue;
            }
            if let Some(handled) = special.and_then(|s| s(name, value, self)) {
                handled?;
                continue;
            }
            let field = fields
                .iter()
                .find(|f| f.name == name)
                .ok_or_else(|| BadFilter(unknown_field(name, fields)))?;
            self.field(field.sql, field.name, field.kind, value)?;
        }
        Ok(())
    }

    fn or(&mut self, value: &Value, fields: &[Field], special: Option<Special>) -> Result<()> {
        let Value::Array(branches) = value else {
            return Err(BadFilter(
                "Expected '$or' to be a list of filter objects".into(),
            ));
        };
        let mut parts = Vec::new();
        for branch in branches {
            let Value::Object(o) = branch else {
                return Err(BadFilter(
                    "Expected each '$or' entry to be a filter object".into(),
                ));
            };
            let mut inner = Conditions {
                sql: Vec::new(),
                params: std::mem::take(&mut self.params),
            };
            let compiled = inner.compile_object(o, fields, special);
            self.params = inner.params;
            compiled?;
            parts.push(if inner.sql.is_empty() {
                "1=1".to_string()
            } else {
                format!("({})", inner.sql.join(" AND "))
            });
        }
        if !parts.is_empty() {
            self.sql.push(format!("({})", parts.join(" OR ")));
        }
        Ok(())
    }

    /// The condition(s) of one field: `sql` is the expression compared, `name` the field's
    /// name for errors.
    pub fn field(&mut self, sql: &str, name: &str, kind: Kind, value: &Value) -> Result<()> {
        let Value::Object(ops) = value else {
            let v = sql_value(name, kind, value)?;
            let mark = self.bind(v);
            self.sql.push(format!("{sql} = {mark}"));
            return Ok(());
        };
        if ops.is_empty() {
            return Err(BadFilter(format!(
                "Expected the filter of '{name}' to hold an operator ($eq, $neq, $exists, ...)"
            )));
        }
        for (op, v) in ops {
            self.operator(sql, name, kind, op, v)?;
        }
        Ok(())
    }

    fn operator(&mut self, sql: &str, name: &str, kind: Kind, op: &str, v: &Value) -> Result<()> {
        let ordered = matches!(kind, Kind::Int | Kind::Date | Kind::Key);
        let condition = match op {
            "$eq" => format!("{sql} = {}", self.value(name, kind, v)?),
            "$neq" => format!("({sql} <> {} OR {sql} IS NULL)", self.value(name, kind, v)?),
            "$exists" => match v {
                Value::Bool(true) => format!("{sql} IS NOT NULL"),
                Value::Bool(false) => format!("{sql} IS NULL"),
                _ => {
                    return Err(BadFilter(format!(
                        "Expected '$exists' of '{name}' to be a boolean"
                    )))
                }
            },
            "$gt" | "$gte" | "$lt" | "$lte" if ordered => {
                let cmp = match op {
                    "$gt" => ">",
                    "$gte" => ">=",
                    "$lt" => "<",
                    _ => "<=",
                };
                format!("{sql} {cmp} {}", self.value(name, kind, v)?)
            }
            "$in" | "$notIn" => {
                let Value::Array(items) = v else {
                    return Err(BadFilter(format!(
                        "Expected '{op}' of '{name}' to be a list"
                    )));
                };
                if items.is_empty() {
                    // no condition, as Camunda reads it: its Java client sends `$in: []` and
                    // `$notIn: []` beside every `$eq` the user sets
                    return Ok(());
                }
                let marks = items
                    .iter()
                    .map(|i| self.value(name, kind, i))
                    .collect::<Result<Vec<_>>>()?;
                if op == "$in" {
                    format!("{sql} IN ({})", marks.join(", "))
                } else {
                    format!("({sql} NOT IN ({}) OR {sql} IS NULL)", marks.join(", "))
                }
            }
            "$like" if matches!(kind, Kind::Str | Kind::Enum) => {
                let Value::String(pattern) = v else {
                    return Err(BadFilter(format!(
                        "Expected '$like' of '{name}' to be a string"
                    )));
                };
                let mark = self.bind(Sql::Text(like_pattern(pattern)));
                format!("{sql} LIKE {mark} ESCAPE '\\'")
            }
            _ => {
                return Err(BadFilter(format!(
                    "The operator '{op}' is not supported for '{name}'"
                )))
            }
        };
        self.sql.push(condition);
        Ok(())
    }

    fn value(&mut self, name: &str, kind: Kind, v: &Value) -> Result<String> {
        let v = sql_value(name, kind, v)?;
        Ok(self.bind(v))
    }
}

fn unknown_field(name: &str, fields: &[Field]) -> String {
    let known: Vec<&str> = fields.iter().map(|f| f.name).collect();
    format!(
        "Unknown filter field '{name}'; expected one of: {}",
        known.join(", ")
    )
}

/// A JSON value as the SQL value a field of `kind` compares with.
pub fn sql_value(name: &str, kind: Kind, v: &Value) -> Result<Sql> {
    let bad = |what: &str| BadFilter(format!("Expected '{name}' to be {what}, but was {v}"));
    match kind {
        Kind::Key => match v {
            Value::String(s) => s
                .parse::<i64>()
                .map(Sql::Integer)
                .map_err(|_| bad("a key (digits)")),
            Value::Number(n) => n.as_i64().map(Sql::Integer).ok_or_else(|| bad("a key")),
            _ => Err(bad("a key")),
        },
        Kind::Int => v
            .as_i64()
            .map(Sql::Integer)
            .ok_or_else(|| bad("an integer")),
        Kind::Bool => v
            .as_bool()
            .map(|b| Sql::Integer(b as i64))
            .ok_or_else(|| bad("a boolean")),
        Kind::Str => v
            .as_str()
            .map(|s| Sql::Text(s.to_string()))
            .ok_or_else(|| bad("a string")),
        Kind::Enum => v
            .as_str()
            .map(|s| Sql::Text(s.to_ascii_uppercase()))
            .ok_or_else(|| bad("a string")),
        Kind::Date => {
            let s = v.as_str().ok_or_else(|| bad("a date-time string"))?;
            parse_date(s)
                .map(Sql::Integer)
                .ok_or_else(|| bad("an RFC 3339 date-time"))
        }
    }
}

/// Epoch milliseconds of an RFC 3339 date-time.
pub fn parse_date(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|d| d.timestamp_millis())
}

/// Camunda's `$like` pattern (`*`, `?`, `\` escapes) as an SQL `LIKE` pattern escaped by `\`.
pub fn like_pattern(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ ('%' | '_' | '\\')) => {
                    out.push('\\');
                    out.push(n);
                }
                Some(n) => out.push(n),
                None => out.push_str("\\\\"),
            },
            '*' => out.push('%'),
            '?' => out.push('_'),
            '%' | '_' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FIELDS: &[Field] = &[
        field("processInstanceKey", "key", Kind::Key),
        field("state", "state", Kind::Enum),
        field("processDefinitionId", "bpmn_process_id", Kind::Str),
        field("startDate", "start_date", Kind::Date),
        field("processDefinitionVersion", "version", Kind::Int),
    ];

    fn compile(filter: Value) -> Result<(String, Vec<Sql>)> {
        let mut c = Conditions::default();
        c.compile(&filter, FIELDS, None)?;
        Ok((c.where_clause(), c.params))
    }

    #[test]
    fn operators_compile_to_bound_parameters() {
        let (sql, params) = compile(json!({
            "state": "active",
            "processDefinitionId": {"$in": ["a", "b"], "$like": "or*d?r"},
            "startDate": {"$gte": "2025-01-01T00:00:00Z"},
            "$or": [{"processInstanceKey": "42"}, {"processDefinitionVersion": {"$gt": 3}}]
        }))
        .unwrap();
        assert_eq!(
            sql,
            " WHERE state = ?1 AND bpmn_process_id IN (?2, ?3) AND bpmn_process_id LIKE ?4 ESCAPE '\\' \
             AND start_date >= ?5 AND ((key = ?6) OR (version > ?7))"
        );
        assert_eq!(
            params,
            vec![
                Sql::Text("ACTIVE".into()),
                Sql::Text("a".into()),
                Sql::Text("b".into()),
                Sql::Text("or%d_r".into()),
                Sql::Integer(1735689600000),
                Sql::Integer(42),
                Sql::Integer(3),
            ]
        );
    }

    #[test]
    fn errors_name_the_field() {
        let e = compile(json!({"nope": 1})).unwrap_err();
        assert!(
            e.0.contains("'nope'") && e.0.contains("processInstanceKey"),
            "{e}"
        );
        let e = compile(json!({"processInstanceKey": "x1"})).unwrap_err();
        assert!(e.0.contains("'processInstanceKey'"), "{e}");
        let e = compile(json!({"state": {"$gt": "A"}})).unwrap_err();
        assert!(e.0.contains("'$gt'") && e.0.contains("'state'"), "{e}");
        let e = compile(json!({"startDate": {"$lt": "yesterday"}})).unwrap_err();
        assert!(e.0.contains("RFC 3339"), "{e}");
        assert!(compile(json!([1])).is_err());
    }

    #[test]
    fn empty_lists_set_no_condition_as_the_java_client_sends_them() {
        let (sql, params) = compile(json!({
            "processInstanceKey": {"$eq": "42", "$in": [], "$notIn": []},
            "tags": [], "variables": [], "$or": []
        }))
        .unwrap();
        assert_eq!(params, vec![Sql::Integer(42)], "{sql}");
        let (sql, params) = compile(json!({"processDefinitionId": {"$in": []}})).unwrap();
        assert!(params.is_empty() && !sql.contains("IN"), "{sql}");
        assert!(compile(json!([1])).is_err());
    }

    #[test]
    fn like_patterns_escape_sql_wildcards() {
        assert_eq!(like_pattern("a*b?c"), "a%b_c");
        assert_eq!(like_pattern("50%_off"), "50\\%\\_off");
        assert_eq!(like_pattern("lit\\*star"), "lit*star");
        assert_eq!(like_pattern("end\\"), "end\\\\");
    }
}
