//! DMN XML -> [`DecisionRequirements`]: parsing and deploy-time validation of a decision
//! requirements graph (what Zeebe's dmn-scala accepts): decision tables and literal expressions
//! here, the other boxed expressions and business knowledge models in `dmn_boxed`.
//!
//! Elements are matched by local name in the namespace of the root `definitions` element, which
//! must be one of the DMN 1.1 to 1.5 model namespaces (Camunda Modeler writes DMN 1.3). All FEEL
//! (input expressions, input entries as unary tests, output entries, literal expressions, output
//! values) is parsed here, once, through `zest-feel`.
//!
//! Every problem is collected (never only the first), each naming the decision it belongs to and
//! its line; the result is either the whole graph or a [`ModelError`] listing every problem,
//! sorted by position.

use std::collections::{HashMap, HashSet};

use crate::xml::LineIndex;
use roxmltree::Node;
use serde_json::{Map, Value};
use zest_feel::{Expression, UnaryTests};

use crate::dmn::{
    Aggregation, Decision, DecisionLogic, DecisionRequirements, DecisionTable, HitPolicy, Rule,
    TableInput, TableOutput,
};
use crate::model::{ModelError, Problem};

/// DMN model namespaces: 1.1, 1.2, 1.3 (and the `http` spelling Camunda's model API accepts for
/// it), 1.4, 1.5.
const DMN_NAMESPACES: &[&str] = &[
    "http://www.omg.org/spec/DMN/20151101/dmn.xsd",
    "http://www.omg.org/spec/DMN/20180521/MODEL/",
    "https://www.omg.org/spec/DMN/20191111/MODEL/",
    "http://www.omg.org/spec/DMN/20191111/MODEL/",
    "https://www.omg.org/spec/DMN/20211108/MODEL/",
    "https://www.omg.org/spec/DMN/20230324/MODEL/",
];

/// Parses a DMN resource and returns its decision requirements graph, or every problem found.
pub fn parse_dmn(resource_name: &str, xml: &[u8]) -> Result<DecisionRequirements, ModelError> {
    let fail = |problems: Vec<Problem>| ModelError {
        resource_name: resource_name.to_string(),
        problems,
    };
    let (text, doc) = crate::xml::load(resource_name, xml)?;

    let root = doc.root_element();
    let mut ctx = Ctx {
        lines: LineIndex::new(text),
        ns: DMN_NAMESPACES[2],
        problems: Vec::new(),
        names: crate::dmn_boxed::model_names(root),
    };
    let namespace = root.tag_name().namespace().unwrap_or_default();
    let known = DMN_NAMESPACES.iter().find(|ns| **ns == namespace);
    let Some(namespace) = known.filter(|_| root.tag_name().name() == "definitions") else {
        let found = match root.tag_name().namespace() {
            Some(ns) => format!("'{}' in namespace '{ns}'", root.tag_name().name()),
            None => format!("'{}' without namespace", root.tag_name().name()),
        };
        ctx.problem(
            None,
            root,
            format!(
                "the root element must be 'definitions' in a DMN namespace (e.g. '{}'), but is {found}",
                DMN_NAMESPACES[2]
            ),
        );
        return Err(fail(ctx.problems));
    };
    ctx.ns = namespace;

    let id = attr(root, "id").unwrap_or_default().to_string();
    if id.is_empty() {
        ctx.problem(
            None,
            root,
            "the 'definitions' element has no id (it is the decision requirements id)",
        );
    }
    let mut knowledge = Vec::new();
    for node in ctx.children(root, "businessKnowledgeModel") {
        if let Some(bkm) = ctx.knowledge_model(node) {
            knowledge.push(bkm);
        }
    }
    let mut decisions = Vec::new();
    // Decision id -> the node declaring it first (for duplicate and reference checks).
    let mut seen: HashMap<String, Node> = HashMap::new();
    let mut decision_count = 0;
    for node in ctx.children(root, "decision") {
        decision_count += 1;
        if let Some(decision_id) = attr(node, "id") {
            if let Some(first) = seen.get(decision_id) {
                let first_line = ctx.line(*first);
                ctx.problem(
                    Some(decision_id),
                    node,
                    format!(
                        "duplicate decision id '{decision_id}' (also used by the decision on line {first_line})"
                    ),
                );
                continue;
            }
            seen.insert(decision_id.to_string(), node);
        }
        if let Some(decision) = ctx.decision(node) {
            decisions.push(decision);
        }
    }
    if decision_count == 0 {
        ctx.problem(
            None,
            root,
            "the DMN resource contains no decision (at least one 'decision' element is required)",
        );
    }
    ctx.check_graph(&decisions, &seen);

    if ctx.problems.is_empty() {
        Ok(DecisionRequirements {
            id,
            name: attr(root, "name").unwrap_or_default().to_string(),
            namespace: attr(root, "namespace").unwrap_or_default().to_string(),
            decisions,
            knowledge: std::sync::Arc::new(knowledge),
        })
    } else {
        ctx.problems.sort_by_key(|p| (p.line, p.column));
        Err(fail(ctx.problems))
    }
}

