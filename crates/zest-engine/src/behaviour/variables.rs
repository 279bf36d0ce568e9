//! Zeebe's variable scoping: each element instance is a scope; a scope sees its own variables
//! and those of its parents (inner names shadow outer ones). Propagation sets a variable in the
//! nearest scope that already has it, or else in the process instance scope.

use serde_json::{Map, Value};
use zest_protocol::{Intent, RecordValue, VariableRecord};

use crate::behaviour::element_instance::instance_state;
use crate::context::Ctx;
use crate::scope_variables;
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, StoredVariable};

pub use crate::scope_variables::sort_like_zeebe;

/// The scopes from `scope_key` outwards: the scope, its flow scope, ... up to the process
/// instance. Lazy: each step reads one element instance, so a walk that stops early reads
/// only the scopes it passed.
fn scopes_outwards<'c, 'a, 'b, 'd>(
    ctx: &'c Ctx<'a, 'b, 'd>,
    scope_key: i64,
) -> impl Iterator<Item = i64> + use<'c, 'a, 'b, 'd> {
    std::iter::successors((scope_key > 0).then_some(scope_key), move |&s| {
        parent_scope(ctx, s)
    })
}

/// [`scopes_outwards`], collected.
fn scope_chain(ctx: &Ctx<'_, '_, '_>, scope_key: i64) -> Vec<i64> {
    scopes_outwards(ctx, scope_key).collect()
}

/// The flow scope of `scope_key` (None for a process instance, or a scope not in state). Only
/// the element instance's first fields are decoded: the walk needs no more.
fn parent_scope(ctx: &Ctx<'_, '_, '_>, scope_key: i64) -> Option<i64> {
    let head = instance_state(ctx.txn, scope_key)?;
    (head.parent_key > 0).then_some(head.parent_key)
}

/// The stored document of `scope_key`'s own variables (see `scope_variables`); empty if it has
/// none. `fresh`: the scope was allocated in this transaction (see [`ScopeInfoSeed`]).
fn scope_doc(ctx: &Ctx<'_, '_, '_>, scope_key: i64, fresh: bool) -> Vec<u8> {
    let key = key_i64(scope_key);
    let doc = if fresh {
        ctx.txn.get_own_raw(Ks::Variables, &key)
    } else {
        ctx.txn.get_raw(Ks::Variables, &key)
    };
    doc.unwrap_or_default()
}

fn local_raw(ctx: &Ctx<'_, '_, '_>, scope_key: i64) -> Vec<(String, StoredVariable)> {
    ctx.txn.with_raw(Ks::Variables, &key_i64(scope_key), |doc| {
        scope_variables::iter(doc.unwrap_or_default())
            .map(|e| {
                let var = StoredVariable {
                    key: e.key,
                    value: e.value.to_string(),
                };
                (e.name.to_string(), var)
            })
            .collect()
    })
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The variables of `scope_key` itself.
pub fn local(ctx: &Ctx<'_, '_, '_>, scope_key: i64) -> Map<String, Value> {
    local_raw(ctx, scope_key)
        .into_iter()
        .map(|(name, var)| (name, parse(&var.value)))
        .collect()
}

/// All variables visible from `scope_key`.
pub fn visible(ctx: &Ctx<'_, '_, '_>, scope_key: i64) -> Map<String, Value> {
    let mut out = Map::new();
    for scope in scope_chain(ctx, scope_key) {
        for (name, var) in local_raw(ctx, scope) {
            if !out.contains_key(&name) {
                out.insert(name, parse(&var.value));
            }
        }
    }
    out
}

/// [`visible_selected`] as JSON text, as a job's `variables` carry it. When all variables are
/// wanted, the stored texts (canonical JSON, written by [`set_local`]) are joined as they are
/// instead of being parsed and printed again: the same text, without the work.
pub fn visible_selected_json(ctx: &Ctx<'_, '_, '_>, scope_key: i64, names: &[String]) -> String {
    if !names.is_empty() {
        return Value::Object(visible_selected(ctx, scope_key, names)).to_string();
    }
    let docs: Vec<Vec<u8>> = scope_chain(ctx, scope_key)
        .into_iter()
        .map(|scope| scope_doc(ctx, scope, false))
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    // the documents hold the texts and more than their names' quotes: one allocation, not a
    // doubling for each kilobyte
    let mut out = String::with_capacity(docs.iter().map(Vec::len).sum::<usize>() + 2);
    out.push('{');
    for doc in &docs {
        // names are unique within a scope: only an outer scope's can be shadowed
        let shadowed = seen.len();
        for var in scope_variables::iter(doc) {
            if seen[..shadowed].contains(&var.name) {
                continue;
            }
            if !seen.is_empty() {
                out.push(',');
            }
            push_json_string(&mut out, var.name);
            out.push(':');
            out.push_str(var.value);
            seen.push(var.name);
        }
    }
    out.push('}');
    out
}

/// Appends `s` as a JSON string, as serde_json writes it: a name with nothing to escape (no
/// quote, backslash or control character) as it is, without a value and a text allocated
/// for it.
fn push_json_string(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&Value::from(s).to_string());
    }
}

