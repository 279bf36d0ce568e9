//! Evaluation of boxed expressions and business knowledge models (see `dmn_boxed`). Values
//! stay FEEL values ([`Val`]) from one entry, decision or call to the next, as in dmn-scala (a
//! date stays a date); they become JSON only in records and results. Business knowledge models,
//! and functions defined in contexts, are FEEL functions (`zest_feel::NativeFunction`) whose
//! bodies are evaluated here. Calls nest at most [`MAX_DEPTH`] deep, so a model that calls
//! itself cannot exhaust the stack. Each call of a business knowledge model that returns is
//! reported, as dmn-scala's audit log does (Zeebe lists them among the evaluated decisions,
//! before the decision that called them).

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use zest_feel::{NativeFunction, Val};

use crate::dmn::{Boxed, BusinessKnowledgeModel, EvaluatedDecision, Iteration, Variables};

/// Deepest nesting of calls of business knowledge models and context functions.
pub const MAX_DEPTH: u32 = 64;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// What an expression sees: the variables (JSON, as the process has them), and over them the
/// FEEL values bound by the model (required decisions' results, context entries, parameters,
/// iteration items, functions), a later binding winning.
#[derive(Clone)]
pub(crate) struct Env<'a> {
    pub vars: &'a Variables,
    pub typed: Vec<(String, Val)>,
}

impl Env<'_> {
    fn lookup(&self, name: &str) -> Option<&Val> {
        self.typed
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    fn bind(&mut self, name: &str, value: Val) {
        self.typed.push((name.to_string(), value));
    }
}

/// The calls of business knowledge models of one evaluation, in the order they returned.
pub(crate) type Audit = Arc<Mutex<Vec<EvaluatedDecision>>>;

/// The business knowledge models of a graph as functions (each sees all of them); each call
/// that returns is added to `audit`.
pub(crate) fn knowledge_functions(
    knowledge: &Arc<Vec<BusinessKnowledgeModel>>,
    audit: &Audit,
) -> Vec<(String, Val)> {
    (0..knowledge.len())
        .map(|i| {
            let (all, audit) = (knowledge.clone(), audit.clone());
            let bkm = &knowledge[i];
            let body = move |args: &[Val]| {
                let bkm = &all[i];
                let none = Variables::new();
                let mut env = Env {
                    vars: &none,
                    typed: knowledge_functions(&all, &audit),
                };
                bind_params(&mut env, &bkm.params, args);
                let mut record = EvaluatedDecision::new(&bkm.id, &bkm.name, bkm.body.type_name());
                let value = nested(|| match &bkm.body {
                    Boxed::Table(t) => crate::dmn_eval::evaluate_table(t, &env, &mut record),
                    body => eval(body, &env),
                })?;
                let json = value.to_json_without_functions().unwrap_or(Value::Null);
                record.output = bkm.body.json_order(json);
                if let Ok(mut audit) = audit.lock() {
                    audit.push(record);
                }
                Ok(value)
            };
            let function = NativeFunction {
                params: bkm.params.clone(),
                body: Arc::new(body),
            };
            (bkm.name.clone(), Val::from(function))
        })
        .collect()
}

/// Binds the arguments of a call to its parameters. A parameter whose name has dots
/// (`Person.Name`, as modelers write them) is also reachable as the path it reads like, as in
/// FEEL-scala: the body's `Person.Name` finds it.
fn bind_params(env: &mut Env, params: &[String], args: &[Val]) {
    let mut paths: Vec<(String, Vec<(String, Val)>)> = Vec::new();
    for (param, arg) in params.iter().zip(args) {
        env.bind(param, arg.clone());
        if let Some((head, rest)) = param.split_once('.') {
            let (head, rest) = (head.trim(), rest.trim());
            match paths.iter_mut().find(|(h, _)| h == head) {
                Some((_, entries)) => entries.push((rest.to_string(), arg.clone())),
                None => paths.push((head.to_string(), vec![(rest.to_string(), arg.clone())])),
            }
        }
    }
    for (head, entries) in paths {
        if env.lookup(&head).is_none() {
            env.bind(&head, Val::context(entries));
        }
    }
}

