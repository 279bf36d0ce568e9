//! Configuration of `zest start`: defaults < config file (TOML) < environment < flags.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde::Deserialize;
use zest_broker::{BackpressureConfig, BrokerConfig, LimitAlgorithm, LogFlush};

#[derive(clap::Args, Debug, Default)]
pub struct StartArgs {
    /// TOML configuration file
    #[arg(long, env = "ZEST_CONFIG")]
    pub config: Option<PathBuf>,
    /// Data directory (default ./data)
    #[arg(long, env = "ZEST_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Directory for backups taken with POST /actuator/backupRuntime (Zeebe:
    /// zeebe.broker.data.backup.filesystem.basePath); none: backups are refused
    #[arg(long, env = "ZEST_BACKUP_DIR")]
    pub backup_dir: Option<PathBuf>,
    /// gRPC gateway address (default 127.0.0.1:26500)
    #[arg(long, env = "ZEST_GATEWAY_ADDRESS")]
    pub gateway_address: Option<String>,
    /// Management address: /metrics, /health, /ready, /startup (default 127.0.0.1:9600)
    #[arg(long, env = "ZEST_MANAGEMENT_ADDRESS")]
    pub management_address: Option<String>,
    /// Camunda REST API v2 address (default 127.0.0.1:8080; port 0 picks a free port)
    #[arg(long, env = "ZEST_REST_ADDRESS")]
    pub rest_address: Option<String>,
    /// Number of partitions (default 1; Zeebe's ZEEBE_BROKER_CLUSTER_PARTITIONSCOUNT): each
    /// runs its own log and state, instances are spread over them round-robin, messages go to
    /// the partition of their correlation key. Fixed when the data directory is created
    #[arg(long, env = "ZEST_PARTITIONS")]
    pub partitions: Option<u32>,
    /// This node's id in a cluster, 0 to cluster-size - 1 (default 0; Zeebe's
    /// ZEEBE_BROKER_CLUSTER_NODEID)
    #[arg(long, env = "ZEST_NODE_ID")]
    pub node_id: Option<u64>,
    /// Nodes in the cluster (default 1; Zeebe's ZEEBE_BROKER_CLUSTER_CLUSTERSIZE)
    #[arg(long, env = "ZEST_CLUSTER_SIZE")]
    pub cluster_size: Option<u32>,
    /// Nodes that replicate each partition (default 1, at most cluster-size; Zeebe's
    /// ZEEBE_BROKER_CLUSTER_REPLICATIONFACTOR)
    #[arg(long, env = "ZEST_REPLICATION_FACTOR")]
    pub replication_factor: Option<u32>,
    /// Internal addresses of other nodes, comma separated, to find the cluster by (Zeebe's
    /// ZEEBE_BROKER_CLUSTER_INITIALCONTACTPOINTS)
    #[arg(long, env = "ZEST_CONTACT_POINTS", value_delimiter = ',')]
    pub contact_points: Option<Vec<String>>,
    /// Address for the other nodes: consensus and commands between nodes (default
    /// 127.0.0.1:26502 in a cluster, none for a single node; Zeebe's internal API, port 26502)
    #[arg(long, env = "ZEST_INTERNAL_ADDRESS")]
    pub internal_address: Option<String>,
    /// Address the other nodes reach this one at (default: the internal address)
    #[arg(long, env = "ZEST_ADVERTISED_INTERNAL_ADDRESS")]
    pub advertised_internal_address: Option<String>,
    /// The secret every node and gateway of the cluster shares (at least 16 characters; e.g.
    /// `openssl rand -hex 16`): the internal port takes frames only from processes that know
    /// it. Required wherever there is an internal port; prefer the environment or the
    /// configuration file to the command line, which other users of the machine can read
    #[arg(long, env = "ZEST_CLUSTER_SECRET", hide_env_values = true)]
    pub cluster_secret: Option<String>,
    /// Listen on addresses other than loopback (127.0.0.1, ::1) with no authentication
    /// (--auth none): anyone who reaches such a port can send any command. Without it or
    /// --auth a node bound to another address refuses to start (also ZEST_INSECURE=true,
    /// insecure = true)
    #[arg(long, env = "ZEST_INSECURE", num_args = 0..=1, default_missing_value = "true")]
    pub insecure: Option<bool>,
    #[command(flatten)]
    pub auth: crate::auth_config::AuthArgs,
    /// Most connections open at once on the gRPC, REST and management ports together (default
    /// 4096); beyond it new connections are closed as they come
    #[arg(long, env = "ZEST_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Most connections open at once from one client address (default 1024)
    #[arg(long, env = "ZEST_MAX_CONNECTIONS_PER_IP")]
    pub max_connections_per_ip: Option<usize>,
    /// Most requests in progress at once, HTTP/2 streams and gRPC calls included (default
    /// 8192); beyond it 503 or RESOURCE_EXHAUSTED
    #[arg(long, env = "ZEST_MAX_REQUESTS")]
    pub max_requests: Option<usize>,
    /// Most requests in progress at once from one client address (default 4096); beyond it
    /// 429 or RESOURCE_EXHAUSTED
    #[arg(long, env = "ZEST_MAX_REQUESTS_PER_IP")]
    pub max_requests_per_ip: Option<usize>,
    /// How long a client may take to send a request's headers (on HTTP/1 also how long an idle
    /// connection stays open), its first bytes on a new connection, and each part of a body
    /// after the one before (default 20000); a body must also come at 16 KiB/s on the whole
    #[arg(long, env = "ZEST_CLIENT_TIMEOUT_MS")]
    pub client_timeout_ms: Option<u64>,
    /// Largest accepted request in bytes (default 4194304)
    #[arg(long, env = "ZEST_MAX_MESSAGE_SIZE")]
    pub max_message_size: Option<usize>,
    /// Capacity of each partition's command queue; beyond it requests get RESOURCE_EXHAUSTED
    #[arg(long, env = "ZEST_COMMAND_QUEUE")]
    pub command_queue: Option<usize>,
    /// Memory budget in MiB (default 128). A quarter of it (at most 48 MiB) is kept for the
    /// program's code, the runtime, connections and the allocator; of the rest, an eighth for
    /// the store's block cache, a quarter for its write buffers, an eighth for client commands
    /// waiting in the partitions' queues (by their variables and resources; beyond it
    /// RESOURCE_EXHAUSTED), a sixteenth for parsed models, a thirty-second for evaluated
    /// multi-instance input collections, an eighth for log entries waiting to be applied, a
    /// sixteenth for groups processed ahead of their commit, an eighth for jobs pushed to job
    /// streams and an eighth for client commands in progress (beyond it RESOURCE_EXHAUSTED
    /// for commands backpressure may refuse), and a sixteenth for request bodies and gRPC
    /// messages being received (beyond it 429/503 or RESOURCE_EXHAUSTED; a client may take
    /// half, and always one message of --max-message-size); the partitions of the node share
    /// each part.
    /// When the resident memory passes the budget less a quarter of its reserve, the node
    /// refuses to create process instances until it is back under (--memory-guard). /metrics
    /// shows the split
    /// (zest_memory_budget_bytes)
    #[arg(long, env = "ZEST_MEMORY_MB")]
    pub memory_mb: Option<u64>,
    /// Keep a history of every instance, element, variable, incident, job and user task in
    /// the data directory (history.sqlite) for the REST API's searches: on (default) or off
    /// (the searches then answer 403, as Camunda's do without a secondary storage)
    #[arg(long, env = "ZEST_HISTORY")]
    pub history: Option<String>,
    /// Keep the history in this PostgreSQL database instead of the data directory
    /// (postgres://user:password@host:port/database; the schema is created and migrated at
    /// start; several nodes of a cluster may share one database)
    #[arg(long, env = "ZEST_HISTORY_URL")]
    pub history_url: Option<String>,
    /// Days a finished root process instance (and all under it) stays in history (default
    /// 30, Camunda's default-history-ttl)
    #[arg(long, env = "ZEST_HISTORY_TTL_DAYS")]
    pub history_ttl_days: Option<u64>,
    /// Refuse new process instances while a partition's log holds more than this many MiB not
    /// yet exported to history (a paused or failing exporter; default 1024, 0: no bound)
    #[arg(long, env = "ZEST_MAX_UNEXPORTED_LOG_MB")]
    pub max_unexported_log_mb: Option<u64>,
    /// Block cache of the embedded store in MiB (default: an eighth of --memory-mb less its
    /// reserve, 12 of 128)
    #[arg(long, env = "ZEST_CACHE_MB")]
    pub cache_mb: Option<u64>,
    /// Refuse to create process instances while the node's resident memory is at the budget
    /// (default true): past --memory-mb less a quarter of its reserve (120 MiB of 128), until
    /// it is back under the budget less half its reserve. false leaves only the counted parts
    /// of the budget
    #[arg(long, env = "ZEST_MEMORY_GUARD")]
    pub memory_guard: Option<bool>,
    /// Memory for write buffers (memtables) of the embedded store in MiB (default: a quarter
    /// of --memory-mb less its reserve, 24 of 128)
    #[arg(long, env = "ZEST_WRITE_BUFFER_MB")]
    pub write_buffer_mb: Option<u64>,
    /// Backpressure algorithm: aimd (default), vegas, fixed, or off
    #[arg(long, env = "ZEST_BACKPRESSURE")]
    pub backpressure: Option<String>,
    /// Backpressure: initial limit of commands in flight (fixed: the limit)
    #[arg(long, env = "ZEST_BACKPRESSURE_LIMIT")]
    pub backpressure_limit: Option<usize>,
    /// Backpressure: largest limit of commands in flight
    #[arg(long, env = "ZEST_BACKPRESSURE_MAX_LIMIT")]
    pub backpressure_max_limit: Option<usize>,
    /// Backpressure (aimd): round trip in ms above which the limit is cut (default 200, Zeebe's)
    #[arg(long, env = "ZEST_BACKPRESSURE_AIMD_RTT_MS")]
    pub backpressure_aimd_rtt_ms: Option<u64>,
    /// Backpressure: refuse new process instances while jobs wait longer than this (ms) behind
    /// job workers that take all they ask for (the job backlog gate; default 0: off)
    #[arg(long, env = "ZEST_BACKPRESSURE_MAX_JOB_WAIT_MS")]
    pub backpressure_max_job_wait_ms: Option<u64>,
    /// Most groups processed ahead of their commit (default 4)
    #[arg(long, env = "ZEST_PIPELINE_DEPTH")]
    pub pipeline_depth: Option<usize>,
    /// fsync the log on every commit (default true; Zeebe's cluster.raft.flush.enabled). false:
    /// only before snapshots and at shutdown, so an OS crash or power loss can lose acknowledged
    /// commands (a crash of the process cannot)
    #[arg(long, env = "ZEST_RAFT_FLUSH_ENABLED")]
    pub raft_flush_enabled: Option<bool>,
    /// Delay the log's fsync by this many ms (default 0; Zeebe's cluster.raft.flush.delayTime):
    /// commits no longer wait for it, and an OS crash or power loss can lose what was committed
    /// in the last delay
    #[arg(long, env = "ZEST_RAFT_FLUSH_DELAY_MS")]
    pub raft_flush_delay_ms: Option<u64>,
    /// Log filter (tracing EnvFilter syntax; default "info,openraft=warn,fjall=warn,lsm_tree=warn":
    /// the embedded store and consensus only say what goes wrong)
    #[arg(long, env = "ZEST_LOG")]
    pub log: Option<String>,
    /// Stop (as on SIGTERM) when the process that started this one ends, whatever ended it
    /// (a SIGKILL included): for nodes run by `zest bench` and other launchers
    #[arg(long, hide = true)]
    pub exit_with_parent: bool,
    /// Stop when the process PID, which started this one, ends: a launcher passes its own pid,
    /// so that an end before this process began to watch counts too
    #[arg(long, hide = true, value_name = "PID")]
    pub parent_pid: Option<u32>,
    /// TLS of the ports (tls.rs)
    #[command(flatten)]
    pub tls: crate::tls::TlsArgs,
}

