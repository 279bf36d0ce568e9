//! Camunda user tasks (`zeebe:userTask`): activation evaluates the task's properties and
//! creates the USER_TASK, after its creating listeners.

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::task_listeners;
use crate::behaviour::user_tasks::{evaluate_props, finish_creating};
use crate::context::{Ctx, ProcResult};
use crate::element::kind::{ElementProcessor, EventVariables};
use crate::types::ElementInstance;
use std::sync::Arc;
use zest_model::{ElementIdx, Process, TaskListenerEventType as ListenerEvent};
use zest_protocol::{ErrorType, Intent, RecordValue};

/// Activation of a Camunda user task: evaluates its properties (an incident when one fails),
/// creates the task and assigns it when the model names an assignee.
pub(crate) fn activate(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
) -> ProcResult {
    let el = model.element(idx);
    let props = el.user_task.clone().unwrap_or_default();
    let key = inst.key;
    let mut record = match evaluate_props(ctx, &props, key) {
        Ok(r) => r,
        Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
    };
    if let Some(form_id) = &props.form_id {
        match crate::behaviour::inputs::latest_form(ctx, form_id) {
            Ok(form_key) => record.form_key = form_key,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::FormNotFound, msg, -1),
        }
    }
    if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
        return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
    }
    record.custom_headers = el.task_headers.iter().cloned().collect();
    record.creation_timestamp = ctx.now;
    record.element_id = el.id.clone();
    record.element_instance_key = key;
    record.bpmn_process_id = inst.record.bpmn_process_id.clone();
    record.process_definition_version = inst.record.version;
    record.process_definition_key = inst.record.process_definition_key;
    record.process_instance_key = inst.record.process_instance_key;
    record.tenant_id = inst.record.tenant_id.clone();
    let task_key = ctx.next_key();
    record.user_task_key = task_key;
    ctx.event(
        task_key,
        Intent::Creating,
        RecordValue::UserTask(Box::new(record.clone())),
    );
    if task_listeners::run_next(ctx, &record, ListenerEvent::Creating, 0)? {
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        return Ok(());
    }
    finish_creating(ctx, task_key, record, &[], Some(inst))
}

/// A Camunda user task (`zeebe:userTask`).
pub(crate) struct UserTask;

impl ElementProcessor for UserTask {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        crate::element::user_task::activate(ctx, inst, model, idx)
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Trigger
    }
}
