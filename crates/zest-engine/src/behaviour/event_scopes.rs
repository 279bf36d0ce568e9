//! Events that reach elements: boundary events, catch events, error and escalation catches,
//! event sub-processes, incident resolution.

use std::sync::Arc;

use zest_model::time::TimeCycle;
use zest_model::{BpmnEventType, ElementIdx, ElementKind, Process, TimerDefinition};
use zest_protocol::{Intent, ProcessInstanceRecord, RecordValue, TimerRecord};

use crate::behaviour::element_instance::child_record;
use crate::behaviour::element_instance::next_children;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::events;
use crate::behaviour::expressions::evaluate_string;
use crate::behaviour::inputs::correlation_key;
use crate::behaviour::inputs::signal_name;
use crate::behaviour::inputs::timer_due_date;
use crate::behaviour::message_subscriptions;
use crate::behaviour::signal_subscriptions;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult};
use crate::state::{key_i64, read_i64, Ks};
use crate::types::ElementInstance;

/// Cancels the timers of an element instance (its own and its boundary events') and closes its
/// message subscriptions.
pub(crate) fn unsubscribe_events(ctx: &mut Ctx<'_, '_, '_>, key: i64) {
    unsubscribe_events_for(ctx, key, &|_| true);
}

/// [`unsubscribe_events`] for the catch events (by id) that `targets` selects.
pub(crate) fn unsubscribe_events_for(
    ctx: &mut Ctx<'_, '_, '_>,
    key: i64,
    targets: &dyn Fn(&str) -> bool,
) {
    let timers = ctx
        .txn
        .scan_prefix(Ks::ElementTimers, &key_i64(key), usize::MAX);
    for (k, _) in timers {
        let timer_key = read_i64(&k, 8);
        if let Some(timer) = ctx
            .txn
            .get::<TimerRecord>(Ks::Timers, &key_i64(timer_key))
            .filter(|t| targets(&t.target_element_id))
        {
            ctx.event(timer_key, Intent::Canceled, RecordValue::Timer(timer));
        }
    }
    message_subscriptions::unsubscribe(ctx, key, targets);
    signal_subscriptions::unsubscribe(ctx, key, targets);
}

/// An event reached a boundary event of the activity `activity`: an interrupting one
/// terminates the activity first (the boundary event is activated once it is terminated); a
/// non-interrupting one is activated at once, beside it.
pub(crate) fn trigger_boundary(
    ctx: &mut Ctx<'_, '_, '_>,
    activity: &ElementInstance,
    model: &Arc<Process>,
    boundary: ElementIdx,
    variables: String,
) -> ProcResult {
    let el = model.element(boundary);
    if matches!(el.kind, ElementKind::EventSubProcessStart) {
        return trigger_event_sub_process(ctx, activity, model, boundary, variables);
    }
    events::triggering(ctx, activity.key, &activity.record, &el.id, variables);
    if el.interrupting {
        ctx.command(
            activity.key,
            Intent::TerminateElement,
            pi_value(&activity.record),
        );
        return Ok(());
    }
    let trigger = events::take_trigger(ctx, activity.key, &activity.record, activity.key);
    let vars = trigger.map(|t| t.variables).unwrap_or_default();
    activate_boundary(ctx, activity, model, boundary, &vars)
}

/// Activates a triggered boundary event beside (or instead of) its activity: ACTIVATING and
/// ACTIVATED at once, the event's variables as its local variables, then COMPLETE_ELEMENT.
pub(crate) fn activate_boundary(
    ctx: &mut Ctx<'_, '_, '_>,
    activity: &ElementInstance,
    model: &Arc<Process>,
    boundary: ElementIdx,
    variables: &str,
) -> ProcResult {
    let scope_key = activity.parent_key;
    let rec = child_record(&activity.record, scope_key, model, boundary);
    activate_triggered(ctx, &rec, variables)
}

/// Activates an element that an event triggered (a boundary event, a start event, the catch
/// event after an event-based gateway) with record `rec`: ACTIVATING and ACTIVATED at once,
/// the event's variables as its local variables, then COMPLETE_ELEMENT. Without output
/// mappings those variables leave it when it completes.
pub(crate) fn activate_triggered(
    ctx: &mut Ctx<'_, '_, '_>,
    rec: &ProcessInstanceRecord,
    variables: &str,
) -> ProcResult {
    let rec = rec.clone();
    let key = ctx.next_key();
    ctx.event(key, Intent::ElementActivating, pi_value(&rec));
    ctx.event(key, Intent::ElementActivated, pi_value(&rec));
    let doc = variables::parse_document(variables).unwrap_or_default();
    if !doc.is_empty() {
        variables::set_local_document(ctx, key, &doc, None);
    }
    ctx.command(key, Intent::CompleteElement, pi_value(&rec));
    Ok(())
}

