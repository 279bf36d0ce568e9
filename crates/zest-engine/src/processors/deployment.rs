//! DEPLOYMENT CREATE: validates resources, versions processes, decisions and forms, writes
//! PROCESS, DECISION_REQUIREMENTS, DECISION and FORM CREATED events.

use std::collections::HashSet;
use std::sync::Arc;

use zest_protocol::{
    DeploymentRecord, DeploymentResource, DeploymentResponse, DistributedDeployment, FormMetadata,
    FormRecord, Intent, ProcessMetadata, ProcessRecord, Record, RecordValue,
};

use crate::behaviour::decisions::by_key;
use crate::behaviour::distribution;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::keys::decision::member_key;
use crate::keys::tagged_key;
use crate::state::{key_i64, Ks};
use crate::types::{LatestVersion, StoredProcess};
use zest_model::dmn::DecisionRequirements;
use zest_protocol::{
    DecisionMetadata, DecisionRecord, DecisionRequirementsMetadata, DecisionRequirementsRecord,
};

/// FNV-1a 64: a stable checksum of a resource (equality is confirmed on the bytes).
pub fn checksum(bytes: &[u8]) -> Vec<u8> {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h.to_be_bytes().to_vec()
}

/// DEPLOYMENT CREATE: parses and checks every resource, then writes the decisions, processes
/// and forms that are new (a resource deployed again unchanged keeps its version) and
/// DEPLOYMENT CREATED, and answers with their metadata.
pub fn create(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, d: &DeploymentRecord) -> ProcResult {
    if d.resources.is_empty() {
        return Err(Rejection::invalid_argument(
            "Expected to deploy at least one resource, but none given",
        ));
    }
    let Resources {
        processes: parsed,
        forms,
        dmns,
    } = parse_resources(d).map_err(|errors| {
        Rejection::invalid_argument(format!(
            "Expected to deploy new resources, but encountered the following errors:\n{}",
            errors.join("\n")
        ))
    })?;
    let tenant = crate::types::tenant(&d.tenant_id);
    // the key of the deployment, which its resources carry
    let key = ctx.next_key();
    let first_record = ctx.records.len();
    // DECISION_REQUIREMENTS and DECISION CREATED come first, like Zeebe's
    let mut decision_requirements_metadata = Vec::new();
    let mut decisions_metadata = Vec::new();
    for (res, drg) in dmns {
        let (drg_meta, decisions) = deploy_decisions(ctx, res, drg, &tenant, key);
        decision_requirements_metadata.push(drg_meta);
        decisions_metadata.extend(decisions);
    }
    let mut metadata = Vec::new();
    for (res, processes) in parsed {
        let sum = checksum(&res.resource);
        for process in processes {
            metadata.push(deploy_process(ctx, res, &sum, process, &tenant));
        }
    }
    // FORM CREATED events, like PROCESS CREATED, come before DEPLOYMENT CREATED
    let mut forms_metadata = Vec::new();
    for (res, id) in forms {
        forms_metadata.push(deploy_form(ctx, res, id, &tenant, key));
    }
    let deployment = DeploymentRecord {
        resources: d.resources.clone(),
        processes_metadata: metadata.clone(),
        tenant_id: tenant.clone(),
    };
    ctx.event(
        key,
        Intent::Created,
        RecordValue::Deployment(deployment.clone()),
    );
    let created = ctx.records[first_record..]
        .iter()
        .filter(|r| r.is_event() && r.intent == Intent::Created)
        .filter(|r| {
            matches!(
                r.value,
                RecordValue::Process(_)
                    | RecordValue::DecisionRequirements(_)
                    | RecordValue::Decision(_)
                    | RecordValue::Form(_)
            )
        })
        .map(|r| (r.key, r.value.clone()))
        .collect();
    distribution::distribute(
        ctx,
        key,
        Intent::Create,
        RecordValue::DistributedDeployment(DistributedDeployment {
            deployment,
            created,
        }),
    );
    let answer = ctx.response_only_record(
        key,
        Intent::Created,
        RecordValue::DeploymentResponse(DeploymentResponse {
            deployment_key: key,
            processes_metadata: metadata,
            forms_metadata,
            tenant_id: tenant,
            decision_requirements_metadata,
            decisions_metadata,
        }),
    );
    ctx.respond(cmd, answer);
    Ok(())
}

