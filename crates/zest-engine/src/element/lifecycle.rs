//! The lifecycle every element shares: the commands ACTIVATE_ELEMENT, COMPLETE_ELEMENT and
//! TERMINATE_ELEMENT, and the steps around an element's own behaviour (input and output
//! mappings, execution listeners, multi-instance inner instances, event variables). What each
//! element kind does itself is its [`ElementProcessor`](super::kind::ElementProcessor).

use serde_json::{Map, Value};
use zest_model::{BpmnEventType, ElementIdx, ElementKind, ListenerEventType, Process};
use zest_protocol::{
    ErrorType, Intent, ProcessInstanceBatchRecord, ProcessInstanceRecord,
    ProcessInstanceResultRecord, Record, RecordValue, RejectionType, TimerRecord,
};

use crate::behaviour::compensation;
use crate::behaviour::decisions;
use crate::behaviour::element_instance::child_record;
use crate::behaviour::element_instance::load;
use crate::behaviour::element_instance::next_children;
use crate::behaviour::element_instance::pi_value;
use crate::behaviour::event_scopes::activate_boundary;
use crate::behaviour::event_scopes::activate_triggered;
use crate::behaviour::event_scopes::after_event_gateway;
use crate::behaviour::event_scopes::find_catch;
use crate::behaviour::event_scopes::find_error_catch;
use crate::behaviour::event_scopes::interrupting_event_sub_process;
use crate::behaviour::event_scopes::is_start_event;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::event_scopes::subscribe_catch_events;
use crate::behaviour::event_scopes::subscribe_event_sub_processes;
use crate::behaviour::event_scopes::take_event_sub_process_trigger;
use crate::behaviour::event_scopes::trigger_boundary;
use crate::behaviour::event_scopes::unhandled_error_message;
use crate::behaviour::event_scopes::unsubscribe_events;
use crate::behaviour::events;
use crate::behaviour::expressions::evaluate;
use crate::behaviour::expressions::evaluate_mappings;
use crate::behaviour::expressions::evaluate_string;
use crate::behaviour::expressions::evaluate_with;
use crate::behaviour::expressions::expect_string;
use crate::behaviour::expressions::job_type_and_retries;
use crate::behaviour::flows::leave;
use crate::behaviour::flows::take_flow;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::inputs::correlation_key;
use crate::behaviour::inputs::signal_name;
use crate::behaviour::inputs::timer_due_date;
use crate::behaviour::inputs::user_task_headers;
use crate::behaviour::jobs::create_job;
use crate::behaviour::listeners;
use crate::behaviour::message_subscriptions;
use crate::behaviour::signal_subscriptions;
use crate::behaviour::terminate::calling_activity;
use crate::behaviour::terminate::complete_scope_if_done;
use crate::behaviour::terminate::continue_batch;
use crate::behaviour::terminate::continue_terminating;
use crate::behaviour::terminate::release;
use crate::behaviour::terminate::terminate_siblings;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::ad_hoc;
use crate::element::call_activity::call_activity;
use crate::element::gateways::choose_exclusive_flow;
use crate::element::gateways::choose_inclusive_flows;
use crate::element::multi_instance;
use crate::keys::join_token_key;
use crate::state::{key_i64, read_i64, Ks};
use crate::types::{AwaitingResult, ElementInstance};

/// ACTIVATE_ELEMENT: the element instance starts its lifecycle.
pub fn activate_element(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let RecordValue::ProcessInstance(pi) = &cmd.value else {
        unreachable!("dispatch guarantees the value type")
    };
    if pi.flow_scope_key > 0 {
        let scope: Option<ElementInstance> = ctx
            .txn
            .get(Ks::ElementInstances, &key_i64(pi.flow_scope_key));
        if !scope.map(|s| s.is_active()).unwrap_or(false) {
            // its scope was interrupted earlier in the batch
            ctx.reject(
                cmd,
                RejectionType::InvalidState,
                format!(
                    "Expected to activate element '{}' in flow scope '{}', but the flow scope is not active",
                    pi.element_id, pi.flow_scope_key
                ),
            );
            return Ok(());
        }
    }
    if pi.flow_scope_key > 0 {
        if let Some(esp) = interrupting_event_sub_process(ctx, pi.flow_scope_key) {
            if esp != pi.element_id {
                // an interrupting event sub-process is taking over the scope
                ctx.reject(
                    cmd,
                    RejectionType::InvalidState,
                    format!(
                        "Expected to activate element '{}' in flow scope '{}', but the flow scope is interrupted by the event sub-process '{esp}'",
                        pi.element_id, pi.flow_scope_key
                    ),
                );
                return Ok(());
            }
        }
    }
    if pi.flow_scope_key > 0 && !join_ready(ctx, pi) {
        // a join activates once a token arrived on each incoming flow (inclusive: each flow a
        // token can still reach); Zeebe rejects the activations before that
        let reason = if pi.bpmn_element_type == zest_model::BpmnElementType::InclusiveGateway {
            format!("Expected to be able to activate inclusive gateway '{}', but not all satisfied sequence flows have been taken.", pi.element_id)
        } else {
            format!("Expected to be able to activate parallel gateway '{}', but not all sequence flows have been taken.", pi.element_id)
        };
        ctx.reject(cmd, RejectionType::InvalidState, reason);
        return Ok(());
    }
    ctx.event(cmd.key, Intent::ElementActivating, pi_value(pi));
    on_activate(ctx, cmd.key)
}

