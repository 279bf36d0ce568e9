//! FEEL-scala's warnings for an expression that gave null ([`crate::Expression::warnings`]), in
//! its words and order, as Zeebe appends them to incident messages.

use std::collections::HashSet;
use std::str::FromStr;

use dsntk_feel::values::Value as FeelValue;
use dsntk_feel::{FeelScope, Name};
use dsntk_feel_parser::AstNode;
use serde_json::{Map, Value};

use crate::convert::feel_to_json;
use crate::{builtins, normalise, value_children};

/// Works out FEEL-scala's warnings for [`Expression::warnings`].
pub(crate) struct Warnings<'a> {
    pub(crate) vars: &'a Map<String, Value>,
    pub(crate) bound: &'a HashSet<Name>,
    pub(crate) scope: &'a FeelScope,
    pub(crate) seen: HashSet<Name>,
    pub(crate) lines: Vec<String>,
}

impl Warnings<'_> {
    /// Operands first, then the operation (FEEL-scala's evaluation order).
    pub(crate) fn visit(&mut self, node: &AstNode) {
        let mut children = Vec::new();
        value_children(node, |c| children.push(c));
        for child in children {
            self.visit(child);
        }
        match node {
            AstNode::Name(n) => {
                let name = n.to_string();
                if !self.bound.contains(n)
                    && !self.vars.contains_key(&name)
                    && self.seen.insert(n.clone())
                {
                    self.lines.push(format!(
                        "[NO_VARIABLE_FOUND] No variable found with name '{name}'"
                    ));
                }
            }
            AstNode::FunctionInvocation(callee, params) => {
                if let AstNode::Name(n) = &**callee {
                    let name = n.as_str();
                    let known = self.bound.contains(n)
                        || dsntk_feel::bif::Bif::from_str(name).is_ok()
                        || builtins::is_function(name);
                    if !known {
                        let count = match &**params {
                            AstNode::PositionalParameters(p) | AstNode::NamedParameters(p) => {
                                p.len()
                            }
                            _ => 0,
                        };
                        self.lines.push(format!(
                            "[NO_FUNCTION_FOUND] No function found with name '{name}' and {count} parameters"
                        ));
                    }
                }
            }
            AstNode::Lt(a, b)
            | AstNode::Gt(a, b)
            | AstNode::Le(a, b)
            | AstNode::Ge(a, b)
            | AstNode::Eq(a, b)
            | AstNode::Nq(a, b) => {
                if let Some([x, y]) = self.failed(node, [a, b]) {
                    self.lines
                        .push(format!("[NOT_COMPARABLE] Can't compare '{x}' with '{y}'"));
                    if matches!(node, AstNode::Nq(..)) {
                        self.lines
                            .push("[INVALID_TYPE] Expected boolean but found 'null'".to_string());
                    }
                }
            }
            AstNode::Add(a, b) | AstNode::Sub(a, b) | AstNode::Mul(a, b) | AstNode::Div(a, b) => {
                if let Some([x, y]) = self.failed(node, [a, b]) {
                    self.lines.push(match node {
                        AstNode::Add(..) => format!("[INVALID_TYPE] Can't add '{y}' to '{x}'"),
                        AstNode::Sub(..) => {
                            format!("[INVALID_TYPE] Can't subtract '{y}' from '{x}'")
                        }
                        AstNode::Mul(..) => {
                            format!("[INVALID_TYPE] Can't multiply '{x}' by '{y}'")
                        }
                        _ => format!("[INVALID_TYPE] Can't divide '{x}' by '{y}'"),
                    });
                }
            }
            AstNode::Exp(a, b) => {
                if let Some([x, y]) = self.failed(node, [a, b]) {
                    let not_number = if self.is_number(a) { y } else { x };
                    self.lines.push(format!(
                        "[INVALID_TYPE] Expected number but found '{not_number}'"
                    ));
                }
            }
            AstNode::Neg(a) => {
                if let Some([x]) = self.failed(node, [a]) {
                    self.lines
                        .push(format!("[INVALID_TYPE] Expected number but found '{x}'"));
                }
            }
            _ => {}
        }
    }

    /// When the operation `node` gives `null` (and reads no bound name): its operands' values
    /// as FEEL-scala writes them.
    fn failed<const N: usize>(
        &self,
        node: &AstNode,
        operands: [&AstNode; N],
    ) -> Option<[String; N]> {
        if reads_bound(node, self.bound) || !matches!(self.eval(node), FeelValue::Null(_)) {
            return None;
        }
        Some(operands.map(|o| scala_text(&self.eval(o))))
    }

    fn is_number(&self, node: &AstNode) -> bool {
        matches!(self.eval(node), FeelValue::Number(_))
    }

    /// Evaluates one node on its own, normalised as [`Expression::parse`] does.
    fn eval(&self, node: &AstNode) -> FeelValue {
        let mut node = node.clone();
        normalise(&mut node, &mut HashSet::new());
        dsntk_feel_evaluator::prepare(&node)(self.scope)
    }
}

/// Whether `node` reads a name bound inside the expression (its value is unknown here).
fn reads_bound(node: &AstNode, bound: &HashSet<Name>) -> bool {
    if bound.is_empty() {
        return false;
    }
    match node {
        AstNode::Name(n) => bound.contains(n),
        AstNode::Filter(..) => true,
        _ => {
            let mut found = false;
            value_children(node, |c| found = found || reads_bound(c, bound));
            found
        }
    }
}

/// A value as FEEL-scala writes it in a warning: `null`, `"text"`, `10`, `[1, "x"]`.
pub(crate) fn scala_text(value: &FeelValue) -> String {
    fn json_text(v: &Value) -> String {
        match v {
            Value::Array(items) => format!(
                "[{}]",
                items.iter().map(json_text).collect::<Vec<_>>().join(", ")
            ),
            Value::Object(map) => format!(
                "{{{}}}",
                map.iter()
                    .map(|(k, v)| format!("{k}:{}", json_text(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => other.to_string(),
        }
    }
    match value {
        FeelValue::Null(_) => "null".to_string(),
        other => match feel_to_json(other) {
            Ok(json) => json_text(&json),
            Err(_) => other.to_string(),
        },
    }
}
