//! How an expression reads its variables ([`Access`]), so that only the parts it reads are
//! converted to FEEL, and parsed from their JSON texts ([`ReadParts`]).

use std::collections::HashMap;

use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value as FeelValue;
use dsntk_feel::Name;
use dsntk_feel_parser::AstNode;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::convert::json_to_feel;
use crate::for_each_child;

/// How an expression reads a variable (or a part of one).
///
/// A variable that is only read through paths of names (`order.customer.name`, or `items.price`
/// projecting a list of contexts) does not need to be converted to FEEL as a whole: only the
/// entries on those paths are (a large payload object read as `payload.amount` costs one
/// number, not the whole object). Anything else (the variable alone, in a filter, as a function
/// argument...) reads it whole.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Access {
    Whole,
    /// Only these entries of a context (of each context, for a list), each read as said.
    Keys(HashMap<Name, Access>),
}

impl Access {
    /// Records that `keys` are read below this part.
    fn read(&mut self, keys: &[&Name]) {
        let mut access = self;
        for key in keys {
            match access {
                Access::Whole => return,
                Access::Keys(entries) => {
                    access = entries
                        .entry((*key).clone())
                        .or_insert_with(|| Access::Keys(HashMap::new()));
                }
            }
        }
        *access = Access::Whole;
    }
}

/// Collects how the expression reads each name (see [`Access`]). Names that occur only as path
/// keys are not recorded (they are not variables there); a name recorded nowhere is read whole.
pub(crate) fn collect_access(root: &AstNode, access: &mut HashMap<Name, Access>) {
    /// `a.b.c` as (`a`, [`b`, `c`]); `None` when the node is not a plain path of names.
    fn flatten(node: &AstNode) -> Option<(&Name, Vec<&Name>)> {
        match node {
            AstNode::Name(name) => Some((name, Vec::new())),
            AstNode::Path(lhs, rhs) => {
                let AstNode::Name(key) = &**rhs else {
                    return None;
                };
                let (root, mut keys) = flatten(lhs)?;
                keys.push(key);
                Some((root, keys))
            }
            _ => None,
        }
    }
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node {
            AstNode::Name(_) | AstNode::Path(..) => {
                if let Some((name, keys)) = flatten(node) {
                    access
                        .entry(name.clone())
                        .or_insert_with(|| Access::Keys(HashMap::new()))
                        .read(&keys);
                    continue;
                }
                if let AstNode::Path(lhs, _) = node {
                    // The key of a path is not a variable; only the left side is read.
                    stack.push(lhs);
                }
            }
            AstNode::FunctionInvocation(callee, args) if matches!(**callee, AstNode::Name(_)) => {
                stack.push(args);
            }
            _ => for_each_child(node, |child| stack.push(child)),
        }
    }
}

/// The FEEL context of the variables in `names` (the parts of them that `access` says are read).
pub(crate) fn variables_context(
    names: &[Name],
    access: &HashMap<Name, Access>,
    vars: &Map<String, Value>,
) -> FeelContext {
    let mut ctx = FeelContext::default();
    for name in names {
        if let Some(value) = vars.get(name.as_str()) {
            let value = match access.get(name) {
                Some(access) => json_to_feel_part(value, access),
                None => json_to_feel(value),
            };
            ctx.set_entry(name, value);
        }
    }
    ctx
}

/// JSON -> FEEL, keeping only the parts that `access` reads: the entries it names of objects (of
/// each object of an array, as FEEL paths project lists); other values whole.
fn json_to_feel_part(value: &Value, access: &Access) -> FeelValue {
    match (value, access) {
        (Value::Object(map), Access::Keys(keys)) => {
            let mut ctx = FeelContext::default();
            for (key, key_access) in keys {
                if let Some(entry) = map.get(key.as_str()) {
                    ctx.set_entry(key, json_to_feel_part(entry, key_access));
                }
            }
            FeelValue::Context(ctx)
        }
        (Value::Array(items), Access::Keys(_)) => FeelValue::List(
            items
                .iter()
                .map(|item| json_to_feel_part(item, access))
                .collect(),
        ),
        _ => json_to_feel(value),
    }
}

impl Access {
    /// Adds what `other` reads to what this reads.
    fn merge(&mut self, other: &Access) {
        match (&mut *self, other) {
            (Access::Whole, _) => {}
            (_, Access::Whole) => *self = Access::Whole,
            (Access::Keys(mine), Access::Keys(theirs)) => {
                for (key, access) in theirs {
                    match mine.get_mut(key) {
                        Some(m) => m.merge(access),
                        None => {
                            mine.insert(key.clone(), access.clone());
                        }
                    }
                }
            }
        }
    }

    fn entry(&self, key: &str) -> Option<&Access> {
        match self {
            Access::Whole => Some(self),
            Access::Keys(keys) => keys
                .iter()
                .find_map(|(name, access)| (name.as_str() == key).then_some(access)),
        }
    }
}

/// The parts of a variable that one or more expressions read ([`crate::Expression::reads`]).
/// A variable's JSON text parsed through it ([`ReadParts::parse`]) holds those parts only:
/// the entries of objects that no expression reads are skipped, not built. A payload object of
/// kilobytes read as `payload.id` costs a scan of its text, not a tree of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadParts(Access);

impl ReadParts {
    /// The whole variable (a mapping target's present value, say).
    pub fn whole() -> ReadParts {
        ReadParts(Access::Whole)
    }

    /// What an expression whose reads are `access` reads of `name` (whole unless `access`
    /// has it: only variables read through paths are there).
    pub(crate) fn of(access: &HashMap<Name, Access>, name: &str) -> ReadParts {
        let read = access
            .iter()
            .find_map(|(n, a)| (n.as_str() == name).then_some(a));
        ReadParts(read.cloned().unwrap_or(Access::Whole))
    }

    /// Adds what `other` reads.
    pub fn add(&mut self, other: &ReadParts) {
        self.0.merge(&other.0);
    }

    /// Parses a variable's JSON text into the parts read. The result gives every expression
    /// that reads only these parts the same value as the whole document would.
    pub fn parse(&self, text: &str) -> serde_json::Result<Value> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value = Part(&self.0).deserialize(&mut de)?;
        de.end()?;
        Ok(value)
    }
}

/// Deserializes the parts `.0` reads of a JSON value.
struct Part<'a>(&'a Access);

impl<'de> DeserializeSeed<'de> for Part<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.0 {
            Access::Whole => Value::deserialize(d),
            Access::Keys(_) => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Part<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    /// A list: each item is read as the list is (FEEL paths project lists).
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(Part(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match self.0.entry(&key) {
                Some(access) => {
                    let value = map.next_value_seed(Part(access))?;
                    out.insert(key, value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// The variables that several expressions read, each with the parts any of them reads.
#[derive(Debug, Default, Clone)]
pub struct Reads(Vec<(String, ReadParts)>);

impl Reads {
    /// Adds `parts` of the variable `name`.
    pub fn add(&mut self, name: &str, parts: ReadParts) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some((_, read)) => read.add(&parts),
            None => self.0.push((name.to_string(), parts)),
        }
    }

    /// Adds what `e` reads.
    pub fn expression(&mut self, e: &crate::Expression) {
        for name in e.variable_names() {
            self.add(name, e.reads(name));
        }
    }

    /// Adds what `tests` read.
    pub fn unary_tests(&mut self, tests: &crate::UnaryTests) {
        for name in tests.variable_names() {
            self.add(name, tests.reads(name));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each variable read with its parts, in the order first added.
    pub fn as_slice(&self) -> &[(String, ReadParts)] {
        &self.0
    }
}
