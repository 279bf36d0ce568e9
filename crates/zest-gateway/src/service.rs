use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use prost::Message;
use tokio::sync::broadcast::error::RecvError;
use tonic::{Code, Request, Response, Status};
use zest_broker::{Broker, JobStream, JobStreamSpec, PushedJob};
use zest_engine::new_command;
use zest_protocol::{
    BpmnElementType, BpmnEventType, DecisionEvaluationRecord, DeploymentRecord, DeploymentResource,
    DeploymentResponse, ErrorType, IncidentRecord, Intent, JobBatchRecord, JobRecord,
    MessageRecord, PartitionId, ProcessInstanceCreationRecord, ProcessInstanceRecord, Record,
    RecordValue, VariableDocumentRecord, VariableDocumentUpdateSemantic, DEFAULT_TENANT,
};

use crate::convert::{activated_job, broker_status, expect_event, variables_document};
use crate::proto;
use crate::proto::gateway_server::Gateway;

#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Largest request accepted, in bytes (Zeebe's default: 4 MiB).
    pub max_message_size: usize,
    /// Long-polling time of ActivateJobs when the request gives none (requestTimeout 0).
    pub default_long_polling: Duration,
    /// How long CreateProcessInstanceWithResult waits when the request gives no timeout.
    pub default_request_timeout: Duration,
    /// Version reported by Topology.
    pub version: String,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            max_message_size: 4 * 1024 * 1024,
            default_long_polling: Duration::from_secs(10),
            default_request_timeout: Duration::from_secs(15),
            version: "8.8.0".into(),
        }
    }
}

#[derive(Clone)]
pub struct GatewayService {
    broker: Arc<Broker>,
    config: GatewayConfig,
    /// Becomes true when the node stops: open job streams and parked long polls end, so the
    /// server's graceful shutdown does not wait on them forever.
    shutdown: Option<tokio::sync::watch::Receiver<bool>>,
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

impl GatewayService {
    pub fn new(broker: Arc<Broker>, config: GatewayConfig) -> Self {
        GatewayService {
            broker,
            config,
            shutdown: None,
        }
    }

    /// Ends job streams and long polls once `shutdown` turns true.
    pub fn with_shutdown(mut self, shutdown: tokio::sync::watch::Receiver<bool>) -> Self {
        self.shutdown = Some(shutdown);
        self
    }

    /// Activates up to `max` jobs like `wanted` (type, worker, timeout, variables, tenants) on
    /// one partition: the one command behind long polling and job streams alike.
    async fn activate(
        &self,
        partition: PartitionId,
        wanted: &JobBatchRecord,
        max: i32,
    ) -> Result<Vec<PushedJob>, Status> {
        let batch = JobBatchRecord {
            max_jobs_to_activate: max,
            ..wanted.clone()
        };
        let cmd = new_command(-1, Intent::Activate, RecordValue::JobBatch(batch), -1, -1);
        let event = self.submit(partition, cmd).await?;
        Ok(match event.value {
            RecordValue::JobBatch(b) => b
                .job_keys
                .iter()
                .zip(b.jobs)
                .map(|(&key, job)| PushedJob { key, job })
                .collect(),
            _ => Vec::new(),
        })
    }

    /// Jobs activated for polls count in the node's share with the job streams'
    /// (`job_stream_bytes`), from each partition's answer until the gateway hands the batch to
    /// the gRPC layer (tonic's encoding and HTTP/2's buffers are not counted). While the share
    /// is full, a long poll waits as it would for jobs to appear: false when it should end
    /// instead (no long polling, its deadline, the client gone or the node stopping).
    async fn wait_for_job_room<T: Send>(
        &self,
        tx: &tokio::sync::mpsc::Sender<T>,
        deadline: Option<tokio::time::Instant>,
    ) -> bool {
        if self.broker.has_job_room() {
            return true;
        }
        let Some(deadline) = deadline else {
            return false;
        };
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => false,
            _ = tx.closed() => false,
            _ = self.stopping() => false,
            _ = self.broker.job_room() => true,
        }
    }

    /// Resolves once the node is stopping (never, without a shutdown signal).
    async fn stopping(&self) {
        match self.shutdown.clone() {
            Some(mut rx) => {
                let _ = rx.wait_for(|stop| *stop).await;
            }
            None => std::future::pending().await,
        }
    }

    pub fn config(&self) -> &GatewayConfig {
        &self.config
    }

    fn check_size<M: Message>(&self, msg: &M) -> Result<(), Status> {
        let len = msg.encoded_len();
        if len > self.config.max_message_size {
            return Err(Status::resource_exhausted(format!(
                "Expected the request to be at most {} bytes (the maximum message size), but it was {len} bytes",
                self.config.max_message_size
            )));
        }
        Ok(())
    }

    async fn submit(&self, partition: PartitionId, command: Record) -> Result<Record, Status> {
        let answer = self
            .broker
            .submit(partition, command)
            .await
            .map_err(broker_status)?;
        expect_event(answer)
    }

    /// A process instance creation on `partition`. Deployments are distributed from partition 1
    /// to the others after they are answered (as in Zeebe), so right after a deployment another
    /// partition may not know the process yet: then the instance is created on partition 1,
    /// which has every deployment first.
    async fn submit_creation(
        &self,
        partition: PartitionId,
        command: Record,
    ) -> Result<Record, Status> {
        if partition == 1 {
            return self.submit(1, command).await;
        }
        let (key, intent) = (command.key, command.intent);
        // no copy kept for the retry: a call with result holds it until its instance completes
        let answer = self
            .broker
            .submit(partition, command)
            .await
            .map_err(broker_status)?;
        if answer.record_type == zest_protocol::RecordType::CommandRejection
            && answer.rejection_type == zest_protocol::RejectionType::NotFound
        {
            // a rejection carries its command's value: the same command, on partition 1
            return self
                .submit(1, new_command(key, intent, answer.value, -1, -1))
                .await;
        }
        expect_event(answer)
    }