#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileConfig {
    data_dir: Option<PathBuf>,
    backup_dir: Option<PathBuf>,
    gateway_address: Option<String>,
    management_address: Option<String>,
    rest_address: Option<String>,
    partitions: Option<u32>,
    node_id: Option<u64>,
    cluster_size: Option<u32>,
    replication_factor: Option<u32>,
    contact_points: Option<Vec<String>>,
    internal_address: Option<String>,
    advertised_internal_address: Option<String>,
    cluster_secret: Option<String>,
    max_message_size: Option<usize>,
    insecure: Option<bool>,
    auth: Option<String>,
    admin_user: Option<String>,
    max_connections: Option<usize>,
    max_connections_per_ip: Option<usize>,
    max_requests: Option<usize>,
    max_requests_per_ip: Option<usize>,
    client_timeout_ms: Option<u64>,
    command_queue: Option<usize>,
    memory_mb: Option<u64>,
    cache_mb: Option<u64>,
    memory_guard: Option<bool>,
    history: Option<String>,
    history_ttl_days: Option<u64>,
    history_url: Option<String>,
    max_unexported_log_mb: Option<u64>,
    log: Option<String>,
    scheduler_interval_ms: Option<u64>,
    snapshot_every: Option<u64>,
    keep_behind_snapshot: Option<u64>,
    log_segment_mb: Option<u64>,
    log_tail_mb: Option<u64>,
    election_timeout_ms: Option<u64>,
    heartbeat_interval_ms: Option<u64>,
    write_buffer_mb: Option<u64>,
    backpressure: Option<String>,
    backpressure_limit: Option<usize>,
    backpressure_max_limit: Option<usize>,
    backpressure_aimd_rtt_ms: Option<u64>,
    backpressure_max_job_wait_ms: Option<u64>,
    pipeline_depth: Option<usize>,
    max_group: Option<usize>,
    raft_flush_enabled: Option<bool>,
    raft_flush_delay_ms: Option<u64>,
    /// TLS of the ports: the `[tls]` table (tls.rs)
    tls: Option<crate::tls::TlsFile>,
}

