//! Identities as Camunda 8.8 keeps them in the engine (`docs/design/security.md`): USER records,
//! written on partition 1 and distributed to every partition, so every node holding a
//! partition can authenticate from its own state.

use serde::{Deserialize, Serialize};

/// USER CREATE, CREATED, UPDATE, UPDATED, DELETE, DELETED, CREATE_INITIAL_ADMIN,
/// INITIAL_ADMIN_CREATED (Zeebe's `UserRecord`).
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UserRecord {
    pub user_key: i64,
    pub username: String,
    pub name: String,
    pub email: String,
    /// The password's argon2id hash in PHC form, made by the gateway (the engine stays
    /// deterministic and never sees a password). Empty on UPDATE: the password is kept.
    pub password: String,
}

impl std::fmt::Debug for UserRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserRecord")
            .field("user_key", &self.user_key)
            .field("username", &self.username)
            .field("name", &self.name)
            .field("email", &self.email)
            .finish_non_exhaustive()
    }
}

impl UserRecord {
    /// The record's JSON, without the password's hash (it never leaves the engine's state).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "userKey": self.user_key,
            "username": self.username,
            "name": self.name,
            "email": self.email,
        })
    }
}

/// The role every user with full access holds (Camunda 8.8's default role `admin`).
pub const ADMIN_ROLE: &str = "admin";
