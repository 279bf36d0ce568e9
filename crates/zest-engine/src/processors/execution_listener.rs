//! PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER: an execution listener's job completed; the
//! element's activation or completion goes on.

use crate::appliers::listener_phase as phase;
use crate::behaviour::events;
use crate::behaviour::variables;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::lifecycle::on_activate;
use crate::element::lifecycle::on_complete;
use crate::state::{key_i64, Ks};
use crate::types::ElementInstance;
use zest_model::ListenerEventType;
use zest_protocol::Record;

/// PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER: the listener's variables are written (a start
/// listener's as local variables of the element, an end listener's propagated from its flow
/// scope, as output mappings' are), then the next listener runs or the element goes on.
pub fn complete(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record) -> ProcResult {
    let key = cmd.key;
    let Some(inst) = ctx
        .txn
        .get::<ElementInstance>(Ks::ElementInstances, &key_i64(key))
    else {
        return Err(Rejection::not_found(format!(
            "Expected to complete an execution listener of element instance with key '{key}', but no such element instance was found"
        )));
    };
    let Some(phase) = phase(inst.state) else {
        return Err(Rejection::invalid_state(format!(
            "Expected to complete an execution listener of element instance with key '{key}', but it is in state {}",
            inst.state.name()
        )));
    };
    let trigger: Option<crate::types::StoredTrigger> =
        ctx.txn.get(Ks::EventTriggers, &key_i64(key));
    if let Some(trigger) = &trigger {
        let doc = variables::parse_document(&trigger.variables).unwrap_or_default();
        if !doc.is_empty() {
            match phase {
                ListenerEventType::End if inst.parent_key > 0 => {
                    variables::merge_propagate(ctx, inst.parent_key, &doc)
                }
                _ => variables::set_local_document(ctx, key, &doc, None),
            }
        }
        events::take_trigger(ctx, key, &inst.record, key);
    }
    match phase {
        ListenerEventType::Start => on_activate(ctx, key),
        ListenerEventType::End => on_complete(ctx, key),
    }
}