/// The default log filter: Zest's own information, and only warnings and errors of the embedded
/// store (fjall and its LSM trees say dozens of lines at every start) and of openraft.
/// Most partitions a node runs (keys hold the partition in 13 bits; each partition has its own
/// log, state keyspaces and threads' worth of work, so more than the cores buys little).
pub const MAX_PARTITIONS: u32 = 128;

pub const DEFAULT_LOG_FILTER: &str = "info,openraft=warn,fjall=warn,lsm_tree=warn";

pub struct Resolved {
    pub broker: BrokerConfig,
    pub gateway_address: String,
    pub management_address: String,
    pub rest_address: String,
    pub max_message_size: usize,
    /// The bounds on what clients may hold (connections, requests, bodies being received).
    pub intake: zest_gateway::intake::Limits,
    pub log_filter: String,
    pub exit_with_parent: bool,
    pub parent_pid: Option<u32>,
    /// How clients authenticate, and the users to create at start.
    pub auth: zest_gateway::auth::Method,
    pub initial_users: Vec<crate::auth_config::InitialUser>,
    /// The cluster secret (the session cookies' key derives from it).
    pub cluster_secret: Option<String>,
    /// The certificate pairs of the client ports with TLS.
    pub tls: crate::tls::TlsPorts,
}

fn backpressure(
    algorithm: Option<&str>,
    limit: Option<usize>,
    max: Option<usize>,
    aimd_rtt_ms: Option<u64>,
    max_job_wait_ms: Option<u64>,
) -> anyhow::Result<BackpressureConfig> {
    let max_job_wait = match max_job_wait_ms {
        None | Some(0) => None,
        Some(ms) => Some(Duration::from_millis(ms)),
    };
    let max = max.unwrap_or(4096).max(1);
    let algorithm = match algorithm.unwrap_or("aimd") {
        "vegas" => LimitAlgorithm::Vegas {
            initial: limit.unwrap_or(64).clamp(1, max),
            max,
            alpha: 3.0,
            beta: 6.0,
        },
        "aimd" => LimitAlgorithm::Aimd {
            initial: limit.unwrap_or(256).clamp(1, max),
            min: 16.min(max),
            max,
            expected_rtt: aimd_rtt_ms
                .map(|ms| Duration::from_millis(ms.max(1)))
                .unwrap_or(zest_broker::DEFAULT_AIMD_RTT),
            backoff_ratio: 0.9,
        },
        "fixed" => LimitAlgorithm::Fixed {
            limit: limit.unwrap_or(1000).max(1),
        },
        "off" => {
            return Ok(BackpressureConfig {
                enabled: false,
                max_job_wait: None,
                ..BackpressureConfig::default()
            })
        }
        other => anyhow::bail!(
            "backpressure = '{other}' is not an algorithm: use vegas, aimd, fixed or off"
        ),
    };
    Ok(BackpressureConfig {
        enabled: true,
        algorithm,
        max_job_wait,
    })
}

