//! Users: created, changed and deleted on partition 1, which distributes them to the others.
//! The password arrives hashed (`auth::password`); the engine never sees it.

use zest_protocol::{Intent, RecordValue, UserRecord};

use super::{CommandError, Commands};

fn user_of(event: zest_protocol::Record) -> Result<UserRecord, CommandError> {
    match event.value {
        RecordValue::User(u) => Ok(u),
        other => Err(CommandError::Internal(format!(
            "expected a USER event, got {}",
            other.value_type().name()
        ))),
    }
}

impl Commands {
    /// Creates a user (`initial_admin`: the first member of the `admin` role, refused once one
    /// exists); answers the user as stored.
    pub async fn create_user(
        &self,
        user: UserRecord,
        initial_admin: bool,
    ) -> Result<UserRecord, CommandError> {
        let intent = if initial_admin {
            Intent::CreateInitialAdmin
        } else {
            Intent::Create
        };
        user_of(self.send(1, -1, intent, RecordValue::User(user)).await?)
    }

    /// Changes a user's name, email and (a hash given) password.
    pub async fn update_user(&self, user: UserRecord) -> Result<UserRecord, CommandError> {
        user_of(
            self.send(1, -1, Intent::Update, RecordValue::User(user))
                .await?,
        )
    }

    /// Deletes a user.
    pub async fn delete_user(&self, username: String) -> Result<(), CommandError> {
        let user = UserRecord {
            username,
            ..UserRecord::default()
        };
        self.send(1, -1, Intent::Delete, RecordValue::User(user))
            .await
            .map(|_| ())
    }
}
