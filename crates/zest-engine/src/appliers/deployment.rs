//! PROCESS, FORM, DECISION_REQUIREMENTS and DECISION: deployed resources, their latest
//! versions, and their deletion.

use super::*;
use crate::keys::definition_instances::pending_deletion_key;
use crate::keys::tagged_key;
use crate::keys::version_key;
use crate::models::Models;
use crate::state::key_i64;
use crate::state::read_i64;
use crate::state::KeyBuf;
use crate::state::Ks;
use crate::state::Txn;
use crate::types::LatestVersion;
use crate::types::StoredProcess;

/// PROCESS CREATED (a deployed version) and DELETED.
pub(super) fn process(
    txn: &mut Txn<'_>,
    models: &mut Models,
    r: &Record,
    p: &zest_protocol::ProcessRecord,
) {
    match r.intent {
        Intent::Created => {
            txn.put(
                Ks::Processes,
                key_i64(r.key),
                &StoredProcess { record: p.clone() },
            );
            let latest: Option<LatestVersion> =
                txn.get(Ks::ProcessLatest, p.bpmn_process_id.as_bytes());
            if latest.map(|l| l.version < p.version).unwrap_or(true) {
                txn.put(
                    Ks::ProcessLatest,
                    p.bpmn_process_id.as_bytes().to_vec(),
                    &LatestVersion {
                        version: p.version,
                        key: r.key,
                    },
                );
            }
            txn.put(
                Ks::ProcessVersions,
                version_key(&p.bpmn_process_id, p.version),
                &r.key,
            );
        }
        Intent::Deleting => {
            // no new instance starts this version; its instances here run to their end
            txn.put_raw(
                Ks::DefinitionInstances,
                pending_deletion_key(r.key),
                Vec::new(),
            );
            latest_moves_back(txn, r.key, &p.bpmn_process_id);
        }
        Intent::Deleted => {
            txn.delete(Ks::Processes, key_i64(r.key));
            txn.delete(Ks::DefinitionInstances, pending_deletion_key(r.key));
            // the version entry stays: version numbers are not given again, and a lookup by
            // version finds no process behind it
            latest_moves_back(txn, r.key, &p.bpmn_process_id);
            models.remove(r.key);
        }
        _ => {}
    }
}

/// When the version `key` is the latest of its process id, the latest becomes the version
/// before it that is neither deleted nor waiting to be (none when none is left).
fn latest_moves_back(txn: &mut Txn<'_>, key: i64, process_id: &str) {
    let latest: Option<LatestVersion> = txn.get(Ks::ProcessLatest, process_id.as_bytes());
    if latest.is_none_or(|l| l.key != key) {
        return;
    }
    let prefix = KeyBuf::new().str(process_id).build();
    let previous = txn
        .scan_prefix(Ks::ProcessVersions, &prefix, usize::MAX)
        .into_iter()
        .rev()
        .filter_map(|(k, v)| {
            let version_key: i64 = zest_protocol::codec::decode(&v).ok()?;
            let version = read_i64(&k, prefix.len()) as i32;
            let usable = version_key != key
                && txn.contains(Ks::Processes, &key_i64(version_key))
                && !txn.contains(Ks::DefinitionInstances, &pending_deletion_key(version_key));
            usable.then_some(LatestVersion {
                version,
                key: version_key,
            })
        })
        .next();
    match previous {
        Some(l) => txn.put(Ks::ProcessLatest, process_id.as_bytes().to_vec(), &l),
        None => txn.delete(Ks::ProcessLatest, process_id.as_bytes().to_vec()),
    }
}

/// FORM CREATED and DELETED.
pub(super) fn form(txn: &mut Txn<'_>, r: &Record, f: &zest_protocol::FormRecord) {
    match r.intent {
        Intent::Created => {
            txn.put(Ks::Forms, tagged_key(b'k', &r.key.to_be_bytes()), f);
            put_latest(
                txn,
                Ks::Forms,
                tagged_key(b'l', f.form_id.as_bytes()),
                f.version,
                r.key,
            );
        }
        Intent::Deleted => {
            txn.delete(Ks::Forms, tagged_key(b'k', &r.key.to_be_bytes()));
            let previous = previous_version(txn, Ks::Forms, b'k', r.key, |v| {
                let f2: zest_protocol::FormRecord = zest_protocol::codec::decode(v).ok()?;
                (f2.form_id == f.form_id).then_some(f2.version)
            });
            set_latest(
                txn,
                Ks::Forms,
                tagged_key(b'l', f.form_id.as_bytes()),
                r.key,
                previous,
            );
        }
        _ => {}
    }
}

