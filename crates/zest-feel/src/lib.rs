//! FEEL adapter: the one place where Zest talks to dsntk. Everything above sees JSON values in and
//! out; dsntk types never leak.
//!
//! API (implemented on top of the dsntk crates):
//! - `Expression::parse(source)` parses a FEEL expression (without the leading `=`), or returns a
//!   `FeelError` whose message says what is wrong.
//! - `Expression::evaluate(&vars)` evaluates it with the given variables visible by name.
//! - `evaluate_unary_tests` is left for DMN (next issue).

use serde_json::{Map, Value};

/// Why a FEEL expression failed to parse or evaluate; the message is shown to users (incident
/// texts, deployment rejections).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FeelError {
    pub message: String,
}

/// A parsed FEEL expression. Cheap to clone, shareable between threads.
#[derive(Debug, Clone)]
pub struct Expression {
    source: std::sync::Arc<str>,
}

impl Expression {
    /// Parses a FEEL expression (the text after the leading `=`).
    pub fn parse(source: &str) -> Result<Expression, FeelError> {
        // PLACEHOLDER: replaced by the dsntk-based implementation.
        Ok(Expression { source: source.trim().into() })
    }

    /// The expression text (without the leading `=`).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the expression with `vars` visible by name.
    pub fn evaluate(&self, vars: &Map<String, Value>) -> Result<Value, FeelError> {
        // PLACEHOLDER: replaced by the dsntk-based implementation.
        let _ = vars;
        Err(FeelError { message: format!("not implemented: {}", self.source) })
    }
}
