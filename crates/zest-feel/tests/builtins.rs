//! Every FEEL built-in function of Camunda 8.8 against the real Zeebe engine: each line of
//! `tests/anchor/feel_builtins.txt` is evaluated by Zest on its own and compared with the value
//! Zeebe gave for it (`tests/anchor/scenarios/feel_builtins.zeebe`, recorded with the anchor).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use zest_feel::Expression;

fn anchor() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/anchor")
}

/// Zeebe's result: the value of the variable `r` in the recorded stream.
fn zeebe_values() -> Map<String, Value> {
    let dump = std::fs::read_to_string(anchor().join("scenarios/feel_builtins.zeebe")).unwrap();
    let line = dump
        .lines()
        .find_map(|l| l.strip_prefix("E VARIABLE CREATED r="))
        .expect("Zeebe's dump holds the result r");
    match serde_json::from_str(line).unwrap() {
        Value::Object(m) => m,
        other => panic!("r is not a context: {other}"),
    }
}

/// Numbers compared as Zeebe stores them (a double when it is not an integer).
fn same(zest: &Value, zeebe: &Value) -> bool {
    match (zest, zeebe) {
        (Value::Number(a), Value::Number(b)) => {
            a.as_f64().zip(b.as_f64()).is_some_and(|(x, y)| x == y)
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => zest == zeebe,
    }
}

#[test]
fn every_builtin_gives_what_zeebe_gives() {
    let zeebe = zeebe_values();
    let vars: Map<String, Value> = serde_json::from_str(r#"{"x": {"a": 1}}"#).unwrap();
    let text = std::fs::read_to_string(anchor().join("feel_builtins.txt")).unwrap();
    let mut differences = Vec::new();
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let (name, source) = line.split_once('|').unwrap();
        let expected = zeebe
            .get(name)
            .unwrap_or_else(|| panic!("Zeebe gave no value for {name}"));
        let got = Expression::parse(source)
            .map_err(|e| e.message)
            .and_then(|e| e.evaluate(&vars).map_err(|e| e.message));
        checked += 1;
        match got {
            Ok(v) if same(&v, expected) => {}
            Ok(v) => differences.push(format!("{name}: {source} = {v}, Zeebe: {expected}")),
            Err(e) => differences.push(format!("{name}: {source} fails ({e}), Zeebe: {expected}")),
        }
    }
    assert_eq!(
        checked,
        zeebe.len(),
        "every entry of Zeebe's result is checked"
    );
    assert!(
        differences.is_empty(),
        "{} of {checked} built-in calls differ from Zeebe:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// DMN 1.4 and 1.5 functions that FEEL-scala lacks: Zeebe 8.8 answers null (seen with the
/// anchor, left out of the list above), Zest the DMN result.
#[test]
fn dmn_functions_zeebe_lacks_give_their_dmn_result() {
    let eval = |s: &str| Expression::parse(s).unwrap().evaluate(&Map::new()).unwrap();
    assert_eq!(eval(r#"is(date("2024-02-29"), date("2024-02-29"))"#), true);
    assert_eq!(eval("is(1, \"1\")"), false);
    assert_eq!(
        eval("list replace([1,2,3], 2, 9)"),
        serde_json::json!([1, 9, 3])
    );
    assert_eq!(eval(r#"2 in range("[1..3]")"#), true);
}

/// Where Zest is right and Zeebe 8.8 is not (seen with the anchor, left out of the list above).
#[test]
fn where_zeebe_loses_precision_zest_does_not() {
    let eval = |s: &str| Expression::parse(s).unwrap().evaluate(&Map::new()).unwrap();
    // Zeebe: "PT1S" (the fraction of the seconds is dropped)
    assert_eq!(eval(r#"duration("PT1.5S")"#), "PT1.5S");
    assert_eq!(eval(r#"duration("PT1.5S") + duration("PT1.5S")"#), "PT3S");
    // Zeebe: -6101065172474983726 (stored as a 64-bit integer, it wraps around)
    assert_eq!(
        eval("12345678901234567890").to_string(),
        "12345678901234567890"
    );
}
#[test]
fn zoned_date_times_read_back_as_zeebe_writes_them() {
    // Zeebe writes a date and time in a named zone as 2024-02-29T10:30:00+01:00[Europe/Berlin];
    // a variable holding that text converts back with date and time()
    let vars: Map<String, Value> =
        serde_json::from_str(r#"{"x": "2024-02-29T10:30:00+01:00[Europe/Berlin]"}"#).unwrap();
    let e = Expression::parse(
        "date and time(x) = date and time(\"2024-02-29T10:30:00@Europe/Berlin\")",
    )
    .unwrap();
    assert_eq!(e.evaluate(&vars).unwrap(), Value::Bool(true));
    let e = Expression::parse("date and time(x)").unwrap();
    assert_eq!(e.evaluate(&vars).unwrap(), vars["x"]);
}
