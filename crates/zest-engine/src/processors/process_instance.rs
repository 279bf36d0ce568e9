//! Process instance commands: create, cancel, set variables, resolve incidents, trigger timers.

use zest_model::time::TimeCycle;
use zest_protocol::{
    BpmnElementType, BpmnEventType, Intent, ProcessInstanceCreationRecord, ProcessInstanceRecord,
    Record, RecordValue, VariableDocumentRecord, VariableDocumentUpdateSemantic,
};

use crate::behaviour::element_instance::load;
use crate::behaviour::event_scopes::trigger_event;
use crate::behaviour::expressions::evaluate;
use crate::behaviour::process_deletion;
use crate::behaviour::variables::{self, ScopeInfoSeed};
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::lifecycle::on_activate;
use crate::element::lifecycle::on_complete;
use crate::keys::version_key;
use crate::state::{key_i64, Ks};
use crate::types::{
    ElementInstance, FailedStep, LatestVersion, ProcessHead, StoredIncident, StoredJob,
};

pub fn create(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    c: &ProcessInstanceCreationRecord,
) -> ProcResult {
    let stored: ProcessHead = if c.process_definition_key > 0 {
        process_deletion::deployed(ctx.txn, c.process_definition_key).ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to find process definition with key '{}', but none found",
                c.process_definition_key
            ))
        })?
    } else {
        if c.bpmn_process_id.is_empty() {
            return Err(Rejection::invalid_argument(
                "Expected at least a bpmnProcessId or a key greater than -1, but none given",
            ));
        }
        let key = if c.version < 0 {
            ctx.txn
                .get::<LatestVersion>(Ks::ProcessLatest, c.bpmn_process_id.as_bytes())
                .map(|l| l.key)
        } else {
            ctx.txn.get::<i64>(
                Ks::ProcessVersions,
                &version_key(&c.bpmn_process_id, c.version),
            )
        };
        let not_found = || {
            if c.version < 0 {
                Rejection::not_found(format!(
                    "Expected to find process definition with process ID '{}', but none found",
                    c.bpmn_process_id
                ))
            } else {
                Rejection::not_found(format!(
                    "Expected to find process definition with process ID '{}' and version '{}', but none found",
                    c.bpmn_process_id, c.version
                ))
            }
        };
        let key = key.ok_or_else(not_found)?;
        process_deletion::deployed(ctx.txn, key).ok_or_else(not_found)?
    };
    let has_none_start = ctx
        .models
        .get(ctx.txn, stored.process_definition_key)
        .map(|m| !m.element(zest_model::Process::ROOT).start_events.is_empty())
        .unwrap_or(true);
    if !has_none_start {
        return Err(Rejection::invalid_state(
            "Expected to create instance of process with none start event, but there is no such event",
        ));
    }
    let doc = variables::parse_document(&c.variables).map_err(|e| {
        Rejection::invalid_argument(format!("Property 'variables' is invalid: {e}"))
    })?;
    let p = &stored;
    let pi_key = ctx.next_key();
    let seed = ScopeInfoSeed {
        process_instance_key: pi_key,
        process_definition_key: p.process_definition_key,
        bpmn_process_id: p.bpmn_process_id.clone(),
        tenant_id: p.tenant_id.clone(),
    };
    variables::set_local_document(ctx, pi_key, &doc, Some(&seed));
    let created = ProcessInstanceCreationRecord {
        bpmn_process_id: p.bpmn_process_id.clone(),
        version: p.version,
        process_definition_key: p.process_definition_key,
        variables: c.variables.clone(),
        process_instance_key: pi_key,
        fetch_variables: c.fetch_variables.clone(),
        tenant_id: crate::types::tenant(&p.tenant_id),
    };
    let process_record = ProcessInstanceRecord {
        bpmn_process_id: p.bpmn_process_id.clone(),
        version: p.version,
        process_definition_key: p.process_definition_key,
        process_instance_key: pi_key,
        element_id: p.bpmn_process_id.clone(),
        flow_scope_key: -1,
        bpmn_element_type: BpmnElementType::Process,
        bpmn_event_type: BpmnEventType::Unspecified,
        parent_process_instance_key: -1,
        parent_element_instance_key: -1,
        tenant_id: p.tenant_id.clone(),
    };
    // Zeebe's order: the activation command, then CREATED
    ctx.command(
        pi_key,
        Intent::ActivateElement,
        RecordValue::ProcessInstance(process_record),
    );
    let value = RecordValue::ProcessInstanceCreation(created);
    let event = if cmd.intent == Intent::CreateWithAwaitingResult {
        ctx.event_for_request(pi_key, Intent::Created, value)
    } else {
        ctx.event(pi_key, Intent::Created, value).clone()
    };
    if cmd.intent != Intent::CreateWithAwaitingResult {
        ctx.respond(cmd, event);
    }
    Ok(())
}

