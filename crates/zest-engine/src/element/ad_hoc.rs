//! Ad-hoc sub-processes, as Zeebe 8.8 runs them (its BPMN implementation).
//!
//! - Activating: the `adHocSubProcessElements` variable (the activities it can activate, with
//!   their metadata) and the output collection (an empty list) become local variables before
//!   the input mappings; then `activeElementsCollection` is evaluated (a list of element ids),
//!   boundary events open, and the sub-process is ACTIVATED.
//! - Each element of that list runs in an inner instance of its own (element id
//!   `<id>#innerInstance`, type AD_HOC_SUB_PROCESS_INNER_INSTANCE), written as ACTIVATING and
//!   ACTIVATED events (Zeebe never uses a command for it), followed by the element's
//!   ACTIVATE_ELEMENT. A flow of sequence flows from that element stays in its inner instance,
//!   which completes once no token is left in it.
//! - As an inner instance completes, its output element is appended to the output collection
//!   and the completion condition is evaluated in the sub-process's scope. When it holds, the
//!   other inner instances are terminated (`cancelRemainingInstances`, the default) or waited
//!   for; then the sub-process completes. Without a condition it completes once no inner
//!   instance is left; with one that does not hold it stays active.
//! - Job worker implementation (`zeebe:taskDefinition` on the sub-process, Camunda's AI agent):
//!   instead of `activeElementsCollection` and a condition, a job of kind AD_HOC_SUB_PROCESS
//!   is created as the sub-process activates, and again each time one of its flows completes
//!   (an open one is canceled first). The worker completes it with a result of type
//!   AD_HOC_SUB_PROCESS (an unknown or non-activatable element rejects the JOB COMPLETE with
//!   NOT_FOUND). As in Zeebe, the result goes on as follow-up AD_HOC_SUB_PROCESS_INSTRUCTION
//!   commands: ACTIVATE for its elements, COMPLETE when `isCompletionConditionFulfilled`; then
//!   the job's variables are merged from the sub-process's scope up. COMPLETE terminates the
//!   remaining flows (`isCancelRemainingInstances`) or waits for them (its COMPLETED event's
//!   applier remembers it in `Ks::AdHocFulfilled`); without flows the sub-process completes at
//!   once. A job without retries raises AD_HOC_SUB_PROCESS_NO_RETRIES.

use std::sync::Arc;

use serde_json::Value;
use zest_model::{AdHoc, ElementIdx, ElementKind, Process, TaskDefinition};
use zest_protocol::json::type_name;
use zest_protocol::{
    AdHocSubProcessInstructionRecord, ErrorType, Intent, JobKind, JobListenerEventType, JobRecord,
    JobResultType, ProcessInstanceRecord, Record, RecordValue,
};

use crate::behaviour::element_instance::child_record;
use crate::behaviour::element_instance::load;
use crate::behaviour::element_instance::next_children;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::boundary_targets;
use crate::behaviour::event_scopes::subscribe_catch_events;
use crate::behaviour::expressions::evaluate;
use crate::behaviour::expressions::job_type_and_retries;
use crate::behaviour::expressions::wrong_type;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::jobs::create_job_of_kind;
use crate::behaviour::terminate::cancel_job;
use crate::behaviour::terminate::complete_scope_if_done;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::ElementProcessor;
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, StoredJob};

const ELEMENTS_VARIABLE: &str = "adHocSubProcessElements";

/// The sub-process's own variables, set while it activates (before its input mappings).
pub(crate) fn set_variables(ctx: &mut Ctx<'_, '_, '_>, key: i64, ad_hoc: &AdHoc) {
    variables::set_local(ctx, key, ELEMENTS_VARIABLE, &ad_hoc.elements_variable, None);
    start_output_collection(ctx, key, ad_hoc);
}