pub(crate) struct Ctx<'t> {
    lines: LineIndex<'t>,
    /// The DMN namespace of the resource (the root element's).
    ns: &'static str,
    problems: Vec<Problem>,
    /// The model's names that FEEL must read as one name (`dmn_boxed::model_names`).
    names: Vec<String>,
}

/// A non-empty (after trimming) attribute.
pub(crate) fn attr<'a>(node: Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.attribute(name).filter(|v| !v.trim().is_empty())
}

/// The text of an element: every text and CDATA descendant, concatenated.
fn text_content(node: Node) -> String {
    node.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect()
}

/// Whether an `expressionLanguage` attribute names FEEL (or is absent).
fn is_feel(node: Node) -> bool {
    match attr(node, "expressionLanguage") {
        None => true,
        Some(language) => {
            let language = language.trim().to_ascii_lowercase();
            language.contains("feel")
                || DMN_NAMESPACES
                    .iter()
                    .any(|ns| ns.eq_ignore_ascii_case(&language))
        }
    }
}

impl<'t> Ctx<'t> {
    fn line(&self, node: Node) -> u32 {
        self.lines.line(node)
    }

    pub(crate) fn problem(
        &mut self,
        element_id: Option<&str>,
        node: Node,
        message: impl Into<String>,
    ) {
        let problem = self.lines.problem(element_id, node, message);
        self.problems.push(problem);
    }

    pub(crate) fn is_dmn(&self, node: Node) -> bool {
        node.is_element() && node.tag_name().namespace() == Some(self.ns)
    }

    /// The DMN child elements of `node` named `name`.
    pub(crate) fn children<'a, 'input>(
        &self,
        node: Node<'a, 'input>,
        name: &str,
    ) -> Vec<Node<'a, 'input>> {
        node.children()
            .filter(|n| self.is_dmn(*n) && n.tag_name().name() == name)
            .collect()
    }

    pub(crate) fn child<'a, 'input>(
        &self,
        node: Node<'a, 'input>,
        name: &str,
    ) -> Option<Node<'a, 'input>> {
        node.children()
            .find(|n| self.is_dmn(*n) && n.tag_name().name() == name)
    }

    /// The text of `node`'s `text` child (`None` when there is no such child).
    pub(crate) fn text_child(&self, node: Node) -> Option<String> {
        self.child(node, "text").map(text_content)
    }

    /// Checks the expression language of `node`; false (and a problem) when it is not FEEL.
    fn check_feel(&mut self, decision_id: &str, node: Node, what: &str) -> bool {
        if is_feel(node) {
            return true;
        }
        let language = attr(node, "expressionLanguage")
            .unwrap_or_default()
            .to_string();
        self.problem(
            Some(decision_id),
            node,
            format!(
                "{what} uses the expression language '{language}', which is not supported (only FEEL is)"
            ),
        );
        false
    }

