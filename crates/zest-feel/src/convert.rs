//! JSON values in, JSON values out: Zest's variables are JSON; FEEL works on dsntk's values.
//! Temporal results are written as Zeebe writes them.

use std::str::FromStr;

use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value as FeelValue;
use dsntk_feel::{FeelNumber, Name};
use dsntk_feel_temporal::{FeelDateTime, FeelTime, FeelZone};
use serde_json::{Map, Value};

/// JSON -> FEEL. Objects become contexts (dsntk contexts are sorted by key).
pub(crate) fn json_to_feel(value: &Value) -> FeelValue {
    match value {
        Value::Null => FeelValue::Null(None),
        Value::Bool(b) => FeelValue::Boolean(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                FeelValue::Number(FeelNumber::from(i))
            } else if let Some(u) = n.as_u64() {
                FeelValue::Number(FeelNumber::from(u))
            } else {
                // Shortest round-trip text of the f64 (e.g. `9.734199999999999e3`), parsed into
                // a decimal exactly.
                let f = n.as_f64().unwrap_or(f64::NAN);
                match FeelNumber::from_str(&format!("{f:e}")) {
                    Ok(number) => FeelValue::Number(number),
                    Err(_) => {
                        FeelValue::Null(Some(format!("number {n} is not representable in FEEL")))
                    }
                }
            }
        }
        Value::String(s) => FeelValue::String(s.clone()),
        Value::Array(items) => FeelValue::List(items.iter().map(json_to_feel).collect()),
        Value::Object(map) => {
            let mut ctx = FeelContext::default();
            for (key, value) in map {
                ctx.set_entry(&Name::from(key), json_to_feel(value));
            }
            FeelValue::Context(ctx)
        }
    }
}

/// FEEL -> JSON. On failure returns a description of what could not be converted.
pub(crate) fn feel_to_json(value: &FeelValue) -> Result<Value, String> {
    to_json(value, false)
}

/// FEEL -> JSON, leaving out the entries of contexts that are functions (a DMN context that
/// defines functions for its other entries).
pub(crate) fn feel_to_json_without_functions(value: &FeelValue) -> Result<Value, String> {
    to_json(value, true)
}

fn to_json(value: &FeelValue, skip_functions: bool) -> Result<Value, String> {
    let feel_to_json = |v: &FeelValue| to_json(v, skip_functions);
    Ok(match value {
        FeelValue::Null(_) => Value::Null,
        FeelValue::Boolean(b) => Value::Bool(*b),
        FeelValue::Number(n) => number_to_json(n)?,
        FeelValue::String(s) => Value::String(s.clone()),
        FeelValue::List(items) => {
            Value::Array(items.iter().map(feel_to_json).collect::<Result<_, _>>()?)
        }
        FeelValue::Context(ctx) => {
            let mut map = Map::with_capacity(ctx.len());
            for (name, value) in ctx.iter() {
                if skip_functions && matches!(value, FeelValue::FunctionDefinition(..)) {
                    continue;
                }
                map.insert(name.to_string(), feel_to_json(value)?);
            }
            Value::Object(map)
        }
        // a local time and a date and time in a named zone as Zeebe writes them (Java's forms)
        FeelValue::Time(t) if matches!(t.zone(), FeelZone::Local) => {
            Value::String(java_local_time(t))
        }
        FeelValue::Time(t) => Value::String(feel_scala_time(t)),
        FeelValue::DateTime(dt) if matches!(dt.time().zone(), FeelZone::Zone(_)) => {
            Value::String(java_zoned_date_time(dt))
        }
        // ISO 8601 texts
        FeelValue::Date(_)
        | FeelValue::DateTime(_)
        | FeelValue::DaysAndTimeDuration(_)
        | FeelValue::YearsAndMonthsDuration(_) => Value::String(value.to_string()),
        FeelValue::Transparent(inner) => feel_to_json(inner)?,
        other => return Err(format!("of type {}", other.type_of())),
    })
}

/// A local time as Java's `LocalTime.toString()` writes it, which Zeebe stores: `10:30` (no
/// seconds when they and the fraction are zero), `10:30:15`, `10:30:00.500` (the fraction in
/// groups of three digits).
fn java_local_time(t: &FeelTime) -> String {
    let mut out = format!("{:02}:{:02}", t.hour(), t.minute());
    let nanos = t.nanos();
    if t.second() != 0 || nanos != 0 {
        out += &format!(":{:02}", t.second());
    }
    if nanos != 0 {
        if nanos.is_multiple_of(1_000_000) {
            out += &format!(".{:03}", nanos / 1_000_000);
        } else if nanos.is_multiple_of(1_000) {
            out += &format!(".{:06}", nanos / 1_000);
        } else {
            out += &format!(".{nanos:09}");
        }
    }
    out
}

/// A time with an offset or a zone as Zeebe writes it (FEEL-scala's `ZonedTime.format`): the
/// seconds always, the fraction without trailing zeros, then Java's offset id (`Z`, `-01:00`,
/// `+05:30:15`) or `@` and the zone: `12:59:01.3-01:00`, `10:00:00Z`, `10:00:00@Europe/Paris`.
/// (dsntk writes an offset between -01:00 and 00:00 with a `+`.)
fn feel_scala_time(t: &FeelTime) -> String {
    let mut out = format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
    if t.nanos() != 0 {
        let fraction = format!("{:09}", t.nanos());
        out.push('.');
        out.push_str(fraction.trim_end_matches('0'));
    }
    match t.zone() {
        FeelZone::Local => {}
        FeelZone::Utc => out.push('Z'),
        FeelZone::Offset(seconds) => out += &offset_id(*seconds),
        FeelZone::Zone(zone) => {
            out.push('@');
            out += zone;
        }
    }
    out
}

/// Java's `ZoneOffset.getId()`: `Z`, `+01:00`, `-00:30`, `+05:30:15`.
fn offset_id(seconds: i32) -> String {
    if seconds == 0 {
        return "Z".to_string();
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let abs = seconds.unsigned_abs();
    let mut id = format!("{sign}{:02}:{:02}", abs / 3600, (abs % 3600) / 60);
    if !abs.is_multiple_of(60) {
        id += &format!(":{:02}", abs % 60);
    }
    id
}

/// A date and time in a named zone as Zeebe writes it: `2024-02-29T10:30:00+01:00[Europe/Berlin]`
/// (`Z` for a zero offset).
fn java_zoned_date_time(dt: &FeelDateTime) -> String {
    let FeelZone::Zone(zone) = dt.time().zone().clone() else {
        return dt.to_string();
    };
    let offset = chrono::DateTime::<chrono::FixedOffset>::try_from(dt.clone())
        .map(|d| d.offset().local_minus_utc())
        .unwrap_or(0);
    let offset = offset_id(offset);
    let t = dt.time();
    let local = FeelTime::local(t.hour(), t.minute(), t.second(), t.nanos());
    format!("{}T{local}{offset}[{zone}]", dt.date())
}

fn number_to_json(n: &FeelNumber) -> Result<Value, String> {
    if n.is_integer() {
        if let Ok(i) = i64::try_from(n) {
            return Ok(Value::from(i));
        }
        if let Ok(u) = u64::try_from(n) {
            return Ok(Value::from(u));
        }
    }
    // Debug prints the raw decimal128 text, e.g. `+9734199999999999E-12`, which f64 parses.
    let text = format!("{n:?}");
    text.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
        .ok_or_else(|| format!("number {n} (outside the JSON number range)"))
}
