//! RESOURCE_DELETION DELETE: deletes a deployed process version, form or decision requirements
//! graph. Resources are deployed on partition 1 and distributed, so the deletion is too: on
//! partition 1 it is checked and done (RESOURCE_DELETION DELETING, the resource's events,
//! DELETED, which answers the client) and sent to every other partition with command
//! distribution; each of them deletes its copy and acknowledges.
//!
//! Partition 1 refuses to delete a process version that one of its instances runs, as Zeebe
//! does. The other partitions cannot refuse what partition 1 accepted: where an instance of the
//! version still runs, the version stops being the latest and starts nothing new, and it goes
//! when its last instance there ends (`behaviour::process_deletion`).

use zest_protocol::{
    DecisionRequirementsRecord, FormRecord, Intent, Record, RecordValue, ResourceDeletionRecord,
};

use crate::behaviour::decisions::by_key;
use crate::behaviour::distribution;
use crate::behaviour::process_deletion::has_running_instances;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::keys::tagged_key;
use crate::state::{key_i64, Ks};
use crate::types::{LatestVersion, StoredProcess};

/// A deployed resource, found by its key.
enum Resource {
    Process(StoredProcess),
    Form(FormRecord),
    DecisionRequirements(DecisionRequirementsRecord),
}

impl Resource {
    fn find(ctx: &Ctx<'_, '_, '_>, key: i64) -> Option<Resource> {
        if let Some(p) = ctx.txn.get::<StoredProcess>(Ks::Processes, &key_i64(key)) {
            return Some(Resource::Process(p));
        }
        let key_bytes = key.to_be_bytes();
        if let Some(f) = ctx.txn.get(Ks::Forms, &tagged_key(b'k', &key_bytes)) {
            return Some(Resource::Form(f));
        }
        let drg = ctx.txn.get(Ks::Decisions, &tagged_key(b'r', &key_bytes));
        drg.map(Resource::DecisionRequirements)
    }

    fn tenant(&self) -> &str {
        match self {
            Resource::Process(p) => &p.record.tenant_id,
            Resource::Form(f) => &f.tenant_id,
            Resource::DecisionRequirements(d) => &d.tenant_id,
        }
    }

    /// Writes the resource's deletion events on this partition. `origin`: this is partition 1,
    /// which checked that no instance runs a process version and owns the start events that
    /// fire once (timers, signals).
    fn delete(self, ctx: &mut Ctx<'_, '_, '_>, key: i64, origin: bool) {
        match self {
            Resource::Process(p) => delete_process(ctx, key, p, origin),
            Resource::Form(f) => {
                ctx.event(key, Intent::Deleted, RecordValue::Form(f));
            }
            Resource::DecisionRequirements(d) => delete_decision_requirements(ctx, key, d),
        }
    }
}

/// RESOURCE_DELETION DELETE, from a client (on partition 1) or distributed from partition 1.
pub fn delete(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, r: &ResourceDeletionRecord) -> ProcResult {
    if distribution::is_distributed(ctx, cmd) {
        delete_distributed(ctx, cmd, r);
        return Ok(());
    }
    let key = r.resource_key;
    let Some(resource) = Resource::find(ctx, key) else {
        return Err(Rejection::not_found(format!(
            "Expected to delete resource but no resource found with key `{key}`"
        )));
    };
    if matches!(resource, Resource::Process(_)) && has_running_instances(ctx.txn, key) {
        return Err(Rejection::invalid_state(format!(
            "Expected to delete resource with key `{key}` but there are still running instances"
        )));
    }
    let value = ResourceDeletionRecord {
        resource_key: key,
        tenant_id: resource.tenant().to_string(),
    };
    let event_key = ctx.next_key();
    ctx.event(
        event_key,
        Intent::Deleting,
        RecordValue::ResourceDeletion(value.clone()),
    );
    resource.delete(ctx, key, true);
    distribution::distribute(
        ctx,
        event_key,
        Intent::Delete,
        RecordValue::ResourceDeletion(value.clone()),
    );
    ctx.event_and_respond(
        cmd,
        event_key,
        Intent::Deleted,
        RecordValue::ResourceDeletion(value),
    );
    Ok(())
}

