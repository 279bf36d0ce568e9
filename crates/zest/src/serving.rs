//! The HTTP servers of the REST API and the management port: connections taken through the
//! node's [`Intake`] (bounded per node and per client address), a header read timeout that is
//! also HTTP/1's idle keep-alive timeout, and HTTP/2 streams bounded per connection; TLS
//! when the port has a certificate (the handshake after the intake has counted the connection,
//! bounded by the client timeout).

use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tower_service::Service;
use zest_cluster::tls::{Acceptor, MaybeTls};
use zest_gateway::intake::{conn, Intake, Peer};

/// HTTP/2 streams one REST connection may have open at once (hyper's default is 200).
const REST_STREAMS_PER_CONNECTION: u32 = 256;
/// Largest request head (start line and headers) and read buffer of an HTTP/1 connection.
const MAX_HEAD_BYTES: usize = 64 << 10;
/// HTTP/2 keep-alive: a ping this often, and a client that does not answer within the client
/// timeout is gone.
pub const PING_INTERVAL: Duration = Duration::from_secs(30);

fn builder(intake: &Intake) -> auto::Builder<TokioExecutor> {
    let timeout = intake.limits().read_timeout;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(timeout)
        .max_buf_size(MAX_HEAD_BYTES);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(REST_STREAMS_PER_CONNECTION)
        .max_header_list_size(MAX_HEAD_BYTES as u32)
        .keep_alive_interval(PING_INTERVAL)
        .keep_alive_timeout(timeout);
    builder
}

/// Serves `app` on `listener` (through `tls` when given) until `shutdown` changes, then waits
/// for the open connections to end (their requests answered). A client that fails the TLS
/// handshake (one speaking plaintext, or none in time) is dropped, its place in the intake
/// with it.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    intake: Intake,
    tls: Option<Acceptor>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let builder = builder(&intake);
    let graceful = GracefulShutdown::new();
    loop {
        let (io, addr) = tokio::select! {
            accepted = conn::accept(&listener, &intake) => accepted,
            _ = shutdown.changed() => break,
        };
        let app = app.clone();
        let peer = Peer(addr.ip());
        let over_tls = tls.is_some();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(peer);
            if over_tls {
                request.extensions_mut().insert(zest_gateway::auth::OverTls);
            }
            let mut app = app.clone();
            async move { Service::call(&mut app, request).await }
        });
        let (builder, watcher, tls) = (builder.clone(), graceful.watcher(), tls.clone());
        tokio::spawn(async move {
            let io = match tls {
                Some(tls) => match tls.accept(io).await {
                    Ok(io) => io,
                    Err(e) => {
                        tracing::debug!("TLS handshake with {addr} failed: {e}");
                        return;
                    }
                },
                None => MaybeTls::Plain(io),
            };
            let connection = builder
                .serve_connection_with_upgrades(TokioIo::new(io), service)
                .into_owned();
            if let Err(e) = watcher.watch(connection).await {
                tracing::debug!("connection from {addr} ended: {e}");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
