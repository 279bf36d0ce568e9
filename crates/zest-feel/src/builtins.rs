//! Camunda 8.8's FEEL built-in functions (FEEL-scala) that dsntk lacks, or has with other
//! overloads or results: `is defined`, `get or else`, `assert`, `extract`, `trim`, `uuid`,
//! `to base64`, `is blank`, `is empty`, `duplicate values`, `partition`, `and`/`or` of a list,
//! `random number`, `put`, `put all`, `last day of month`, `number(from)`, `string join` with a
//! prefix and suffix, `get value` with a path, `time` of a text without seconds,
//! `date and time` with a time zone, `string` of
//! contexts and lists as FEEL-scala writes them, `min`/`max` of any comparable values.
//! DMN 1.4/1.5 functions that FEEL-scala lacks (`is`, `range`, `list replace`: null in Zeebe
//! 8.8) are dsntk's: Zest gives their DMN result.
//!
//! How: at parse time [`rewrite`] renames each call that one of these serves to an internal
//! name (`name#arity`), which no FEEL text can spell; the expression keeps the function values
//! it needs ([`function`]), and evaluation puts them in scope beside the variables. A function
//! value's body is Rust: it reads its parameters from the scope. Calls that only dsntk serves
//! are not touched; names the expression binds itself (context entries, parameters) are never
//! renamed. Every result is checked against the real Zeebe engine by
//! `crates/zest-feel/tests/builtins.rs`.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use dsntk_feel::closure::Closure;
use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value;
use dsntk_feel::{FeelNumber, FeelScope, FeelType, FunctionBody, Name};
use dsntk_feel_parser::AstNode;

/// A built-in that dsntk lacks: its FEEL name, its parameters, and its body.
struct Extension {
    name: &'static str,
    params: &'static [&'static str],
    body: fn(&[Value]) -> Value,
}

/// The extensions, by FEEL name and number of parameters.
const EXTENSIONS: &[Extension] = &[
    ext("is defined", &["value"], is_defined),
    ext("get or else", &["value", "default"], get_or_else),
    ext("assert", &["value", "condition"], assert2),
    ext("assert", &["value", "condition", "cause"], assert3),
    ext("number", &["from"], number_from),
    ext("extract", &["string", "pattern"], extract),
    ext("trim", &["string"], trim),
    ext("uuid", &[], uuid),
    ext("to base64", &["value"], to_base64),
    // FEEL-scala decodes into bytes, which Zeebe cannot store: null
    ext("from base64", &["value"], null1),
    ext("is blank", &["string"], is_blank),
    ext("is empty", &["list"], is_empty),
    ext("duplicate values", &["list"], duplicate_values),
    ext("partition", &["list", "size"], partition),
    ext("and", &["list"], all_true),
    ext("or", &["list"], any_true),
    ext("random number", &[], random_number),
    ext("put", &["context", "key", "value"], put),
    ext("put all", &["contexts"], put_all),
    ext("last day of month", &["date"], last_day_of_month),
    ext(
        "string join",
        &["list", "delimiter", "prefix", "suffix"],
        string_join4,
    ),
    ext("get value", &["context", "key"], get_value),
    ext("time", &["from"], time_text),
    ext("date and time", &["from"], date_and_time_text),
    ext("date and time", &["from", "timezone"], date_and_time_zone),
    ext("string", &["from"], string),
    ext("substring", &["string", "start position"], substring2),
    ext("min", &["list"], min),
    ext("max", &["list"], max),
];

const fn ext(
    name: &'static str,
    params: &'static [&'static str],
    body: fn(&[Value]) -> Value,
) -> Extension {
    Extension { name, params, body }
}

/// The internal name of an extension call with `arity` arguments.
fn internal_name(name: &str, arity: usize) -> String {
    format!("{name}#{arity}")
}

fn find(name: &str, arity: Option<usize>) -> Option<&'static Extension> {
    EXTENSIONS
        .iter()
        .find(|e| e.name == name && arity.is_none_or(|a| a == e.params.len()))
}

/// True when `name` is a function this module serves (with some number of parameters).
pub(crate) fn is_function(name: &str) -> bool {
    find(name, None).is_some()
}