/// An event (a timer, a message) for the catch event `target_element_id` reached the element
/// instance `inst` that holds its subscription: the waiting element itself completes, an
/// event-based gateway completes and activates that catch event, an activity hands it to its
/// boundary event.
pub(crate) fn trigger_event(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    target_element_id: &str,
    variables: String,
) -> ProcResult {
    if target_element_id == inst.record.element_id {
        events::complete_by_event(ctx, inst, target_element_id, variables);
        return Ok(());
    }
    if inst.record.bpmn_element_type == zest_model::BpmnElementType::EventBasedGateway {
        events::complete_by_event(ctx, inst, target_element_id, variables);
        return Ok(());
    }
    let Some((boundary, _)) = model.element_by_id(target_element_id) else {
        return Ok(());
    };
    trigger_boundary(ctx, inst, model, boundary, variables)
}

/// Opens the subscriptions of an activity's boundary events (timers and messages), last to
/// first as Zeebe does.
pub(crate) fn subscribe_boundaries(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    idx: ElementIdx,
) -> Result<(), String> {
    subscribe_catch_events(ctx, inst, model, &boundary_targets(inst, model, idx))
}

/// The boundary events whose subscriptions element instance `inst` of element `idx` holds, in
/// Zeebe's order: none for a multi-instance activity's inner instance (its body holds them).
pub(crate) fn boundary_targets(
    inst: &ElementInstance,
    model: &Process,
    idx: ElementIdx,
) -> Vec<ElementIdx> {
    let el = model.element(idx);
    if el.is_inner_instance(inst.record.bpmn_element_type) {
        return Vec::new();
    }
    el.boundary_events.iter().rev().copied().collect()
}

/// Opens the subscriptions (timers, messages) of catch events `targets` under the element
/// instance `inst` (an activity for its boundary events, an event-based gateway for the events
/// it waits for). Everything is evaluated before anything is written, so a failure (an
/// incident on `inst`) leaves nothing behind for the retry.
pub(crate) fn subscribe_catch_events(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    targets: &[ElementIdx],
) -> Result<(), String> {
    enum Sub {
        Timer(String, i64, i32),
        Message(String, String, String, bool),
        Signal(String, String),
    }
    let mut subs = Vec::new();
    for &b in targets {
        let be = model.element(b);
        if let Some(t) = &be.timer {
            let repetitions = match t {
                // a cycle repeats on non-interrupting boundary events (the parser rejects it on
                // interrupting ones, as Zeebe does)
                TimerDefinition::Cycle(e) => {
                    let v = evaluate_string(ctx, e, inst.key)?;
                    match zest_model::time::parse_time_cycle(&v)
                        .map_err(|err| format!("Invalid time cycle '{v}': {err}"))?
                    {
                        TimeCycle::Repeating(c) => c
                            .repetitions
                            .map(|r| r.clamp(1, i32::MAX as u32) as i32)
                            .unwrap_or(-1),
                        TimeCycle::Cron(_) => -1,
                    }
                }
                _ => 1,
            };
            subs.push(Sub::Timer(
                be.id.clone(),
                timer_due_date(ctx, t, inst.key)?,
                repetitions,
            ));
        } else if let Some(m) = &be.message {
            let name = evaluate_string(ctx, &m.name, inst.key)?;
            let ck = match &m.correlation_key {
                Some(expr) => correlation_key(ctx, expr, inst.key)?,
                None => String::new(),
            };
            subs.push(Sub::Message(be.id.clone(), name, ck, be.interrupting));
        } else if be.signal.is_some() {
            subs.push(Sub::Signal(be.id.clone(), signal_name(ctx, be, inst.key)?));
        }
    }
    // Zeebe subscribes messages first, then timers, then signals
    subs.sort_by_key(|sub| match sub {
        Sub::Message(..) => 0,
        Sub::Timer(..) => 1,
        Sub::Signal(..) => 2,
    });
    for sub in subs {
        match sub {
            Sub::Timer(target, due, repetitions) => {
                let timer = TimerRecord {
                    element_instance_key: inst.key,
                    process_instance_key: inst.record.process_instance_key,
                    process_definition_key: inst.record.process_definition_key,
                    due_date: due,
                    target_element_id: target,
                    repetitions,
                    tenant_id: inst.record.tenant_id.clone(),
                };
                let timer_key = ctx.next_key();
                ctx.event(timer_key, Intent::Created, RecordValue::Timer(timer));
            }
            Sub::Message(target, name, ck, interrupting) => {
                message_subscriptions::subscribe(ctx, inst, &target, name, ck, interrupting);
            }
            Sub::Signal(target, name) => signal_subscriptions::subscribe(ctx, inst, &target, name),
        }
    }
    Ok(())
}