pub fn cancel(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let inst: Option<ElementInstance> = ctx.txn.get(Ks::ElementInstances, &key_i64(cmd.key));
    let inst = match inst {
        Some(i) if i.parent_key <= 0 && i.record.bpmn_element_type == BpmnElementType::Process => i,
        _ => {
            return Err(Rejection::not_found(format!(
            "Expected to cancel a process instance with key '{}', but no such process was found",
            cmd.key
        )))
        }
    };
    if inst.record.parent_process_instance_key > 0 {
        return Err(Rejection::invalid_state(format!(
            "Expected to cancel a process instance with key '{}', but it is created by a parent process instance. Cancel the root process instance '{}' instead.",
            cmd.key, inst.record.parent_process_instance_key
        )));
    }
    if inst.state == Intent::ElementTerminating {
        return Err(Rejection::invalid_state(format!(
            "Expected to cancel a process instance with key '{}', but it is already being terminated",
            cmd.key
        )));
    }
    let awaiting: Option<crate::types::AwaitingResult> =
        ctx.txn.get(Ks::AwaitingResults, &key_i64(cmd.key));
    ctx.command(
        cmd.key,
        Intent::TerminateElement,
        RecordValue::ProcessInstance(inst.record.clone()),
    );
    let record = ctx.response_only_record(
        cmd.key,
        Intent::ElementTerminated,
        RecordValue::ProcessInstance(inst.record.clone()),
    );
    ctx.respond(cmd, record.clone());
    if let Some(a) = awaiting {
        // a create-with-result waiting for this instance learns it was terminated
        let mut rejection = record;
        rejection.record_type = zest_protocol::RecordType::CommandRejection;
        rejection.rejection_type = zest_protocol::RejectionType::InvalidState;
        rejection.rejection_reason = format!(
            "Process instance '{}' was terminated before it completed",
            cmd.key
        );
        ctx.respond_to(a.request_id, a.request_stream_id, rejection);
    }
    Ok(())
}

pub fn set_variables(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    d: &VariableDocumentRecord,
) -> ProcResult {
    let inst: Option<ElementInstance> = ctx.txn.get(Ks::ElementInstances, &key_i64(d.scope_key));
    if !inst.map(|i| i.is_active()).unwrap_or(false) {
        return Err(Rejection::not_found(format!(
            "Expected to update variables for element with key '{}', but no such element was found",
            d.scope_key
        )));
    }
    let doc = variables::parse_document(&d.variables).map_err(|e| {
        Rejection::invalid_argument(format!("Property 'variables' is invalid: {e}"))
    })?;
    // as in Zeebe: the variables first, then the document's UPDATED event
    match d.update_semantics {
        VariableDocumentUpdateSemantic::Local => {
            variables::set_local_document(ctx, d.scope_key, &doc, None)
        }
        VariableDocumentUpdateSemantic::Propagate => {
            variables::merge_propagate(ctx, d.scope_key, &doc)
        }
    }
    let key = ctx.next_key();
    ctx.event_and_respond(
        cmd,
        key,
        Intent::Updated,
        RecordValue::VariableDocument(d.clone()),
    );
    Ok(())
}