/// False for a parallel gateway joining several flows while a flow has no token yet, and for
/// an inclusive gateway while a flow without a token can still be reached from an element
/// instance of the scope.
fn join_ready(ctx: &mut Ctx<'_, '_, '_>, pi: &ProcessInstanceRecord) -> bool {
    let inclusive = pi.bpmn_element_type == zest_model::BpmnElementType::InclusiveGateway;
    if pi.bpmn_element_type != zest_model::BpmnElementType::ParallelGateway && !inclusive {
        return true;
    }
    let Some(model) = ctx.models.get(ctx.txn, pi.process_definition_key) else {
        return true;
    };
    let Some((_, target)) = model.element_by_id(&pi.element_id) else {
        return true;
    };
    if target.incoming.len() < 2 {
        return true;
    }
    let Some(scope) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(pi.flow_scope_key))
    else {
        return true;
    };
    let has_token = |f: usize| {
        scope
            .join_tokens
            .get(&join_token_key(&target.id, &model.flow(f).id))
            .copied()
            .unwrap_or(0)
            > 0
    };
    if !inclusive {
        return target.incoming.iter().all(|&f| has_token(f));
    }
    let waiting: Vec<usize> = target
        .incoming
        .iter()
        .copied()
        .filter(|&f| !has_token(f))
        .collect();
    if waiting.is_empty() {
        return true;
    }
    // the elements still active in the scope: can one of them reach a flow without token?
    let children =
        ctx.txn
            .scan_prefix(Ks::ElementChildren, &key_i64(pi.flow_scope_key), usize::MAX);
    let mut starts = Vec::new();
    for (k, _) in children {
        let child_key = read_i64(&k, 8);
        if let Some(child) = ctx
            .txn
            .get::<ElementInstance>(Ks::ElementInstances, &key_i64(child_key))
        {
            if child.record.element_id != target.id {
                if let Some((idx, _)) = model.element_by_id(&child.record.element_id) {
                    starts.push(idx);
                }
            }
        }
    }
    !can_reach_any(&model, &starts, &waiting)
}

/// Whether a path of sequence flows (also through boundary events and link events) leads from
/// one of the elements `from` to one of the flows `flows`.
fn can_reach_any(model: &Process, from: &[ElementIdx], flows: &[usize]) -> bool {
    let mut seen = vec![false; model.elements.len()];
    let mut stack: Vec<ElementIdx> = from.to_vec();
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e], true) {
            continue;
        }
        let el = model.element(e);
        for &f in &el.outgoing {
            if flows.contains(&f) {
                return true;
            }
            stack.push(model.flow(f).target);
        }
        stack.extend(el.boundary_events.iter().copied());
        stack.extend(el.link_target);
    }
    false
}

