//! FEEL values that stay FEEL values: what DMN passes from one decision to the next, from one
//! context entry to the next, and into business knowledge models (dmn-scala keeps a date a date
//! there; JSON would make it a string). [`Val`] wraps dsntk's value; the caller builds lists and
//! contexts of them, tests them, and turns them into JSON for records. [`NativeFunction`] is a
//! function whose body is Rust (a DMN model's business knowledge model): FEEL calls it by name
//! like any function, with named or positional arguments.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use dsntk_feel::closure::Closure;
use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value as FeelValue;
use dsntk_feel::{FeelScope, FeelType, FunctionBody, Name};
use dsntk_feel_parser::AstNode;
use serde_json::{Map, Value};

use crate::convert::{feel_to_json, json_to_feel};
use crate::{builtins, Expression, FeelError, UnaryTests, ASSERTION_FAILURE};

/// A FEEL value: null, boolean, number, string, temporal value, list, context or function.
#[derive(Clone)]
pub struct Val(pub(crate) FeelValue);

impl std::fmt::Debug for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.to_json() {
            Ok(json) => write!(f, "{json}"),
            Err(what) => write!(f, "<{what}>"),
        }
    }
}

impl Val {
    pub fn null() -> Val {
        Val(FeelValue::Null(None))
    }

    /// A JSON value as FEEL sees a variable: objects are contexts, arrays lists.
    pub fn from_json(value: &Value) -> Val {
        Val(json_to_feel(value))
    }

    /// The value as JSON, as Zeebe writes it (temporal values as text); a function, range or
    /// type has none (`Err` says what it is).
    pub fn to_json(&self) -> Result<Value, String> {
        feel_to_json(&self.0)
    }

    /// Like [`Val::to_json`], leaving out the entries of contexts that are functions (a DMN
    /// context that defines functions for its other entries).
    pub fn to_json_without_functions(&self) -> Result<Value, String> {
        crate::convert::feel_to_json_without_functions(&self.0)
    }

    pub fn list(items: Vec<Val>) -> Val {
        Val(FeelValue::List(items.into_iter().map(|v| v.0).collect()))
    }

    /// A context of the entries (a later entry of the same name wins).
    pub fn context(entries: Vec<(String, Val)>) -> Val {
        let mut ctx = FeelContext::default();
        for (name, value) in entries {
            ctx.set_entry(&Name::from(name.as_str()), value.0);
        }
        Val(FeelValue::Context(ctx))
    }

    pub fn is_null(&self) -> bool {
        matches!(self.0, FeelValue::Null(_))
    }

    pub fn is_true(&self) -> bool {
        matches!(self.0, FeelValue::Boolean(true))
    }

    pub fn is_function(&self) -> bool {
        matches!(self.0, FeelValue::FunctionDefinition(..))
    }

    /// The items of a list; null is no items, any other value a list of itself (FEEL's
    /// singleton lists).
    pub fn into_items(self) -> Vec<Val> {
        match self.0 {
            FeelValue::List(items) => items.into_iter().map(Val).collect(),
            FeelValue::Null(_) => Vec::new(),
            other => vec![Val(other)],
        }
    }

    /// The entries of a context (none for any other value).
    pub fn entries(&self) -> Vec<(String, Val)> {
        match &self.0 {
            FeelValue::Context(ctx) => ctx
                .iter()
                .map(|(name, value)| (name.to_string(), Val(value.clone())))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The entry `key` of a context.
    pub fn get(&self, key: &str) -> Option<Val> {
        match &self.0 {
            FeelValue::Context(ctx) => ctx.get_entry(&Name::from(key)).cloned().map(Val),
            _ => None,
        }
    }

    /// Calls the value, a function, with its arguments by parameter name (a missing one is
    /// null). `Err` when the value is not a function.
    pub fn call(&self, args: &[(String, Val)]) -> Result<Val, String> {
        let FeelValue::FunctionDefinition(params, ..) = &self.0 else {
            return Err("the value is not a function".into());
        };
        let callee = Name::from("zest function");
        let mut ctx = FeelContext::default();
        ctx.set_entry(&callee, self.0.clone());
        let mut positional = Vec::with_capacity(params.len());
        for (i, (param, _)) in params.iter().enumerate() {
            let arg = Name::from(format!("zest argument {i}").as_str());
            let value = args
                .iter()
                .rev()
                .find(|(n, _)| n.as_str() == param.as_str())
                .map_or(FeelValue::Null(None), |(_, v)| v.0.clone());
            ctx.set_entry(&arg, value);
            positional.push(AstNode::Name(arg));
        }
        let call = AstNode::FunctionInvocation(
            Box::new(AstNode::Name(callee)),
            Box::new(AstNode::PositionalParameters(positional)),
        );
        catch_unwind(AssertUnwindSafe(|| {
            let evaluator = dsntk_feel_evaluator::prepare(&call);
            Val(evaluator(&FeelScope::from(ctx)))
        }))
        .map_err(|_| "internal FEEL error (the FEEL library panicked)".to_string())
    }
}

impl From<NativeFunction> for Val {
    fn from(f: NativeFunction) -> Val {
        Val(f.feel_value())
    }
}

/// The body of a [`NativeFunction`]: the arguments in parameter order, the result or why it
/// failed (the call is then null, as FEEL's failures are).
pub type NativeBody = Arc<dyn Fn(&[Val]) -> Result<Val, String> + Send + Sync>;

/// A function with named parameters and a Rust body.
#[derive(Clone)]
pub struct NativeFunction {
    pub params: Vec<String>,
    pub body: NativeBody,
}

impl std::fmt::Debug for NativeFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeFunction")
            .field("params", &self.params)
            .finish()
    }
}

