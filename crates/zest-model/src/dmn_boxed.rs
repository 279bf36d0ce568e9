//! DMN boxed expressions beyond decision tables and literal expressions, and business
//! knowledge models, parsed as dmn-scala (Zeebe) reads them: contexts, invocations, relations,
//! lists, function definitions, and DMN 1.4's conditional, filter, for, every and some.

use std::sync::Arc;

use roxmltree::Node;

use crate::dmn::{Boxed, BusinessKnowledgeModel, Iteration};
use crate::dmn_parse::{attr, Ctx};

/// The boxed expressions a DMN element can hold, by element name.
pub(crate) const BOXED: &[&str] = &[
    "literalExpression",
    "decisionTable",
    "context",
    "invocation",
    "relation",
    "list",
    "functionDefinition",
    "conditional",
    "filter",
    "for",
    "every",
    "some",
];

/// Every name a DMN model gives (input data, decisions, business knowledge models, their
/// variables and parameters, context entries, relation columns, item definitions and their
/// components): FEEL names may hold spaces and operators (`Full Name`, `Date-Time`), and the
/// FEEL lexer must know them to read them as one name.
pub(crate) fn model_names(root: Node) -> Vec<String> {
    let mut names: Vec<String> = root
        .descendants()
        .filter(|n| {
            matches!(
                n.tag_name().name(),
                "inputData"
                    | "decision"
                    | "businessKnowledgeModel"
                    | "decisionService"
                    | "variable"
                    | "column"
                    | "formalParameter"
                    | "parameter"
                    | "itemDefinition"
                    | "itemComponent"
                    | "contextEntry"
            )
        })
        .filter_map(|n| attr(n, "name"))
        .map(|n| n.trim().to_string())
        .filter(|n| n.contains(|c: char| !(c.is_alphanumeric() || c == '_')))
        // `Person.Name` reads as a path, and a parameter of that name is bound as one
        // (dmn_boxed_eval::bind)
        .filter(|n| !n.split('.').all(is_plain_word))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A name of letters, digits and underscores (not starting with a digit).
fn is_plain_word(w: &str) -> bool {
    w.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && w.chars().all(|c| c.is_alphanumeric() || c == '_')
}

impl Ctx<'_> {
    /// The boxed expression held by `node` (its first child that is one).
    pub(crate) fn boxed_child(&mut self, owner: &str, node: Node) -> Option<Boxed> {
        match node
            .children()
            .find(|n| self.is_dmn(*n) && BOXED.contains(&n.tag_name().name()))
        {
            Some(child) => self.boxed(owner, child),
            None => {
                self.problem(
                    Some(owner),
                    node,
                    format!(
                        "'{}' of '{owner}' holds no expression",
                        node.tag_name().name()
                    ),
                );
                None
            }
        }
    }

    /// A boxed expression element.
    pub(crate) fn boxed(&mut self, owner: &str, node: Node) -> Option<Boxed> {
        match node.tag_name().name() {
            "literalExpression" => self.literal(owner, node).map(Boxed::Literal),
            "decisionTable" => self.table(owner, node).map(|t| Boxed::Table(Box::new(t))),
            "context" => self.context(owner, node),
            "invocation" => self.invocation(owner, node),
            "relation" => self.relation(owner, node),
            "list" => {
                let items: Vec<Node> = node.children().filter(|n| self.is_boxed(*n)).collect();
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.boxed(owner, item)?);
                }
                Some(Boxed::List(out))
            }
            "functionDefinition" => self.function(owner, node),
            "conditional" => {
                let part = |ctx: &mut Self, name: &str| -> Option<Box<Boxed>> {
                    let n = ctx.child(node, name)?;
                    ctx.boxed_child(owner, n).map(Box::new)
                };
                Some(Boxed::Conditional {
                    condition: part(self, "if")?,
                    then: part(self, "then")?,
                    otherwise: part(self, "else")?,
                })
            }
            "filter" => {
                let list = self.child(node, "in")?;
                let matches = self.child(node, "match")?;
                Some(Boxed::Filter {
                    list: Box::new(self.boxed_child(owner, list)?),
                    matches: Box::new(self.boxed_child(owner, matches)?),
                })
            }
            kind @ ("for" | "every" | "some") => {
                let variable = attr(node, "iteratorVariable")?.trim().to_string();
                let list = self.child(node, "in")?;
                let body_name = if kind == "for" { "return" } else { "satisfies" };
                let body = self.child(node, body_name)?;
                Some(Boxed::Iterate {
                    kind: match kind {
                        "for" => Iteration::For,
                        "every" => Iteration::Every,
                        _ => Iteration::Some,
                    },
                    variable,
                    list: Box::new(self.boxed_child(owner, list)?),
                    body: Box::new(self.boxed_child(owner, body)?),
                })
            }
            other => {
                self.problem(
                    Some(owner),
                    node,
                    format!(
                        "'{owner}' uses the boxed expression '{other}', which is not supported"
                    ),
                );
                None
            }
        }
    }

    fn is_boxed(&self, node: Node) -> bool {
        self.is_dmn(node) && BOXED.contains(&node.tag_name().name())
    }

    fn context(&mut self, owner: &str, node: Node) -> Option<Boxed> {
        let mut entries = Vec::new();
        for entry in self.children(node, "contextEntry") {
            let name = self
                .child(entry, "variable")
                .and_then(|v| attr(v, "name"))
                .map(|n| n.trim().to_string());
            let value = self.boxed_child(owner, entry)?;
            entries.push((name, value));
        }
        Some(Boxed::Context(entries))
    }

    fn invocation(&mut self, owner: &str, node: Node) -> Option<Boxed> {
        // the function: a literal expression naming it
        let Some(callee) = self.child(node, "literalExpression") else {
            self.problem(
                Some(owner),
                node,
                format!("an invocation of '{owner}' names no function (a literal expression)"),
            );
            return None;
        };
        let function = self
            .text_child(callee)
            .unwrap_or_default()
            .trim()
            .to_string();
        let mut bindings = Vec::new();
        for binding in self.children(node, "binding") {
            let Some(param) = self
                .child(binding, "parameter")
                .and_then(|p| attr(p, "name"))
            else {
                self.problem(
                    Some(owner),
                    binding,
                    format!("a binding of an invocation of '{owner}' names no parameter"),
                );
                return None;
            };
            let has_value = binding.children().any(|n| self.is_boxed(n));
            let value = if has_value {
                self.boxed_child(owner, binding)?
            } else {
                Boxed::Literal(zest_feel::Expression::parse("null").ok()?)
            };
            bindings.push((param.trim().to_string(), value));
        }
        Some(Boxed::Invocation { function, bindings })
    }

    fn relation(&mut self, owner: &str, node: Node) -> Option<Boxed> {
        let columns: Vec<String> = self
            .children(node, "column")
            .into_iter()
            .map(|c| attr(c, "name").unwrap_or_default().trim().to_string())
            .collect();
        let mut rows = Vec::new();
        for row in self.children(node, "row") {
            let cells: Vec<Node> = row.children().filter(|n| self.is_boxed(*n)).collect();
            if cells.len() != columns.len() {
                self.problem(
                    Some(owner),
                    row,
                    format!(
                        "a row of a relation of '{owner}' has {} cells, but the relation has {} columns",
                        cells.len(),
                        columns.len()
                    ),
                );
                return None;
            }
            let mut values = Vec::with_capacity(cells.len());
            for cell in cells {
                values.push(self.boxed(owner, cell)?);
            }
            rows.push(values);
        }
        Some(Boxed::Relation { columns, rows })
    }

    fn function(&mut self, owner: &str, node: Node) -> Option<Boxed> {
        if let Some(kind) = attr(node, "kind") {
            if kind.trim() != "FEEL" {
                self.problem(
                    Some(owner),
                    node,
                    format!(
                        "a function definition of '{owner}' is of kind '{kind}': only FEEL functions are supported"
                    ),
                );
                return None;
            }
        }
        let params = self
            .children(node, "formalParameter")
            .into_iter()
            .filter_map(|p| attr(p, "name"))
            .map(|p| p.trim().to_string())
            .collect();
        let body = self.boxed_child(owner, node)?;
        Some(Boxed::Function {
            params,
            body: Arc::new(body),
        })
    }

    /// A `businessKnowledgeModel`: its name (`variable/@name`, else `@name`), parameters and
    /// body (its `encapsulatedLogic`).
    pub(crate) fn knowledge_model(&mut self, node: Node) -> Option<BusinessKnowledgeModel> {
        let id = attr(node, "id").unwrap_or_default().to_string();
        let name = self
            .child(node, "variable")
            .and_then(|v| attr(v, "name"))
            .or_else(|| attr(node, "name"))
            .unwrap_or(&id)
            .trim()
            .to_string();
        // one without logic is nothing to call (dmn-scala accepts it; calling it fails)
        let logic = self.child(node, "encapsulatedLogic")?;
        let Boxed::Function { params, body } = self.function(&id, logic)? else {
            return None;
        };
        Some(BusinessKnowledgeModel {
            id,
            name,
            params,
            body: Arc::unwrap_or_clone(body),
        })
    }
}