/// The part of activation after ELEMENT_ACTIVATING; re-run when an incident on it is resolved.
pub fn on_activate(ctx: &mut Ctx<'_, '_, '_>, key: i64) -> ProcResult {
    let Some((inst, model, idx)) = load(ctx, key) else {
        return Err(Rejection::not_found(format!(
            "Expected element instance with key '{key}' to exist, but it does not"
        )));
    };
    let el = model.element(idx);
    if let Some(mi) = &el.multi_instance {
        if el.is_body_instance(inst.record.bpmn_element_type) {
            return multi_instance::activate_body(ctx, &inst, &model, idx, mi);
        }
    }
    // back after a start listener: the mappings were applied before it
    let resumed = !el.execution_listeners.is_empty()
        && listeners::done(ctx, key, ListenerEventType::Start) > 0;
    if !resumed {
        if let Some(mi) = &el.multi_instance {
            // an inner instance: its item and loop counter first
            if let Err(msg) = multi_instance::set_loop_variables(ctx, &inst, mi) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
        }
        if let Some(ad_hoc) = &el.ad_hoc {
            ad_hoc::set_variables(ctx, key, ad_hoc);
        }
        // input mappings: evaluated in the element's scope (which sees an inner multi-instance
        // instance's item), stored as local variables
        if !el.inputs.is_empty() {
            match evaluate_mappings(&el.inputs, &variables::visible(ctx, key)) {
                Ok(doc) => variables::set_local_document(ctx, key, &doc, None),
                Err(msg) => return raise_incident(ctx, &inst, ErrorType::IoMappingError, msg, -1),
            }
        }
    }
    if listeners::run_next(ctx, &inst, &model, idx, ListenerEventType::Start)? {
        return Ok(()); // waits for a start listener
    }
    match el.kind {
        ElementKind::Process | ElementKind::SubProcess => {
            if let Err(msg) = subscribe_boundaries(ctx, &inst, &model, idx) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            // a process started by an event (a message start event): activate that start event
            let trigger = if matches!(el.kind, ElementKind::Process) {
                events::take_trigger(ctx, key, &inst.record, inst.record.process_definition_key)
            } else {
                None
            };
            if let Some(trigger) = trigger {
                let Some((start, _)) = model.element_by_id(&trigger.element_id) else {
                    return Err(Rejection::invalid_state(format!(
                        "Expected to start process '{}' at element '{}', but it has no such element",
                        inst.record.bpmn_process_id, trigger.element_id
                    )));
                };
                let rec = child_record(&inst.record, key, &model, start);
                return activate_triggered(ctx, &rec, &trigger.variables);
            }
            for &start in &el.start_events {
                let rec = child_record(&inst.record, key, &model, start);
                let child_key = ctx.next_key();
                ctx.command(child_key, Intent::ActivateElement, pi_value(&rec));
            }
            Ok(())
        }
        ElementKind::NoneStartEvent
        | ElementKind::MessageStartEvent
        | ElementKind::SignalStartEvent
        | ElementKind::TimerStartEvent
        | ElementKind::EventSubProcessStart
        | ElementKind::NoneEndEvent
        | ElementKind::TerminateEndEvent
        | ElementKind::LinkThrowEvent
        | ElementKind::LinkCatchEvent
        | ElementKind::PassThroughTask
        | ElementKind::NoneIntermediateThrowEvent => {
            if let Err(msg) = subscribe_boundaries(ctx, &inst, &model, idx) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
            // Zeebe completes these with a COMPLETE_ELEMENT command of their own
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
            Ok(())
        }
        ElementKind::ParallelGateway => {
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            ctx.event(key, Intent::ElementCompleting, pi_value(&inst.record));
            on_complete(ctx, key)
        }
        ElementKind::CompensationThrowEvent => {
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            // it completes once the handlers it started did (compensation::handler_completed)
            if !compensation::throw(ctx, &inst, &model, idx)? {
                ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
            }
            Ok(())
        }
        ElementKind::AdHocSubProcess => match &el.ad_hoc {
            Some(a) => ad_hoc::activate(ctx, &inst, &model, idx, a),
            None => Err(Rejection::invalid_state(format!(
                "ad-hoc sub-process '{}' has no ad-hoc definition",
                el.id
            ))),
        },
        ElementKind::AdHocInnerInstance => Err(Rejection::invalid_state(
            "An ACTIVATE command is not supported for an inner instance of an ad-hoc sub-process. Instead, the inner instance should be activated by writing events.".to_string(),
        )),
        ElementKind::CompensationBoundary => Err(Rejection::invalid_state(format!(
            "Expected to activate element '{}', but a compensation boundary event is only activated by a compensation throw event",
            el.id
        ))),
        ElementKind::EventBasedGateway => {
            let targets: Vec<ElementIdx> = el
                .outgoing
                .iter()
                .map(|&f| model.flow(f).target)
                .collect();
            if let Err(msg) = subscribe_catch_events(ctx, &inst, &model, &targets) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            Ok(())
        }
        ElementKind::ExclusiveGateway | ElementKind::InclusiveGateway => {
            // choose the flows before changing anything, so a failure leaves it ACTIVATING
            let chosen = if matches!(el.kind, ElementKind::ExclusiveGateway) {
                choose_exclusive_flow(ctx, &model, idx, key).map(|f| f.into_iter().collect())
            } else {
                choose_inclusive_flows(ctx, &model, idx, key)
            };
            let flows: Vec<usize> = match chosen {
                Ok(f) => f,
                Err((error_type, msg)) => return raise_incident(ctx, &inst, error_type, msg, -1),
            };
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            ctx.event(key, Intent::ElementCompleting, pi_value(&inst.record));
            ctx.event(key, Intent::ElementCompleted, pi_value(&inst.record));
            if flows.is_empty() {
                return complete_scope_if_done(ctx, inst.parent_key);
            }
            // last to first, as Zeebe takes them
            for f in flows.into_iter().rev() {
                take_flow(ctx, &inst, &model, f)?;
            }
            Ok(())
        }
        ElementKind::JobWorkerTask => {
            let Some(def) = &el.task_definition else {
                return Err(Rejection::invalid_state(format!(
                    "task '{}' has no task definition",
                    el.id
                )));
            };
            let (job_type, retries) = match job_type_and_retries(ctx, def, key) {
                Ok(v) => v,
                Err(msg) => {
                    return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                }
            };
            let mut custom_headers: std::collections::BTreeMap<String, String> =
                el.task_headers.iter().cloned().collect();
            if let Some(props) = &el.user_task {
                match user_task_headers(ctx, props, key) {
                    Ok(h) => custom_headers.extend(h),
                    Err(msg) => {
                        return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                    }
                }
                if let Some(form_id) = &props.form_id {
                    // a linked form: its key, as the custom form key would be
                    match crate::behaviour::inputs::latest_form(ctx, form_id) {
                        Ok(form_key) => {
                            custom_headers.insert(
                                "io.camunda.zeebe:formKey".to_string(),
                                form_key.to_string(),
                            );
                        }
                        Err(msg) => {
                            return raise_incident(ctx, &inst, ErrorType::FormNotFound, msg, -1)
                        }
                    }
                }
            }
            if let Err(msg) = subscribe_boundaries(ctx, &inst, &model, idx) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
            create_job(ctx, &inst, job_type, retries, custom_headers, None);
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            Ok(())
        }
        ElementKind::ScriptTask => {
            let Some(script) = &el.script else {
                return Err(Rejection::invalid_state(format!(
                    "script task '{}' has no script",
                    el.id
                )));
            };
            let result = match evaluate(ctx, &script.expression, key) {
                Ok(v) => v,
                Err(msg) => {
                    return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                }
            };
            if let Err(msg) = subscribe_boundaries(ctx, &inst, &model, idx) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
            // the result travels as an event trigger, like a job's completion variables, and
            // is written while the task completes
            let mut doc = Map::new();
            doc.insert(script.result_variable.clone(), result);
            let vars = Value::Object(doc).to_string();
            events::triggering(ctx, key, &inst.record, &el.id, vars);
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
            Ok(())
        }
        ElementKind::BusinessRuleTask => {
            let Some(called) = &el.called_decision else {
                return Err(Rejection::invalid_state(format!(
                    "business rule task '{}' has no called decision",
                    el.id
                )));
            };
            let vars = variables::visible(ctx, key);
            let decision_id = match evaluate_with(&called.decision_id, &vars)
                .and_then(|v| expect_string(ctx, key, &called.decision_id, v))
            {
                Ok(id) => id,
                Err(msg) => {
                    return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                }
            };
            let Some(decision) = decisions::latest(ctx, &decision_id) else {
                let msg = format!(
                    "Expected to evaluate decision '{decision_id}', but no decision found for id '{decision_id}'"
                );
                return raise_incident(ctx, &inst, ErrorType::CalledDecisionError, msg, -1);
            };
            let Some(outcome) = decisions::evaluate(ctx, &decision, &vars) else {
                let msg = format!(
                    "Expected to evaluate decision '{decision_id}', but its decision requirements graph could not be loaded"
                );
                return raise_incident(ctx, &inst, ErrorType::CalledDecisionError, msg, -1);
            };
            let mut record = outcome.record;
            record.bpmn_process_id = inst.record.bpmn_process_id.clone();
            record.process_definition_key = inst.record.process_definition_key;
            record.process_instance_key = inst.record.process_instance_key;
            record.element_id = el.id.clone();
            record.element_instance_key = key;
            let evaluation_key = ctx.next_key();
            let result = match outcome.result {
                Ok(value) => {
                    ctx.event(
                        evaluation_key,
                        Intent::Evaluated,
                        RecordValue::DecisionEvaluation(record),
                    );
                    value
                }
                Err(msg) => {
                    ctx.event(
                        evaluation_key,
                        Intent::Failed,
                        RecordValue::DecisionEvaluation(record),
                    );
                    return raise_incident(
                        ctx,
                        &inst,
                        ErrorType::DecisionEvaluationError,
                        msg,
                        -1,
                    );
                }
            };
            if let Err(msg) = subscribe_boundaries(ctx, &inst, &model, idx) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
            // like a script task's result
            let mut doc = Map::new();
            doc.insert(called.result_variable.clone(), result);
            let vars = Value::Object(doc).to_string();
            events::triggering(ctx, key, &inst.record, &el.id, vars);
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
            Ok(())
        }
        ElementKind::MessageCatch => {
            let Some(message) = &el.message else {
                return Err(Rejection::invalid_state(format!(
                    "element '{}' has no message",
                    el.id
                )));
            };
            let name = match evaluate_string(ctx, &message.name, key)
            {
                Ok(n) => n,
                Err(msg) => {
                    return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                }
            };
            let correlation_key = match &message.correlation_key {
                Some(expr) => match correlation_key(ctx, expr, key) {
                    Ok(k) => k,
                    Err(msg) => {
                        return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                    }
                },
                None => String::new(),
            };
            if let Err(msg) = subscribe_boundaries(ctx, &inst, &model, idx) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
            let own = inst.record.element_id.clone();
            message_subscriptions::subscribe(ctx, &inst, &own, name, correlation_key, true);
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            Ok(())
        }
        ElementKind::SignalCatch => {
            let name = match signal_name(ctx, el, key) {
                Ok(n) => n,
                Err(msg) => {
                    return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                }
            };
            if let Err(msg) = subscribe_boundaries(ctx, &inst, &model, idx) {
                return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
            }
            signal_subscriptions::subscribe(ctx, &inst, &el.id, name);
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            Ok(())
        }
        ElementKind::SignalThrowEvent => {
            let name = match signal_name(ctx, el, key) {
                Ok(n) => n,
                Err(msg) => {
                    return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                }
            };
            // the signal carries the element's local variables (its input mappings' result)
            let vars = Value::Object(variables::local(ctx, key)).to_string();
            ctx.command(
                -1,
                Intent::Broadcast,
                RecordValue::Signal(zest_protocol::SignalRecord {
                    signal_name: name,
                    variables: vars,
                    tenant_id: inst.record.tenant_id.clone(),
                }),
            );
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
            Ok(())
        }
        ElementKind::CallActivity => call_activity(ctx, &inst, &model, idx),
        ElementKind::UserTask => crate::element::user_task::activate(ctx, &inst, &model, idx),
        ElementKind::BoundaryEvent => Err(Rejection::invalid_state(format!(
            "Expected to activate boundary event '{}' through its activity's events, but it was activated by a sequence flow",
            el.id
        ))),
        ElementKind::ErrorEndEvent => {
            let code = el.error_code.clone().unwrap_or_default();
            let Some((scope, scope_model, boundary)) = find_error_catch(ctx, inst.parent_key, &code)
            else {
                let msg = unhandled_error_message(&code, None);
                return raise_incident(ctx, &inst, ErrorType::UnhandledErrorEvent, msg, -1);
            };
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            trigger_boundary(ctx, &scope, &scope_model, boundary, String::new())
        }
        ElementKind::EscalationThrowEvent => {
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            let code = el.escalation_code.clone().unwrap_or_default();
            let mut record = zest_protocol::EscalationRecord {
                process_instance_key: inst.record.process_instance_key,
                escalation_code: code.clone(),
                throw_element_id: el.id.clone(),
                catch_element_id: String::new(),
            };
            let escalation_key = ctx.next_key();
            let catch = find_catch(ctx, inst.parent_key, BpmnEventType::Escalation, &code, |e| {
                e.escalation_code.as_deref()
            });
            // Zeebe's order: the boundary event is triggered, then ESCALATED (NOT_ESCALATED when
            // nothing catches it); the throw event goes on unless its scope is interrupted
            let interrupted = match catch {
                Some((scope, scope_model, boundary)) => {
                    let b = scope_model.element(boundary);
                    record.catch_element_id = b.id.clone();
                    let interrupting = b.interrupting;
                    trigger_boundary(ctx, &scope, &scope_model, boundary, String::new())?;
                    ctx.event(
                        escalation_key,
                        Intent::Escalated,
                        RecordValue::Escalation(record),
                    );
                    interrupting
                }
                None => {
                    ctx.event(
                        escalation_key,
                        Intent::NotEscalated,
                        RecordValue::Escalation(record),
                    );
                    false
                }
            };
            if !interrupted {
                ctx.command(key, Intent::CompleteElement, pi_value(&inst.record));
            }
            Ok(())
        }
        ElementKind::TimerIntermediateCatchEvent => {
            let due = match &el.timer {
                Some(t) => timer_due_date(ctx, t, key),
                None => Err("timer catch event without timer definition".to_string()),
            };
            let due = match due {
                Ok(d) => d,
                Err(msg) => {
                    return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1)
                }
            };
            let timer = TimerRecord {
                element_instance_key: key,
                process_instance_key: inst.record.process_instance_key,
                process_definition_key: inst.record.process_definition_key,
                due_date: due,
                target_element_id: el.id.clone(),
                repetitions: 1,
                tenant_id: inst.record.tenant_id.clone(),
            };
            let timer_key = ctx.next_key();
            ctx.event(timer_key, Intent::Created, RecordValue::Timer(timer));
            ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
            Ok(())
        }
    }
}