/// DECISION_REQUIREMENTS CREATED and DELETED.
pub(super) fn decision_requirements(
    txn: &mut Txn<'_>,
    models: &mut Models,
    r: &Record,
    d: &zest_protocol::DecisionRequirementsRecord,
) {
    match r.intent {
        Intent::Created => {
            txn.put(Ks::Decisions, tagged_key(b'r', &r.key.to_be_bytes()), d);
            put_latest(
                txn,
                Ks::Decisions,
                tagged_key(b'R', d.decision_requirements_id.as_bytes()),
                d.decision_requirements_version,
                r.key,
            );
        }
        Intent::Deleted => {
            txn.delete(Ks::Decisions, tagged_key(b'r', &r.key.to_be_bytes()));
            let previous = previous_version(txn, Ks::Decisions, b'r', r.key, |v| {
                let d2: zest_protocol::DecisionRequirementsRecord =
                    zest_protocol::codec::decode(v).ok()?;
                (d2.decision_requirements_id == d.decision_requirements_id)
                    .then_some(d2.decision_requirements_version)
            });
            let latest = tagged_key(b'R', d.decision_requirements_id.as_bytes());
            set_latest(txn, Ks::Decisions, latest, r.key, previous);
            models.remove_decision_requirements(r.key);
        }
        _ => {}
    }
}

/// DECISION CREATED and DELETED.
pub(super) fn decision(txn: &mut Txn<'_>, r: &Record, d: &zest_protocol::DecisionRecord) {
    match r.intent {
        Intent::Created => {
            txn.put(Ks::Decisions, tagged_key(b'd', &r.key.to_be_bytes()), d);
            put_latest(
                txn,
                Ks::Decisions,
                tagged_key(b'D', d.decision_id.as_bytes()),
                d.version,
                r.key,
            );
            put_latest(
                txn,
                Ks::Decisions,
                crate::keys::decision::member_key(d.decision_requirements_key, &d.decision_id),
                d.version,
                r.key,
            );
        }
        Intent::Deleted => {
            txn.delete(Ks::Decisions, tagged_key(b'd', &r.key.to_be_bytes()));
            txn.delete(
                Ks::Decisions,
                crate::keys::decision::member_key(d.decision_requirements_key, &d.decision_id),
            );
            let previous = previous_version(txn, Ks::Decisions, b'd', r.key, |v| {
                let d2: zest_protocol::DecisionRecord = zest_protocol::codec::decode(v).ok()?;
                (d2.decision_id == d.decision_id).then_some(d2.version)
            });
            let latest = tagged_key(b'D', d.decision_id.as_bytes());
            set_latest(txn, Ks::Decisions, latest, r.key, previous);
        }
        _ => {}
    }
}

/// Records `key` as the latest version of what `latest_key` names, unless a later version is
/// already recorded.
pub(super) fn put_latest(txn: &mut Txn<'_>, ks: Ks, latest_key: Vec<u8>, version: i32, key: i64) {
    let latest: Option<LatestVersion> = txn.get(ks, &latest_key);
    if latest.map(|l| l.version < version).unwrap_or(true) {
        txn.put(ks, latest_key, &LatestVersion { version, key });
    }
}

/// The newest version left (by version number) among the entries under `tag` (keyed by their
/// 8-byte key) that `version_of` recognizes, leaving out `deleted`.
pub(super) fn previous_version(
    txn: &Txn<'_>,
    ks: Ks,
    tag: u8,
    deleted: i64,
    version_of: impl Fn(&[u8]) -> Option<i32>,
) -> Option<LatestVersion> {
    txn.scan_prefix(ks, &[tag], usize::MAX)
        .into_iter()
        .filter_map(|(k, v)| {
            let key = i64::from_be_bytes(k.get(1..9)?.try_into().ok()?);
            let version = version_of(&v)?;
            (key != deleted).then_some(LatestVersion { version, key })
        })
        .max_by_key(|l| l.version)
}

/// After deleting `deleted`: if it was the latest, `previous` becomes the latest (or none is).
pub(super) fn set_latest(
    txn: &mut Txn<'_>,
    ks: Ks,
    latest_key: Vec<u8>,
    deleted: i64,
    previous: Option<LatestVersion>,
) {
    let latest: Option<LatestVersion> = txn.get(ks, &latest_key);
    if latest.is_some_and(|l| l.key == deleted) {
        match previous {
            Some(p) => txn.put(ks, latest_key, &p),
            None => txn.delete(ks, latest_key),
        }
    }
}