pub fn resolve_incident(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let Some(incident) = ctx
        .txn
        .get::<StoredIncident>(Ks::Incidents, &key_i64(cmd.key))
    else {
        return Err(Rejection::not_found(format!(
            "Expected to resolve incident with key '{}', but no such incident was found",
            cmd.key
        )));
    };
    if let FailedStep::Job = incident.failed_step {
        if let Some(job) = ctx
            .txn
            .get::<StoredJob>(Ks::Jobs, &key_i64(incident.record.job_key))
        {
            if job.record.retries <= 0 {
                return Err(Rejection::invalid_state(format!(
                    "Expected to resolve incident with key '{}', but job with key '{}' has no retries left; update its retries first",
                    cmd.key, incident.record.job_key
                )));
            }
        }
    }
    let event = ctx
        .event(
            cmd.key,
            Intent::Resolved,
            RecordValue::Incident(incident.record.clone()),
        )
        .clone();
    let elem_key = incident.record.element_instance_key;
    match incident.failed_step {
        FailedStep::Job => {
            if let Some(job) = ctx
                .txn
                .get::<StoredJob>(Ks::Jobs, &key_i64(incident.record.job_key))
            {
                crate::behaviour::jobs::publish_work(ctx, incident.record.job_key, &job.record);
            }
        }
        FailedStep::ActivateElement => on_activate(ctx, elem_key)?,
        FailedStep::CompleteElement => on_complete(ctx, elem_key)?,
    }
    ctx.respond(cmd, event);
    Ok(())
}

pub fn trigger_timer(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let Some(timer) = ctx
        .txn
        .get::<zest_protocol::TimerRecord>(Ks::Timers, &key_i64(cmd.key))
    else {
        return Err(Rejection::not_found(format!(
            "Expected to trigger timer with key '{}', but no such timer was found",
            cmd.key
        )));
    };
    if timer.due_date > ctx.now {
        return Err(Rejection::invalid_state(format!(
            "Expected timer with key '{}' to be due, but it is not",
            cmd.key
        )));
    }
    if timer.element_instance_key <= 0 {
        return trigger_start_timer(ctx, cmd.key, &timer);
    }
    let Some((inst, model, _)) = load(ctx, timer.element_instance_key) else {
        return Err(Rejection::not_found(format!(
            "Expected to trigger timer with key '{}', but its element instance '{}' does not exist",
            cmd.key, timer.element_instance_key
        )));
    };
    if inst.state != Intent::ElementActivated {
        return Err(Rejection::invalid_state(format!(
            "Expected to trigger timer with key '{}', but its element instance '{}' is not active",
            cmd.key, timer.element_instance_key
        )));
    }
    ctx.event(
        cmd.key,
        Intent::Triggered,
        RecordValue::Timer(timer.clone()),
    );
    if timer.repetitions != 1 {
        if let Some(next) = next_cycle_timer(ctx, &model, &timer) {
            ctx.cycle_timers.push((
                timer.process_instance_key,
                timer.target_element_id.clone(),
                next,
            ));
        }
    }
    trigger_event(ctx, &inst, &model, &timer.target_element_id, String::new())
}

/// The next timer of a timer cycle boundary event (one interval after this one's due date, one
/// repetition less; -1 repeats forever), or `None` when its cycle no longer evaluates.
fn next_cycle_timer(
    ctx: &Ctx<'_, '_, '_>,
    model: &zest_model::Process,
    timer: &zest_protocol::TimerRecord,
) -> Option<zest_protocol::TimerRecord> {
    let (_, el) = model.element_by_id(&timer.target_element_id)?;
    let Some(zest_model::TimerDefinition::Cycle(expr)) = &el.timer else {
        return None;
    };
    let text = match evaluate(ctx, expr, timer.element_instance_key).ok()? {
        serde_json::Value::String(s) => s,
        _ => return None,
    };
    let due = match zest_model::time::parse_time_cycle(&text).ok()? {
        TimeCycle::Repeating(cycle) => cycle.interval.add_to(timer.due_date).ok()?,
        // as Zeebe: the next time the expression matches from now
        TimeCycle::Cron(cron) => cron.next_after(ctx.now).ok()?,
    };
    Some(zest_protocol::TimerRecord {
        due_date: due.max(ctx.now),
        repetitions: if timer.repetitions > 1 {
            timer.repetitions - 1
        } else {
            timer.repetitions
        },
        ..timer.clone()
    })
}

