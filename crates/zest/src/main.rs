//! The `zest` binary: `zest start` runs a node (broker + gateway + management endpoints); the
//! client commands (`cli`) speak the gateway protocol with zbctl's words; `zest bench` is the
//! load tester.

mod auth_config;
mod bench;
mod bench_realistic;
mod bench_rest;
mod bench_state;
mod cli;
mod clock_actuator;
mod cluster_cmd;
mod config;
mod credentials;
mod exporting;
mod figures;
mod management;
mod serving;
mod tls;

use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use zest_broker::Broker;
use zest_gateway::{GatewayConfig, GatewayService};

/// jemalloc instead of the system allocator. Processing allocates many small, short-lived
/// buffers (records, keys, variable documents); glibc malloc/free took about a quarter of the
/// CPU at load (perf, one-task at max rate), and glibc kept about a third fewer instances per
/// second under overload. jemalloc replaced mimalloc (v2, eager commit off, 3 ms purge delay),
/// which was as fast but kept more memory resident than the program used. A/B of release
/// binaries on the 2-core VM, server on core 0, `zest bench` on core 1, one-task, three rounds
/// each (docs/benchmarks.md): peak RSS at max rate 56 MiB against 82-84 MiB, at 3x the max
/// rate 80-89 MiB against 115-125 MiB, with throughput equal or higher and the same latency at
/// a fixed rate. The live heap sampled by jemalloc's profiler under that overload was 21-45 MB.
/// (The feature `system-alloc` leaves it out, for heap profilers such as heaptrack.)
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's settings, which `_RJEM_MALLOC_CONF` overrides (the crate prefixes jemalloc's
/// symbols). By default jemalloc keeps 4 arenas per core and a freed page for 10 s; each arena
/// holds pages of its own, partly used. Under the realistic benchmark on 2 partitions (20
/// PI/s, live heap 75-85 MB) that took peak RSS to 153 MiB; an arena per core and freed pages
/// returned after 1 s: 134-144 MiB, at the same throughput and CPU (docs/benchmarks.md).
/// One arena for the whole process instead of one per core took less again, with no cost
/// that showed on two cores (thread caches take most calls without the arena's lock), in runs
/// alternated with the arena per core (2026-11-26, night): 2 partitions at 20 PI/s 120.9 MiB
/// against 126.4-135.0 MiB; a 3-node cluster at 10 PI/s 108-116 MiB per node against
/// 119-133 MiB, and at 20 PI/s (overload) 140-178 MiB against 156-204 MiB; one-task at max
/// rate 4298-4810 PI/s and 75-76 MiB against 3718-4555 PI/s and 80-86 MiB.
#[cfg(not(feature = "system-alloc"))]
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8; 47] = b"narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

const EXAMPLES: &str = "\
Examples:
  zest start                                    run a node: data in ./data, gRPC on 26500
  zest deploy examples/order.bpmn               deploy a process (also .dmn and .form)
  zest create instance order --variables '{\"orderId\": 42}'
  zest activate jobs payment                    activate jobs and print them
  zest complete job 2251799813685255
  zest create worker payment --handler ./pay.sh run a worker that calls a command per job
  zest status

The client commands take zbctl's words and flags (--address or ZEEBE_ADDRESS,
--requestTimeout, --variables, ...), so zbctl scripts run with `zest` in its place.";

#[derive(Parser)]
#[command(
    name = "zest",
    version,
    about = "Zest: a Zeebe-compatible BPMN workflow engine",
    after_help = EXAMPLES
)]
struct Cli {
    /// Gateway flags may also come before the command word, as zbctl takes them
    #[command(flatten)]
    conn: cli::ConnArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a node: broker, gRPC gateway, REST API and management endpoints, with embedded
    /// storage
    #[command(after_help = "Example:\n  zest start --data-dir /var/lib/zest")]
    Start(config::StartArgs),
    /// Run a local cluster: nodes as child processes on 127.0.0.1, node i with gRPC on
    /// 26500 + 10i, REST on 8080 + 10i, management on 9600 + 10i, data in ./data/node-i
    #[command(
        after_help = "Example:\n  zest cluster --nodes 3 --partitions 3 --replication-factor 3\n  zest status --address 127.0.0.1:26510"
    )]
    Cluster(cluster_cmd::ClusterArgs),
    /// Run a standalone gateway for a cluster: gRPC, REST and management like a node's, no
    /// partitions; it learns the cluster from --contact-points (brokers' internal addresses)
    #[command(
        after_help = "Example:\n  zest gateway --contact-points 127.0.0.1:26502 --gateway-address 127.0.0.1:26600 --rest-address 127.0.0.1:8180 --management-address 127.0.0.1:9700"
    )]
    Gateway(config::StartArgs),
    #[command(flatten)]
    Client(cli::ClientCommand),
    /// Load-test a Zeebe-protocol endpoint (Zest or Zeebe): start instances, complete jobs,
    /// report throughput and latency.
    #[command(
        after_help = "Example:\n  zest bench --scenario one-task --rate max --in-flight 64 --duration 60s"
    )]
    Bench(bench::BenchArgs),
    /// Build a data directory from a backup taken with POST /actuator/backupRuntime; start
    /// Zest on it to continue from the backup
    #[command(
        after_help = "Example:\n  zest restore --backup-id 3 --backup-dir /backups --data-dir /var/lib/zest\n  zest start --data-dir /var/lib/zest"
    )]
    Restore(RestoreArgs),
    /// Print the version of this binary
    Version,
}

