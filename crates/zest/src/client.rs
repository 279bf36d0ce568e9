//! Small gateway clients for the CLI.

use std::path::PathBuf;

use anyhow::Context;
use zest_gateway::proto;
use zest_gateway::proto::gateway_client::GatewayClient;

#[derive(clap::Args, Debug)]
pub struct Target {
    /// Gateway address
    #[arg(long, env = "ZEEBE_ADDRESS", default_value = "127.0.0.1:26500")]
    pub address: String,
}

async fn connect(t: &Target) -> anyhow::Result<GatewayClient<tonic::transport::Channel>> {
    let url = if t.address.starts_with("http") {
        t.address.clone()
    } else {
        format!("http://{}", t.address)
    };
    GatewayClient::connect(url.clone())
        .await
        .with_context(|| format!("connecting to the gateway at {url}"))
}

fn status_error(s: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{:?}: {}", s.code(), s.message())
}

pub async fn deploy(t: &Target, files: &[PathBuf]) -> anyhow::Result<()> {
    let mut resources = Vec::new();
    for f in files {
        let content = std::fs::read(f).with_context(|| format!("reading {}", f.display()))?;
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        resources.push(proto::Resource { name, content });
    }
    let mut c = connect(t).await?;
    let r = c
        .deploy_resource(proto::DeployResourceRequest {
            resources,
            tenant_id: String::new(),
        })
        .await
        .map_err(status_error)?
        .into_inner();
    let processes: Vec<_> = r
        .deployments
        .iter()
        .filter_map(|d| match &d.metadata {
            Some(proto::deployment::Metadata::Process(p)) => Some(serde_json::json!({
                "bpmnProcessId": p.bpmn_process_id, "version": p.version,
                "processDefinitionKey": p.process_definition_key, "resourceName": p.resource_name,
            })),
            _ => None,
        })
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({"key": r.key, "processes": processes}))?
    );
    Ok(())
}

pub async fn create(
    t: &Target,
    process_id: &str,
    vars: Option<&str>,
    with_result: bool,
    version: Option<i32>,
) -> anyhow::Result<()> {
    let variables = match vars {
        Some(v) if v.starts_with('@') => {
            std::fs::read_to_string(&v[1..]).with_context(|| format!("reading {}", &v[1..]))?
        }
        Some(v) => v.to_string(),
        None => String::new(),
    };
    let request = proto::CreateProcessInstanceRequest {
        bpmn_process_id: process_id.to_string(),
        version: version.unwrap_or(-1),
        variables,
        ..Default::default()
    };
    let mut c = connect(t).await?;
    if with_result {
        let r = c
            .create_process_instance_with_result(proto::CreateProcessInstanceWithResultRequest {
                request: Some(request),
                request_timeout: 60_000,
                fetch_variables: vec![],
            })
            .await
            .map_err(status_error)?
            .into_inner();
        let vars: serde_json::Value = serde_json::from_str(&r.variables).unwrap_or_default();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "processInstanceKey": r.process_instance_key, "bpmnProcessId": r.bpmn_process_id,
                "version": r.version, "processDefinitionKey": r.process_definition_key, "variables": vars,
            }))?
        );
    } else {
        let r = c
            .create_process_instance(request)
            .await
            .map_err(status_error)?
            .into_inner();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "processInstanceKey": r.process_instance_key, "bpmnProcessId": r.bpmn_process_id,
                "version": r.version, "processDefinitionKey": r.process_definition_key,
            }))?
        );
    }
    Ok(())
}

pub async fn status(t: &Target) -> anyhow::Result<()> {
    let mut c = connect(t).await?;
    let r = c
        .topology(proto::TopologyRequest {})
        .await
        .map_err(status_error)?
        .into_inner();
    println!("Cluster size: {}\nPartitions count: {}\nReplication factor: {}\nGateway version: {}\nBrokers:", r.cluster_size, r.partitions_count, r.replication_factor, r.gateway_version);
    for b in r.brokers {
        println!(
            "  Broker {} - {}:{}\n    Version: {}",
            b.node_id, b.host, b.port, b.version
        );
        for p in b.partitions {
            let role = proto::partition::PartitionBrokerRole::try_from(p.role)
                .map(|r| r.as_str_name())
                .unwrap_or("UNKNOWN");
            let health = proto::partition::PartitionBrokerHealth::try_from(p.health)
                .map(|r| r.as_str_name())
                .unwrap_or("UNKNOWN");
            println!("    Partition {} : {} ({})", p.partition_id, role, health);
        }
    }
    Ok(())
}