/// Renames the calls that an extension serves (see the module docs) and collects the internal
/// names used. `bound` holds the names the expression binds itself.
pub(crate) fn rewrite(
    node: &mut AstNode,
    bound: &std::collections::HashSet<Name>,
    used: &mut Vec<String>,
) {
    if let AstNode::FunctionInvocation(callee, params) = node {
        if let AstNode::Name(name) = &**callee {
            let text = name.to_string();
            let arity = match &**params {
                AstNode::PositionalParameters(p) => Some(p.len()),
                // named parameters: the extension whose parameter count matches
                AstNode::NamedParameters(p) => Some(p.len()),
                _ => None,
            };
            // named arguments with other names (`get value(m: .., key: ..)`, the DMN
            // signature) are the standard function's, dsntk's
            let names_match = |e: &Extension| match &**params {
                AstNode::NamedParameters(p) => p.iter().all(|arg| match arg {
                    AstNode::NamedParameter(n, _) => match &**n {
                        AstNode::ParameterName(n) => e.params.contains(&n.to_string().as_str()),
                        _ => false,
                    },
                    _ => false,
                }),
                _ => true,
            };
            if !bound.contains(name) {
                if let Some(e) = arity
                    .and_then(|a| find(&text, Some(a)))
                    .filter(|e| names_match(e))
                {
                    let internal = internal_name(e.name, e.params.len());
                    **callee = AstNode::Name(Name::from(internal.as_str()));
                    if !used.contains(&internal) {
                        used.push(internal);
                    }
                }
            }
        }
    }
    crate::for_each_child_mut(node, |child| rewrite(child, bound, used));
}

/// The function value of an internal name (built once).
pub(crate) fn function(internal: &str) -> Option<Value> {
    static FUNCTIONS: OnceLock<BTreeMap<String, Value>> = OnceLock::new();
    FUNCTIONS
        .get_or_init(|| {
            EXTENSIONS
                .iter()
                .map(|e| (internal_name(e.name, e.params.len()), function_value(e)))
                .collect()
        })
        .get(internal)
        .cloned()
}

fn function_value(e: &'static Extension) -> Value {
    let params: Vec<(Name, FeelType)> = e
        .params
        .iter()
        .map(|p| (Name::from(*p), FeelType::Any))
        .collect();
    let names: Vec<Name> = params.iter().map(|(n, _)| n.clone()).collect();
    let body = e.body;
    let evaluator: dsntk_feel::Evaluator = Box::new(move |scope: &FeelScope| {
        let args: Vec<Value> = names
            .iter()
            .map(|n| scope.get_value(n).unwrap_or(Value::Null(None)))
            .collect();
        body(&args)
    });
    Value::FunctionDefinition(
        params,
        FunctionBody::LiteralExpression(Arc::new(evaluator)),
        false,
        Closure::default(),
        FeelContext::default(),
        FeelType::Any,
    )
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn null(why: impl Into<String>) -> Value {
    Value::Null(Some(why.into()))
}

fn is_null(v: &Value) -> bool {
    matches!(v, Value::Null(_))
}

fn num(n: i64) -> Value {
    Value::Number(FeelNumber::from(n))
}

fn as_usize(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) if n.is_integer() => {
            i64::try_from(n).ok().and_then(|i| usize::try_from(i).ok())
        }
        _ => None,
    }
}

/// A random u64 from the standard library's randomly seeded hasher (no extra dependency).
fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x9e37_79b9_7f4a_7c15);
    h.finish()
}

// ---------------------------------------------------------------------------------------------
// Bodies; `a` holds the arguments in parameter order.

fn is_defined(a: &[Value]) -> Value {
    Value::Boolean(!is_null(&a[0]))
}

fn get_or_else(a: &[Value]) -> Value {
    if is_null(&a[0]) {
        a[1].clone()
    } else {
        a[0].clone()
    }
}

/// The trace that makes an evaluation fail (not null): FEEL-scala's assert is a failure.
pub(crate) const ASSERT_TRACE: &str = "zest assert: ";

fn assert2(a: &[Value]) -> Value {
    assert_with(&a[0], &a[1], "The condition is not fulfilled")
}

fn assert3(a: &[Value]) -> Value {
    let cause = match &a[2] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    assert_with(&a[0], &a[1], &cause)
}

fn assert_with(value: &Value, condition: &Value, cause: &str) -> Value {
    if matches!(condition, Value::Boolean(true)) {
        value.clone()
    } else {
        null(format!("{ASSERT_TRACE}{cause}"))
    }
}