/// Sets the sub-process's output collection, if it has one, to an empty list.
pub(crate) fn start_output_collection(ctx: &mut Ctx<'_, '_, '_>, key: i64, ad_hoc: &AdHoc) {
    if let Some(name) = &ad_hoc.output_collection {
        variables::set_local(ctx, key, name, &Value::Array(Vec::new()), None);
    }
}

/// The sub-process's activation after its input mappings: activates the elements that
/// `activeElementsCollection` names, each in an inner instance.
pub(crate) fn activate(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
    ad_hoc: &AdHoc,
) -> ProcResult {
    if let Some(def) = &model.element(idx).task_definition {
        // the job worker implementation: its job decides what runs
        let job = match job_type_and_retries(ctx, def, inst.key) {
            Ok(job) => job,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        };
        if let Err(msg) = subscribe_events(ctx, inst, model, idx) {
            return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
        }
        create_job(ctx, inst, model, idx, job);
        ctx.event(inst.key, Intent::ElementActivated, pi_value(&inst.record));
        return Ok(());
    }
    let elements = match elements_to_activate(ctx, inst.key, model, ad_hoc) {
        Ok(elements) => elements,
        Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
    };
    if let Err(msg) = subscribe_events(ctx, inst, model, idx) {
        return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
    }
    ctx.event(inst.key, Intent::ElementActivated, pi_value(&inst.record));
    for element in elements {
        activate_in_inner_instance(ctx, inst, model, ad_hoc, element, None);
    }
    Ok(())
}

/// Opens the subscriptions of the sub-process's boundary events (a multi-instance body holds
/// those) and of the start events of its event sub-processes, before ELEMENT_ACTIVATED, as
/// Zeebe does: an ad-hoc sub-process has no start event to wait for.
fn subscribe_events(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    idx: ElementIdx,
) -> Result<(), String> {
    // one call, so that a failure leaves nothing behind for the retry
    let mut targets = boundary_targets(inst, model, idx);
    targets.extend(model.element(idx).event_sub_process_starts.iter().copied());
    subscribe_catch_events(ctx, inst, model, &targets)
}

/// Evaluates `activeElementsCollection` in the sub-process's scope: a list of the ids of its
/// activities (with repeats), or Zeebe's incident message.
fn elements_to_activate(
    ctx: &Ctx<'_, '_, '_>,
    key: i64,
    model: &Process,
    ad_hoc: &AdHoc,
) -> Result<Vec<ElementIdx>, String> {
    let Some(expr) = &ad_hoc.active_elements_collection else {
        return Ok(Vec::new());
    };
    let failed = |msg: String| format!("Failed to activate ad-hoc elements. {msg}");
    let items = match evaluate(ctx, expr, key).map_err(failed)? {
        Value::Array(items) => items,
        other => return Err(failed(wrong_type(ctx, key, expr, "'ARRAY'", &other))),
    };
    let ids: Vec<String> = items
        .into_iter()
        .map(|i| match i {
            Value::String(s) => Ok(s),
            _ => Err(failed(format!(
                "Expected result of the expression '{}' to be 'ARRAY' containing 'STRING' items, but was 'ARRAY' containing at least one non-'STRING' item.",
                expr.quoted()
            ))),
        })
        .collect::<Result<_, _>>()?;
    check_elements_exist(key, ad_hoc, model, ids.iter().map(String::as_str))
}

/// The activities with the ids `ids`, or Zeebe's message naming those that are not.
fn check_elements_exist<'i>(
    key: i64,
    ad_hoc: &AdHoc,
    model: &Process,
    ids: impl Iterator<Item = &'i str> + Clone,
) -> Result<Vec<ElementIdx>, String> {
    let find = |id: &str| {
        ad_hoc
            .activities
            .iter()
            .copied()
            .find(|&a| model.element(a).id == id)
    };
    let missing: Vec<&str> = ids.clone().filter(|id| find(id).is_none()).collect();
    if !missing.is_empty() {
        return Err(format!(
            "Expected to activate activities for ad-hoc sub-process with key '{key}', but the given elements [{}] do not exist.",
            missing.join(", ")
        ));
    }
    Ok(ids.filter_map(find).collect())
}