/// The boundary event that catches an error thrown at element instance `from` (a task whose
/// job threw it, or the flow scope of an error end event): the nearest enclosing activity with
/// an error boundary event for the code, a specific one before a catch-all one.
pub(crate) fn find_error_catch(
    ctx: &mut Ctx<'_, '_, '_>,
    from: i64,
    code: &str,
) -> Option<(ElementInstance, Arc<Process>, ElementIdx)> {
    find_catch(ctx, from, BpmnEventType::Error, code, |e| {
        e.error_code.as_deref()
    })
}

/// The nearest boundary event of `event_type` (error or escalation) that catches `code`, on
/// the element instance `from` or one enclosing it (across call activities): one with that
/// code, else one without a code (it catches all).
pub(crate) fn find_catch(
    ctx: &mut Ctx<'_, '_, '_>,
    from: i64,
    event_type: BpmnEventType,
    code: &str,
    code_of: fn(&zest_model::Element) -> Option<&str>,
) -> Option<(ElementInstance, Arc<Process>, ElementIdx)> {
    let mut key = from;
    while key > 0 {
        let inst: ElementInstance = ctx.txn.get(Ks::ElementInstances, &key_i64(key))?;
        let model = ctx
            .models
            .get(ctx.txn, inst.record.process_definition_key)?;
        if let Some((_, el)) = model
            .element_by_id(&inst.record.element_id)
            .filter(|(_, el)| !el.is_inner_instance(inst.record.bpmn_element_type))
        {
            // the scope's event sub-processes (inner) before the element's boundary events
            let scope_catches = if inst.state == Intent::ElementActivated
                && interrupting_event_sub_process(ctx, inst.key).is_none()
            {
                el.event_sub_process_starts.as_slice()
            } else {
                &[]
            };
            let catches = scope_catches
                .iter()
                .chain(el.boundary_events.iter())
                .copied()
                .filter(|&b| model.element(b).event_type == event_type);
            let exact = catches
                .clone()
                .find(|&b| code_of(model.element(b)) == Some(code));
            let any = catches
                .clone()
                .find(|&b| code_of(model.element(b)).is_none());
            if let Some(b) = exact.or(any) {
                return Some((inst, model, b));
            }
        }
        // up the scopes, and from a called process to its call activity
        key = if inst.parent_key > 0 {
            inst.parent_key
        } else {
            inst.record.parent_element_instance_key
        };
    }
    None
}

/// Zeebe's incident message for an error nothing catches.
pub(crate) fn unhandled_error_message(code: &str, message: Option<&str>) -> String {
    match message {
        Some(m) => format!("Expected to throw an error event with the code '{code}' with message '{m}', but it was not caught. No error events are available in the scope."),
        None => format!("Expected to throw an error event with the code '{code}', but it was not caught. No error events are available in the scope."),
    }
}

pub(crate) fn resolve_incident_of(ctx: &mut Ctx<'_, '_, '_>, index_key: i64) {
    if let Some(incident_key) = ctx.txn.get::<i64>(Ks::IncidentIndex, &key_i64(index_key)) {
        if let Some(inc) = ctx
            .txn
            .get::<crate::types::StoredIncident>(Ks::Incidents, &key_i64(incident_key))
        {
            ctx.event(
                incident_key,
                Intent::Resolved,
                RecordValue::Incident(inc.record),
            );
        }
    }
}

/// Whether an element kind is a start event (whose completion opens its scope's event
/// sub-process subscriptions).
pub(crate) fn is_start_event(kind: &ElementKind) -> bool {
    matches!(
        kind,
        ElementKind::NoneStartEvent
            | ElementKind::MessageStartEvent
            | ElementKind::SignalStartEvent
            | ElementKind::TimerStartEvent
            | ElementKind::EventSubProcessStart
    )
}

/// Opens the subscriptions (timers, messages, signals) of the event sub-processes of the scope
/// that the start event `start` (instance `inst`) belongs to, in document order as Zeebe does.
pub(crate) fn subscribe_event_sub_processes(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    start: ElementIdx,
) -> Result<(), String> {
    let Some(scope_idx) = model.element(start).flow_scope else {
        return Ok(());
    };
    let starts = &model.element(scope_idx).event_sub_process_starts;
    if starts.is_empty() || inst.parent_key <= 0 {
        return Ok(());
    }
    let Some(scope) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(inst.parent_key))
    else {
        return Ok(());
    };
    subscribe_catch_events(ctx, &scope, model, starts)
}