/// COMPLETE_ELEMENT: a waiting element (task, timer, process scope) completes.
pub fn complete_element(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let key = cmd.key;
    if let Some(scope_state) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(key))
        .filter(|i| i.parent_key > 0)
        .and_then(|i| {
            ctx.txn
                .get::<ElementInstance>(Ks::ElementInstances, &key_i64(i.parent_key))
        })
        .map(|scope| scope.state)
        .filter(|s| *s != Intent::ElementActivated)
    {
        // the flow scope is being terminated (an interrupting event in the same batch): the
        // element is terminated with it instead
        ctx.reject(
            cmd,
            RejectionType::InvalidState,
            format!(
                "Expected flow scope instance to be in state 'ELEMENT_ACTIVATED' but was '{}'.",
                scope_state.name()
            ),
        );
        return Ok(());
    }
    let Some(inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(key))
    else {
        return Err(Rejection::not_found(format!(
            "Expected to complete element instance with key '{key}', but no such element was found"
        )));
    };
    if inst.state != Intent::ElementActivated {
        return Err(Rejection::invalid_state(format!(
            "Expected element instance with key '{key}' to be in state ELEMENT_ACTIVATED, but it is in state {}",
            inst.state.name()
        )));
    }
    if let Some(i) = ctx.cycle_timers.iter().position(|(pi, id, _)| {
        *pi == inst.record.process_instance_key && *id == inst.record.element_id
    }) {
        // a timer cycle boundary event with repetitions left: its next timer
        let (_, _, timer) = ctx.cycle_timers.remove(i);
        let timer_key = ctx.next_key();
        ctx.event(timer_key, Intent::Created, RecordValue::Timer(timer));
    }
    ctx.event(key, Intent::ElementCompleting, pi_value(&inst.record));
    on_complete(ctx, key)
}

