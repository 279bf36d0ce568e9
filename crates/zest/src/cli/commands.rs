//! One function per client command: build the request, send it, print the answer as zbctl
//! does.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use zest_gateway::proto;

use super::conn::{CliError, ConnArgs};
use super::print::{go_duration, print_json, protojson, variables};
use super::{InstanceFlags, ThrowErrorArgs};

/// Prints the human line, or the response as protojson with `--output json`.
fn print_either(
    conn: &ConnArgs,
    human: String,
    name: &str,
    message: &impl prost::Message,
) -> Result<(), CliError> {
    if conn.json() {
        println!("{}", protojson(name, message)?);
    } else {
        println!("{human}");
    }
    Ok(())
}

/// The longest a gateway may long-poll within a request timeout, as the official clients
/// compute it: the timeout less 10 % of it (at most 10 s), so the answer arrives before the
/// client gives up.
fn long_poll_ms(timeout: Duration) -> i64 {
    let offset = (timeout / 10).min(Duration::from_secs(10));
    (timeout - offset).as_millis() as i64
}

pub async fn deploy(conn: &ConnArgs, files: &[PathBuf], names: &[String]) -> Result<(), CliError> {
    if !names.is_empty() && names.len() != files.len() {
        return Err(CliError::Usage(format!(
            "--resourceNames gives {} names for {} files",
            names.len(),
            files.len()
        )));
    }
    let mut resources = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let content = std::fs::read(f).with_context(|| format!("reading {}", f.display()))?;
        // zbctl sends the path as given as the resource name
        let name = names
            .get(i)
            .cloned()
            .unwrap_or_else(|| f.to_string_lossy().into_owned());
        resources.push(proto::Resource { name, content });
    }
    let mut c = conn.connect().await?;
    let request = proto::DeployResourceRequest {
        resources,
        tenant_id: String::new(),
    };
    match c.deploy_resource(request).await {
        Ok(r) => Ok(print_json("DeployResourceResponse", &r.into_inner())?),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn create_instance(
    conn: &ConnArgs,
    process: &str,
    flags: &InstanceFlags,
) -> Result<(), CliError> {
    let mut request = proto::CreateProcessInstanceRequest {
        version: flags.version.unwrap_or(-1),
        variables: variables(flags.variables.as_deref())?,
        ..Default::default()
    };
    // a number is a process definition key, as in zbctl
    match process.parse::<i64>() {
        Ok(key) => request.process_definition_key = key,
        Err(_) => request.bpmn_process_id = process.to_string(),
    }
    let mut c = conn.connect().await?;
    let Some(fetch) = &flags.with_result else {
        return match c.create_process_instance(request).await {
            Ok(r) => Ok(print_json(
                "CreateProcessInstanceResponse",
                &r.into_inner(),
            )?),
            Err(s) => Err(conn.failed(s).await),
        };
    };
    let fetch_variables = fetch
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(String::from)
        .collect();
    let timeout = conn.timeout();
    let with_result = proto::CreateProcessInstanceWithResultRequest {
        request: Some(request),
        request_timeout: long_poll_ms(timeout),
        fetch_variables,
    };
    match c.create_process_instance_with_result(with_result).await {
        Ok(r) => Ok(print_json(
            "CreateProcessInstanceWithResultResponse",
            &r.into_inner(),
        )?),
        Err(s) if s.code() == tonic::Code::DeadlineExceeded => {
            Err(CliError::Status(tonic::Status::deadline_exceeded(format!(
                "{} (the instance did not complete within the request timeout of {}; it keeps \
                 running: give a longer --requestTimeout, or check that a worker takes its jobs)",
                s.message(),
                go_duration(timeout)
            ))))
        }
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn cancel_instance(conn: &ConnArgs, key: i64) -> Result<(), CliError> {
    let mut c = conn.connect().await?;
    let request = proto::CancelProcessInstanceRequest {
        process_instance_key: key,
        operation_reference: None,
    };
    match c.cancel_process_instance(request).await {
        Ok(r) => print_either(
            conn,
            format!("Canceled process instance with key '{key}'"),
            "CancelProcessInstanceResponse",
            &r.into_inner(),
        ),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn set_variables(
    conn: &ConnArgs,
    key: i64,
    vars: &str,
    local: bool,
) -> Result<(), CliError> {
    let request = proto::SetVariablesRequest {
        element_instance_key: key,
        variables: variables(Some(vars))?,
        local,
        operation_reference: None,
    };
    let mut c = conn.connect().await?;
    match c.set_variables(request).await {
        Ok(r) => {
            let r = r.into_inner();
            print_either(
                conn,
                format!(
                    "Set the variables of element instance with key '{key}' to '{vars}' with command '{}'",
                    r.key
                ),
                "SetVariablesResponse",
                &r,
            )
        }
        Err(s) => Err(conn.failed(s).await),
    }
}

pub struct Message {
    pub name: String,
    pub correlation_key: String,
    pub variables: String,
    pub ttl: Duration,
    pub message_id: String,
}

pub async fn publish_message(conn: &ConnArgs, m: Message) -> Result<(), CliError> {
    let request = proto::PublishMessageRequest {
        name: m.name,
        correlation_key: m.correlation_key,
        time_to_live: m.ttl.as_millis() as i64,
        message_id: m.message_id,
        variables: variables(Some(&m.variables))?,
        tenant_id: String::new(),
    };
    let mut c = conn.connect().await?;
    match c.publish_message(request).await {
        Ok(r) => Ok(print_json("PublishMessageResponse", &r.into_inner())?),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn broadcast_signal(conn: &ConnArgs, name: &str, vars: &str) -> Result<(), CliError> {
    let request = proto::BroadcastSignalRequest {
        signal_name: name.to_string(),
        variables: variables(Some(vars))?,
        tenant_id: String::new(),
    };
    let mut c = conn.connect().await?;
    match c.broadcast_signal(request).await {
        Ok(r) => Ok(print_json("BroadcastSignalResponse", &r.into_inner())?),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub struct Activation {
    pub job_type: String,
    pub max_jobs: i32,
    pub timeout: Duration,
    pub worker: String,
    pub fetch_variables: Vec<String>,
}

pub async fn activate_jobs(conn: &ConnArgs, a: Activation) -> Result<(), CliError> {
    let request = proto::ActivateJobsRequest {
        r#type: a.job_type,
        worker: a.worker,
        timeout: a.timeout.as_millis() as i64,
        max_jobs_to_activate: a.max_jobs,
        fetch_variable: a.fetch_variables,
        request_timeout: long_poll_ms(conn.timeout()),
        tenant_ids: vec![],
    };
    let mut c = conn.connect().await?;
    let mut jobs = Vec::new();
    match c.activate_jobs(request).await {
        Ok(stream) => {
            let mut stream = stream.into_inner();
            loop {
                match stream.message().await {
                    Ok(Some(batch)) => jobs.extend(batch.jobs),
                    Ok(None) => break,
                    Err(s) => return Err(conn.failed(s).await),
                }
            }
        }
        Err(s) => return Err(conn.failed(s).await),
    }
    Ok(print_json(
        "ActivateJobsResponse",
        &proto::ActivateJobsResponse { jobs },
    )?)
}

pub async fn complete_job(conn: &ConnArgs, key: i64, vars: &str) -> Result<(), CliError> {
    let request = proto::CompleteJobRequest {
        job_key: key,
        variables: variables(Some(vars))?,
        result: None,
    };
    let mut c = conn.connect().await?;
    match c.complete_job(request).await {
        Ok(r) => print_either(
            conn,
            format!("Completed job with key '{key}' and variables '{vars}'"),
            "CompleteJobResponse",
            &r.into_inner(),
        ),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub struct Failure {
    pub key: i64,
    pub retries: i32,
    pub error_message: String,
    pub retry_backoff: Duration,
    pub variables: String,
}

pub async fn fail_job(conn: &ConnArgs, f: Failure) -> Result<(), CliError> {
    let request = proto::FailJobRequest {
        job_key: f.key,
        retries: f.retries,
        error_message: f.error_message,
        retry_back_off: f.retry_backoff.as_millis() as i64,
        variables: variables(Some(&f.variables))?,
    };
    let mut c = conn.connect().await?;
    match c.fail_job(request).await {
        Ok(r) => print_either(
            conn,
            format!(
                "Failed job with key '{}' and set remaining retries to '{}' and variables '{}' with retry backoff '{}'",
                f.key,
                f.retries,
                f.variables,
                go_duration(f.retry_backoff)
            ),
            "FailJobResponse",
            &r.into_inner(),
        ),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn throw_error(conn: &ConnArgs, a: &ThrowErrorArgs) -> Result<(), CliError> {
    let request = proto::ThrowErrorRequest {
        job_key: a.job_key,
        error_code: a.error_code.clone(),
        error_message: a.error_message.clone(),
        variables: variables(Some(&a.variables))?,
    };
    let mut c = conn.connect().await?;
    match c.throw_error(request).await {
        Ok(r) => print_either(
            conn,
            format!(
                "Threw error with code '{}' on job with key {}",
                a.error_code, a.job_key
            ),
            "ThrowErrorResponse",
            &r.into_inner(),
        ),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn update_retries(conn: &ConnArgs, key: i64, retries: i32) -> Result<(), CliError> {
    let request = proto::UpdateJobRetriesRequest {
        job_key: key,
        retries,
        operation_reference: None,
    };
    let mut c = conn.connect().await?;
    match c.update_job_retries(request).await {
        Ok(r) => print_either(
            conn,
            format!("Updated the retries of job with key '{key}' to '{retries}'"),
            "UpdateJobRetriesResponse",
            &r.into_inner(),
        ),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn update_timeout(conn: &ConnArgs, key: i64, timeout: Duration) -> Result<(), CliError> {
    let request = proto::UpdateJobTimeoutRequest {
        job_key: key,
        timeout: timeout.as_millis() as i64,
        operation_reference: None,
    };
    let mut c = conn.connect().await?;
    match c.update_job_timeout(request).await {
        Ok(r) => print_either(
            conn,
            format!(
                "Updated the timeout of job with key '{key}' to '{}'",
                go_duration(timeout)
            ),
            "UpdateJobTimeoutResponse",
            &r.into_inner(),
        ),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn resolve_incident(conn: &ConnArgs, key: i64) -> Result<(), CliError> {
    let request = proto::ResolveIncidentRequest {
        incident_key: key,
        operation_reference: None,
    };
    let mut c = conn.connect().await?;
    match c.resolve_incident(request).await {
        Ok(r) => print_either(
            conn,
            format!("Resolved an incident of a process instance with key '{key}'"),
            "ResolveIncidentResponse",
            &r.into_inner(),
        ),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn evaluate_decision(
    conn: &ConnArgs,
    decision: &str,
    vars: &str,
) -> Result<(), CliError> {
    let mut request = proto::EvaluateDecisionRequest {
        variables: variables(Some(vars))?,
        ..Default::default()
    };
    match decision.parse::<i64>() {
        Ok(key) => request.decision_key = key,
        Err(_) => request.decision_id = decision.to_string(),
    }
    let mut c = conn.connect().await?;
    match c.evaluate_decision(request).await {
        Ok(r) => Ok(print_json("EvaluateDecisionResponse", &r.into_inner())?),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn delete_resource(conn: &ConnArgs, key: i64) -> Result<(), CliError> {
    let request = proto::DeleteResourceRequest {
        resource_key: key,
        operation_reference: None,
    };
    let mut c = conn.connect().await?;
    match c.delete_resource(request).await {
        Ok(r) => print_either(
            conn,
            format!("Deleted resource with key '{key}'"),
            "DeleteResourceResponse",
            &r.into_inner(),
        ),
        Err(s) => Err(conn.failed(s).await),
    }
}

pub async fn status(conn: &ConnArgs) -> Result<(), CliError> {
    let mut c = conn.connect().await?;
    let r = match c.topology(proto::TopologyRequest {}).await {
        Ok(r) => r.into_inner(),
        Err(s) => return Err(conn.failed(s).await),
    };
    if conn.json() {
        return Ok(print_json("TopologyResponse", &r)?);
    }
    println!("{}", human_topology(&r));
    Ok(())
}

/// zbctl's human form of the topology.
fn human_topology(r: &proto::TopologyResponse) -> String {
    use proto::partition::{PartitionBrokerHealth as H, PartitionBrokerRole as R};
    let or_unavailable = |s: &str| {
        if s.is_empty() {
            "unavailable".to_string()
        } else {
            s.to_string()
        }
    };
    let mut out = format!(
        "Cluster size: {}\nPartitions count: {}\nReplication factor: {}\nGateway version: {}\nBrokers:",
        r.cluster_size,
        r.partitions_count,
        r.replication_factor,
        or_unavailable(&r.gateway_version)
    );
    let mut brokers = r.brokers.clone();
    brokers.sort_by_key(|b| b.node_id);
    for b in &mut brokers {
        out += &format!(
            "\n  Broker {} - {}:{}\n    Version: {}",
            b.node_id,
            b.host,
            b.port,
            or_unavailable(&b.version)
        );
        b.partitions.sort_by_key(|p| p.partition_id);
        for p in &b.partitions {
            let role = match R::try_from(p.role) {
                Ok(R::Leader) => "Leader",
                Ok(R::Follower) => "Follower",
                Ok(R::Inactive) => "Inactive",
                Err(_) => "Unknown",
            };
            let health = match H::try_from(p.health) {
                Ok(H::Healthy) => "Healthy",
                Ok(H::Unhealthy) => "Unhealthy",
                Ok(H::Dead) => "Dead",
                Err(_) => "Unknown",
            };
            out += &format!("\n    Partition {} : {role}, {health}", p.partition_id);
        }
    }
    out
}
