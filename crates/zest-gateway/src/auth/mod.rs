//! Authentication, one layer for gRPC and REST (`docs/design/security.md`): a request's
//! `Authorization` header (gRPC metadata or HTTP header; Basic, or with OIDC a Bearer token,
//! [`oidc`]), or on REST the web UI's session cookie, becomes a [`Principal`] before the request
//! is handled; without valid credentials it is answered 401 with `WWW-Authenticate` or
//! UNAUTHENTICATED.
//!
//! Users live in the engine (USER records, distributed to every partition): a user is read from
//! partition 1's state, its password checked against the argon2id hash kept there. A checked
//! (user, password) is remembered for [`VERIFIED_SECS`] in a bounded map keyed by an HMAC of
//! both under a key of the process, so a client's requests after its first cost a lookup; a
//! deleted user or a changed password so stops working within that time on every node. Failed
//! tries are counted per client address: past [`FAILURES_PER_MINUTE`] in a minute, its next
//! ones are refused without a check.

pub mod grpc;
pub mod oidc;
pub mod password;
pub mod rest;
pub mod session;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::http::HeaderMap;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;
use zest_broker::Broker;

/// How clients authenticate (`--auth`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// Anyone who reaches a client port may do anything (loopback, or `--insecure`).
    None,
    /// Users stored in the engine, with their passwords: HTTP Basic, and the UI's login.
    Basic,
    /// Bearer tokens (JWTs) of an OpenID Connect issuer.
    Oidc(oidc::OidcConfig),
}

/// Who a request comes from.
#[derive(Debug, Clone)]
pub struct Principal {
    pub username: String,
    pub name: String,
    pub email: String,
    /// A member of the `admin` role.
    pub admin: bool,
    /// [`session::stamp`] of the user: its sessions end when it changes.
    pub stamp: String,
    /// An OIDC client (client credentials), not a user; `username` is its client id.
    pub client: bool,
}

impl Principal {
    fn of(user: zest_protocol::UserRecord, admin: bool) -> Principal {
        Principal {
            stamp: session::stamp(user.user_key, &user.password),
            username: user.username,
            name: user.name,
            email: user.email,
            admin,
            client: false,
        }
    }
}

/// Put in a request's extensions by the server when the connection is TLS: the session cookie
/// is then `Secure`.
#[derive(Clone, Copy, Debug)]
pub struct OverTls;

/// Why a request is not let in.
#[derive(Debug, Clone)]
pub enum Denied {
    /// No credentials.
    Missing,
    /// Credentials that are wrong, malformed or of an unknown user (the message says which,
    /// without telling whether the user exists).
    Invalid(String),
    /// Too many failed tries from this client address.
    TooManyTries,
    /// The users could not be read (partition 1 has no leader yet).
    Unavailable(String),
}

impl Denied {
    pub fn message(&self) -> String {
        match self {
            Denied::Missing => "Expected credentials (the Authorization header: Basic with a user's name and password, or with OIDC a Bearer token), but the request has none".into(),
            Denied::Invalid(why) => why.clone(),
            Denied::TooManyTries => format!(
                "Too many failed logins from this address: at most {FAILURES_PER_MINUTE} a minute; try again later"
            ),
            Denied::Unavailable(why) => format!("Expected to check the credentials, but the users cannot be read now: {why}"),
        }
    }
}

/// How long a checked (user, password) is taken without checking the hash again.
pub const VERIFIED_SECS: u64 = 60;
/// Checked credentials remembered at once.
const VERIFIED_MAX: usize = 4096;
/// Failed tries a client address may make in a minute.
pub const FAILURES_PER_MINUTE: u32 = 20;
/// Client addresses whose failures are counted at once.
const FAILURES_MAX: usize = 4096;

/// The authentication of a node's client ports, shared by gRPC, REST and the UI.
#[derive(Clone)]
pub struct Auth {
    inner: Arc<Inner>,
}

struct Inner {
    method: Method,
    oidc: Option<oidc::Oidc>,
    broker: Arc<Broker>,
    hashing: Semaphore,
    sessions: session::Sessions,
    cache_key: [u8; 32],
    verified: Mutex<HashMap<[u8; 32], (Instant, Principal)>>,
    failures: Mutex<HashMap<IpAddr, (Instant, u32)>>,
    decoy: tokio::sync::OnceCell<String>,
}

