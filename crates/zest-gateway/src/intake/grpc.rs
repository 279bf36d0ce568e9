//! The gRPC gateway's calls in the [`Intake`]: each call takes a place among the requests in
//! progress (for as long as its answer, a job stream included, lasts) and its message is
//! counted in the bodies' share as it comes. What does not fit gets RESOURCE_EXHAUSTED at
//! once; a message that stops coming, DEADLINE_EXCEEDED.

use std::convert::Infallible;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tonic::body::Body;
use tonic::codegen::http::{Request, Response};
use tonic::codegen::Service;
use tonic::server::NamedService;
use tonic::Status;

use super::body::{BoxError, Counted, Holding};
use super::{peer, Intake, Kind, Refusal};

/// A gRPC service whose calls are counted in an [`Intake`].
#[derive(Clone)]
pub struct Guarded<S> {
    inner: S,
    intake: Intake,
    /// The largest message a call may send (the decoding limit).
    max_message: usize,
}

impl<S> Guarded<S> {
    pub fn new(inner: S, intake: Intake, max_message: usize) -> Self {
        Guarded {
            inner,
            intake,
            max_message,
        }
    }
}

fn status(refusal: &Refusal) -> Status {
    match refusal {
        Refusal::TooSlow(m) => Status::deadline_exceeded(m.clone()),
        Refusal::Node(m) | Refusal::Client(m) => Status::resource_exhausted(m.clone()),
    }
}

fn status_error(refusal: &Refusal) -> BoxError {
    Box::new(status(refusal))
}

impl<S> Service<Request<Body>> for Guarded<S>
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
        let mut inner = crate::admission::take_ready(&mut self.inner);
        let Some(ip) = peer(request.extensions()) else {
            return Box::pin(inner.call(request));
        };
        let held = self
            .intake
            .hold(ip, Kind::Requests, 1)
            .and_then(|place| Ok((place, self.intake.hold(ip, Kind::BodyBytes, 0)?)));
        let (place, bytes) = match held {
            Ok(held) => held,
            Err(refusal) => return Box::pin(async move { Ok(status(&refusal).into_http()) }),
        };
        let limits = self.intake.limits().clone();
        let max_message = self.max_message;
        let request = request.map(|body| {
            Body::new(Counted::new(
                body,
                bytes,
                &limits,
                max_message,
                Arc::new(OnceLock::new()),
                status_error,
            ))
        });
        Box::pin(async move {
            let response = inner.call(request).await?;
            Ok(response.map(|inner| Body::new(Holding { inner, held: place })))
        })
    }
}

impl<S: NamedService> NamedService for Guarded<S> {
    const NAME: &'static str = S::NAME;
}
