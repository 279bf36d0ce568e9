//! Process instance migration (PROCESS_INSTANCE_MIGRATION MIGRATE): moves a running process
//! instance to another process definition (a new version, usually), each active element
//! instance to the element its mapping instruction names, as Operate's migration does.
//!
//! Zeebe's order: every precondition is checked first (the process instance and the target
//! exist; mapping instructions name existing elements, each source once; every active element
//! is mapped, to an element of the same type in the mapped flow scope). Then, element instance
//! by element instance (the process first, depth first, children in key order): its
//! ELEMENT_MIGRATED, its job's, its user task's and its incidents' MIGRATED, its variables'
//! MIGRATED, its event subscriptions; last the command's MIGRATED. A migrated job keeps its type
//! and retries, as in
//! Zeebe: only what identifies the element changes.
//!
//! Zest migrates processes, embedded sub-processes and tasks waiting for a job or a user, with
//! their boundary events: after the element's own records, the subscriptions of unmapped
//! boundary events close, the target's unmapped boundary events are subscribed to, and the
//! mapped ones move (PROCESS_MESSAGE_SUBSCRIPTION MIGRATED with MESSAGE_SUBSCRIPTION MIGRATE,
//! TIMER MIGRATED keeping its due date, SIGNAL_SUBSCRIPTION MIGRATED), in Zeebe's order. A
//! waiting timer, message or signal catch event or receive task moves its own subscription the
//! same way, and so does a process or sub-process with the start events of its event
//! sub-processes, and a waiting event-based gateway with the catch events after it;
//! multi-instance bodies with their inner instances, and call activities (every element
//! instance of the called processes below gets ANCESTOR_MIGRATED). Gateways and script and
//! business rule tasks held by an incident or an execution listener job move with it. Tokens
//! waiting at a joining parallel or inclusive gateway move with Zeebe's records
//! (SEQUENCE_FLOW_DELETED and SEQUENCE_FLOW_TAKEN) when the gateway and the taken flows are
//! mapped. Start, end, intermediate throw and boundary events, manual and undefined tasks and
//! ad-hoc sub-processes are refused as Zeebe 8.8 refuses them ("has an unsupported type"), so
//! a compensation throw event waiting for its handlers is too. The compensation subscriptions
//! of completed activities are deleted (COMPENSATION_SUBSCRIPTION DELETED after the process's
//! VARIABLE MIGRATED), as Zeebe 8.8 does: after a migration, a compensation throw event undoes
//! only what completed in the target process definition.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use zest_model::{Element, ElementKind, Process};
use zest_protocol::{
    BpmnElementType, Intent, ProcessInstanceMigrationRecord, ProcessInstanceRecord, Record,
    RecordValue, TimerRecord, VariableRecord,
};

use crate::behaviour::event_scopes::subscribe_catch_events;
use crate::behaviour::event_scopes::unsubscribe_events_for;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::state::{key_i64, read_i64, Ks};
use crate::types::{ElementInstance, StoredIncident, StoredJob, StoredUserTask};

