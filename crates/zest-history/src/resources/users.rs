//! Users (`POST /v2/users/search`): Camunda 8.8's `UserFilter` (username, name, email) and
//! `UserResult`, from `identity_user` (`project/users.rs`).

use crate::db::Row;
use serde_json::{json, Value};

use super::{string, Resource};
use crate::filter::{field, Field, Kind};

const FIELDS: &[Field] = &[
    field("username", "t.username", Kind::Str),
    field("name", "t.name", Kind::Str),
    field("email", "t.email", Kind::Str),
];

fn row(row: &Row) -> crate::db::Result<Value> {
    Ok(json!({
        "username": string(row, 0)?,
        "name": string(row, 1)?,
        "email": string(row, 2)?,
    }))
}

pub const USERS: Resource = Resource {
    name: "user",
    from: "identity_user t",
    select: "t.username, t.name, t.email",
    fields: FIELDS,
    // the columns are never NULL, so they sort as they are
    sorts: FIELDS,
    special: None,
    row,
};

#[cfg(test)]
mod tests {
    use serde_json::json;
    use zest_protocol::{Intent, Record, RecordValue, UserRecord};

    use crate::Conditions;

    fn record(partition: u32, position: u64, intent: Intent, name: &str, email: &str) -> Record {
        let value = RecordValue::User(UserRecord {
            user_key: 2251799813685249,
            username: "lisa".into(),
            name: name.into(),
            email: email.into(),
            password: "$argon2id$secret-hash".into(),
        });
        Record {
            partition_id: partition,
            ..crate::tests::event(position, 2251799813685249, intent, value)
        }
    }

    #[test]
    fn users_are_partition_1s_and_searched_by_their_fields() {
        let (dir, h) = crate::tests::open("users");
        let search = |q| h.search(&super::USERS, &q, Conditions::default()).unwrap();
        h.export(1, &[record(1, 1, Intent::Created, "Lisa", "lisa@x.io")], 1)
            .unwrap();
        h.export(1, &[record(1, 2, Intent::Updated, "Lisa M", "lm@x.io")], 2)
            .unwrap();
        // partition 2 applies the distributed creation later: it sets nothing back
        h.export(2, &[record(2, 1, Intent::Created, "Lisa", "lisa@x.io")], 1)
            .unwrap();
        let all = search(json!({}));
        assert_eq!(all["page"]["totalItems"], 1);
        assert_eq!(
            all["items"][0],
            json!({"username": "lisa", "name": "Lisa M", "email": "lm@x.io"})
        );
        let found = search(json!({"filter": {"email": {"$like": "lm@*"}}}));
        assert_eq!(found["page"]["totalItems"], 1);
        let none = search(json!({"filter": {"name": "Lisa"}}));
        assert_eq!(none["page"]["totalItems"], 0);
        h.export(1, &[record(1, 3, Intent::Deleted, "Lisa M", "lm@x.io")], 3)
            .unwrap();
        assert_eq!(search(json!({}))["page"]["totalItems"], 0);
        let _ = std::fs::remove_dir_all(dir);
    }
}
