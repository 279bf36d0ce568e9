//! FEEL adapter: the one place where Zest talks to dsntk. Everything above sees JSON values in and
//! out (or the opaque [`Val`]); dsntk types never leak.
//!
//! The FEEL work (lexing, parsing, evaluation, built-in functions, temporal arithmetic) is done by
//! the dsntk crates (`dsntk-feel`, `dsntk-feel-parser`, `dsntk-feel-evaluator`, all 0.3.0). This
//! crate only
//! - prepares the parse (dsntk needs to know the variable names while parsing, see
//!   [`parse_scope`]),
//! - keeps the prepared dsntk evaluator so that evaluation never re-parses,
//! - converts JSON variables into FEEL values and the FEEL result back into JSON,
//! - turns dsntk's "null with a trace message" results into Zeebe-like results (see
//!   [`Expression::evaluate`]),
//! - makes sure no input can panic the caller.
//!
//! API:
//! - `Expression::parse(source)` parses a FEEL expression (without the leading `=`), or returns a
//!   `FeelError` whose message says what is wrong.
//! - `Expression::evaluate(&vars)` evaluates it with the given variables visible by name.
//! - `Expression::evaluate_traced(&vars)` does the same and also returns dsntk's explanation when
//!   the result is `null` (for warnings and incident messages).
//! - `UnaryTests::parse(source)` parses FEEL unary tests (a DMN decision table's input entry) and
//!   `UnaryTests::matches(&input, &vars)` says whether an input value passes them (FEEL-scala's
//!   matching rules on top of dsntk's `in` operator, see [`UnaryTests`]).
//! - `Expression::evaluate_val` / `UnaryTests::matches_val` work on [`Val`], FEEL values that
//!   stay FEEL values (DMN passes them between decisions, context entries and business
//!   knowledge models, which are [`NativeFunction`]s); see `typed.rs`.

mod access;
mod builtins;
mod convert;
mod scan;
mod typed;
mod warnings;

use access::{collect_access, variables_context, Access};
pub use access::{ReadParts, Reads};
use convert::{feel_to_json, json_to_feel};
use scan::{scan, Scanned};
pub use typed::{NativeBody, NativeFunction, Val};
use warnings::Warnings;

use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value as FeelValue;
use dsntk_feel::{Evaluator, FeelScope, Name};
use dsntk_feel_parser::AstNode;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::Arc;

/// Why a FEEL expression failed to parse or evaluate; the message is shown to users (incident
/// texts, deployment rejections).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FeelError {
    pub message: String,
}

impl FeelError {
    fn new(message: impl Into<String>) -> Self {
        FeelError {
            message: message.into(),
        }
    }
}

/// Longest expression accepted (bytes), not counting the contents of its string literals and
/// its comments (see `scan`), which dsntk reads in linear time. The limit keeps dsntk's recursive
/// evaluator builder away from stack exhaustion (which no `catch_unwind` can intercept) and
/// bounds dsntk's parse time, which grows with the square of the number of distinct names (about
/// 0.1 s for 500 names, 0.8 s at this limit) and of the number of tokens (a list of 100,000
/// numbers takes seconds).
const MAX_CODE_LEN: usize = 8 * 1024;

/// Longest expression text accepted (bytes), string literals and comments included: a bound on
/// the memory a parse takes (dsntk holds the text as 4-byte characters), far above the system
/// prompts of AI agents that Camunda 8.8 processes carry in string literals (10-64 KiB).
const MAX_TEXT_LEN: usize = 1024 * 1024;

/// Longest run of names and `+ - * / . '` operators without a bracket, comparison, comma or
/// string in between (`a + b * c` is a run of 5 parts). dsntk's lexer reads such a run as one
/// candidate name and shortens it part by part, so its parse time grows with the cube of the run
/// length (100 parts: 10 ms, 200: 80 ms, 400: 0.6 s, 800: 4 s).
const MAX_NAME_RUN: usize = 128;

/// Deepest bracket nesting (`(`, `[`, `{`) accepted, for the same reason as [`MAX_CODE_LEN`].
const MAX_NESTING: usize = 64;

/// Deepest AST accepted after parsing (long operator chains such as `1+1+...+1` nest deeply too).
const MAX_AST_DEPTH: usize = 256;

/// A parsed FEEL expression. Cheap to clone, shareable between threads.
#[derive(Clone)]
pub struct Expression {
    inner: Arc<Inner>,
}

struct Inner {
    /// The expression text, trimmed.
    source: Box<str>,
    /// dsntk's prepared evaluator (a tree of closures built once from the AST); evaluating it does
    /// not touch the parser again.
    evaluator: Evaluator,
    /// Every name the expression refers to as a value (variables, path segments, filter fields),
    /// not as a called function. Only the variables whose names are in this set are converted to
    /// FEEL on evaluation. Kept as dsntk names so that evaluation does not rebuild them.
    names: Box<[Name]>,
    /// The variables the expression only reads through paths (`a.b.c`), with the keys it reads:
    /// only those parts are converted (see [`Access`]).
    access: HashMap<Name, Access>,
    /// The Camunda built-ins the expression calls that dsntk lacks (`builtins`), put in scope
    /// beside the variables.
    extensions: Box<[(Name, FeelValue)]>,
    /// The caller's multi-word names that occur in the source (see `parse_with_names`).
    known_names: Box<[String]>,
}

impl fmt::Debug for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expression")
            .field("source", &self.source())
            .finish()
    }
}

impl Expression {
    /// Parses a FEEL expression (the text after the leading `=`; surrounding whitespace is
    /// ignored).
    ///
    /// Errors read `failed to parse expression '<source>': <reason>`.
    pub fn parse(source: &str) -> Result<Expression, FeelError> {
        Expression::parse_with_names(source, &[])
    }

