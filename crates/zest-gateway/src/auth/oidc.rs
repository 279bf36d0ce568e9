//! OpenID Connect (`--auth oidc`): a request's `Authorization: Bearer <JWT>` is checked against
//! the issuer's keys with the `jsonwebtoken` crate. The keys come from the issuer's JWKS, found
//! by discovery (`<issuer>/.well-known/openid-configuration`), kept by key id and fetched again
//! when a token names an unknown one, at most every [`REFETCH_SECS`]; each fetch has a
//! [`FETCH_TIMEOUT`]. A token is accepted when its signature is the issuer's (an asymmetric
//! algorithm only: `none` and the HMAC ones are refused), its `iss` is the issuer, its `aud` one
//! of the audiences (when any are configured), and `exp`/`nbf` hold with [`LEEWAY_SECS`].
//!
//! The principal is a client when the client id claim is configured and present (and the
//! username claim is absent or not preferred), else a user named by the username claim, as in
//! Camunda 8.8. A verified token is remembered by its SHA-256 until it expires, in a bounded map.

use std::collections::HashMap;
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{errors::ErrorKind, Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{now_secs, Denied, Principal};

/// Clock skew allowed on `exp` and `nbf`.
pub const LEEWAY_SECS: u64 = 60;
/// The least time between two fetches of the issuer's keys.
pub const REFETCH_SECS: u64 = 30;
/// How long a fetch of the discovery document or the keys may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest token read (a JWT with many claims is a few KiB).
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Verified tokens remembered at once.
const VERIFIED_MAX: usize = 4096;
/// The largest discovery document or key set read.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// The OIDC settings (Camunda 8.8's `camunda.security.authentication.oidc.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcConfig {
    /// The issuer: tokens' `iss`, and the base of the discovery document.
    pub issuer_uri: String,
    /// The accepted `aud` values; empty: `aud` is not checked.
    pub audiences: Vec<String>,
    /// The claim that names a user (Camunda's default: `sub`).
    pub username_claim: String,
    /// The claim that names a client; none: every principal is a user.
    pub client_id_claim: Option<String>,
    /// A token with both claims counts as a user (Camunda's default: as a client).
    pub prefer_username_claim: bool,
}

/// The issuer's keys by key id, and when they were last fetched.
#[derive(Default)]
struct Keys {
    by_kid: HashMap<String, DecodingKey>,
    /// Keys without a key id (used when a token names none).
    unnamed: Vec<DecodingKey>,
}

pub struct Oidc {
    config: OidcConfig,
    http: reqwest::Client,
    keys: RwLock<Keys>,
    /// When the keys were last fetched, and why that failed (held while fetching, so one
    /// request fetches at a time).
    fetched: tokio::sync::Mutex<Option<(Instant, Option<String>)>>,
    verified: Mutex<HashMap<[u8; 32], (u64, Principal)>>,
}

/// The algorithms a token may be signed with: the issuer's public keys only.
const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

fn invalid(why: impl std::fmt::Display) -> Denied {
    Denied::Invalid(format!("Expected a valid bearer token, but {why}"))
}

impl Oidc {
    pub fn new(config: OidcConfig) -> Oidc {
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(FETCH_TIMEOUT)
            .build()
            .unwrap_or_default();
        Oidc {
            config,
            http,
            keys: RwLock::default(),
            fetched: tokio::sync::Mutex::new(None),
            verified: Mutex::default(),
        }
    }

    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// The principal of a bearer token, or why it is refused.
    pub async fn verify(&self, token: &str) -> Result<Principal, Denied> {
        let token = token.trim();
        if token.is_empty() {
            return Err(invalid("the Bearer value is empty"));
        }
        if token.len() > MAX_TOKEN_BYTES {
            return Err(invalid(format!(
                "it has {} bytes (at most {MAX_TOKEN_BYTES})",
                token.len()
            )));
        }
        let id: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(p) = self.remembered(&id) {
            return Ok(p);
        }
        let (alg, kid, claims) = unverified_parts(token)?;
        // another issuer's token is refused before its key id could make the keys be fetched
        let iss = claims.get("iss").and_then(Value::as_str);
        if iss.is_some_and(|iss| iss != self.config.issuer_uri) {
            return Err(invalid(format!(
                "its issuer (iss) is {}, not {}",
                claims["iss"], self.config.issuer_uri
            )));
        }
        let key = self.key(kid.as_deref(), alg).await?;
        let claims = self.check(token, alg, &key, &claims)?;
        let principal = self.principal(&claims)?;
        let exp = claims.get("exp").and_then(Value::as_u64).unwrap_or(0);
        self.remember(id, exp, principal.clone());
        Ok(principal)
    }

