//! Records -> gRPC protocol messages (errors are mapped in `commands::CommandError`).

use zest_protocol::JobRecord;

use crate::proto;

fn job_kind(kind: zest_protocol::JobKind) -> proto::activated_job::JobKind {
    use proto::activated_job::JobKind as P;
    use zest_protocol::JobKind as K;
    match kind {
        K::BpmnElement => P::BpmnElement,
        K::ExecutionListener => P::ExecutionListener,
        K::TaskListener => P::TaskListener,
        K::AdHocSubProcess => P::AdHocSubProcess,
    }
}

fn listener_event_type(
    t: zest_protocol::JobListenerEventType,
) -> proto::activated_job::ListenerEventType {
    use proto::activated_job::ListenerEventType as P;
    use zest_protocol::JobListenerEventType as L;
    match t {
        L::Unspecified => P::Unspecified,
        L::Start => P::Start,
        L::End => P::End,
        L::Creating => P::Creating,
        L::Assigning => P::Assigning,
        L::Updating => P::Updating,
        L::Completing => P::Completing,
        L::Canceling => P::Canceling,
    }
}

/// The job as a worker gets it, taking the record's texts (the variables are the instance's,
/// often the largest part of the answer) instead of copying them.
pub fn activated_job(key: i64, j: JobRecord) -> proto::ActivatedJob {
    let custom_headers = serde_json::to_string(&j.custom_headers).unwrap_or_else(|_| "{}".into());
    let user_task = (j.kind == zest_protocol::JobKind::TaskListener)
        .then(|| user_task_properties(&j.custom_headers));
    proto::ActivatedJob {
        key,
        r#type: j.job_type,
        process_instance_key: j.process_instance_key,
        bpmn_process_id: j.bpmn_process_id,
        process_definition_version: j.process_definition_version,
        process_definition_key: j.process_definition_key,
        element_id: j.element_id,
        element_instance_key: j.element_instance_key,
        custom_headers,
        worker: j.worker,
        retries: j.retries,
        deadline: j.deadline,
        variables: if j.variables.is_empty() {
            "{}".into()
        } else {
            j.variables
        },
        tenant_id: j.tenant_id,
        user_task,
        kind: job_kind(j.kind) as i32,
        listener_event_type: listener_event_type(j.listener_event_type) as i32,
        tags: Vec::new(),
    }
}

/// The user task of a task listener's job, from the headers the engine gives such a job
/// (`zest_protocol::user_task_headers`).
fn user_task_properties(
    headers: &std::collections::BTreeMap<String, String>,
) -> proto::UserTaskProperties {
    use zest_protocol::user_task_headers as h;
    let text = |name: &str| headers.get(name).filter(|v| !v.is_empty()).cloned();
    let list = |name: &str| -> Vec<String> {
        headers
            .get(name)
            .and_then(|v| serde_json::from_str(v).ok())
            .unwrap_or_default()
    };
    proto::UserTaskProperties {
        action: text(h::ACTION),
        assignee: text(h::ASSIGNEE),
        candidate_groups: list(h::CANDIDATE_GROUPS),
        candidate_users: list(h::CANDIDATE_USERS),
        changed_attributes: list(h::CHANGED_ATTRIBUTES),
        due_date: text(h::DUE_DATE),
        follow_up_date: text(h::FOLLOW_UP_DATE),
        form_key: text(h::FORM_KEY).and_then(|v| v.parse().ok()),
        priority: text(h::PRIORITY).and_then(|v| v.parse().ok()),
        user_task_key: text(h::USER_TASK_KEY).and_then(|v| v.parse().ok()),
    }
}