/// The part of completion after ELEMENT_COMPLETING; re-run when an incident on it is resolved.
pub fn on_complete(ctx: &mut Ctx<'_, '_, '_>, key: i64) -> ProcResult {
    let Some((inst, model, idx)) = load(ctx, key) else {
        return Err(Rejection::not_found(format!(
            "Expected element instance with key '{key}' to exist, but it does not"
        )));
    };
    let el = model.element(idx);
    let mi = el.multi_instance.as_ref();
    if let Some(mi) = mi.filter(|_| el.is_body_instance(inst.record.bpmn_element_type)) {
        return multi_instance::complete_body(ctx, &inst, &model, idx, mi);
    }
    if ad_hoc::is_inner_instance(&el.kind) {
        return ad_hoc::inner_instance_completing(ctx, &inst, &model, idx);
    }
    // back after an end listener: the element's variables and output mappings were applied
    // before it
    let resumed =
        !el.execution_listeners.is_empty() && listeners::done(ctx, key, ListenerEventType::End) > 0;
    if !resumed && el.ad_hoc.is_some() {
        ad_hoc::completing(ctx, &inst, &model);
    }
    if !resumed && !apply_completion_variables(ctx, &inst, &model, idx)? {
        return Ok(()); // an incident
    }
    if listeners::run_next(ctx, &inst, &model, idx, ListenerEventType::End)? {
        return Ok(()); // waits for an end listener
    }
    if is_start_event(&el.kind) {
        // the scope's event sub-processes start listening once its start event completes
        if let Err(msg) = subscribe_event_sub_processes(ctx, &inst, &model, idx) {
            return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1);
        }
    }
    if matches!(el.kind, ElementKind::Process) {
        if !el.event_sub_process_starts.is_empty() {
            unsubscribe_events(ctx, key);
        }
        let awaiting: Option<AwaitingResult> = ctx.txn.get(Ks::AwaitingResults, &key_i64(key));
        let result_vars = awaiting
            .as_ref()
            .map(|a| variables::visible_selected(ctx, key, &a.fetch_variables));
        let lock = message_subscriptions::start_lock_of(ctx, key);
        compensation::delete_all(ctx, &inst, &model);
        ctx.event(key, Intent::ElementCompleted, pi_value(&inst.record));
        message_subscriptions::on_instance_ended(ctx, lock);
        if let Some(call) = calling_activity(ctx, &inst.record) {
            // a called process completed: so does the call activity that waits for it
            ctx.command(call.key, Intent::CompleteElement, pi_value(&call.record));
        }
        if let (Some(a), Some(vars)) = (awaiting, result_vars) {
            let result = ProcessInstanceResultRecord {
                bpmn_process_id: inst.record.bpmn_process_id.clone(),
                process_definition_key: inst.record.process_definition_key,
                version: inst.record.version,
                process_instance_key: key,
                variables: Value::Object(vars).to_string(),
                tenant_id: inst.record.tenant_id.clone(),
            };
            let record = ctx.response_only_record(
                key,
                Intent::Completed,
                RecordValue::ProcessInstanceResult(result),
            );
            ctx.respond_to(a.request_id, a.request_stream_id, record);
        }
        return Ok(());
    }
    if !el.boundary_events.is_empty()
        || !el.event_sub_process_starts.is_empty()
        || matches!(
            el.kind,
            ElementKind::EventBasedGateway | ElementKind::SignalCatch
        )
    {
        unsubscribe_events(ctx, key);
    }
    if let Some(mi) = mi {
        // an inner instance of a multi-instance body
        let condition_holds = match multi_instance::before_inner_completed(ctx, &inst, mi) {
            Ok(holds) => holds,
            Err(msg) => return raise_incident(ctx, &inst, ErrorType::ExtractValueError, msg, -1),
        };
        ctx.event(key, Intent::ElementCompleted, pi_value(&inst.record));
        return multi_instance::after_inner_completed(ctx, &inst, &model, idx, mi, condition_holds);
    }
    compensation::on_completing(ctx, &inst, &model, idx);
    ctx.event(key, Intent::ElementCompleted, pi_value(&inst.record));
    if el.is_for_compensation {
        compensation::handler_completed(ctx, &inst);
    }
    match el.kind {
        ElementKind::LinkThrowEvent => {
            // the catch event of the link, in the same scope, without a sequence flow
            let Some(target) = el.link_target else {
                return Ok(());
            };
            let rec = child_record(&inst.record, inst.parent_key, &model, target);
            let child_key = ctx.next_key();
            ctx.command(child_key, Intent::ActivateElement, pi_value(&rec));
            return Ok(());
        }
        ElementKind::EventBasedGateway => {
            // the catch event whose event came first
            let Some(trigger) = events::take_trigger(ctx, key, &inst.record, key) else {
                return Ok(());
            };
            let Some((target, _)) = model.element_by_id(&trigger.element_id) else {
                return Ok(());
            };
            return activate_boundary(ctx, &inst, &model, target, &trigger.variables);
        }
        _ => {}
    }
    if matches!(el.kind, ElementKind::TerminateEndEvent) {
        return terminate_siblings(ctx, inst.parent_key);
    }
    if matches!(
        el.kind,
        ElementKind::ExclusiveGateway | ElementKind::InclusiveGateway
    ) && !el.outgoing.is_empty()
    {
        return Ok(()); // flows were taken during activation
    }
    leave(ctx, &inst, &model, idx)
}