#[derive(clap::Args)]
struct RestoreArgs {
    /// The backup to restore (a COMPLETED one)
    #[arg(long)]
    backup_id: u64,
    /// The backup directory the node took it into (its --backup-dir)
    #[arg(long, env = "ZEST_BACKUP_DIR")]
    backup_dir: std::path::PathBuf,
    /// The data directory to build (new or empty)
    #[arg(long, env = "ZEST_DATA_DIR")]
    data_dir: std::path::PathBuf,
}

fn restore(args: RestoreArgs) -> anyhow::Result<()> {
    let parts = zest_broker::backup::restore(&args.backup_dir, args.backup_id, &args.data_dir)?;
    for r in parts {
        let p = r.state;
        let history = match r.history {
            Some(h) => format!(
                "with its history ({} rows up to position {}, {} log entries to export)",
                h.rows, h.position, h.log.entries
            ),
            None => "without history (the backup holds none of it: see its status)".into(),
        };
        println!(
            "restored partition {} of backup {} at position {} ({} chunks, {} bytes) {history} into {}",
            p.partition_id,
            args.backup_id,
            p.checkpoint_position,
            p.chunks,
            p.bytes,
            args.data_dir.display()
        );
    }
    Ok(())
}

/// The process that started this one, read first thing: `--exit-with-parent` watches for it
/// to end, also when it ends while the node is still starting.
#[cfg(unix)]
static PARENT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

fn main() {
    #[cfg(unix)]
    let _ = PARENT.set(std::os::unix::process::parent_id());
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => fail(&format!("cannot start the async runtime: {e}")),
    };
    let result: Result<(), String> = runtime.block_on(async move {
        match cli.command {
            Command::Start(args) => start(args).await.map_err(|e| format!("{e:#}")),
            Command::Cluster(args) => cluster_cmd::run(args).await.map_err(|e| format!("{e:#}")),
            Command::Gateway(args) => start_gateway(args).await.map_err(|e| format!("{e:#}")),
            Command::Client(command) => cli::run(command, &cli.conn)
                .await
                .map_err(|e| e.to_string()),
            Command::Bench(args) => run_bench(args).await.map_err(|e| format!("{e:#}")),
            Command::Restore(args) => restore(args).map_err(|e| format!("{e:#}")),
            Command::Version => {
                println!(
                    "zest {} (Zeebe gateway protocol {})",
                    env!("CARGO_PKG_VERSION"),
                    GatewayConfig::default().version
                );
                Ok(())
            }
        }
    });
    if let Err(message) = result {
        fail(&message);
    }
}

/// One line on stderr and exit status 1: no backtrace, whatever RUST_BACKTRACE says.
fn fail(message: &str) -> ! {
    eprintln!("Error: {message}");
    std::process::exit(1)
}