/// AD_HOC_SUB_PROCESS_INSTRUCTION ACTIVATE: activates elements of an active ad-hoc
/// sub-process, each in an inner instance with the instruction's variables as its local ones;
/// with `cancelRemainingInstances` the flows already running are terminated first.
pub fn activate_instruction(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    instruction: &AdHocSubProcessInstructionRecord,
) -> ProcResult {
    let key = instruction.ad_hoc_sub_process_instance_key;
    let not_found = || {
        Rejection::not_found(format!(
            "Expected to activate activities for ad-hoc sub-process but no ad-hoc sub-process instance found with key '{key}'."
        ))
    };
    let Some((ah, model, idx)) = load(ctx, key) else {
        return Err(not_found());
    };
    let Some(ad_hoc) =
        model.element(idx).ad_hoc.as_ref().filter(|_| {
            ah.record.bpmn_element_type == zest_model::BpmnElementType::AdHocSubProcess
        })
    else {
        return Err(not_found());
    };
    if ah.state != Intent::ElementActivated {
        return Err(Rejection::invalid_state(format!(
            "Expected to activate activities for ad-hoc sub-process with key '{key}', but it is not active."
        )));
    }
    let ids = instruction
        .activate_elements
        .iter()
        .map(|e| e.element_id.as_str());
    let mut distinct: Vec<&str> = ids.clone().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != instruction.activate_elements.len() {
        return Err(Rejection::invalid_argument(format!(
            "Expected to activate activities for ad-hoc sub-process with key '{key}', but duplicate activities were given."
        )));
    }
    let elements = check_elements_exist(key, ad_hoc, &model, ids).map_err(Rejection::not_found)?;
    let mut documents = Vec::new();
    for e in &instruction.activate_elements {
        let doc = variables::parse_document(&e.variables).map_err(|msg| {
            Rejection::invalid_argument(format!(
                "Expected to activate activity '{}' of ad-hoc sub-process with key '{key}' with variables, but they are not valid: {msg}",
                e.element_id
            ))
        })?;
        documents.push(doc);
    }
    if instruction.cancel_remaining_instances {
        // the flows running so far are terminated first (Zeebe's order)
        terminate_flows(ctx, key);
    }
    for (element, doc) in elements.into_iter().zip(documents) {
        activate_in_inner_instance(ctx, &ah, &model, ad_hoc, element, Some(&doc));
    }
    let done = AdHocSubProcessInstructionRecord {
        tenant_id: ah.record.tenant_id.clone(),
        ..instruction.clone()
    };
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::Activated,
        RecordValue::AdHocSubProcessInstruction(done),
    );
    Ok(())
}

/// Creates an inner instance of the sub-process `ah` (ACTIVATING and ACTIVATED, as events),
/// with `variables` as its local variables, and activates `element` in it.
fn activate_in_inner_instance(
    ctx: &mut Ctx<'_, '_, '_>,
    ah: &ElementInstance,
    model: &Process,
    ad_hoc: &AdHoc,
    element: ElementIdx,
    variables: Option<&serde_json::Map<String, Value>>,
) {
    let inner = model.element(ad_hoc.inner);
    let inner_record = ProcessInstanceRecord {
        element_id: inner.id.clone(),
        flow_scope_key: ah.key,
        bpmn_element_type: inner.element_type,
        bpmn_event_type: inner.event_type,
        ..ah.record.clone()
    };
    let inner_key = ctx.next_key();
    ctx.event(
        inner_key,
        Intent::ElementActivating,
        pi_value(&inner_record),
    );
    ctx.event(inner_key, Intent::ElementActivated, pi_value(&inner_record));
    if let Some(name) = ad_hoc.output_element_variable() {
        // the flow's output stays in its inner instance until it is collected
        variables::set_local(ctx, inner_key, name, &Value::Null, None);
    }
    if let Some(doc) = variables {
        variables::set_local_document(ctx, inner_key, doc, None);
    }
    let rec = child_record(&inner_record, inner_key, model, element);
    let key = ctx.next_key();
    ctx.command(key, Intent::ActivateElement, pi_value(&rec));
}

