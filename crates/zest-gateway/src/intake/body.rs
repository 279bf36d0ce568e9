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
    /// The slowest the whole body may take after the read timeout.
    slowest: Duration,
    /// When the whole body must have come, and the timer of the next part: from the first
    /// poll (a gRPC call may wait for its place before its body is read).
    deadline: Option<(Instant, Pin<Box<Sleep>>)>,
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
        let slowest = Duration::from_secs_f64(expected as f64 / limits.min_body_rate.max(1) as f64);
        Counted {
            inner,
            held,
            read: 0,
            read_timeout: limits.read_timeout,
            min_rate: limits.min_body_rate,
            slowest,
            deadline: None,
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
        let (deadline, timer) = this.deadline.get_or_insert_with(|| {
            let now = Instant::now();
            let deadline = now + this.read_timeout + this.slowest;
            let timer = Box::pin(tokio::time::sleep_until(now + this.read_timeout));
            (deadline, timer)
        });
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
                    let next = (*deadline).min(Instant::now() + this.read_timeout);
                    timer.as_mut().reset(next);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                if timer.as_mut().poll(cx).is_ready() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::{Intake, Kind};

    /// Frames of 10 bytes, `n` of them, then nothing more for ever (a client that stopped).
    struct Stalled(usize);

    impl Body for Stalled {
        type Data = bytes::Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<bytes::Bytes>, Self::Error>>> {
            if self.0 == 0 {
                return Poll::Pending;
            }
            self.0 -= 1;
            Poll::Ready(Some(Ok(Frame::data(bytes::Bytes::from(vec![0u8; 10])))))
        }
    }

    fn counted(intake: &Intake, frames: usize) -> (Counted<Stalled>, Arc<OnceLock<Refusal>>) {
        let ip = "10.0.0.1".parse().unwrap();
        let held = intake.hold(ip, Kind::BodyBytes, 0).unwrap();
        let failed = Arc::new(OnceLock::new());
        let body = Counted::new(
            Stalled(frames),
            held,
            intake.limits(),
            1000,
            failed.clone(),
            |r| Box::new(r.clone()),
        );
        (body, failed)
    }

    async fn next(body: &mut Counted<Stalled>) -> Option<Result<usize, BoxError>> {
        std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx))
            .await
            .map(|f| f.map(|f| f.into_data().map_or(0, |d| d.len())))
    }

    fn limits() -> Limits {
        Limits {
            body_bytes: 100,
            body_bytes_per_client: 25,
            read_timeout: Duration::from_millis(50),
            ..Limits::new(100, 10)
        }
    }

    #[tokio::test]
    async fn a_body_past_its_clients_share_is_refused_and_its_bytes_given_back() {
        let intake = Intake::new(limits());
        let (mut body, failed) = counted(&intake, 5);
        assert_eq!(next(&mut body).await.unwrap().unwrap(), 10);
        assert_eq!(next(&mut body).await.unwrap().unwrap(), 10);
        assert_eq!(intake.held(Kind::BodyBytes), 20);
        let refused = next(&mut body).await.unwrap().unwrap_err();
        assert!(refused.to_string().contains("10.0.0.1"), "{refused}");
        assert!(matches!(failed.get(), Some(Refusal::Client(_))));
        assert!(next(&mut body).await.is_none(), "a refused body ends");
        drop(body);
        assert_eq!(intake.held(Kind::BodyBytes), 0);
    }

    #[tokio::test]
    async fn a_body_that_stops_coming_is_timed_out() {
        let intake = Intake::new(limits());
        let (mut body, failed) = counted(&intake, 1);
        assert_eq!(next(&mut body).await.unwrap().unwrap(), 10);
        let started = std::time::Instant::now();
        assert!(next(&mut body).await.unwrap().is_err());
        assert!(started.elapsed() >= Duration::from_millis(45));
        assert!(matches!(failed.get(), Some(Refusal::TooSlow(_))));
    }
}
