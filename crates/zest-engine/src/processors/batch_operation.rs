//! BATCH_OPERATION: Camunda 8.8's batch operations by filter, kept on partition 1
//! (`docs/design/history.md`, "Batch operations"). The engine never searches: the broker's
//! driver finds the items in history, issues their commands, and reports each chunk it has
//! done with EXECUTE; here the operation's state, cursor and counts move on.

use zest_protocol::{BatchOperationRecord, Intent, Record, RecordValue};

use crate::context::{Ctx, ProcResult, Rejection};
use crate::state::{key_i64, Ks};

pub const ACTIVE: &str = "ACTIVE";
pub const SUSPENDED: &str = "SUSPENDED";
pub const COMPLETED: &str = "COMPLETED";
pub const CANCELED: &str = "CANCELED";

const TYPES: [&str; 7] = [
    "CANCEL_PROCESS_INSTANCE",
    "RESOLVE_INCIDENT",
    "MIGRATE_PROCESS_INSTANCE",
    "MODIFY_PROCESS_INSTANCE",
    "DELETE_PROCESS_INSTANCE",
    "DELETE_DECISION_INSTANCE",
    "DELETE_PROCESS_DEFINITION",
];

fn value(r: BatchOperationRecord) -> RecordValue {
    RecordValue::BatchOperation(Box::new(r))
}

/// The unfinished operation with this key.
fn stored(ctx: &Ctx<'_, '_, '_>, key: i64, what: &str) -> Result<BatchOperationRecord, Rejection> {
    ctx.txn
        .get(Ks::BatchOperations, &key_i64(key))
        .ok_or_else(|| {
            Rejection::not_found(format!(
                "Expected to {what} batch operation with key '{key}', but no such batch \
                 operation was found"
            ))
        })
}

/// CREATE: a new operation, ACTIVE, answered with its key.
pub fn create(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, r: &BatchOperationRecord) -> ProcResult {
    if !TYPES.contains(&r.batch_operation_type.as_str()) {
        return Err(Rejection::invalid_argument(format!(
            "Expected a batch operation type of {TYPES:?}, but got '{}'",
            r.batch_operation_type
        )));
    }
    let key = ctx.next_key();
    let created = BatchOperationRecord {
        batch_operation_key: key,
        batch_operation_type: r.batch_operation_type.clone(),
        state: ACTIVE.to_string(),
        filter: r.filter.clone(),
        plan: r.plan.clone(),
        total: -1,
        ..Default::default()
    };
    ctx.event_and_respond(cmd, key, Intent::Created, value(created));
    Ok(())
}

/// EXECUTE: one chunk done. Recorded only while the operation is ACTIVE and still at the
/// cursor the chunk started from; the last chunk completes the operation.
pub fn execute(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, r: &BatchOperationRecord) -> ProcResult {
    let key = r.batch_operation_key;
    let mut op = stored(ctx, key, "execute")?;
    if op.state != ACTIVE {
        return Err(Rejection::invalid_state(format!(
            "Expected to execute an ACTIVE batch operation, but batch operation '{key}' is {}",
            op.state
        )));
    }
    if op.cursor != r.from_cursor {
        return Err(Rejection::invalid_state(format!(
            "Expected a chunk of batch operation '{key}' after its cursor, but the chunk \
             starts elsewhere (recorded already)"
        )));
    }
    if op.total < 0 {
        op.total = r.total;
    }
    let done = |state: &str| r.items.iter().filter(|i| i.state == state).count() as i64;
    op.completed += done(COMPLETED);
    op.failed += done("FAILED");
    op.cursor = r.cursor.clone();
    op.items = r.items.clone();
    let last = r.last_chunk;
    ctx.event_and_respond(cmd, key, Intent::Executed, value(op.clone()));
    if last {
        op.items.clear();
        op.state = COMPLETED.to_string();
        ctx.event(key, Intent::Completed, value(op));
    }
    Ok(())
}

/// CANCEL, SUSPEND and RESUME: the operation's lifecycle.
pub fn lifecycle(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, r: &BatchOperationRecord) -> ProcResult {
    let key = r.batch_operation_key;
    let (what, from, to, intent): (&str, &[&str], &str, Intent) = match cmd.intent {
        Intent::Cancel => ("cancel", &[ACTIVE, SUSPENDED], CANCELED, Intent::Canceled),
        Intent::Suspend => ("suspend", &[ACTIVE], SUSPENDED, Intent::Suspended),
        _ => ("resume", &[SUSPENDED], ACTIVE, Intent::Resumed),
    };
    let mut op = stored(ctx, key, what)?;
    if !from.contains(&op.state.as_str()) {
        return Err(Rejection::invalid_state(format!(
            "Expected to {what} a batch operation in state {from:?}, but batch operation \
             '{key}' is {}",
            op.state
        )));
    }
    op.state = to.to_string();
    ctx.event_and_respond(cmd, key, intent, value(op));
    Ok(())
}