/// The variables a completing element leaves with: its event's (a job's, a message's, a
/// called process's), then its output mappings'. False when an output mapping failed (an
/// incident was raised).
fn apply_completion_variables(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Process,
    idx: ElementIdx,
) -> ProcResult<bool> {
    let key = inst.key;
    let el = model.element(idx);
    if matches!(
        el.kind,
        ElementKind::MessageCatch
            | ElementKind::SignalCatch
            | ElementKind::JobWorkerTask
            | ElementKind::UserTask
            | ElementKind::ScriptTask
            | ElementKind::BusinessRuleTask
            | ElementKind::TimerIntermediateCatchEvent
            | ElementKind::CallActivity
    ) {
        // the event's variables (a message's, a job's, a script's result): propagated, unless
        // output mappings decide what leaves the element
        if let Some(trigger) = events::take_trigger(ctx, key, &inst.record, key) {
            let doc = variables::parse_document(&trigger.variables).unwrap_or_default();
            if !doc.is_empty() {
                if el.outputs.is_empty() {
                    // a called process's variables go to the call activity's flow scope
                    let from = if matches!(el.kind, ElementKind::CallActivity) {
                        inst.parent_key
                    } else {
                        key
                    };
                    variables::merge_propagate(ctx, from, &doc);
                } else {
                    variables::set_local_document(ctx, key, &doc, None);
                }
            }
        }
    }
    if matches!(el.kind, ElementKind::EventSubProcessStart) {
        // the event that started the event sub-process: its variables reach the scopes above
        if let Some(trigger) = take_event_sub_process_trigger(ctx, inst, &el.id) {
            let doc = variables::parse_document(&trigger.variables).unwrap_or_default();
            if !doc.is_empty() {
                if el.outputs.is_empty() {
                    variables::merge_propagate(ctx, key, &doc);
                } else {
                    variables::set_local_document(ctx, key, &doc, None);
                }
            }
        }
    }
    if (matches!(
        el.kind,
        ElementKind::BoundaryEvent
            | ElementKind::MessageStartEvent
            | ElementKind::SignalStartEvent
            | ElementKind::TimerStartEvent
    ) || after_event_gateway(model, idx))
        && el.outputs.is_empty()
    {
        // the event's variables (local to the boundary event) leave it
        let doc = variables::local(ctx, key);
        if !doc.is_empty() && inst.parent_key > 0 {
            variables::merge_propagate(ctx, inst.parent_key, &doc);
        }
    }
    if !el.outputs.is_empty() {
        let doc = match evaluate_mappings(&el.outputs, &variables::visible(ctx, key)) {
            Ok(doc) => doc,
            Err(msg) => {
                raise_incident(ctx, inst, ErrorType::IoMappingError, msg, -1)?;
                return Ok(false);
            }
        };
        if inst.parent_key > 0 {
            variables::merge_propagate(ctx, inst.parent_key, &doc);
        } else {
            variables::set_local_document(ctx, key, &doc, None);
        }
    }
    Ok(true)
}

