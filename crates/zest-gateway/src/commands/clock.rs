//! The engine's clock: pinned at a time (Camunda's `PUT /v2/clock`) or back to the system's
//! (`POST /v2/clock/reset`). Pinned on this node only (`zest_broker::clock` says why).

use super::{CommandError, Commands};

impl Commands {
    /// Pins the clock at `timestamp` (epoch milliseconds): timers, job deadlines and message
    /// expiries then fall due by it.
    pub fn pin_clock(&self, timestamp: i64) -> Result<(), CommandError> {
        if timestamp < 0 {
            return Err(CommandError::Invalid(format!(
                "The value for timestamp is '{timestamp}' but must be not negative."
            )));
        }
        zest_broker::clock::pin(timestamp);
        Ok(())
    }

    /// Back to the system's clock.
    pub fn reset_clock(&self) {
        zest_broker::clock::reset();
    }
}