fn number_from(a: &[Value]) -> Value {
    match &a[0] {
        Value::String(s) => match FeelNumber::from_str(s.trim()) {
            Ok(n) if !s.trim().is_empty() => Value::Number(n),
            _ => null(format!("'{s}' is not a number")),
        },
        Value::Number(n) => Value::Number(*n),
        other => null(format!("expected a string, found {}", other.type_of())),
    }
}

fn extract(a: &[Value]) -> Value {
    let (Value::String(s), Value::String(p)) = (&a[0], &a[1]) else {
        return null("extract(string, pattern) takes two strings");
    };
    match regex::Regex::new(p) {
        Ok(re) => Value::List(
            re.find_iter(s)
                .map(|m| Value::String(m.as_str().to_string()))
                .collect(),
        ),
        Err(e) => null(format!("invalid pattern '{p}': {e}")),
    }
}

fn trim(a: &[Value]) -> Value {
    match &a[0] {
        Value::String(s) => Value::String(s.trim().to_string()),
        _ => null("trim(string) takes a string"),
    }
}

fn uuid(_: &[Value]) -> Value {
    let (hi, lo) = (random_u64(), random_u64());
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&hi.to_be_bytes());
    b[8..].copy_from_slice(&lo.to_be_bytes());
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Value::String(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

fn to_base64(a: &[Value]) -> Value {
    use base64::Engine;
    match &a[0] {
        Value::String(s) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(s.as_bytes()))
        }
        _ => null("to base64(value) takes a string"),
    }
}

fn null1(_: &[Value]) -> Value {
    null("no function found")
}

fn is_blank(a: &[Value]) -> Value {
    match &a[0] {
        Value::String(s) => Value::Boolean(s.trim().is_empty()),
        _ => null("is blank(string) takes a string"),
    }
}

fn is_empty(a: &[Value]) -> Value {
    match &a[0] {
        Value::List(l) => Value::Boolean(l.is_empty()),
        _ => null("is empty(list) takes a list"),
    }
}

fn duplicate_values(a: &[Value]) -> Value {
    let Value::List(items) = &a[0] else {
        return null("duplicate values(list) takes a list");
    };
    let mut out: Vec<Value> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let again = items[i + 1..].iter().any(|o| o == item);
        if again && !out.contains(item) {
            out.push(item.clone());
        }
    }
    Value::List(out)
}

fn partition(a: &[Value]) -> Value {
    let (Value::List(items), Some(size)) = (&a[0], as_usize(&a[1])) else {
        return null("partition(list, size) takes a list and a positive number");
    };
    if size == 0 {
        return null("partition(list, size): size must be positive");
    }
    Value::List(
        items
            .chunks(size)
            .map(|c| Value::List(c.to_vec()))
            .collect(),
    )
}

fn all_true(a: &[Value]) -> Value {
    let Value::List(items) = &a[0] else {
        return null("and(list) takes a list of booleans");
    };
    let mut undecided = false;
    for i in items {
        match i {
            Value::Boolean(false) => return Value::Boolean(false),
            Value::Boolean(true) => {}
            _ => undecided = true,
        }
    }
    if undecided {
        null("and(list): not every item is a boolean")
    } else {
        Value::Boolean(true)
    }
}

fn any_true(a: &[Value]) -> Value {
    let Value::List(items) = &a[0] else {
        return null("or(list) takes a list of booleans");
    };
    let mut undecided = false;
    for i in items {
        match i {
            Value::Boolean(true) => return Value::Boolean(true),
            Value::Boolean(false) => {}
            _ => undecided = true,
        }
    }
    if undecided {
        null("or(list): not every item is a boolean")
    } else {
        Value::Boolean(false)
    }
}

fn random_number(_: &[Value]) -> Value {
    // 53 random bits, as a double in [0, 1)
    let bits = random_u64() >> 11;
    let f = bits as f64 / (1u64 << 53) as f64;
    match FeelNumber::from_str(&format!("{f:e}")) {
        Ok(n) => Value::Number(n),
        Err(_) => num(0),
    }
}

fn put(a: &[Value]) -> Value {
    let (Value::Context(ctx), Value::String(key)) = (&a[0], &a[1]) else {
        return null("put(context, key, value) takes a context and a string key");
    };
    let mut ctx = ctx.clone();
    ctx.set_entry(&Name::from(key.as_str()), a[2].clone());
    Value::Context(ctx)
}