    /// Like [`Expression::parse`], with names the lexer must know besides single words: a
    /// DMN model's names with spaces or operators (`Full Name`, `Date-Time`), which FEEL
    /// allows and which would otherwise read as several names or as a subtraction.
    pub fn parse_with_names(source: &str, names: &[String]) -> Result<Expression, FeelError> {
        let source = source.trim();
        let scanned = scan(source);
        check_limits("expression", source, &scanned.code)?;
        let names = names_in(&scanned.code, names);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            parse_and_prepare(source, &scanned, &names)
        }));
        let known_names = names;
        let (evaluator, names, access, extensions) = match outcome {
            Ok(result) => result?,
            Err(_) => {
                return Err(FeelError::new(format!(
                    "failed to parse expression '{source}': internal FEEL error (the FEEL library panicked)"
                )))
            }
        };
        Ok(Expression {
            inner: Arc::new(Inner {
                source: source.into(),
                evaluator,
                names: names.into_boxed_slice(),
                access,
                extensions,
                known_names,
            }),
        })
    }

    /// The warnings FEEL-scala reports while it evaluates the expression with `vars`, in its
    /// format and order (operands before their operation), as Zeebe appends them to an incident
    /// message when a result is `null`:
    ///
    /// - `[NO_VARIABLE_FOUND] No variable found with name 'x'` for each missing variable;
    /// - `[NOT_COMPARABLE] Can't compare 'a' with 'b'` for a comparison that gives `null`
    ///   (`x > 10` with `x` null or a string; `"s" = 1`), and for `!=` also FEEL-scala's
    ///   `[INVALID_TYPE] Expected boolean but found 'null'`;
    /// - `[INVALID_TYPE] Can't add 'b' to 'a'` (subtract ... from, multiply ... by, divide ... by)
    ///   for arithmetic that gives `null`, and `Expected number but found 'a'` for `-a`, `a ** b`.
    ///
    /// Operations that read a name the expression binds itself (iteration variables, context
    /// entries, function parameters, filter conditions) are not looked into. Meant for error
    /// paths: it parses the expression again and evaluates each operation on its own.
    pub fn warnings(&self, vars: &Map<String, Value>) -> Vec<String> {
        let source = self.source();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let scanned = scan(source);
            let ast = dsntk_feel_parser::parse_expression(
                &parse_scope(&scanned.code, &self.inner.known_names),
                &scanned.text,
                false,
            )
            .ok()?;
            let bound = bound_names(&ast);
            let scope = FeelScope::from(self.variables_context(vars));
            let mut w = Warnings {
                vars,
                bound: &bound,
                scope: &scope,
                seen: HashSet::new(),
                lines: Vec::new(),
            };
            w.visit(&ast);
            Some(w.lines)
        }));
        // the expression parsed before, so neither a parse failure nor a panic is expected;
        // the warnings only add to a message, so without them it still stands
        outcome.ok().flatten().unwrap_or_default()
    }

    /// The expression text (without the leading `=`), trimmed.
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// The variables the expression reads (the names [`Expression::evaluate`] looks up): a
    /// caller that collects variables needs no others.
    pub fn variable_names(&self) -> impl Iterator<Item = &str> {
        self.inner.names.iter().map(|n| n.as_str())
    }

    /// The parts of the variable `name` that the expression reads (the whole variable unless
    /// it is read only through paths of names): parse its text with [`ReadParts::parse`].
    pub fn reads(&self, name: &str) -> ReadParts {
        ReadParts::of(&self.inner.access, name)
    }

    /// Evaluates the expression with `vars` visible by name.
    ///
    /// # Null, missing variables and failures
    ///
    /// dsntk follows the FEEL spec: it never fails at evaluation time; a missing variable, a type
    /// error (`"a" + 1`), a division by zero or a bad argument to a built-in all yield FEEL `null`
    /// carrying a trace message. This adapter maps them as follows:
    ///
    /// - a reference to a variable that does not exist evaluates to `null`, like Zeebe
    ///   (FEEL-scala), which also yields `null` (with a warning). Comparisons against a literal
    ///   follow the FEEL spec: `x = true` with `x` missing is `false` and `x != true` is `true`
    ///   (dsntk only gets this right with the literal on the left, so `x = <literal>` is
    ///   normalised to `<literal> = x` at parse time, which is equivalent in FEEL). Other
    ///   operations on a missing value (`x > 5`, `x + 1`) are `null`.
    /// - type errors and other failures inside the expression are `Ok(Value::Null)` as well (the
    ///   FEEL-scala behaviour since 1.17); use [`Expression::evaluate_traced`] to get dsntk's
    ///   explanation.
    /// - calling a function that does not exist (e.g. the Camunda extension `is defined(x)`,
    ///   which dsntk does not provide) is already rejected by [`Expression::parse`] (Zeebe
    ///   accepts the deployment and raises an incident on evaluation); calling a value that is not
    ///   a function (`{f: 1}.f(2)`) is an `Err` here.
    /// - a result that has no JSON form (a function, a range, a type) is an `Err`.
    /// - a panic inside dsntk is caught and reported as an `Err` ("internal FEEL error").
    ///
    /// # Cost
    ///
    /// The expression is not re-parsed. Per call: one `FeelContext` (a `BTreeMap`) holding a
    /// deep FEEL copy of just the variables whose names occur in the expression (one hash lookup
    /// per referenced name; variables the expression does not mention cost nothing; a variable
    /// read only through paths such as `order.customer.name` is copied only along those paths),
    /// the dsntk evaluation itself (dsntk clones a variable's value each time it is referenced),
    /// and the conversion of the result back to JSON. Numbers are decimal128; JSON floats are
    /// converted through their shortest text form.
    pub fn evaluate(&self, vars: &Map<String, Value>) -> Result<Value, FeelError> {
        self.evaluate_traced(vars).map(|(value, _)| value)
    }

    /// Like [`Expression::evaluate`], and also returns dsntk's explanation (e.g. `context has no
    /// value for key 'x'`) when the result is `null` because of a missing variable or a failure.
    pub fn evaluate_traced(
        &self,
        vars: &Map<String, Value>,
    ) -> Result<(Value, Option<String>), FeelError> {
        self.evaluate_in(vars)
    }

    fn evaluate_in(&self, vars: &Map<String, Value>) -> Result<(Value, Option<String>), FeelError> {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let result = (self.inner.evaluator)(&FeelScope::from(self.variables_context(vars)));
            self.result_to_json(result)
        }));
        match outcome {
            Ok(result) => result,
            Err(_) => Err(FeelError::new(format!(
                "failed to evaluate expression '{}': internal FEEL error (the FEEL library panicked)",
                self.source()
            ))),
        }
    }

    /// Builds the FEEL context holding the variables the expression refers to.
    fn variables_context(&self, vars: &Map<String, Value>) -> FeelContext {
        let mut ctx = variables_context(&self.inner.names, &self.inner.access, vars);
        for (name, function) in self.inner.extensions.iter() {
            ctx.set_entry(name, function.clone());
        }
        ctx
    }

    fn result_to_json(&self, result: FeelValue) -> Result<(Value, Option<String>), FeelError> {
        match result {
            // FEEL-scala's failure, in Zeebe's words (the whole incident message)
            FeelValue::Null(Some(trace)) if trace.starts_with(builtins::ASSERT_TRACE) => {
                let cause = &trace[builtins::ASSERT_TRACE.len()..];
                return Err(FeelError::new(format!(
                    "{ASSERTION_FAILURE} '{}': {cause} The evaluation reported the following \
                     warnings:\n[ASSERT_FAILURE] {cause}",
                    self.source(),
                )));
            }
            FeelValue::Null(trace) => return Ok((Value::Null, trace)),
            _ => {}
        }
        match feel_to_json(&result) {
            Ok(value) => Ok((value, None)),
            Err(what) => Err(FeelError::new(format!(
                "failed to evaluate expression '{}': the result {what} cannot be represented as JSON",
                self.source()
            ))),
        }
    }
}