/// PROCESS_INSTANCE_BATCH TERMINATE: terminates the next child and hands the rest on.
pub fn batch_terminate(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    batch: &ProcessInstanceBatchRecord,
) -> ProcResult {
    let children = next_children(ctx, batch.batch_element_instance_key, batch.index, 2);
    if let Some(first) = children.first() {
        ctx.command(first.key, Intent::TerminateElement, pi_value(&first.record));
    }
    let next = children.get(1).map(|second| second.key);
    continue_batch(
        ctx,
        cmd.key,
        batch,
        next,
        Intent::Terminate,
        Intent::Terminated,
    );
    Ok(())
}

/// TERMINATE_ELEMENT: an element instance leaves without completing (cancel, an interrupting
/// boundary event, a caught error). Its job, timers, subscriptions and incidents go first; a
/// scope then terminates its children with commands of their own and is terminated when the
/// last of them is (Zeebe's order).
pub fn terminate_element(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let Some(inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(cmd.key))
    else {
        ctx.reject(
            cmd,
            RejectionType::NotFound,
            format!(
                "Expected to terminate element instance with key '{}', but no such element was found",
                cmd.key
            ),
        );
        return Ok(());
    };
    if inst.state == Intent::ElementTerminating {
        ctx.reject(
            cmd,
            RejectionType::InvalidState,
            format!(
                "Expected to terminate element instance with key '{}', but it is already being terminated",
                cmd.key
            ),
        );
        return Ok(());
    }
    let key = inst.key;
    ctx.event(key, Intent::ElementTerminating, pi_value(&inst.record));
    if inst.parent_key <= 0 {
        if let Some(model) = ctx.models.get(ctx.txn, inst.record.process_definition_key) {
            compensation::delete_all(ctx, &inst, &model);
        }
    }
    if release(ctx, &inst)? {
        return Ok(()); // goes on once its user task's canceling listeners ran
    }
    continue_terminating(ctx, &inst)
}

/// CONTINUE_TERMINATING_ELEMENT: a terminating user task's canceling listeners ran; its
/// termination goes on.
pub fn continue_terminating_element(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let Some(inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(cmd.key))
        .filter(|i| i.state == Intent::ElementTerminating)
    else {
        ctx.reject(
            cmd,
            RejectionType::InvalidState,
            format!(
                "Expected to continue terminating element instance with key '{}', but it is not being terminated",
                cmd.key
            ),
        );
        return Ok(());
    };
    continue_terminating(ctx, &inst)
}
