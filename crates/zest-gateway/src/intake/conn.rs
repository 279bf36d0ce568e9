//! Connections counted in the [`Intake`] as they are accepted: one beyond the node's bound or
//! its client's is closed at once, and one whose client sends nothing within the read timeout
//! is closed then (HTTP/1's header timeout and HTTP/2's keep-alive pings take over after).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Sleep;
use tonic::transport::server::{Connected, TcpConnectInfo};

use super::{Held, Intake, Kind};

/// An accepted connection holding its place in the intake until it is dropped.
pub struct Conn {
    io: TcpStream,
    _place: Held,
    /// Until the client's first bytes.
    first_bytes: Option<Pin<Box<Sleep>>>,
}

impl Conn {
    fn new(io: TcpStream, place: Held, timeout: Duration) -> Conn {
        Conn {
            io,
            _place: place,
            first_bytes: Some(Box::pin(tokio::time::sleep(timeout))),
        }
    }
}

/// The next connection the intake takes, and its client's address. Connections it refuses
/// are closed; errors of `accept` (too many open files) are logged and waited out.
pub async fn accept(listener: &TcpListener, intake: &Intake) -> (Conn, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok((io, addr)) => match intake.hold(addr.ip(), Kind::Connections, 1) {
                Ok(place) => {
                    // small frames of an answer go out at once, not after the client's ACK
                    let _ = io.set_nodelay(true);
                    return (Conn::new(io, place, intake.limits().read_timeout), addr);
                }
                Err(refusal) => tracing::debug!("connection from {addr} closed: {refusal}"),
            },
            Err(e) => {
                tracing::warn!("accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The connections of `listener` as a stream, for tonic.
pub fn incoming(
    listener: TcpListener,
    intake: Intake,
) -> impl futures::Stream<Item = Result<Conn, io::Error>> {
    futures::stream::unfold((listener, intake), |(listener, intake)| async move {
        let (conn, _) = accept(&listener, &intake).await;
        Some((Ok(conn), (listener, intake)))
    })
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.first_bytes = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                let silent = match this.first_bytes.as_mut() {
                    Some(timer) => timer.as_mut().poll(cx).is_ready(),
                    None => false,
                };
                if silent {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client sent nothing",
                    )));
                }
                Poll::Pending
            }
            other => other,
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl Connected for Conn {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.io.connect_info()
    }
}
