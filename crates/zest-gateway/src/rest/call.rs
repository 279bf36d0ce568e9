//! What a REST command handler starts from, extracted once for all of them: the key of the
//! entity the path names (`Keyed`, its parameter's name in the 400 a bad key gets, as the
//! spec names it: `jobKey`, `processInstanceKey`, ...) and the JSON body (`{}` when empty;
//! a 400 naming the property that is wrong), with the request's URI for the problem's
//! `instance`.

use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::Uri;
use serde::de::DeserializeOwned;

use super::{body, parse_named_key, Problem};

/// A call on one entity: `POST /v2/jobs/{jobKey}/completion` and the like.
pub(super) struct Keyed<T> {
    pub key: i64,
    pub body: T,
    pub uri: Uri,
}

/// A call with a JSON body and no key: `POST /v2/process-instances` and the like.
pub(super) struct Call<T> {
    pub body: T,
    pub uri: Uri,
}

impl<T, S> FromRequest<S> for Keyed<T>
where
    T: DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        let uri = req.uri().clone();
        let (mut parts, content) = req.into_parts();
        let params = Path::<Vec<(String, String)>>::from_request_parts(&mut parts, state)
            .await
            .map_err(|e| Problem::bad(e.body_text(), &uri))?;
        let Some((name, text)) = params.0.into_iter().next() else {
            return Err(Problem::bad(
                "Expected a key in the path, but none was given",
                &uri,
            ));
        };
        let key = parse_named_key(&text, &name, &uri)?;
        let call = Call::<T>::from_request(Request::from_parts(parts, content), state).await?;
        Ok(Keyed {
            key,
            body: call.body,
            uri,
        })
    }
}

impl<T, S> FromRequest<S> for Call<T>
where
    T: DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        let uri = req.uri().clone();
        let text = String::from_request(req, state)
            .await
            .map_err(|e| Problem::new(e.status(), e.body_text(), &uri))?;
        Ok(Call {
            body: body(&text, &uri)?,
            uri,
        })
    }
}