/// DEPLOYMENT CREATE from partition 1 (command distribution): the same process, decision and
/// form versions under partition 1's keys, the message start events of new latest versions
/// (messages are published on every partition; timer and signal start events stay on partition
/// 1, so each fires once), DEPLOYMENT CREATED, and the acknowledgement. A deployment sent again
/// is only acknowledged again.
pub fn create_distributed(
    ctx: &mut Ctx<'_, '_, '_>,
    cmd: &Record,
    d: &DistributedDeployment,
) -> ProcResult {
    if !distribution::already_processed(ctx, cmd) {
        for (key, value) in &d.created {
            match value {
                RecordValue::Process(p) => receive_process(ctx, *key, p),
                _ => {
                    ctx.event(*key, Intent::Created, value.clone());
                }
            }
        }
        ctx.event(
            cmd.key,
            Intent::Created,
            RecordValue::Deployment(d.deployment.clone()),
        );
    }
    distribution::acknowledge(ctx, cmd);
    Ok(())
}

/// One process version of a distributed deployment: PROCESS CREATED, and its message start
/// events when it is the latest version here.
fn receive_process(ctx: &mut Ctx<'_, '_, '_>, key: i64, p: &ProcessRecord) {
    let latest: Option<LatestVersion> =
        ctx.txn.get(Ks::ProcessLatest, p.bpmn_process_id.as_bytes());
    ctx.event(key, Intent::Created, RecordValue::Process(p.clone()));
    // partition 1 parsed it before it was sent
    let parsed = zest_model::parse_bpmn(&p.resource_name, &p.resource)
        .ok()
        .and_then(|all| all.into_iter().find(|m| m.id == p.bpmn_process_id));
    let Some(process) = parsed else {
        return;
    };
    ctx.models.insert(key, Arc::new(process.clone()));
    if latest.is_none_or(|l| l.version < p.version) {
        crate::behaviour::message_subscriptions::replace_start_subscriptions(
            ctx,
            latest,
            Some((p, &process)),
        );
    }
}

/// The resources of a deployment, parsed and checked.
struct Resources<'d> {
    processes: Vec<(&'d DeploymentResource, Vec<zest_model::Process>)>,
    forms: Vec<(&'d DeploymentResource, String)>,
    dmns: Vec<(&'d DeploymentResource, DecisionRequirements)>,
}

/// Parses every resource by its name's extension and checks that ids are unique within the
/// deployment; Err with every problem found.
fn parse_resources(d: &DeploymentRecord) -> Result<Resources<'_>, Vec<String>> {
    let mut errors = Vec::new();
    let mut parsed = Vec::new();
    let mut forms = Vec::new();
    let mut dmns = Vec::new();
    for res in &d.resources {
        let name = res.resource_name.to_ascii_lowercase();
        if name.ends_with(".bpmn") || name.ends_with(".xml") {
            match zest_model::parse_bpmn(&res.resource_name, &res.resource) {
                Ok(processes) => parsed.push((res, processes)),
                Err(e) => errors.push(e.to_string()),
            }
        } else if name.ends_with(".form") {
            match form_id(res) {
                Ok(id) => forms.push((res, id)),
                Err(e) => errors.push(e),
            }
        } else if name.ends_with(".dmn") {
            match zest_model::parse_dmn(&res.resource_name, &res.resource) {
                // a decision id already deployed in another graph gets a new version in this
                // one, as in Zeebe (only ids repeated within one deployment are refused)
                Ok(drg) => dmns.push((res, drg)),
                Err(e) => errors.push(e.to_string()),
            }
        } else {
            errors.push(format!(
                "'{}': unknown resource type; expected a BPMN resource ending with '.bpmn' or '.xml', a DMN resource ending with '.dmn', or a form ending with '.form'",
                res.resource_name
            ));
        }
    }
    let mut seen_forms = HashSet::new();
    for (res, id) in &forms {
        if !seen_forms.insert(id.clone()) {
            errors.push(format!(
                "Expected the form ids to be unique within a deployment but found a duplicated id '{id}' in the resources '{}'",
                res.resource_name
            ));
        }
    }
    let mut seen_drgs = HashSet::new();
    let mut seen_decisions = HashSet::new();
    for (res, drg) in &dmns {
        if !seen_drgs.insert(drg.id.clone()) {
            errors.push(format!(
                "Expected the decision requirements ids to be unique within a deployment but found a duplicated id '{}' in the resources '{}'",
                drg.id, res.resource_name
            ));
        }
        for decision in &drg.decisions {
            if !seen_decisions.insert(decision.id.clone()) {
                errors.push(format!(
                    "Expected the decision ids to be unique within a deployment but found a duplicated id '{}' in the resources '{}'",
                    decision.id, res.resource_name
                ));
            }
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
        return Err(errors);
    }
    Ok(Resources {
        processes: parsed,
        forms,
        dmns,
    })
}

/// Deploys one process of a resource: PROCESS CREATED with the next version (and its start
/// events' subscriptions and timers), unless the latest version is the same resource.
fn deploy_process(
    ctx: &mut Ctx<'_, '_, '_>,
    res: &DeploymentResource,
    sum: &[u8],
    process: zest_model::Process,
    tenant: &str,
) -> ProcessMetadata {
    let latest: Option<LatestVersion> = ctx.txn.get(Ks::ProcessLatest, process.id.as_bytes());
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
            highest_version(ctx, &process.id).max(latest.map(|l| l.version).unwrap_or(0)) + 1,
            false,
        ),
    };
    if !duplicate {
        let record = ProcessRecord {
            bpmn_process_id: process.id.clone(),
            version,
            process_definition_key: key,
            resource_name: res.resource_name.clone(),
            checksum: sum.to_vec(),
            resource: res.resource.clone(),
            tenant_id: tenant.to_string(),
        };
        ctx.event(key, Intent::Created, RecordValue::Process(record.clone()));
        ctx.models.insert(key, Arc::new(process.clone()));
        let next = Some((&record, &process));
        crate::behaviour::message_subscriptions::replace_start_subscriptions(ctx, latest, next);
        crate::behaviour::signal_subscriptions::replace_start_subscriptions(ctx, latest, next);
        crate::processors::process_instance::replace_start_timers(ctx, latest, next);
    }
    ProcessMetadata {
        bpmn_process_id: process.id.clone(),
        version,
        process_definition_key: key,
        resource_name: res.resource_name.clone(),
        checksum: sum.to_vec(),
        duplicate,
        tenant_id: tenant.to_string(),
    }
}

