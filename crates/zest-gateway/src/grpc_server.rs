//! The gRPC gateway's HTTP/2 server: hyper's, configured for memory that stays bounded.
//!
//! tonic's own server leaves hyper's send buffer at its default, 400 KiB per stream: hyper
//! takes a response's next messages from the handler while the stream's buffered data is
//! under that bound, whether the client reads or not. A job stream whose worker reads slower
//! than jobs come thus held 400 KiB in HTTP/2 beyond the stream's own window (32 jobs, 1 MiB,
//! counted in the node's budget); under overload on 3 nodes (realistic benchmark, 20 PI/s,
//! 40 workers on node 0) jemalloc's profile of node 0 put 16 MB there. With
//! [`SEND_BUFFER_PER_STREAM`] the jobs a worker has not read wait in the stream's channel,
//! where the node's bounds count them, and not in HTTP/2.
//!
//! Otherwise the server is tonic's: HTTP/2 only (gRPC's prior knowledge), every connection's
//! socket without Nagle's delay, at most [`MAX_STREAMS_PER_CONNECTION`] streams per
//! connection, and on shutdown no new connection and a GOAWAY to every open one, waiting for
//! their calls to end.

use std::future::Future;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tonic::codegen::http::Request;
use tonic::codegen::Service;

use crate::admission::MAX_STREAMS_PER_CONNECTION;
use crate::GatewayService;

/// Bytes of a stream's response HTTP/2 holds before it takes the next message from the
/// handler (hyper's default is 400 KiB). A message larger than this is still sent whole.
pub const SEND_BUFFER_PER_STREAM: usize = 64 << 10;

/// Serves the gateway on `listener` until `shutdown` resolves, then lets the open calls end.
pub async fn serve(
    listener: TcpListener,
    service: GatewayService,
    shutdown: impl Future<Output = ()>,
) {
    let service = crate::server(service);
    let mut builder = http2::Builder::new(TokioExecutor::new());
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION)
        .max_send_buf_size(SEND_BUFFER_PER_STREAM);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let socket = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                Err(e) => {
                    // out of file descriptors, or a connection reset before it was taken
                    tracing::debug!("accepting a gRPC connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        // Nagle's algorithm would hold back the small frames of a response (headers,
        // message, trailers) until the client's delayed ACK: tens of milliseconds.
        let _ = socket.set_nodelay(true);
        let service = service.clone();
        let calls = hyper::service::service_fn(move |request: Request<Incoming>| {
            let mut service = service.clone();
            service.call(request.map(tonic::body::Body::new))
        });
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(socket), calls));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("gRPC connection ended: {e}");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
