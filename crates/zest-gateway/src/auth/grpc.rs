//! The gRPC side of authentication: every call's `authorization` metadata is checked before
//! the call is read; a call without valid credentials is answered UNAUTHENTICATED (too many
//! failed tries: RESOURCE_EXHAUSTED). The principal goes into the call's extensions.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tonic::body::Body;
use tonic::codegen::http::{Request, Response};
use tonic::codegen::Service;
use tonic::server::NamedService;

use super::{Auth, Denied};

/// A gRPC service whose calls are let in by [`Auth`].
#[derive(Clone)]
pub struct Authenticated<S> {
    inner: S,
    auth: Auth,
}

impl<S> Authenticated<S> {
    pub fn new(inner: S, auth: Auth) -> Self {
        Authenticated { inner, auth }
    }
}

/// The gRPC status of a refusal.
pub fn status(denied: &Denied) -> tonic::Status {
    match denied {
        Denied::TooManyTries => tonic::Status::resource_exhausted(denied.message()),
        Denied::Unavailable(_) => tonic::Status::unavailable(denied.message()),
        Denied::Missing | Denied::Invalid(_) => tonic::Status::unauthenticated(denied.message()),
    }
}

impl<S> Service<Request<Body>> for Authenticated<S>
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

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let mut inner = crate::admission::take_ready(&mut self.inner);
        if !self.auth.is_on() {
            return Box::pin(inner.call(request));
        }
        let auth = self.auth.clone();
        Box::pin(async move {
            let peer = crate::intake::peer(request.extensions());
            match auth
                .authenticate(request.headers(), peer, false, false)
                .await
            {
                Ok(credentials) => {
                    request.extensions_mut().insert(credentials.principal);
                    inner.call(request).await
                }
                Err(denied) => Ok(status(&denied).into_http()),
            }
        })
    }
}

impl<S: NamedService> NamedService for Authenticated<S> {
    const NAME: &'static str = S::NAME;
}
