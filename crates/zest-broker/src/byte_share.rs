//! A share of the node's memory budget, counted in bytes: what holds a part of the budget
//! reserves its bytes before it takes them and gives them back by dropping the permit. Used
//! for each partition's queue of client commands (`command_queue_bytes`) and for the client
//! commands the node's gateway holds in progress (`call_bytes`).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub(crate) struct ByteShare {
    free: Arc<Semaphore>,
    total: usize,
}

impl ByteShare {
    pub(crate) fn new(total: usize) -> ByteShare {
        let total = total.clamp(4096, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        ByteShare {
            free: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// Reserves `bytes`, given back when the permit drops; None when they are not free. More
    /// than the whole share counts as the whole share: such a holder waits for an empty share
    /// instead of never getting in.
    pub(crate) fn reserve(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        let bytes = bytes.min(self.total) as u32;
        self.free.clone().try_acquire_many_owned(bytes).ok()
    }

    /// Bytes reserved now.
    pub(crate) fn held(&self) -> usize {
        self.total - self.free.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_are_refused_past_the_share_and_given_back_on_drop() {
        let share = ByteShare::new(10_000);
        let a = share.reserve(6_000).expect("room");
        assert!(share.reserve(6_000).is_none(), "past the share");
        assert_eq!(share.held(), 6_000);
        drop(a);
        assert_eq!(share.held(), 0);
        // larger than the whole share: taken when the share is empty, as the whole share
        let big = share.reserve(50_000).expect("an empty share takes it");
        assert_eq!(share.held(), 10_000);
        assert!(share.reserve(1).is_none());
        drop(big);
        assert!(share.reserve(1).is_some());
    }
}
