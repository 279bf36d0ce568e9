//! Evaluation of a parsed decision requirements graph, following Zeebe's engine (dmn-scala with
//! FEEL-scala): required decisions first, then the requested one, each reported with its inputs,
//! matched rules and output, so that the engine can write a DECISION_EVALUATION record.
//!
//! - Required decisions are evaluated depth-first in `required` order, each once per evaluation
//!   (also when several decisions require it); a decision sees the variables plus the results of
//!   the decisions it requires, under their [`Decision::result_name`].
//! - The first failure stops the evaluation: the failed decision is the last one reported, with a
//!   `null` output, and the failure message reads like Zeebe's ("Expected to evaluate decision
//!   '<requested id>', but <reason>").
//! - Decision tables: the input expressions are evaluated (a missing variable is `null`), a rule
//!   matches when each of its input entries matches its input, the matched rules' output entries
//!   are evaluated and the hit policy combines them. Texts of failures (UNIQUE / ANY violations)
//!   print values the way Scala does (`List(Map(tier -> "medium"), ...)`), as Zeebe's do.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};
use zest_feel::{Expression, Reads, Val};

use crate::dmn_boxed_eval::{Audit, Env};

use crate::dmn::{
    Aggregation, Decision, DecisionLogic, DecisionRequirements, DecisionTable, EvaluatedDecision,
    EvaluatedInput, EvaluatedOutput, Evaluation, EvaluationFailure, HitPolicy, MatchedRule,
    Variables,
};

impl DecisionRequirements {
    /// The decision with this id.
    pub fn decision(&self, id: &str) -> Option<&Decision> {
        self.decisions.iter().find(|d| d.id == id)
    }

    /// Evaluates the decision `decision_id` (and the decisions it requires) with `vars` visible by
    /// name. `None` when the graph has no such decision.
    pub fn evaluate(&self, decision_id: &str, vars: &Variables) -> Option<Evaluation> {
        let target = self.decision(decision_id)?;
        let fail = |evaluated, failed: &str, reason: &str| Evaluation {
            evaluated,
            result: Err(EvaluationFailure {
                decision_id: failed.to_string(),
                message: format!("Expected to evaluate decision '{decision_id}', but {reason}"),
            }),
        };
        let order = match self.evaluation_order(target) {
            Ok(order) => order,
            Err((failed, reason)) => {
                // Only possible for a graph not built by `parse_dmn` (which rejects these).
                let record =
                    EvaluatedDecision::new(&failed.id, &failed.name, failed.logic.type_name());
                return Some(fail(vec![record], &failed.id, &reason));
            }
        };
        let audit = Audit::default();
        let functions = if self.knowledge.is_empty() {
            Vec::new()
        } else {
            crate::dmn_boxed_eval::knowledge_functions(&self.knowledge, &audit)
        };
        // Decision id -> (its result name, its result).
        let mut results: HashMap<&str, (&str, Val)> = HashMap::new();
        let mut evaluated = Vec::with_capacity(order.len());
        for decision in order {
            let mut env = Env {
                vars,
                typed: functions.clone(),
            };
            for required in &decision.required {
                // Always present: the order puts required decisions first.
                if let Some((name, value)) = results.get(required.as_str()) {
                    env.typed.push((name.to_string(), value.clone()));
                }
            }
            let (record, outcome) = evaluate_decision(decision, &env);
            if let Ok(mut calls) = audit.lock() {
                evaluated.append(&mut calls);
            }
            evaluated.push(record);
            match outcome {
                Ok(value) => {
                    results.insert(&decision.id, (&decision.result_name, value));
                }
                Err(reason) => return Some(fail(evaluated, &decision.id, &reason)),
            }
        }
        let result = match results.remove(decision_id) {
            Some((_, value)) => match value.to_json_without_functions() {
                Ok(_) => target.logic.json_of(&value),
                Err(what) => {
                    let reason = format!("its result {what} cannot be represented as JSON");
                    return Some(fail(evaluated, decision_id, &reason));
                }
            },
            None => Value::Null,
        };
        Some(Evaluation {
            evaluated,
            result: Ok(result),
        })
    }

