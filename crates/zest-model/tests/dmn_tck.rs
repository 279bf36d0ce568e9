//! The DMN TCK (compliance levels 2 and 3) on Zest's DMN: 3,331 cases of 138 models, with the
//! expected results the TCK gives (as dsntk-model-evaluator 0.3.0's tests carry them; the
//! models come from the dsntk-examples crate). `dmn_tck/extract.py` made `cases.jsonl` and
//! `models.rs` from those crates.
//!
//! Each case: the input (a FEEL context) is evaluated to JSON, the decision (by name) is
//! evaluated with it as variables, and the result is compared with the expected value. A
//! failed evaluation counts as `null` (the TCK's result for an error). Zest does not pass
//! every case; `dmn_tck/passing.txt` lists those it passes, and this test fails when one of
//! them stops passing. `dmn_tck/zeebe-passing.txt` lists the cases the real Zeebe 8.8 engine
//! passes (`dmn_tck/zeebe.sh` measured it through EvaluateDecision), and Zest must pass more.

#[path = "dmn_tck/models.rs"]
mod models;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use serde_json::{Map, Value};
use zest_model::dmn::DecisionRequirements;

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dmn_tck")
}

/// A value as dsntk prints it (the TCK's expected results): null (with a reason), booleans,
/// numbers, quoted strings, temporal values unquoted, lists, contexts.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    Null,
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<Expected>),
    Context(Vec<(String, Expected)>),
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Option<Expected> {
        self.ws();
        let rest = &self.s[self.i..];
        if rest.starts_with(b"null") {
            self.i += 4;
            if self.s.get(self.i) == Some(&b'(') {
                // null(reason): skip to the matching parenthesis
                let mut depth = 0;
                while self.i < self.s.len() {
                    match self.s[self.i] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            return Some(Expected::Null);
        }
        match rest.first()? {
            b'"' => {
                self.i += 1;
                let mut out = String::new();
                while self.i < self.s.len() && self.s[self.i] != b'"' {
                    if self.s[self.i] == b'\\' && self.i + 1 < self.s.len() {
                        self.i += 1;
                    }
                    let start = self.i;
                    self.i += 1;
                    while self.i < self.s.len() && (self.s[self.i] & 0xC0) == 0x80 {
                        self.i += 1;
                    }
                    out.push_str(std::str::from_utf8(&self.s[start..self.i]).ok()?);
                }
                self.i += 1;
                Some(Expected::Text(out))
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.s.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Some(Expected::List(items));
                    }
                    items.push(self.value()?);
                    self.ws();
                    if self.s.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut entries = Vec::new();
                loop {
                    self.ws();
                    if self.s.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        return Some(Expected::Context(entries));
                    }
                    let key = if self.s.get(self.i) == Some(&b'"') {
                        match self.value()? {
                            Expected::Text(t) => t,
                            _ => return None,
                        }
                    } else {
                        let start = self.i;
                        while self.i < self.s.len() && self.s[self.i] != b':' {
                            self.i += 1;
                        }
                        std::str::from_utf8(&self.s[start..self.i])
                            .ok()?
                            .trim()
                            .to_string()
                    };
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return None;
                    }
                    self.i += 1;
                    entries.push((key, self.value()?));
                    self.ws();
                    if self.s.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                }
            }
            _ => {
                // a bare token up to the next separator at this level
                let start = self.i;
                while self.i < self.s.len() && !matches!(self.s[self.i], b',' | b']' | b'}') {
                    self.i += 1;
                }
                let token = std::str::from_utf8(&self.s[start..self.i]).ok()?.trim();
                Some(match token {
                    "true" => Expected::Bool(true),
                    "false" => Expected::Bool(false),
                    t => match t.parse::<f64>() {
                        Ok(n) => Expected::Number(n),
                        Err(_) => Expected::Text(t.to_string()),
                    },
                })
            }
        }
    }
}

fn parse_expected(text: &str) -> Option<Expected> {
    let mut r = Reader {
        s: text.as_bytes(),
        i: 0,
    };
    let v = r.value()?;
    r.ws();
    (r.i == r.s.len()).then_some(v)
}

/// A temporal or textual value in one spelling: Zest writes a date and time in a named zone
/// as Zeebe does (`...+01:00[Europe/Paris]`) and local times as Java does (`10:30`); dsntk
/// writes `...@Europe/Paris` and `10:30:00`.
fn canonical_text(t: &str) -> String {
    let mut t = t.to_string();
    if let Some(rest) = t.strip_suffix(']') {
        if let Some((local, zone)) = rest.rsplit_once('[') {
            let cut = local
                .rfind(['+', '-', 'Z'])
                .filter(|&i| i > 10)
                .unwrap_or(local.len());
            t = format!("{}@{zone}", &local[..cut]);
        }
    }
    let bytes = t.as_bytes();
    if t.len() == 5 && bytes[2] == b':' && t.chars().filter(|c| c.is_ascii_digit()).count() == 4 {
        t.push_str(":00");
    }
    t
}