/// An inner instance is completing (after ELEMENT_COMPLETING): collects its output, evaluates
/// the completion condition, writes ELEMENT_COMPLETED and lets the sub-process go on.
pub(crate) fn inner_instance_completing(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
) -> ProcResult {
    let Some(ad_hoc) = model
        .element(idx)
        .flow_scope
        .and_then(|ah| model.element(ah).ad_hoc.as_ref())
    else {
        return Ok(());
    };
    let ah_key = inst.parent_key;
    if let Err(msg) = collect_output(ctx, inst, ah_key, ad_hoc) {
        return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
    }
    if let Some(ah_idx) = model.element(idx).flow_scope {
        if let Some(def) = &model.element(ah_idx).task_definition {
            return job_flow_completed(ctx, inst, model, ah_idx, def);
        }
    }
    let holds = match completion_condition_holds(ctx, ah_key, ad_hoc) {
        Ok(holds) => holds,
        Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
    };
    ctx.event(inst.key, Intent::ElementCompleted, pi_value(&inst.record));
    let Some(ah) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(ah_key))
    else {
        return Ok(());
    };
    match holds {
        // no condition: done once no flow is left
        None => complete_scope_if_done(ctx, ah_key),
        Some(true) if ad_hoc.cancel_remaining_instances => {
            // every other flow is terminated (one command each, all at once, as Zeebe writes
            // them here); the sub-process completes once the last of them is gone
            if !terminate_flows(ctx, ah.key) {
                return complete_scope_if_done(ctx, ah_key);
            }
            Ok(())
        }
        Some(true) => complete_scope_if_done(ctx, ah_key),
        Some(false) => Ok(()),
    }
}

/// An inner instance of a sub-process with a job worker implementation completes: once the
/// job's result said the sub-process is done, it completes when its last flow has; else a new
/// job asks the worker what to do next (an open one is canceled: the worker decides again with
/// this flow's output).
fn job_flow_completed(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    ah_idx: ElementIdx,
    def: &TaskDefinition,
) -> ProcResult {
    let ah_key = inst.parent_key;
    let fulfilled = ctx.txn.contains(Ks::AdHocFulfilled, &key_i64(ah_key));
    // evaluated before the flow completes, so that a failure leaves an incident on it
    let job = if fulfilled {
        None
    } else {
        match job_type_and_retries(ctx, def, ah_key) {
            Ok(job) => Some(job),
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        }
    };
    ctx.event(inst.key, Intent::ElementCompleted, pi_value(&inst.record));
    let Some(job) = job else {
        return complete_scope_if_done(ctx, ah_key);
    };
    let Some(ah) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(ah_key))
        .filter(|ah| ah.state == Intent::ElementActivated)
    else {
        return Ok(());
    };
    if ah.job_key > 0 {
        cancel_job(ctx, ah.job_key);
    }
    create_job(ctx, &ah, model, ah_idx, job);
    Ok(())
}

/// Writes JOB CREATED (kind AD_HOC_SUB_PROCESS, the sub-process's task headers).
fn create_job(
    ctx: &mut Ctx<'_, '_, '_>,
    ah: &ElementInstance,
    model: &Process,
    ah_idx: ElementIdx,
    (job_type, retries): (String, i32),
) {
    let headers = model.element(ah_idx).task_headers.iter().cloned().collect();
    create_job_of_kind(
        ctx,
        ah,
        job_type,
        retries,
        headers,
        JobKind::AdHocSubProcess,
        JobListenerEventType::Unspecified,
    );
}

