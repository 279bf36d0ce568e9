//! USER records to rows (`identity_user`): the users as partition 1 decided them. Every
//! partition applies the distributed user commands, but only partition 1's records are taken
//! in, in its log order, so a row is never set back by another partition's older record; the
//! rows carry partition 1's user keys, so they copy, back up and restore with its rows. The
//! password's hash never reaches history.

use crate::db::{params, Conn};
use zest_protocol::{Intent, UserRecord};

#[derive(Default, Debug)]
pub struct Users {
    /// (intent, user without its hash), in log order.
    pub changes: Vec<(Intent, UserRecord)>,
}

impl Users {
    pub fn add(&mut self, partition: u32, intent: Intent, u: &UserRecord) {
        let kept = matches!(
            intent,
            Intent::Created | Intent::InitialAdminCreated | Intent::Updated | Intent::Deleted
        );
        if partition == 1 && kept {
            let user = UserRecord {
                password: String::new(),
                ..u.clone()
            };
            self.changes.push((intent, user));
        }
    }

    pub fn write(&self, tx: &Conn) -> crate::db::Result<()> {
        for (intent, u) in &self.changes {
            if *intent == Intent::Deleted {
                tx.execute(
                    "DELETE FROM identity_user WHERE key = ?1",
                    params![u.user_key],
                )?;
            } else {
                tx.execute(
                    "INSERT INTO identity_user (key, username, name, email) VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT(key) DO UPDATE SET name = excluded.name, email = excluded.email",
                    params![u.user_key, u.username, u.name, u.email],
                )?;
            }
        }
        Ok(())
    }
}
