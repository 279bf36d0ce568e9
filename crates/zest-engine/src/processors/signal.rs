//! SIGNAL BROADCAST: a signal reaches every subscription and signal start event of its name.
//! It is processed on partition 1 and distributed to the others (`behaviour::distribution`),
//! where the element instances waiting for it are; signal start events listen on partition 1
//! only, so a broadcast starts one instance each.

use crate::behaviour::distribution;
use crate::behaviour::element_instance::load;
use crate::behaviour::event_scopes::trigger_event;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::keys::signal::*;
use crate::state::{key_i64, Ks};
use crate::types::tenant;
use crate::types::StoredSignalSubscription;
use zest_protocol::{Intent, Record, RecordValue, SignalRecord};

/// SIGNAL BROADCAST: BROADCASTED, then every subscription of the name is triggered: a start
/// event creates an instance, a waiting element instance gets the event.
pub fn broadcast(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, sig: &SignalRecord) -> ProcResult {
    if sig.signal_name.is_empty() {
        // a client's command: refused through the processor's result, which answers it
        return Err(Rejection::invalid_argument(
            "Expected to broadcast a signal with a name, but the name is empty",
        ));
    }
    let record = SignalRecord {
        tenant_id: tenant(&sig.tenant_id),
        ..sig.clone()
    };
    let distributed = distribution::is_distributed(ctx, cmd);
    if distributed && distribution::already_processed(ctx, cmd) {
        distribution::acknowledge(ctx, cmd);
        return Ok(());
    }
    // a broadcast sent by partition 1 keeps its key
    let key = if distributed { cmd.key } else { ctx.next_key() };
    ctx.event_and_respond(
        cmd,
        key,
        Intent::Broadcasted,
        RecordValue::Signal(record.clone()),
    );
    if distributed {
        distribution::acknowledge(ctx, cmd);
    } else {
        distribution::distribute(ctx, key, Intent::Broadcast, RecordValue::Signal(record));
    }
    let keys = ctx.txn.scan_prefix(
        Ks::SignalSubscriptions,
        &name_prefix(&sig.signal_name),
        usize::MAX,
    );
    let subs: Vec<StoredSignalSubscription> = keys
        .into_iter()
        .filter_map(|(k, _)| ctx.txn.get(Ks::SignalSubscriptions, &k))
        .collect();
    for sub in subs {
        let r = &sub.record;
        if r.catch_event_instance_key <= 0 {
            let Some(process) =
                crate::behaviour::process_deletion::process_head(ctx.txn, r.process_definition_key)
            else {
                continue;
            };
            crate::behaviour::events::start_process(
                ctx,
                &process,
                &r.catch_event_id,
                sig.variables.clone(),
            );
            continue;
        }
        let Some((inst, model, _)) = load(ctx, r.catch_event_instance_key) else {
            continue;
        };
        // an element takes one event at a time (another one may already be on its way)
        let pending = ctx.txn.contains(Ks::EventTriggers, &key_i64(inst.key));
        if inst.state != Intent::ElementActivated || pending {
            continue;
        }
        trigger_event(ctx, &inst, &model, &r.catch_event_id, sig.variables.clone())?;
    }
    Ok(())
}