async fn run_bench(args: bench::BenchArgs) -> anyhow::Result<()> {
    let json = args.json.clone();
    let text = if args.fill > 0 {
        let report = bench_state::run(args).await?;
        bench_state::print_report(&report);
        serde_json::to_string_pretty(&report)?
    } else if let Some(rest) = args.rest.clone() {
        let report = bench_rest::run(args, &rest).await?;
        bench::print_report(&report);
        serde_json::to_string_pretty(&report)?
    } else {
        let report = bench::run(args).await?;
        bench::print_report(&report);
        serde_json::to_string_pretty(&report)?
    };
    if let Some(path) = json {
        if path.as_os_str() == "-" {
            println!("{text}");
        } else {
            std::fs::write(&path, text + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}

async fn start(args: config::StartArgs) -> anyhow::Result<()> {
    run_node(config::resolve(args)?).await
}

/// `zest gateway`: a node without partitions that serves the gateway for a cluster.
async fn start_gateway(args: config::StartArgs) -> anyhow::Result<()> {
    let mut cfg = config::resolve(args)?;
    config::as_gateway(&mut cfg.broker)?;
    run_node(cfg).await
}

async fn run_node(cfg: config::Resolved) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(&cfg.log_filter).with_context(|| {
        format!(
            "--log '{}' is not a log filter (tracing's EnvFilter syntax, e.g. 'info' or \
             'info,zest_broker=debug')",
            cfg.log_filter
        )
    })?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        // colours only on a terminal, not in a file or a pipe
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    tracing::info!(
        data_dir = %cfg.broker.data_dir.display(),
        partitions = cfg.broker.partitions,
        node_id = cfg.broker.node_id,
        cluster_size = cfg.broker.cluster.cluster_size,
        replication_factor = cfg.broker.cluster.replication_factor,
        "starting Zest"
    );
    match cfg.broker.raft.flush {
        zest_broker::LogFlush::EveryAppend => {}
        zest_broker::LogFlush::Delayed(d) => tracing::warn!(
            "the log is fsynced up to {d:?} after a commit (raft-flush-delay-ms): an OS crash or \
             power loss can lose commands acknowledged in that time"
        ),
        zest_broker::LogFlush::Off => tracing::warn!(
            "the log is fsynced only before snapshots and at shutdown (raft-flush-enabled = \
             false): an OS crash or power loss can lose acknowledged commands"
        ),
    }
    let started = std::time::Instant::now();
    let gateway_addr: std::net::SocketAddr =
        cfg.gateway_address.parse().context("gateway address")?;
    let management_addr: std::net::SocketAddr = cfg
        .management_address
        .parse()
        .context("management address")?;
    let rest_addr: std::net::SocketAddr = cfg.rest_address.parse().context("REST API address")?;
    let grpc_listener = tokio::net::TcpListener::bind(gateway_addr)
        .await
        .with_context(|| {
            format!("binding the gateway to {gateway_addr} (choose another with --gateway-address)")
        })?;
    let mgmt_listener = tokio::net::TcpListener::bind(management_addr)
        .await
        .with_context(|| {
            format!(
                "binding management to {management_addr} (choose another with --management-address)"
            )
        })?;
    let rest_listener = tokio::net::TcpListener::bind(rest_addr)
        .await
        .with_context(|| {
            format!("binding the REST API to {rest_addr} (choose another with --rest-address)")
        })?;
    // the bound addresses: port 0 picks a free port, and READY and the topology say which
    let rest_addr = rest_listener.local_addr().unwrap_or(rest_addr);
    let gateway_addr = grpc_listener.local_addr().unwrap_or(gateway_addr);
    let management_addr = mgmt_listener.local_addr().unwrap_or(management_addr);
    // TLS where the ports have certificates; a client has the client timeout to handshake
    let tls = tls::Acceptors::new(&cfg.tls, cfg.intake.read_timeout)?;
    warn_plaintext_credentials(&cfg);
    let mut broker_config = cfg.broker.clone();
    broker_config.advertised_address = gateway_addr.to_string();
    let broker = Arc::new(
        Broker::start(broker_config)
            .await
            .context("starting the broker")?,
    );
    // batch operations run while this node leads partition 1
    zest_broker::batch_ops::spawn(&broker);
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    let service = GatewayService::new(
        broker.clone(),
        GatewayConfig {
            max_message_size: cfg.max_message_size,
            ..Default::default()
        },
    )
    .with_shutdown(shutdown_rx.clone());
    let commands = service.commands().clone();
    // who may call: one authentication for gRPC, REST, the UI and management (issue 62)
    let auth =
        zest_gateway::auth::Auth::new(cfg.auth, broker.clone(), cfg.cluster_secret.as_deref());
    let users = auth_config::create_users(
        commands.clone(),
        auth.clone(),
        cfg.initial_users.clone(),
        std::time::Duration::from_secs(10),
    );
    // what clients may hold of the node, on all three ports together (issue 62)
    let intake = zest_gateway::intake::Intake::new(cfg.intake.clone());
    let mut grpc_shutdown = shutdown_rx.clone();
    let grpc = tokio::spawn(
        tonic::transport::Server::builder()
            .max_concurrent_streams(zest_gateway::admission::MAX_STREAMS_PER_CONNECTION)
            // a client that stops answering pings is gone: its connection and calls end
            .http2_keepalive_interval(Some(serving::PING_INTERVAL))
            .http2_keepalive_timeout(Some(cfg.intake.read_timeout))
            .add_service(zest_gateway::intake::grpc::Guarded::new(
                zest_gateway::auth::grpc::Authenticated::new(
                    zest_gateway::server(service),
                    auth.clone(),
                ),
                intake.clone(),
                cfg.max_message_size.saturating_mul(4),
            ))
            .serve_with_incoming_shutdown(
                zest_cluster::tls::incoming(
                    zest_gateway::intake::conn::incoming(grpc_listener, intake.clone()),
                    tls.grpc,
                ),
                async move {
                    let _ = grpc_shutdown.changed().await;
                },
            ),
    );
    let mgmt = tokio::spawn(management::serve(
        mgmt_listener,
        broker.clone(),
        intake.clone(),
        auth.clone(),
        tls.management,
        shutdown_rx.clone(),
    ));
    // the web UI (/operate, /tasklist, /ui/...) and its figures beside the REST API, on the
    // same port
    let rest_app = zest_gateway::rest::guarded(
        zest_gateway::rest::router(commands, auth.clone())
            .merge(zest_ui::router())
            .merge(figures::router(broker.clone(), intake.clone()))
            .layer(axum::middleware::from_fn_with_state(
                auth,
                zest_gateway::auth::rest::require,
            )),
        intake.clone(),
        cfg.max_message_size,
    );
    let rest = tokio::spawn(serving::serve(
        rest_listener,
        rest_app,
        intake,
        tls.rest,
        shutdown_rx.clone(),
    ));
    users.await;
    println!(
        "READY gateway={gateway_addr} management={management_addr} rest={rest_addr} (started in {:?})",
        started.elapsed()
    );
    tracing::info!(
        "ready: gateway on {gateway_addr}, REST API on {rest_addr}, management on {management_addr}"
    );
    #[cfg(unix)]
    let watched = cfg.parent_pid.or_else(|| {
        cfg.exit_with_parent.then(|| {
            PARENT
                .get()
                .copied()
                .unwrap_or_else(std::os::unix::process::parent_id)
        })
    });
    #[cfg(not(unix))]
    let watched: Option<u32> = None;
    wait_for_signal(watched).await;
    tracing::info!("shutting down");
    let _ = shutdown_tx.send(true);
    // Streams and long polls end on the signal; a client that does not close its connection
    // must not keep the node from stopping (and syncing) for ever.
    if tokio::time::timeout(std::time::Duration::from_secs(10), grpc)
        .await
        .is_err()
    {
        tracing::warn!("gRPC connections still open after 10 s; stopping anyway");
    }
    let _ = mgmt.await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), rest).await;
    broker.shutdown().await;
    tracing::info!("stopped");
    Ok(())
}