fn put_all(a: &[Value]) -> Value {
    let Value::List(items) = &a[0] else {
        return null("put all(contexts) takes a list of contexts");
    };
    let mut out = FeelContext::default();
    for item in items {
        let Value::Context(ctx) = item else {
            return null("put all(contexts) takes a list of contexts");
        };
        for (k, v) in ctx.iter() {
            out.set_entry(k, v.clone());
        }
    }
    Value::Context(out)
}

fn last_day_of_month(a: &[Value]) -> Value {
    use dsntk_feel_temporal::FeelDate;
    let date = match &a[0] {
        Value::Date(d) => d.clone(),
        Value::DateTime(dt) => dt.date(),
        _ => return null("last day of month(date) takes a date"),
    };
    let (y, m, _) = date.as_tuple();
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    match FeelDate::new(ny, nm, 1).and_then(|d| d.sub_days(1)) {
        Some(d) => Value::Date(d),
        None => null("no such date"),
    }
}

fn string_join4(a: &[Value]) -> Value {
    let Value::List(items) = &a[0] else {
        return null("string join(list, delimiter, prefix, suffix) takes a list of strings");
    };
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null(_) => Some(String::new()),
        _ => None,
    };
    let (Some(delimiter), Some(prefix), Some(suffix)) = (text(&a[1]), text(&a[2]), text(&a[3]))
    else {
        return null("string join: delimiter, prefix and suffix are strings");
    };
    let mut parts = Vec::new();
    for i in items {
        match i {
            Value::String(s) => parts.push(s.clone()),
            Value::Null(_) => {}
            _ => return null("string join: the list holds something else than strings"),
        }
    }
    Value::String(format!("{prefix}{}{suffix}", parts.join(&delimiter)))
}

fn get_value(a: &[Value]) -> Value {
    let Value::Context(ctx) = &a[0] else {
        return null("get value(context, key) takes a context");
    };
    let keys: Vec<&str> = match &a[1] {
        Value::String(k) => vec![k.as_str()],
        Value::List(ks) => {
            let mut out = Vec::new();
            for k in ks {
                let Value::String(k) = k else {
                    return null("get value: the keys are strings");
                };
                out.push(k.as_str());
            }
            out
        }
        _ => return null("get value(context, key) takes a string key or a list of keys"),
    };
    let mut current = Value::Context(ctx.clone());
    for k in keys {
        current = match current {
            Value::Context(c) => match c.get_entry(&Name::from(k)) {
                Some(v) => v.clone(),
                None => return Value::Null(None),
            },
            _ => return Value::Null(None),
        };
    }
    current
}

/// `time(from)`, also for the texts FEEL-scala reads and dsntk does not: a local time without
/// seconds (`10:30`, which is how Zeebe writes a local time whose seconds are zero) and a time
/// after a `T` (`T10:30:00`, `T10:30:00+01:00`). A time with an offset or zone needs its
/// seconds in FEEL-scala too (`time("10:30+01:00")` is null there).
fn time_text(a: &[Value]) -> Value {
    if let Value::String(s) = &a[0] {
        let s = s.strip_prefix('T').unwrap_or(s);
        let b = s.as_bytes();
        let hours_minutes =
            b.len() == 5 && b[2] == b':' && [0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit());
        let text = if hours_minutes {
            format!("{s}:00")
        } else {
            s.to_string()
        };
        return crate::call_dsntk_builtin("time", &[Value::String(text)]);
    }
    crate::call_dsntk_builtin("time", a)
}

/// `date and time(from)`, also for the text Zeebe writes for a named zone
/// (`2024-02-29T10:30:00+01:00[Europe/Berlin]`, read as `...T10:30:00@Europe/Berlin`).
fn date_and_time_text(a: &[Value]) -> Value {
    if let Value::String(s) = &a[0] {
        if let Some(zone) = s.strip_suffix(']').and_then(|r| r.rsplit_once('[')) {
            let (local_and_offset, zone) = zone;
            let cut = local_and_offset
                .rfind(['+', '-', 'Z'])
                .filter(|&i| i > 10)
                .unwrap_or(local_and_offset.len());
            let text = format!("{}@{zone}", &local_and_offset[..cut]);
            return crate::call_dsntk_builtin("date and time", &[Value::String(text)]);
        }
    }
    crate::call_dsntk_builtin("date and time", a)
}