pub fn migrate(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    m: &ProcessInstanceMigrationRecord,
) -> ProcResult {
    let pi_key = m.process_instance_key;
    let process: Option<ElementInstance> = ctx.txn.get(Ks::ElementInstances, &key_i64(pi_key));
    let Some(process) = process.filter(|p| p.parent_key <= 0) else {
        return Err(Rejection::not_found(format!(
            "Expected to migrate process instance but no process instance found with key '{pi_key}'"
        )));
    };
    let target_key = m.target_process_definition_key;
    let target_head = crate::behaviour::process_deletion::deployed(ctx.txn, target_key);
    let target = ctx.models.get(ctx.txn, target_key);
    let (Some(target_head), Some(target)) = (target_head, target) else {
        return Err(Rejection::not_found(format!(
            "Expected to migrate process instance to process definition but no process definition found with key '{target_key}'"
        )));
    };
    let Some(source) = ctx
        .models
        .get(ctx.txn, process.record.process_definition_key)
    else {
        return Err(Rejection::not_found(format!(
            "Expected to migrate process instance but no process instance found with key '{pi_key}'"
        )));
    };
    let mappings = check_instructions(pi_key, m, &source, &target)?;
    // every element instance, process first, depth first (children in key order)
    let instances = instance_tree(ctx, &process, false);
    for inst in &instances {
        check_instance(ctx, pi_key, inst, &mappings, &source, &target)?;
    }

    let target_id = |inst: &ElementInstance| -> String {
        if inst.parent_key <= 0 {
            target_head.bpmn_process_id.clone()
        } else {
            mappings[inst.record.element_id.as_str()].to_string()
        }
    };
    for inst in &instances {
        let record = ProcessInstanceRecord {
            bpmn_process_id: target_head.bpmn_process_id.clone(),
            version: target_head.version,
            process_definition_key: target_key,
            element_id: target_id(inst),
            ..inst.record.clone()
        };
        ctx.event(
            inst.key,
            Intent::ElementMigrated,
            RecordValue::ProcessInstance(record.clone()),
        );
        migrate_taken_flows(ctx, inst, &record, &mappings);
        if inst.job_key > 0 {
            if let Some(job) = ctx.txn.get::<StoredJob>(Ks::Jobs, &key_i64(inst.job_key)) {
                let mut j = job.record;
                j.element_id = record.element_id.clone();
                j.bpmn_process_id = record.bpmn_process_id.clone();
                j.process_definition_key = target_key;
                j.process_definition_version = target_head.version;
                j.variables = String::new();
                ctx.event(
                    inst.job_key,
                    Intent::Migrated,
                    RecordValue::Job(Box::new(j)),
                );
            }
        }
        let user_task_key: Option<i64> = ctx
            .txn
            .get(Ks::UserTasks, &crate::keys::user_task_key(b'e', inst.key));
        if let Some(task) = user_task_key.and_then(|k| {
            ctx.txn
                .get::<StoredUserTask>(Ks::UserTasks, &crate::keys::user_task_key(b't', k))
                .map(|t| (k, t))
        }) {
            let (k, task) = task;
            let mut u = task.record;
            u.element_id = record.element_id.clone();
            u.bpmn_process_id = record.bpmn_process_id.clone();
            u.process_definition_key = target_key;
            u.process_definition_version = target_head.version;
            ctx.event(k, Intent::Migrated, RecordValue::UserTask(Box::new(u)));
        }
        let mut incident_keys = Vec::new();
        for owner in [inst.job_key, inst.key] {
            if owner > 0 {
                if let Some(k) = ctx.txn.get::<i64>(Ks::IncidentIndex, &key_i64(owner)) {
                    incident_keys.push(k);
                }
            }
        }
        for k in incident_keys {
            if let Some(incident) = ctx.txn.get::<StoredIncident>(Ks::Incidents, &key_i64(k)) {
                let mut i = incident.record;
                i.element_id = record.element_id.clone();
                i.bpmn_process_id = record.bpmn_process_id.clone();
                i.process_definition_key = target_key;
                ctx.event(k, Intent::Migrated, RecordValue::Incident(i));
            }
        }
        // Zeebe's order: the element, its job, user task and incidents, its variables, then
        // its event subscriptions
        migrate_variables(ctx, inst.key, &record);
        if inst.parent_key <= 0 {
            // what completed activities could undo does not carry over (Zeebe 8.8 deletes
            // the compensation subscriptions, after the process's variables)
            crate::behaviour::compensation::delete_all(ctx, inst, &source);
        }
        migrate_boundary_events(ctx, pi_key, inst, &record, &mappings, &source, &target)?;
        // a call activity: the process it called stays, but learns that its ancestor moved
        if let Some(child) = ctx.txn.get::<i64>(Ks::CalledInstances, &key_i64(inst.key)) {
            if let Some(called) = ctx
                .txn
                .get::<ElementInstance>(Ks::ElementInstances, &key_i64(child))
            {
                for descendant in instance_tree(ctx, &called, true) {
                    ctx.event(
                        descendant.key,
                        Intent::AncestorMigrated,
                        RecordValue::ProcessInstance(descendant.record.clone()),
                    );
                }
            }
        }
    }
    let mut done = m.clone();
    done.tenant_id = process.record.tenant_id.clone();
    ctx.event_and_respond(
        cmd,
        pi_key,
        Intent::Migrated,
        RecordValue::ProcessInstanceMigration(done),
    );
    Ok(())
}

