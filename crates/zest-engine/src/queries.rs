//! Read-only lookups of committed state for the gateway's queries (the REST API): where the
//! engine keeps deployed processes and forms, so that no caller needs the key layout.

use zest_protocol::{codec, FormRecord, ProcessRecord};

use crate::keys::tagged_key;
use crate::state::{key_i64, Ks, StateRead};
use crate::types::{LatestVersion, StoredProcess};

/// The deployed process version with this key.
pub fn process(state: &dyn StateRead, key: i64) -> Option<ProcessRecord> {
    let bytes = state.get(Ks::Processes, &key_i64(key))?;
    codec::decode::<StoredProcess>(&bytes)
        .ok()
        .map(|p| p.record)
}

/// The deployed form version with this key.
pub fn form(state: &dyn StateRead, key: i64) -> Option<FormRecord> {
    let bytes = state.get(Ks::Forms, &tagged_key(b'k', &key.to_be_bytes()))?;
    codec::decode(&bytes).ok()
}

/// The latest version of the form with this id.
pub fn latest_form(state: &dyn StateRead, form_id: &str) -> Option<FormRecord> {
    let bytes = state.get(Ks::Forms, &tagged_key(b'l', form_id.as_bytes()))?;
    let latest: LatestVersion = codec::decode(&bytes).ok()?;
    form(state, latest.key)
}

/// Unfinished batch operations (partition 1), in key order, at most `limit`.
pub fn batch_operations(
    state: &dyn StateRead,
    limit: usize,
) -> Vec<zest_protocol::BatchOperationRecord> {
    let mut out = Vec::new();
    state.scan_prefix(Ks::BatchOperations, &[], &mut |_, v| {
        if let Ok(op) = codec::decode(v) {
            out.push(op);
        }
        out.len() < limit
    });
    out
}

pub use crate::behaviour::distribution::pending_distributions;
pub use crate::behaviour::subscriptions_in_flight::subscription_commands_to_resend;

/// For the data format upgrade that builds the index of process instances by version
/// (`Ks::DefinitionInstances`): the index key of the element instance stored as `value` in
/// `Ks::ElementInstances`, when it is a process instance's own.
pub fn definition_instance_entry(value: &[u8]) -> Option<Vec<u8>> {
    let inst: crate::types::ElementInstance = codec::decode(value).ok()?;
    crate::keys::definition_instances::entry(&inst.record, inst.key)
}

/// The user with this username, with its password's hash.
pub fn user(state: &dyn StateRead, username: &str) -> Option<zest_protocol::UserRecord> {
    let bytes = state.get(Ks::Identities, &crate::keys::identity::user_key(username))?;
    codec::decode(&bytes).ok()
}

/// True when some user holds the `admin` role (`POST /v2/setup/user` is closed then).
pub fn has_admin(state: &dyn StateRead) -> bool {
    let mut found = false;
    state.scan_prefix(
        Ks::Identities,
        crate::keys::identity::ADMINS,
        &mut |_, _| {
            found = true;
            false
        },
    );
    found
}

/// True when the user is a member of the `admin` role.
pub fn is_admin(state: &dyn StateRead, username: &str) -> bool {
    state
        .get(Ks::Identities, &crate::keys::identity::admin_key(username))
        .is_some()
}
