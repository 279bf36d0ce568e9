//! Configuration of `zest start`: defaults < config file (TOML) < environment < flags.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde::Deserialize;
use zest_broker::BrokerConfig;

#[derive(clap::Args, Debug, Default)]
pub struct StartArgs {
    /// TOML configuration file
    #[arg(long, env = "ZEST_CONFIG")]
    pub config: Option<PathBuf>,
    /// Data directory (default ./data)
    #[arg(long, env = "ZEST_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// gRPC gateway address (default 127.0.0.1:26500)
    #[arg(long, env = "ZEST_GATEWAY_ADDRESS")]
    pub gateway_address: Option<String>,
    /// Management address: /metrics, /health, /ready, /startup (default 127.0.0.1:9600)
    #[arg(long, env = "ZEST_MANAGEMENT_ADDRESS")]
    pub management_address: Option<String>,
    /// Number of partitions (default 1)
    #[arg(long, env = "ZEST_PARTITIONS")]
    pub partitions: Option<u32>,
    /// Largest accepted request in bytes (default 4194304)
    #[arg(long, env = "ZEST_MAX_MESSAGE_SIZE")]
    pub max_message_size: Option<usize>,
    /// Capacity of each partition's command queue; beyond it requests get RESOURCE_EXHAUSTED
    #[arg(long, env = "ZEST_COMMAND_QUEUE")]
    pub command_queue: Option<usize>,
    /// Block cache of the embedded store in MiB (default 32)
    #[arg(long, env = "ZEST_CACHE_MB")]
    pub cache_mb: Option<u64>,
    /// Log filter (tracing EnvFilter syntax, default "info")
    #[arg(long, env = "ZEST_LOG")]
    pub log: Option<String>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileConfig {
    data_dir: Option<PathBuf>,
    gateway_address: Option<String>,
    management_address: Option<String>,
    partitions: Option<u32>,
    max_message_size: Option<usize>,
    command_queue: Option<usize>,
    cache_mb: Option<u64>,
    log: Option<String>,
    scheduler_interval_ms: Option<u64>,
    snapshot_every: Option<u64>,
}

pub struct Resolved {
    pub broker: BrokerConfig,
    pub gateway_address: String,
    pub management_address: String,
    pub max_message_size: usize,
    pub log_filter: String,
}

pub fn resolve(args: StartArgs) -> anyhow::Result<Resolved> {
    let file: FileConfig = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading config file {}", path.display()))?;
            toml::from_str(&text)
                .with_context(|| format!("config file {} is invalid", path.display()))?
        }
        None => FileConfig::default(),
    };
    let mut broker = BrokerConfig {
        data_dir: args
            .data_dir
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from("data")),
        partitions: args.partitions.or(file.partitions).unwrap_or(1),
        ..BrokerConfig::default()
    };
    anyhow::ensure!(
        broker.partitions == 1,
        "partitions = {}: this version of Zest runs exactly 1 partition per node; more need \
         deployment distribution between partitions, which is not built yet",
        broker.partitions
    );
    if let Some(q) = args.command_queue.or(file.command_queue) {
        anyhow::ensure!(q >= 1, "command-queue must be at least 1");
        broker.command_queue = q;
    }
    if let Some(mb) = args.cache_mb.or(file.cache_mb) {
        broker.store.cache_bytes = mb * 1024 * 1024;
    }
    if let Some(ms) = file.scheduler_interval_ms {
        broker.scheduler_interval = Duration::from_millis(ms.max(1));
    }
    if let Some(n) = file.snapshot_every {
        broker.raft.snapshot_every = n.max(100);
    }
    let gateway_address = args
        .gateway_address
        .or(file.gateway_address)
        .unwrap_or_else(|| "127.0.0.1:26500".into());
    let management_address = args
        .management_address
        .or(file.management_address)
        .unwrap_or_else(|| "127.0.0.1:9600".into());
    broker.advertised_address = gateway_address.clone();
    Ok(Resolved {
        broker,
        gateway_address,
        management_address,
        max_message_size: args
            .max_message_size
            .or(file.max_message_size)
            .unwrap_or(4 * 1024 * 1024),
        log_filter: args
            .log
            .or(file.log)
            .unwrap_or_else(|| "info,openraft=warn".into()),
    })
}