    /// The partition of a key, or NOT_FOUND with the command's wording when no partition has it.
    fn route(&self, key: i64, not_found: impl FnOnce() -> String) -> Result<PartitionId, Status> {
        let p = self.broker.partition_of(key);
        if key <= 0 || p < 1 || p > self.broker.partition_count() {
            return Err(Status::not_found(not_found()));
        }
        Ok(p)
    }

    async fn deploy(
        &self,
        resources: Vec<DeploymentResource>,
        tenant: String,
    ) -> Result<(i64, DeploymentResponse), Status> {
        if resources.is_empty() {
            return Err(Status::invalid_argument(
                "Expected to deploy at least one resource, but none given",
            ));
        }
        let value = RecordValue::Deployment(DeploymentRecord {
            resources,
            processes_metadata: Vec::new(),
            tenant_id: tenant,
        });
        let event = self
            .submit(1, new_command(-1, Intent::Create, value, -1, -1))
            .await?;
        match event.value {
            RecordValue::DeploymentResponse(d) => Ok((event.key, d)),
            _ => Err(Status::internal("unexpected answer to a deployment")),
        }
    }

    fn creation_record(
        &self,
        r: &mut proto::CreateProcessInstanceRequest,
    ) -> Result<ProcessInstanceCreationRecord, Status> {
        if !r.start_instructions.is_empty() {
            return Err(Status::invalid_argument(
                "Start instructions are not supported by this version of Zest yet; create the instance without them",
            ));
        }
        if r.bpmn_process_id.is_empty() && r.process_definition_key <= 0 {
            return Err(Status::invalid_argument(
                "Expected at least a bpmnProcessId or a key greater than -1, but none given",
            ));
        }
        Ok(ProcessInstanceCreationRecord {
            bpmn_process_id: r.bpmn_process_id.clone(),
            version: if r.version == 0 { -1 } else { r.version },
            process_definition_key: r.process_definition_key,
            variables: variables_document(std::mem::take(&mut r.variables), "variables")?,
            process_instance_key: -1,
            fetch_variables: Vec::new(),
            tenant_id: tenant(&r.tenant_id),
        })
    }
}

fn tenant(t: &str) -> String {
    if t.is_empty() {
        DEFAULT_TENANT.to_string()
    } else {
        t.to_string()
    }
}

fn process_metadata(d: &DeploymentResponse) -> Vec<proto::ProcessMetadata> {
    d.processes_metadata
        .iter()
        .map(|p| proto::ProcessMetadata {
            bpmn_process_id: p.bpmn_process_id.clone(),
            version: p.version,
            process_definition_key: p.process_definition_key,
            resource_name: p.resource_name.clone(),
            tenant_id: p.tenant_id.clone(),
        })
        .collect()
}

fn job_command(key: i64, intent: Intent, job: JobRecord) -> Record {
    new_command(key, intent, RecordValue::Job(Box::new(job)), -1, -1)
}

/// What a worker asks for, from ActivateJobs or StreamActivatedJobs (`verb` names the call in
/// errors): a non-blank type and a timeout of at least 1 ms. The batch size is filled in per
/// activation.
fn job_request(
    verb: &str,
    job_type: &str,
    worker: &str,
    timeout: i64,
    fetch_variables: &[String],
    tenant_ids: &[String],
) -> Result<JobBatchRecord, Status> {
    if job_type.trim().is_empty() {
        return Err(Status::invalid_argument(format!(
            "Expected to {verb} jobs of a type, but the type was blank"
        )));
    }
    if timeout < 1 {
        return Err(Status::invalid_argument(format!(
            "Expected to {verb} jobs with a timeout of at least 1 ms, but it was {timeout}"
        )));
    }
    Ok(JobBatchRecord {
        job_type: job_type.to_string(),
        worker: worker.to_string(),
        timeout,
        fetch_variables: fetch_variables.to_vec(),
        tenant_ids: tenant_ids.to_vec(),
        ..Default::default()
    })
}

/// A CompleteJob result: the ad-hoc sub-process kind (the elements to activate, whether the
/// sub-process is done), or the user task kind (a task listener that denies or corrects its
/// task; the corrected attributes are the corrections given, as Zeebe's gateway lists them).
fn job_result(r: proto::JobResult) -> Result<zest_protocol::JobResult, Status> {
    use zest_protocol::{AdHocActivateElement, JobResult, JobResultType};
    match r.r#type.as_deref().unwrap_or("userTask") {
        "adHocSubProcess" => {
            let mut activate_elements = Vec::with_capacity(r.activate_elements.len());
            for (i, e) in r.activate_elements.into_iter().enumerate() {
                if e.element_id.trim().is_empty() {
                    return Err(Status::invalid_argument(format!(
                        "Property 'result.activateElements[{i}].elementId' is empty; name an element of the ad-hoc sub-process"
                    )));
                }
                let variables = variables_document(
                    e.variables,
                    &format!("result.activateElements[{i}].variables"),
                )?;
                activate_elements.push(AdHocActivateElement {
                    element_id: e.element_id,
                    variables,
                });
            }
            Ok(JobResult {
                result_type: JobResultType::AdHocSubProcess,
                activate_elements,
                completion_condition_fulfilled: r
                    .is_completion_condition_fulfilled
                    .unwrap_or(false),
                cancel_remaining_instances: r.is_cancel_remaining_instances.unwrap_or(false),
                ..Default::default()
            })
        }
        "userTask" => {
            let mut result = JobResult {
                denied: r.denied.unwrap_or(false),
                denied_reason: r.denied_reason.unwrap_or_default(),
                ..Default::default()
            };
            if let Some(c) = r.corrections {
                let (out, corrected) = (&mut result.corrections, &mut result.corrected_attributes);
                if let Some(v) = c.assignee {
                    out.assignee = v;
                    corrected.push("assignee".into());
                }
                if let Some(v) = c.due_date {
                    out.due_date = v;
                    corrected.push("dueDate".into());
                }
                if let Some(v) = c.follow_up_date {
                    out.follow_up_date = v;
                    corrected.push("followUpDate".into());
                }
                if let Some(v) = c.candidate_users {
                    out.candidate_users = v.values;
                    corrected.push("candidateUsersList".into());
                }
                if let Some(v) = c.candidate_groups {
                    out.candidate_groups = v.values;
                    corrected.push("candidateGroupsList".into());
                }
                if let Some(v) = c.priority {
                    out.priority = v;
                    corrected.push("priority".into());
                }
            }
            Ok(result)
        }
        other => Err(Status::invalid_argument(format!(
            "Property 'result.type' must be one of [userTask, adHocSubProcess], but was '{other}'"
        ))),
    }
}