/// What let a request in.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub principal: Principal,
    /// Its session cookie (the UI), not an `Authorization` header.
    pub by_cookie: bool,
    /// A renewed session cookie to send back (`Set-Cookie`), when the old one is half gone.
    pub renewed: Option<String>,
}

fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    // without a random source the keys are still distinct per process start
    if getrandom::fill(&mut key).is_err() {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        key = Sha256::digest(format!("{nanos}:{}", std::process::id())).into();
    }
    key
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

impl Auth {
    /// `cluster_secret` keys the session cookies, so every node of the cluster accepts the
    /// ones any node made; without it, sessions end when the process does.
    pub fn new(method: Method, broker: Arc<Broker>, cluster_secret: Option<&str>) -> Auth {
        let session_key = match cluster_secret {
            Some(secret) => Sha256::digest(format!("zest-session-v1\0{secret}")).into(),
            None => random_key(),
        };
        let oidc = match &method {
            Method::Oidc(config) => Some(oidc::Oidc::new(config.clone())),
            _ => None,
        };
        Auth {
            inner: Arc::new(Inner {
                oidc,
                method,
                broker,
                hashing: Semaphore::new(password::HASHES_AT_ONCE),
                sessions: session::Sessions::new(session_key),
                cache_key: random_key(),
                verified: Mutex::default(),
                failures: Mutex::default(),
                decoy: tokio::sync::OnceCell::new(),
            }),
        }
    }

    pub fn method(&self) -> &Method {
        &self.inner.method
    }

    pub fn is_on(&self) -> bool {
        self.inner.method != Method::None
    }

    pub fn broker(&self) -> &Arc<Broker> {
        &self.inner.broker
    }

    /// The argon2id hash of a new password.
    pub async fn hash_password(&self, password: &str) -> Result<String, String> {
        if password.is_empty() {
            return Err("Expected a password, but none was given".into());
        }
        if password.len() > password::MAX_PASSWORD_BYTES {
            return Err(format!(
                "Expected a password of at most {} bytes, but it has {}",
                password::MAX_PASSWORD_BYTES,
                password.len()
            ));
        }
        password::hash(&self.inner.hashing, password.to_string()).await
    }

    /// Checks a user's password (a login, or Basic credentials). Credentials checked in the
    /// last minute pass at once; otherwise the try counts against the client address before
    /// the hash is checked (many tries sent at once are held to the limit) and is forgiven
    /// when it succeeds. An unknown user costs a hash like a wrong password.
    pub async fn login(
        &self,
        username: &str,
        password: &str,
        peer: Option<IpAddr>,
    ) -> Result<Principal, Denied> {
        let wrong = || {
            Denied::Invalid(
                "Expected a known user and its password, but the credentials are wrong".into(),
            )
        };
        if self.inner.oidc.is_some() {
            return Err(Denied::Invalid(OIDC_ONLY.into()));
        }
        let id = self.cache_id(username, password);
        if let Some(p) = self.remembered(&id) {
            return Ok(p);
        }
        if !self.try_from(peer) {
            return Err(Denied::TooManyTries);
        }
        if password.len() > password::MAX_PASSWORD_BYTES {
            return Err(wrong());
        }
        let user = self.user(username).await?;
        let Some((user, admin)) = user else {
            let decoy = self.decoy().await;
            password::verify(&self.inner.hashing, password.to_string(), decoy).await;
            return Err(wrong());
        };
        let ok = password::verify(
            &self.inner.hashing,
            password.to_string(),
            user.password.clone(),
        )
        .await;
        if !ok {
            return Err(wrong());
        }
        self.forgive(peer);
        let principal = Principal::of(user, admin);
        self.remember(id, principal.clone());
        Ok(principal)
    }

    /// The user `username` and whether it is an admin, from partition 1's state.
    async fn user(
        &self,
        username: &str,
    ) -> Result<Option<(zest_protocol::UserRecord, bool)>, Denied> {
        self.inner
            .broker
            .user(username)
            .await
            .map_err(|e| Denied::Unavailable(e.to_string()))
    }