/// JOB COMPLETE of a job of kind AD_HOC_SUB_PROCESS: writes JOB COMPLETED, the instructions
/// its result gives, and merges its variables from the sub-process's scope up (see the
/// module's doc). A result naming elements the sub-process cannot activate is rejected before
/// anything is written.
pub(crate) fn job_completed(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    job: &StoredJob,
    command: &JobRecord,
    doc: &serde_json::Map<String, Value>,
) -> ProcResult {
    let ah_key = job.record.element_instance_key;
    let result = Some(&command.result).filter(|r| r.result_type == JobResultType::AdHocSubProcess);
    let scope = load(ctx, ah_key)
        .filter(|(ah, model, idx)| ah.is_active() && model.element(*idx).ad_hoc.is_some());
    let ad_hoc = scope
        .as_ref()
        .and_then(|(_, model, idx)| Some((model, model.element(*idx).ad_hoc.as_ref()?)));
    if let (Some(result), Some((model, ad_hoc))) = (result, ad_hoc) {
        let ids = result
            .activate_elements
            .iter()
            .map(|e| e.element_id.as_str());
        check_elements_exist(ah_key, ad_hoc, model, ids).map_err(Rejection::not_found)?;
    }
    let mut record = job.record.clone();
    record.variables = command.variables.clone();
    record.result = result.cloned().unwrap_or_default();
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::Completed,
        RecordValue::Job(Box::new(record)),
    );
    let Some((ah, _, _)) = scope else {
        return Ok(());
    };
    if let Some(result) = result {
        // what the worker decided goes on as instructions to the sub-process, as Zeebe writes it
        let instruction = AdHocSubProcessInstructionRecord {
            ad_hoc_sub_process_instance_key: ah_key,
            activate_elements: result.activate_elements.clone(),
            tenant_id: ah.record.tenant_id.clone(),
            completion_condition_fulfilled: result.completion_condition_fulfilled,
            cancel_remaining_instances: result.cancel_remaining_instances,
        };
        if !instruction.activate_elements.is_empty() {
            ctx.command(
                ah_key,
                Intent::Activate,
                RecordValue::AdHocSubProcessInstruction(instruction.clone()),
            );
        }
        if instruction.completion_condition_fulfilled {
            ctx.command(
                ah_key,
                Intent::Complete,
                RecordValue::AdHocSubProcessInstruction(instruction),
            );
        }
    }
    if !doc.is_empty() {
        variables::merge_propagate(ctx, ah_key, doc);
    }
    Ok(())
}

/// AD_HOC_SUB_PROCESS_INSTRUCTION COMPLETE (from its job's result): the sub-process's
/// completion condition is fulfilled. Its remaining flows are terminated
/// (`cancelRemainingInstances`) or waited for; without any it completes now.
pub fn complete_instruction(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    instruction: &AdHocSubProcessInstructionRecord,
) -> ProcResult {
    let key = instruction.ad_hoc_sub_process_instance_key;
    let Some((ah, _, _)) =
        load(ctx, key).filter(|(_, model, idx)| model.element(*idx).ad_hoc.is_some())
    else {
        return Err(Rejection::not_found(format!(
            "Expected to complete ad-hoc sub-process but no ad-hoc sub-process instance found with key '{key}'."
        )));
    };
    if ah.state != Intent::ElementActivated {
        return Err(Rejection::invalid_state(format!(
            "Expected to complete ad-hoc sub-process with key '{key}', but it is not active."
        )));
    }
    // without flows (or once they are terminated) the sub-process completes; else it waits
    let terminating = instruction.cancel_remaining_instances && terminate_flows(ctx, key);
    if !terminating {
        complete_scope_if_done(ctx, key)?;
    }
    ctx.event_and_respond(
        cmd,
        cmd.key,
        Intent::Completed,
        RecordValue::AdHocSubProcessInstruction(instruction.clone()),
    );
    Ok(())
}