/// The `id` of a Camunda form (JSON), with Zeebe's errors for a form without one.
fn form_id(res: &DeploymentResource) -> Result<String, String> {
    let doc: serde_json::Value = serde_json::from_slice(&res.resource)
        .map_err(|e| format!("Failed to parse form JSON. '{}': {e}", res.resource_name))?;
    match doc.get("id") {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(serde_json::Value::Number(n)) => Ok(n.to_string()),
        _ => Err(format!(
            "Expected the form id to be present, but none given ('{}')",
            res.resource_name
        )),
    }
}

/// A form of the deployment: a new version (FORM CREATED), or the latest one again when the
/// resource did not change.
fn deploy_form(
    ctx: &mut Ctx<'_, '_, '_>,
    res: &DeploymentResource,
    id: String,
    tenant: &str,
    deployment_key: i64,
) -> FormMetadata {
    let sum = checksum(&res.resource);
    let latest: Option<LatestVersion> = ctx.txn.get(Ks::Forms, &tagged_key(b'l', id.as_bytes()));
    let duplicate_of = latest.filter(|l| {
        ctx.txn
            .get::<FormRecord>(Ks::Forms, &tagged_key(b'k', &l.key.to_be_bytes()))
            .is_some_and(|f| {
                f.checksum == sum
                    && f.resource == res.resource
                    && f.resource_name == res.resource_name
            })
    });
    if let Some(l) = duplicate_of {
        return FormMetadata {
            form_id: id,
            version: l.version,
            form_key: l.key,
            resource_name: res.resource_name.clone(),
            duplicate: true,
            tenant_id: tenant.to_string(),
        };
    }
    let version = latest.map(|l| l.version + 1).unwrap_or(1);
    let form_key = ctx.next_key();
    let record = FormRecord {
        form_id: id.clone(),
        version,
        form_key,
        resource_name: res.resource_name.clone(),
        checksum: sum,
        resource: res.resource.clone(),
        tenant_id: tenant.to_string(),
        deployment_key,
    };
    ctx.event(form_key, Intent::Created, RecordValue::Form(record));
    FormMetadata {
        form_id: id,
        version,
        form_key,
        resource_name: res.resource_name.clone(),
        duplicate: false,
        tenant_id: tenant.to_string(),
    }
}