/// Runs a nested call, refused beyond [`MAX_DEPTH`].
fn nested(call: impl FnOnce() -> Result<Val, String>) -> Result<Val, String> {
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
fn closure(params: &[String], body: &Arc<Boxed>, env: &Env) -> Val {
    let (body, vars, typed) = (body.clone(), Arc::new(env.vars.clone()), env.typed.clone());
    let names = params.to_vec();
    Val::from(NativeFunction {
        params: params.to_vec(),
        body: Arc::new(move |args: &[Val]| {
            let mut env = Env {
                vars: &vars,
                typed: typed.clone(),
            };
            bind_params(&mut env, &names, args);
            nested(|| eval(&body, &env))
        }),
    })
}

/// Evaluates a boxed expression.
pub(crate) fn eval(b: &Boxed, env: &Env) -> Result<Val, String> {
    match b {
        Boxed::Literal(e) => e.evaluate_val(env.vars, &env.typed).map_err(|e| e.message),
        Boxed::Table(t) => {
            let mut scratch = EvaluatedDecision::new("", "", "DECISION_TABLE");
            crate::dmn_eval::evaluate_table(t, env, &mut scratch)
        }
        Boxed::Context(entries) => context(entries, env),
        Boxed::Invocation { function, bindings } => {
            let Some(f) = env.lookup(function).filter(|f| f.is_function()) else {
                return Err(format!(
                    "no business knowledge model or function named '{function}'"
                ));
            };
            let mut args = Vec::with_capacity(bindings.len());
            for (param, value) in bindings {
                args.push((param.clone(), eval(value, env)?));
            }
            f.call(&args)
        }
        Boxed::Relation { columns, rows } => {
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let mut item = Vec::with_capacity(columns.len());
                for (column, cell) in columns.iter().zip(row) {
                    item.push((column.clone(), eval(cell, env)?));
                }
                out.push(Val::context(item));
            }
            Ok(Val::list(out))
        }
        Boxed::List(items) => items
            .iter()
            .map(|i| eval(i, env))
            .collect::<Result<Vec<_>, _>>()
            .map(Val::list),
        Boxed::Function { params, body } => Ok(closure(params, body, env)),
        Boxed::Conditional {
            condition,
            then,
            otherwise,
        } => {
            if eval(condition, env)?.is_true() {
                eval(then, env)
            } else {
                eval(otherwise, env)
            }
        }
        Boxed::Filter { list, matches } => {
            let mut out = Vec::new();
            for item in eval(list, env)?.into_items() {
                let mut inner = env.clone();
                for (k, v) in item.entries() {
                    inner.bind(&k, v);
                }
                inner.bind("item", item.clone());
                if eval(matches, &inner)?.is_true() {
                    out.push(item);
                }
            }
            Ok(Val::list(out))
        }
        Boxed::Iterate {
            kind,
            variable,
            list,
            body,
        } => {
            let mut results = Vec::new();
            for item in eval(list, env)?.into_items() {
                let mut inner = env.clone();
                inner.bind(variable, item);
                results.push(eval(body, &inner)?);
            }
            Ok(match kind {
                Iteration::For => Val::list(results),
                Iteration::Every => Val::from_json(&Value::Bool(results.iter().all(Val::is_true))),
                Iteration::Some => Val::from_json(&Value::Bool(results.iter().any(Val::is_true))),
            })
        }
    }
}

/// A context: each named entry visible to the ones after it; the unnamed entry, if any, is the
/// result, else the context of the named entries.
fn context(entries: &[(Option<String>, Boxed)], env: &Env) -> Result<Val, String> {
    let mut inner = env.clone();
    let mut out = Vec::with_capacity(entries.len());
    for (name, value) in entries {
        let v = eval(value, &inner)?;
        match name {
            Some(name) => {
                inner.bind(name, v.clone());
                out.push((name.clone(), v));
            }
            None => return Ok(v),
        }
    }
    Ok(Val::context(out))
}