/// Zeebe's `cluster.raft.flush`: disabled wins over a delay.
fn log_flush(enabled: Option<bool>, delay_ms: Option<u64>) -> LogFlush {
    match (enabled.unwrap_or(true), delay_ms.unwrap_or(0)) {
        (false, _) => LogFlush::Off,
        (true, 0) => LogFlush::EveryAppend,
        (true, ms) => LogFlush::Delayed(Duration::from_millis(ms)),
    }
}

struct ClusterArgs {
    node_id: Option<u64>,
    cluster_size: Option<u32>,
    replication_factor: Option<u32>,
    contact_points: Option<Vec<String>>,
    internal_address: Option<String>,
    advertised_internal_address: Option<String>,
    cluster_secret: Option<String>,
}

fn cluster(broker: &mut BrokerConfig, a: ClusterArgs) -> anyhow::Result<()> {
    let size = a.cluster_size.unwrap_or(1);
    anyhow::ensure!(size >= 1, "cluster-size must be at least 1");
    let node_id = a.node_id.unwrap_or(0);
    anyhow::ensure!(
        node_id < u64::from(size),
        "node-id = {node_id}: expected 0 to {} in a cluster of {size} node(s) (set --cluster-size)",
        size - 1
    );
    let rf = a.replication_factor.unwrap_or(1);
    anyhow::ensure!(
        (1..=size).contains(&rf),
        "replication-factor = {rf}: expected 1 to the cluster size ({size})"
    );
    broker.node_id = node_id;
    let c = &mut broker.cluster;
    c.cluster_size = size;
    c.replication_factor = rf;
    c.contact_points = a
        .contact_points
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    c.internal_address = a
        .internal_address
        .or_else(|| (size > 1).then(|| "127.0.0.1:26502".to_string()));
    c.advertised_internal_address = a.advertised_internal_address;
    c.token = a.cluster_secret.as_deref().map(token).transpose()?;
    needs_secret(c)?;
    anyhow::ensure!(
        size == 1 || !c.contact_points.is_empty(),
        "a node of a cluster of {size} needs --contact-points: the internal addresses of the other nodes (or some of them)"
    );
    Ok(())
}

