//! Property tests of the FEEL adapter: any text, and any combination of FEEL tokens, either
//! parses or is refused with a clear error, and whatever parses evaluates against arbitrary
//! variables without a panic escaping (dsntk's own panics are caught and reported as errors).

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use zest_feel::Expression;

/// Pieces of FEEL, including the ones that stress a parser: unbalanced brackets, ranges,
/// quantifiers, filters, paths, function calls, huge numbers and odd literals.
const TOKENS: &[&str] = &[
    "x",
    "y",
    "items",
    "a.b",
    " ",
    "1",
    "0",
    "-1",
    "1.5",
    "1e400",
    "99999999999999999999999999999999999",
    "\"s\"",
    "\"\"",
    "\"\\u0000\"",
    "null",
    "true",
    "false",
    "+",
    "-",
    "*",
    "/",
    "**",
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "and",
    "or",
    "not(",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    ".",
    "..",
    "?",
    "if",
    "then",
    "else",
    "for",
    "in",
    "return",
    "some",
    "every",
    "satisfies",
    "between",
    "instance of",
    "function(",
    "string length(",
    "sum(",
    "count(",
    "date(",
    "duration(",
    "@\"",
    "now()",
    "today()",
    "substring(",
    "upper case(",
    "list contains(",
    "context put(",
    "range",
    "number",
    "string",
    "date and time(\"2024-01-01T00:00:00Z\")",
    "P1D",
    "\"PT1H\"",
    "[1..3]",
    "item",
    "index of(",
    "is defined(",
    "\u{1F600}",
    "\\",
    "'",
    "#",
    ";",
];

fn feel_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..24).prop_map(|t| t.join(" "))
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        prop::collection::vec(any::<char>(), 0..8)
            .prop_map(|c| Value::String(c.into_iter().collect())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["a", "b", "x", "y"]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn variables() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(
        prop::sample::select(vec!["x", "y", "items", "a", "item"]),
        json_value(),
        0..5,
    )
    .prop_map(|m| m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn token_soup_parses_or_fails_clearly_and_evaluates_without_panic(
        text in feel_text(),
        vars in variables(),
    ) {
        match Expression::parse(&text) {
            Ok(expr) => {
                // Ok or Err, never a panic; an error names the expression
                if let Err(e) = expr.evaluate(&vars) {
                    prop_assert!(e.to_string().contains("expression"), "{e}");
                }
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(!msg.is_empty());
                prop_assert!(msg.contains("expression"), "{msg}");
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(expr) = Expression::parse(&text) {
            let _ = expr.evaluate(&Map::new());
        }
    }
}
