//! JSON documents as Zeebe's protocol carries them (variables are JSON objects in text).

use serde_json::{Map, Value};

/// Zeebe's name of a JSON value's type, as used in its error messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL",
        Value::Bool(_) => "BOOLEAN",
        Value::Number(_) => "NUMBER",
        Value::String(_) => "STRING",
        Value::Array(_) => "ARRAY",
        Value::Object(_) => "OBJECT",
    }
}

/// Parses a variables document: empty text and `null` are the empty document; anything else
/// must be a JSON object.
pub fn parse_document(text: &str) -> Result<Map<String, Value>, String> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(other) => Err(format!(
            "Expected document to be a root level object, but was '{}'",
            type_name(&other)
        )),
        Err(e) => Err(format!(
            "Expected document to be valid JSON, but it was not: {e}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_must_be_objects() {
        assert!(parse_document("").unwrap().is_empty());
        assert!(parse_document("null").unwrap().is_empty());
        assert_eq!(parse_document(r#"{"a":1}"#).unwrap()["a"], 1);
        assert!(parse_document("[1]").unwrap_err().contains("'ARRAY'"));
        assert!(parse_document("{").unwrap_err().contains("valid JSON"));
    }
}