/// Checks the mapping instructions against both process definitions; returns them as source
/// element id -> target element id.
fn check_instructions<'m>(
    pi_key: i64,
    m: &'m ProcessInstanceMigrationRecord,
    source: &Process,
    target: &Process,
) -> ProcResult<HashMap<&'m str, &'m str>> {
    let mut seen = BTreeSet::new();
    let mut duplicates = BTreeSet::new();
    for i in &m.mapping_instructions {
        if !seen.insert(i.source_element_id.as_str()) {
            duplicates.insert(i.source_element_id.as_str());
        }
    }
    if !duplicates.is_empty() {
        let list: Vec<&str> = duplicates.into_iter().collect();
        return Err(Rejection::invalid_argument(format!(
            "Expected to migrate process instance '{pi_key}' but the mapping instructions contain duplicate source element ids '[{}]'.",
            list.join(", ")
        )));
    }
    for i in &m.mapping_instructions {
        if source.element_by_id(&i.source_element_id).is_none()
            && source.flow_by_id(&i.source_element_id).is_none()
        {
            return Err(Rejection::invalid_argument(format!(
                "Expected to migrate process instance '{pi_key}' but mapping instructions contain a non-existing source element id '{}'. Elements provided in mapping instructions must exist in the source process definition.",
                i.source_element_id
            )));
        }
    }
    for i in &m.mapping_instructions {
        if target.element_by_id(&i.target_element_id).is_none()
            && target.flow_by_id(&i.target_element_id).is_none()
        {
            return Err(Rejection::invalid_argument(format!(
                "Expected to migrate process instance '{pi_key}' but mapping instructions contain a non-existing target element id '{}'. Elements provided in mapping instructions must exist in the target process definition.",
                i.target_element_id
            )));
        }
    }
    Ok(m.mapping_instructions
        .iter()
        .map(|i| (i.source_element_id.as_str(), i.target_element_id.as_str()))
        .collect())
}

