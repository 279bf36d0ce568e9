//! The web UI's session: after a login, a cookie that names the user and when it ends, signed
//! with HMAC-SHA256 under a key every node of the cluster derives from the cluster secret (a
//! single node without one makes its own at start), so any node accepts it and nothing is
//! kept per session. A cookie lasts [`SESSION_SECS`] and is renewed while it is used.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The cookie's name.
pub const COOKIE: &str = "zest_session";
/// How long a session lasts without use.
pub const SESSION_SECS: u64 = 30 * 60;

type HmacSha256 = Hmac<Sha256>;

/// Signs and checks session tokens.
#[derive(Clone)]
pub struct Sessions {
    key: [u8; 32],
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

    /// A token for `username` that ends at `expires` (seconds since the epoch).
    pub fn token(&self, username: &str, expires: u64) -> String {
        let payload = format!("v1.{}.{expires}", URL_SAFE_NO_PAD.encode(username));
        let sig = URL_SAFE_NO_PAD.encode(self.mac(&payload).finalize().into_bytes());
        format!("{payload}.{sig}")
    }

    /// The username and end of a token this cluster signed, if it has not ended at `now`.
    pub fn check(&self, token: &str, now: u64) -> Option<(String, u64)> {
        let (payload, sig) = token.rsplit_once('.')?;
        let sig = URL_SAFE_NO_PAD.decode(sig).ok()?;
        self.mac(payload).verify_slice(&sig).ok()?;
        let mut parts = payload.split('.');
        let (Some("v1"), Some(user), Some(expires), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let expires: u64 = expires.parse().ok()?;
        let user = String::from_utf8(URL_SAFE_NO_PAD.decode(user).ok()?).ok()?;
        (expires > now).then_some((user, expires))
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

    #[test]
    fn a_token_holds_its_user_until_it_ends_and_cannot_be_forged() {
        let s = Sessions::new([7; 32]);
        let t = s.token("demo.user@x", 1_000);
        assert_eq!(s.check(&t, 999), Some(("demo.user@x".into(), 1_000)));
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
    fn a_cookie_is_found_among_others() {
        assert_eq!(
            cookie("a=1; zest_session=abc.def; b=2", COOKIE),
            Some("abc.def")
        );
        assert_eq!(cookie("a=1", COOKIE), None);
    }
}
