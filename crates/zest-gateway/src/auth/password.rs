//! Passwords: argon2id hashes in PHC form (OWASP's parameters: 19 MiB, 2 passes, 1 lane),
//! made and checked on blocking threads, a bounded number at a time (each takes 19 MiB and
//! tens of milliseconds).

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

/// Hashes made or checked at once on a node.
pub const HASHES_AT_ONCE: usize = 2;
/// Longest password taken (bcrypt's 72 bytes is too short for passphrases; this bounds work).
pub const MAX_PASSWORD_BYTES: usize = 1024;

fn argon2() -> Argon2<'static> {
    // OWASP's first recommendation for argon2id: m=19456 KiB, t=2, p=1
    let params = Params::new(19 * 1024, 2, 1, None).expect("argon2 parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The hash of `password` with a new random salt.
pub async fn hash(permits: &Semaphore, password: String) -> Result<String, String> {
    let _permit = permits.acquire().await.map_err(|e| e.to_string())?;
    tokio::task::spawn_blocking(move || {
        let mut salt = [0u8; 16];
        getrandom::fill(&mut salt).map_err(|e| format!("no random salt: {e}"))?;
        let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
        argon2()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())?
}

/// True when `password` matches `phc` (a hash this module made).
pub async fn verify(permits: &Semaphore, password: String, phc: String) -> bool {
    let Ok(_permit) = permits.acquire().await else {
        return false;
    };
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&phc)
            .map(|parsed| {
                argon2()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let permits = Semaphore::new(1);
        let h = hash(&permits, "s3cret pass".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        assert!(verify(&permits, "s3cret pass".into(), h.clone()).await);
        assert!(!verify(&permits, "s3cret pas".into(), h.clone()).await);
        assert!(!verify(&permits, "s3cret pass".into(), "not a hash".into()).await);
        let again = hash(&permits, "s3cret pass".into()).await.unwrap();
        assert_ne!(h, again, "each hash has its own salt");
    }
}