/// The subscriptions of an element instance's boundary events, as Zeebe migrates them: those of
/// unmapped boundary events are closed, the target's boundary events that nothing maps to are
/// subscribed to, then the mapped ones move (message subscriptions, timers, signal
/// subscriptions; a timer keeps its due date).
fn migrate_boundary_events(
    ctx: &mut Ctx<'_, '_, '_>,
    pi_key: i64,
    inst: &ElementInstance,
    migrated: &ProcessInstanceRecord,
    mappings: &HashMap<&str, &str>,
    source: &Process,
    target: &Process,
) -> ProcResult {
    let (Some((_, source_el)), Some((target_idx, target_el))) = (
        source.element_by_id(&inst.record.element_id),
        target.element_by_id(&migrated.element_id),
    ) else {
        return Ok(());
    };
    // a waiting catch event or receive task: its own subscription moves to the target element
    let waits = matches!(
        source_el.kind,
        ElementKind::TimerIntermediateCatchEvent
            | ElementKind::MessageCatch
            | ElementKind::SignalCatch
    );
    // the events the instance listens for: its boundary events, the start events of its event
    // sub-processes (a process or sub-process), itself (a waiting catch event)
    // a multi-instance activity's boundary events belong to its body; the inner instances of a
    // multi-instance sub-process hold its event sub-processes' subscriptions
    let body = inst.record.bpmn_element_type == BpmnElementType::MultiInstanceBody;
    let inner = source_el.multi_instance.is_some() && !body;
    let of = |model: &Process, el: &zest_model::Element| -> Vec<usize> {
        listens(model, el)
            .into_iter()
            .filter(|&e| {
                let is_boundary = model.element(e).attached_to.is_some();
                if body {
                    is_boundary
                } else if inner {
                    !is_boundary
                } else {
                    true
                }
            })
            .collect()
    };
    let (source_events, target_events) = (of(source, source_el), of(target, target_el));
    if !waits && source_events.is_empty() && target_events.is_empty() {
        return Ok(());
    }
    let mut mapped: Vec<(String, String)> = Vec::new();
    if waits {
        mapped.push((source_el.id.clone(), target_el.id.clone()));
    }
    let mut unmapped: Vec<&str> = Vec::new();
    for &b in &source_events {
        let id = source.element(b).id.as_str();
        match mappings.get(id) {
            Some(to) => mapped.push((id.to_string(), to.to_string())),
            None => unmapped.push(id),
        }
    }
    if !unmapped.is_empty() {
        unsubscribe_events_for(ctx, inst.key, &|id| unmapped.contains(&id));
    }
    let fresh: Vec<usize> = target_events
        .into_iter()
        .filter(|&t| !mapped.iter().any(|(_, to)| *to == target.element(t).id))
        .collect();
    if !fresh.is_empty() {
        let moved = ElementInstance {
            record: migrated.clone(),
            ..inst.clone()
        };
        subscribe_catch_events(ctx, &moved, target, &fresh).map_err(|msg| {
            Rejection::invalid_state(format!(
                "Expected to migrate process instance '{pi_key}' but the boundary events of '{}' could not be subscribed to: {msg}",
                target.element(target_idx).id
            ))
        })?;
    }
    if mapped.is_empty() {
        return Ok(());
    }
    crate::behaviour::message_subscriptions::migrate(ctx, inst.key, &mapped, migrated);
    for (k, _) in ctx
        .txn
        .scan_prefix(Ks::ElementTimers, &key_i64(inst.key), usize::MAX)
    {
        let timer_key = read_i64(&k, 8);
        let Some(timer) = ctx.txn.get::<TimerRecord>(Ks::Timers, &key_i64(timer_key)) else {
            continue;
        };
        if let Some((_, to)) = mapped
            .iter()
            .find(|(from, _)| *from == timer.target_element_id)
        {
            let moved = TimerRecord {
                target_element_id: to.clone(),
                process_definition_key: migrated.process_definition_key,
                ..timer
            };
            ctx.event(timer_key, Intent::Migrated, RecordValue::Timer(moved));
        }
    }
    crate::behaviour::signal_subscriptions::migrate(ctx, inst.key, &mapped, migrated);
    Ok(())
}

/// The events an instance of `el` listens for: its boundary events, the start events of its
/// event sub-processes (a process or sub-process), the catch events after it (an event-based
/// gateway).
fn listens(model: &Process, el: &zest_model::Element) -> Vec<usize> {
    let mut all: Vec<usize> = el.boundary_events.iter().rev().copied().collect();
    all.extend(el.event_sub_process_starts.iter().copied());
    if matches!(el.kind, ElementKind::EventBasedGateway) {
        all.extend(el.outgoing.iter().map(|&f| model.flow(f).target));
    }
    all
}

/// The element instances of a process instance: the process first, then depth first, children
/// in key order; with `into_called`, each call activity is followed by the tree of the process
/// instance it called, all the way down (what Zeebe marks ANCESTOR_MIGRATED).
fn instance_tree(
    ctx: &Ctx<'_, '_, '_>,
    process: &ElementInstance,
    into_called: bool,
) -> Vec<ElementInstance> {
    let mut out = Vec::new();
    let mut stack = vec![process.clone()];
    while let Some(inst) = stack.pop() {
        let children: Vec<ElementInstance> = ctx
            .txn
            .scan_prefix(Ks::ElementChildren, &key_i64(inst.key), usize::MAX)
            .into_iter()
            .filter_map(|(k, _)| {
                ctx.txn
                    .get::<ElementInstance>(Ks::ElementInstances, &key_i64(read_i64(&k, 8)))
            })
            .collect();
        stack.extend(children.into_iter().rev());
        if into_called {
            // the process a call activity called comes right after the call activity
            if let Some(called) = ctx
                .txn
                .get::<i64>(Ks::CalledInstances, &key_i64(inst.key))
                .and_then(|k| {
                    ctx.txn
                        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(k))
                })
            {
                stack.push(called);
            }
        }
        out.push(inst);
    }
    out
}

