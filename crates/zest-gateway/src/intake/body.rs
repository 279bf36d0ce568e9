//! Request bodies counted in the gateway's share of the budget while they are received, and
//! timed out when their client stops sending.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use super::{Held, Limits, Refusal};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A body whose bytes are held in the [`super::Intake`] as they come (beyond what was taken
/// for it before: its `Content-Length`), until it is dropped. A part that does not fit ends it
/// with a [`Refusal`]; so does a client that sends nothing for the read timeout, or too slowly
/// on the whole (less than `min_body_rate` after the read timeout). The refusal is kept in
/// `failed` for the server to answer with, and made into the body's error by `to_error`.
pub struct Counted<B> {
    inner: B,
    held: Held,
    read: usize,
    read_timeout: Duration,
    min_rate: u64,
    /// When the whole body must have come, at the slowest rate allowed.
    deadline: Instant,
    timer: Pin<Box<Sleep>>,
    failed: Arc<OnceLock<Refusal>>,
    to_error: fn(&Refusal) -> BoxError,
}

impl<B> Counted<B> {
    /// `expected`: the body's length, or the largest it may have.
    pub fn new(
        inner: B,
        held: Held,
        limits: &Limits,
        expected: usize,
        failed: Arc<OnceLock<Refusal>>,
        to_error: fn(&Refusal) -> BoxError,
    ) -> Counted<B> {
        let now = Instant::now();
        let slowest = Duration::from_secs_f64(expected as f64 / limits.min_body_rate.max(1) as f64);
        let deadline = now + limits.read_timeout + slowest;
        Counted {
            inner,
            held,
            read: 0,
            read_timeout: limits.read_timeout,
            min_rate: limits.min_body_rate,
            deadline,
            timer: Box::pin(tokio::time::sleep_until(
                deadline.min(now + limits.read_timeout),
            )),
            failed,
            to_error,
        }
    }

    fn fail(&mut self, refusal: Refusal) -> Poll<Option<Result<Frame<bytes::Bytes>, BoxError>>> {
        let error = (self.to_error)(&refusal);
        let _ = self.failed.set(refusal);
        Poll::Ready(Some(Err(error)))
    }
}

impl<B> Body for Counted<B>
where
    B: Body<Data = bytes::Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = bytes::Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<bytes::Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.failed.get().is_some() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.read += data.len();
                    let more = this.read.saturating_sub(this.held.amount());
                    if more > 0 {
                        if let Err(refusal) = this.held.grow(more) {
                            return this.fail(refusal);
                        }
                    }
                    let next = this.deadline.min(Instant::now() + this.read_timeout);
                    this.timer.as_mut().reset(next);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                if this.timer.as_mut().poll(cx).is_ready() {
                    let refusal = Refusal::TooSlow(format!(
                        "Expected the request body within {} s of its last part and at {} bytes \
                         a second at the least, but {} bytes came (client-timeout-ms)",
                        this.read_timeout.as_secs_f64(),
                        this.min_rate,
                        this.read
                    ));
                    return this.fail(refusal);
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.failed.get().is_some() || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps something held (a request's place) until it is sent or dropped:
/// a job stream's place lasts as long as the stream.
pub struct Holding<B> {
    pub inner: B,
    pub held: Held,
}

impl<B: Body + Unpin> Body for Holding<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
