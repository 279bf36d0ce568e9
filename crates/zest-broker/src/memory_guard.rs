//! The node's resident memory held to its budget (`--memory-mb`).
//!
//! The budget's counted parts (the store's cache and write buffers, the queues, the job
//! streams, the calls in progress, ...) are each bounded, and its reserve (a quarter, at most
//! 48 MiB) pays for what is not counted: the program's code, the runtime, connections, HTTP/2's
//! buffers, the futures of the calls, and the allocator's spare pages. Under overload the
//! uncounted parts grow with the work a node holds: a node that takes every client's commands
//! for a 3-node cluster past what the cluster completes went 30-40 MiB past its 128 MiB budget,
//! most of it in its gateway (2026-11-27 heap profile).
//!
//! The guard reads the process's resident memory (RSS) every [`TICK`]. Past `refuse_at` (the
//! budget less a quarter of its reserve) the node refuses to create process instances, with
//! RESOURCE_EXHAUSTED, until its memory is back under `resume_at` (the budget less half its
//! reserve). Every other command goes on: they move the started instances on, and these end
//! and free what they hold.
//!
//! Having jemalloc return its free pages at the first line (`arena.<all>.purge`, at most four
//! times a second) was tried and left out: with one arena the purge holds the arena's lock
//! while it returns the pages, and the overloaded cluster completed 7.8-8.9 instances a second
//! with it against 8.4-9.7 without, at the same peak (docs/benchmarks.md, 2026-11-27 late).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use zest_protocol::ValueType;

use crate::{BrokerConfig, BrokerError};

/// How often the guard reads the resident memory: at the rate a node under overload grows
/// (some 10 MiB a second), a tick lets it grow some hundreds of KiB.
const TICK: Duration = Duration::from_millis(20);

/// What the budget's reserve counts on the program taking when the node is ready: a release
/// build's code, runtime and opened store (16 MiB with 1 or 2 empty partitions).
const PROGRAM_BYTES: u64 = 20 << 20;

pub(crate) struct MemoryGuard {
    /// Resident bytes under which the node creates instances again.
    resume_at: u64,
    /// Resident bytes past which it refuses to create instances.
    refuse_at: u64,
    over: AtomicBool,
    /// What both lines are raised by, set when the node is ready (see [`MemoryGuard::start`]);
    /// until then the guard refuses nothing.
    shift: OnceLock<u64>,
    /// Resident bytes at the last tick.
    resident: AtomicU64,
    budget: u64,
    /// How often the memory went past the line (the first time and every hundredth are
    /// logged as warnings).
    times_over: AtomicU64,
}

impl MemoryGuard {
    /// The lines from the budget (`BrokerConfig::guarded_bytes`): its reserve pays for what is
    /// not counted, so the guard refuses when a quarter of the reserve is left and resumes
    /// when half of it is. The guard starts when the node is ready ([`MemoryGuard::start`]).
    pub(crate) fn new(memory_bytes: u64) -> MemoryGuard {
        let reserve = BrokerConfig::memory_reserve(memory_bytes);
        MemoryGuard {
            resume_at: memory_bytes - reserve / 2,
            refuse_at: memory_bytes - reserve / 4,
            shift: OnceLock::new(),
            over: AtomicBool::new(false),
            resident: AtomicU64::new(0),
            budget: memory_bytes,
            times_over: AtomicU64::new(0),
        }
    }

    /// Starts the guard with the node's resident memory when it is ready (`at_ready`). The
    /// reserve counts on the program taking [`PROGRAM_BYTES`] then; a program that takes more
    /// (a debug build took 39 MiB, a release build 16) has both lines raised by the difference,
    /// so that the guard holds the node's work to the budget, not the size of its code.
    pub(crate) fn start(&self, at_ready: u64) {
        let shift = *self
            .shift
            .get_or_init(|| at_ready.saturating_sub(PROGRAM_BYTES));
        tracing::info!(
            at_ready_mib = at_ready >> 20,
            "the memory guard refuses new process instances past {} MiB resident",
            (self.refuse_at + shift) >> 20
        );
    }

    /// Whether the memory is at the budget: creations are refused.
    pub(crate) fn over(&self) -> bool {
        self.over.load(Ordering::Relaxed)
    }

    /// Lets a command in, or refuses it if it creates a process instance while the memory is
    /// at the budget. Only creations: they bring new work, while the other commands move the
    /// started instances on (a message they wait for, a job's completion), and these end and
    /// free what they hold.
    pub(crate) fn admit(&self, value_type: ValueType) -> Result<(), BrokerError> {
        if !self.over() || value_type != ValueType::ProcessInstanceCreation {
            return Ok(());
        }
        Err(BrokerError::MemoryFull {
            resident_mib: self.resident() >> 20,
            budget_mib: self.budget_mib(),
        })
    }