/// The internal port's token from the cluster secret, refused when too short to be a secret.
fn token(secret: &str) -> anyhow::Result<zest_cluster::transport::ClusterToken> {
    anyhow::ensure!(
        secret.chars().count() >= 16,
        "cluster-secret: at least 16 characters (e.g. the output of `openssl rand -hex 16`)"
    );
    Ok(zest_cluster::transport::ClusterToken::from_secret(secret))
}

/// A node or gateway with an internal port must be given the cluster secret: the port takes
/// consensus, snapshot and command frames, which only members may send.
fn needs_secret(c: &zest_broker::ClusterConfig) -> anyhow::Result<()> {
    match (&c.internal_address, &c.token) {
        (Some(address), None) => anyhow::bail!(
            "the internal port ({address}) takes frames only from the cluster's members: give \
             every node and gateway the same --cluster-secret (or ZEST_CLUSTER_SECRET, or \
             cluster-secret in the configuration file)"
        ),
        _ => Ok(()),
    }
}

/// A standalone gateway: no partitions, an id of its own outside the brokers' (it changes at
/// every start), an internal port on a free port unless one is given (brokers send it job
/// notifications there); the cluster's shape comes from the brokers.
pub fn as_gateway(broker: &mut BrokerConfig) -> anyhow::Result<()> {
    anyhow::ensure!(
        !broker.cluster.contact_points.is_empty(),
        "a gateway needs --contact-points: the internal addresses of one or more brokers"
    );
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64 ^ d.as_secs())
        .unwrap_or(0);
    broker.node_id = (1 << 62) | (nanos & 0xffff_ffff);
    broker.cluster.gateway_only = true;
    if broker.cluster.internal_address.is_none() {
        broker.cluster.internal_address = Some("127.0.0.1:0".into());
    }
    needs_secret(&broker.cluster)
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
        backup_dir: args.backup_dir.or(file.backup_dir),
        ..BrokerConfig::default()
    };
    anyhow::ensure!(
        (1..=MAX_PARTITIONS).contains(&broker.partitions),
        "partitions = {}: expected 1 to {MAX_PARTITIONS} partitions",
        broker.partitions
    );
    cluster(
        &mut broker,
        ClusterArgs {
            node_id: args.node_id.or(file.node_id),
            cluster_size: args.cluster_size.or(file.cluster_size),
            replication_factor: args.replication_factor.or(file.replication_factor),
            contact_points: args.contact_points.or(file.contact_points),
            internal_address: args.internal_address.or(file.internal_address),
            advertised_internal_address: args
                .advertised_internal_address
                .or(file.advertised_internal_address),
            cluster_secret: args.cluster_secret.clone().or(file.cluster_secret.clone()),
        },
    )?;
    let cluster_secret = args.cluster_secret.or(file.cluster_secret);
    let (auth, initial_users) =
        crate::auth_config::resolve(args.auth, file.auth, file.admin_user, &|name| {
            std::env::var(name).ok()
        })?;
    if let Some(q) = args.command_queue.or(file.command_queue) {
        anyhow::ensure!(q >= 1, "command-queue must be at least 1");
        broker.command_queue = q;
    }
    let memory_mb = args.memory_mb.or(file.memory_mb).unwrap_or(128);
    anyhow::ensure!(
        memory_mb >= 32,
        "memory-mb = {memory_mb}: Zest needs at least 32 MiB (the default is 128)"
    );
    broker.memory_bytes = memory_mb << 20;
    // the parts are sized from what the reserve (code, runtime, connections) leaves
    broker.size_from_memory();
    if let Some(mb) = args.cache_mb.or(file.cache_mb) {
        broker.store.cache_bytes = mb * 1024 * 1024;
    }
    broker.memory_guard = args.memory_guard.or(file.memory_guard).unwrap_or(true);
    broker.history = match args.history.or(file.history).as_deref() {
        None | Some("on") => true,
        Some("off") => false,
        Some(other) => anyhow::bail!("history = {other}: expected on or off"),
    };
    broker.history_url = args.history_url.or(file.history_url);
    if let Some(url) = &broker.history_url {
        anyhow::ensure!(
            broker.history,
            "history-url is set but history is off: turn history on, or leave the URL out"
        );
        anyhow::ensure!(
            url.starts_with("postgres://") || url.starts_with("postgresql://"),
            "history-url: expected postgres://user:password@host:port/database"
        );
    }
    if let Some(days) = args.history_ttl_days.or(file.history_ttl_days) {
        anyhow::ensure!(days >= 1, "history-ttl-days must be at least 1");
        broker.history_ttl = Duration::from_secs(days * 24 * 3600);
    }
    if let Some(mb) = args.max_unexported_log_mb.or(file.max_unexported_log_mb) {
        broker.max_unexported_log_bytes = mb << 20;
    }
    if let Some(mb) = args.write_buffer_mb.or(file.write_buffer_mb) {
        anyhow::ensure!(mb >= 1, "write-buffer-mb must be at least 1");
        broker.store.write_buffer_bytes = mb * 1024 * 1024;
    }
    if let Some(d) = args.pipeline_depth.or(file.pipeline_depth) {
        anyhow::ensure!(d >= 1, "pipeline-depth must be at least 1");
        broker.pipeline_depth = d;
    }
    if let Some(g) = file.max_group {
        anyhow::ensure!(g >= 1, "max-group must be at least 1");
        broker.max_group = g;
    }
    broker.backpressure = backpressure(
        args.backpressure.or(file.backpressure).as_deref(),
        args.backpressure_limit.or(file.backpressure_limit),
        args.backpressure_max_limit.or(file.backpressure_max_limit),
        args.backpressure_aimd_rtt_ms
            .or(file.backpressure_aimd_rtt_ms),
        args.backpressure_max_job_wait_ms
            .or(file.backpressure_max_job_wait_ms),
    )?;
    if let Some(ms) = file.scheduler_interval_ms {
        broker.scheduler_interval = Duration::from_millis(ms.max(1));
    }
    if let Some(n) = file.snapshot_every {
        broker.raft.snapshot_every = n.max(100);
    }
    if let Some(n) = file.keep_behind_snapshot {
        broker.raft.keep_behind_snapshot = n.max(10);
    }
    if let Some(mb) = file.log_segment_mb {
        anyhow::ensure!(mb >= 1, "log-segment-mb must be at least 1");
        broker.store.segment_bytes = mb << 20;
    }
    if let Some(ms) = file.election_timeout_ms {
        anyhow::ensure!(ms >= 50, "election-timeout-ms must be at least 50");
        broker.raft.election_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = file.heartbeat_interval_ms {
        anyhow::ensure!(ms >= 10, "heartbeat-interval-ms must be at least 10");
        broker.raft.heartbeat_interval = Duration::from_millis(ms);
    }
    anyhow::ensure!(
        broker.raft.heartbeat_interval < broker.raft.election_timeout,
        "heartbeat-interval-ms ({} ms) must be below election-timeout-ms ({} ms)",
        broker.raft.heartbeat_interval.as_millis(),
        broker.raft.election_timeout.as_millis()
    );
    if let Some(mb) = file.log_tail_mb {
        anyhow::ensure!(mb >= 1, "log-tail-mb must be at least 1");
        broker.raft.log_tail_bytes = mb << 20;
    }
    broker.raft.flush = log_flush(
        args.raft_flush_enabled.or(file.raft_flush_enabled),
        args.raft_flush_delay_ms.or(file.raft_flush_delay_ms),
    );
    let gateway_address = args
        .gateway_address
        .or(file.gateway_address)
        .unwrap_or_else(|| "127.0.0.1:26500".into());
    let management_address = args
        .management_address
        .or(file.management_address)
        .unwrap_or_else(|| "127.0.0.1:9600".into());
    let rest_address = args
        .rest_address
        .or(file.rest_address)
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    broker.advertised_address = gateway_address.clone();
    // the internal port needs no --insecure: it admits only the cluster's members (the
    // cluster secret, required above wherever there is one)
    let open = auth == zest_gateway::auth::Method::None;
    if open && !args.insecure.or(file.insecure).unwrap_or(false) {
        exposed_only_on_loopback(&[
            (gateway_address.as_str(), "gRPC", "--gateway-address"),
            (rest_address.as_str(), "REST", "--rest-address"),
            (
                management_address.as_str(),
                "management",
                "--management-address",
            ),
        ])?;
    }
    let max_message_size = args
        .max_message_size
        .or(file.max_message_size)
        .unwrap_or(4 * 1024 * 1024);
    let mut intake = zest_gateway::intake::Limits::new(broker.request_bytes, max_message_size);
    let positive = |v: Option<usize>, name: &str| -> anyhow::Result<Option<usize>> {
        anyhow::ensure!(v != Some(0), "{name} must be at least 1");
        Ok(v)
    };
    if let Some(n) = positive(
        args.max_connections.or(file.max_connections),
        "max-connections",
    )? {
        intake.connections = n;
    }
    let per_ip = args.max_connections_per_ip.or(file.max_connections_per_ip);
    if let Some(n) = positive(per_ip, "max-connections-per-ip")? {
        intake.connections_per_client = n;
    }
    if let Some(n) = positive(args.max_requests.or(file.max_requests), "max-requests")? {
        intake.requests = n;
    }
    let per_ip = args.max_requests_per_ip.or(file.max_requests_per_ip);
    if let Some(n) = positive(per_ip, "max-requests-per-ip")? {
        intake.requests_per_client = n;
    }
    if let Some(ms) = args.client_timeout_ms.or(file.client_timeout_ms) {
        anyhow::ensure!(ms >= 100, "client-timeout-ms must be at least 100");
        intake.read_timeout = Duration::from_millis(ms);
    }
    let tls = crate::tls::resolve(args.tls, file.tls, &crate::tls::process_env)?;
    broker.cluster.tls = tls.internal()?;
    Ok(Resolved {
        tls,
        exit_with_parent: args.exit_with_parent,
        parent_pid: args.parent_pid,
        broker,
        gateway_address,
        management_address,
        rest_address,
        max_message_size,
        intake,
        log_filter: args
            .log
            .or(file.log)
            .unwrap_or_else(|| DEFAULT_LOG_FILTER.into()),
        auth,
        initial_users,
        cluster_secret,
    })
}