/// All variables visible from `scope_key` as Zeebe collects them to copy them (outermost
/// scope first, each scope in Zeebe's order; an inner variable replaces an outer one's value).
pub fn visible_for_copy(ctx: &Ctx<'_, '_, '_>, scope_key: i64) -> Map<String, Value> {
    let mut out = Map::new();
    for scope in scope_chain(ctx, scope_key).into_iter().rev() {
        let mut vars = local_raw(ctx, scope);
        sort_like_zeebe(&mut vars);
        for (name, var) in vars {
            out.insert(name, parse(&var.value));
        }
    }
    out
}

/// The JSON texts of the variables named in `names` visible from `scope_key` (None for a
/// name that no scope has), as stored: what an evaluation of an expression reading them
/// depends on.
pub fn visible_texts(
    ctx: &Ctx<'_, '_, '_>,
    scope_key: i64,
    names: &[String],
) -> Vec<Option<String>> {
    // outwards, and only as far as a name is still missing: most are found near the scope
    let mut texts: Vec<Option<String>> = vec![None; names.len()];
    find_nearest(
        ctx,
        scopes_outwards(ctx, scope_key),
        names,
        |i, _, value| texts[i] = Some(value.to_string()),
    );
    texts
}

/// Walks `scopes` (innermost first) and calls `found(i, scope, value)` with the nearest scope
/// holding `names[i]`, for each name some scope holds. A scope's document is read only while
/// a name is still missing, and the walk stops once all are found: most are near.
fn find_nearest<N: AsRef<str>>(
    ctx: &Ctx<'_, '_, '_>,
    scopes: impl IntoIterator<Item = i64>,
    names: &[N],
    mut found: impl FnMut(usize, i64, &str),
) {
    let mut placed = vec![false; names.len()];
    let mut missing = names.len();
    if missing == 0 {
        return;
    }
    for scope in scopes {
        ctx.txn.with_raw(Ks::Variables, &key_i64(scope), |doc| {
            for (i, name) in names.iter().enumerate() {
                if placed[i] {
                    continue;
                }
                if let Some(var) = scope_variables::find(doc.unwrap_or_default(), name.as_ref()) {
                    placed[i] = true;
                    missing -= 1;
                    found(i, scope, var.value);
                }
            }
        });
        if missing == 0 {
            return;
        }
    }
}

/// The variables named in `names` visible from `scope_key` (all of them when `names` is empty).
pub fn visible_selected(
    ctx: &Ctx<'_, '_, '_>,
    scope_key: i64,
    names: &[String],
) -> Map<String, Value> {
    if names.is_empty() {
        return visible(ctx, scope_key);
    }
    parsed(names, visible_texts(ctx, scope_key, names))
}