/// Whether Zest can migrate the element instance `inst` as the instructions map it.
fn check_instance(
    ctx: &Ctx<'_, '_, '_>,
    pi_key: i64,
    inst: &ElementInstance,
    mappings: &HashMap<&str, &str>,
    source: &Arc<Process>,
    target: &Arc<Process>,
) -> ProcResult {
    let id = inst.record.element_id.as_str();
    let Some((_, source_el)) = source.element_by_id(id) else {
        return Err(refuse(pi_key, id, "is not in its process definition"));
    };
    if matches!(
        inst.record.bpmn_element_type,
        BpmnElementType::AdHocSubProcess
            | BpmnElementType::AdHocSubProcessInnerInstance
            | BpmnElementType::StartEvent
            | BpmnElementType::EndEvent
            | BpmnElementType::IntermediateThrowEvent
            | BpmnElementType::BoundaryEvent
            | BpmnElementType::ManualTask
            | BpmnElementType::Task
    ) {
        // Zeebe 8.8 does not migrate these (its message): events that only pass through
        // unless a job, an incident or a compensation holds them, and ad-hoc sub-processes
        return Err(Rejection::invalid_state(format!(
            "Expected to migrate process instance '{pi_key}' but active element with id '{id}' has an unsupported type. The migration of a {} is not supported.",
            type_name(inst.record.bpmn_element_type)
        )));
    }
    let target_el = mapped_target(pi_key, inst, mappings, source, source_el, target)?;
    check_same_kind(pi_key, id, source_el, target_el)?;
    check_attached_events(
        pi_key,
        id,
        mappings,
        (source, source_el),
        (target, target_el),
    )?;
    check_taken_flows(pi_key, inst, mappings, source, target)?;
    if !matches!(
        source_el.kind,
        ElementKind::Process | ElementKind::SubProcess
    ) && inst.state != Intent::ElementActivated
        && inst.job_key <= 0
        && ctx
            .txn
            .get::<i64>(Ks::IncidentIndex, &key_i64(inst.key))
            .is_none()
    {
        return Err(refuse(
            pi_key,
            id,
            &format!("is in state {}", inst.state.name()),
        ));
    }
    if matches!(source_el.kind, ElementKind::JobWorkerTask)
        && !matches!(target_el.kind, ElementKind::JobWorkerTask)
    {
        return Err(refuse(
            pi_key,
            id,
            "waits for a job and its target does not create one",
        ));
    }
    Ok(())
}

/// Zeebe's refusal for an element instance Zest does not migrate.
fn refuse(pi_key: i64, id: &str, what: &str) -> Rejection {
    Rejection::invalid_state(format!(
        "Expected to migrate process instance '{pi_key}' but active element with id '{id}' {what}. Zest does not migrate such element instances yet."
    ))
}