/// How the message of a failed `assert` starts: it is a whole incident message, as Zeebe
/// writes it.
pub const ASSERTION_FAILURE: &str = "Assertion failure on evaluate the expression";

/// The name the input value is bound to while unary tests are evaluated: FEEL 1.3's `?` (as in
/// `? > 5`). dsntk reads `?` as an ordinary name, and its own model evaluator binds item
/// definition values the same way.
const INPUT_NAME: &str = "?";

/// The name one positive unary test's value is bound to for the `? in <value>` check. It has
/// spaces, so it can never be a name of a user's test (the parse scope only offers single words).
const TEST_VALUE_NAME: &str = "zest unary test value";

/// Parsed FEEL unary tests: the input entry of a decision table rule (`"gold"`, `< 5`,
/// `[1..10]`, `"a","b"`, `not("x")`, `? > 5`, `-`). Cheap to clone, shareable between threads.
///
/// The matching follows FEEL-scala (what Zeebe uses), one positive test at a time:
///
/// - a boolean literal (`true`, `false`) or `null` matches an equal input;
/// - a comparison (`< 5`), an interval (`[1..5]`) matches an input inside it;
/// - any other expression is evaluated with the input bound to `?`: a `true` result matches
///   whatever the input (`? > 5`, or `x > 5` with a variable `x`); otherwise the input matches
///   when it equals the result, or is an element of a list result.
///
/// `t1, t2` matches when one of the tests matches; `not(t1, t2)` when every test gives a
/// definite "no" (a test that yields null, e.g. `< 5` against a string, makes both `t1, t2`
/// without a match and `not(...)` not match either, as in FEEL-scala). `-` matches anything.
/// The comparisons themselves (equality, ranges, ordering of numbers, strings and temporal
/// values) are dsntk's `in` operator.
#[derive(Clone)]
pub struct UnaryTests {
    inner: Arc<UnaryInner>,
}

struct UnaryInner {
    source: Box<str>,
    /// `-` (or an empty text): matches anything.
    any: bool,
    /// `not(...)`.
    negated: bool,
    tests: Box<[PositiveTest]>,
    /// The variables the tests refer to (as in [`Expression`]), without `?`.
    names: Box<[Name]>,
    /// As in [`Expression`].
    access: HashMap<Name, Access>,
    /// As in [`Expression`].
    extensions: Box<[(Name, FeelValue)]>,
    /// dsntk's `? in <test value>`.
    in_evaluator: Evaluator,
    /// [`INPUT_NAME`] and [`TEST_VALUE_NAME`], built once.
    input_name: Name,
    value_name: Name,
}

struct PositiveTest {
    /// Evaluates the test itself (to a value, a range, a unary comparison such as `< 5`, a list
    /// or a boolean).
    evaluator: Evaluator,
    /// FEEL-scala's "unary test expression": a `true` result matches any input. False for the
    /// boolean literals, which are compared with the input.
    expression: bool,
}

impl fmt::Debug for UnaryTests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnaryTests")
            .field("source", &self.source())
            .finish()
    }
}

impl UnaryTests {
    /// Parses FEEL unary tests (surrounding whitespace is ignored; an empty text is `-`).
    ///
    /// Errors read `failed to parse unary tests '<source>': <reason>`.
    pub fn parse(source: &str) -> Result<UnaryTests, FeelError> {
        UnaryTests::parse_with_names(source, &[])
    }