    /// Checks the signature and the registered claims.
    fn check(
        &self,
        token: &str,
        alg: Algorithm,
        key: &DecodingKey,
        unverified: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Denied> {
        let mut validation = Validation::new(alg);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_issuer(&[self.config.issuer_uri.as_str()]);
        let mut required = vec!["exp", "iss"];
        if self.config.audiences.is_empty() {
            validation.validate_aud = false;
        } else {
            validation.set_audience(&self.config.audiences);
            required.push("aud");
        }
        validation.set_required_spec_claims(&required);
        let claim = |name: &str| {
            unverified
                .get(name)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "absent".into())
        };
        match jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation) {
            Ok(data) => Ok(data.claims),
            Err(e) => Err(invalid(match e.kind() {
                ErrorKind::InvalidSignature => {
                    "its signature is not the issuer's (no key of its JWKS verifies it)".into()
                }
                ErrorKind::ExpiredSignature => format!(
                    "it has expired (exp {}, now {}, {LEEWAY_SECS} s leeway)",
                    claim("exp"),
                    now_secs()
                ),
                ErrorKind::ImmatureSignature => format!(
                    "it is not valid yet (nbf {}, now {}, {LEEWAY_SECS} s leeway)",
                    claim("nbf"),
                    now_secs()
                ),
                ErrorKind::InvalidIssuer => format!(
                    "its issuer (iss) is {}, not {}",
                    claim("iss"),
                    self.config.issuer_uri
                ),
                ErrorKind::InvalidAudience => format!(
                    "its audience (aud) is {}, not one of {:?}",
                    claim("aud"),
                    self.config.audiences
                ),
                ErrorKind::MissingRequiredClaim(c) => format!("it has no '{c}' claim"),
                ErrorKind::InvalidAlgorithm => {
                    format!("its algorithm {alg:?} does not fit the issuer's key")
                }
                other => format!("it cannot be read ({other:?})"),
            })),
        }
    }

    /// A user from the username claim, or a client from the client id claim.
    fn principal(&self, claims: &Map<String, Value>) -> Result<Principal, Denied> {
        let text = |name: &str| {
            claims
                .get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let username = text(&self.config.username_claim);
        let client = self.config.client_id_claim.as_deref().and_then(text);
        let (name, is_client) = match (username, client) {
            (Some(u), Some(_)) if self.config.prefer_username_claim => (u, false),
            (_, Some(c)) => (c, true),
            (Some(u), None) => (u, false),
            (None, None) => {
                return Err(invalid(format!(
                    "it has neither the username claim '{}'{}",
                    self.config.username_claim,
                    match &self.config.client_id_claim {
                        Some(c) => format!(" nor the client id claim '{c}'"),
                        None => String::new(),
                    }
                )))
            }
        };
        Ok(Principal {
            name: text("name").unwrap_or_default(),
            email: text("email").unwrap_or_default(),
            username: name,
            admin: false,
            client: is_client,
            // no session cookie is made for a token
            stamp: String::new(),
        })
    }

    /// The issuer's key for a token: by its key id, fetching the keys again when the id is
    /// unknown (at most every [`REFETCH_SECS`]).
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, Denied> {
        if let Some(key) = self.known_key(kid, alg) {
            return Ok(key);
        }
        let mut fetched = self.fetched.lock().await;
        // another request may have fetched them while this one waited
        if let Some(key) = self.known_key(kid, alg) {
            return Ok(key);
        }
        let unavailable = |e: &str| {
            Denied::Unavailable(format!(
                "the keys of the issuer {} cannot be fetched: {e}",
                self.config.issuer_uri
            ))
        };
        match fetched.as_ref() {
            // within 30 s of a failed fetch, its reason stands
            Some((at, Some(e))) if at.elapsed() < Duration::from_secs(REFETCH_SECS) => {
                return Err(unavailable(e))
            }
            Some((at, None)) if at.elapsed() < Duration::from_secs(REFETCH_SECS) => {}
            _ => {
                let result = self.fetch_keys().await;
                *fetched = Some((Instant::now(), result.as_ref().err().cloned()));
                let keys = result.map_err(|e| unavailable(&e))?;
                *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys;
                if let Some(key) = self.known_key(kid, alg) {
                    return Ok(key);
                }
            }
        }
        Err(invalid(match kid {
            Some(kid) => format!("its key id '{kid}' is not one of the issuer's keys"),
            None => format!("it names no key id and the issuer has no single {alg:?} key"),
        }))
    }

    fn known_key(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        match kid {
            Some(kid) => keys.by_kid.get(kid).cloned(),
            None => {
                let fits: Vec<_> = keys
                    .unnamed
                    .iter()
                    .chain(keys.by_kid.values())
                    .filter(|k| k.family() == alg.family())
                    .collect();
                (fits.len() == 1).then(|| fits[0].clone())
            }
        }
    }

    /// Discovery, then the key set (its signing keys; keys of unknown types are skipped).
    async fn fetch_keys(&self) -> Result<Keys, String> {
        let issuer = self.config.issuer_uri.trim_end_matches('/');
        let discovery = self
            .get_json(&format!("{issuer}/.well-known/openid-configuration"))
            .await?;
        let jwks_uri = discovery
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or("the discovery document has no jwks_uri")?;
        let jwks = self.get_json(jwks_uri).await?;
        let list = jwks
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("the key set has no 'keys' array")?;
        let mut keys = Keys::default();
        for value in list {
            let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else {
                continue;
            };
            if jwk.common.public_key_use == Some(PublicKeyUse::Encryption) {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            match jwk.common.key_id {
                Some(kid) => {
                    keys.by_kid.insert(kid, key);
                }
                None => keys.unnamed.push(key),
            }
        }
        tracing::info!(
            keys = keys.by_kid.len() + keys.unnamed.len(),
            "fetched the signing keys of the issuer {issuer}"
        );
        Ok(keys)
    }

    async fn get_json(&self, url: &str) -> Result<Value, String> {
        let response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("GET {url}: {}", response.status()));
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(format!("GET {url}: over {MAX_DOCUMENT_BYTES} bytes"));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if bytes.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("GET {url}: over {MAX_DOCUMENT_BYTES} bytes"));
        }
        serde_json::from_slice(&bytes).map_err(|e| format!("GET {url}: not JSON: {e}"))
    }

    fn remembered(&self, id: &[u8; 32]) -> Option<Principal> {
        let verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        verified
            .get(id)
            .filter(|(exp, _)| *exp + LEEWAY_SECS > now_secs())
            .map(|(_, p)| p.clone())
    }

    fn remember(&self, id: [u8; 32], exp: u64, principal: Principal) {
        let now = now_secs();
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= VERIFIED_MAX {
            verified.retain(|_, (exp, _)| *exp + LEEWAY_SECS > now);
            if verified.len() >= VERIFIED_MAX {
                verified.clear();
            }
        }
        verified.insert(id, (exp, principal));
    }
}