/// The element of the target that an element instance moves to: the target process for the
/// process instance, else the element its mapping names, of the same type and in the flow
/// scope its own flow scope is mapped to.
fn mapped_target<'t>(
    pi_key: i64,
    inst: &ElementInstance,
    mappings: &HashMap<&str, &str>,
    source: &Process,
    source_el: &Element,
    target: &'t Process,
) -> ProcResult<&'t Element> {
    let id = inst.record.element_id.as_str();
    if inst.parent_key <= 0 {
        return Ok(target.element(Process::ROOT));
    }
    {
        let Some(target_id) = mappings.get(id) else {
            return Err(Rejection::invalid_state(format!(
                "Expected to migrate process instance '{pi_key}' but no mapping instruction defined for active element with id '{id}'. Elements cannot be migrated without a mapping."
            )));
        };
        // checked by check_instructions
        let Some((_, target_el)) = target.element_by_id(target_id) else {
            return Err(refuse(pi_key, id, "is mapped to a missing element"));
        };
        // a multi-instance body goes to a multi-instance activity (its inner instances to the
        // same activity)
        let body = inst.record.bpmn_element_type == BpmnElementType::MultiInstanceBody;
        let (source_type, target_type) = if body {
            let target_type = if target_el.multi_instance.is_some() {
                BpmnElementType::MultiInstanceBody
            } else {
                target_el.element_type
            };
            (BpmnElementType::MultiInstanceBody, target_type)
        } else {
            (source_el.element_type, target_el.element_type)
        };
        let same_loop = source_el.multi_instance.as_ref().map(|m| m.sequential)
            == target_el.multi_instance.as_ref().map(|m| m.sequential);
        if source_type != target_type || (body && !same_loop) {
            return Err(Rejection::invalid_state(different_type(
                pi_key,
                id,
                source_type,
                target_id,
                target_type,
            )));
        }
        // the flow scope stays: the target's flow scope must be where the source's is mapped
        let expected_scope = match source_el.flow_scope {
            Some(s) if s != Process::ROOT => mappings
                .get(source.element(s).id.as_str())
                .copied()
                .unwrap_or(""),
            _ => target.element(Process::ROOT).id.as_str(),
        };
        let actual_scope = target_el
            .flow_scope
            .map(|s| target.element(s).id.as_str())
            .unwrap_or("");
        if expected_scope != actual_scope {
            return Err(Rejection::invalid_state(format!(
                "Expected to migrate process instance '{pi_key}' but the flow scope of active element with id '{id}' is changed. The flow scope of the active element is expected to be '{expected_scope}' but was '{actual_scope}'. The flow scope of an element cannot be changed during migration yet."
            )));
        }
        Ok(target_el)
    }
}

/// The source and target elements have the same event type and a kind Zest migrates.
fn check_same_kind(pi_key: i64, id: &str, source_el: &Element, target_el: &Element) -> ProcResult {
    if source_el.event_type != target_el.event_type {
        return Err(Rejection::invalid_state(format!(
            "Expected to migrate process instance '{pi_key}' but active element with id '{id}' and event type '{}' is mapped to an element with id '{}' and different event type '{}'. Elements must be mapped to elements of the same event type.",
            type_name(source_el.event_type),
            target_el.id,
            type_name(target_el.event_type)
        )));
    }
    let supported_kind = match source_el.kind {
        ElementKind::Process | ElementKind::SubProcess | ElementKind::JobWorkerTask => true,
        // these move only to an element of the same kind
        ElementKind::UserTask
        | ElementKind::TimerIntermediateCatchEvent
        | ElementKind::MessageCatch
        | ElementKind::SignalCatch
        | ElementKind::EventBasedGateway
        | ElementKind::CallActivity
        | ElementKind::ExclusiveGateway
        | ElementKind::ParallelGateway
        | ElementKind::InclusiveGateway
        | ElementKind::ScriptTask
        | ElementKind::BusinessRuleTask => source_el.kind == target_el.kind,
        _ => false,
    };
    if !supported_kind || source_el.multi_instance.is_some() != target_el.multi_instance.is_some() {
        return Err(refuse(pi_key, id, &format!(
            "is a {} of a kind Zest does not migrate (only processes, embedded sub-processes, tasks waiting for a job or a user, timer, message and signal catch events, receive tasks, gateways, script and business rule tasks held by an incident or an execution listener, call activities, and multi-instance activities of those)",
            type_name(source_el.element_type)
        )));
    }
    Ok(())
}

