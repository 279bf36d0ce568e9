//! A bound on the gRPC gateway's short calls in progress.
//!
//! Under overload every call a client sends while the partitions are busy stays in the
//! gateway until it is answered: its decoded request, the record made from it, the call
//! forwarded to another node's leader and its answer. Job workers do not slow down by
//! themselves (they complete and publish as their jobs end), so on a node whose gateway takes
//! a cluster's clients these calls held 35-45 MB more than on the other nodes. Past
//! [`MAX_CALLS_IN_PROGRESS`] a call waits before it is read, in the order calls came: what
//! it holds then is HTTP/2's state of the stream and the part of its body the flow-control
//! window let in (HTTP/2 stops the client beyond that). Nothing is refused; a call that
//! waits takes longer, as it would in the partition's queue.
//!
//! Calls that last as long as their client wants never wait for a place, and take none:
//! long polls and job streams (`ActivateJobs`, `StreamActivatedJobs`), and
//! `CreateProcessInstanceWithResult`, which waits for job completions that must get in.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tokio::sync::Semaphore;
use tonic::body::Body;
use tonic::codegen::http::{Request, Response};
use tonic::codegen::Service;
use tonic::server::NamedService;

/// Short calls the gateway works on at once. Ordinary loads stay far below it (the one-task
/// benchmark at 200 instances in flight has about 400 calls in progress); a call beyond it
/// waits for one to be answered.
pub const MAX_CALLS_IN_PROGRESS: usize = 1024;

/// Calls one client connection may have open at once (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS;
/// tonic sets no limit, hyper's own default is 200). HTTP/2 keeps the state of every open
/// stream in a table that grows with the most streams a connection ever had and does not
/// shrink: under overload (3 nodes at 20 PI/s of the realistic benchmark) calls waiting for a
/// place grew node 0's to 11.9 MB (jemalloc's profile). Past this bound a client holds its
/// next calls itself until one ends, as the official clients do; their deadlines run there.
/// Twice [`MAX_CALLS_IN_PROGRESS`] leaves room for the long-lived calls beside the short ones.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 2 * MAX_CALLS_IN_PROGRESS as u32;

/// Whether a call (by its gRPC path) lasts as long as its client wants.
fn long_lived(path: &str) -> bool {
    [
        "/ActivateJobs",
        "/StreamActivatedJobs",
        "/CreateProcessInstanceWithResult",
    ]
    .iter()
    .any(|m| path.ends_with(m))
}

/// The service a tower wrapper polled ready, to take the call now being made; a clone stays in
/// its place for the next call (the ready one must serve this call). The gRPC layers
/// (`admission`, `intake::grpc`, `auth::grpc`) share it.
pub(crate) fn take_ready<S: Clone>(inner: &mut S) -> S {
    let clone = inner.clone();
    std::mem::replace(inner, clone)
}

/// A gRPC service whose short calls take one of a bounded number of places while they run.
#[derive(Clone)]
pub struct Admitted<S> {
    inner: S,
    places: Arc<Semaphore>,
}

impl<S> Admitted<S> {
    pub fn new(inner: S, places: usize) -> Self {
        Admitted {
            inner,
            places: Arc::new(Semaphore::new(places.max(1))),
        }
    }
}

impl<S> Service<Request<Body>> for Admitted<S>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let mut inner = take_ready(&mut self.inner);
        if long_lived(request.uri().path()) {
            return Box::pin(inner.call(request));
        }
        let places = self.places.clone();
        Box::pin(async move {
            // the semaphore is never closed; if it were, the call would go ahead
            let _place = places.acquire_owned().await.ok();
            inner.call(request).await
        })
    }
}

impl<S: NamedService> NamedService for Admitted<S> {
    const NAME: &'static str = S::NAME;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::Pin;
    use std::time::Duration;

    /// Answers each call when the test says so, and counts the calls it has started.
    #[derive(Clone)]
    struct Held {
        release: Arc<tokio::sync::Notify>,
        started: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Service<Request<Body>> for Held {
        type Response = Response<Body>;
        type Error = Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<Body>) -> Self::Future {
            self.started
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let release = self.release.clone();
            Box::pin(async move {
                release.notified().await;
                Ok(Response::new(Body::empty()))
            })
        }
    }

    fn call(path: &str) -> Request<Body> {
        Request::builder()
            .uri(format!("http://gateway/gateway_protocol.Gateway/{path}"))
            .body(Body::empty())
            .unwrap()
    }

    #[tokio::test]
    async fn short_calls_beyond_the_bound_wait_and_long_ones_never_do() {
        let held = Held {
            release: Arc::new(tokio::sync::Notify::new()),
            started: Arc::default(),
        };
        let started = || held.started.load(std::sync::atomic::Ordering::SeqCst);
        let mut gateway = Admitted::new(held.clone(), 2);
        let calls: Vec<_> = ["CompleteJob", "PublishMessage", "CompleteJob"]
            .into_iter()
            .map(|p| tokio::spawn(gateway.call(call(p))))
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(started(), 2, "the third short call waits for a place");
        // long polls, job streams and calls waiting for a result pass while the places are taken
        let long: Vec<_> = [
            "ActivateJobs",
            "StreamActivatedJobs",
            "CreateProcessInstanceWithResult",
        ]
        .into_iter()
        .map(|p| tokio::spawn(gateway.call(call(p))))
        .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(started(), 5);
        // one answered call lets the waiting one in
        held.release.notify_one();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(started(), 6);
        for _ in 0..6 {
            held.release.notify_one();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        for c in calls.into_iter().chain(long) {
            c.await.unwrap().unwrap();
        }
    }
}
