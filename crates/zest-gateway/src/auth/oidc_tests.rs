//! Tokens made with keys made at test time, checked against a JWKS served on loopback.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use axum::routing::get;
use axum::Json;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::json;

use super::*;

struct TestKey {
    kid: String,
    pkcs8: Vec<u8>,
    jwk: Value,
}

fn key(kid: &str) -> TestKey {
    let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
        .unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref()).unwrap();
    // the uncompressed point: 0x04, x, y
    let point = pair.public_key().as_ref().to_vec();
    let jwk = json!({
        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..]),
    });
    TestKey {
        kid: kid.into(),
        pkcs8: doc.as_ref().to_vec(),
        jwk,
    }
}

/// An issuer on loopback whose key set can change; counts the fetches of its keys.
struct Issuer {
    uri: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
}

async fn issuer(keys: &[&TestKey]) -> Issuer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}/realms/test", listener.local_addr().unwrap());
    let set = Arc::new(Mutex::new(
        keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>(),
    ));
    let fetches = Arc::new(AtomicUsize::new(0));
    let discovery = json!({"issuer": uri, "jwks_uri": format!("{uri}/certs")});
    let (s, f) = (set.clone(), fetches.clone());
    let app = axum::Router::new()
        .route(
            "/realms/test/.well-known/openid-configuration",
            get(move || async move { Json(discovery) }),
        )
        .route(
            "/realms/test/certs",
            get(move || async move {
                f.fetch_add(1, Ordering::SeqCst);
                let keys = s.lock().unwrap().clone();
                Json(json!({ "keys": keys }))
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Issuer {
        uri,
        keys: set,
        fetches,
    }
}

fn config(issuer: &str) -> OidcConfig {
    OidcConfig {
        issuer_uri: issuer.into(),
        audiences: vec!["zeebe-api".into()],
        username_claim: "sub".into(),
        client_id_claim: None,
        prefer_username_claim: false,
    }
}

fn claims(issuer: &str) -> Value {
    let now = now_secs();
    json!({"iss": issuer, "aud": "zeebe-api", "sub": "lisa", "iat": now, "exp": now + 300})
}

fn sign(key: &TestKey, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&key.pkcs8)).unwrap()
}

fn with(mut claims: Value, field: &str, value: Value) -> Value {
    claims[field] = value;
    claims
}

async fn refused(oidc: &Oidc, token: &str) -> String {
    match oidc.verify(token).await {
        Err(Denied::Invalid(why)) => why,
        other => panic!("expected a refusal of {token}, got {other:?}"),
    }
}