/// The events attached to the element (boundary events, the catch events after an event-based
/// gateway, the start events of event sub-processes) are mapped to events of the same type
/// attached to the target element.
fn check_attached_events(
    pi_key: i64,
    id: &str,
    mappings: &HashMap<&str, &str>,
    (source, source_el): (&Process, &Element),
    (target, target_el): (&Process, &Element),
) -> ProcResult {
    // a mapped boundary event goes to a boundary event of the target, of the same event type
    for &b in &source_el.boundary_events {
        let boundary = source.element(b);
        let Some(&mapped_to) = mappings.get(boundary.id.as_str()) else {
            continue;
        };
        let fits = target.element_by_id(mapped_to).is_some_and(|(_, t)| {
            t.attached_to
                .is_some_and(|a| target.element(a).id == target_el.id)
                && t.event_type == boundary.event_type
                && t.interrupting == boundary.interrupting
        });
        if !fits {
            return Err(refuse(pi_key, id, &format!(
                "has the boundary event '{}' mapped to '{mapped_to}', which is no boundary event of the same type attached to '{}'",
                boundary.id, target_el.id
            )));
        }
    }
    // a catch event after a waiting event-based gateway goes to one after the target gateway
    if matches!(source_el.kind, ElementKind::EventBasedGateway) {
        let after_target = listens(target, target_el);
        for c in listens(source, source_el) {
            let catch = source.element(c);
            let Some(&mapped_to) = mappings.get(catch.id.as_str()) else {
                continue;
            };
            let fits = after_target.iter().any(|&t| {
                target.element(t).id == mapped_to
                    && target.element(t).event_type == catch.event_type
            });
            if !fits {
                return Err(refuse(pi_key, id, &format!(
                    "has the catch event '{}' mapped to '{mapped_to}', which is no catch event of the same type after '{}'",
                    catch.id, target_el.id
                )));
            }
        }
    }
    // a mapped start event of an event sub-process goes to one of the target scope's, of the
    // same event type
    for &e in &source_el.event_sub_process_starts {
        let start = source.element(e);
        let Some(&mapped_to) = mappings.get(start.id.as_str()) else {
            continue;
        };
        let fits = target_el.event_sub_process_starts.iter().any(|&t| {
            target.element(t).id == mapped_to
                && target.element(t).event_type == start.event_type
                && target.element(t).interrupting == start.interrupting
        });
        if !fits {
            return Err(refuse(pi_key, id, &format!(
                "has the event sub-process start event '{}' mapped to '{mapped_to}', which is no start event of the same type of an event sub-process of '{}'",
                start.id, target_el.id
            )));
        }
    }
    Ok(())
}

/// The sequence flows taken inside a scope towards a joining gateway that still waits for
/// others, as (gateway id, flow id, tokens), in id order.
fn taken_flows(inst: &ElementInstance) -> Vec<(&str, &str, u32)> {
    inst.join_tokens
        .iter()
        .filter_map(|(k, &n)| {
            let (gateway, flow) = k.split_once('\u{0}')?;
            Some((gateway, flow, n))
        })
        .collect()
}

/// Zeebe's preconditions for a scope whose joining gateways hold taken sequence flows: the
/// gateway is mapped to one of the same type with at least as many incoming flows, and each
/// taken flow is mapped. Zest also requires the mapped flow to lead to the mapped gateway
/// (Zeebe accepts any flow, and the join then never sees the token).
fn check_taken_flows(
    pi_key: i64,
    inst: &ElementInstance,
    mappings: &HashMap<&str, &str>,
    source: &Process,
    target: &Process,
) -> ProcResult {
    for (gateway, flow, _) in taken_flows(inst) {
        let Some((_, source_gw)) = source.element_by_id(gateway) else {
            continue;
        };
        let Some(target_gw) = mappings
            .get(gateway)
            .and_then(|t| target.element_by_id(t))
            .map(|(_, el)| el)
        else {
            return Err(Rejection::invalid_argument(format!(
                "Expected to migrate process instance '{pi_key}' but gateway '{gateway}' has at least one incoming sequence flow taken. Joining gateways with at least one incoming sequence flow taken must be mapped to a gateway of the same type in the target process definition."
            )));
        };
        if target_gw.element_type != source_gw.element_type {
            // Zeebe's message for active elements, but INVALID_ARGUMENT here
            return Err(Rejection::invalid_argument(different_type(
                pi_key,
                gateway,
                source_gw.element_type,
                &target_gw.id,
                target_gw.element_type,
            )));
        }
        if target_gw.incoming.len() < source_gw.incoming.len() {
            return Err(Rejection::invalid_argument(format!(
                "Expected to migrate process instance '{pi_key}' but target gateway with id '{}' has less incoming sequence flows than the source gateway with id '{gateway}'. Target gateway must have at least the same number of incoming sequence flows as the source gateway.",
                target_gw.id
            )));
        }
        let Some(target_flow) = mappings.get(flow).and_then(|f| target.flow_by_id(f)) else {
            return Err(Rejection::invalid_argument(format!(
                "Expected to migrate process instance '{pi_key}' but joining gateway with id '{gateway}' has a taken sequence flow with id '{flow}'. Taken sequence flows must be mapped to a sequence flow in the target process definition."
            )));
        };
        if target.element(target_flow.target).id != target_gw.id {
            return Err(Rejection::invalid_argument(format!(
                "Expected to migrate process instance '{pi_key}' but the taken sequence flow with id '{flow}' is mapped to the sequence flow with id '{}', which does not lead to the gateway with id '{}' that '{gateway}' is mapped to. Taken sequence flows must be mapped to an incoming sequence flow of the target gateway.",
                target_flow.id, target_gw.id
            )));
        }
    }
    Ok(())
}

