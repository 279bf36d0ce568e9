//! What an instance's partition remembers of the messages it correlated for another
//! partition's message subscription, so that a message correlates exactly once.
//!
//! The message partition sends PROCESS_MESSAGE_SUBSCRIPTION CORRELATE again until the
//! instance's partition answers MESSAGE_SUBSCRIPTION CORRELATE. When that answer is lost (a
//! crash or a failover between the two), the correlation arrives again after the subscription
//! is gone. Zeebe rejects it then, and the message partition takes the message as not
//! correlated and may correlate it to another instance of the process. Here the instance's
//! partition finds the correlation it made and answers again instead.
//!
//! Entries are forgotten `CORRELATION_MEMORY_MS` after the correlation (by record time, a few
//! with each new correlation), so their number is bounded by the correlations of that window.
//! A correlation sent again later than that is rejected as in Zeebe.

use serde::{Deserialize, Serialize};

use crate::keys::message::{correlation_memory_at_key, correlation_memory_key};
use crate::state::{read_i64, Ks, Txn};

/// How long a correlation is remembered: far longer than the message partition waits before
/// it sends a correlation again (seconds), so that a failover of either partition fits.
pub(crate) const CORRELATION_MEMORY_MS: i64 = 10 * 60 * 1000;

/// At most this many old correlations are forgotten with each new one.
const FORGET_PER_CORRELATION: usize = 4;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CorrelatedMessage {
    pub message_key: i64,
    pub at: i64,
}

/// Applier side: the message `message_key` correlated at `at` to the subscription of the
/// element instance for `message_name`.
pub(crate) fn remember(
    txn: &mut Txn<'_>,
    at: i64,
    element_instance_key: i64,
    message_name: &str,
    message_key: i64,
) {
    forget_before(txn, at - CORRELATION_MEMORY_MS);
    txn.put(
        Ks::CorrelatedMessages,
        correlation_memory_key(element_instance_key, message_name),
        &CorrelatedMessage { message_key, at },
    );
    txn.put_raw(
        Ks::CorrelatedMessages,
        correlation_memory_at_key(at, element_instance_key, message_name),
        Vec::new(),
    );
}

/// Forgets the oldest correlations made before `cutoff`, a few at a time.
fn forget_before(txn: &mut Txn<'_>, cutoff: i64) {
    for (k, _) in txn.scan_prefix(Ks::CorrelatedMessages, b"t", FORGET_PER_CORRELATION) {
        let at = read_i64(&k, 1);
        if at >= cutoff {
            break;
        }
        // `t` (at, element instance key, name) -> `c` (element instance key, name)
        let by_subscription = [b"c".as_slice(), &k[9..]].concat();
        let current = txn.get::<CorrelatedMessage>(Ks::CorrelatedMessages, &by_subscription);
        if current.is_some_and(|c| c.at == at) {
            txn.delete(Ks::CorrelatedMessages, by_subscription);
        }
        txn.delete(Ks::CorrelatedMessages, k);
    }
}

/// Processor side: whether the message `message_key` already correlated to the subscription
/// of the element instance for `message_name`.
pub(crate) fn correlated_before(
    txn: &Txn<'_>,
    element_instance_key: i64,
    message_name: &str,
    message_key: i64,
) -> bool {
    txn.get::<CorrelatedMessage>(
        Ks::CorrelatedMessages,
        &correlation_memory_key(element_instance_key, message_name),
    )
    .is_some_and(|c| c.message_key == message_key)
}
