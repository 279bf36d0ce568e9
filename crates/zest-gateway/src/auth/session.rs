//! The web UI's session: after a login, a cookie that names the user, when the session began
//! and when it ends, and a stamp of the user's key and password hash, signed with HMAC-SHA256
//! under a key every node of the cluster derives from the cluster secret (a single node without
//! one makes its own at start), so any node accepts it and nothing is kept per session. A
//! cookie lasts [`SESSION_SECS`] and is renewed while it is used, but never past
//! [`MAX_SESSION_SECS`] from the login. A changed password or a user deleted and made again
//! changes the stamp: the user's old sessions end at once on every node.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// The cookie's name.
pub const COOKIE: &str = "zest_session";
/// How long a session lasts without use.
pub const SESSION_SECS: u64 = 30 * 60;
/// The longest a session lasts from its login, used or not.
pub const MAX_SESSION_SECS: u64 = 12 * 60 * 60;

type HmacSha256 = Hmac<Sha256>;

/// Signs and checks session tokens.
#[derive(Clone)]
pub struct Sessions {
    key: [u8; 32],
}

/// What a valid token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub username: String,
    /// When the login was (seconds since the epoch).
    pub issued: u64,
    pub expires: u64,
    /// [`stamp`] of the user at the login.
    pub stamp: String,
}

/// A user's stamp: changes when its password or key does.
pub fn stamp(user_key: i64, password_hash: &str) -> String {
    let digest = Sha256::digest(format!("{user_key}\0{password_hash}"));
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

impl Sessions {
    pub fn new(key: [u8; 32]) -> Self {
        Sessions { key }
    }

    fn mac(&self, payload: &str) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(payload.as_bytes());
        mac
    }

    /// The signed token of `session`.
    pub fn token(&self, s: &Session) -> String {
        let payload = format!(
            "v2.{}.{}.{}.{}",
            URL_SAFE_NO_PAD.encode(&s.username),
            s.issued,
            s.expires,
            s.stamp
        );
        let sig = URL_SAFE_NO_PAD.encode(self.mac(&payload).finalize().into_bytes());
        format!("{payload}.{sig}")
    }

    /// The session of a token this cluster signed, if it has not ended at `now`.
    pub fn check(&self, token: &str, now: u64) -> Option<Session> {
        let (payload, sig) = token.rsplit_once('.')?;
        let sig = URL_SAFE_NO_PAD.decode(sig).ok()?;
        self.mac(payload).verify_slice(&sig).ok()?;
        let mut parts = payload.split('.');
        let (Some("v2"), Some(user), Some(issued), Some(expires), Some(stamp), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let issued: u64 = issued.parse().ok()?;
        let expires: u64 = expires.parse().ok()?;
        let username = String::from_utf8(URL_SAFE_NO_PAD.decode(user).ok()?).ok()?;
        let alive = expires > now && now < issued.saturating_add(MAX_SESSION_SECS);
        alive.then(|| Session {
            username,
            issued,
            expires,
            stamp: stamp.to_string(),
        })
    }
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|c| {
        let (k, v) = c.trim().split_once('=')?;
        (k == name).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(user: &str, issued: u64, expires: u64) -> Session {
        Session {
            username: user.into(),
            issued,
            expires,
            stamp: stamp(1, "hash"),
        }
    }

    #[test]
    fn a_token_holds_its_session_until_it_ends_and_cannot_be_forged() {
        let s = Sessions::new([7; 32]);
        let t = s.token(&session("demo.user@x", 500, 1_000));
        assert_eq!(s.check(&t, 999), Some(session("demo.user@x", 500, 1_000)));
        assert_eq!(s.check(&t, 1_000), None, "ended");
        let other = Sessions::new([8; 32]);
        assert_eq!(other.check(&t, 10), None, "another cluster's key");
        let forged = t.replace(
            &URL_SAFE_NO_PAD.encode("demo.user@x"),
            &URL_SAFE_NO_PAD.encode("admin"),
        );
        assert_eq!(s.check(&forged, 10), None);
        let longer = t.replace(".1000.", ".9999999.");
        assert_eq!(s.check(&longer, 10), None);
        assert_eq!(s.check("garbage", 10), None);
        assert_eq!(s.check("", 10), None);
    }

    #[test]
    fn renewals_end_at_the_longest_session() {
        let s = Sessions::new([7; 32]);
        let t = s.token(&session("demo", 0, MAX_SESSION_SECS + 100));
        assert!(s.check(&t, MAX_SESSION_SECS - 1).is_some());
        assert_eq!(s.check(&t, MAX_SESSION_SECS), None);
    }

    #[test]
    fn the_stamp_follows_the_password_and_the_user() {
        assert_eq!(stamp(1, "a"), stamp(1, "a"));
        assert_ne!(stamp(1, "a"), stamp(1, "b"));
        assert_ne!(stamp(1, "a"), stamp(2, "a"));
    }

    #[test]
    fn a_cookie_is_found_among_others() {
        assert_eq!(
            cookie("a=1; zest_session=abc.def; b=2", COOKIE),
            Some("abc.def")
        );
        assert_eq!(cookie("a=1", COOKIE), None);
    }
}
