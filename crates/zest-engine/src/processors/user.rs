//! USER CREATE, CREATE_INITIAL_ADMIN, UPDATE and DELETE: processed on partition 1, which checks
//! them, and distributed to every other partition (`behaviour::distribution`), which applies
//! what partition 1 decided. The password arrives hashed (the gateway hashes it); an UPDATE
//! without one keeps the stored hash.

use zest_protocol::{Intent, Record, RecordValue, RejectionType, UserRecord, ADMIN_ROLE};

use crate::behaviour::distribution;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::keys::identity::{user_key, ADMINS};
use crate::state::Ks;

/// The longest username, as Camunda's identifier check.
const MAX_ID_LEN: usize = 256;

/// Applies a distributed command here (the origin decided it): true when `cmd` came from
/// partition 1, whether processed now or before.
fn distributed(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, intent: Intent, u: &UserRecord) -> bool {
    if !distribution::is_distributed(ctx, cmd) {
        return false;
    }
    if !distribution::already_processed(ctx, cmd) {
        ctx.event(u.user_key, intent, RecordValue::User(u.clone()));
    }
    distribution::acknowledge(ctx, cmd);
    true
}

fn stored(ctx: &Ctx<'_, '_, '_>, username: &str) -> Option<UserRecord> {
    ctx.txn.get(Ks::Identities, &user_key(username))
}

/// Camunda's identifier check: 1 to 256 of letters, digits and `_~@.+-`.
fn invalid_username(username: &str) -> Option<String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "_~@.+-".contains(c);
    if username.is_empty() {
        Some("Expected a username, but none was given".into())
    } else if username.len() > MAX_ID_LEN {
        Some(format!(
            "Expected a username of at most {MAX_ID_LEN} characters, but it has {}",
            username.len()
        ))
    } else if !username.chars().all(ok) {
        Some(format!(
            "Expected a username of letters, digits and the characters _~@.+-, but got '{username}'"
        ))
    } else {
        None
    }
}

/// Refuses `u` when it cannot be created.
fn check_creation(ctx: &Ctx<'_, '_, '_>, u: &UserRecord) -> ProcResult {
    if let Some(reason) = invalid_username(&u.username) {
        Err(Rejection::invalid_argument(reason))
    } else if u.password.is_empty() {
        Err(Rejection::invalid_argument(
            "Expected a password, but none was given",
        ))
    } else if stored(ctx, &u.username).is_some() {
        Err(Rejection::new(
            RejectionType::AlreadyExists,
            format!(
                "Expected to create user with username '{}', but a user with this username already exists",
                u.username
            ),
        ))
    } else {
        Ok(())
    }
}

/// USER CREATE (and CREATE_INITIAL_ADMIN, `admin` true): CREATED (INITIAL_ADMIN_CREATED) with
/// a new user key, distributed.
pub fn create(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, u: &UserRecord, admin: bool) -> ProcResult {
    let event = if admin {
        Intent::InitialAdminCreated
    } else {
        Intent::Created
    };
    if distributed(ctx, cmd, event, u) {
        return Ok(());
    }
    if admin && !ctx.txn.scan_prefix(Ks::Identities, ADMINS, 1).is_empty() {
        return Err(Rejection::new(
            RejectionType::Forbidden,
            "Expected to create an initial admin user, but an admin user already exists",
        ));
    }
    check_creation(ctx, u)?;
    let key = ctx.next_key();
    let user = UserRecord {
        user_key: key,
        ..u.clone()
    };
    ctx.event_and_respond(cmd, key, event, RecordValue::User(user.clone()));
    distribution::distribute(ctx, key, cmd.intent, RecordValue::User(user));
    Ok(())
}

/// USER UPDATE: UPDATED with the given name, email and (when given) password hash.
pub fn update(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, u: &UserRecord) -> ProcResult {
    if distributed(ctx, cmd, Intent::Updated, u) {
        return Ok(());
    }
    let Some(old) = stored(ctx, &u.username) else {
        return not_found("update", &u.username);
    };
    let user = UserRecord {
        user_key: old.user_key,
        password: if u.password.is_empty() {
            old.password
        } else {
            u.password.clone()
        },
        ..u.clone()
    };
    ctx.event_and_respond(
        cmd,
        user.user_key,
        Intent::Updated,
        RecordValue::User(user.clone()),
    );
    let key = ctx.next_key();
    distribution::distribute(ctx, key, Intent::Update, RecordValue::User(user));
    Ok(())
}

/// USER DELETE: DELETED (the user and its membership of `admin` go).
pub fn delete(ctx: &mut Ctx<'_, '_, '_>, cmd: &Record, u: &UserRecord) -> ProcResult {
    if distributed(ctx, cmd, Intent::Deleted, u) {
        return Ok(());
    }
    let Some(old) = stored(ctx, &u.username) else {
        return not_found("delete", &u.username);
    };
    if last_admin(ctx, &u.username) {
        // else anyone could make themselves admin through the open POST /v2/setup/user
        return Err(Rejection::new(
            RejectionType::Forbidden,
            format!(
                "Expected to delete user with username '{}', but it is the last member of the role '{ADMIN_ROLE}'; make another user admin first",
                u.username
            ),
        ));
    }
    let user = UserRecord {
        password: String::new(),
        ..old
    };
    ctx.event_and_respond(
        cmd,
        user.user_key,
        Intent::Deleted,
        RecordValue::User(user.clone()),
    );
    let key = ctx.next_key();
    distribution::distribute(ctx, key, Intent::Delete, RecordValue::User(user));
    Ok(())
}

/// True when `username` is the only member of the `admin` role.
fn last_admin(ctx: &Ctx<'_, '_, '_>, username: &str) -> bool {
    let admins = ctx.txn.scan_prefix(Ks::Identities, ADMINS, 2);
    admins.len() == 1 && admins[0].0 == crate::keys::identity::admin_key(username)
}

fn not_found(what: &str, username: &str) -> ProcResult {
    Err(Rejection::not_found(format!(
        "Expected to {what} user with username '{username}', but a user with this username does not exist"
    )))
}