#[tonic::async_trait]
impl Gateway for GatewayService {
    type ActivateJobsStream = BoxStream<proto::ActivateJobsResponse>;
    type StreamActivatedJobsStream = BoxStream<proto::ActivatedJob>;

    async fn activate_jobs(
        &self,
        request: Request<proto::ActivateJobsRequest>,
    ) -> Result<Response<Self::ActivateJobsStream>, Status> {
        let r = request.into_inner();
        let wanted = job_request(
            "activate",
            &r.r#type,
            &r.worker,
            r.timeout,
            &r.fetch_variable,
            &r.tenant_ids,
        )?;
        if r.max_jobs_to_activate < 1 {
            // a broker's gateway hands out at most maxJobsToActivate jobs over the partitions:
            // with none wanted it asks no partition and ends the call without jobs (zbctl's
            // `activate jobs --maxJobsToActivate 0` prints {"jobs": []})
            return Ok(Response::new(Box::pin(tokio_stream::empty())));
        }
        let long_polling = match r.request_timeout {
            0 => Some(self.config.default_long_polling),
            t if t < 0 => None,
            t => Some(Duration::from_millis(t as u64)),
        };
        let deadline = long_polling.map(|d| tokio::time::Instant::now() + d);
        let this = self.clone();
        let stream = async_stream(move |tx| async move {
            // Subscribe before the first attempt so that no notification is missed.
            let mut notifications = this.broker.subscribe_jobs();
            loop {
                if !this.wait_for_job_room(&tx, deadline).await {
                    return;
                }
                let mut answered = false;
                // counted from each partition's answer on (see `wait_for_job_room`)
                let mut held = this.broker.hold_polled_jobs();
                let mut remaining = r.max_jobs_to_activate;
                // every partition, starting at the next in turn (as Zeebe's gateway), so that
                // no partition's jobs wait behind another's
                let count = this.broker.partition_count();
                let first = this.broker.next_activation_partition();
                // a partition that fails is passed over, as Zeebe's gateway does: the jobs
                // the others activated are answered (dropped, they would wait for their
                // timeout), and the failure only when no partition gave a job
                let mut failure = None;
                for partition in (0..count).map(|i| (first - 1 + i) % count + 1) {
                    if remaining < 1 {
                        break;
                    }
                    match this.activate(partition, &wanted, remaining).await {
                        Ok(activated) if activated.is_empty() => {}
                        Ok(activated) => {
                            remaining -= activated.len() as i32;
                            held.add(&activated);
                            // each partition's jobs in a response of their own, as Zeebe's
                            // gateway answers: a partition's batch fits a client's default
                            // 4 MiB message limit (the engine bounds its variables), the
                            // batches of several together may not
                            let jobs = activated
                                .into_iter()
                                .map(|j| activated_job(j.key, j.job))
                                .collect();
                            if tx
                                .send(Ok(proto::ActivateJobsResponse { jobs }))
                                .await
                                .is_err()
                            {
                                return; // the client went
                            }
                            answered = true;
                        }
                        Err(status) => {
                            failure.get_or_insert(status);
                        }
                    }
                }
                if answered {
                    drop(held);
                    return;
                }
                if let Some(status) = failure {
                    let _ = tx.send(Err(status)).await;
                    return;
                }
                let Some(deadline) = deadline else { return };
                // Park until a job of this type appears, the deadline passes, the client goes
                // or the node stops (then the answer is an empty batch, as at the deadline).
                loop {
                    tokio::select! {
                        _ = tokio::time::sleep_until(deadline) => return,
                        _ = tx.closed() => return,
                        _ = this.stopping() => return,
                        n = notifications.recv() => match n {
                            Ok(t) if t == r.r#type => break,
                            Ok(_) => continue,
                            Err(RecvError::Lagged(_)) => break,
                            Err(RecvError::Closed) => return,
                        }
                    }
                }
            }
        });
        Ok(Response::new(stream))
    }

