//! Evaluation of boxed expressions and business knowledge models (see `dmn_boxed`). Values
//! are JSON, as everywhere in Zest; business knowledge models, and functions defined in
//! contexts, are FEEL functions (`zest_feel::NativeFunction`) whose bodies are evaluated here.
//! Calls nest at most [`MAX_DEPTH`] deep, so a model that calls itself cannot exhaust the stack.
//! Each call of a business knowledge model that returns is reported, as dmn-scala's audit log
//! does (Zeebe lists them among the evaluated decisions, before the decision that called them).

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use zest_feel::NativeFunction;

use crate::dmn::{Boxed, BusinessKnowledgeModel, EvaluatedDecision, Iteration, Variables};

/// Deepest nesting of calls of business knowledge models and context functions.
pub const MAX_DEPTH: u32 = 64;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// What an expression sees: variables, and functions by name.
#[derive(Clone, Default)]
pub(crate) struct Env {
    pub vars: Variables,
    pub functions: Vec<(String, NativeFunction)>,
}

impl Env {
    fn function(&self, name: &str) -> Option<&NativeFunction> {
        self.functions
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f)
    }
}

/// The calls of business knowledge models of one evaluation, in the order they returned.
pub(crate) type Audit = Arc<Mutex<Vec<EvaluatedDecision>>>;

/// The business knowledge models of a graph as functions (each sees all of them); each call
/// that returns is added to `audit`.
pub(crate) fn knowledge_functions(
    knowledge: &Arc<Vec<BusinessKnowledgeModel>>,
    audit: &Audit,
) -> Vec<(String, NativeFunction)> {
    (0..knowledge.len())
        .map(|i| {
            let (all, audit) = (knowledge.clone(), audit.clone());
            let bkm = &knowledge[i];
            let body = move |args: &Map<String, Value>| {
                let env = Env {
                    vars: args.clone(),
                    functions: knowledge_functions(&all, &audit),
                };
                let bkm = &all[i];
                let mut record = EvaluatedDecision {
                    decision_id: bkm.id.clone(),
                    decision_name: bkm.name.clone(),
                    decision_type: bkm.body.type_name(),
                    output: Value::Null,
                    inputs: Vec::new(),
                    matched_rules: Vec::new(),
                };
                let value = nested(|| match &bkm.body {
                    Boxed::Table(t) => {
                        crate::dmn_eval::evaluate_table(t, &env.vars, &env.functions, &mut record)
                    }
                    body => eval(body, &env),
                })?;
                record.output = value.clone();
                if let Ok(mut audit) = audit.lock() {
                    audit.push(record);
                }
                Ok(value)
            };
            (
                bkm.name.clone(),
                NativeFunction {
                    params: bkm.params.clone(),
                    body: Arc::new(body),
                },
            )
        })
        .collect()
}

/// Runs a nested call, refused beyond [`MAX_DEPTH`].
fn nested(call: impl FnOnce() -> Result<Value, String>) -> Result<Value, String> {
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_DEPTH {
        return Err(format!(
            "business knowledge models call each other more than {MAX_DEPTH} levels deep"
        ));
    }
    DEPTH.with(|d| d.set(depth + 1));
    let result = call();
    DEPTH.with(|d| d.set(depth));
    result
}

/// A function defined by a boxed function definition, closed over `env`.
fn closure(params: &[String], body: &Arc<Boxed>, env: &Env) -> NativeFunction {
    let (body, outer) = (body.clone(), env.clone());
    NativeFunction {
        params: params.to_vec(),
        body: Arc::new(move |args: &Map<String, Value>| {
            let mut env = outer.clone();
            for (k, v) in args {
                env.vars.insert(k.clone(), v.clone());
            }
            nested(|| eval(&body, &env))
        }),
    }
}