    /// The variables that evaluating `decision_id` reads, each with the parts read, for a
    /// caller that collects them from a scope (a business rule task reads only these, not a
    /// whole payload). `None` when the graph has business knowledge models or a decision whose
    /// logic is a boxed expression other than a literal: their reads are not collected, so
    /// every variable must be given.
    pub fn variable_reads(&self, decision_id: &str) -> Option<Reads> {
        if !self.knowledge.is_empty() {
            return None;
        }
        let order = self.evaluation_order(self.decision(decision_id)?).ok()?;
        let mut reads = Reads::default();
        for decision in order {
            match &decision.logic {
                DecisionLogic::Literal(e) => reads.expression(e),
                DecisionLogic::Table(table) => {
                    for input in &table.inputs {
                        reads.expression(&input.expression);
                    }
                    for default in table.outputs.iter().filter_map(|o| o.default.as_ref()) {
                        reads.expression(default);
                    }
                    for rule in &table.rules {
                        for tests in rule.input_entries.iter().flatten() {
                            reads.unary_tests(tests);
                        }
                        for output in &rule.output_entries {
                            reads.expression(output);
                        }
                    }
                }
                DecisionLogic::Boxed(_) => return None,
            }
        }
        Some(reads)
    }

    /// The decisions to evaluate for `target`, required ones first (depth-first, in `required`
    /// order, each once), `target` last. Iterative, so that a long chain cannot overflow the
    /// stack. On a missing required decision or a cycle (which `parse_dmn` rejects), the decision
    /// at fault and why.
    fn evaluation_order<'a>(
        &'a self,
        target: &'a Decision,
    ) -> Result<Vec<&'a Decision>, (&'a Decision, String)> {
        if target.required.is_empty() {
            return Ok(vec![target]);
        }
        let by_id: HashMap<&str, &Decision> =
            self.decisions.iter().map(|d| (d.id.as_str(), d)).collect();
        // false: being visited, true: done.
        let mut done: HashMap<&str, bool> = HashMap::new();
        let mut order = Vec::new();
        let mut stack: Vec<(&Decision, usize)> = vec![(target, 0)];
        done.insert(target.id.as_str(), false);
        while let Some((decision, next)) = stack.pop() {
            let Some(required) = decision.required.get(next) else {
                done.insert(decision.id.as_str(), true);
                order.push(decision);
                continue;
            };
            stack.push((decision, next + 1));
            match done.get(required.as_str()) {
                Some(true) => {}
                Some(false) => {
                    return Err((
                        decision,
                        format!("the required decisions form a cycle through '{required}'"),
                    ))
                }
                None => {
                    let Some(next_decision) = by_id.get(required.as_str()) else {
                        return Err((
                            decision,
                            format!("no decision found for the required decision '{required}'"),
                        ));
                    };
                    done.insert(next_decision.id.as_str(), false);
                    stack.push((next_decision, 0));
                }
            }
        }
        Ok(order)
    }
}

/// Evaluates one decision in its environment (variables, required results, functions): its
/// report and its result or the reason it failed.
fn evaluate_decision(decision: &Decision, env: &Env) -> (EvaluatedDecision, Result<Val, String>) {
    let mut record =
        EvaluatedDecision::new(&decision.id, &decision.name, decision.logic.type_name());
    let outcome = match &decision.logic {
        DecisionLogic::Literal(expression) => evaluate_expression(expression, env),
        DecisionLogic::Table(table) => evaluate_table(table, env, &mut record),
        DecisionLogic::Boxed(boxed) => crate::dmn_boxed_eval::eval(boxed, env),
    };
    if let Ok(value) = &outcome {
        record.output = decision.logic.json_of(value);
    }
    (record, outcome)
}