    fn decision(&mut self, node: Node) -> Option<Decision> {
        let Some(id) = attr(node, "id").map(str::to_string) else {
            let name = attr(node, "name").unwrap_or_default();
            self.problem(
                None,
                node,
                format!("a decision has no id (decision named '{name}'); every decision needs one"),
            );
            return None;
        };
        let name = attr(node, "name").unwrap_or_default().to_string();
        let result_name = self
            .child(node, "variable")
            .and_then(|v| attr(v, "name"))
            .map_or_else(|| id.clone(), str::to_string);

        let mut required = Vec::new();
        let mut ok = true;
        for requirement in self.children(node, "informationRequirement") {
            let Some(reference) = self.child(requirement, "requiredDecision") else {
                // `requiredInput` (input data) needs nothing: inputs are variables.
                continue;
            };
            match attr(reference, "href") {
                Some(href) => {
                    let href = href.trim();
                    match href.split_once('#') {
                        Some(("", target)) if !target.is_empty() => {
                            required.push(target.to_string())
                        }
                        Some((namespace, _)) if !namespace.is_empty() => {
                            self.problem(
                                Some(&id),
                                reference,
                                format!(
                                    "decision '{id}' requires the decision '{href}' of another model \
                                     (imported decisions are not supported)"
                                ),
                            );
                            ok = false;
                        }
                        Some(_) => {
                            self.problem(
                                Some(&id),
                                reference,
                                format!(
                                    "decision '{id}' has a required decision with the empty reference '{href}'"
                                ),
                            );
                            ok = false;
                        }
                        None => required.push(href.to_string()),
                    }
                }
                None => {
                    self.problem(
                        Some(&id),
                        reference,
                        format!("decision '{id}' has a required decision without 'href'"),
                    );
                    ok = false;
                }
            }
        }
        // knowledgeRequirement: every business knowledge model of the graph is visible to every
        // decision, as in dmn-scala
        let logic_node = node
            .children()
            .find(|n| self.is_dmn(*n) && crate::dmn_boxed::BOXED.contains(&n.tag_name().name()));
        let logic = match logic_node {
            None => {
                self.problem(
                    Some(&id),
                    node,
                    format!(
                        "decision '{id}' has no decision logic (a decision table, a literal expression or another boxed expression)"
                    ),
                );
                None
            }
            Some(logic) => match logic.tag_name().name() {
                "decisionTable" => self.table(&id, logic).map(DecisionLogic::Table),
                "literalExpression" => self.literal(&id, logic).map(DecisionLogic::Literal),
                _ => self.boxed(&id, logic).map(DecisionLogic::Boxed),
            },
        };
        let logic = logic?;
        ok.then_some(Decision {
            id,
            name,
            required,
            result_name,
            logic,
        })
    }

    pub(crate) fn literal(&mut self, id: &str, node: Node) -> Option<Expression> {
        if !self.check_feel(
            id,
            node,
            &format!("the literal expression of decision '{id}'"),
        ) {
            return None;
        }
        let text = self.text_child(node).unwrap_or_default();
        if text.trim().is_empty() {
            self.problem(
                Some(id),
                node,
                format!("the literal expression of decision '{id}' is empty"),
            );
            return None;
        }
        match Expression::parse_with_names(&text, &self.names) {
            Ok(expression) => Some(expression),
            Err(e) => {
                self.problem(
                    Some(id),
                    node,
                    format!("the literal expression of decision '{id}' is not valid FEEL: {e}"),
                );
                None
            }
        }
    }