#[tokio::test]
async fn a_token_signed_by_the_issuer_names_its_user_or_client() {
    let k1 = key("k1");
    let iss = issuer(&[&k1]).await;
    let oidc = Oidc::new(config(&iss.uri));
    let user = oidc.verify(&sign(&k1, &claims(&iss.uri))).await.unwrap();
    assert_eq!((user.username.as_str(), user.client), ("lisa", false));
    // an audience list in the token, and an expiry within the leeway
    let c = with(claims(&iss.uri), "aud", json!(["other", "zeebe-api"]));
    let c = with(c, "exp", json!(now_secs() - 30));
    assert!(oidc.verify(&sign(&k1, &c)).await.is_ok());
    // a client credentials token: the client id claim wins over the username claim
    let mut cfg = config(&iss.uri);
    cfg.client_id_claim = Some("azp".into());
    let clients = Oidc::new(cfg.clone());
    let c = with(claims(&iss.uri), "azp", json!("zeebe"));
    let p = clients.verify(&sign(&k1, &c)).await.unwrap();
    assert_eq!((p.username.as_str(), p.client), ("zeebe", true));
    cfg.prefer_username_claim = true;
    let p = Oidc::new(cfg).verify(&sign(&k1, &c)).await.unwrap();
    assert_eq!((p.username.as_str(), p.client), ("lisa", false));
    let mut c = claims(&iss.uri);
    c.as_object_mut().unwrap().remove("sub");
    let why = refused(&clients, &sign(&k1, &c)).await;
    assert!(why.contains("neither the username claim 'sub'"), "{why}");
    // each of the three fetched the keys once, for all its tokens
    assert_eq!(iss.fetches.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn each_bad_token_is_refused_with_its_reason() {
    let k1 = key("k1");
    let iss = issuer(&[&k1]).await;
    let oidc = Oidc::new(config(&iss.uri));
    let now = now_secs();
    let impostor = TestKey {
        kid: "k1".into(),
        ..key("k1")
    };
    let b64 = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    let none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "kid": "k1"})),
        b64(&claims(&iss.uri))
    );
    // HS256 with the issuer's public key as the secret: the classic confusion
    let mut hs = Header::new(Algorithm::HS256);
    hs.kid = Some("k1".into());
    let secret = EncodingKey::from_secret(k1.jwk.to_string().as_bytes()).unwrap();
    let hs256 = jsonwebtoken::encode(&hs, &claims(&iss.uri), &secret).unwrap();
    let cases = [
        ("not-a-jwt".to_string(), "is not a JWT"),
        ("a.b.c".into(), "header is not"),
        (
            format!("{}.e30.AAAA", b64(&json!({"alg": "ES256"}))),
            "signature is not the issuer's",
        ),
        (none, "algorithm (alg) is 'none'"),
        (hs256, "algorithm (alg) is 'HS256'"),
        (
            sign(&k1, &with(claims(&iss.uri), "exp", json!(now - 120))),
            "has expired",
        ),
        (
            sign(&k1, &with(claims(&iss.uri), "nbf", json!(now + 300))),
            "not valid yet",
        ),
        (
            sign(&impostor, &claims(&iss.uri)),
            "signature is not the issuer's",
        ),
        (
            sign(&k1, &with(claims(&iss.uri), "aud", json!("account"))),
            "audience (aud) is \"account\"",
        ),
        (
            sign(
                &k1,
                &with(claims(&iss.uri), "iss", json!("http://other/realms/x")),
            ),
            "issuer (iss) is \"http://other/realms/x\"",
        ),
        (
            sign(&key("k9"), &claims(&iss.uri)),
            "key id 'k9' is not one of the issuer's keys",
        ),
        (" ".into(), "Bearer value is empty"),
        ("x".repeat(20_000), "bytes (at most"),
    ];
    let fetches = iss.fetches.load(Ordering::SeqCst);
    for (token, reason) in cases {
        let why = refused(&oidc, &token).await;
        assert!(why.contains(reason), "{reason}: {why}");
        assert!(why.starts_with("Expected a valid bearer token"), "{why}");
    }
    // another issuer's token, with a key id of its own, made no fetch of the keys
    let foreign = sign(
        &key("k7"),
        &with(claims(&iss.uri), "iss", json!("http://other/x")),
    );
    assert!(refused(&oidc, &foreign).await.contains("issuer (iss)"));
    assert_eq!(
        iss.fetches.load(Ordering::SeqCst),
        fetches + 1,
        "one fetch, the first token's"
    );
    let mut c = claims(&iss.uri);
    c.as_object_mut().unwrap().remove("aud");
    assert!(refused(&oidc, &sign(&k1, &c))
        .await
        .contains("no 'aud' claim"));
    // without configured audiences, aud is not checked
    let mut open = config(&iss.uri);
    open.audiences.clear();
    assert!(Oidc::new(open).verify(&sign(&k1, &c)).await.is_ok());
}

#[tokio::test]
async fn an_unknown_key_id_fetches_the_keys_again_at_most_every_30_seconds() {
    let (k1, k2) = (key("k1"), key("k2"));
    let iss = issuer(&[&k1]).await;
    let oidc = Oidc::new(config(&iss.uri));
    assert!(oidc.verify(&sign(&k1, &claims(&iss.uri))).await.is_ok());
    // the issuer rotates its key: within 30 s of the last fetch the new id is not fetched
    iss.keys.lock().unwrap().push(k2.jwk.clone());
    let rotated = sign(&k2, &claims(&iss.uri));
    assert!(refused(&oidc, &rotated).await.contains("key id 'k2'"));
    assert_eq!(iss.fetches.load(Ordering::SeqCst), 1);
    *oidc.fetched.lock().await = Instant::now()
        .checked_sub(Duration::from_secs(31))
        .map(|at| (at, None));
    assert!(oidc.verify(&rotated).await.is_ok());
    assert_eq!(iss.fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_unreachable_issuer_makes_tokens_wait_not_pass() {
    let k1 = key("k1");
    // a port nothing listens on
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let uri = format!("http://{}/realms/test", listener.local_addr().unwrap());
    drop(listener);
    let oidc = Oidc::new(config(&uri));
    // the second token, within 30 s, gets the first fetch's reason without a fetch of its own
    for _ in 0..2 {
        match oidc.verify(&sign(&k1, &claims(&uri))).await {
            Err(Denied::Unavailable(why)) => assert!(why.contains("cannot be fetched"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