    /// Like [`UnaryTests::parse`], with a model's multi-word names (see
    /// [`Expression::parse_with_names`]).
    pub fn parse_with_names(source: &str, names: &[String]) -> Result<UnaryTests, FeelError> {
        let source = source.trim();
        let scanned = scan(source);
        check_limits("unary tests", source, &scanned.code)?;
        let names = names_in(&scanned.code, names);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            parse_unary_tests(source, &scanned, &names)
        }));
        let parsed = match outcome {
            Ok(result) => result?,
            Err(_) => {
                return Err(FeelError::new(format!(
                    "failed to parse unary tests '{source}': internal FEEL error (the FEEL library panicked)"
                )))
            }
        };
        let (any, negated, tests, names, access, extensions) = parsed;
        let in_ast = AstNode::In(
            Box::new(AstNode::Name(Name::from(INPUT_NAME))),
            Box::new(AstNode::Name(Name::from(TEST_VALUE_NAME))),
        );
        Ok(UnaryTests {
            inner: Arc::new(UnaryInner {
                source: source.into(),
                any,
                negated,
                tests: tests.into_boxed_slice(),
                names: names.into_boxed_slice(),
                access,
                extensions,
                in_evaluator: dsntk_feel_evaluator::prepare(&in_ast),
                input_name: Name::from(INPUT_NAME),
                value_name: Name::from(TEST_VALUE_NAME),
            }),
        })
    }

    /// The unary tests text, trimmed.
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// The variables the tests refer to (as [`Expression::variable_names`]).
    pub fn variable_names(&self) -> impl Iterator<Item = &str> {
        self.inner.names.iter().map(|n| n.as_str())
    }

    /// As [`Expression::reads`].
    pub fn reads(&self, name: &str) -> ReadParts {
        ReadParts::of(&self.inner.access, name)
    }

    /// Whether `input` passes the tests, with `vars` visible by name (tests may refer to
    /// variables, e.g. `> limit`). A test that fails to evaluate or yields null does not match
    /// (no error). `Err` only when dsntk panicked.
    pub fn matches(&self, input: &Value, vars: &Map<String, Value>) -> Result<bool, FeelError> {
        if self.inner.any {
            return Ok(true);
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.matches_in(json_to_feel(input), vars, |ctx| ctx)
        }));
        outcome.map_err(|_| {
            FeelError::new(format!(
                "failed to evaluate unary tests '{}': internal FEEL error (the FEEL library panicked)",
                self.source()
            ))
        })
    }

    /// The matching itself; `extra` adds to the context of the variables.
    fn matches_in(
        &self,
        input: FeelValue,
        vars: &Map<String, Value>,
        extra: impl FnOnce(FeelContext) -> FeelContext,
    ) -> bool {
        let mut ctx = extra(variables_context(
            &self.inner.names,
            &self.inner.access,
            vars,
        ));
        for (name, function) in self.inner.extensions.iter() {
            ctx.set_entry(name, function.clone());
        }
        ctx.set_entry(&self.inner.input_name, input.clone());
        let scope = FeelScope::from(ctx);
        let mut undecided = false;
        for test in self.inner.tests.iter() {
            match self.test_outcome(test, &scope, &input) {
                Some(true) => return !self.inner.negated,
                Some(false) => {}
                None => undecided = true,
            }
        }
        // No test matched: `t1, t2` does not match; `not(t1, t2)` matches if no test was null.
        self.inner.negated && !undecided
    }

    /// One positive test against the input: `Some(true)` / `Some(false)`, or `None` when FEEL
    /// gives null (failure, or values that cannot be compared).
    fn test_outcome(
        &self,
        test: &PositiveTest,
        scope: &FeelScope,
        input: &FeelValue,
    ) -> Option<bool> {
        let value = (test.evaluator)(scope);
        if test.expression && matches!(value, FeelValue::Boolean(true)) {
            return Some(true);
        }
        if incomparable(input, &value) {
            // FEEL-scala: comparing values of different types is null, except that a `false`
            // expression is a plain "no".
            return (test.expression && matches!(value, FeelValue::Boolean(false)))
                .then_some(false);
        }
        scope.set_value(&self.inner.value_name, value);
        match (self.inner.in_evaluator)(scope) {
            FeelValue::Boolean(matched) => Some(matched),
            _ => None,
        }
    }
}

/// Whether FEEL-scala would refuse to compare `input` with the plain value `value` for
/// equality: both are non-null simple values of different types (dsntk says `false` there).
fn incomparable(input: &FeelValue, value: &FeelValue) -> bool {
    fn simple_type(value: &FeelValue) -> Option<u8> {
        Some(match value {
            FeelValue::Boolean(_) => 0,
            FeelValue::Number(_) => 1,
            FeelValue::String(_) => 2,
            FeelValue::Date(_) => 3,
            FeelValue::Time(_) => 4,
            FeelValue::DateTime(_) => 5,
            FeelValue::DaysAndTimeDuration(_) => 6,
            FeelValue::YearsAndMonthsDuration(_) => 7,
            FeelValue::Context(_) => 8,
            FeelValue::List(_) => 9,
            _ => return None,
        })
    }
    match (simple_type(input), simple_type(value)) {
        // A list test value is checked for membership, not equality.
        (Some(a), Some(b)) => a != b && b != 9,
        _ => false,
    }
}

/// Parsed and prepared unary tests: (matches anything, negated, positive tests, variable names,
/// variable accesses, extension built-ins).
type ParsedUnaryTests = (
    bool,
    bool,
    Vec<PositiveTest>,
    Vec<Name>,
    HashMap<Name, Access>,
    Box<[(Name, FeelValue)]>,
);

fn parse_unary_tests(
    source: &str,
    scanned: &Scanned,
    names: &[String],
) -> Result<ParsedUnaryTests, FeelError> {
    let anything = || {
        Ok((
            true,
            false,
            Vec::new(),
            Vec::new(),
            HashMap::new(),
            Box::default(),
        ))
    };
    if source.is_empty() || source == "-" {
        return anything();
    }
    let scope = parse_scope(&scanned.code, names);
    let ast = dsntk_feel_parser::parse_unary_tests(&scope, &scanned.text, false)
        .map_err(|e| parse_failure("unary tests", source, &scanned.text, &e.to_string()))?;
    if ast_depth(&ast) > MAX_AST_DEPTH {
        return Err(FeelError::new(format!(
            "failed to parse unary tests '{source}': nested deeper than {MAX_AST_DEPTH} levels"
        )));
    }
    check_calls(&ast)
        .map_err(|why| FeelError::new(format!("failed to parse unary tests '{source}': {why}")))?;
    let (negated, items) = match ast {
        AstNode::Irrelevant => return anything(),
        AstNode::ExpressionList(items) => (false, items),
        AstNode::NegatedList(items) => (true, items),
        other => (false, vec![other]),
    };
    let mut names = HashSet::new();
    let mut access = HashMap::new();
    let mut tests = Vec::with_capacity(items.len());
    let mut extensions: Vec<(Name, FeelValue)> = Vec::new();
    for mut item in items {
        if matches!(item, AstNode::Irrelevant) {
            // `-` inside a list (dsntk does not produce it, but it would mean "anything").
            return anything();
        }
        normalise(&mut item, &mut names);
        for (name, function) in rewrite_calls(&mut item, &names).into_vec() {
            if !extensions.iter().any(|(n, _)| *n == name) {
                extensions.push((name, function));
            }
        }
        collect_access(&item, &mut access);
        tests.push(PositiveTest {
            expression: !matches!(item, AstNode::Boolean(_)),
            evaluator: dsntk_feel_evaluator::prepare(&item),
        });
    }
    names.remove(&Name::from(INPUT_NAME));
    let mut names: Vec<Name> = names.into_iter().collect();
    names.sort();
    access.retain(|_, a| matches!(a, Access::Keys(_)));
    Ok((
        false,
        negated,
        tests,
        names,
        access,
        extensions.into_boxed_slice(),
    ))
}

