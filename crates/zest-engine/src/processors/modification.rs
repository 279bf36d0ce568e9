//! Process instance modification (PROCESS_INSTANCE_MODIFICATION MODIFY): activates elements
//! (creating the flow scopes they need) and terminates element instances of one process
//! instance in one command, as Operate does to repair an instance.
//!
//! Zeebe's order: every instruction is checked before anything is written. Then, per activate
//! instruction, its variables, the flow scopes it needs (ACTIVATING and ACTIVATED written at
//! once) and the element's ACTIVATE_ELEMENT command; then the terminations, written at once
//! (TERMINATING, the job or subscriptions going, TERMINATED), children before their scope; a
//! scope left without children (and without an activation on its way) is terminated too; last
//! MODIFIED.

use std::collections::HashSet;
use std::sync::Arc;

use zest_model::{ElementIdx, ElementKind, Process};
use zest_protocol::{
    ActivateInstruction, Intent, ProcessInstanceModificationRecord, Record, RecordValue,
};

use crate::behaviour::element_instance::child_record;
use crate::behaviour::element_instance::next_children;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::event_scopes::subscribe_catch_events;
use crate::behaviour::expressions::evaluate_mappings;
use crate::behaviour::terminate::release;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::state::{key_i64, Ks};
use crate::types::ElementInstance;

/// Where an activation goes: the flow scope instances to use or create, outermost first.
struct Plan {
    element: ElementIdx,
    /// The innermost existing flow scope instance.
    existing_scope: ElementInstance,
    /// Flow scopes (element indexes) to create below `existing_scope`, outermost first.
    to_create: Vec<ElementIdx>,
}

pub fn modify(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    m: &ProcessInstanceModificationRecord,
) -> ProcResult {
    let pi_key = m.process_instance_key;
    let process: Option<ElementInstance> = ctx.txn.get(Ks::ElementInstances, &key_i64(pi_key));
    let Some(process) = process.filter(|p| p.parent_key <= 0 && p.is_active()) else {
        return Err(Rejection::not_found(format!(
            "Expected to modify process instance but no process instance found with key '{pi_key}'"
        )));
    };
    let Some(model) = ctx
        .models
        .get(ctx.txn, process.record.process_definition_key)
    else {
        return Err(Rejection::not_found(format!(
            "Expected to modify process instance but no process instance found with key '{pi_key}'"
        )));
    };
    let plans = plan_activations(ctx, &model, &process, &m.activate_instructions)?;
    let terminations = check_terminations(ctx, &process, m)?;

    let mut activated = Vec::new();
    let mut pending_scopes = HashSet::new();
    for (instruction, plan) in m.activate_instructions.iter().zip(plans) {
        let el = model.element(plan.element);
        // global variables first, like Zeebe
        for v in instruction
            .variable_instructions
            .iter()
            .filter(|v| v.element_id.is_empty())
        {
            set_variables(ctx, pi_key, &v.variables)?;
        }
        let mut scope = plan.existing_scope;
        for s in plan.to_create {
            scope = create_scope(ctx, &scope, &model, s)?;
            activated.push(scope.key);
            let id = &model.element(s).id;
            for v in scoped(instruction, id) {
                set_variables(ctx, scope.key, &v.variables)?;
            }
        }
        let key = ctx.next_key();
        for v in scoped(instruction, &el.id) {
            set_variables(ctx, key, &v.variables)?;
        }
        let rec = child_record(&scope.record, scope.key, &model, plan.element);
        ctx.command(key, Intent::ActivateElement, pi_value(&rec));
        activated.push(key);
        pending_scopes.insert(scope.key);
    }

    for inst in terminations {
        // an instruction may name an instance that an earlier one terminated with its scope
        let Some(inst) = ctx
            .txn
            .get::<ElementInstance>(Ks::ElementInstances, &key_i64(inst.key))
            .filter(|i| i.is_active())
        else {
            continue;
        };
        terminate_now(ctx, &inst);
        // a scope left without anything to do is terminated as well
        let mut parent = inst.parent_key;
        while parent > 0 && !pending_scopes.contains(&parent) {
            let Some(scope) = ctx
                .txn
                .get::<ElementInstance>(Ks::ElementInstances, &key_i64(parent))
                .filter(|s| s.is_active() && s.active_children == 0 && s.active_flows == 0)
            else {
                break;
            };
            terminate_now(ctx, &scope);
            parent = scope.parent_key;
        }
    }

    let modified = ProcessInstanceModificationRecord {
        activated_element_instance_keys: activated,
        tenant_id: process.record.tenant_id.clone(),
        ..m.clone()
    };
    ctx.event_and_respond(
        cmd,
        pi_key,
        Intent::Modified,
        RecordValue::ProcessInstanceModification(modified),
    );
    Ok(())
}