/// Whether `address` (host:port) listens on loopback only.
pub fn is_loopback(address: &str) -> bool {
    let host = match address.rsplit_once(':') {
        Some((host, _)) => host.trim_start_matches('[').trim_end_matches(']'),
        None => address,
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Refuses, in one line, an address other than loopback: the client ports have no
/// authentication yet, so such a port takes any command from anyone who reaches it (issue 62).
fn exposed_only_on_loopback(addresses: &[(&str, &str, &str)]) -> anyhow::Result<()> {
    for (address, port, flag) in addresses {
        anyhow::ensure!(
            is_loopback(address),
            "refusing to listen on {address} ({port} port, {flag}): it is not a loopback address \
             and authentication is off, so anyone who reaches it could send any command; \
             bind 127.0.0.1, turn authentication on (--auth basic or oidc), or accept that with \
             --insecure (ZEST_INSECURE=true, insecure = true)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_taken_without_insecure() {
        let start = |address: &str, insecure: Option<bool>| {
            resolve(StartArgs {
                rest_address: Some(address.into()),
                insecure,
                ..StartArgs::default()
            })
        };
        for address in [
            "127.0.0.1:0",
            "localhost:8080",
            "[::1]:8080",
            "127.0.0.2:8080",
        ] {
            assert!(start(address, None).is_ok(), "{address}");
        }
        for address in [
            "0.0.0.0:8080",
            "[::]:8080",
            "10.1.2.3:8080",
            "zest.example:8080",
        ] {
            let refused = start(address, None).err().map(|e| e.to_string());
            let refused = refused.unwrap_or_else(|| panic!("{address} is taken"));
            assert!(refused.contains(address), "{refused}");
            assert!(refused.contains("--insecure"), "{refused}");
            assert!(!refused.contains('\n'), "one line: {refused}");
            assert!(
                start(address, Some(true)).is_ok(),
                "{address} with --insecure"
            );
        }
        // the internal port on any address, once it admits only members
        let node = |secret: Option<&str>| {
            resolve(StartArgs {
                cluster_size: Some(2),
                contact_points: Some(vec!["127.0.0.1:1".into()]),
                internal_address: Some("0.0.0.0:26502".into()),
                cluster_secret: secret.map(str::to_string),
                ..StartArgs::default()
            })
        };
        let refused = node(None).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused.contains("--cluster-secret"), "{refused}");
        assert!(node(Some("a secret of 16 chars")).is_ok());
        let short = node(Some("short")).err().map(|e| e.to_string());
        assert!(short.unwrap_or_default().contains("16 characters"));
    }

    #[test]
    fn raft_flush_follows_zeebes_settings() {
        assert_eq!(log_flush(None, None), LogFlush::EveryAppend);
        assert_eq!(log_flush(Some(true), Some(0)), LogFlush::EveryAppend);
        assert_eq!(
            log_flush(None, Some(5)),
            LogFlush::Delayed(Duration::from_millis(5))
        );
        assert_eq!(log_flush(Some(false), Some(5)), LogFlush::Off);
        assert_eq!(log_flush(Some(false), None), LogFlush::Off);
    }

    #[test]
    fn flags_override_the_file_for_the_raft_flush() {
        let dir = std::env::temp_dir().join(format!("zest-config-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("zest.toml");
        std::fs::write(
            &file,
            "raft-flush-enabled = false\nraft-flush-delay-ms = 3\n",
        )
        .unwrap();
        let from_file = resolve(StartArgs {
            config: Some(file.clone()),
            ..StartArgs::default()
        })
        .unwrap();
        assert_eq!(from_file.broker.raft.flush, LogFlush::Off);
        let flagged = resolve(StartArgs {
            config: Some(file),
            raft_flush_enabled: Some(true),
            ..StartArgs::default()
        })
        .unwrap();
        assert_eq!(
            flagged.broker.raft.flush,
            LogFlush::Delayed(Duration::from_millis(3))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
