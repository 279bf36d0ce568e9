//! Multi-instance activities, as Zeebe runs them. The activity is entered as a multi-instance
//! body (same element id, element type MULTI_INSTANCE_BODY) that holds one inner instance per
//! item of the input collection: all at once (parallel, activated one PROCESS_INSTANCE_BATCH
//! command at a time) or one after the other (sequential).
//!
//! - Each inner instance gets its item (`inputElement`), a null for an output element that is
//!   just a variable, and `loopCounter` (1-based) as local variables while it activates.
//! - As an inner instance completes, its output element goes to its index of the output
//!   collection (a local variable of the body) and the completion condition is checked, with
//!   `numberOfInstances`, `numberOfActiveInstances`, `numberOfCompletedInstances` and
//!   `numberOfTerminatedInstances` in scope. When it holds, the other inner instances are
//!   terminated and the body completes.
//! - The body completes when every item's instance completed or was terminated; the output
//!   collection then goes to the flow scope. Boundary events belong to the body.
//!
//! Counters live in `Ks::MultiInstance` (written by the appliers from lifecycle events).

use std::sync::Arc;

use serde_json::{Map, Value};
use zest_model::{ElementIdx, MultiInstance, Process};
use zest_protocol::{
    ErrorType, Intent, ProcessInstanceBatchRecord, ProcessInstanceRecord, Record, RecordValue,
    RejectionType,
};

use crate::behaviour::element_instance::load;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::event_scopes::unsubscribe_events;
use crate::behaviour::expressions::evaluate;
use crate::behaviour::expressions::evaluate_with;
use crate::behaviour::expressions::wrong_type;
use crate::behaviour::expressions::wrong_type_with;
use crate::behaviour::flows::leave;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::terminate::continue_batch;
use crate::behaviour::terminate::terminate_children;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult};
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, MultiInstanceCounters};
use zest_protocol::json::type_name;

fn counters(ctx: &Ctx<'_, '_, '_>, key: i64) -> MultiInstanceCounters {
    ctx.txn
        .get(Ks::MultiInstance, &key_i64(key))
        .unwrap_or_default()
}

/// Evaluates the input collection of the body `body_key` in the scope `scope_key`; it must be
/// a list. Evaluated again for each inner instance and completion, as Zeebe does (the
/// collection may change while the body runs); the last result from the same inputs is kept
/// (`Models::collection`), so a large collection is not parsed again for each of its items.
fn input_collection(
    ctx: &mut Ctx<'_, '_, '_>,
    mi: &MultiInstance,
    scope_key: i64,
    body_key: i64,
) -> Result<Arc<Vec<Value>>, String> {
    let (result, kept) = match &mi.input_collection {
        zest_model::Expression::Feel(e) => {
            let names: Vec<String> = e.variable_names().map(str::to_string).collect();
            let texts = variables::visible_texts(ctx, scope_key, &names);
            let size: usize = texts.iter().flatten().map(String::len).sum();
            let keep = size <= crate::models::MAX_KEPT_COLLECTION;
            if keep {
                if let Some(items) = ctx.models.collection(body_key, &texts) {
                    return Ok(items);
                }
            }
            let kept = keep.then(|| texts.clone());
            // evaluated from the texts just read, not read again, and only the parts read
            let reads: Vec<_> = names.iter().map(|n| (n.clone(), e.reads(n))).collect();
            let vars = variables::parsed_read(&reads, texts);
            (evaluate_with(&mi.input_collection, &vars)?, kept)
        }
        zest_model::Expression::Static(_) => {
            (evaluate(ctx, &mi.input_collection, scope_key)?, None)
        }
    };
    let items = match result {
        Value::Array(items) => Arc::new(items),
        other => {
            return Err(wrong_type(
                ctx,
                scope_key,
                &mi.input_collection,
                "'ARRAY'",
                &other,
            ))
        }
    };
    if let Some(texts) = kept {
        ctx.models.keep_collection(body_key, texts, items.clone());
    }
    Ok(items)
}