    /// Resident bytes at the last reading.
    fn resident(&self) -> u64 {
        self.resident.load(Ordering::Relaxed)
    }

    /// Takes a reading of the resident memory.
    fn observe(&self, resident: u64) {
        self.resident.store(resident, Ordering::Relaxed);
        let Some(&shift) = self.shift.get() else {
            return;
        };
        let was_over = self.over();
        if !was_over && resident >= self.refuse_at + shift {
            self.over.store(true, Ordering::Relaxed);
            // under overload the node goes past the line and back several times a second
            let times = self.times_over.fetch_add(1, Ordering::Relaxed) + 1;
            if times != 1 && !times.is_multiple_of(100) {
                return;
            }
            tracing::warn!(
                times,
                resident_mib = resident >> 20,
                budget_mib = self.budget_mib(),
                "memory is at the budget: refusing new process instances until it is back under {} MiB",
                (self.resume_at + shift) >> 20
            );
        } else if was_over && resident < self.resume_at + shift {
            self.over.store(false, Ordering::Relaxed);
            tracing::debug!(
                resident_mib = resident >> 20,
                "memory is back under the budget: taking new process instances again"
            );
        }
    }

    fn budget_mib(&self) -> u64 {
        self.budget >> 20
    }

    /// Reads the resident memory every [`TICK`] until the broker goes away.
    pub(crate) fn watch(guard: Arc<MemoryGuard>) {
        if resident_bytes().is_none() {
            tracing::info!("the resident memory cannot be read here: the memory guard is off");
            return;
        }
        let guard = Arc::downgrade(&guard);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(guard) = guard.upgrade() else { return };
                if let Some(resident) = resident_bytes() {
                    guard.observe(resident);
                }
            }
        });
    }
}

/// The process's resident memory (RSS, `VmRSS` of `/proc/self/status`); None where there is
/// none.
pub(crate) fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line["VmRSS:".len()..]
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kib << 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Refuses past a quarter of the reserve left, creates instances again under half of it
    /// left; only creations are refused.
    #[test]
    fn refuses_at_the_budget_and_takes_work_again_below_it() {
        let mib = 1u64 << 20;
        let guard = MemoryGuard::new(128 * mib);
        guard.observe(200 * mib);
        assert!(!guard.over(), "refuses nothing before the node is ready");
        guard.start(19 * mib);
        // reserve 32 MiB: refuse at 120 MiB, resume under 112 MiB
        guard.observe(100 * mib);
        assert!(!guard.over());
        guard.observe(119 * mib);
        assert!(!guard.over());
        guard.observe(121 * mib);
        assert!(guard.over());
        guard.observe(113 * mib);
        assert!(guard.over(), "still over until under the resume line");
        assert!(
            guard.admit(ValueType::Message).is_ok(),
            "what moves started instances on goes on"
        );
        let refused = guard.admit(ValueType::ProcessInstanceCreation).unwrap_err();
        assert!(
            refused.to_string().contains("113 MiB resident")
                && refused.to_string().contains("--memory-mb 128"),
            "{refused}"
        );
        guard.observe(111 * mib);
        assert!(!guard.over());
        assert!(guard.admit(ValueType::ProcessInstanceCreation).is_ok());
    }

    /// A block cache or write buffers set beyond their parts (`--cache-mb`) raise the line by
    /// as much: the node is not refused work for memory it was told to use.
    #[test]
    fn parts_set_beyond_the_budget_raise_its_line() {
        let mib = 1u64 << 20;
        let mut config = BrokerConfig::default();
        assert_eq!(config.guarded_bytes(), 128 * mib);
        // the budget gives the cache 12 MiB of 128; the smaller write buffers change nothing
        config.store.cache_bytes = 512 * mib;
        config.store.write_buffer_bytes = 4 * mib;
        assert_eq!(config.guarded_bytes(), (128 + 512 - 12) * mib);
        // write buffers past their 21 MiB (a quarter less the history's thirty-second of the
        // 96 sized) raise it too
        config.store.write_buffer_bytes = 40 * mib;
        assert_eq!(config.guarded_bytes(), (128 + 512 - 12 + 40 - 21) * mib);
    }

    /// A program larger than a release build (a debug build) has the lines raised by as much.
    #[test]
    fn a_larger_program_raises_the_lines() {
        let mib = 1u64 << 20;
        let guard = MemoryGuard::new(32 * mib);
        guard.start(39 * mib);
        // reserve 8 MiB: refuse at 30 MiB, raised by 39 - 20 MiB
        guard.observe(48 * mib);
        assert!(!guard.over());
        guard.observe(49 * mib);
        assert!(guard.over());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn reads_the_resident_memory() {
        let rss = resident_bytes().unwrap();
        assert!(rss > 1 << 20 && rss < 1 << 40, "{rss}");
    }
}