fn date_and_time_zone(a: &[Value]) -> Value {
    use chrono::{DateTime, FixedOffset, TimeZone};
    use dsntk_feel_temporal::{FeelDate, FeelDateTime, FeelTime, FeelZone};
    let Value::String(zone) = &a[1] else {
        // date and time(date, time): dsntk's
        return crate::call_dsntk_builtin("date and time", a);
    };
    let Value::DateTime(dt) = &a[0] else {
        return null("date and time(from, timezone) takes a date and time and a zone id");
    };
    let Ok(instant) = DateTime::<FixedOffset>::try_from(dt.clone()) else {
        return null("the date and time has no instant");
    };
    let Ok(tz) = zone.parse::<chrono_tz::Tz>() else {
        return null(format!("unknown time zone '{zone}'"));
    };
    let local = tz.from_utc_datetime(&instant.naive_utc()).naive_local();
    use chrono::{Datelike, Timelike};
    let date = FeelDate::new(local.year(), local.month(), local.day());
    let time = FeelTime::zone_opt(
        local.hour() as u8,
        local.minute() as u8,
        local.second() as u8,
        u64::from(local.nanosecond()),
        FeelZone::Zone(zone.clone()),
    );
    match (date, time) {
        (Some(d), Some(t)) => Value::DateTime(FeelDateTime::new(d, t)),
        _ => null("no such date and time"),
    }
}

/// FEEL-scala's text of a value (what `string(x)` gives): contexts as `{a:1}`, lists as
/// `[1, "a"]`, strings inside them quoted.
fn string(a: &[Value]) -> Value {
    match &a[0] {
        Value::Context(_) | Value::List(_) => Value::String(crate::warnings::scala_text(&a[0])),
        _ => crate::call_dsntk_builtin("string", a),
    }
}

fn substring2(a: &[Value]) -> Value {
    // FEEL-scala reads a start position of 0 as the whole string less everything: ""
    if matches!(&a[1], Value::Number(n) if n.is_zero()) && matches!(&a[0], Value::String(_)) {
        return Value::String(String::new());
    }
    crate::call_dsntk_builtin("substring", a)
}

fn min(a: &[Value]) -> Value {
    extreme(a, std::cmp::Ordering::Less, "min")
}

fn max(a: &[Value]) -> Value {
    extreme(a, std::cmp::Ordering::Greater, "max")
}

/// min/max of a list of numbers, strings, dates, times, dates and times or durations.
fn extreme(a: &[Value], wanted: std::cmp::Ordering, name: &str) -> Value {
    let Value::List(items) = &a[0] else {
        // min(1, 2, 3) and other forms: dsntk's
        return crate::call_dsntk_builtin(name, a);
    };
    let mut best: Option<&Value> = None;
    for item in items {
        best = match best {
            None => Some(item),
            Some(b) => match compare(item, b) {
                Some(o) if o == wanted => Some(item),
                Some(_) => Some(b),
                None => return null(format!("{name}: the items cannot be compared")),
            },
        };
    }
    best.cloned().unwrap_or(Value::Null(None))
}

fn compare(x: &Value, y: &Value) -> Option<std::cmp::Ordering> {
    match (x, y) {
        (Value::Number(a), Value::Number(b)) => a.partial_cmp(b),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Date(a), Value::Date(b)) => a.partial_cmp(b),
        (Value::Time(a), Value::Time(b)) => a.partial_cmp(b),
        (Value::DateTime(a), Value::DateTime(b)) => a.partial_cmp(b),
        (Value::DaysAndTimeDuration(a), Value::DaysAndTimeDuration(b)) => a.partial_cmp(b),
        (Value::YearsAndMonthsDuration(a), Value::YearsAndMonthsDuration(b)) => a.partial_cmp(b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_extension_has_a_distinct_internal_name() {
        let mut names: Vec<String> = EXTENSIONS
            .iter()
            .map(|e| internal_name(e.name, e.params.len()))
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
        for name in &names {
            assert!(function(name).is_some(), "{name}");
        }
    }

    #[test]
    fn uuids_are_version_4() {
        let Value::String(u) = uuid(&[]) else {
            panic!()
        };
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_ne!(uuid(&[]), Value::String(u), "two calls differ");
    }
}