/// A timer start event's timer is due: a new instance starts at the start event, and a cycle
/// with repetitions left sets the next timer (one interval after this one's due date).
fn trigger_start_timer(
    ctx: &mut Ctx<'_, '_, '_>,
    timer_key: i64,
    timer: &zest_protocol::TimerRecord,
) -> ProcResult {
    let Some(process) = process_deletion::process_head(ctx.txn, timer.process_definition_key)
    else {
        return Err(Rejection::not_found(format!(
            "Expected to trigger timer with key '{timer_key}', but its process definition '{}' does not exist",
            timer.process_definition_key
        )));
    };
    ctx.event(
        timer_key,
        Intent::Triggered,
        RecordValue::Timer(timer.clone()),
    );
    crate::behaviour::events::start_process(ctx, &process, &timer.target_element_id, String::new());
    if timer.repetitions == 1 {
        return Ok(());
    }
    let Some(model) = ctx.models.get(ctx.txn, timer.process_definition_key) else {
        return Ok(());
    };
    let Some((_, el)) = model.element_by_id(&timer.target_element_id) else {
        return Ok(());
    };
    let Some(zest_model::TimerDefinition::Cycle(zest_model::Expression::Static(text))) = &el.timer
    else {
        return Ok(());
    };
    let due = match zest_model::time::parse_time_cycle(text) {
        Ok(TimeCycle::Repeating(cycle)) => cycle.interval.add_to(timer.due_date),
        Ok(TimeCycle::Cron(cron)) => cron.next_after(ctx.now),
        Err(e) => Err(e),
    };
    let Ok(due) = due else {
        return Ok(());
    };
    let next = zest_protocol::TimerRecord {
        due_date: due,
        repetitions: if timer.repetitions > 1 {
            timer.repetitions - 1
        } else {
            timer.repetitions
        },
        ..timer.clone()
    };
    let key = ctx.next_key();
    ctx.event(key, Intent::Created, RecordValue::Timer(next));
    Ok(())
}

/// Deployment of a new latest version: the previous version's timer start events are
/// cancelled and the new version's timers are set.
pub(crate) fn replace_start_timers(
    ctx: &mut Ctx<'_, '_, '_>,
    previous: Option<crate::types::LatestVersion>,
    next: Option<(&zest_protocol::ProcessRecord, &zest_model::Process)>,
) {
    if let Some(prev) = previous {
        let timers = ctx
            .txn
            .scan_prefix(Ks::ElementTimers, &key_i64(prev.key), usize::MAX);
        for (k, _) in timers {
            let timer_key = crate::state::read_i64(&k, 8);
            if let Some(t) = ctx
                .txn
                .get::<zest_protocol::TimerRecord>(Ks::Timers, &key_i64(timer_key))
            {
                ctx.event(timer_key, Intent::Canceled, RecordValue::Timer(t));
            }
        }
    }
    let Some((process, model)) = next else {
        return;
    };
    for el in &model.elements {
        if !matches!(el.kind, zest_model::ElementKind::TimerStartEvent)
            || el.flow_scope != Some(zest_model::Process::ROOT)
        {
            continue;
        }
        let Some((due, repetitions)) = el.timer.as_ref().and_then(|t| start_timer(t, ctx.now))
        else {
            continue;
        };
        let timer = zest_protocol::TimerRecord {
            element_instance_key: -1,
            process_instance_key: -1,
            process_definition_key: process.process_definition_key,
            due_date: due,
            target_element_id: el.id.clone(),
            repetitions,
            tenant_id: crate::types::tenant(&process.tenant_id),
        };
        let key = ctx.next_key();
        ctx.event(key, Intent::Created, RecordValue::Timer(timer));
    }
}

/// The first due date and the repetitions (-1: forever) of a timer start event's (static)
/// timer.
fn start_timer(t: &zest_model::TimerDefinition, now: i64) -> Option<(i64, i32)> {
    use zest_model::{time, Expression, TimerDefinition};
    match t {
        TimerDefinition::Duration(Expression::Static(s)) => {
            let d = time::parse_iso_duration(s).ok()?;
            Some((d.add_to(now).ok()?.max(now), 1))
        }
        TimerDefinition::Date(Expression::Static(s)) => Some((time::parse_date_time(s).ok()?, 1)),
        TimerDefinition::Cycle(Expression::Static(s)) => {
            let c = match time::parse_time_cycle(s).ok()? {
                TimeCycle::Repeating(c) => c,
                TimeCycle::Cron(cron) => return Some((cron.next_after(now).ok()?, -1)),
            };
            let first = match c.start {
                Some(start) => start,
                None => c.interval.add_to(now).ok()?,
            };
            let repetitions = c
                .repetitions
                .map(|r| r.min(i32::MAX as u32) as i32)
                .unwrap_or(-1);
            Some((first, repetitions))
        }
        _ => None,
    }
}