/// With authentication on, a port beyond loopback without TLS carries passwords in the clear:
/// allowed (a proxy may terminate TLS in front), but said at start.
fn warn_plaintext_credentials(cfg: &config::Resolved) {
    if cfg.auth == zest_gateway::auth::Method::None {
        return;
    }
    let rest_tls = cfg.tls.rest.is_some() || cfg.tls.grpc.is_some();
    let ports = [
        ("gRPC", &cfg.gateway_address, cfg.tls.grpc.is_some()),
        ("REST", &cfg.rest_address, rest_tls),
        (
            "management",
            &cfg.management_address,
            cfg.tls.management.is_some(),
        ),
    ];
    for (port, address, tls) in ports {
        if !tls && !config::is_loopback(address) {
            tracing::warn!(
                "the {port} port listens on {address} without TLS: clients' passwords cross the \
                 network in the clear (give it a certificate, or put a TLS proxy in front)"
            );
        }
    }
}

/// Waits for SIGTERM or Ctrl-C, and with a `parent` to watch also for its end (this process's
/// parent changes when it ends: the node is re-parented).
async fn wait_for_signal(parent: Option<u32>) {
    let parent_gone = async move {
        match parent {
            Some(pid) => parent_ended(pid).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminated() => {}
        _ = parent_gone => {}
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub(crate) async fn stop_signal() {
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminated() => {}
    }
}

/// Resolves on SIGTERM; never where it cannot be received.
async fn terminated() {
    #[cfg(unix)]
    if let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        term.recv().await;
        return;
    }
    std::future::pending::<()>().await
}

/// Resolves when `parent`, the process that started this one, has ended: this process's parent
/// is no longer it (checked at once, then twice a second).
async fn parent_ended(parent: u32) {
    #[cfg(unix)]
    loop {
        if std::os::unix::process::parent_id() != parent {
            tracing::warn!("the process that started this node ended; stopping");
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    #[cfg(not(unix))]
    {
        let _ = parent;
        std::future::pending::<()>().await
    }
}