/// The variable instructions of `instruction` for the scope of element `id`.
fn scoped<'i>(
    instruction: &'i ActivateInstruction,
    id: &'i str,
) -> impl Iterator<Item = &'i zest_protocol::VariableInstruction> {
    instruction
        .variable_instructions
        .iter()
        .filter(move |v| v.element_id == id)
}

fn set_variables(ctx: &mut Ctx<'_, '_, '_>, scope_key: i64, json: &str) -> ProcResult {
    let doc = variables::parse_document(json).map_err(|e| {
        Rejection::invalid_argument(format!(
            "Expected to modify the process instance with variables as a JSON document, but {e}"
        ))
    })?;
    if !doc.is_empty() {
        variables::set_local_document(ctx, scope_key, &doc, None);
    }
    Ok(())
}

/// Checks every activate instruction and finds (or plans) the flow scopes it needs.
fn plan_activations(
    ctx: &mut Ctx<'_, '_, '_>,
    model: &Arc<Process>,
    process: &ElementInstance,
    instructions: &[ActivateInstruction],
) -> Result<Vec<Plan>, Rejection> {
    let pid = &process.record.bpmn_process_id;
    let missing: Vec<&str> = instructions
        .iter()
        .filter(|i| model.element_by_id(&i.element_id).is_none())
        .map(|i| i.element_id.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(Rejection::invalid_argument(format!(
            "Expected to modify instance of process '{pid}' but it contains one or more activate instructions with an element that could not be found: '{}'",
            missing.join("', '")
        )));
    }
    let unsupported: Vec<&str> = instructions
        .iter()
        .filter(|i| {
            model
                .element_by_id(&i.element_id)
                .is_some_and(|(_, el)| !can_activate(el))
        })
        .map(|i| i.element_id.as_str())
        .collect();
    if !unsupported.is_empty() {
        return Err(Rejection::invalid_argument(format!(
            "Expected to modify instance of process '{pid}' but it contains one or more activate instructions for elements that are unsupported: '{}'. The activation for the following element types is unsupported: [PROCESS, START_EVENT, BOUNDARY_EVENT, SEQUENCE_FLOW]",
            unsupported.join("', '")
        )));
    }
    let mut plans = Vec::new();
    for instruction in instructions {
        let Some((idx, _)) = model.element_by_id(&instruction.element_id) else {
            continue;
        };
        // the flow scopes of the element, outermost first (the process left out)
        let mut chain = Vec::new();
        let mut s = model.element(idx).flow_scope;
        while let Some(scope) = s.filter(|&s| s != Process::ROOT) {
            chain.push(scope);
            s = model.element(scope).flow_scope;
        }
        chain.reverse();
        for v in &instruction.variable_instructions {
            let in_scope = v.element_id.is_empty()
                || v.element_id == instruction.element_id
                || chain.iter().any(|&s| model.element(s).id == v.element_id);
            if !in_scope {
                return Err(Rejection::invalid_argument(format!(
                    "Expected to modify instance of process '{pid}' but it contains one or more variable instructions with a scope element id that could not be found: '{}'",
                    v.element_id
                )));
            }
        }
        let mut scope = process.clone();
        let mut level = 0;
        if instruction.ancestor_scope_key > 0 && instruction.ancestor_scope_key != process.key {
            let ancestor = ctx
                .txn
                .get::<ElementInstance>(
                    Ks::ElementInstances,
                    &key_i64(instruction.ancestor_scope_key),
                )
                .filter(|a| a.is_active() && a.record.process_instance_key == process.key);
            let position = ancestor.as_ref().and_then(|a| {
                chain
                    .iter()
                    .position(|&s| model.element(s).id == a.record.element_id)
            });
            match (ancestor, position) {
                // a multi-instance body: the inner instance is chosen below, as without one
                (Some(a), Some(p))
                    if model
                        .element(chain[p])
                        .is_body_instance(a.record.bpmn_element_type) =>
                {
                    scope = ctx
                        .txn
                        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(a.parent_key))
                        .unwrap_or(a);
                    level = p;
                }
                (Some(a), Some(p)) => {
                    scope = a;
                    level = p + 1;
                }
                _ => {
                    return Err(Rejection::invalid_argument(format!(
                        "Expected to modify instance of process '{pid}' but it contains one or more activate instructions with an ancestor scope key that does not exist, or is not in an active state, or is not a flow scope of the element: '{}'",
                        instruction.ancestor_scope_key
                    )))
                }
            }
        }
        let mut to_create = Vec::new();
        for &s in &chain[level..] {
            let el = model.element(s);
            let no_instance = || {
                Rejection::invalid_argument(format!(
                    "Expected to modify instance of process '{pid}' but it contains one or more activate instructions for elements inside the multi-instance element '{}', which has no active instance; Zest does not create multi-instance bodies by modification yet",
                    el.id
                ))
            };
            if !to_create.is_empty() {
                if el.multi_instance.is_some() {
                    return Err(no_instance());
                }
                to_create.push(s);
                continue;
            }
            let children_of = |key: i64| -> Vec<ElementInstance> {
                next_children(ctx, key, -1, usize::MAX)
                    .into_iter()
                    .filter(|c| c.record.element_id == el.id)
                    .collect()
            };
            let mut found = children_of(scope.key);
            if el.multi_instance.is_some() {
                // the flow scopes are the inner instances of the body (or the one chosen)
                found = found
                    .iter()
                    .flat_map(|body| children_of(body.key))
                    .collect();
                if found.is_empty() {
                    return Err(no_instance());
                }
            }
            match found.len() {
                0 => to_create.push(s),
                1 => scope = found.into_iter().next().unwrap_or_else(|| scope.clone()),
                _ => {
                    return Err(Rejection::invalid_argument(format!(
                        "Expected to modify instance of process '{pid}' but it contains one or more activate instructions for an element that has a flow scope with more than one active instance: '{}'. Can't decide in which instance of the flow scope the element should be activated. Please specify an ancestor element instance key for this activate instruction.",
                        el.id
                    )))
                }
            }
        }
        plans.push(Plan {
            element: idx,
            existing_scope: scope,
            to_create,
        });
    }
    Ok(plans)
}

