//! The `zest` binary: `zest start` runs a node (broker + gateway + management endpoints);
//! `zest deploy`, `zest create` and `zest status` are small clients of the gateway protocol.

mod bench;
mod client;
mod config;
mod management;

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
/// Its settings come from `_RJEM_MALLOC_CONF` (the crate prefixes jemalloc's symbols), for
/// example `_RJEM_MALLOC_CONF=dirty_decay_ms:1000`.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "zest",
    version,
    about = "Zest: a Zeebe-compatible BPMN workflow engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a node: broker, gRPC gateway and management endpoints, with embedded storage.
    Start(config::StartArgs),
    /// Deploy BPMN resources.
    Deploy {
        #[command(flatten)]
        target: client::Target,
        /// Files to deploy (.bpmn)
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
    },
    /// Create a process instance.
    Create {
        #[command(flatten)]
        target: client::Target,
        /// BPMN process id
        process_id: String,
        /// Variables as a JSON object, or @file.json
        #[arg(long)]
        vars: Option<String>,
        /// Wait for the instance to complete and print its variables
        #[arg(long)]
        with_result: bool,
        /// Version of the process (latest when absent)
        #[arg(long)]
        version: Option<i32>,
    },
    /// Show the cluster topology.
    Status {
        #[command(flatten)]
        target: client::Target,
    },
    /// Load-test a Zeebe-protocol endpoint (Zest or Zeebe): start instances, complete jobs,
    /// report throughput and latency.
    Bench(bench::BenchArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Start(args) => start(args).await,
            Command::Deploy { target, files } => client::deploy(&target, &files).await,
            Command::Create {
                target,
                process_id,
                vars,
                with_result,
                version,
            } => client::create(&target, &process_id, vars.as_deref(), with_result, version).await,
            Command::Status { target } => client::status(&target).await,
            Command::Bench(args) => {
                let json = args.json.clone();
                let report = bench::run(args).await?;
                bench::print_report(&report);
                if let Some(path) = json {
                    let text = serde_json::to_string_pretty(&report)?;
                    if path.as_os_str() == "-" {
                        println!("{text}");
                    } else {
                        std::fs::write(&path, text + "\n")
                            .with_context(|| format!("writing {}", path.display()))?;
                    }
                }
                Ok(())
            }
        }
    })
}

async fn start(args: config::StartArgs) -> anyhow::Result<()> {
    let cfg = config::resolve(args)?;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&cfg.log_filter)
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    tracing::info!(data_dir = %cfg.broker.data_dir.display(), partitions = cfg.broker.partitions, "starting Zest");
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
    let broker = Arc::new(
        Broker::start(cfg.broker.clone())
            .await
            .context("starting the broker")?,
    );
    let gateway_addr: std::net::SocketAddr =
        cfg.gateway_address.parse().context("gateway address")?;
    let management_addr: std::net::SocketAddr = cfg
        .management_address
        .parse()
        .context("management address")?;

    let grpc_listener = tokio::net::TcpListener::bind(gateway_addr)
        .await
        .with_context(|| format!("binding the gateway to {gateway_addr}"))?;
    let mgmt_listener = tokio::net::TcpListener::bind(management_addr)
        .await
        .with_context(|| format!("binding management to {management_addr}"))?;
    let rest_addr: std::net::SocketAddr = cfg.rest_address.parse().context("REST API address")?;
    let rest_listener = tokio::net::TcpListener::bind(rest_addr)
        .await
        .with_context(|| {
            format!("binding the REST API to {rest_addr} (choose another with --rest-address)")
        })?;
    // the bound addresses: port 0 picks a free port, and READY says which
    let rest_addr = rest_listener.local_addr().unwrap_or(rest_addr);
    let gateway_addr = grpc_listener.local_addr().unwrap_or(gateway_addr);
    let management_addr = mgmt_listener.local_addr().unwrap_or(management_addr);
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    let service = GatewayService::new(
        broker.clone(),
        GatewayConfig {
            max_message_size: cfg.max_message_size,
            ..Default::default()
        },
    )
    .with_shutdown(shutdown_rx.clone());
    let mut grpc_shutdown = shutdown_rx.clone();
    let grpc = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(zest_gateway::server(service))
            .serve_with_incoming_shutdown(
                // Nagle's algorithm would hold back the small frames of a response (headers,
                // message, trailers) until the client's delayed ACK: tens of milliseconds.
                tokio_stream::StreamExt::map(
                    tokio_stream::wrappers::TcpListenerStream::new(grpc_listener),
                    |socket| {
                        if let Ok(s) = &socket {
                            let _ = s.set_nodelay(true);
                        }
                        socket
                    },
                ),
                async move {
                    let _ = grpc_shutdown.changed().await;
                },
            ),
    );
    let mgmt = tokio::spawn(management::serve(
        mgmt_listener,
        broker.clone(),
        shutdown_rx.clone(),
    ));
    let mut rest_shutdown = shutdown_rx.clone();
    let rest_app = zest_gateway::rest::router(broker.clone(), GatewayConfig::default().version);
    let rest = tokio::spawn(async move {
        let _ = axum::serve(rest_listener, rest_app)
            .with_graceful_shutdown(async move {
                let _ = rest_shutdown.changed().await;
            })
            .await;
    });
    println!(
        "READY gateway={gateway_addr} management={management_addr} rest={rest_addr} (started in {:?})",
        started.elapsed()
    );
    tracing::info!(
        "ready: gateway on {gateway_addr}, REST API on {rest_addr}, management on {management_addr}"
    );
    wait_for_signal().await;
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

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
