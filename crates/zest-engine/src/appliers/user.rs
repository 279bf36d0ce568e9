//! USER events: a user is kept by username in `Ks::Identities` (with its password's hash), and
//! the members of the `admin` role beside it.

use zest_protocol::{Intent, Record, UserRecord};

use crate::keys::identity::{admin_key, user_key};
use crate::state::{Ks, Txn};

pub fn apply(txn: &mut Txn<'_>, r: &Record, u: &UserRecord) {
    match r.intent {
        Intent::Created | Intent::Updated => txn.put(Ks::Identities, user_key(&u.username), u),
        Intent::InitialAdminCreated => {
            txn.put(Ks::Identities, user_key(&u.username), u);
            txn.put(Ks::Identities, admin_key(&u.username), &());
        }
        Intent::Deleted => {
            txn.delete(Ks::Identities, user_key(&u.username));
            txn.delete(Ks::Identities, admin_key(&u.username));
        }
        _ => {}
    }
}