/// The id of the interrupting event sub-process that is taking over the scope `scope_key`
/// (its trigger waits on the scope until the scope's other children are terminated).
pub(crate) fn interrupting_event_sub_process(
    ctx: &mut Ctx<'_, '_, '_>,
    scope_key: i64,
) -> Option<String> {
    let trigger: crate::types::StoredTrigger =
        ctx.txn.get(Ks::EventTriggers, &key_i64(scope_key))?;
    let scope: ElementInstance = ctx.txn.get(Ks::ElementInstances, &key_i64(scope_key))?;
    let model = ctx
        .models
        .get(ctx.txn, scope.record.process_definition_key)?;
    let (_, start) = model.element_by_id(&trigger.element_id)?;
    if !matches!(start.kind, ElementKind::EventSubProcessStart) || !start.interrupting {
        return None;
    }
    // the trigger of an event sub-process of this scope (not the one it belongs to itself)
    let esp = model.element(start.flow_scope?);
    let (scope_idx, _) = model.element_by_id(&scope.record.element_id)?;
    (esp.flow_scope == Some(scope_idx)).then(|| esp.id.clone())
}

/// An event reached the start event `start` of an event sub-process of the scope instance
/// `scope`. A non-interrupting one activates the event sub-process beside what runs in the
/// scope (the trigger waits under the new instance's key). An interrupting one closes the
/// scope's other event sub-process subscriptions and terminates every child of the scope; the
/// event sub-process is activated once the last of them is gone (the trigger waits under the
/// scope, which marks it as interrupted meanwhile).
pub(crate) fn trigger_event_sub_process(
    ctx: &mut Ctx<'_, '_, '_>,
    scope: &ElementInstance,
    model: &Arc<Process>,
    start: ElementIdx,
    variables: String,
) -> ProcResult {
    let el = model.element(start);
    let Some(esp) = el.flow_scope else {
        return Ok(());
    };
    // the next timer of a cycle: set at once (only while non-interrupting)
    let next_timer = ctx
        .cycle_timers
        .iter()
        .position(|(pi, id, _)| *pi == scope.record.process_instance_key && *id == el.id)
        .map(|i| ctx.cycle_timers.remove(i).2);
    if !el.interrupting {
        let esp_key = ctx.next_key();
        events::triggering(ctx, esp_key, &scope.record, &el.id, variables);
        let rec = child_record(&scope.record, scope.key, model, esp);
        ctx.command(esp_key, Intent::ActivateElement, pi_value(&rec));
        if let Some(timer) = next_timer {
            let timer_key = ctx.next_key();
            ctx.event(timer_key, Intent::Created, RecordValue::Timer(timer));
        }
        return Ok(());
    }
    events::triggering(ctx, scope.key, &scope.record, &el.id, variables);
    let scope_el = model
        .element_by_id(&scope.record.element_id)
        .map(|(i, _)| i);
    if let Some(scope_idx) = scope_el {
        let targets: Vec<String> = model
            .element(scope_idx)
            .event_sub_process_starts
            .iter()
            .map(|&i| model.element(i).id.clone())
            .collect();
        unsubscribe_events_for(ctx, scope.key, &|id| targets.iter().any(|t| t == id));
    }
    let children = next_children(ctx, scope.key, -1, usize::MAX);
    if children.is_empty() {
        return activate_event_sub_process(ctx, scope, model, &model.element(esp).id);
    }
    for child in children {
        ctx.command(child.key, Intent::TerminateElement, pi_value(&child.record));
    }
    Ok(())
}

/// Activates the event sub-process `esp_id` in the scope instance `scope`.
pub(crate) fn activate_event_sub_process(
    ctx: &mut Ctx<'_, '_, '_>,
    scope: &ElementInstance,
    model: &Arc<Process>,
    esp_id: &str,
) -> ProcResult {
    let Some((esp, _)) = model.element_by_id(esp_id) else {
        return Ok(());
    };
    let rec = child_record(&scope.record, scope.key, model, esp);
    let key = ctx.next_key();
    ctx.command(key, Intent::ActivateElement, pi_value(&rec));
    Ok(())
}

/// Consumes the trigger of an event sub-process start event (instance `inst`): kept under the
/// event sub-process instance (non-interrupting) or under its flow scope (interrupting).
pub(crate) fn take_event_sub_process_trigger(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    start_id: &str,
) -> Option<crate::types::StoredTrigger> {
    let esp: ElementInstance = ctx
        .txn
        .get(Ks::ElementInstances, &key_i64(inst.parent_key))?;
    for key in [esp.key, esp.parent_key] {
        let pending = ctx
            .txn
            .get::<crate::types::StoredTrigger>(Ks::EventTriggers, &key_i64(key))
            .is_some_and(|t| t.element_id == start_id);
        if pending {
            return events::take_trigger(ctx, key, &inst.record, key);
        }
    }
    None
}

/// True for a catch event that an event-based gateway leads to (it is activated with the
/// gateway's event, and that event's variables leave it like a boundary event's).
pub(crate) fn after_event_gateway(model: &Process, idx: ElementIdx) -> bool {
    model.element(idx).incoming.iter().any(|&f| {
        matches!(
            model.element(model.flow(f).source).kind,
            ElementKind::EventBasedGateway
        )
    })
}