/// The body's activation after ELEMENT_ACTIVATING: reads the input collection, opens the
/// boundary events, creates the output collection (nulls) and starts the inner instances.
pub(crate) fn activate_body(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
    mi: &MultiInstance,
) -> ProcResult {
    let items = match input_collection(ctx, mi, inst.key, inst.key) {
        Ok(items) => items,
        Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
    };
    if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
        return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
    }
    ctx.event(inst.key, Intent::ElementActivated, pi_value(&inst.record));
    if let Some(name) = &mi.output_collection {
        let nulls = Value::Array(vec![Value::Null; items.len()]);
        variables::set_local(ctx, inst.key, name, &nulls, None);
    }
    if items.is_empty() {
        ctx.command(inst.key, Intent::CompleteElement, pi_value(&inst.record));
    } else if mi.sequential {
        activate_inner(ctx, &inst.record, inst.key, model, idx);
    } else {
        let batch = ProcessInstanceBatchRecord {
            process_instance_key: inst.record.process_instance_key,
            process_definition_key: inst.record.process_definition_key,
            batch_element_instance_key: inst.key,
            index: items.len() as i64,
            tenant_id: inst.record.tenant_id.clone(),
        };
        let key = ctx.next_key();
        ctx.command(
            key,
            Intent::Activate,
            RecordValue::ProcessInstanceBatch(batch),
        );
    }
    Ok(())
}

/// Writes ACTIVATE_ELEMENT for the next inner instance of the body `body_key`.
fn activate_inner(
    ctx: &mut Ctx<'_, '_, '_>,
    body: &ProcessInstanceRecord,
    body_key: i64,
    model: &Process,
    idx: ElementIdx,
) {
    let el = model.element(idx);
    let rec = ProcessInstanceRecord {
        element_id: el.id.clone(),
        flow_scope_key: body_key,
        bpmn_element_type: el.element_type,
        bpmn_event_type: el.event_type,
        ..body.clone()
    };
    let key = ctx.next_key();
    ctx.command(key, Intent::ActivateElement, pi_value(&rec));
}

/// PROCESS_INSTANCE_BATCH ACTIVATE: activates one inner instance of a parallel body and hands
/// the rest to the next batch command.
pub fn batch_activate(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    batch: &ProcessInstanceBatchRecord,
) -> ProcResult {
    let body_key = batch.batch_element_instance_key;
    let Some((body, model, idx)) = load(ctx, body_key) else {
        ctx.reject(
            cmd,
            RejectionType::InvalidState,
            format!("Expected to activate child for batch element instance, but no parent element instance found for key '{body_key}'. The parent was likely terminated before processing this batch activation."),
        );
        return Ok(());
    };
    if batch.index > 0 {
        activate_inner(ctx, &body.record, body_key, &model, idx);
    }
    let remaining = batch.index - 1;
    let next = (remaining > 0).then_some(remaining);
    continue_batch(
        ctx,
        cmd.key,
        batch,
        next,
        Intent::Activate,
        Intent::Activated,
    );
    Ok(())
}

/// An inner instance is activating: its item, the output element's variable (null) and its
/// loop counter become its local variables.
pub(crate) fn set_loop_variables(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    mi: &MultiInstance,
) -> Result<(), String> {
    let loop_counter = counters(ctx, inst.key).loop_counter;
    let items = input_collection(ctx, mi, inst.key, inst.parent_key)?;
    let index = (loop_counter - 1).max(0) as usize;
    let Some(item) = items.get(index) else {
        return Err(format!("Expected to read item at index {index} of the multiInstanceBody input collection but it contains only {} elements. The input collection might be modified while iterating over it.", items.len()));
    };
    if let Some(name) = &mi.input_element {
        variables::set_local(ctx, inst.key, name, item, None);
    }
    if let Some(name) = mi.output_element_variable() {
        variables::set_local(ctx, inst.key, name, &Value::Null, None);
    }
    variables::set_local(
        ctx,
        inst.key,
        "loopCounter",
        &Value::from(loop_counter),
        None,
    );
    Ok(())
}

