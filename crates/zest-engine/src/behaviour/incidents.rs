//! Raising incidents: a step that cannot go on stops with an incident until it is resolved.

use zest_protocol::{ErrorType, IncidentRecord, Intent, RecordValue};

use crate::context::{Ctx, ProcResult};
use crate::types::ElementInstance;

/// Raises an incident on an element instance (or its job), leaving it where it stopped.
pub(crate) fn raise_incident(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    error_type: ErrorType,
    message: String,
    job_key: i64,
) -> ProcResult {
    let incident = IncidentRecord {
        error_type,
        error_message: message,
        bpmn_process_id: inst.record.bpmn_process_id.clone(),
        process_definition_key: inst.record.process_definition_key,
        process_instance_key: inst.record.process_instance_key,
        element_id: inst.record.element_id.clone(),
        element_instance_key: inst.key,
        job_key,
        variable_scope_key: inst.key,
        tenant_id: inst.record.tenant_id.clone(),
    };
    let key = ctx.next_key();
    ctx.event(key, Intent::Created, RecordValue::Incident(incident));
    Ok(())
}