    /// A hash no password matches, checked for unknown users so that their answer takes as
    /// long as a wrong password's.
    async fn decoy(&self) -> String {
        self.inner
            .decoy
            .get_or_init(|| async {
                password::hash(&self.inner.hashing, "no user has this password".into())
                    .await
                    .unwrap_or_default()
            })
            .await
            .clone()
    }

    /// The credentials of a request: its `Authorization` header, or (`cookies`, the REST port)
    /// its session cookie.
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
        cookies: bool,
        over_tls: bool,
    ) -> Result<Credentials, Denied> {
        if let Some(oidc) = &self.inner.oidc {
            let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else {
                return Err(Denied::Missing);
            };
            let principal = oidc.verify(bearer(value.to_str().unwrap_or(""))?).await?;
            return Ok(Credentials {
                principal,
                by_cookie: false,
                renewed: None,
            });
        }
        if let Some(value) = headers.get(axum::http::header::AUTHORIZATION) {
            let (user, password) = basic(value.to_str().unwrap_or(""))?;
            let principal = self.login(&user, &password, peer).await?;
            return Ok(Credentials {
                principal,
                by_cookie: false,
                renewed: None,
            });
        }
        let token = cookies
            .then(|| headers.get(axum::http::header::COOKIE))
            .flatten()
            .and_then(|c| c.to_str().ok())
            .and_then(|c| session::cookie(c, session::COOKIE));
        let Some(token) = token else {
            return Err(Denied::Missing);
        };
        let now = now_secs();
        let Some(session) = self.inner.sessions.check(token, now) else {
            return Err(Denied::Invalid(
                "Expected a valid session, but the session cookie has ended or is not this cluster's; log in again".into(),
            ));
        };
        let username = &session.username;
        let user = self.user(username).await?;
        let Some((user, admin)) = user else {
            return Err(Denied::Invalid(format!(
                "Expected the session's user '{username}' to exist, but it was deleted; log in again"
            )));
        };
        let principal = Principal::of(user, admin);
        if principal.stamp != session.stamp {
            return Err(Denied::Invalid(format!(
                "Expected the session of user '{username}' to be current, but the user's password changed since the login; log in again"
            )));
        }
        let renewed = (session.expires - now < session::SESSION_SECS / 2).then(|| {
            self.cookie_of(
                session::Session {
                    expires: now + session::SESSION_SECS,
                    ..session.clone()
                },
                over_tls,
            )
        });
        Ok(Credentials {
            principal,
            by_cookie: true,
            renewed,
        })
    }

    /// A `Set-Cookie` value that starts a session for `principal` (`secure` under TLS).
    pub fn session_cookie(&self, principal: &Principal, secure: bool) -> String {
        let now = now_secs();
        self.cookie_of(
            session::Session {
                username: principal.username.clone(),
                issued: now,
                expires: now + session::SESSION_SECS,
                stamp: principal.stamp.clone(),
            },
            secure,
        )
    }

    fn cookie_of(&self, session: session::Session, secure: bool) -> String {
        let token = self.inner.sessions.token(&session);
        format!(
            "{}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{}",
            session::COOKIE,
            session::SESSION_SECS,
            if secure { "; Secure" } else { "" }
        )
    }

    /// A `Set-Cookie` value that ends the session.
    pub fn ended_session_cookie(&self) -> String {
        format!(
            "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0",
            session::COOKIE
        )
    }

    fn cache_id(&self, username: &str, password: &str) -> [u8; 32] {
        let mut mac = <Hmac<Sha256>>::new_from_slice(&self.inner.cache_key)
            .expect("HMAC takes any key length");
        mac.update(username.as_bytes());
        mac.update(&[0]);
        mac.update(password.as_bytes());
        mac.finalize().into_bytes().into()
    }

    fn remembered(&self, id: &[u8; 32]) -> Option<Principal> {
        let verified = self
            .inner
            .verified
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        verified
            .get(id)
            .filter(|(until, _)| *until > Instant::now())
            .map(|(_, p)| p.clone())
    }

    fn remember(&self, id: [u8; 32], principal: Principal) {
        let now = Instant::now();
        let mut verified = self
            .inner
            .verified
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if verified.len() >= VERIFIED_MAX {
            verified.retain(|_, (until, _)| *until > now);
            if verified.len() >= VERIFIED_MAX {
                verified.clear();
            }
        }
        verified.insert(id, (now + Duration::from_secs(VERIFIED_SECS), principal));
    }

    /// Counts a try from `peer` (a check about to be made): false when the address has made
    /// [`FAILURES_PER_MINUTE`] unforgiven tries in the last minute.
    fn try_from(&self, peer: Option<IpAddr>) -> bool {
        let Some(ip) = peer else { return true };
        let minute = Duration::from_secs(60);
        let mut failures = self
            .inner
            .failures
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if failures.len() >= FAILURES_MAX && !failures.contains_key(&ip) {
            failures.retain(|_, (since, _)| since.elapsed() < minute);
            if failures.len() >= FAILURES_MAX {
                failures.clear();
            }
        }
        let entry = failures.entry(ip).or_insert((Instant::now(), 0));
        if entry.0.elapsed() >= minute {
            *entry = (Instant::now(), 0);
        }
        if entry.1 >= FAILURES_PER_MINUTE {
            return false;
        }
        entry.1 += 1;
        true
    }

    /// Takes back the try of a check that succeeded.
    fn forgive(&self, peer: Option<IpAddr>) {
        let Some(ip) = peer else { return };
        let mut failures = self
            .inner
            .failures
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = failures.get_mut(&ip) {
            entry.1 = entry.1.saturating_sub(1);
        }
    }
}

