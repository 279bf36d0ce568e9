//! Call activities: a process instance of the called process, started by the call activity.

use std::sync::Arc;

use serde_json::Value;
use zest_model::{ElementIdx, Process};
use zest_protocol::{ErrorType, Intent, ProcessInstanceRecord};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::expressions::evaluate_string;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::process_deletion::process_head;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::{ElementProcessor, EventVariables};
use crate::state::Ks;
use crate::types::ElementInstance;

/// A call activity starts an instance of the process it calls (latest version), which gets the
/// variables the call activity sees (or only its input mappings' result), and waits for it.
pub(crate) fn call_activity(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    model: &Arc<Process>,
    idx: ElementIdx,
) -> ProcResult {
    let el = model.element(idx);
    let Some(called) = &el.called_element else {
        return Err(Rejection::invalid_state(format!(
            "call activity '{}' has no called element",
            el.id
        )));
    };
    let key = inst.key;
    let process_id = match evaluate_string(ctx, &called.process_id, key) {
        Ok(id) => id,
        Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
    };
    let latest = ctx
        .txn
        .get::<crate::types::LatestVersion>(Ks::ProcessLatest, process_id.as_bytes());
    let Some(process) = latest.and_then(|l| process_head(ctx.txn, l.key)) else {
        let msg = format!(
            "Expected process with BPMN process id '{process_id}' to be deployed, but not found."
        );
        return raise_incident(ctx, inst, ErrorType::CalledElementError, msg, -1);
    };
    let has_none_start = ctx
        .models
        .get(ctx.txn, process.process_definition_key)
        .is_some_and(|m| !m.element(Process::ROOT).start_events.is_empty());
    if !has_none_start {
        let msg = format!("Expected process with BPMN process id '{process_id}' to have a none start event, but not found.");
        return raise_incident(ctx, inst, ErrorType::CalledElementError, msg, -1);
    }
    if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
        return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
    }
    ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
    let child_key = ctx.next_key();
    let child = ProcessInstanceRecord {
        bpmn_process_id: process.bpmn_process_id.clone(),
        version: process.version,
        process_definition_key: process.process_definition_key,
        process_instance_key: child_key,
        element_id: process.bpmn_process_id.clone(),
        flow_scope_key: -1,
        bpmn_element_type: zest_model::BpmnElementType::Process,
        bpmn_event_type: zest_model::BpmnEventType::Unspecified,
        parent_process_instance_key: inst.record.process_instance_key,
        parent_element_instance_key: key,
        tenant_id: inst.record.tenant_id.clone(),
    };
    ctx.command(child_key, Intent::ActivateElement, pi_value(&child));
    let vars = if called.propagate_all_parent_variables {
        variables::visible_for_copy(ctx, key)
    } else {
        let mut local: Vec<(String, Value)> = variables::local(ctx, key).into_iter().collect();
        variables::sort_like_zeebe(&mut local);
        local.into_iter().collect()
    };
    let seed = variables::ScopeInfoSeed {
        process_instance_key: child_key,
        process_definition_key: child.process_definition_key,
        bpmn_process_id: child.bpmn_process_id.clone(),
        tenant_id: child.tenant_id.clone(),
    };
    variables::set_local_document(ctx, child_key, &vars, Some(&seed));
    Ok(())
}

/// A call activity: creates an instance of the called process and waits for it.
pub(crate) struct CallActivity;

impl ElementProcessor for CallActivity {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        call_activity(ctx, inst, model, idx)
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::CalledProcess
    }
}