/// A token's algorithm, key id and claims, not yet checked.
type Unverified = (Algorithm, Option<String>, Map<String, Value>);

/// A token's algorithm, key id and claims, read before anything is checked, to choose the key
/// and to say why a token is refused.
fn unverified_parts(token: &str) -> Result<Unverified, Denied> {
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err(invalid(format!(
            "it is not a JWT (three base64url parts separated by '.'; it has {})",
            parts.len()
        )));
    }
    let json = |part: &str, what: &str| -> Result<Map<String, Value>, Denied> {
        let bytes = URL_SAFE_NO_PAD
            .decode(part.trim_end_matches('='))
            .map_err(|_| invalid(format!("its {what} is not base64url")))?;
        serde_json::from_slice(&bytes)
            .map_err(|_| invalid(format!("its {what} is not a JSON object")))
    };
    let header = json(parts[0], "header")?;
    let claims = json(parts[1], "payload")?;
    let alg_name = header.get("alg").and_then(Value::as_str).unwrap_or("");
    let alg = alg_name
        .parse::<Algorithm>()
        .ok()
        .filter(|a| ASYMMETRIC.contains(a))
        .ok_or_else(|| {
            invalid(format!(
                "its algorithm (alg) is '{}'; only the issuer's public-key algorithms (RS256, PS256, ES256, EdDSA, ...) are accepted",
                alg_name.chars().take(20).collect::<String>()
            ))
        })?;
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok((alg, kid, claims))
}

#[cfg(test)]
#[path = "oidc_tests.rs"]
mod tests;