impl NativeFunction {
    /// The function as a FEEL function value (positional and named calls work alike).
    fn feel_value(&self) -> FeelValue {
        let names: Vec<Name> = self.params.iter().map(|p| Name::from(p.as_str())).collect();
        let params: Vec<(Name, FeelType)> =
            names.iter().map(|n| (n.clone(), FeelType::Any)).collect();
        let body = self.body.clone();
        let evaluator: dsntk_feel::Evaluator = Box::new(move |scope: &FeelScope| {
            let args: Vec<Val> = names
                .iter()
                .map(|n| Val(scope.get_value(n).unwrap_or(FeelValue::Null(None))))
                .collect();
            match body(&args) {
                Ok(value) => value.0,
                Err(why) => FeelValue::Null(Some(why)),
            }
        });
        FeelValue::FunctionDefinition(
            params,
            FunctionBody::LiteralExpression(Arc::new(evaluator)),
            false,
            Closure::default(),
            FeelContext::default(),
            FeelType::Any,
        )
    }
}

/// The FEEL context of an evaluation: the JSON variables the expression reads, then the typed
/// bindings it reads (a later one wins) and every function among them (calls do not count as
/// reads, see `normalise`).
fn with_typed(mut ctx: FeelContext, names: &[Name], typed: &[(String, Val)]) -> FeelContext {
    for (name, value) in typed {
        let name = Name::from(name.as_str());
        if value.is_function() || names.binary_search(&name).is_ok() {
            ctx.set_entry(&name, value.0.clone());
        }
    }
    ctx
}

impl Expression {
    /// Evaluates the expression as [`Expression::evaluate`] does, with `typed` visible by name
    /// beside (and over) `vars`, and its value kept a FEEL value.
    pub fn evaluate_val(
        &self,
        vars: &Map<String, Value>,
        typed: &[(String, Val)],
    ) -> Result<Val, FeelError> {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let ctx = with_typed(self.variables_context(vars), &self.inner.names, typed);
            (self.inner.evaluator)(&FeelScope::from(ctx))
        }));
        match outcome {
            Ok(FeelValue::Null(Some(trace))) if trace.starts_with(builtins::ASSERT_TRACE) => {
                let cause = &trace[builtins::ASSERT_TRACE.len()..];
                Err(FeelError::new(format!(
                    "{ASSERTION_FAILURE} '{}': {cause} The evaluation reported the following \
                     warnings:\n[ASSERT_FAILURE] {cause}",
                    self.source(),
                )))
            }
            Ok(value) => Ok(Val(value)),
            Err(_) => Err(FeelError::new(format!(
                "failed to evaluate expression '{}': internal FEEL error (the FEEL library panicked)",
                self.source()
            ))),
        }
    }
}

impl UnaryTests {
    /// Whether `input` passes the tests, as [`UnaryTests::matches`] says, with `typed` visible
    /// by name beside (and over) `vars`.
    pub fn matches_val(
        &self,
        input: &Val,
        vars: &Map<String, Value>,
        typed: &[(String, Val)],
    ) -> Result<bool, FeelError> {
        if self.inner.any {
            return Ok(true);
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.matches_in(input.0.clone(), vars, |ctx| {
                with_typed(ctx, &self.inner.names, typed)
            })
        }));
        outcome.map_err(|_| {
            FeelError::new(format!(
                "failed to evaluate unary tests '{}': internal FEEL error (the FEEL library panicked)",
                self.source()
            ))
        })
    }
}