/// The variables visible from `scope_key` that expressions read, each parsed into the parts
/// read (see [`zest_feel::ReadParts`]); those that exist.
pub fn visible_read(
    ctx: &Ctx<'_, '_, '_>,
    scope_key: i64,
    reads: &[(String, zest_feel::ReadParts)],
) -> Map<String, Value> {
    // each parsed where it is stored, and a large one's parts kept for the next read
    let names: Vec<&str> = reads.iter().map(|(n, _)| n.as_str()).collect();
    let mut values: Vec<Option<Value>> = vec![None; reads.len()];
    find_nearest(
        ctx,
        scopes_outwards(ctx, scope_key),
        &names,
        |i, scope, text| {
            let (name, parts) = &reads[i];
            let value = ctx
                .models
                .read_parts(scope, name, parts, text, || parse_read(parts, text));
            values[i] = Some(value);
        },
    );
    reads
        .iter()
        .zip(values)
        .filter_map(|((name, _), value)| Some((name.clone(), value?)))
        .collect()
}

/// A variable's text parsed into the parts read (all of it when they cannot be told).
fn parse_read(parts: &zest_feel::ReadParts, text: &str) -> Value {
    parts.parse(text).unwrap_or_else(|_| parse(text))
}

/// [`parsed`], each variable parsed into the parts read.
pub fn parsed_read(
    reads: &[(String, zest_feel::ReadParts)],
    texts: Vec<Option<String>>,
) -> Map<String, Value> {
    reads
        .iter()
        .zip(texts)
        .filter_map(|((name, parts), text)| Some((name.clone(), parse_read(parts, &text?))))
        .collect()
}

/// The variables `names` from their texts (as [`visible_texts`] gives them), those that exist.
pub fn parsed(names: &[String], texts: Vec<Option<String>>) -> Map<String, Value> {
    names
        .iter()
        .zip(texts)
        .filter_map(|(name, text)| Some((name.clone(), parse(&text?))))
        .collect()
}

/// Context of the process instance a scope belongs to, for the variable records.
struct ScopeInfo {
    process_instance_key: i64,
    process_definition_key: i64,
    bpmn_process_id: String,
    tenant_id: String,
}

fn scope_info(
    ctx: &Ctx<'_, '_, '_>,
    scope_key: i64,
    fallback: Option<&ScopeInfoSeed>,
) -> ScopeInfo {
    let key = key_i64(scope_key);
    let inst: Option<ElementInstance> = match fallback {
        // a fresh scope (see `ScopeInfoSeed`): only this transaction can have written it
        Some(_) => ctx.txn.get_own(Ks::ElementInstances, &key),
        None => ctx.txn.get(Ks::ElementInstances, &key),
    };
    if let Some(inst) = inst {
        return ScopeInfo {
            process_instance_key: inst.record.process_instance_key,
            process_definition_key: inst.record.process_definition_key,
            bpmn_process_id: inst.record.bpmn_process_id,
            tenant_id: inst.record.tenant_id,
        };
    }
    match fallback {
        Some(s) => ScopeInfo {
            process_instance_key: s.process_instance_key,
            process_definition_key: s.process_definition_key,
            bpmn_process_id: s.bpmn_process_id.clone(),
            tenant_id: s.tenant_id.clone(),
        },
        None => ScopeInfo {
            process_instance_key: scope_key,
            process_definition_key: -1,
            bpmn_process_id: String::new(),
            tenant_id: zest_protocol::DEFAULT_TENANT.to_string(),
        },
    }
}

/// Process data for variables of a scope whose element instance does not exist yet (the
/// variables of a process instance are created before its ELEMENT_ACTIVATING). Such a scope key
/// was allocated in this transaction, so committed state holds no variables of it: only this
/// transaction's own writes are looked at.
pub struct ScopeInfoSeed {
    pub process_instance_key: i64,
    pub process_definition_key: i64,
    pub bpmn_process_id: String,
    pub tenant_id: String,
}

/// Sets a variable in exactly this scope: CREATED if new, UPDATED if its value changed.
pub fn set_local(
    ctx: &mut Ctx<'_, '_, '_>,
    scope_key: i64,
    name: &str,
    value: &Value,
    seed: Option<&ScopeInfoSeed>,
) {
    let info = scope_info(ctx, scope_key, seed);
    let doc = scope_doc(ctx, scope_key, seed.is_some());
    set_one(ctx, scope_key, name, value, &info, &doc);
}