/// Elements a modification can activate: flow nodes entered by a sequence flow or a link.
fn can_activate(el: &zest_model::Element) -> bool {
    !matches!(
        el.kind,
        ElementKind::Process
            | ElementKind::NoneStartEvent
            | ElementKind::MessageStartEvent
            | ElementKind::SignalStartEvent
            | ElementKind::TimerStartEvent
            | ElementKind::EventSubProcessStart
            | ElementKind::BoundaryEvent
            | ElementKind::AdHocInnerInstance
    ) && el.element_type != zest_model::BpmnElementType::EventSubProcess
}

/// Checks that every terminate instruction names an active element instance of the process
/// instance; returns them.
fn check_terminations(
    ctx: &Ctx<'_, '_, '_>,
    process: &ElementInstance,
    m: &ProcessInstanceModificationRecord,
) -> Result<Vec<ElementInstance>, Rejection> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for t in &m.terminate_instructions {
        match ctx
            .txn
            .get::<ElementInstance>(Ks::ElementInstances, &key_i64(t.element_instance_key))
            .filter(|i| i.is_active() && i.record.process_instance_key == process.key)
        {
            Some(i) => found.push(i),
            None => missing.push(t.element_instance_key.to_string()),
        }
    }
    if !missing.is_empty() {
        return Err(Rejection::invalid_argument(format!(
            "Expected to modify instance of process '{}' but it contains one or more terminate instructions with an element instance that could not be found: '{}'",
            process.record.bpmn_process_id,
            missing.join("', '")
        )));
    }
    Ok(found)
}