/// An inner instance is completing (before ELEMENT_COMPLETED): its output element goes into
/// the body's output collection; returns whether the completion condition holds.
pub(crate) fn before_inner_completed(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    mi: &MultiInstance,
) -> Result<bool, String> {
    let body_key = inst.parent_key;
    if let (Some(name), Some(expr)) = (&mi.output_collection, &mi.output_element) {
        let value = evaluate(ctx, expr, inst.key)?;
        let index = (counters(ctx, inst.key).loop_counter - 1).max(0) as usize;
        let collection = variables::local(ctx, body_key).remove(name);
        let Some(Value::Array(mut items)) = collection else {
            return Err(format!("Unable to update an item in output collection '{name}' because the type of the output collection is: {}. This may happen when multiple BPMN elements write to the same variable.", collection.as_ref().map(type_name).unwrap_or("NULL")));
        };
        if index >= items.len() {
            return Err(format!("Unable to update an item in output collection '{name}' at position {} because the size of the collection is: {}. This may happen when multiple BPMN elements write to the same variable.", index + 1, items.len()));
        }
        items[index] = value;
        variables::set_local(ctx, body_key, name, &Value::Array(items), None);
    }
    let Some(condition) = &mi.completion_condition else {
        return Ok(false);
    };
    let body_counts = counters(ctx, body_key);
    let active = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(body_key))
        .map(|b| b.active_children as i64)
        .unwrap_or(0);
    // the instance completing is still counted as active, and not yet as completed
    let mut vars: Map<String, Value> = variables::visible(ctx, inst.key);
    vars.insert(
        "numberOfInstances".into(),
        Value::from(body_counts.loop_counter),
    );
    vars.insert("numberOfActiveInstances".into(), Value::from(active - 1));
    vars.insert(
        "numberOfCompletedInstances".into(),
        Value::from(body_counts.completed + 1),
    );
    vars.insert(
        "numberOfTerminatedInstances".into(),
        Value::from(body_counts.terminated),
    );
    match evaluate_with(condition, &vars)? {
        Value::Bool(b) => Ok(b),
        other => Err(wrong_type_with(condition, "'BOOLEAN'", &other, || vars)),
    }
}

/// An inner instance completed: the body activates the next one (sequential), terminates the
/// others when the completion condition held, or completes once every item is done.
pub(crate) fn after_inner_completed(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
    mi: &MultiInstance,
    condition_holds: bool,
) -> ProcResult {
    let Some(body) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(inst.parent_key))
    else {
        return Ok(());
    };
    if condition_holds {
        let waiting = terminate_children(ctx, &body);
        if !waiting || mi.sequential {
            ctx.command(body.key, Intent::CompleteElement, pi_value(&body.record));
        }
        return Ok(());
    }
    let items = match input_collection(ctx, mi, body.key, body.key) {
        Ok(items) => items,
        Err(msg) => return raise_incident(ctx, &body, ErrorType::ExtractValueError, msg, -1),
    };
    let counts = counters(ctx, body.key);
    if mi.sequential && (counts.loop_counter as usize) < items.len() {
        activate_inner(ctx, &body.record, body.key, model, idx);
        return Ok(());
    }
    if body.active_children == 0
        && body.active_flows == 0
        && (counts.completed + counts.terminated) as usize == items.len()
    {
        ctx.command(body.key, Intent::CompleteElement, pi_value(&body.record));
    }
    Ok(())
}

/// The body completes (after ELEMENT_COMPLETING): its boundary events close, the output
/// collection goes to the flow scope, and it leaves through its outgoing flows.
pub(crate) fn complete_body(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
    mi: &MultiInstance,
) -> ProcResult {
    let el = model.element(idx);
    if !el.boundary_events.is_empty() {
        unsubscribe_events(ctx, inst.key);
    }
    if let Some(name) = &mi.output_collection {
        if let Some(value) = variables::local(ctx, inst.key).remove(name) {
            let mut doc = Map::new();
            doc.insert(name.clone(), value);
            variables::merge_propagate(ctx, inst.parent_key, &doc);
        }
    }
    ctx.event(inst.key, Intent::ElementCompleted, pi_value(&inst.record));
    leave(ctx, inst, model, idx)
}