/// Sets one variable of a scope whose document, before this variable, was `doc`.
fn set_one(
    ctx: &mut Ctx<'_, '_, '_>,
    scope_key: i64,
    name: &str,
    value: &Value,
    info: &ScopeInfo,
    doc: &[u8],
) {
    let text = value.to_string();
    let record = |text: String| {
        RecordValue::Variable(VariableRecord {
            name: name.to_string(),
            value: text,
            scope_key,
            process_instance_key: info.process_instance_key,
            process_definition_key: info.process_definition_key,
            bpmn_process_id: info.bpmn_process_id.clone(),
            tenant_id: info.tenant_id.clone(),
        })
    };
    match scope_variables::find(doc, name) {
        Some(var) if var.value == text => {}
        Some(var) => {
            ctx.event(var.key, Intent::Updated, record(text));
        }
        None => {
            let key = ctx.next_key();
            ctx.event(key, Intent::Created, record(text));
        }
    }
}

pub fn set_local_document(
    ctx: &mut Ctx<'_, '_, '_>,
    scope_key: i64,
    doc: &Map<String, Value>,
    seed: Option<&ScopeInfoSeed>,
) {
    if doc.is_empty() {
        return;
    }
    let info = scope_info(ctx, scope_key, seed);
    // a document's names are unique: the scope's variables before it are all it needs to see
    let before = scope_doc(ctx, scope_key, seed.is_some());
    for (name, value) in doc {
        set_one(ctx, scope_key, name, value, &info, &before);
    }
}

/// Merges a document starting at `scope_key`: each variable is set where it is already
/// defined (nearest scope first), else in the outermost scope (the process instance).
pub fn merge_propagate(ctx: &mut Ctx<'_, '_, '_>, scope_key: i64, doc: &Map<String, Value>) {
    if doc.is_empty() {
        return;
    }
    if scope_key <= 0 {
        return;
    }
    // a document's names are unique: where each one goes does not depend on the others, so
    // every target is found first, reading scopes outwards only while a name is not placed;
    // a name found nowhere goes to the root, the last scope read (the walk reached it)
    let names: Vec<&String> = doc.keys().collect();
    let mut targets: Vec<Option<i64>> = vec![None; doc.len()];
    let mut last = scope_key;
    let scopes = scopes_outwards(ctx, scope_key).inspect(|s| last = *s);
    find_nearest(ctx, scopes, &names, |i, scope, _| targets[i] = Some(scope));
    for ((name, value), target) in doc.iter().zip(targets) {
        set_local(ctx, target.unwrap_or(last), name, value, None);
    }
}

pub use zest_protocol::json::parse_document;

/// Sets `value` at a target path `a.b.c` in `doc`, merging into existing contexts.
pub fn set_path(
    doc: &mut Map<String, Value>,
    path: &str,
    value: Value,
    visible: &Map<String, Value>,
) {
    let mut parts = path.split('.');
    let Some(first) = parts.next() else { return };
    let rest: Vec<&str> = parts.collect();
    if rest.is_empty() {
        doc.insert(first.to_string(), value);
        return;
    }
    let mut root = doc
        .get(first)
        .cloned()
        .or_else(|| visible.get(first).cloned())
        .filter(|v| v.is_object())
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut cur = &mut root;
    for (i, part) in rest.iter().enumerate() {
        let obj = match cur {
            Value::Object(o) => o,
            _ => return,
        };
        if i == rest.len() - 1 {
            obj.insert(part.to_string(), value);
            break;
        }
        let entry = obj
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        cur = entry;
    }
    doc.insert(first.to_string(), root);
}

#[cfg(test)]
mod tests {
    use super::push_json_string;

    /// A name goes into a job's variables as serde_json writes it, whether it has something
    /// to escape or not.
    #[test]
    fn names_are_written_as_serde_json_writes_them() {
        for name in [
            "",
            "a",
            "disputeDetails",
            "ünïcode ✓",
            "a\"b",
            "back\\slash",
            "tab\t",
            "\u{1}",
            "\u{7f}",
            "/slash",
            "\u{1f}x",
        ] {
            let mut out = String::new();
            push_json_string(&mut out, name);
            assert_eq!(out, serde_json::Value::from(name).to_string(), "{name:?}");
        }
    }
}