/// The deletion distributed from partition 1 (its key is the distribution's): this
/// partition's copy goes, unless the command was sent again; then the acknowledgement.
fn delete_distributed(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, r: &ResourceDeletionRecord) {
    if !distribution::already_processed(ctx, cmd) {
        let value = RecordValue::ResourceDeletion(r.clone());
        ctx.event(cmd.key, Intent::Deleting, value.clone());
        if let Some(resource) = Resource::find(ctx, r.resource_key) {
            resource.delete(ctx, r.resource_key, false);
        }
        ctx.event(cmd.key, Intent::Deleted, value);
    }
    distribution::acknowledge(ctx, cmd);
}

/// PROCESS DELETING and, unless an instance of it still runs here, DELETED. When it was the
/// latest version, its start events stop listening and those of the version before it (if
/// one is left) listen again (Zeebe's behaviour). Version numbers are not given again.
fn delete_process(ctx: &mut Ctx<'_, '_, '_>, key: i64, stored: StoredProcess, origin: bool) {
    let process_id = stored.record.bpmn_process_id.clone();
    let latest: Option<LatestVersion> = ctx.txn.get(Ks::ProcessLatest, process_id.as_bytes());
    let record = RecordValue::Process(stored.record);
    // the applier makes the version before it the latest (if one is left)
    ctx.event(key, Intent::Deleting, record.clone());
    let was_latest = latest.is_some_and(|l| l.key == key);
    if was_latest {
        // its start events stop listening (while its model can still be read)
        replace_start_events(ctx, latest, None, origin);
    }
    if !has_running_instances(ctx.txn, key) {
        ctx.event(key, Intent::Deleted, record);
    }
    if was_latest {
        let next: Option<LatestVersion> = ctx.txn.get(Ks::ProcessLatest, process_id.as_bytes());
        let next = next.and_then(|l| {
            let record = ctx
                .txn
                .get::<StoredProcess>(Ks::Processes, &key_i64(l.key))?
                .record;
            let model = ctx.models.get(ctx.txn, l.key)?;
            Some((record, model))
        });
        let next = next.as_ref().map(|(r, m)| (r, m.as_ref()));
        replace_start_events(ctx, None, next, origin);
    }
}

/// Start events of a version stop listening (`old`) or start (`new`): message start events on
/// every partition, timers and signals only on partition 1, so that each fires once.
fn replace_start_events(
    ctx: &mut Ctx<'_, '_, '_>,
    old: Option<LatestVersion>,
    new: Option<(&zest_protocol::ProcessRecord, &zest_model::Process)>,
    origin: bool,
) {
    crate::behaviour::message_subscriptions::replace_start_subscriptions(ctx, old, new);
    if origin {
        crate::behaviour::signal_subscriptions::replace_start_subscriptions(ctx, old, new);
        crate::processors::process_instance::replace_start_timers(ctx, old, new);
    }
}

/// DECISION DELETED for each decision of the graph (in the order they were created), then
/// DECISION_REQUIREMENTS DELETED; the versions before them (if any are left) become the
/// latest, as in Zeebe.
fn delete_decision_requirements(
    ctx: &mut Ctx<'_, '_, '_>,
    key: i64,
    drg: DecisionRequirementsRecord,
) {
    let mut members: Vec<i64> = ctx
        .txn
        .scan_prefix(
            Ks::Decisions,
            &tagged_key(b'm', &key.to_be_bytes()),
            usize::MAX,
        )
        .into_iter()
        .filter_map(|(_, v)| zest_protocol::codec::decode::<LatestVersion>(&v).ok())
        .map(|l| l.key)
        .collect();
    members.sort_unstable();
    for decision_key in members {
        if let Some(decision) = by_key(ctx, decision_key) {
            ctx.event(
                decision_key,
                Intent::Deleted,
                RecordValue::Decision(decision),
            );
        }
    }
    ctx.event(key, Intent::Deleted, RecordValue::DecisionRequirements(drg));
}