    pub(crate) fn table(&mut self, id: &str, node: Node) -> Option<DecisionTable> {
        let problems_before = self.problems.len();
        let (hit_policy, aggregation) = self.hit_policy(id, node);
        let inputs = self.table_inputs(id, node);
        let input_count = self.children(node, "input").len();
        let outputs = self.table_outputs(id, node, aggregation.is_some());
        let output_count = self.children(node, "output").len();
        let rules = self.table_rules(id, node, input_count, output_count);
        (self.problems.len() == problems_before).then_some(DecisionTable {
            hit_policy,
            aggregation,
            inputs,
            outputs,
            rules,
        })
    }

    /// The table's hit policy and its aggregation (COLLECT only).
    fn hit_policy(&mut self, id: &str, node: Node) -> (HitPolicy, Option<Aggregation>) {
        let hit_policy = match node.attribute("hitPolicy").map(str::trim) {
            None | Some("UNIQUE") => HitPolicy::Unique,
            Some("FIRST") => HitPolicy::First,
            Some("PRIORITY") => HitPolicy::Priority,
            Some("ANY") => HitPolicy::Any,
            Some("COLLECT") => HitPolicy::Collect,
            Some("RULE ORDER") => HitPolicy::RuleOrder,
            Some("OUTPUT ORDER") => HitPolicy::OutputOrder,
            Some(other) => {
                self.problem(
                    Some(id),
                    node,
                    format!(
                        "the decision table of decision '{id}' has the unknown hit policy '{other}' \
                         (expected UNIQUE, FIRST, PRIORITY, ANY, COLLECT, RULE ORDER or OUTPUT ORDER)"
                    ),
                );
                HitPolicy::Unique
            }
        };
        let aggregation = match node.attribute("aggregation").map(str::trim) {
            None => None,
            Some(text) => {
                let aggregation = match text {
                    "SUM" => Some(Aggregation::Sum),
                    "MIN" => Some(Aggregation::Min),
                    "MAX" => Some(Aggregation::Max),
                    "COUNT" => Some(Aggregation::Count),
                    other => {
                        self.problem(
                            Some(id),
                            node,
                            format!(
                                "the decision table of decision '{id}' has the unknown aggregation \
                                 '{other}' (expected SUM, MIN, MAX or COUNT)"
                            ),
                        );
                        None
                    }
                };
                if aggregation.is_some() && hit_policy != HitPolicy::Collect {
                    self.problem(
                        Some(id),
                        node,
                        format!(
                            "the decision table of decision '{id}' has the aggregation '{text}', which \
                             is only allowed with the hit policy COLLECT"
                        ),
                    );
                }
                aggregation
            }
        };
        (hit_policy, aggregation)
    }

    /// The table's inputs: an input expression each.
    fn table_inputs(&mut self, id: &str, node: Node) -> Vec<TableInput> {
        let mut inputs = Vec::new();
        for input in self.children(node, "input") {
            let input_id = attr(input, "id").unwrap_or_default().to_string();
            let Some(expression_node) = self.child(input, "inputExpression") else {
                self.problem(
                    Some(id),
                    input,
                    format!("the input '{input_id}' of decision '{id}' has no input expression"),
                );
                continue;
            };
            let what = format!("the input expression of input '{input_id}' of decision '{id}'");
            if !self.check_feel(id, expression_node, &what) {
                continue;
            }
            let text = self.text_child(expression_node).unwrap_or_default();
            if text.trim().is_empty() {
                self.problem(Some(id), expression_node, format!("{what} is empty"));
                continue;
            }
            match Expression::parse_with_names(&text, &self.names) {
                Ok(expression) => {
                    let name = attr(input, "label")
                        .map_or_else(|| expression.source().to_string(), str::to_string);
                    inputs.push(TableInput {
                        id: input_id,
                        name,
                        expression,
                    });
                }
                Err(e) => {
                    self.problem(
                        Some(id),
                        expression_node,
                        format!("{what} is not valid FEEL: {e}"),
                    );
                }
            }
        }
        inputs
    }

