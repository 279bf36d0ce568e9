//! DMN: parses DMN 1.3 decision requirements graphs (what Camunda Modeler writes) and evaluates
//! their decisions the way Zeebe (dmn-scala) does, reporting what a DECISION_EVALUATION record
//! needs: every decision evaluated (required decisions first), its inputs, the rules that matched
//! and their outputs. Pure: no I/O, no clock. FEEL goes through `zest-feel` (dsntk).
//!
//! - [`parse_dmn`] checks a resource and builds a [`DecisionRequirements`] (all FEEL parsed
//!   once, at deployment).
//! - [`DecisionRequirements::evaluate`] evaluates one decision with the given variables.

use serde_json::{Map, Value};

pub use crate::dmn_parse::parse_dmn;

/// A parsed DMN resource: one decision requirements graph (the `definitions` element).
#[derive(Debug, Clone)]
pub struct DecisionRequirements {
    /// `definitions/@id`.
    pub id: String,
    /// `definitions/@name`.
    pub name: String,
    pub namespace: String,
    /// The decisions in document order.
    pub decisions: Vec<Decision>,
}

/// A decision of a graph.
#[derive(Debug, Clone)]
pub struct Decision {
    pub id: String,
    /// `@name` (empty when absent).
    pub name: String,
    /// Ids of the decisions this one requires (`informationRequirement/requiredDecision/@href`
    /// without the `#`), in document order. Their results are visible to this decision under
    /// their [`Decision::result_name`] (their decision id unless they declare a `variable`).
    pub required: Vec<String>,
    /// The name this decision's result is visible under to the decisions requiring it:
    /// `variable/@name` when the decision has one, else its id (as dmn-scala does).
    pub result_name: String,
    pub logic: DecisionLogic,
}

/// How a decision computes its result.
#[derive(Debug, Clone)]
pub enum DecisionLogic {
    Table(DecisionTable),
    Literal(zest_feel::Expression),
}

impl DecisionLogic {
    /// Zeebe's `decisionType` for it.
    pub fn type_name(&self) -> &'static str {
        match self {
            DecisionLogic::Table(_) => "DECISION_TABLE",
            DecisionLogic::Literal(_) => "LITERAL_EXPRESSION",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitPolicy {
    Unique,
    First,
    Priority,
    Any,
    Collect,
    RuleOrder,
    OutputOrder,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    Sum,
    Min,
    Max,
    Count,
}

#[derive(Debug, Clone)]
pub struct DecisionTable {
    pub hit_policy: HitPolicy,
    /// Only with [`HitPolicy::Collect`].
    pub aggregation: Option<Aggregation>,
    pub inputs: Vec<TableInput>,
    pub outputs: Vec<TableOutput>,
    pub rules: Vec<Rule>,
}

#[derive(Debug, Clone)]
pub struct TableInput {
    /// `input/@id`.
    pub id: String,
    /// What Zeebe reports as the input's name: `@label`, else the input expression's text.
    pub name: String,
    pub expression: zest_feel::Expression,
}

#[derive(Debug, Clone)]
pub struct TableOutput {
    /// `output/@id`.
    pub id: String,
    /// `@name`: the key of this output in the result context (empty allowed with one output).
    pub name: String,
    /// What Zeebe reports as the output's name: `@label`, else `@name`.
    pub label: String,
    /// `outputValues` (for PRIORITY and OUTPUT ORDER): the allowed values, most important first.
    pub priorities: Vec<Value>,
}

#[derive(Debug, Clone)]
pub struct Rule {
    /// `rule/@id`.
    pub id: String,
    /// One per input; `None` for `-` or an empty entry (matches anything).
    pub input_entries: Vec<Option<zest_feel::UnaryTests>>,
    /// One per output.
    pub output_entries: Vec<zest_feel::Expression>,
}

/// The evaluation of one decision (and the decisions it requires).
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Every decision evaluated, required ones first, the requested one last (also when it
    /// failed: then its output is `null`).
    pub evaluated: Vec<EvaluatedDecision>,
    /// The requested decision's result, or why it failed.
    pub result: Result<Value, EvaluationFailure>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EvaluationFailure {
    /// The decision that failed (the requested one or one it requires).
    pub decision_id: String,
    /// Zeebe's text, e.g. "Expected to evaluate decision 'tier', but multiple values aren't
    /// allowed for UNIQUE hit policy. found: 'List(Map(tier -> \"medium\"), ...)'".
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EvaluatedDecision {
    pub decision_id: String,
    pub decision_name: String,
    /// "DECISION_TABLE" or "LITERAL_EXPRESSION".
    pub decision_type: &'static str,
    pub output: Value,
    pub inputs: Vec<EvaluatedInput>,
    pub matched_rules: Vec<MatchedRule>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EvaluatedInput {
    pub id: String,
    pub name: String,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MatchedRule {
    pub id: String,
    /// 1-based position of the rule in its table.
    pub index: i32,
    pub outputs: Vec<EvaluatedOutput>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EvaluatedOutput {
    pub id: String,
    /// The output's label, else its name.
    pub name: String,
    pub value: Value,
}

/// Variables are a JSON object (the process instance's visible variables, or EvaluateDecision's
/// variables).
pub type Variables = Map<String, Value>;
