//! Zeebe's gRPC `gateway_protocol.Gateway` service: each method translates its request into a
//! call of the command layer (`crate::commands`) and its answer into the response message.

use std::pin::Pin;
use std::time::Duration;

use futures::Stream;
use prost::Message;
use tokio::sync::broadcast::error::RecvError;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status};
use zest_broker::{JobStream, JobStreamSpec};
use zest_protocol::{DeploymentResource, DeploymentResponse, MappingInstruction, DEFAULT_TENANT};

use crate::commands::job::{jobs_wanted, JobFailure};
use crate::commands::job_result::{ActivateElement, Corrections, WorkerResult};
use crate::commands::message::NewMessage;
use crate::commands::process_instance::{activation, NewInstance};
use crate::commands::{tenant, CommandError, Commands, GatewayConfig};
use crate::convert::activated_job;
use crate::proto;
use crate::proto::gateway_server::Gateway;

#[derive(Clone)]
pub struct GatewayService {
    commands: Commands,
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;
type Answer<T> = Result<Response<T>, Status>;

impl GatewayService {
    pub fn new(broker: std::sync::Arc<zest_broker::Broker>, config: GatewayConfig) -> Self {
        GatewayService {
            commands: Commands::new(broker, config),
        }
    }

    /// Ends job streams and long polls once `shutdown` turns true.
    pub fn with_shutdown(mut self, shutdown: tokio::sync::watch::Receiver<bool>) -> Self {
        self.commands = self.commands.with_shutdown(shutdown);
        self
    }

    pub fn config(&self) -> &GatewayConfig {
        self.commands.config()
    }

    /// The command layer this service translates to (the REST API shares it).
    pub fn commands(&self) -> &Commands {
        &self.commands
    }

    fn check_size<M: Message>(&self, msg: &M) -> Result<(), Status> {
        Ok(self.commands.check_size(msg.encoded_len())?)
    }
}

/// An empty response once the command is done.
fn done<T: Default>(r: Result<(), CommandError>) -> Answer<T> {
    r?;
    Ok(Response::new(T::default()))
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

fn deployments(d: &DeploymentResponse) -> Vec<proto::Deployment> {
    use proto::deployment::Metadata;
    let forms = d.forms_metadata.iter().map(|f| {
        Metadata::Form(proto::FormMetadata {
            form_id: f.form_id.clone(),
            version: f.version,
            form_key: f.form_key,
            resource_name: f.resource_name.clone(),
            tenant_id: f.tenant_id.clone(),
        })
    });
    let decisions = d.decisions_metadata.iter().map(|m| {
        Metadata::Decision(proto::DecisionMetadata {
            dmn_decision_id: m.decision_id.clone(),
            dmn_decision_name: m.decision_name.clone(),
            version: m.version,
            decision_key: m.decision_key,
            dmn_decision_requirements_id: m.decision_requirements_id.clone(),
            decision_requirements_key: m.decision_requirements_key,
            tenant_id: m.tenant_id.clone(),
        })
    });
    let graphs = d.decision_requirements_metadata.iter().map(|m| {
        Metadata::DecisionRequirements(proto::DecisionRequirementsMetadata {
            dmn_decision_requirements_id: m.decision_requirements_id.clone(),
            dmn_decision_requirements_name: m.decision_requirements_name.clone(),
            version: m.decision_requirements_version,
            decision_requirements_key: m.decision_requirements_key,
            resource_name: m.resource_name.clone(),
            tenant_id: m.tenant_id.clone(),
        })
    });
    process_metadata(d)
        .into_iter()
        .map(Metadata::Process)
        .chain(decisions)
        .chain(graphs)
        .chain(forms)
        .map(|m| proto::Deployment { metadata: Some(m) })
        .collect()
}

fn new_instance(r: proto::CreateProcessInstanceRequest) -> NewInstance {
    NewInstance {
        process_id: r.bpmn_process_id,
        version: r.version,
        definition_key: r.process_definition_key,
        variables: r.variables,
        tenant_id: r.tenant_id,
        start_instructions: r
            .start_instructions
            .into_iter()
            .map(|s| s.element_id)
            .collect(),
    }
}

fn worker_result(r: proto::JobResult) -> WorkerResult {
    WorkerResult {
        kind: r.r#type,
        denied: r.denied,
        denied_reason: r.denied_reason,
        corrections: r.corrections.map(|c| Corrections {
            assignee: c.assignee,
            due_date: c.due_date,
            follow_up_date: c.follow_up_date,
            candidate_users: c.candidate_users.map(|l| l.values),
            candidate_groups: c.candidate_groups.map(|l| l.values),
            priority: c.priority,
        }),
        activate_elements: r
            .activate_elements
            .into_iter()
            .map(|e| ActivateElement {
                element_id: e.element_id,
                variables: e.variables,
            })
            .collect(),
        is_completion_condition_fulfilled: r.is_completion_condition_fulfilled,
        is_cancel_remaining_instances: r.is_cancel_remaining_instances,
    }
}

fn evaluated_decisions(
    key: i64,
    decisions: Vec<zest_protocol::EvaluatedDecisionValue>,
) -> Vec<proto::EvaluatedDecision> {
    decisions
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
            decision_evaluation_instance_key: format!("{key}-{}", i + 1),
        })
        .collect()
}