    /// Job push, as Zeebe does it: the stream registers with the broker, and a job of its type
    /// that becomes activatable while the stream has room is activated in the batch that makes
    /// it activatable and pushed once that batch commits (see `zest_broker::JobStream`). Flow
    /// control comes from the client's stream: the stream's channel holds [`STREAM_WINDOW`]
    /// jobs and at most about `STREAM_WINDOW_BYTES` of them (and all the node's streams
    /// together their share of the memory budget), and drains only as fast as the
    /// transport sends, which HTTP/2 flow control limits to the client's receive window. So a
    /// worker that stops reading holds at most its window (grpc-java and tonic open 1-2 MiB,
    /// of which hyper keeps up to 400 KiB unsent when the socket is full) plus the channel's
    /// jobs; beyond that jobs wait for workers instead of growing memory.
    ///
    /// Jobs that were activatable before the stream opened, or that found it full, are taken by
    /// this task with JOB_BATCH ACTIVATE as room frees up (woken by job notifications). When the
    /// client goes away, the jobs still in the channel are handed back (JOB YIELD), so another
    /// worker gets them at once. A full partition queue or a partition that is briefly
    /// unavailable pauses the backlog activation (retrying after 100 ms) instead of ending the
    /// stream; the node stopping ends it with UNAVAILABLE.
    async fn stream_activated_jobs(
        &self,
        request: Request<proto::StreamActivatedJobsRequest>,
    ) -> Result<Response<Self::StreamActivatedJobsStream>, Status> {
        let r = request.into_inner();
        let wanted = job_request(
            "stream",
            &r.r#type,
            &r.worker,
            r.timeout,
            &r.fetch_variable,
            &r.tenant_ids,
        )?;
        let this = self.clone();
        // Subscribe before the first activation so that no notification is missed.
        let mut notifications = this.broker.subscribe_jobs();
        let jobs = this.broker.open_job_stream(
            &JobStreamSpec {
                job_type: wanted.job_type.clone(),
                worker: wanted.worker.clone(),
                timeout: wanted.timeout,
                fetch_variables: wanted.fetch_variables.clone(),
            },
            STREAM_WINDOW,
        );
        let tx = jobs.sender();
        let (error_tx, error_rx) = tokio::sync::oneshot::channel();
        let stream = PushedJobs {
            jobs,
            error: Some(error_rx),
            ended: false,
        };
        tokio::spawn(async move {
            let partitions = this.broker.partition_count();
            let mut first = 1;
            let stopped = || Status::unavailable("the gateway is shutting down; reconnect");
            let mut error_tx = Some(error_tx);
            let mut fail = |status: Status| {
                if let Some(e) = error_tx.take() {
                    let _ = e.send(status);
                }
            };
            loop {
                // Wait until the client has read enough to make room (and the node's streams
                // hold less than their share of the memory budget).
                let mut grant = tokio::select! {
                    room = tx.room() => match room {
                        Some(room) => room,
                        None => return, // the client went away
                    },
                    _ = this.stopping() => return fail(stopped()),
                };
                let mut room = grant.jobs as i32;
                let mut activated_any = false;
                let mut paused = false;
                for i in 0..partitions {
                    if room < 1 {
                        break;
                    }
                    let partition = (first + i - 1) % partitions + 1;
                    match this.activate(partition, &wanted, room).await {
                        Ok(activated) => {
                            room -= activated.len() as i32;
                            let mut activated = activated.into_iter();
                            for job in activated.by_ref() {
                                activated_any = true;
                                if let Err(job) = tx.send(job, &mut grant).await {
                                    // the client went away: hand these back
                                    this.broker.yield_job(job);
                                    activated.for_each(|job| this.broker.yield_job(job));
                                    return;
                                }
                            }
                        }
                        Err(status)
                            if matches!(
                                status.code(),
                                Code::ResourceExhausted | Code::Unavailable
                            ) =>
                        {
                            // a full queue or a partition between leaders: try again soon
                            tracing::debug!(partition, %status, "job stream pauses");
                            paused = true;
                            tokio::select! {
                                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                                _ = tx.closed() => return,
                                _ = this.stopping() => return fail(stopped()),
                            }
                        }
                        Err(status) => return fail(status),
                    }
                }
                first = first % partitions + 1;
                // after a pause, try again rather than wait for a job that may already be there
                if activated_any || paused {
                    continue;
                }
                // Park until a job of this type waits for workers, the client goes or the node
                // stops.
                loop {
                    tokio::select! {
                        _ = tx.closed() => return,
                        _ = this.stopping() => return fail(stopped()),
                        n = notifications.recv() => match n {
                            Ok(t) if t == r.r#type => break,
                            Ok(_) => continue,
                            Err(RecvError::Lagged(_)) => break,
                            Err(RecvError::Closed) => return,
                        }
                    }
                }
            }
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn cancel_process_instance(
        &self,
        request: Request<proto::CancelProcessInstanceRequest>,
    ) -> Result<Response<proto::CancelProcessInstanceResponse>, Status> {
        let r = request.into_inner();
        let key = r.process_instance_key;
        let p = self.route(key, || format!("Command 'CANCEL' rejected with code 'NOT_FOUND': Expected to cancel a process instance with key '{key}', but no such process was found"))?;
        let value = RecordValue::ProcessInstance(ProcessInstanceRecord {
            bpmn_process_id: String::new(),
            version: -1,
            process_definition_key: -1,
            process_instance_key: key,
            element_id: String::new(),
            flow_scope_key: -1,
            bpmn_element_type: BpmnElementType::Unspecified,
            bpmn_event_type: BpmnEventType::Unspecified,
            parent_process_instance_key: -1,
            parent_element_instance_key: -1,
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.submit(p, new_command(key, Intent::Cancel, value, -1, -1))
            .await?;
        Ok(Response::new(proto::CancelProcessInstanceResponse {}))
    }

    async fn complete_job(
        &self,
        request: Request<proto::CompleteJobRequest>,
    ) -> Result<Response<proto::CompleteJobResponse>, Status> {
        self.check_size(request.get_ref())?;
        let mut r = request.into_inner();
        let key = r.job_key;
        let p = self.route(key, || format!("Command 'COMPLETE' rejected with code 'NOT_FOUND': Expected to complete job with key '{key}', but no such job was found"))?;
        let job = JobRecord {
            variables: variables_document(std::mem::take(&mut r.variables), "variables")?,
            result: r.result.map(job_result).transpose()?.unwrap_or_default(),
            ..Default::default()
        };
        self.submit(p, job_command(key, Intent::Complete, job))
            .await?;
        Ok(Response::new(proto::CompleteJobResponse {}))
    }

    async fn create_process_instance(
        &self,
        request: Request<proto::CreateProcessInstanceRequest>,
    ) -> Result<Response<proto::CreateProcessInstanceResponse>, Status> {
        self.check_size(request.get_ref())?;
        let mut r = request.into_inner();
        let creation = self.creation_record(&mut r)?;
        let partition = self.broker.next_partition();
        let event = self
            .submit_creation(
                partition,
                new_command(
                    -1,
                    Intent::Create,
                    RecordValue::ProcessInstanceCreation(creation),
                    -1,
                    -1,
                ),
            )
            .await?;
        let RecordValue::ProcessInstanceCreation(c) = event.value else {
            return Err(Status::internal(
                "unexpected answer to a process instance creation",
            ));
        };
        Ok(Response::new(proto::CreateProcessInstanceResponse {
            process_definition_key: c.process_definition_key,
            bpmn_process_id: c.bpmn_process_id,
            version: c.version,
            process_instance_key: c.process_instance_key,
            tenant_id: c.tenant_id,
            tags: Vec::new(),
        }))
    }

    async fn create_process_instance_with_result(
        &self,
        request: Request<proto::CreateProcessInstanceWithResultRequest>,
    ) -> Result<Response<proto::CreateProcessInstanceWithResultResponse>, Status> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let Some(mut inner) = r.request else {
            return Err(Status::invalid_argument(
                "Expected a 'request' to create a process instance, but none was given",
            ));
        };
        let mut creation = self.creation_record(&mut inner)?;
        creation.fetch_variables = r.fetch_variables.clone();
        let timeout = if r.request_timeout > 0 {
            Duration::from_millis(r.request_timeout as u64)
        } else {
            self.config.default_request_timeout
        };
        let partition = self.broker.next_partition();
        let cmd = new_command(
            -1,
            Intent::CreateWithAwaitingResult,
            RecordValue::ProcessInstanceCreation(creation),
            -1,
            -1,
        );
        let answer = match tokio::time::timeout(timeout, self.submit_creation(partition, cmd)).await {
            Ok(a) => a?,
            Err(_) => {
                return Err(Status::deadline_exceeded(format!(
                    "Time out between gateway and broker: Request ProcessInstanceCreationRequest to partition {partition} timed out after {timeout:?}; the process instance did not complete in time"
                )))
            }
        };
        let RecordValue::ProcessInstanceResult(res) = answer.value else {
            return Err(Status::internal(
                "unexpected answer to a process instance creation with result",
            ));
        };
        Ok(Response::new(
            proto::CreateProcessInstanceWithResultResponse {
                process_definition_key: res.process_definition_key,
                bpmn_process_id: res.bpmn_process_id,
                version: res.version,
                process_instance_key: res.process_instance_key,
                variables: res.variables,
                tenant_id: res.tenant_id,
                tags: Vec::new(),
            },
        ))
    }

    async fn evaluate_decision(
        &self,
        request: Request<proto::EvaluateDecisionRequest>,
    ) -> Result<Response<proto::EvaluateDecisionResponse>, Status> {
        self.check_size(request.get_ref())?;
        let mut r = request.into_inner();
        if r.decision_key <= 0 && r.decision_id.trim().is_empty() {
            return Err(Status::invalid_argument(
                "Expected either a decision id or a valid decision key, but none provided",
            ));
        }
        let tenant_id = r.tenant_id.trim();
        if !tenant_id.is_empty() && tenant_id != DEFAULT_TENANT {
            return Err(Status::invalid_argument(format!(
                "Expected to handle gRPC request EvaluateDecision with tenant identifier '{tenant_id}', but multi-tenancy is disabled"
            )));
        }
        let command = DecisionEvaluationRecord {
            decision_key: if r.decision_key > 0 {
                r.decision_key
            } else {
                -1
            },
            decision_id: r.decision_id.trim().to_string(),
            variables: variables_document(std::mem::take(&mut r.variables), "variables")?,
            tenant_id: DEFAULT_TENANT.into(),
            ..Default::default()
        };
        // decisions are deployed to the first partition, like processes
        let event = self
            .submit(
                1,
                new_command(
                    -1,
                    Intent::Evaluate,
                    RecordValue::DecisionEvaluation(Box::new(command)),
                    -1,
                    -1,
                ),
            )
            .await?;
        let RecordValue::DecisionEvaluation(d) = event.value else {
            return Err(Status::internal(
                "unexpected answer to a decision evaluation",
            ));
        };
        Ok(Response::new(proto::EvaluateDecisionResponse {
            decision_key: d.decision_key,
            decision_id: d.decision_id,
            decision_name: d.decision_name,
            decision_version: d.decision_version,
            decision_requirements_id: d.decision_requirements_id,
            decision_requirements_key: d.decision_requirements_key,
            decision_output: d.decision_output,
            evaluated_decisions: d
                .evaluated_decisions
                .into_iter()
                .enumerate()
                .map(|(i, e)| proto::EvaluatedDecision {
                    decision_key: e.decision_key,
                    decision_id: e.decision_id,
                    decision_name: e.decision_name,
                    decision_version: e.decision_version,
                    decision_type: e.decision_type,
                    decision_output: e.decision_output,
                    matched_rules: e
                        .matched_rules
                        .into_iter()
                        .map(|m| proto::MatchedDecisionRule {
                            rule_id: m.rule_id,
                            rule_index: m.rule_index,
                            evaluated_outputs: m
                                .evaluated_outputs
                                .into_iter()
                                .map(|o| proto::EvaluatedDecisionOutput {
                                    output_id: o.output_id,
                                    output_name: o.output_name,
                                    output_value: o.output_value,
                                })
                                .collect(),
                        })
                        .collect(),
                    evaluated_inputs: e
                        .evaluated_inputs
                        .into_iter()
                        .map(|i| proto::EvaluatedDecisionInput {
                            input_id: i.input_id,
                            input_name: i.input_name,
                            input_value: i.input_value,
                        })
                        .collect(),
                    tenant_id: e.tenant_id,
                    // Zeebe: the evaluation's key and the decision's position in it
                    decision_evaluation_instance_key: format!("{}-{}", event.key, i + 1),
                })
                .collect(),
            failed_decision_id: d.failed_decision_id,
            failure_message: d.evaluation_failure_message,
            tenant_id: d.tenant_id,
            decision_instance_key: event.key,
            decision_evaluation_key: event.key,
        }))
    }

    async fn deploy_process(
        &self,
        request: Request<proto::DeployProcessRequest>,
    ) -> Result<Response<proto::DeployProcessResponse>, Status> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let resources = r
            .processes
            .into_iter()
            .map(|p| DeploymentResource {
                resource_name: p.name,
                resource: p.definition,
            })
            .collect();
        let (key, d) = self.deploy(resources, DEFAULT_TENANT.into()).await?;
        Ok(Response::new(proto::DeployProcessResponse {
            key,
            processes: process_metadata(&d),
        }))
    }

    async fn deploy_resource(
        &self,
        request: Request<proto::DeployResourceRequest>,
    ) -> Result<Response<proto::DeployResourceResponse>, Status> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let tenant_id = tenant(&r.tenant_id);
        let resources = r
            .resources
            .into_iter()
            .map(|p| DeploymentResource {
                resource_name: p.name,
                resource: p.content,
            })
            .collect();
        let (key, d) = self.deploy(resources, tenant_id.clone()).await?;
        let forms = d.forms_metadata.iter().map(|f| proto::Deployment {
            metadata: Some(proto::deployment::Metadata::Form(proto::FormMetadata {
                form_id: f.form_id.clone(),
                version: f.version,
                form_key: f.form_key,
                resource_name: f.resource_name.clone(),
                tenant_id: f.tenant_id.clone(),
            })),
        });
        let decisions = d.decisions_metadata.iter().map(|m| proto::Deployment {
            metadata: Some(proto::deployment::Metadata::Decision(
                proto::DecisionMetadata {
                    dmn_decision_id: m.decision_id.clone(),
                    dmn_decision_name: m.decision_name.clone(),
                    version: m.version,
                    decision_key: m.decision_key,
                    dmn_decision_requirements_id: m.decision_requirements_id.clone(),
                    decision_requirements_key: m.decision_requirements_key,
                    tenant_id: m.tenant_id.clone(),
                },
            )),
        });
        let graphs = d
            .decision_requirements_metadata
            .iter()
            .map(|m| proto::Deployment {
                metadata: Some(proto::deployment::Metadata::DecisionRequirements(
                    proto::DecisionRequirementsMetadata {
                        dmn_decision_requirements_id: m.decision_requirements_id.clone(),
                        dmn_decision_requirements_name: m.decision_requirements_name.clone(),
                        version: m.decision_requirements_version,
                        decision_requirements_key: m.decision_requirements_key,
                        resource_name: m.resource_name.clone(),
                        tenant_id: m.tenant_id.clone(),
                    },
                )),
            });
        let deployments = process_metadata(&d)
            .into_iter()
            .map(|m| proto::Deployment {
                metadata: Some(proto::deployment::Metadata::Process(m)),
            })
            .chain(decisions)
            .chain(graphs)
            .chain(forms)
            .collect();
        Ok(Response::new(proto::DeployResourceResponse {
            key,
            deployments,
            tenant_id,
        }))
    }

    async fn fail_job(
        &self,
        request: Request<proto::FailJobRequest>,
    ) -> Result<Response<proto::FailJobResponse>, Status> {
        self.check_size(request.get_ref())?;
        let mut r = request.into_inner();
        let key = r.job_key;
        let p = self.route(key, || format!("Command 'FAIL' rejected with code 'NOT_FOUND': Expected to fail job with key '{key}', but no such job was found"))?;
        let job = JobRecord {
            retries: r.retries,
            error_message: r.error_message,
            retry_backoff: r.retry_back_off,
            variables: variables_document(std::mem::take(&mut r.variables), "variables")?,
            ..Default::default()
        };
        self.submit(p, job_command(key, Intent::Fail, job)).await?;
        Ok(Response::new(proto::FailJobResponse {}))
    }

    async fn throw_error(
        &self,
        request: Request<proto::ThrowErrorRequest>,
    ) -> Result<Response<proto::ThrowErrorResponse>, Status> {
        self.check_size(request.get_ref())?;
        let mut r = request.into_inner();
        let key = r.job_key;
        let p = self.route(key, || format!("Command 'THROW_ERROR' rejected with code 'NOT_FOUND': Expected to throw an error for job with key '{key}', but no such job was found"))?;
        if r.error_code.trim().is_empty() {
            return Err(Status::invalid_argument(
                "Expected to throw an error with an error code, but the errorCode was blank",
            ));
        }
        let job = JobRecord {
            error_code: r.error_code,
            error_message: r.error_message,
            variables: variables_document(std::mem::take(&mut r.variables), "variables")?,
            ..Default::default()
        };
        self.submit(p, job_command(key, Intent::ThrowError, job))
            .await?;
        Ok(Response::new(proto::ThrowErrorResponse {}))
    }

    async fn publish_message(
        &self,
        request: Request<proto::PublishMessageRequest>,
    ) -> Result<Response<proto::PublishMessageResponse>, Status> {
        self.check_size(request.get_ref())?;
        let mut r = request.into_inner();
        if r.name.trim().is_empty() {
            return Err(Status::invalid_argument(
                "Expected to publish a message with a name, but the name is empty",
            ));
        }
        let tenant_id = r.tenant_id.trim();
        if !tenant_id.is_empty() && tenant_id != DEFAULT_TENANT {
            return Err(Status::invalid_argument(format!(
                "Expected to handle gRPC request PublishMessage with tenant identifier '{tenant_id}', but multi-tenancy is disabled"
            )));
        }
        let message = MessageRecord {
            name: r.name,
            variables: variables_document(std::mem::take(&mut r.variables), "variables")?,
            // routed like Zeebe: the message partition is the correlation key's hash
            correlation_key: r.correlation_key,
            time_to_live: r.time_to_live,
            message_id: r.message_id,
            deadline: -1,
            tenant_id: DEFAULT_TENANT.into(),
        };
        let partition = zest_protocol::partition_for_correlation_key(
            &message.correlation_key,
            self.broker.partition_count(),
        );
        let event = self
            .submit(
                partition,
                new_command(-1, Intent::Publish, RecordValue::Message(message), -1, -1),
            )
            .await?;
        let tenant_id = match &event.value {
            RecordValue::Message(m) => m.tenant_id.clone(),
            _ => DEFAULT_TENANT.into(),
        };
        Ok(Response::new(proto::PublishMessageResponse {
            key: event.key,
            tenant_id,
        }))
    }

    async fn resolve_incident(
        &self,
        request: Request<proto::ResolveIncidentRequest>,
    ) -> Result<Response<proto::ResolveIncidentResponse>, Status> {
        let key = request.into_inner().incident_key;
        let p = self.route(key, || format!("Command 'RESOLVE' rejected with code 'NOT_FOUND': Expected to resolve incident with key '{key}', but no such incident was found"))?;
        let value = RecordValue::Incident(IncidentRecord {
            error_type: ErrorType::Unknown,
            error_message: String::new(),
            bpmn_process_id: String::new(),
            process_definition_key: -1,
            process_instance_key: -1,
            element_id: String::new(),
            element_instance_key: -1,
            job_key: -1,
            variable_scope_key: -1,
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.submit(p, new_command(key, Intent::Resolve, value, -1, -1))
            .await?;
        Ok(Response::new(proto::ResolveIncidentResponse {}))
    }

    async fn set_variables(
        &self,
        request: Request<proto::SetVariablesRequest>,
    ) -> Result<Response<proto::SetVariablesResponse>, Status> {
        self.check_size(request.get_ref())?;
        let mut r = request.into_inner();
        let key = r.element_instance_key;
        let p = self.route(key, || format!("Command 'UPDATE' rejected with code 'NOT_FOUND': Expected to update variables for element with key '{key}', but no such element was found"))?;
        let variables = variables_document(std::mem::take(&mut r.variables), "variables")?;
        if variables.is_empty() {
            return Err(Status::invalid_argument("Property 'variables' is invalid: Expected a document with at least one variable, but it was empty"));
        }
        let value = RecordValue::VariableDocument(VariableDocumentRecord {
            scope_key: key,
            update_semantics: if r.local {
                VariableDocumentUpdateSemantic::Local
            } else {
                VariableDocumentUpdateSemantic::Propagate
            },
            variables,
            tenant_id: DEFAULT_TENANT.into(),
        });
        let event = self
            .submit(p, new_command(-1, Intent::Update, value, -1, -1))
            .await?;
        Ok(Response::new(proto::SetVariablesResponse {
            key: event.key,
        }))
    }

    async fn topology(
        &self,
        _request: Request<proto::TopologyRequest>,
    ) -> Result<Response<proto::TopologyResponse>, Status> {
        let topology = self.broker.cluster_topology();
        let brokers = topology
            .brokers
            .iter()
            .map(|b| {
                let (host, port) = crate::host_and_port(&b.address);
                let partitions = b
                    .partitions
                    .iter()
                    .map(|p| proto::Partition {
                        partition_id: p.partition_id as i32,
                        role: if p.is_leader {
                            proto::partition::PartitionBrokerRole::Leader as i32
                        } else {
                            proto::partition::PartitionBrokerRole::Follower as i32
                        },
                        health: if p.healthy {
                            proto::partition::PartitionBrokerHealth::Healthy as i32
                        } else {
                            proto::partition::PartitionBrokerHealth::Unhealthy as i32
                        },
                    })
                    .collect();
                proto::BrokerInfo {
                    node_id: b.node_id as i32,
                    host,
                    port: port as i32,
                    partitions,
                    version: self.config.version.clone(),
                }
            })
            .collect();
        Ok(Response::new(proto::TopologyResponse {
            brokers,
            cluster_size: topology.cluster_size as i32,
            partitions_count: topology.partitions_count as i32,
            replication_factor: topology.replication_factor as i32,
            gateway_version: self.config.version.clone(),
        }))
    }

    async fn update_job_retries(
        &self,
        request: Request<proto::UpdateJobRetriesRequest>,
    ) -> Result<Response<proto::UpdateJobRetriesResponse>, Status> {
        let r = request.into_inner();
        let key = r.job_key;
        let p = self.route(key, || format!("Command 'UPDATE_RETRIES' rejected with code 'NOT_FOUND': Expected to update retries for job with key '{key}', but no such job was found"))?;
        let job = JobRecord {
            retries: r.retries,
            ..Default::default()
        };
        self.submit(p, job_command(key, Intent::UpdateRetries, job))
            .await?;
        Ok(Response::new(proto::UpdateJobRetriesResponse {}))
    }

    async fn modify_process_instance(
        &self,
        request: Request<proto::ModifyProcessInstanceRequest>,
    ) -> Result<Response<proto::ModifyProcessInstanceResponse>, Status> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let key = r.process_instance_key;
        let p = self.route(key, || format!("Command 'MODIFY' rejected with code 'NOT_FOUND': Expected to modify process instance but no process instance found with key '{key}'"))?;
        let mut activate_instructions = Vec::new();
        for a in &r.activate_instructions {
            let mut variable_instructions = Vec::new();
            for v in &a.variable_instructions {
                variable_instructions.push(zest_protocol::VariableInstruction {
                    variables: variables_document(v.variables.clone(), "variables")?,
                    element_id: v.scope_id.clone(),
                });
            }
            activate_instructions.push(zest_protocol::ActivateInstruction {
                element_id: a.element_id.clone(),
                ancestor_scope_key: if a.ancestor_element_instance_key > 0 {
                    a.ancestor_element_instance_key
                } else {
                    -1
                },
                variable_instructions,
            });
        }
        let value = RecordValue::ProcessInstanceModification(
            zest_protocol::ProcessInstanceModificationRecord {
                process_instance_key: key,
                terminate_instructions: r
                    .terminate_instructions
                    .iter()
                    .map(|t| zest_protocol::TerminateInstruction {
                        element_instance_key: t.element_instance_key,
                    })
                    .collect(),
                activate_instructions,
                activated_element_instance_keys: Vec::new(),
                tenant_id: DEFAULT_TENANT.into(),
            },
        );
        self.submit(p, new_command(key, Intent::Modify, value, -1, -1))
            .await?;
        Ok(Response::new(proto::ModifyProcessInstanceResponse {}))
    }

    async fn migrate_process_instance(
        &self,
        request: Request<proto::MigrateProcessInstanceRequest>,
    ) -> Result<Response<proto::MigrateProcessInstanceResponse>, Status> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let key = r.process_instance_key;
        let p = self.route(key, || format!("Command 'MIGRATE' rejected with code 'NOT_FOUND': Expected to migrate process instance but no process instance found with key '{key}'"))?;
        let Some(plan) = r.migration_plan else {
            return Err(Status::invalid_argument(
                "Expected argument 'migrationPlan' to be provided, but it was not",
            ));
        };
        let value =
            RecordValue::ProcessInstanceMigration(zest_protocol::ProcessInstanceMigrationRecord {
                process_instance_key: key,
                target_process_definition_key: plan.target_process_definition_key,
                mapping_instructions: plan
                    .mapping_instructions
                    .iter()
                    .map(|m| zest_protocol::MappingInstruction {
                        source_element_id: m.source_element_id.clone(),
                        target_element_id: m.target_element_id.clone(),
                    })
                    .collect(),
                tenant_id: DEFAULT_TENANT.into(),
            });
        self.submit(p, new_command(key, Intent::Migrate, value, -1, -1))
            .await?;
        Ok(Response::new(proto::MigrateProcessInstanceResponse {}))
    }

    async fn update_job_timeout(
        &self,
        request: Request<proto::UpdateJobTimeoutRequest>,
    ) -> Result<Response<proto::UpdateJobTimeoutResponse>, Status> {
        let r = request.into_inner();
        let key = r.job_key;
        let p = self.route(key, || format!("Command 'UPDATE_TIMEOUT' rejected with code 'NOT_FOUND': Expected to update the timeout of job with key '{key}', but no such job was found"))?;
        let job = JobRecord {
            timeout: r.timeout,
            ..Default::default()
        };
        self.submit(p, job_command(key, Intent::UpdateTimeout, job))
            .await?;
        Ok(Response::new(proto::UpdateJobTimeoutResponse {}))
    }

    async fn delete_resource(
        &self,
        request: Request<proto::DeleteResourceRequest>,
    ) -> Result<Response<proto::DeleteResourceResponse>, Status> {
        let key = request.into_inner().resource_key;
        // resources are deployed to the first partition
        let value = RecordValue::ResourceDeletion(zest_protocol::ResourceDeletionRecord {
            resource_key: key,
            tenant_id: DEFAULT_TENANT.into(),
        });
        self.submit(1, new_command(key, Intent::Delete, value, -1, -1))
            .await?;
        Ok(Response::new(proto::DeleteResourceResponse {}))
    }

    async fn broadcast_signal(
        &self,
        request: Request<proto::BroadcastSignalRequest>,
    ) -> Result<Response<proto::BroadcastSignalResponse>, Status> {
        self.check_size(request.get_ref())?;
        let mut r = request.into_inner();
        if r.signal_name.trim().is_empty() {
            return Err(Status::invalid_argument(
                "Expected to broadcast a signal with a name, but the name is empty",
            ));
        }
        let tenant_id = r.tenant_id.trim();
        if !tenant_id.is_empty() && tenant_id != DEFAULT_TENANT {
            return Err(Status::invalid_argument(format!(
                "Expected to handle gRPC request BroadcastSignal with tenant identifier '{tenant_id}', but multi-tenancy is disabled"
            )));
        }
        let signal = zest_protocol::SignalRecord {
            signal_name: r.signal_name,
            variables: variables_document(std::mem::take(&mut r.variables), "variables")?,
            tenant_id: DEFAULT_TENANT.into(),
        };
        // like a deployment, a broadcast is processed by the first partition (with one
        // partition per node that is every subscription)
        let event = self
            .submit(
                1,
                new_command(-1, Intent::Broadcast, RecordValue::Signal(signal), -1, -1),
            )
            .await?;
        let tenant_id = match &event.value {
            RecordValue::Signal(s) => s.tenant_id.clone(),
            _ => DEFAULT_TENANT.into(),
        };
        Ok(Response::new(proto::BroadcastSignalResponse {
            key: event.key,
            tenant_id,
        }))
    }
}

/// Jobs a job stream activates ahead of what its client has read.
const STREAM_WINDOW: usize = 32;

/// The response stream of StreamActivatedJobs: the jobs of the broker's job stream, then the
/// error that ended the stream, if any. Dropping it (the client went away) closes the job
/// stream, which hands undelivered jobs back.
struct PushedJobs {
    jobs: JobStream,
    error: Option<tokio::sync::oneshot::Receiver<Status>>,
    ended: bool,
}

impl Stream for PushedJobs {
    type Item = Result<proto::ActivatedJob, Status>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::future::Future;
        use std::task::Poll;
        if self.ended {
            return Poll::Ready(None);
        }
        if let Some(error) = self.error.as_mut() {
            match Pin::new(error).poll(cx) {
                Poll::Ready(Ok(status)) => {
                    // the stream ends with the error; the jobs left in it are handed back when
                    // it is dropped
                    self.error = None;
                    self.ended = true;
                    return Poll::Ready(Some(Err(status)));
                }
                // the task ended without an error: the stream goes on with what it has
                Poll::Ready(Err(_)) => self.error = None,
                Poll::Pending => {}
            }
        }
        self.jobs
            .poll_recv(cx)
            .map(|job| job.map(|j| Ok(activated_job(j.key, j.job))))
    }
}

/// A response stream fed by a task through a bounded channel (one message in flight).
fn async_stream<T, F, Fut>(f: F) -> BoxStream<T>
where
    T: Send + 'static,
    F: FnOnce(tokio::sync::mpsc::Sender<Result<T, Status>>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(f(tx));
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}