fn same(expected: &Expected, actual: &Value) -> bool {
    match (expected, actual) {
        (Expected::Null, Value::Null) => true,
        (Expected::Bool(a), Value::Bool(b)) => a == b,
        (Expected::Number(a), Value::Number(b)) => {
            let b = b.as_f64().unwrap_or(f64::NAN);
            a == &b || ((a - b).abs() <= 1e-9 * a.abs().max(b.abs()))
        }
        (Expected::Text(a), Value::String(b)) => canonical_text(a) == canonical_text(b),
        (Expected::List(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        // FEEL's singleton lists: a list of one is the same as the item
        (Expected::List(a), b) if a.len() == 1 => same(&a[0], b),
        (Expected::Context(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => false,
    }
}

struct Case {
    id: String,
    model: String,
    decision: String,
    input: String,
    expected: String,
}

fn cases() -> Vec<Case> {
    std::fs::read_to_string(dir().join("cases.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<String> = serde_json::from_str(l).unwrap();
            let [id, model, decision, input, expected] = <[String; 5]>::try_from(v).unwrap();
            Case {
                id,
                model,
                decision,
                input,
                expected,
            }
        })
        .collect()
}

/// Whether Zest gives the expected result for a case.
fn passes(case: &Case, graphs: &mut HashMap<String, Option<DecisionRequirements>>) -> bool {
    let show = std::env::var("DMN_TCK_SHOW").is_ok_and(|m| m == case.model || m == "ALL");
    let graph = graphs.entry(case.model.clone()).or_insert_with(|| {
        let xml = models::model(&case.model)?;
        let parsed = zest_model::parse_dmn(&format!("{}.dmn", case.model), xml.as_bytes());
        if let (true, Err(e)) = (show, &parsed) {
            println!("{e}");
        }
        parsed.ok()
    });
    let Some(graph) = graph else {
        return false;
    };
    let Some(decision) = graph.decisions.iter().find(|d| d.name == case.decision) else {
        return false;
    };
    let input = zest_feel::Expression::parse(&case.input)
        .ok()
        .and_then(|e| e.evaluate(&Map::new()).ok());
    let Some(Value::Object(vars)) = input else {
        if show {
            println!("{}: the input does not evaluate: {}", case.id, case.input);
        }
        return false;
    };
    let Some(expected) = parse_expected(&case.expected) else {
        return false;
    };
    let outcome = graph.evaluate(&decision.id, &vars).map(|e| e.result);
    let actual = match &outcome {
        Some(Ok(v)) => v.clone(),
        // an error is null in the TCK
        Some(Err(_)) => Value::Null,
        None => return false,
    };
    let ok = same(&expected, &actual);
    // DMN_TCK_SHOW=MODEL prints the failures of a model (while working on it)
    if !ok && show {
        println!(
            "{} {}: expected {}, got {:?}",
            case.id, case.decision, case.expected, outcome
        );
    }
    ok
}

fn listed(file: &str) -> BTreeSet<String> {
    std::fs::read_to_string(dir().join(file))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// For `dmn_tck/zeebe.sh`: the inputs as JSON (`DMN_TCK_INPUTS=file`), and Zeebe's passing
/// cases from its results (`DMN_TCK_ZEEBE=file`: one `[id, output, deployed]` per line, the output as
/// Zeebe's JSON value, null when the evaluation failed; cases of a model Zeebe refused are
/// left out, so they fail), judged like Zest's.
fn zeebe_tools(cases: &[Case]) {
    if let Ok(path) = std::env::var("DMN_TCK_INPUTS") {
        let mut out = String::new();
        for c in cases {
            let input = zest_feel::Expression::parse(&c.input)
                .ok()
                .and_then(|e| e.evaluate(&Map::new()).ok());
            if let Some(input) = input {
                let line = serde_json::json!([c.id, c.model, c.decision, input]);
                out += &format!("{line}\n");
            }
        }
        std::fs::write(path, out).unwrap();
    }
    if let Ok(path) = std::env::var("DMN_TCK_ZEEBE") {
        // [id, output, whether Zeebe had the decision (it deployed the model)]
        let outputs: HashMap<String, Value> = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter_map(|l| {
                let (id, v, deployed): (String, Value, bool) = serde_json::from_str(l).unwrap();
                deployed.then_some((id, v))
            })
            .collect();
        let mut text = String::from(
            "# DMN TCK cases the real Zeebe 8.8 engine passes (dmn_tck/zeebe.sh, EvaluateDecision)\n",
        );
        for c in cases {
            let (Some(output), Some(expected)) = (outputs.get(&c.id), parse_expected(&c.expected))
            else {
                continue;
            };
            if same(&expected, output) {
                text += &format!("{}\n", c.id);
            }
        }
        std::fs::write(dir().join("zeebe-passing.txt"), text).unwrap();
    }
}

#[test]
fn the_dmn_tck_cases_zest_passes_keep_passing_and_outnumber_zeebes() {
    let cases = cases();
    zeebe_tools(&cases);
    let mut graphs = HashMap::new();
    let passing: BTreeSet<String> = cases
        .iter()
        .filter(|c| passes(c, &mut graphs))
        .map(|c| c.id.clone())
        .collect();
    if std::env::var("DMN_TCK_WRITE").is_ok() {
        let text: String = passing.iter().map(|id| format!("{id}\n")).collect();
        std::fs::write(dir().join("passing.txt"), text).unwrap();
    }
    let known = listed("passing.txt");
    let lost: Vec<&String> = known.difference(&passing).collect();
    assert!(
        lost.is_empty(),
        "{} TCK cases Zest passed before fail now: {lost:?}",
        lost.len()
    );
    let zeebe = listed("zeebe-passing.txt");
    println!(
        "DMN TCK: Zest passes {} of {} cases, Zeebe 8.8 {}",
        passing.len(),
        cases.len(),
        zeebe.len()
    );
    let only_zeebe: Vec<&String> = zeebe.difference(&passing).collect();
    assert!(
        only_zeebe.is_empty(),
        "the real Zeebe engine passes TCK cases Zest fails: {only_zeebe:?}"
    );
    assert!(
        passing.len() > zeebe.len(),
        "Zest passes {} TCK cases, Zeebe {}",
        passing.len(),
        zeebe.len()
    );
}