/// Terminates every flow (inner instance) of the sub-process `ah_key`, one TERMINATE_ELEMENT
/// command each, all at once as Zeebe writes them; false when there was none.
fn terminate_flows(ctx: &mut Ctx<'_, '_, '_>, ah_key: i64) -> bool {
    let flows = next_children(ctx, ah_key, -1, usize::MAX);
    for flow in &flows {
        ctx.command(flow.key, Intent::TerminateElement, pi_value(&flow.record));
    }
    !flows.is_empty()
}

/// Appends the completing inner instance's output element to the sub-process's output
/// collection.
fn collect_output(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    ah_key: i64,
    ad_hoc: &AdHoc,
) -> Result<(), String> {
    let (Some(name), Some(expr)) = (&ad_hoc.output_collection, &ad_hoc.output_element) else {
        return Ok(());
    };
    let value = evaluate(ctx, expr, inst.key)?;
    let mut items = match variables::local(ctx, ah_key).remove(name) {
        Some(Value::Array(items)) => items,
        other => {
            return Err(format!(
                "The output collection has the wrong type. Expected ARRAY but was {}.",
                other.as_ref().map(type_name).unwrap_or("NIL")
            ))
        }
    };
    items.push(value);
    variables::set_local(ctx, ah_key, name, &Value::Array(items), None);
    Ok(())
}

/// The completion condition, evaluated in the sub-process's scope (`None`: there is none).
fn completion_condition_holds(
    ctx: &Ctx<'_, '_, '_>,
    ah_key: i64,
    ad_hoc: &AdHoc,
) -> Result<Option<bool>, String> {
    let Some(condition) = &ad_hoc.completion_condition else {
        return Ok(None);
    };
    let failed = |msg: String| format!("Failed to evaluate completion condition. {msg}");
    match evaluate(ctx, condition, ah_key).map_err(failed)? {
        Value::Bool(b) => Ok(Some(b)),
        other => Err(failed(wrong_type(
            ctx,
            ah_key,
            condition,
            "'BOOLEAN'",
            &other,
        ))),
    }
}

/// The sub-process completes (after ELEMENT_COMPLETING): its output collection goes to the
/// flow scope first, before its output mappings.
pub(crate) fn completing(ctx: &mut Ctx<'_, '_, '_>, inst: &ElementInstance, model: &Process) {
    let Some(name) = model
        .element_by_id(&inst.record.element_id)
        .and_then(|(_, el)| el.ad_hoc.as_ref())
        .and_then(|a| a.output_collection.as_ref())
    else {
        return;
    };
    if let Some(value) = variables::local(ctx, inst.key).remove(name) {
        let mut doc = serde_json::Map::new();
        doc.insert(name.clone(), value);
        variables::merge_propagate(ctx, inst.parent_key, &doc);
    }
}

/// Whether `kind` is an inner instance, which only the sub-process creates.
pub(crate) fn is_inner_instance(kind: &ElementKind) -> bool {
    matches!(kind, ElementKind::AdHocInnerInstance)
}

/// An ad-hoc sub-process.
pub(crate) struct AdHocSubProcess;

impl ElementProcessor for AdHocSubProcess {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let el = model.element(idx);
        match &el.ad_hoc {
            Some(a) => activate(ctx, inst, model, idx, a),
            None => Err(Rejection::invalid_state(format!(
                "ad-hoc sub-process '{}' has no ad-hoc definition",
                el.id
            ))),
        }
    }
}

/// An inner instance of an ad-hoc sub-process (activated by events, never by a command).
pub(crate) struct AdHocInnerInstance;

impl ElementProcessor for AdHocInnerInstance {
    fn on_activate(&self, _ctx: &mut Ctx<'_, '_, '_>, _e: &Active) -> ProcResult {
        Err(Rejection::invalid_state(
            "An ACTIVATE command is not supported for an inner instance of an ad-hoc sub-process. Instead, the inner instance should be activated by writing events.".to_string(),
        ))
    }
}