impl DecisionLogic {
    /// A result of this logic as JSON (null when it has none), its context keys in the order
    /// the model gives them (table outputs, context entries, relation columns), as dmn-scala
    /// writes them: FEEL contexts have no order of their own.
    pub(crate) fn json_of(&self, value: &Val) -> Value {
        let json = value.to_json_without_functions().unwrap_or(Value::Null);
        match self {
            DecisionLogic::Table(t) => in_order(json, t.outputs.iter().map(|o| o.name.as_str())),
            DecisionLogic::Literal(_) => json,
            DecisionLogic::Boxed(b) => b.json_order(json),
        }
    }
}

impl crate::dmn::Boxed {
    /// See [`DecisionLogic::json_of`].
    pub(crate) fn json_order(&self, json: Value) -> Value {
        use crate::dmn::Boxed;
        match self {
            Boxed::Table(t) => in_order(json, t.outputs.iter().map(|o| o.name.as_str())),
            Boxed::Context(entries) => {
                in_order(json, entries.iter().filter_map(|(n, _)| n.as_deref()))
            }
            Boxed::Relation { columns, .. } => in_order(json, columns.iter().map(String::as_str)),
            _ => json,
        }
    }
}

/// `json` (or each item of it, when it is a list) with its keys in `order` first.
fn in_order<'a>(json: Value, order: impl Iterator<Item = &'a str> + Clone) -> Value {
    match json {
        Value::Object(mut map) => {
            let mut out = Map::with_capacity(map.len());
            for key in order {
                if let Some(v) = map.shift_remove(key) {
                    out.insert(key.to_string(), v);
                }
            }
            out.extend(map);
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| match item {
                    Value::Object(_) => in_order(item, order.clone()),
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}

/// An expression in an environment.
fn evaluate_expression(expression: &Expression, env: &Env) -> Result<Val, String> {
    expression
        .evaluate_val(env.vars, &env.typed)
        .map_err(|e| e.message)
}

/// A rule's output value: as FEEL (what the result is made of) and as JSON (what records show
/// and hit policies compare).
#[derive(Clone)]
struct Out {
    val: Val,
    json: Value,
}

impl Out {
    /// An output entry's value; one without a JSON form (a function) fails the decision, as
    /// it could not be reported.
    fn of(entry: &Expression, env: &Env) -> Result<Out, String> {
        let val = evaluate_expression(entry, env)?;
        let json = val.to_json().map_err(|what| {
            format!(
                "failed to evaluate expression '{}': the result {what} cannot be represented as JSON",
                entry.source()
            )
        })?;
        Ok(Out { val, json })
    }
}

impl PartialEq for Out {
    fn eq(&self, other: &Out) -> bool {
        self.json == other.json
    }
}

/// Evaluates a decision table, filling in the record's inputs and matched rules as dmn-scala
/// reports them: the inputs once all are evaluated, the matched rules once all their outputs are.
pub(crate) fn evaluate_table(
    table: &DecisionTable,
    env: &Env,
    record: &mut EvaluatedDecision,
) -> Result<Val, String> {
    let mut input_values = Vec::with_capacity(table.inputs.len());
    for input in &table.inputs {
        input_values.push(evaluate_expression(&input.expression, env)?);
    }
    record.inputs = table
        .inputs
        .iter()
        .zip(&input_values)
        .map(|(input, value)| EvaluatedInput {
            id: input.id.clone(),
            name: input.name.clone(),
            value: value.to_json().unwrap_or(Value::Null),
        })
        .collect();

    // Rules whose every input entry matches (all of them are checked, also with FIRST).
    let mut matched = Vec::new();
    for (position, rule) in table.rules.iter().enumerate() {
        let mut is_match = true;
        for (entry, value) in rule.input_entries.iter().zip(&input_values) {
            if let Some(tests) = entry {
                if !tests
                    .matches_val(value, env.vars, &env.typed)
                    .map_err(|e| e.message)?
                {
                    is_match = false;
                    break;
                }
            }
        }
        if is_match {
            matched.push(position);
        }
    }
    if table.hit_policy == HitPolicy::First {
        matched.truncate(1);
    }

    if matched.is_empty() && table.outputs.iter().any(|o| o.default.is_some()) {
        // the default output values (`defaultOutputEntry`) are the result
        let mut defaults = Vec::with_capacity(table.outputs.len());
        for output in &table.outputs {
            let value = match &output.default {
                Some(e) => Out::of(e, env)?,
                None => Out {
                    val: Val::null(),
                    json: Value::Null,
                },
            };
            defaults.push((output.name.as_str(), value));
        }
        return Ok(rule_result(&defaults));
    }
    if matched.is_empty() {
        return Ok(match (table.hit_policy, table.aggregation) {
            (HitPolicy::Collect, Some(Aggregation::Count)) => Val::from_json(&Value::from(0)),
            (HitPolicy::Collect, None) | (HitPolicy::RuleOrder | HitPolicy::OutputOrder, _) => {
                Val::list(Vec::new())
            }
            _ => Val::null(),
        });
    }

    // Each matched rule's outputs, as (output name, value) in output order.
    let mut rule_outputs: Vec<Vec<(&str, Out)>> = Vec::with_capacity(matched.len());
    for &position in &matched {
        let rule = &table.rules[position];
        let mut outputs = Vec::with_capacity(table.outputs.len());
        for (output, entry) in table.outputs.iter().zip(&rule.output_entries) {
            outputs.push((output.name.as_str(), Out::of(entry, env)?));
        }
        rule_outputs.push(outputs);
    }
    record.matched_rules = matched
        .iter()
        .zip(&rule_outputs)
        .map(|(&position, outputs)| MatchedRule {
            id: table.rules[position].id.clone(),
            index: i32::try_from(position + 1).unwrap_or(i32::MAX),
            outputs: table
                .outputs
                .iter()
                .zip(outputs)
                .map(|(output, (_, value))| EvaluatedOutput {
                    id: output.id.clone(),
                    name: output.label.clone(),
                    value: value.json.clone(),
                })
                .collect(),
        })
        .collect();

    apply_hit_policy(table, rule_outputs)
}

/// One rule's result: the value itself with a single output, else a context of the outputs.
fn rule_result(outputs: &[(&str, Out)]) -> Val {
    match outputs {
        [(_, value)] => value.val.clone(),
        _ => Val::context(
            outputs
                .iter()
                .map(|(name, value)| (name.to_string(), value.val.clone()))
                .collect(),
        ),
    }
}

fn apply_hit_policy(
    table: &DecisionTable,
    mut rule_outputs: Vec<Vec<(&str, Out)>>,
) -> Result<Val, String> {
    let first =
        |outputs: &[Vec<(&str, Out)>]| outputs.first().map_or(Val::null(), |o| rule_result(o));
    let all =
        |outputs: &[Vec<(&str, Out)>]| Val::list(outputs.iter().map(|o| rule_result(o)).collect());
    match table.hit_policy {
        HitPolicy::First => Ok(first(&rule_outputs)),
        HitPolicy::Unique => {
            if rule_outputs.len() > 1 {
                return Err(format!(
                    "multiple values aren't allowed for UNIQUE hit policy. found: '{}'",
                    scala_list(&rule_outputs)
                ));
            }
            Ok(first(&rule_outputs))
        }
        HitPolicy::Any => {
            let mut distinct: Vec<Vec<(&str, Out)>> = Vec::new();
            for outputs in &rule_outputs {
                if !distinct.contains(outputs) {
                    distinct.push(outputs.clone());
                }
            }
            if distinct.len() > 1 {
                return Err(format!(
                    "different values aren't allowed for ANY hit policy. found: '{}'",
                    scala_list(&distinct)
                ));
            }
            Ok(first(&rule_outputs))
        }
        HitPolicy::Priority => {
            sort_by_priority(table, &mut rule_outputs);
            Ok(first(&rule_outputs))
        }
        HitPolicy::OutputOrder => {
            sort_by_priority(table, &mut rule_outputs);
            Ok(all(&rule_outputs))
        }
        HitPolicy::RuleOrder => Ok(all(&rule_outputs)),
        HitPolicy::Collect => match table.aggregation {
            None => Ok(all(&rule_outputs)),
            Some(Aggregation::Count) => Ok(Val::from_json(&Value::from(rule_outputs.len()))),
            Some(aggregation) => aggregate(aggregation, &rule_outputs).map(|v| Val::from_json(&v)),
        },
    }
}

/// COLLECT with SUM, MIN or MAX: the numbers of the single output, combined with FEEL's
/// (decimal) `sum`, `min` or `max`.
fn aggregate(aggregation: Aggregation, rule_outputs: &[Vec<(&str, Out)>]) -> Result<Value, String> {
    let mut numbers = Vec::with_capacity(rule_outputs.len());
    for outputs in rule_outputs {
        let [(_, value)] = outputs.as_slice() else {
            return Err(format!(
                "multiple values aren't allowed. found: {}",
                scala_list(rule_outputs)
            ));
        };
        if !value.json.is_number() {
            return Err(format!(
                "expected number but found '{}'",
                scala_value(&value.json)
            ));
        }
        numbers.push(value.json.clone());
    }
    static SUM: OnceLock<Option<Expression>> = OnceLock::new();
    static MIN: OnceLock<Option<Expression>> = OnceLock::new();
    static MAX: OnceLock<Option<Expression>> = OnceLock::new();
    let (cell, source) = match aggregation {
        Aggregation::Sum => (&SUM, "sum(values)"),
        Aggregation::Min => (&MIN, "min(values)"),
        Aggregation::Max => (&MAX, "max(values)"),
        Aggregation::Count => return Ok(Value::from(numbers.len())),
    };
    let Some(expression) = cell.get_or_init(|| Expression::parse(source).ok()) else {
        return Err(format!("the aggregation '{source}' is not available"));
    };
    let mut vars = Map::new();
    vars.insert("values".to_string(), Value::Array(numbers));
    expression.evaluate(&vars).map_err(|e| e.message)
}

/// Sorts the matched rules' outputs for PRIORITY and OUTPUT ORDER like dmn-scala: each rule gets
/// a key made of, for every output in order, the position of its value among the output's
/// `outputValues` (or `_` when it is not there or not a string or number), concatenated as text;
/// the rules are sorted by that text (stable, so rule order breaks ties).
fn sort_by_priority(table: &DecisionTable, rule_outputs: &mut [Vec<(&str, Out)>]) {
    let key = |outputs: &Vec<(&str, Out)>| -> String {
        table
            .outputs
            .iter()
            .zip(outputs)
            .map(|(output, (_, value))| {
                let value = &value.json;
                let position = match value {
                    Value::String(_) | Value::Number(_) => output
                        .priorities
                        .iter()
                        .position(|candidate| same_value(candidate, value)),
                    _ => None,
                };
                position.map_or_else(|| "_".to_string(), |p| p.to_string())
            })
            .collect()
    };
    rule_outputs.sort_by_cached_key(key);
}

/// JSON equality, with numbers compared by value (`1` equals `1.0`).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Scala's `toString` of a list of rule outputs (`List[Map[String, Val]]`):
/// `List(Map(tier -> "medium"), Map(tier -> "large"))`.
fn scala_list(rule_outputs: &[Vec<(&str, Out)>]) -> String {
    let maps: Vec<String> = rule_outputs
        .iter()
        .map(|outputs| {
            let entries: Vec<String> = outputs
                .iter()
                .map(|(name, value)| format!("{name} -> {}", scala_value(&value.json)))
                .collect();
            format!("Map({})", entries.join(", "))
        })
        .collect();
    format!("List({})", maps.join(", "))
}

/// FEEL-scala's `toString` of a value: strings quoted, lists `[a, b]`, contexts `{a:1, b:2}`.
fn scala_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("\"{s}\""),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(scala_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{key}:{}", scala_value(value)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}