#[tonic::async_trait]
impl Gateway for GatewayService {
    type ActivateJobsStream = BoxStream<proto::ActivateJobsResponse>;
    type StreamActivatedJobsStream = BoxStream<proto::ActivatedJob>;

    async fn activate_jobs(
        &self,
        request: Request<proto::ActivateJobsRequest>,
    ) -> Answer<Self::ActivateJobsStream> {
        let r = request.into_inner();
        let wanted = jobs_wanted(
            "activate",
            &r.r#type,
            &r.worker,
            r.timeout,
            &r.fetch_variable,
            &r.tenant_ids,
        )?;
        let batches = self
            .commands
            .poll_jobs(wanted, r.max_jobs_to_activate, r.request_timeout);
        // each partition's jobs in a response of their own, as Zeebe's gateway answers
        let stream = tokio_stream::wrappers::ReceiverStream::new(batches).map(|batch| {
            batch
                .map(|jobs| proto::ActivateJobsResponse {
                    jobs: jobs
                        .into_iter()
                        .map(|j| activated_job(j.key, j.job))
                        .collect(),
                })
                .map_err(Status::from)
        });
        Ok(Response::new(Box::pin(stream)))
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
    ) -> Answer<Self::StreamActivatedJobsStream> {
        let r = request.into_inner();
        let wanted = jobs_wanted(
            "stream",
            &r.r#type,
            &r.worker,
            r.timeout,
            &r.fetch_variable,
            &r.tenant_ids,
        )?;
        let this = self.clone();
        // Subscribe before the first activation so that no notification is missed.
        let mut notifications = this.commands.broker().subscribe_jobs();
        let jobs = this.commands.broker().open_job_stream(
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
            let partitions = this.commands.broker().partition_count();
            let mut first = 1;
            let stopped = || Status::from(CommandError::Stopping);
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
                    _ = this.commands.stopping() => return fail(stopped()),
                };
                let mut room = grant.jobs as i32;
                let mut activated_any = false;
                let mut paused = false;
                for i in 0..partitions {
                    if room < 1 {
                        break;
                    }
                    let partition = (first + i - 1) % partitions + 1;
                    match this.commands.activate(partition, &wanted, room).await {
                        Ok(activated) => {
                            room -= activated.len() as i32;
                            let mut activated = activated.into_iter();
                            for job in activated.by_ref() {
                                activated_any = true;
                                if let Err(job) = tx.send(job, &mut grant).await {
                                    // the client went away: hand these back
                                    this.commands.broker().yield_job(job);
                                    activated.for_each(|job| this.commands.broker().yield_job(job));
                                    return;
                                }
                            }
                        }
                        Err(e) if e.is_transient() => {
                            // a full queue or a partition between leaders: try again soon
                            tracing::debug!(partition, %e, "job stream pauses");
                            paused = true;
                            tokio::select! {
                                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                                _ = tx.closed() => return,
                                _ = this.commands.stopping() => return fail(stopped()),
                            }
                        }
                        Err(e) => return fail(e.into()),
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
                        _ = this.commands.stopping() => return fail(stopped()),
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
    ) -> Answer<proto::CancelProcessInstanceResponse> {
        let key = request.into_inner().process_instance_key;
        done(self.commands.cancel_instance(key).await)
    }

    async fn complete_job(
        &self,
        request: Request<proto::CompleteJobRequest>,
    ) -> Answer<proto::CompleteJobResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let result = r
            .result
            .map(|r| worker_result(r).into_result())
            .transpose()?;
        let c = &self.commands;
        done(c.complete_job(r.job_key, r.variables, result).await)
    }

    async fn create_process_instance(
        &self,
        request: Request<proto::CreateProcessInstanceRequest>,
    ) -> Answer<proto::CreateProcessInstanceResponse> {
        self.check_size(request.get_ref())?;
        let new = new_instance(request.into_inner());
        let c = self.commands.create_instance(new).await?;
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
    ) -> Answer<proto::CreateProcessInstanceWithResultResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let Some(inner) = r.request else {
            return Err(Status::invalid_argument(
                "Expected a 'request' to create a process instance, but none was given",
            ));
        };
        let timeout =
            (r.request_timeout > 0).then(|| Duration::from_millis(r.request_timeout as u64));
        let res = self
            .commands
            .create_instance_with_result(new_instance(inner), r.fetch_variables, timeout)
            .await?;
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
    ) -> Answer<proto::EvaluateDecisionResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        tenant(&r.tenant_id, "gRPC request EvaluateDecision")?;
        let c = &self.commands;
        let e = c
            .evaluate_decision(r.decision_key, &r.decision_id, r.variables)
            .await?;
        let (key, d) = (e.key, e.evaluation);
        Ok(Response::new(proto::EvaluateDecisionResponse {
            decision_key: d.decision_key,
            decision_id: d.decision_id,
            decision_name: d.decision_name,
            decision_version: d.decision_version,
            decision_requirements_id: d.decision_requirements_id,
            decision_requirements_key: d.decision_requirements_key,
            decision_output: d.decision_output,
            evaluated_decisions: evaluated_decisions(key, d.evaluated_decisions),
            failed_decision_id: d.failed_decision_id,
            failure_message: d.evaluation_failure_message,
            tenant_id: d.tenant_id,
            decision_instance_key: key,
            decision_evaluation_key: key,
        }))
    }

    async fn deploy_process(
        &self,
        request: Request<proto::DeployProcessRequest>,
    ) -> Answer<proto::DeployProcessResponse> {
        self.check_size(request.get_ref())?;
        let resources = request
            .into_inner()
            .processes
            .into_iter()
            .map(|p| DeploymentResource {
                resource_name: p.name,
                resource: p.definition,
            })
            .collect();
        let d = self
            .commands
            .deploy(resources, DEFAULT_TENANT.into())
            .await?;
        Ok(Response::new(proto::DeployProcessResponse {
            key: d.deployment_key,
            processes: process_metadata(&d),
        }))
    }

    async fn deploy_resource(
        &self,
        request: Request<proto::DeployResourceRequest>,
    ) -> Answer<proto::DeployResourceResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let tenant_id = if r.tenant_id.is_empty() {
            DEFAULT_TENANT.to_string()
        } else {
            r.tenant_id
        };
        let resources = r
            .resources
            .into_iter()
            .map(|p| DeploymentResource {
                resource_name: p.name,
                resource: p.content,
            })
            .collect();
        let d = self.commands.deploy(resources, tenant_id.clone()).await?;
        Ok(Response::new(proto::DeployResourceResponse {
            key: d.deployment_key,
            deployments: deployments(&d),
            tenant_id,
        }))
    }

    async fn fail_job(
        &self,
        request: Request<proto::FailJobRequest>,
    ) -> Answer<proto::FailJobResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let failure = JobFailure {
            retries: r.retries,
            error_message: r.error_message,
            retry_backoff: r.retry_back_off,
            variables: r.variables,
        };
        done(self.commands.fail_job(r.job_key, failure).await)
    }

    async fn throw_error(
        &self,
        request: Request<proto::ThrowErrorRequest>,
    ) -> Answer<proto::ThrowErrorResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let c = &self.commands;
        let thrown = c.throw_job_error(r.job_key, r.error_code, r.error_message, r.variables);
        done(thrown.await)
    }

    async fn publish_message(
        &self,
        request: Request<proto::PublishMessageRequest>,
    ) -> Answer<proto::PublishMessageResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        tenant(&r.tenant_id, "gRPC request PublishMessage")?;
        let published = self
            .commands
            .publish_message(NewMessage {
                name: r.name,
                correlation_key: r.correlation_key,
                time_to_live: r.time_to_live,
                message_id: r.message_id,
                variables: r.variables,
            })
            .await?;
        Ok(Response::new(proto::PublishMessageResponse {
            key: published.key,
            tenant_id: published.tenant_id,
        }))
    }

    async fn resolve_incident(
        &self,
        request: Request<proto::ResolveIncidentRequest>,
    ) -> Answer<proto::ResolveIncidentResponse> {
        let key = request.into_inner().incident_key;
        done(self.commands.resolve_incident(key).await)
    }

    async fn set_variables(
        &self,
        request: Request<proto::SetVariablesRequest>,
    ) -> Answer<proto::SetVariablesResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let c = &self.commands;
        let key = c
            .set_variables(r.element_instance_key, r.variables, r.local)
            .await?;
        Ok(Response::new(proto::SetVariablesResponse { key }))
    }

    async fn topology(
        &self,
        _request: Request<proto::TopologyRequest>,
    ) -> Answer<proto::TopologyResponse> {
        let topology = self.commands.broker().cluster_topology();
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
                    version: self.commands.config().version.clone(),
                }
            })
            .collect();
        Ok(Response::new(proto::TopologyResponse {
            brokers,
            cluster_size: topology.cluster_size as i32,
            partitions_count: topology.partitions_count as i32,
            replication_factor: topology.replication_factor as i32,
            gateway_version: self.commands.config().version.clone(),
        }))
    }

    async fn update_job_retries(
        &self,
        request: Request<proto::UpdateJobRetriesRequest>,
    ) -> Answer<proto::UpdateJobRetriesResponse> {
        let r = request.into_inner();
        done(self.commands.update_job_retries(r.job_key, r.retries).await)
    }

    async fn modify_process_instance(
        &self,
        request: Request<proto::ModifyProcessInstanceRequest>,
    ) -> Answer<proto::ModifyProcessInstanceResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let activate = r
            .activate_instructions
            .into_iter()
            .map(|a| {
                let variables = a.variable_instructions.into_iter();
                let variables = variables.map(|v| (v.scope_id, v.variables));
                activation(a.element_id, a.ancestor_element_instance_key, variables)
            })
            .collect();
        let terminate = r
            .terminate_instructions
            .iter()
            .map(|t| t.element_instance_key)
            .collect();
        let c = &self.commands;
        done(
            c.modify_instance(r.process_instance_key, terminate, activate)
                .await,
        )
    }

    async fn migrate_process_instance(
        &self,
        request: Request<proto::MigrateProcessInstanceRequest>,
    ) -> Answer<proto::MigrateProcessInstanceResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        let Some(plan) = r.migration_plan else {
            return Err(Status::invalid_argument(
                "Expected argument 'migrationPlan' to be provided, but it was not",
            ));
        };
        let mappings = plan
            .mapping_instructions
            .into_iter()
            .map(|m| MappingInstruction {
                source_element_id: m.source_element_id,
                target_element_id: m.target_element_id,
            })
            .collect();
        let (c, key) = (&self.commands, r.process_instance_key);
        done(
            c.migrate_instance(key, plan.target_process_definition_key, mappings)
                .await,
        )
    }

    async fn update_job_timeout(
        &self,
        request: Request<proto::UpdateJobTimeoutRequest>,
    ) -> Answer<proto::UpdateJobTimeoutResponse> {
        let r = request.into_inner();
        done(self.commands.update_job_timeout(r.job_key, r.timeout).await)
    }

    async fn delete_resource(
        &self,
        request: Request<proto::DeleteResourceRequest>,
    ) -> Answer<proto::DeleteResourceResponse> {
        let key = request.into_inner().resource_key;
        done(self.commands.delete_resource(key).await)
    }

    async fn broadcast_signal(
        &self,
        request: Request<proto::BroadcastSignalRequest>,
    ) -> Answer<proto::BroadcastSignalResponse> {
        self.check_size(request.get_ref())?;
        let r = request.into_inner();
        tenant(&r.tenant_id, "gRPC request BroadcastSignal")?;
        let c = &self.commands;
        let sent = c.broadcast_signal(r.signal_name, r.variables).await?;
        Ok(Response::new(proto::BroadcastSignalResponse {
            key: sent.key,
            tenant_id: sent.tenant_id,
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