/// The highest version a process id ever had (deleted versions included: their numbers are
/// not given again), 0 when it never was deployed.
fn highest_version(ctx: &Ctx<'_, '_, '_>, process_id: &str) -> i32 {
    let prefix = crate::state::KeyBuf::new().str(process_id).build();
    ctx.txn
        .scan_prefix(Ks::ProcessVersions, &prefix, usize::MAX)
        .last()
        .map(|(k, _)| crate::state::read_i64(k, prefix.len()) as i32)
        .unwrap_or(0)
}

/// Deploys one DMN resource: a new version of its graph and decisions, or the latest ones
/// again when the resource did not change.
fn deploy_decisions(
    ctx: &mut Ctx<'_, '_, '_>,
    res: &DeploymentResource,
    drg: DecisionRequirements,
    tenant: &str,
    deployment_key: i64,
) -> (DecisionRequirementsMetadata, Vec<DecisionMetadata>) {
    let sum = checksum(&res.resource);
    let latest_drg: Option<LatestVersion> = ctx
        .txn
        .get(Ks::Decisions, &tagged_key(b'R', drg.id.as_bytes()));
    let duplicate_of = latest_drg.and_then(|l| {
        let stored: DecisionRequirementsRecord = ctx
            .txn
            .get(Ks::Decisions, &tagged_key(b'r', &l.key.to_be_bytes()))?;
        (stored.checksum == sum
            && stored.resource == res.resource
            && stored.resource_name == res.resource_name)
            .then_some(stored)
    });
    if let Some(stored) = duplicate_of {
        let decisions = drg
            .decisions
            .iter()
            .filter_map(|d| {
                let l: LatestVersion = ctx.txn.get(
                    Ks::Decisions,
                    &member_key(stored.decision_requirements_key, &d.id),
                )?;
                let record = by_key(ctx, l.key)?;
                Some(decision_metadata(&record, true))
            })
            .collect();
        return (drg_metadata(&stored, true), decisions);
    }
    let drg_key = ctx.next_key();
    let record = DecisionRequirementsRecord {
        decision_requirements_id: drg.id.clone(),
        decision_requirements_name: drg.name.clone(),
        decision_requirements_version: latest_drg.map(|l| l.version + 1).unwrap_or(1),
        decision_requirements_key: drg_key,
        namespace: drg.namespace.clone(),
        resource_name: res.resource_name.clone(),
        checksum: sum,
        resource: res.resource.clone(),
        tenant_id: tenant.to_string(),
        deployment_key,
    };
    ctx.event(
        drg_key,
        Intent::Created,
        RecordValue::DecisionRequirements(record.clone()),
    );
    let mut decisions = Vec::new();
    for d in &drg.decisions {
        let previous: Option<LatestVersion> = ctx
            .txn
            .get(Ks::Decisions, &tagged_key(b'D', d.id.as_bytes()));
        let key = ctx.next_key();
        let decision = DecisionRecord {
            decision_id: d.id.clone(),
            decision_name: d.name.clone(),
            version: previous.map(|l| l.version + 1).unwrap_or(1),
            decision_key: key,
            decision_requirements_id: drg.id.clone(),
            decision_requirements_key: drg_key,
            tenant_id: tenant.to_string(),
            deployment_key,
        };
        ctx.event(
            key,
            Intent::Created,
            RecordValue::Decision(decision.clone()),
        );
        decisions.push(decision_metadata(&decision, false));
    }
    ctx.models
        .insert_decision_requirements(drg_key, Arc::new(drg));
    (drg_metadata(&record, false), decisions)
}

fn drg_metadata(r: &DecisionRequirementsRecord, duplicate: bool) -> DecisionRequirementsMetadata {
    DecisionRequirementsMetadata {
        decision_requirements_id: r.decision_requirements_id.clone(),
        decision_requirements_name: r.decision_requirements_name.clone(),
        decision_requirements_version: r.decision_requirements_version,
        decision_requirements_key: r.decision_requirements_key,
        namespace: r.namespace.clone(),
        resource_name: r.resource_name.clone(),
        duplicate,
        tenant_id: r.tenant_id.clone(),
    }
}

fn decision_metadata(d: &DecisionRecord, duplicate: bool) -> DecisionMetadata {
    DecisionMetadata {
        decision_id: d.decision_id.clone(),
        decision_name: d.decision_name.clone(),
        version: d.version,
        decision_key: d.decision_key,
        decision_requirements_id: d.decision_requirements_id.clone(),
        decision_requirements_key: d.decision_requirements_key,
        duplicate,
        tenant_id: d.tenant_id.clone(),
    }
}
