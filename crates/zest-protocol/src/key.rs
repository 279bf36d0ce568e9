/// Number of low bits of a key that hold the per-partition counter (as in Zeebe).
pub const KEY_BITS: u32 = 51;
const COUNTER_MASK: i64 = (1i64 << KEY_BITS) - 1;

pub type PartitionId = u32;

/// Builds a key from its partition and per-partition counter: `partition << 51 | counter`.
pub fn encode_key(partition: PartitionId, counter: i64) -> i64 {
    ((partition as i64) << KEY_BITS) | (counter & COUNTER_MASK)
}

/// The partition a key belongs to; any key routes itself.
pub fn partition_of_key(key: i64) -> PartitionId {
    (key >> KEY_BITS) as PartitionId
}

pub fn counter_of_key(key: i64) -> i64 {
    key & COUNTER_MASK
}

/// The partition of a message correlation key, as Zeebe computes it (`SubscriptionUtil`): a
/// Java-style hash over the key's UTF-8 bytes taken as signed bytes, `h = 31 * h + b` with
/// wrapping, then `abs(h % n) + 1`. Messages and their subscriptions meet on that partition.
pub fn partition_for_correlation_key(correlation_key: &str, partition_count: u32) -> PartitionId {
    let mut h: i32 = 0;
    for b in correlation_key.as_bytes() {
        h = h.wrapping_mul(31).wrapping_add(*b as i8 as i32);
    }
    let n = partition_count.max(1) as i32;
    (h % n).unsigned_abs() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_their_partition() {
        let k = encode_key(3, 42);
        assert_eq!(partition_of_key(k), 3);
        assert_eq!(counter_of_key(k), 42);
        assert_eq!(encode_key(1, 1), 2251799813685249); // Zeebe's first key on partition 1
    }

    #[test]
    fn correlation_key_routing_is_stable_and_in_range() {
        for n in 1..8 {
            let p = partition_for_correlation_key("order-123", n);
            assert!(p >= 1 && p <= n);
            assert_eq!(p, partition_for_correlation_key("order-123", n));
        }
        // values computed with Zeebe's SubscriptionUtil
        assert_eq!(partition_for_correlation_key("", 3), 1);
        assert_eq!(partition_for_correlation_key("order-123", 3), 1);
        assert_eq!(partition_for_correlation_key("a", 3), 2);
        assert_eq!(partition_for_correlation_key("über", 3), 3);
        assert_eq!(partition_for_correlation_key("order-123", 2), 2);
    }
}
