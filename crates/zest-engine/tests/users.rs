//! USER records: created, changed and deleted on partition 1, which checks them, and
//! distributed to every other partition with partition 1's user key, so any node holding any
//! partition can authenticate a user from its own state; the first admin once; the stored
//! password's hash kept when an update brings none.

mod support;

use support::*;
use zest_engine::queries;
use zest_protocol::{Intent, Record, RecordValue, RejectionType, UserRecord};

fn user(username: &str, password: &str) -> RecordValue {
    RecordValue::User(UserRecord {
        username: username.into(),
        name: format!("{username}'s name"),
        email: format!("{username}@example.com"),
        password: password.into(),
        ..Default::default()
    })
}

/// Runs `intent` on partition 1 of three and delivers what it distributes: the partitions.
fn everywhere(parts: &mut [Harness], intent: Intent, value: RecordValue) -> Batch {
    let b = parts[0].client(-1, intent, value);
    let mut sends: Vec<(u32, Record)> = sent(&b);
    while let Some((target, mut cmd)) = sends.pop() {
        cmd.request_id = -1;
        cmd.request_stream_id = -1;
        let answer = parts[(target - 1) as usize].submit(cmd);
        sends.extend(sent(&answer));
    }
    b
}

fn sent(b: &Batch) -> Vec<(u32, Record)> {
    b.side_effects
        .iter()
        .filter_map(|e| match e {
            zest_engine::SideEffect::SendCommand(t, r) => Some((*t, (**r).clone())),
            _ => None,
        })
        .collect()
}

fn parts() -> Vec<Harness> {
    (1..=3).map(|p| Harness::on_partition(p, 3)).collect()
}

#[test]
fn a_user_reaches_every_partition_and_changes_there_too() {
    let mut ps = parts();
    let b = everywhere(&mut ps, Intent::Create, user("lisa", "$argon2id$hash1"));
    let created = b.accepted().clone();
    assert_eq!(created.intent, Intent::Created);
    for h in &ps {
        let stored = queries::user(&h.state, "lisa").expect("lisa everywhere");
        assert_eq!(stored.user_key, created.key, "partition 1's key");
        assert_eq!(stored.password, "$argon2id$hash1");
        assert!(!queries::is_admin(&h.state, "lisa"));
    }
    // an update without a password keeps the hash, one with a password replaces it
    let mut change = user("lisa", "");
    if let RecordValue::User(u) = &mut change {
        u.name = "Lisa".into();
    }
    everywhere(&mut ps, Intent::Update, change).accepted();
    for h in &ps {
        let stored = queries::user(&h.state, "lisa").unwrap();
        assert_eq!(
            (stored.name.as_str(), stored.password.as_str()),
            ("Lisa", "$argon2id$hash1")
        );
    }
    everywhere(&mut ps, Intent::Update, user("lisa", "$argon2id$hash2")).accepted();
    for h in &ps {
        assert_eq!(
            queries::user(&h.state, "lisa").unwrap().password,
            "$argon2id$hash2"
        );
    }
    let b = everywhere(&mut ps, Intent::Delete, user("lisa", ""));
    assert_eq!(b.accepted().intent, Intent::Deleted);
    for h in &ps {
        assert!(queries::user(&h.state, "lisa").is_none());
        h.settle();
    }
}

#[test]
fn bad_or_duplicate_users_are_refused_with_the_reason() {
    let mut ps = parts();
    everywhere(&mut ps, Intent::Create, user("lisa", "h")).accepted();
    let again = everywhere(&mut ps, Intent::Create, user("lisa", "h"));
    assert!(again
        .rejection(RejectionType::AlreadyExists)
        .contains("a user with this username already exists"));
    for (name, password, why) in [
        ("", "h", "Expected a username"),
        ("no spaces", "h", "letters, digits"),
        (&"x".repeat(257)[..], "h", "at most 256"),
        ("ok", "", "Expected a password"),
    ] {
        let b = everywhere(&mut ps, Intent::Create, user(name, password));
        let reason = b.rejection(RejectionType::InvalidArgument);
        assert!(reason.contains(why), "{reason}");
    }
    for intent in [Intent::Update, Intent::Delete] {
        let b = everywhere(&mut ps, intent, user("nobody", ""));
        assert!(b
            .rejection(RejectionType::NotFound)
            .contains("a user with this username does not exist"));
    }
    assert_eq!(
        ps[1].count(zest_engine::state::Ks::Identities),
        1,
        "only lisa"
    );
}

#[test]
fn the_first_admin_is_created_once() {
    let mut ps = parts();
    assert!(!queries::has_admin(&ps[0].state));
    let b = everywhere(&mut ps, Intent::CreateInitialAdmin, user("demo", "h"));
    assert_eq!(b.accepted().intent, Intent::InitialAdminCreated);
    for h in &ps {
        assert!(queries::is_admin(&h.state, "demo"));
        assert!(queries::has_admin(&h.state));
    }
    let again = everywhere(&mut ps, Intent::CreateInitialAdmin, user("eve", "h"));
    assert!(again
        .rejection(RejectionType::Forbidden)
        .contains("an admin user already exists"));
    assert!(queries::user(&ps[0].state, "eve").is_none());
    // the last admin stays: deleting it would open the setup to anyone again
    let refused = everywhere(&mut ps, Intent::Delete, user("demo", ""));
    assert!(refused
        .rejection(RejectionType::Forbidden)
        .contains("the last member of the role 'admin'"));
    assert!(ps.iter().all(|h| queries::is_admin(&h.state, "demo")));
}
