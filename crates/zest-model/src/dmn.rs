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
    /// The business knowledge models (functions the decisions and each other call by name).
    pub knowledge: std::sync::Arc<Vec<BusinessKnowledgeModel>>,
}

/// A business knowledge model: a function of named parameters whose body is a boxed
/// expression; decisions (and other models) call it by its name.
#[derive(Debug, Clone)]
pub struct BusinessKnowledgeModel {
    pub id: String,
    /// The name it is called by (`variable/@name`, else `@name`).
    pub name: String,
    pub params: Vec<String>,
    pub body: Boxed,
}

/// A boxed expression of DMN (a decision's logic, a business knowledge model's body, or a
/// part of either).
#[derive(Debug, Clone)]
pub enum Boxed {
    Literal(zest_feel::Expression),
    Table(Box<DecisionTable>),
    /// Entries in order; each named entry is visible to the ones after it. The result is the
    /// entry without a name when there is one, else the context of the named entries.
    Context(Vec<(Option<String>, Boxed)>),
    /// A call of a business knowledge model (or a function of a context) by name, with named
    /// arguments.
    Invocation {
        function: String,
        bindings: Vec<(String, Boxed)>,
    },
    /// A list of rows, each a context of the columns.
    Relation {
        columns: Vec<String>,
        rows: Vec<Vec<Boxed>>,
    },
    List(Vec<Boxed>),
    /// A function (in a context entry, or a business knowledge model's logic).
    Function {
        params: Vec<String>,
        body: std::sync::Arc<Boxed>,
    },
    Conditional {
        condition: Box<Boxed>,
        then: Box<Boxed>,
        otherwise: Box<Boxed>,
    },
    /// `filter`: the items of `list` for which `matches` (with `item` bound) is true.
    Filter {
        list: Box<Boxed>,
        matches: Box<Boxed>,
    },
    /// `for`, `every`, `some`: `variable` over the items of `list`.
    Iterate {
        kind: Iteration,
        variable: String,
        list: Box<Boxed>,
        body: Box<Boxed>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iteration {
    For,
    Every,
    Some,
}

impl Boxed {
    /// Zeebe's `decisionType` of a decision whose logic this is.
    pub fn type_name(&self) -> &'static str {
        match self {
            Boxed::Literal(_) => "LITERAL_EXPRESSION",
            Boxed::Table(_) => "DECISION_TABLE",
            Boxed::Context(_) => "CONTEXT",
            Boxed::Invocation { .. } => "INVOCATION",
            Boxed::Relation { .. } => "RELATION",
            Boxed::List(_) => "LIST",
            Boxed::Function { .. } => "FUNCTION_DEFINITION",
            Boxed::Conditional { .. } | Boxed::Filter { .. } | Boxed::Iterate { .. } => "UNKNOWN",
        }
    }
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
    /// Any other boxed expression: context, invocation, relation, list, ...
    Boxed(Boxed),
}

impl DecisionLogic {
    /// Zeebe's `decisionType` for it.
    pub fn type_name(&self) -> &'static str {
        match self {
            DecisionLogic::Table(_) => "DECISION_TABLE",
            DecisionLogic::Literal(_) => "LITERAL_EXPRESSION",
            DecisionLogic::Boxed(b) => b.type_name(),
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
    /// `defaultOutputEntry`: the output's value when no rule matches.
    pub default: Option<zest_feel::Expression>,
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
    /// Zeebe's decision type: "DECISION_TABLE", "LITERAL_EXPRESSION", "CONTEXT", ... (see
    /// [`Boxed::type_name`]).
    pub decision_type: &'static str,
    pub output: Value,
    pub inputs: Vec<EvaluatedInput>,
    pub matched_rules: Vec<MatchedRule>,
}

impl EvaluatedDecision {
    /// The report of a decision (or business knowledge model) before it has a result.
    pub(crate) fn new(id: &str, name: &str, decision_type: &'static str) -> EvaluatedDecision {
        EvaluatedDecision {
            decision_id: id.to_string(),
            decision_name: name.to_string(),
            decision_type,
            output: Value::Null,
            inputs: Vec::new(),
            matched_rules: Vec::new(),
        }
    }
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