/// Creates the flow scope `s` under `parent` as Zeebe does for a modification: ACTIVATING,
/// its boundary events' and event sub-processes' subscriptions, ACTIVATED (no start event).
/// An ad-hoc sub-process gets no `adHocSubProcessElements`, no job and no activation of its
/// active elements collection, as in Zeebe: only the instruction's element runs in it.
fn create_scope(
    ctx: &mut Ctx<'_, '_, '_>,
    parent: &ElementInstance,
    model: &Arc<Process>,
    s: ElementIdx,
) -> Result<ElementInstance, Rejection> {
    let rec = child_record(&parent.record, parent.key, model, s);
    let key = ctx.next_key();
    ctx.event(key, Intent::ElementActivating, pi_value(&rec));
    let inst: ElementInstance = ctx
        .txn
        .get(Ks::ElementInstances, &key_i64(key))
        .ok_or_else(|| Rejection::invalid_state("the created flow scope is missing"))?;
    let el = model.element(s);
    if let Some(ad_hoc) = &el.ad_hoc {
        // Zeebe 8.8 leaves the output collection out here and then fails the first inner
        // instance's completion with a processing error; Zest starts it empty, as an
        // activation does
        crate::element::ad_hoc::start_output_collection(ctx, key, ad_hoc);
    }
    if !el.inputs.is_empty() {
        let vars = variables::visible(ctx, key);
        match evaluate_mappings(&el.inputs, &vars) {
            Ok(doc) => variables::set_local_document(ctx, key, &doc, None),
            Err(msg) => return Err(Rejection::invalid_argument(msg)),
        }
    }
    subscribe_boundaries(ctx, &inst, model, s).map_err(Rejection::invalid_argument)?;
    subscribe_catch_events(ctx, &inst, model, &el.event_sub_process_starts)
        .map_err(Rejection::invalid_argument)?;
    ctx.event(key, Intent::ElementActivated, pi_value(&rec));
    Ok(ctx
        .txn
        .get(Ks::ElementInstances, &key_i64(key))
        .unwrap_or(inst))
}

/// Terminates an element instance at once (no TERMINATE_ELEMENT command): its children and a
/// process it called first, then its job, user task, subscriptions and incidents.
fn terminate_now(ctx: &mut Ctx<'_, '_, '_>, inst: &ElementInstance) {
    let key = inst.key;
    ctx.event(key, Intent::ElementTerminating, pi_value(&inst.record));
    // a modification terminates at once: a user task's canceling listeners do not hold it
    let _ = release(ctx, inst);
    if let Some(child) = ctx.txn.get::<i64>(Ks::CalledInstances, &key_i64(key)) {
        if let Some(called) = ctx
            .txn
            .get::<ElementInstance>(Ks::ElementInstances, &key_i64(child))
            .filter(|c| c.is_active())
        {
            terminate_now(ctx, &called);
        }
    }
    for child in next_children(ctx, key, -1, usize::MAX) {
        terminate_now(ctx, &child);
    }
    let lock = if inst.parent_key <= 0 {
        crate::behaviour::message_subscriptions::start_lock_of(ctx, key)
    } else {
        None
    };
    ctx.event(key, Intent::ElementTerminated, pi_value(&inst.record));
    crate::behaviour::message_subscriptions::on_instance_ended(ctx, lock);
}