/// Rejects inputs that could exhaust the stack inside dsntk (a stack overflow aborts the process,
/// `catch_unwind` cannot stop it) or make its parser run for seconds. `code` is the source
/// without its string literals' contents and comments (see `scan`).
fn check_limits(what: &str, source: &str, code: &str) -> Result<(), FeelError> {
    let too_long = |limit: usize, part: &str| {
        FeelError::new(format!(
            "failed to parse {what} '{}...': {what} longer than {limit} bytes{part}",
            source.chars().take(64).collect::<String>()
        ))
    };
    if source.len() > MAX_TEXT_LEN {
        return Err(too_long(MAX_TEXT_LEN, ""));
    }
    if code.len() > MAX_CODE_LEN {
        return Err(too_long(
            MAX_CODE_LEN,
            " outside its string literals; split it over several expressions or variables",
        ));
    }
    let mut depth = 0usize;
    // Parts of the current name run, and whether the previous character was a name character.
    let mut run = 0usize;
    let mut in_word = false;
    for ch in code.chars() {
        if is_name_part_char(ch) {
            if !in_word {
                run += 1;
            }
            in_word = true;
        } else {
            in_word = false;
            if matches!(ch, '.' | '/' | '-' | '\'' | '+' | '*') {
                run += 1;
            } else if !ch.is_whitespace() {
                run = 0;
            }
        }
        if run > MAX_NAME_RUN {
            return Err(FeelError::new(format!(
                "failed to parse {what} '{source}': more than {MAX_NAME_RUN} names and operators \
                 in a row; split the expression with parentheses"
            )));
        }
        match ch {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(FeelError::new(format!(
                        "failed to parse {what} '{source}': brackets nested deeper than {MAX_NESTING}"
                    )));
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// A prepared expression: its evaluator, the names it refers to, how it reads them, and the
/// extension built-ins it calls.
type Prepared = (
    Evaluator,
    Vec<Name>,
    HashMap<Name, Access>,
    Box<[(Name, FeelValue)]>,
);

fn parse_and_prepare(
    source: &str,
    scanned: &Scanned,
    names: &[String],
) -> Result<Prepared, FeelError> {
    let scope = parse_scope(&scanned.code, names);
    let mut ast = dsntk_feel_parser::parse_expression(&scope, &scanned.text, false)
        .map_err(|e| parse_failure("expression", source, &scanned.text, &e.to_string()))?;
    if ast_depth(&ast) > MAX_AST_DEPTH {
        return Err(FeelError::new(format!(
            "failed to parse expression '{source}': expression nested deeper than {MAX_AST_DEPTH} levels"
        )));
    }
    check_calls(&ast)
        .map_err(|why| FeelError::new(format!("failed to parse expression '{source}': {why}")))?;
    let mut names = HashSet::new();
    normalise(&mut ast, &mut names);
    let extensions = rewrite_calls(&mut ast, &names);
    let mut access = HashMap::new();
    collect_access(&ast, &mut access);
    access.retain(|_, a| matches!(a, Access::Keys(_)));
    let evaluator = dsntk_feel_evaluator::prepare(&ast);
    let mut names: Vec<Name> = names.into_iter().collect();
    names.sort();
    Ok((evaluator, names, access, extensions))
}

/// Points the calls of Camunda built-ins that dsntk lacks at their implementations
/// (`builtins`), and the calls of dsntk built-ins whose name the expression also reads as a
/// variable or binds to something else than a function (`count([count])`,
/// `{after: "x", r: after(10, 1)}`) at the built-in itself: dsntk would find the value first;
/// in FEEL-scala functions have a namespace of their own. A name the expression binds to a
/// function (`{f: function(x) x, r: f(1)}`) calls that function. Returns the function values to put
/// in scope, by the internal names the calls now use. `names` are the names read as values.
fn rewrite_calls(ast: &mut AstNode, names: &HashSet<Name>) -> Box<[(Name, FeelValue)]> {
    let bound = bound_names(ast);
    let functions_bound = bound_functions(ast);
    let mut used = Vec::new();
    builtins::rewrite(ast, &functions_bound, &mut used);
    let mut functions: Vec<(Name, FeelValue)> = used
        .into_iter()
        .filter_map(|n| builtins::function(&n).map(|f| (Name::from(n.as_str()), f)))
        .collect();
    let mut stack: Vec<&mut AstNode> = vec![ast];
    while let Some(node) = stack.pop() {
        if let AstNode::FunctionInvocation(callee, _) = node {
            if let AstNode::Name(name) = &mut **callee {
                let bif = dsntk_feel::bif::Bif::from_str(name.as_str());
                let shadowed = names.contains(name) || bound.contains(name);
                if let (Ok(bif), true, false) = (bif, shadowed, functions_bound.contains(name)) {
                    let alias = Name::from(format!("{name}#builtin").as_str());
                    if !functions.iter().any(|(n, _)| *n == alias) {
                        functions.push((alias.clone(), FeelValue::BuiltInFunction(bif)));
                    }
                    *name = alias;
                }
            }
        }
        for_each_child_mut(node, |child| stack.push(child));
    }
    functions.into_boxed_slice()
}

/// Calls dsntk's built-in `name` with `args` (the extensions that only add overloads hand the
/// other forms back to it).
fn call_dsntk_builtin(name: &str, args: &[FeelValue]) -> FeelValue {
    let mut ctx = FeelContext::default();
    let params: Vec<AstNode> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let n = Name::from(format!("zest argument {i}").as_str());
            ctx.set_entry(&n, a.clone());
            AstNode::Name(n)
        })
        .collect();
    let call = AstNode::FunctionInvocation(
        Box::new(AstNode::Name(Name::from(name))),
        Box::new(AstNode::PositionalParameters(params)),
    );
    dsntk_feel_evaluator::prepare(&call)(&FeelScope::from(ctx))
}

/// The error for a text that dsntk could not parse; `what` is "expression" or "unary tests",
/// `text` what dsntk was given (see `scan`).
fn parse_failure(what: &str, source: &str, text: &str, dsntk_message: &str) -> FeelError {
    // dsntk prefixes its messages with the error kind, e.g. `<ParserError> syntax error: x +`.
    let detail = match dsntk_message
        .strip_prefix('<')
        .and_then(|rest| rest.split_once("> "))
    {
        Some((_, message)) => message,
        None => dsntk_message,
    };
    let detail = match detail.strip_suffix(text) {
        Some(stripped) if !text.is_empty() => stripped.trim_end().trim_end_matches(':'),
        _ => detail,
    };
    FeelError::new(format!("failed to parse {what} '{source}': {detail}"))
}

/// FEEL keywords; never offered to the lexer as names.
const KEYWORDS: &[&str] = &[
    "and",
    "or",
    "not",
    "then",
    "else",
    "if",
    "in",
    "return",
    "satisfies",
    "between",
    "instance",
    "of",
    "for",
    "some",
    "every",
    "true",
    "false",
    "null",
    "function",
    "external",
];

/// Built-in type names; offering them as names would break `x instance of number` and typed
/// function parameters, so they are withheld when the expression contains such constructs.
const TYPE_NAMES: &[&str] = &[
    "Any", "Null", "boolean", "number", "string", "date", "time", "context", "list", "range",
];

/// Multi-word function names (dsntk's built-ins, minus `date and time`, plus some Camunda
/// extensions that dsntk lacks, so that those are reported as unknown functions rather than as a
/// syntax error). Offered to the lexer so that the longest name wins over its first word.
const MULTI_WORD_FUNCTIONS: &[&str] = &[
    "context merge",
    "context put",
    "day of week",
    "day of year",
    "distinct values",
    "ends with",
    "finished by",
    "get entries",
    "get value",
    "index of",
    "insert before",
    "list contains",
    "list replace",
    "lower case",
    "met by",
    "month of year",
    "overlaps after",
    "overlaps before",
    "round down",
    "round half down",
    "round half up",
    "round up",
    "started by",
    "starts with",
    "string join",
    "string length",
    "substring after",
    "substring before",
    "upper case",
    "week of year",
    "years and months duration",
    // Camunda 8 extensions not provided by dsntk (served by `builtins`).
    "random number",
    "is defined",
    "get or else",
    "is empty",
    "is blank",
    "last day of month",
    "duplicate values",
    "to base64",
    "from base64",
    "put all",
    "context entries",
];

/// Builds the scope dsntk's parser needs.
///
/// FEEL (DMN) allows spaces and `+ - * / . '` inside names, so dsntk's lexer reads the longest run
/// of words and symbols and then shortens it until it matches a name known in the parse scope; with
/// an empty scope `a + b` is the single name `a+b` and `x.y` the name `x.y`. Zeebe (FEEL-scala)
/// names are plain identifiers, so we offer every identifier-like word of the source as a known
/// name; then `a + b` is `a`, `+`, `b`, whatever the variables are at evaluation time, and the
/// parse can be done once at deployment. Exceptions: keywords; `date`, `time`, `duration` when
/// used as function names (dsntk recognises those only when they are not known names); built-in
/// type names when the expression has `instance of` or a function definition. `code` is the
/// source without its string literals' contents and comments (see `scan`): the words of a long
/// text in a literal are no names, and offering them would make the parse slower.
fn parse_scope(code: &str, names: &[String]) -> FeelScope {
    let words = identifier_words(code);
    let typed = code.contains("function");
    let only_types = words_only_in_instance_of(code);
    let has_date_and_time = code.contains("date and time");
    let mut ctx = FeelContext::default();
    for (word, called) in &words {
        let word = word.as_str();
        if KEYWORDS.contains(&word)
            || (typed && TYPE_NAMES.contains(&word))
            || only_types.contains(word)
        {
            continue;
        }
        if matches!(word, "date" | "time" | "duration") && (*called || has_date_and_time) {
            continue;
        }
        ctx.set_entry(&Name::from(word), FeelValue::Null(None));
    }
    // the type `years and months duration` is not the function of that name
    let ym_type = only_types.contains("months");
    for name in MULTI_WORD_FUNCTIONS {
        if ym_type && *name == "years and months duration" {
            continue;
        }
        ctx.set_entry(&Name::from(*name), FeelValue::Null(None));
    }
    // names the caller knows (a DMN model's input data, decisions, business knowledge models,
    // context entries): with spaces or operators in them (`Full Name`, `Date-Time`)
    for name in names {
        ctx.set_entry(&Name::from(name.as_str()), FeelValue::Null(None));
    }
    FeelScope::from(ctx)
}

/// The `names` that occur in `source` (the others cannot matter to its parse); whitespace
/// counts as one space, as FEEL reads names (a name may be broken over lines).
fn names_in(source: &str, names: &[String]) -> Box<[String]> {
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let source = words(source);
    names
        .iter()
        .filter(|n| !n.is_empty() && source.contains(&words(n)))
        .cloned()
        .collect()
}

/// dsntk's (FEEL's) name start characters.
fn is_name_start_char(ch: char) -> bool {
    matches!(ch, '?' | 'A'..='Z' | '_' | 'a'..='z' |
        '\u{00C0}'..='\u{00D6}' | '\u{00D8}'..='\u{00F6}' | '\u{00F8}'..='\u{02FF}' |
        '\u{0370}'..='\u{037D}' | '\u{037F}'..='\u{1FFF}' | '\u{200C}'..='\u{200D}' |
        '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}' | '\u{3001}'..='\u{D7FF}' |
        '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}' | '\u{10000}'..='\u{EFFFF}')
}

/// dsntk's (FEEL's) name part characters.
fn is_name_part_char(ch: char) -> bool {
    is_name_start_char(ch)
        || ch.is_ascii_digit()
        || matches!(ch, '\u{00B7}' | '\u{0300}'..='\u{036F}' | '\u{203F}'..='\u{2040}')
}

/// The identifier-like words of `source`, each with whether some occurrence of it is followed
/// (after whitespace) by `(`.
fn identifier_words(source: &str) -> HashMap<String, bool> {
    let chars: Vec<char> = source.chars().collect();
    let mut words: HashMap<String, bool> = HashMap::new();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        if ch.is_ascii_digit() {
            // Skip numbers (and identifier characters glued to them, e.g. `1e3`).
            while i < chars.len() && is_name_part_char(chars[i]) {
                i += 1;
            }
            continue;
        }
        if !is_name_start_char(ch) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_name_part_char(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        let called = chars[i..].iter().find(|c| !c.is_whitespace()) == Some(&'(');
        *words.entry(word).or_default() |= called;
    }
    words
}

/// The words that occur only in the type of an `instance of` (`x instance of days and time
/// duration`): offered to the lexer as names they would spoil the type, while a word that is
/// also a variable (`days > 3 and days instance of number`) must stay a name.
fn words_only_in_instance_of(source: &str) -> HashSet<String> {
    const TYPES: &[&str] = &[
        "days and time duration",
        "years and months duration",
        "date and time",
    ];
    if !source.contains("instance") {
        return HashSet::new();
    }
    // the source with each type of an `instance of` blanked out, and the words of those types
    let mut rest = source.to_string();
    let mut only = HashSet::new();
    let mut from = 0;
    while let Some(at) = rest[from..].find("instance of") {
        let start = from + at + "instance of".len();
        let text = &rest[start..];
        let skipped = text.len() - text.trim_start().len();
        let text = text.trim_start();
        let mut len = TYPES.iter().find(|t| text.starts_with(*t)).map_or_else(
            || {
                text.find(|c: char| !is_name_part_char(c))
                    .unwrap_or(text.len())
            },
            |t| t.len(),
        );
        // generics: `list<number>`, `context<a: string>`, `function<number>->number`
        if text[len..].trim_start().starts_with('<') {
            let mut depth = 0;
            for (i, c) in text.char_indices().skip(len) {
                match c {
                    '<' => depth += 1,
                    '>' if depth > 0 => {
                        depth -= 1;
                        if depth == 0 {
                            len = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        let (a, b) = (start + skipped, start + skipped + len);
        only.extend(identifier_words(&rest[a..b]).into_keys());
        rest.replace_range(a..b, &" ".repeat(b - a));
        from = b;
    }
    let elsewhere = identifier_words(&rest);
    only.retain(|w| !elsewhere.contains_key(w));
    only
}

/// Depth of the AST (iterative, so that measuring cannot overflow the stack).
fn ast_depth(root: &AstNode) -> usize {
    let mut max = 0;
    let mut stack: Vec<(&AstNode, usize)> = vec![(root, 1)];
    while let Some((node, depth)) = stack.pop() {
        max = max.max(depth);
        for_each_child(node, |child| stack.push((child, depth + 1)));
    }
    max
}

/// The direct children of an AST node, for [`for_each_child`] and [`for_each_child_mut`]: one
/// match serves both, `$iter` is `iter` or `iter_mut`.
macro_rules! for_each_child_of {
    ($node:expr, $f:ident, $iter:ident) => {{
        use AstNode::*;
        match $node {
            Add(a, b)
            | And(a, b)
            | ContextEntry(a, b)
            | ContextTypeEntry(a, b)
            | Div(a, b)
            | Eq(a, b)
            | Every(a, b)
            | Exp(a, b)
            | Filter(a, b)
            | For(a, b)
            | FormalParameter(a, b)
            | FunctionDefinition(a, b)
            | FunctionInvocation(a, b)
            | FunctionType(a, b)
            | Ge(a, b)
            | Gt(a, b)
            | In(a, b)
            | InstanceOf(a, b)
            | IterationContextSingle(a, b)
            | Le(a, b)
            | Lt(a, b)
            | Mul(a, b)
            | NamedParameter(a, b)
            | Nq(a, b)
            | Or(a, b)
            | Out(a, b)
            | Path(a, b)
            | QuantifiedContext(a, b)
            | Range(a, b)
            | Some(a, b)
            | Sub(a, b) => {
                $f(a);
                $f(b);
            }
            Between(a, b, c) | If(a, b, c) | IterationContextInterval(a, b, c) => {
                $f(a);
                $f(b);
                $f(c);
            }
            EvaluatedExpression(a)
            | FunctionBody(a, _)
            | IntervalEnd(a, _)
            | IntervalStart(a, _)
            | ListType(a)
            | Neg(a)
            | RangeType(a)
            | Satisfies(a)
            | UnaryGe(a)
            | UnaryGt(a)
            | UnaryLe(a)
            | UnaryLt(a)
            | UnaryEq(a)
            | UnaryNe(a) => $f(a),
            CommaList(items)
            | Context(items)
            | ContextType(items)
            | ExpressionList(items)
            | FormalParameters(items)
            | IterationContexts(items)
            | List(items)
            | NamedParameters(items)
            | NegatedList(items)
            | ParameterTypes(items)
            | PositionalParameters(items)
            | QualifiedName(items)
            | QuantifiedContexts(items) => items.$iter().for_each($f),
            At(_)
            | Boolean(_)
            | ContextEntryKey(_)
            | ContextTypeEntryKey(_)
            | FeelType(_)
            | Irrelevant
            | Name(_)
            | Null
            | Numeric(..)
            | ParameterName(_)
            | QualifiedNameSegment(_)
            | String(_) => {}
        }
    }};
}

/// Calls `f` on every direct child of `node`.
pub(crate) fn for_each_child<'a>(node: &'a AstNode, mut f: impl FnMut(&'a AstNode)) {
    for_each_child_of!(node, f, iter)
}

/// Mutable twin of [`for_each_child`].
fn for_each_child_mut<'a>(node: &'a mut AstNode, mut f: impl FnMut(&'a mut AstNode)) {
    for_each_child_of!(node, f, iter_mut)
}

/// Collects every name the expression refers to as a value (not as the name of a called
/// function) and rewrites `e = <literal>` / `e != <literal>`
/// into `<literal> = e` / `<literal> != e` (equality is symmetric in FEEL, but dsntk answers
/// `null = true` with null instead of false; with the literal first it answers false).
fn normalise(node: &mut AstNode, names: &mut HashSet<Name>) {
    // Iterative over an explicit stack: the depth was bounded before, but this keeps it cheap.
    let mut stack: Vec<&mut AstNode> = vec![node];
    while let Some(node) = stack.pop() {
        if let AstNode::Eq(lhs, rhs) | AstNode::Nq(lhs, rhs) = node {
            if is_comparable_literal(rhs) && !is_comparable_literal(lhs) {
                std::mem::swap(lhs, rhs);
            }
        }
        if let AstNode::Name(name) = node {
            names.insert(name.clone());
        }
        // The callee's name is not a variable reference: dsntk looks names up in the variables
        // before the built-ins, so leaving it out lets a variable called e.g. `count` coexist with
        // `count(list)`, as in FEEL-scala where functions have their own namespace.
        let named_call = matches!(node, AstNode::FunctionInvocation(callee, _) if matches!(**callee, AstNode::Name(_)));
        if named_call {
            if let AstNode::FunctionInvocation(_, args) = node {
                stack.push(args);
            }
        } else {
            for_each_child_mut(node, |child| stack.push(child));
        }
    }
}

/// The names an expression binds itself: iteration and quantifier variables, function
/// parameters, context entry keys (what it reads as values is [`value_children`]'s walk).
fn bound_names(root: &AstNode) -> HashSet<Name> {
    let mut bound = HashSet::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node {
            AstNode::IterationContextSingle(var, _)
            | AstNode::QuantifiedContext(var, _)
            | AstNode::FormalParameter(var, _)
            | AstNode::IterationContextInterval(var, _, _) => {
                if let AstNode::Name(n) | AstNode::ParameterName(n) = &**var {
                    bound.insert(n.clone());
                }
            }
            AstNode::ContextEntryKey(n) | AstNode::ParameterName(n) => {
                bound.insert(n.clone());
            }
            _ => {}
        }
        value_children(node, |c| stack.push(c));
    }
    bound
}

/// The names the expression binds to functions: context entries whose value is a function
/// definition, and function parameters (which may be given functions).
fn bound_functions(root: &AstNode) -> HashSet<Name> {
    let mut bound = HashSet::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node {
            AstNode::ContextEntry(key, value) => {
                if let (AstNode::ContextEntryKey(n), AstNode::FunctionDefinition(..)) =
                    (&**key, &**value)
                {
                    bound.insert(n.clone());
                }
            }
            AstNode::FormalParameter(var, _) => {
                if let AstNode::Name(n) | AstNode::ParameterName(n) = &**var {
                    bound.insert(n.clone());
                }
            }
            _ => {}
        }
        for_each_child(node, |c| stack.push(c));
    }
    bound
}

/// The children of `node` that are evaluated as values in the expression's own scope: not the
/// keys of paths, a called function's name, a filter's condition, nor a bound variable's name.
fn value_children<'a>(node: &'a AstNode, mut f: impl FnMut(&'a AstNode)) {
    match node {
        AstNode::Path(lhs, _) | AstNode::Filter(lhs, _) => f(lhs),
        AstNode::FunctionInvocation(callee, args) if matches!(**callee, AstNode::Name(_)) => {
            f(args)
        }
        AstNode::IterationContextSingle(_, rest)
        | AstNode::QuantifiedContext(_, rest)
        | AstNode::FormalParameter(_, rest) => f(rest),
        AstNode::IterationContextInterval(_, start, end) => {
            f(start);
            f(end);
        }
        _ => for_each_child(node, f),
    }
}

/// Built-in functions that call function values passed to them.
const HIGHER_ORDER_BUILTINS: &[&str] = &["sort", "list replace"];

/// Checks the function calls of the expression:
///
/// - A call of an unknown function is accepted, as Zeebe accepts it: it evaluates to null, and
///   the incident it may cause reports FEEL-scala's `NO_FUNCTION_FOUND` warning.
/// - dsntk has no recursion limit and a stack overflow aborts the whole process, so user-defined
///   functions may not recurse: a function body may only call built-in functions that do not call
///   back. A body's calls then never re-enter a body, and the call depth is bounded by the
///   (already bounded) AST depth. Sorting with an inline function outside a function body,
///   `sort(xs, function(a, b) a < b)`, remains possible.
fn check_calls(root: &AstNode) -> Result<(), String> {
    fn bound_names<'a>(node: &'a AstNode, bound: &mut HashSet<&'a str>) {
        match node {
            AstNode::ParameterName(name) | AstNode::ContextEntryKey(name) => {
                bound.insert(name.as_str());
            }
            AstNode::IterationContextSingle(var, _)
            | AstNode::IterationContextInterval(var, _, _)
            | AstNode::QuantifiedContext(var, _) => {
                if let AstNode::Name(name) = &**var {
                    bound.insert(name.as_str());
                }
            }
            _ => {}
        }
        for_each_child(node, |child| bound_names(child, bound));
    }
    fn check(node: &AstNode, in_body: bool, bound: &HashSet<&str>) -> Result<(), String> {
        if let AstNode::FunctionInvocation(callee, _) = node {
            // Whether the callee is a built-in that does not call back into function values.
            let plain_builtin = match &**callee {
                AstNode::Name(name) => {
                    let name = name.as_str();
                    if bound.contains(name) {
                        false
                    } else {
                        // a built-in of dsntk or of `builtins`, or no function at all (FEEL-scala
                        // evaluates a call of an unknown function to null, "no function found",
                        // and so does Zest): none of them calls back
                        !HIGHER_ORDER_BUILTINS.contains(&name)
                    }
                }
                _ => false,
            };
            if in_body && !plain_builtin {
                return Err(
                    "a user-defined function may only call built-in functions (recursion is not supported)"
                        .into(),
                );
            }
        }
        let in_body = in_body || matches!(node, AstNode::FunctionBody(..));
        let mut result = Ok(());
        for_each_child(node, |child| {
            if result.is_ok() {
                result = check(child, in_body, bound);
            }
        });
        result
    }
    let mut bound = HashSet::new();
    bound_names(root, &mut bound);
    check(root, false, &bound)
}

fn is_comparable_literal(node: &AstNode) -> bool {
    match node {
        AstNode::Boolean(_) | AstNode::Numeric(..) | AstNode::String(_) => true,
        AstNode::Neg(inner) => matches!(**inner, AstNode::Numeric(..)),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
