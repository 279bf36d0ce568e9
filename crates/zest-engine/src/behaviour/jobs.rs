//! Creating jobs (an element's own, an execution listener's) and telling the workers waiting
//! for their type.

use zest_model::ListenerEventType;
use zest_protocol::{Intent, JobKind, JobListenerEventType, JobRecord, RecordValue};

use crate::behaviour::variables;
use crate::context::Ctx;
use crate::context::SideEffect;
use crate::types::ElementInstance;
use zest_protocol::JobBatchRecord;

/// Writes JOB CREATED for element instance `inst` (its own job, or an execution listener's)
/// and tells the workers waiting for that type.
pub(crate) fn create_job(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    job_type: String,
    retries: i32,
    custom_headers: std::collections::BTreeMap<String, String>,
    listener: Option<ListenerEventType>,
) {
    let (kind, listener_event_type) = match listener {
        None => (JobKind::BpmnElement, JobListenerEventType::Unspecified),
        Some(ListenerEventType::Start) => (JobKind::ExecutionListener, JobListenerEventType::Start),
        Some(ListenerEventType::End) => (JobKind::ExecutionListener, JobListenerEventType::End),
    };
    create_job_of_kind(
        ctx,
        inst,
        job_type,
        retries,
        custom_headers,
        kind,
        listener_event_type,
    );
}

/// Writes JOB CREATED of kind `kind` for element instance `inst` and tells the workers.
pub(crate) fn create_job_of_kind(
    ctx: &mut Ctx<'_, '_, '_>,
    inst: &ElementInstance,
    job_type: String,
    retries: i32,
    custom_headers: std::collections::BTreeMap<String, String>,
    kind: JobKind,
    listener_event_type: JobListenerEventType,
) {
    let job = JobRecord {
        kind,
        listener_event_type,
        job_type,
        retries,
        deadline: -1,
        custom_headers,
        variables: String::new(),
        element_id: inst.record.element_id.clone(),
        element_instance_key: inst.key,
        process_instance_key: inst.record.process_instance_key,
        bpmn_process_id: inst.record.bpmn_process_id.clone(),
        process_definition_version: inst.record.version,
        process_definition_key: inst.record.process_definition_key,
        tenant_id: inst.record.tenant_id.clone(),
        ..Default::default()
    };
    let job_key = ctx.next_key();
    ctx.event(
        job_key,
        Intent::Created,
        RecordValue::Job(Box::new(job.clone())),
    );
    publish_work(ctx, job_key, &job);
}

/// A job became activatable: activate it at once for an open job stream that has room (JOB_BATCH
/// ACTIVATED with just this job, pushed once the batch commits), or tell the waiting workers
/// that jobs of its type are available. `job` is the job as it is now in state.
pub(crate) fn publish_work(ctx: &mut Ctx<'_, '_, '_>, job_key: i64, job: &JobRecord) {
    let target = ctx.streams.and_then(|s| s.reserve(job_key, job));
    let Some(target) = target else {
        ctx.side_effect(SideEffect::JobsAvailable(job.job_type.clone()));
        return;
    };
    let activated = JobRecord {
        worker: target.worker.clone(),
        deadline: ctx.now + target.timeout,
        timeout: target.timeout,
        variables: String::new(),
        ..job.clone()
    };
    let pushed = JobRecord {
        variables: variables::visible_selected_json(
            ctx,
            job.element_instance_key,
            &target.fetch_variables,
        ),
        ..activated.clone()
    };
    let batch = JobBatchRecord {
        job_type: job.job_type.clone(),
        worker: target.worker,
        timeout: target.timeout,
        max_jobs_to_activate: 1,
        fetch_variables: target.fetch_variables,
        job_keys: vec![job_key],
        jobs: vec![activated],
        truncated: false,
        tenant_ids: vec![job.tenant_id.clone()],
    };
    let key = ctx.next_key();
    ctx.event(key, Intent::Activated, RecordValue::JobBatch(batch));
    ctx.push_job(job_key, pushed);
}
