//! DEPLOYMENT CREATE: validates resources, versions processes, writes PROCESS CREATED events.

use std::collections::HashSet;
use std::sync::Arc;

use zest_protocol::{
    DeploymentRecord, Intent, ProcessMetadata, ProcessRecord, Record, RecordValue, DEFAULT_TENANT,
};

use crate::engine::{Ctx, ProcResult, Rejection};
use crate::state::{key_i64, Ks};
use crate::types::{LatestVersion, StoredProcess};

/// FNV-1a 64: a stable checksum of a resource (equality is confirmed on the bytes).
pub fn checksum(bytes: &[u8]) -> Vec<u8> {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h.to_be_bytes().to_vec()
}

pub fn create(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, d: &DeploymentRecord) -> ProcResult {
    if d.resources.is_empty() {
        return Err(Rejection::invalid_argument(
            "Expected to deploy at least one resource, but none given",
        ));
    }
    let mut errors = Vec::new();
    let mut parsed = Vec::new();
    for res in &d.resources {
        let name = res.resource_name.to_ascii_lowercase();
        if name.ends_with(".bpmn") || name.ends_with(".xml") {
            match zest_model::parse_bpmn(&res.resource_name, &res.resource) {
                Ok(processes) => parsed.push((res, processes)),
                Err(e) => errors.push(e.to_string()),
            }
        } else if name.ends_with(".dmn") || name.ends_with(".form") {
            errors.push(format!(
                "'{}': decisions (.dmn) and forms (.form) are not supported by this version of Zest yet",
                res.resource_name
            ));
        } else {
            errors.push(format!(
                "'{}': unknown resource type; expected a BPMN resource ending with '.bpmn' or '.xml'",
                res.resource_name
            ));
        }
    }
    let mut seen = HashSet::new();
    for (res, processes) in &parsed {
        for p in processes {
            if !seen.insert(p.id.clone()) {
                errors.push(format!(
                    "'{}': the process id '{}' is defined more than once in this deployment",
                    res.resource_name, p.id
                ));
            }
        }
    }
    if !errors.is_empty() {
        return Err(Rejection::invalid_argument(format!(
            "Expected to deploy new resources, but encountered the following errors:\n{}",
            errors.join("\n")
        )));
    }
    let tenant = if d.tenant_id.is_empty() {
        DEFAULT_TENANT.to_string()
    } else {
        d.tenant_id.clone()
    };
    let mut metadata = Vec::new();
    for (res, processes) in parsed {
        let sum = checksum(&res.resource);
        for process in processes {
            let latest: Option<LatestVersion> =
                ctx.txn.get(Ks::ProcessLatest, process.id.as_bytes());
            let duplicate_of = latest.and_then(|l| {
                let stored: StoredProcess = ctx.txn.get(Ks::Processes, &key_i64(l.key))?;
                (stored.record.checksum == sum
                    && stored.record.resource == res.resource
                    && stored.record.resource_name == res.resource_name)
                    .then_some(l)
            });
            let (key, version, duplicate) = match duplicate_of {
                Some(l) => (l.key, l.version, true),
                None => (
                    ctx.next_key(),
                    latest.map(|l| l.version + 1).unwrap_or(1),
                    false,
                ),
            };
            if !duplicate {
                let record = ProcessRecord {
                    bpmn_process_id: process.id.clone(),
                    version,
                    process_definition_key: key,
                    resource_name: res.resource_name.clone(),
                    checksum: sum.clone(),
                    resource: res.resource.clone(),
                    tenant_id: tenant.clone(),
                };
                ctx.event(key, Intent::Created, RecordValue::Process(record.clone()));
                ctx.models.insert(key, Arc::new(process.clone()));
                crate::messages::replace_start_subscriptions(ctx, latest, &record, &process);
                crate::signals::replace_start_subscriptions(ctx, latest, &record, &process);
                crate::instance::replace_start_timers(ctx, latest, &record, &process);
            }
            metadata.push(ProcessMetadata {
                bpmn_process_id: process.id.clone(),
                version,
                process_definition_key: key,
                resource_name: res.resource_name.clone(),
                checksum: sum.clone(),
                duplicate,
                tenant_id: tenant.clone(),
            });
        }
    }
    let deployment = DeploymentRecord {
        resources: d.resources.clone(),
        processes_metadata: metadata,
        tenant_id: tenant,
    };
    let key = ctx.next_key();
    let event = ctx.event(key, Intent::Created, RecordValue::Deployment(deployment));
    ctx.respond(cmd, event);
    Ok(())
}
