//! Evaluating model expressions and mappings, and Zeebe's messages when a result has the
//! wrong type.

use serde_json::{Map, Value};
use zest_feel::{ReadParts, Reads};
use zest_model::{Expression, Mapping};
use zest_protocol::json::type_name;

use crate::behaviour::variables;
use crate::context::Ctx;

/// Evaluates a model expression in the scope of `scope_key`. Static values are strings; the
/// scope's variables are collected only for FEEL expressions.
pub(crate) fn evaluate(
    ctx: &Ctx<'_, '_, '_>,
    expr: &Expression,
    scope_key: i64,
) -> Result<Value, String> {
    match expr {
        Expression::Static(s) => Ok(Value::String(s.clone())),
        Expression::Feel(e) => {
            // only what the expression reads: parsing every visible variable (a large payload
            // in the scope) for each evaluation was most of an instance's processing
            let reads: Vec<(String, ReadParts)> = e
                .variable_names()
                .map(|n| (n.to_string(), e.reads(n)))
                .collect();
            let vars = if reads.is_empty() {
                serde_json::Map::new()
            } else {
                variables::visible_read(ctx, scope_key, &reads)
            };
            evaluate_with(expr, &vars)
        }
    }
}

/// Evaluates a model expression against variables collected once by the caller.
pub(crate) fn evaluate_with(expr: &Expression, vars: &Map<String, Value>) -> Result<Value, String> {
    match expr {
        Expression::Static(s) => Ok(Value::String(s.clone())),
        Expression::Feel(e) => e.evaluate(vars).map_err(|err| {
            if err.message.starts_with(zest_feel::ASSERTION_FAILURE) {
                return err.message;
            }
            format!(
                "Expected to evaluate expression '{}', but {}",
                e.source(),
                err.message
            )
        }),
    }
}

/// The variables visible from `key` that `mappings` read: the names their expressions look up,
/// in the parts they read, and the roots of their targets, whole (a path target merges into
/// the variable's present value). Parsing only these, not every visible variable, and of a
/// large payload only the entries read, is what keeps a mapping cheap beside a large payload
/// (a call activity's `=disputeDetails.disputeId` parsed a document of 10 KB for each of 50
/// children).
pub(crate) fn mapping_variables(
    ctx: &Ctx<'_, '_, '_>,
    key: i64,
    mappings: &[Mapping],
) -> Map<String, Value> {
    let mut reads = Reads::default();
    for m in mappings {
        if let Expression::Feel(e) = &m.source {
            reads.expression(e);
        }
        let root = m.target.split('.').next().unwrap_or(&m.target);
        reads.add(root, ReadParts::whole());
    }
    if reads.is_empty() {
        return Map::new();
    }
    variables::visible_read(ctx, key, reads.as_slice())
}

/// Evaluates `zeebe:input` or `zeebe:output` mappings into one variables document. As in
/// Zeebe (which evaluates them as one FEEL context), a mapping sees the targets of the mappings
/// before it, e.g. `a = 1` then `b = a + 1`.
pub(crate) fn evaluate_mappings(
    mappings: &[Mapping],
    vars: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut doc = Map::new();
    // the variables plus the targets written so far; copied only when a later mapping needs it
    let mut seen: Option<Map<String, Value>> = None;
    for (i, m) in mappings.iter().enumerate() {
        let current = seen.as_ref().unwrap_or(vars);
        let v = evaluate_with(&m.source, current)?;
        variables::set_path(&mut doc, &m.target, v, current);
        if i + 1 < mappings.len() {
            let root = m.target.split('.').next().unwrap_or(&m.target);
            if let Some(value) = doc.get(root) {
                seen.get_or_insert_with(|| vars.clone())
                    .insert(root.to_string(), value.clone());
            }
        }
    }
    Ok(doc)
}

/// Evaluates `expr` in the scope of element instance `key`, expecting a string (Zeebe's
/// message otherwise).
pub(crate) fn evaluate_string(
    ctx: &Ctx<'_, '_, '_>,
    expr: &Expression,
    key: i64,
) -> Result<String, String> {
    expect_string(ctx, key, expr, evaluate(ctx, expr, key)?)
}

pub(crate) fn expect_string(
    ctx: &Ctx<'_, '_, '_>,
    key: i64,
    expr: &Expression,
    v: Value,
) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(wrong_type(ctx, key, expr, "'STRING'", &other)),
    }
}

/// Zeebe's message for an expression result of the wrong type, evaluated in the scope of
/// element instance `key` (see [`wrong_type_with`]).
pub(crate) fn wrong_type(
    ctx: &Ctx<'_, '_, '_>,
    key: i64,
    expr: &Expression,
    expected: &str,
    got: &Value,
) -> String {
    wrong_type_with(expr, expected, got, || variables::visible(ctx, key))
}

/// Zeebe's message for an expression result of the wrong type (`expected` as Zeebe writes it,
/// e.g. `'BOOLEAN'`). A `null` result carries FEEL-scala's warnings (missing variables,
/// comparisons and arithmetic that gave `null`; see `zest_feel::Expression::warnings`), as
/// Zeebe appends them.
pub(crate) fn wrong_type_with(
    expr: &Expression,
    expected: &str,
    got: &Value,
    vars: impl FnOnce() -> Map<String, Value>,
) -> String {
    let mut msg = format!(
        "Expected result of the expression '{}' to be {expected}, but was '{}'.",
        expr.quoted(),
        type_name(got)
    );
    if let (Value::Null, Expression::Feel(e)) = (got, expr) {
        let warnings = e.warnings(&vars());
        if !warnings.is_empty() {
            msg.push_str(" The evaluation reported the following warnings:");
            for line in warnings {
                msg.push('\n');
                msg.push_str(&line);
            }
        }
    }
    msg
}

/// Evaluates the job type (a non-empty string) and retries (an integer) of a job definition in
/// the scope of element instance `key`.
pub(crate) fn job_type_and_retries(
    ctx: &Ctx<'_, '_, '_>,
    def: &zest_model::TaskDefinition,
    key: i64,
) -> Result<(String, i32), String> {
    let job_type = evaluate_string(ctx, &def.job_type, key)?;
    if job_type.is_empty() {
        return Err(format!(
            "Expected result of the expression '{}' to be a non-empty string, but was empty.",
            def.job_type.quoted()
        ));
    }
    let retries = match evaluate(ctx, &def.retries, key)? {
        Value::Number(n) if n.as_i64().is_some() => n.as_i64().unwrap_or(3) as i32,
        Value::String(s) if s.trim().parse::<i32>().is_ok() => s.trim().parse::<i32>().unwrap_or(3),
        other => return Err(wrong_type(ctx, key, &def.retries, "'NUMBER'", &other)),
    };
    Ok((job_type, retries))
}