/// Evaluates a boxed expression.
pub(crate) fn eval(b: &Boxed, env: &Env) -> Result<Value, String> {
    match b {
        Boxed::Literal(e) => {
            let result = if env.functions.is_empty() {
                e.evaluate(&env.vars)
            } else {
                e.evaluate_with_functions(&env.vars, &env.functions)
            };
            result.map_err(|e| e.message)
        }
        Boxed::Table(t) => {
            let mut scratch = EvaluatedDecision {
                decision_id: String::new(),
                decision_name: String::new(),
                decision_type: "DECISION_TABLE",
                output: Value::Null,
                inputs: Vec::new(),
                matched_rules: Vec::new(),
            };
            crate::dmn_eval::evaluate_table(t, &env.vars, &env.functions, &mut scratch)
        }
        Boxed::Context(entries) => context(entries, env),
        Boxed::Invocation { function, bindings } => {
            let Some(f) = env.function(function) else {
                return Err(format!(
                    "no business knowledge model or function named '{function}'"
                ));
            };
            let mut args = Map::new();
            for (param, value) in bindings {
                args.insert(param.clone(), eval(value, env)?);
            }
            (f.body)(&args)
        }
        Boxed::Relation { columns, rows } => {
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let mut item = Map::new();
                for (column, cell) in columns.iter().zip(row) {
                    item.insert(column.clone(), eval(cell, env)?);
                }
                out.push(Value::Object(item));
            }
            Ok(Value::Array(out))
        }
        Boxed::List(items) => items
            .iter()
            .map(|i| eval(i, env))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Boxed::Function { .. } => Err("the result is a function, which has no value".into()),
        Boxed::Conditional {
            condition,
            then,
            otherwise,
        } => match eval(condition, env)? {
            Value::Bool(true) => eval(then, env),
            _ => eval(otherwise, env),
        },
        Boxed::Filter { list, matches } => {
            let mut out = Vec::new();
            for item in items_of(eval(list, env)?) {
                let mut inner = env.clone();
                if let Value::Object(fields) = &item {
                    for (k, v) in fields {
                        inner.vars.insert(k.clone(), v.clone());
                    }
                }
                inner.vars.insert("item".into(), item.clone());
                if eval(matches, &inner)? == Value::Bool(true) {
                    out.push(item);
                }
            }
            Ok(Value::Array(out))
        }
        Boxed::Iterate {
            kind,
            variable,
            list,
            body,
        } => {
            let mut results = Vec::new();
            for item in items_of(eval(list, env)?) {
                let mut inner = env.clone();
                inner.vars.insert(variable.clone(), item);
                results.push(eval(body, &inner)?);
            }
            Ok(match kind {
                Iteration::For => Value::Array(results),
                Iteration::Every => Value::Bool(results.iter().all(|r| *r == Value::Bool(true))),
                Iteration::Some => Value::Bool(results.iter().any(|r| *r == Value::Bool(true))),
            })
        }
    }
}

/// A list's items; any other value is a list of itself (FEEL's singleton lists).
fn items_of(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        other => vec![other],
    }
}

/// A context: each named entry visible to the ones after it (a function entry as a function);
/// the unnamed entry, if any, is the result, else the context of the named entries.
fn context(entries: &[(Option<String>, Boxed)], env: &Env) -> Result<Value, String> {
    let mut inner = env.clone();
    let mut out = Map::new();
    for (name, value) in entries {
        if let (Some(name), Boxed::Function { params, body }) = (name, value) {
            let f = closure(params, body, &inner);
            inner.functions.push((name.clone(), f));
            continue;
        }
        // a literal entry that is a FEEL function (`function(a, b) a + b`)
        if let (Some(name), Boxed::Literal(e)) = (name, value) {
            if e.source().starts_with("function") {
                let f = e
                    .evaluate_function(&inner.vars, &inner.functions)
                    .map_err(|e| e.message)?;
                inner.functions.push((name.clone(), f));
                continue;
            }
        }
        let v = eval(value, &inner)?;
        match name {
            Some(name) => {
                inner.vars.insert(name.clone(), v.clone());
                out.insert(name.clone(), v);
            }
            None => return Ok(v),
        }
    }
    Ok(Value::Object(out))
}
