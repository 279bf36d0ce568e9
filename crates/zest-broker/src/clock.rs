//! The clock the engine runs on: the system's, or a time pinned by Camunda's clock API
//! (`PUT /v2/clock`, used by Camunda Process Test to move time on for timers). The
//! processing loop passes it into the engine as `now` and the scheduler finds due timers,
//! job deadlines and message expiries by it.
//!
//! Pinned per node (this process), not replicated: Zeebe writes a CLOCK record that every
//! replica applies; here a new leader elsewhere, or a partition led by another node, runs on
//! its own clock. Camunda Process Test runs one node, where this is the same.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

const NOT_PINNED: i64 = i64::MIN;

static PINNED: AtomicI64 = AtomicI64::new(NOT_PINNED);

/// Epoch milliseconds: the pinned time when the clock is pinned, else the system's.
pub fn now_millis() -> i64 {
    match PINNED.load(Ordering::Relaxed) {
        NOT_PINNED => wall_millis(),
        pinned => pinned,
    }
}

/// The system's epoch milliseconds, whatever the engine's clock says.
pub(crate) fn wall_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Pins the clock at `epoch_millis`: it stays there until pinned again or reset.
pub fn pin(epoch_millis: i64) {
    PINNED.store(epoch_millis.max(0), Ordering::Relaxed);
}

/// Back to the system's clock.
pub fn reset() {
    PINNED.store(NOT_PINNED, Ordering::Relaxed);
}

/// The pinned time, if the clock is pinned.
pub fn pinned() -> Option<i64> {
    match PINNED.load(Ordering::Relaxed) {
        NOT_PINNED => None,
        pinned => Some(pinned),
    }
}