const OIDC_ONLY: &str = "Expected a Bearer token of the OIDC issuer (this node has --auth oidc), but the request has Basic credentials; users and passwords are the identity provider's";

/// The token of a `Bearer` `Authorization` value.
fn bearer(value: &str) -> Result<&str, Denied> {
    let (scheme, rest) = value.trim().split_once(' ').unwrap_or((value, ""));
    if scheme.eq_ignore_ascii_case("bearer") {
        return Ok(rest.trim());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        return Err(Denied::Invalid(OIDC_ONLY.into()));
    }
    Err(Denied::Invalid(format!(
        "Expected the Authorization header to be 'Bearer <token>', but its scheme is '{}'",
        scheme.chars().take(20).collect::<String>()
    )))
}

/// The user and password of a `Basic` `Authorization` value.
fn basic(value: &str) -> Result<(String, String), Denied> {
    let malformed = |why: &str| {
        Denied::Invalid(format!(
            "Expected the Authorization header to be 'Basic' and the base64 of 'username:password', but {why}"
        ))
    };
    let (scheme, rest) = value.trim().split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(malformed(&format!(
            "its scheme is '{}' (bearer tokens need --auth oidc, which this node does not have)",
            scheme.chars().take(20).collect::<String>()
        )));
    }
    let bytes = STANDARD
        .decode(rest.trim())
        .map_err(|_| malformed("it is not base64"))?;
    let text = String::from_utf8(bytes).map_err(|_| malformed("it is not UTF-8"))?;
    let (user, password) = text
        .split_once(':')
        .ok_or_else(|| malformed("it has no ':'"))?;
    Ok((user.to_string(), password.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_read_or_refused_with_the_reason() {
        let v = format!("Basic {}", STANDARD.encode("demo:de:mo"));
        let (u, p) = basic(&v).unwrap();
        assert_eq!((u.as_str(), p.as_str()), ("demo", "de:mo"));
        for bad in ["Bearer abc", "Basic !!!", "Basic ZGVtbw==", ""] {
            let Err(Denied::Invalid(why)) = basic(bad) else {
                panic!("{bad} passed")
            };
            assert!(
                why.starts_with("Expected the Authorization header"),
                "{why}"
            );
        }
    }

    #[test]
    fn with_oidc_a_bearer_token_is_read_and_basic_is_refused() {
        assert_eq!(bearer("Bearer abc.def.ghi").unwrap(), "abc.def.ghi");
        assert_eq!(bearer("bearer  x ").unwrap(), "x");
        let Err(Denied::Invalid(why)) = bearer("Basic ZGVtbzpkZW1v") else {
            panic!("Basic passed")
        };
        assert!(why.contains("--auth oidc"), "{why}");
        let Err(Denied::Invalid(why)) = bearer("Negotiate x") else {
            panic!("Negotiate passed")
        };
        assert!(why.contains("'Negotiate'"), "{why}");
    }
}
