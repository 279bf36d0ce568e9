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

    /// Holders (commands in a partition's queue, calls in progress) get in up to the share's
    /// bytes; a holder that leaves gives its bytes back; one larger than the whole share gets
    /// in once the share is empty.
    #[test]
    fn the_share_is_bounded_by_bytes() {
        let q = ByteShare::new(10_000);
        let a = q.reserve(6_000).unwrap();
        let b = q.reserve(4_000).unwrap();
        assert_eq!(q.held(), 10_000);
        assert!(q.reserve(1).is_none(), "full");
        drop(a);
        assert_eq!(q.held(), 4_000);
        assert!(
            q.reserve(1_000_000).is_none(),
            "a huge holder waits for an empty share"
        );
        drop(b);
        let huge = q.reserve(1_000_000).unwrap();
        assert_eq!(q.held(), 10_000);
        drop(huge);
        assert_eq!(q.held(), 0);
    }
}