    /// The table's outputs: names, labels, output values (priorities) and defaults.
    fn table_outputs(&mut self, id: &str, node: Node, aggregated: bool) -> Vec<TableOutput> {
        let output_nodes = self.children(node, "output");
        if output_nodes.is_empty() {
            self.problem(
                Some(id),
                node,
                format!("the decision table of decision '{id}' has no output"),
            );
        }
        if output_nodes.len() > 1 && aggregated {
            self.problem(
                Some(id),
                node,
                format!(
                    "the decision table of decision '{id}' has {} outputs: the hit policy COLLECT \
                     with an aggregation needs exactly one output",
                    output_nodes.len()
                ),
            );
        }
        let mut outputs = Vec::new();
        for output in &output_nodes {
            let output_id = attr(*output, "id").unwrap_or_default().to_string();
            let name = attr(*output, "name").unwrap_or_default().to_string();
            if output_nodes.len() > 1 && name.is_empty() {
                let label = attr(*output, "label").unwrap_or_default();
                self.problem(
                    Some(id),
                    *output,
                    format!(
                        "the output '{output_id}' (label '{label}') of decision '{id}' has no name; \
                         a table with several outputs needs a name for each"
                    ),
                );
            }
            let label = attr(*output, "label").map_or_else(|| name.clone(), str::to_string);
            let priorities = self
                .child(*output, "outputValues")
                .and_then(|values| self.text_child(values))
                .map(|text| output_values(&text))
                .unwrap_or_default();
            let default = match self.child(*output, "defaultOutputEntry") {
                Some(entry) => {
                    let text = self.text_child(entry).unwrap_or_default();
                    match Expression::parse_with_names(&text, &self.names) {
                        Ok(e) => Some(e),
                        Err(e) => {
                            self.problem(
                                Some(id),
                                entry,
                                format!("the default output of '{output_id}' of decision '{id}' is not valid FEEL: {e}"),
                            );
                            None
                        }
                    }
                }
                None => None,
            };
            outputs.push(TableOutput {
                id: output_id,
                name,
                label,
                priorities,
                default,
            });
        }
        outputs
    }

    /// The table's rules: as many input and output entries as the table has inputs and outputs.
    fn table_rules(
        &mut self,
        id: &str,
        node: Node,
        input_count: usize,
        output_count: usize,
    ) -> Vec<Rule> {
        let mut rules = Vec::new();
        for (position, rule) in self.children(node, "rule").into_iter().enumerate() {
            let rule_id = attr(rule, "id").unwrap_or_default().to_string();
            let rule_name = if rule_id.is_empty() {
                format!("rule {}", position + 1)
            } else {
                format!("rule '{rule_id}'")
            };
            let input_nodes = self.children(rule, "inputEntry");
            let output_entry_nodes = self.children(rule, "outputEntry");
            if input_nodes.len() != input_count {
                self.problem(
                    Some(id),
                    rule,
                    format!(
                        "{rule_name} of decision '{id}' has {} input entries, but the table has {input_count} inputs",
                        input_nodes.len()
                    ),
                );
            }
            if output_entry_nodes.len() != output_count {
                self.problem(
                    Some(id),
                    rule,
                    format!(
                        "{rule_name} of decision '{id}' has {} output entries, but the table has {} outputs",
                        output_entry_nodes.len(),
                        output_count
                    ),
                );
            }
            let mut input_entries = Vec::new();
            for (i, entry) in input_nodes.iter().enumerate() {
                let what = format!("input entry {} of {rule_name} of decision '{id}'", i + 1);
                if !self.check_feel(id, *entry, &what) {
                    continue;
                }
                let text = self.text_child(*entry).unwrap_or_default();
                let text = text.trim();
                if text.is_empty() || text == "-" {
                    input_entries.push(None);
                    continue;
                }
                match UnaryTests::parse_with_names(text, &self.names) {
                    Ok(tests) => input_entries.push(Some(tests)),
                    Err(e) => {
                        self.problem(Some(id), *entry, format!("{what} is not valid FEEL: {e}"))
                    }
                }
            }
            let mut output_entries = Vec::new();
            for (i, entry) in output_entry_nodes.iter().enumerate() {
                let what = format!("output entry {} of {rule_name} of decision '{id}'", i + 1);
                if !self.check_feel(id, *entry, &what) {
                    continue;
                }
                let text = self.text_child(*entry).unwrap_or_default();
                let text = if text.trim().is_empty() {
                    "null"
                } else {
                    text.as_str()
                };
                match Expression::parse_with_names(text, &self.names) {
                    Ok(expression) => output_entries.push(expression),
                    Err(e) => {
                        self.problem(Some(id), *entry, format!("{what} is not valid FEEL: {e}"))
                    }
                }
            }
            rules.push(Rule {
                id: rule_id,
                input_entries,
                output_entries,
            });
        }
        rules
    }