/// Moves the tokens waiting at joining gateways: SEQUENCE_FLOW_DELETED of the source's flow
/// and SEQUENCE_FLOW_TAKEN of the target's, one pair per token, right after the scope's
/// ELEMENT_MIGRATED (Zeebe's place; with several taken flows Zeebe's order follows a hash
/// set, Zest's the flow ids).
fn migrate_taken_flows(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    migrated: &ProcessInstanceRecord,
    mappings: &HashMap<&str, &str>,
) {
    for (_, flow, tokens) in taken_flows(inst) {
        let Some(&to) = mappings.get(flow) else {
            continue; // checked by check_taken_flows
        };
        let as_flow = |record: &ProcessInstanceRecord, id: &str| ProcessInstanceRecord {
            element_id: id.to_string(),
            flow_scope_key: inst.key,
            bpmn_element_type: BpmnElementType::SequenceFlow,
            bpmn_event_type: zest_model::BpmnEventType::Unspecified,
            ..record.clone()
        };
        for _ in 0..tokens {
            let key = ctx.next_key();
            ctx.event(
                key,
                Intent::SequenceFlowDeleted,
                RecordValue::ProcessInstance(as_flow(&inst.record, flow)),
            );
            let key = ctx.next_key();
            ctx.event(
                key,
                Intent::SequenceFlowTaken,
                RecordValue::ProcessInstance(as_flow(migrated, to)),
            );
        }
    }
}

/// VARIABLE MIGRATED for the variables of one scope (their values stay; the record carries
/// none, as Zeebe's).
fn migrate_variables(ctx: &mut Ctx<'_, '_, '_>, scope_key: i64, record: &ProcessInstanceRecord) {
    let doc = ctx
        .txn
        .get_raw(Ks::Variables, &key_i64(scope_key))
        .unwrap_or_default();
    let mut vars: Vec<(String, i64)> = crate::scope_variables::iter(&doc)
        .map(|e| (e.name.to_string(), e.key))
        .collect();
    // Zeebe's order: its state keys names by length, then bytes
    vars.sort_by(|(a, _), (b, _)| (a.len(), a).cmp(&(b.len(), b)));
    for (name, key) in vars {
        ctx.event(
            key,
            Intent::Migrated,
            RecordValue::Variable(VariableRecord {
                name,
                value: "null".to_string(),
                scope_key,
                process_instance_key: record.process_instance_key,
                process_definition_key: record.process_definition_key,
                bpmn_process_id: record.bpmn_process_id.clone(),
                tenant_id: record.tenant_id.clone(),
            }),
        );
    }
}

/// Zeebe's message for an element mapped to one of another type.
fn different_type(
    pi_key: i64,
    id: &str,
    source_type: BpmnElementType,
    target_id: &str,
    target_type: BpmnElementType,
) -> String {
    format!(
        "Expected to migrate process instance '{pi_key}' but active element with id '{id}' and type '{}' is mapped to an element with id '{target_id}' and different type '{}'. Elements must be mapped to elements of the same type.",
        type_name(source_type),
        type_name(target_type)
    )
}

/// Zeebe's name of an element type (`SERVICE_TASK`).
fn type_name(t: impl serde::Serialize) -> String {
    serde_json::to_value(t)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