    /// Checks the references between decisions: every required decision exists, and no decision
    /// requires itself (directly or through others).
    fn check_graph(&mut self, decisions: &[Decision], nodes: &HashMap<String, Node>) {
        let known: HashSet<&str> = nodes.keys().map(String::as_str).collect();
        for decision in decisions {
            for required in &decision.required {
                if !known.contains(required.as_str()) {
                    if let Some(node) = nodes.get(&decision.id) {
                        self.problem(
                            Some(&decision.id),
                            *node,
                            format!(
                                "decision '{}' requires the decision '{required}', which does not \
                                 exist in this resource",
                                decision.id
                            ),
                        );
                    }
                }
            }
        }
        // Cycle detection: iterative depth-first search (a long chain must not overflow the stack).
        let by_id: HashMap<&str, &Decision> =
            decisions.iter().map(|d| (d.id.as_str(), d)).collect();
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Visiting,
            Done,
        }
        let mut state: HashMap<&str, State> = HashMap::new();
        for start in decisions {
            if state.contains_key(start.id.as_str()) {
                continue;
            }
            // (decision, index of the next requirement to visit)
            let mut stack: Vec<(&Decision, usize)> = vec![(start, 0)];
            state.insert(start.id.as_str(), State::Visiting);
            while let Some((decision, next)) = stack.pop() {
                let Some(required) = decision.required.get(next) else {
                    state.insert(decision.id.as_str(), State::Done);
                    continue;
                };
                stack.push((decision, next + 1));
                let Some(target) = by_id.get(required.as_str()) else {
                    continue;
                };
                match state.get(target.id.as_str()) {
                    None => {
                        state.insert(target.id.as_str(), State::Visiting);
                        stack.push((target, 0));
                    }
                    Some(State::Visiting) => {
                        let from = stack
                            .iter()
                            .position(|(d, _)| d.id == target.id)
                            .unwrap_or(0);
                        let mut path: Vec<String> = stack[from..]
                            .iter()
                            .map(|(d, _)| format!("'{}'", d.id))
                            .collect();
                        path.push(format!("'{}'", target.id));
                        if let Some(node) = nodes.get(&target.id) {
                            self.problem(
                                Some(&target.id),
                                *node,
                                format!(
                                    "the required decisions form a cycle: {} (each requires the next)",
                                    path.join(" -> ")
                                ),
                            );
                        }
                    }
                    Some(State::Done) => {}
                }
            }
        }
    }
}

/// The values of an output's `outputValues` (a list of literals, most important first), used to
/// rank results for the PRIORITY and OUTPUT ORDER hit policies. Parsed as a FEEL list; if that
/// fails (e.g. the text holds unary tests rather than literals), the comma-separated parts are
/// taken as strings without quotes, as dmn-scala does.
fn output_values(text: &str) -> Vec<Value> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    if let Ok(expression) = Expression::parse(&format!("[{text}]")) {
        if let Ok(Value::Array(values)) = expression.evaluate(&Map::new()) {
            return values;
        }
    }
    text.split(',')
        .map(|part| Value::String(part.trim().replace(['"', '\''], "")))
        .collect()
}
