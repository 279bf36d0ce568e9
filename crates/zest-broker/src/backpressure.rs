//! Adaptive command-rate limiting per partition, as Zeebe's `backpressure` settings do it (after
//! Netflix's concurrency-limits): a limit on the number of user commands in flight (received,
//! not yet processed and committed) that adapts to the measured round-trip time. A command that
//! would exceed the limit is rejected at once with RESOURCE_EXHAUSTED, so the queue in front of
//! the processor, and with it the latency of accepted commands, stays bounded at any load.
//!
//! Commands that drain work (job completion and failure, job activation, cancellation,
//! deployment, incident resolution) are never rejected and are not counted: rejecting them
//! would keep load in the system instead of shedding it.
//!
//! The algorithms are pure: time is passed in as the measured round-trip time of a command.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zest_protocol::{Intent, ValueType};

/// Which limit algorithm, with its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum LimitAlgorithm {
    /// A constant limit.
    Fixed { limit: usize },
    /// Additive increase, multiplicative decrease: grow by one while the limit is in use and
    /// round trips stay under `expected_rtt`; shrink by `backoff_ratio` when one exceeds it,
    /// once per window of the commands then in flight.
    Aimd {
        initial: usize,
        min: usize,
        max: usize,
        expected_rtt: Duration,
        backoff_ratio: f64,
    },
    /// TCP Vegas: estimate the queue from the ratio of the shortest round trip seen to the
    /// current one; grow while the queue is short (< alpha), shrink when it is long (> beta).
    Vegas {
        initial: usize,
        max: usize,
        alpha: f64,
        beta: f64,
    },
}

impl Default for LimitAlgorithm {
    /// AIMD keyed to a round-trip target. Vegas is available too, but it reads any growth of
    /// the round trip as queueing, and with group commit the round trip grows with the batch
    /// even when nothing queues, so it settles on a limit too small to batch well.
    fn default() -> Self {
        LimitAlgorithm::Aimd {
            initial: 256,
            min: 16,
            max: 4096,
            expected_rtt: DEFAULT_AIMD_RTT,
            backoff_ratio: 0.9,
        }
    }
}

/// Default round-trip target of AIMD: Zeebe's 200 ms. A Zest command takes 1-3 ms at low
/// load and tens of ms at max rate with a full pipeline, but an fsync on a slow or networked
/// disk alone can take tens of ms, and a target under it would cut the limit at ordinary
/// load. The overload benchmark uses 50 ms (`scripts/bench.sh`, part `overload`): at three
/// times the max rate it kept throughput at the max while the p99 of accepted instances fell
/// to 270-350 ms (one-task, 2-core VM, four paired runs).
pub const DEFAULT_AIMD_RTT: Duration = Duration::from_millis(200);

/// Backpressure settings of a partition.
#[derive(Debug, Clone, PartialEq)]
pub struct BackpressureConfig {
    pub enabled: bool,
    pub algorithm: LimitAlgorithm,
    /// Job backlog gate: while jobs of some type pile up behind busy workers for longer than
    /// this, new process instances are refused (None, the default: no gate). See
    /// [`JobWaitGate`].
    pub max_job_wait: Option<Duration>,
}

impl Default for BackpressureConfig {
    fn default() -> Self {
        BackpressureConfig {
            enabled: true,
            algorithm: LimitAlgorithm::default(),
            max_job_wait: None,
        }
    }
}

/// The job backlog gate, off unless `backpressure-max-job-wait-ms` is set: flow control from
/// job workers back to the clients that start instances. Zeebe has no such gate.
///
/// The command limit sees only the round trip of commands inside the partition. When workers
/// cannot keep up, every command still goes through quickly, but activatable jobs pile up, and
/// with them the latency of every instance and the memory of the partition, without bound.
/// The gate looks for exactly that: a worker's activation took all the jobs it asked for (the
/// workers take jobs as fast as they can) and the next job of the type still in line had
/// waited longer than `max_wait` since it was created. Then the type is backlogged, and new
/// process instances are refused while any type is. A job held by its worker for a long time
/// says nothing (its worker is working); neither does a job that waited because no worker
/// asked for its type (a worker that starts later, or none at all): only jobs left behind by
/// workers that are busy count. An activation that leaves nothing waiting, or finds fewer
/// jobs than it asked for, clears its type. A type whose workers stopped altogether shows no
/// activations at all; it stops counting after [`STALE_FACTOR`] times `max_wait` without a
/// backlogged activation, so the gate cannot stay closed for ever.
#[derive(Debug, Clone, Default)]
pub struct JobWaitGate {
    max_wait: Option<Duration>,
    /// Backlogged job types, with their last backlogged activation.
    slow: HashMap<String, Instant>,
}

/// A backlogged type with no backlogged activation for this many times `max_wait` no longer
/// closes the gate.
pub const STALE_FACTOR: u32 = 10;

impl JobWaitGate {
    pub fn new(max_wait: Option<Duration>) -> JobWaitGate {
        JobWaitGate {
            max_wait,
            slow: HashMap::new(),
        }
    }

    /// The configured maximum wait, if the gate is on.
    pub fn max_wait(&self) -> Option<Duration> {
        self.max_wait
    }

    /// An activation of `job_type` took all the jobs it asked for, and the oldest job of the
    /// type left in line had waited `waited` for a worker at `now`.
    pub fn on_left_waiting(&mut self, job_type: &str, waited: Duration, now: Instant) {
        let Some(max) = self.max_wait else { return };
        if waited > max {
            self.slow.insert(job_type.to_string(), now);
        } else {
            self.slow.remove(job_type);
        }
    }

    /// An activation of `job_type` left no job of the type waiting.
    pub fn on_drained(&mut self, job_type: &str) {
        self.slow.remove(job_type);
    }

    /// True while new process instances are refused.
    pub fn is_closed(&mut self, now: Instant) -> bool {
        let Some(max) = self.max_wait else {
            return false;
        };
        let stale = max * STALE_FACTOR;
        self.slow.retain(|_, last| now < *last + stale);
        !self.slow.is_empty()
    }
}

/// True for the commands that start new process instances: the ones the job backlog gate
/// refuses while workers lag.
pub fn starts_instances(value_type: ValueType, intent: Intent) -> bool {
    matches!(
        (value_type, intent),
        (
            ValueType::ProcessInstanceCreation,
            Intent::Create | Intent::CreateWithAwaitingResult
        )
    )
}

/// Of a partition's command limit, the part that commands starting new process instances may
/// use: the rest is kept for the commands of instances already running (messages, signals,
/// variables), so that under overload new instances are refused first and those accepted
/// still finish. At 20 PI/s of the realistic benchmark on a 3-node cluster that carries about
/// 12, creations and the messages their instances wait for were refused alike: accepted
/// instances took 21-23 s (p50) and 1,800-1,900 refused publishes a second were tried again.
/// With the reserve, at the same throughput: 18-19 s and 1,400-1,700 (two paired runs each).
pub fn starts_limit(limit: usize) -> usize {
    (limit - limit / 4).max(1)
}

/// The limit state machine, without locking or clocks.
#[derive(Debug, Clone)]
pub struct Limit {
    algorithm: LimitAlgorithm,
    limit: f64,
    /// Vegas: shortest round trip seen (the no-load estimate), microseconds.
    rtt_noload_us: f64,
    samples: u64,
    /// AIMD: samples still to come from the commands that were in flight at the last decrease;
    /// they saw the same queue, so they do not shrink the limit again (one decrease per
    /// window, as TCP does).
    cooldown: usize,
}

impl Limit {
    pub fn new(algorithm: LimitAlgorithm) -> Limit {
        let limit = match &algorithm {
            LimitAlgorithm::Fixed { limit } => *limit,
            LimitAlgorithm::Aimd { initial, .. } | LimitAlgorithm::Vegas { initial, .. } => {
                *initial
            }
        }
        .max(1) as f64;
        Limit {
            algorithm,
            limit,
            rtt_noload_us: 0.0,
            samples: 0,
            cooldown: 0,
        }
    }

    pub fn current(&self) -> usize {
        self.limit as usize
    }

    /// One command finished after `rtt` while `in_flight` commands (itself included) were in
    /// flight.
    pub fn on_sample(&mut self, rtt: Duration, in_flight: usize) {
        self.samples += 1;
        let rtt_us = (rtt.as_secs_f64() * 1e6).max(1.0);
        match self.algorithm.clone() {
            LimitAlgorithm::Fixed { .. } => {}
            LimitAlgorithm::Aimd {
                min,
                max,
                expected_rtt,
                backoff_ratio,
                ..
            } => {
                // A burst (50 messages published at once on an idle node) queues its own
                // commands: the last ones are slow, but that is one event. Shrinking once per
                // slow sample took the limit from 256 to its minimum in one burst of that size
                // and refused the next burst at 2 instances a second.
                let waiting = self.cooldown > 0;
                self.cooldown = self.cooldown.saturating_sub(1);
                if rtt > expected_rtt {
                    if !waiting {
                        self.limit = (self.limit * backoff_ratio).floor();
                        self.cooldown = in_flight.saturating_sub(1);
                    }
                } else if in_flight * 2 >= self.limit as usize {
                    self.limit += 1.0;
                }
                self.limit = self.limit.clamp(min.max(1) as f64, max.max(1) as f64);
            }
            LimitAlgorithm::Vegas {
                max, alpha, beta, ..
            } => {
                // Re-probe the no-load round trip now and then: it may have grown for good
                // (bigger state, slower disk), and a stale minimum would shrink the limit
                // forever.
                if self.rtt_noload_us == 0.0 || rtt_us < self.rtt_noload_us || self.samples >= 5_000
                {
                    self.rtt_noload_us = rtt_us;
                    self.samples = 0;
                    return;
                }
                // Only commands that saw the limit in use say something about it.
                if (in_flight as f64) * 2.0 < self.limit {
                    return;
                }
                let queue = self.limit * (1.0 - self.rtt_noload_us / rtt_us);
                let step = self.limit.log10().max(1.0);
                if queue < alpha {
                    self.limit += step;
                } else if queue > beta {
                    self.limit -= step;
                }
                self.limit = self.limit.clamp(1.0, max.max(1) as f64);
            }
        }
    }
}

/// True for commands that backpressure never rejects (they drain work).
pub fn exempt(value_type: ValueType, intent: Intent) -> bool {
    matches!(
        (value_type, intent),
        (ValueType::Job, Intent::Complete)
            | (ValueType::Job, Intent::Fail)
            | (ValueType::Job, Intent::ThrowError)
            | (ValueType::Job, Intent::UpdateRetries)
            | (ValueType::Job, Intent::UpdateTimeout)
            | (ValueType::JobBatch, Intent::Activate)
            | (ValueType::ProcessInstance, Intent::Cancel)
            | (ValueType::Deployment, _)
            | (ValueType::Incident, _)
    )
}

/// A partition's limiter: counts commands in flight against the adaptive limit.
pub struct Limiter {
    enabled: bool,
    state: Mutex<LimiterState>,
}

struct LimiterState {
    limit: Limit,
    in_flight: usize,
    gate: JobWaitGate,
}

/// Why a command was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The command limit is reached.
    Limit,
    /// Workers lag: jobs wait longer than the configured maximum.
    JobBacklog,
}

impl Limiter {
    pub fn new(config: &BackpressureConfig) -> Arc<Limiter> {
        Arc::new(Limiter {
            enabled: config.enabled,
            state: Mutex::new(LimiterState {
                limit: Limit::new(config.algorithm.clone()),
                in_flight: 0,
                gate: JobWaitGate::new(config.max_job_wait),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LimiterState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A permit for one more command, or why not. `starts_instances` commands may use only
    /// [`starts_limit`] of the limit, and are also refused while the job backlog gate is
    /// closed.
    pub fn try_acquire(self: &Arc<Self>, starts_instances: bool) -> Result<Permit, Refusal> {
        let mut s = self.lock();
        if self.enabled {
            let limit = s.limit.current();
            if s.in_flight >= limit || (starts_instances && s.in_flight >= starts_limit(limit)) {
                return Err(Refusal::Limit);
            }
            if starts_instances && s.gate.is_closed(Instant::now()) {
                return Err(Refusal::JobBacklog);
            }
        }
        s.in_flight += 1;
        Ok(Permit {
            limiter: self.clone(),
            started: Instant::now(),
            sample: true,
        })
    }

    /// True when the job backlog gate is on (`backpressure-max-job-wait-ms`).
    pub fn gates_job_backlog(&self) -> bool {
        self.enabled && self.lock().gate.max_wait().is_some()
    }

    /// An activation of `job_type` took all it asked for and left a job that had waited
    /// `waited` for a worker.
    pub fn on_jobs_left_waiting(&self, job_type: &str, waited: Duration) {
        self.lock()
            .gate
            .on_left_waiting(job_type, waited, Instant::now());
    }

    /// An activation of `job_type` left no job of the type waiting.
    pub fn on_jobs_drained(&self, job_type: &str) {
        self.lock().gate.on_drained(job_type);
    }

    /// (current limit, commands in flight)
    pub fn snapshot(&self) -> (usize, usize) {
        let s = self.lock();
        (s.limit.current(), s.in_flight)
    }
}

/// One command in flight; dropping it (once the command is processed and committed) feeds its
/// round trip to the limit.
pub struct Permit {
    limiter: Arc<Limiter>,
    started: Instant,
    /// False when the command never reached processing: release without a sample.
    sample: bool,
}

impl Permit {
    /// Releases the permit without a round-trip sample (the command was not processed).
    pub fn cancel(mut self) {
        self.sample = false;
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let rtt = self.started.elapsed();
        let mut s = self.limiter.lock();
        let in_flight = s.in_flight;
        if self.sample {
            s.limit.on_sample(rtt, in_flight);
        }
        s.in_flight = in_flight.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn vegas_grows_at_low_latency_and_shrinks_when_latency_rises() {
        let mut l = Limit::new(LimitAlgorithm::Vegas {
            initial: 20,
            max: 1000,
            alpha: 3.0,
            beta: 6.0,
        });
        l.on_sample(ms(1), 20); // the no-load round trip
        for _ in 0..200 {
            let limit = l.current();
            l.on_sample(ms(1), limit);
        }
        let grown = l.current();
        assert!(grown > 100, "limit grew to {grown}");
        for _ in 0..200 {
            let limit = l.current();
            l.on_sample(ms(20), limit);
        }
        let shrunk = l.current();
        assert!(shrunk < grown / 2, "limit shrank from {grown} to {shrunk}");
        // an idle partition does not change the limit
        l.on_sample(ms(50), 1);
        assert_eq!(l.current(), shrunk);
    }

    #[test]
    fn aimd_adds_while_fast_and_multiplies_down_when_slow() {
        let mut l = Limit::new(LimitAlgorithm::Aimd {
            initial: 10,
            min: 2,
            max: 50,
            expected_rtt: ms(200),
            backoff_ratio: 0.5,
        });
        for _ in 0..100 {
            l.on_sample(ms(5), 50);
        }
        assert_eq!(l.current(), 50, "capped at max");
        l.on_sample(ms(300), 50);
        assert_eq!(l.current(), 25);
        // the other 49 commands of that window were slow for the same reason: no more decrease
        for _ in 0..49 {
            l.on_sample(ms(300), 50);
        }
        assert_eq!(
            l.current(),
            25,
            "one decrease per window of commands in flight"
        );
        // slowness that goes on shrinks the limit window after window, down to the minimum
        for _ in 0..200 {
            let limit = l.current();
            l.on_sample(ms(300), limit);
        }
        assert_eq!(l.current(), 2, "floored at min");
    }

    #[test]
    fn limiter_rejects_beyond_the_limit_and_frees_on_drop() {
        let limiter = Limiter::new(&BackpressureConfig {
            enabled: true,
            algorithm: LimitAlgorithm::Fixed { limit: 2 },
            max_job_wait: None,
        });
        let a = limiter.try_acquire(false).unwrap();
        let _b = limiter.try_acquire(false).unwrap();
        assert_eq!(limiter.try_acquire(false).err(), Some(Refusal::Limit));
        assert_eq!(limiter.snapshot(), (2, 2));
        drop(a);
        assert!(limiter.try_acquire(false).is_ok());
        let off = Limiter::new(&BackpressureConfig {
            enabled: false,
            algorithm: LimitAlgorithm::Fixed { limit: 1 },
            max_job_wait: None,
        });
        let _x = off.try_acquire(false).unwrap();
        assert!(off.try_acquire(false).is_ok(), "disabled: never rejects");
    }

    #[test]
    fn job_wait_gate_closes_while_a_type_lags_and_reopens() {
        let t0 = Instant::now();
        let mut gate = JobWaitGate::new(Some(ms(500)));
        assert!(!gate.is_closed(t0));
        gate.on_left_waiting("a", ms(100), t0);
        assert!(!gate.is_closed(t0), "a short line keeps it open");
        gate.on_left_waiting("a", ms(800), t0);
        // closed for as long as type a lags, however rare its activations
        assert!(gate.is_closed(t0 + ms(2_000)));
        // another type being fast does not open it
        gate.on_left_waiting("b", ms(1), t0 + ms(2_000));
        assert!(gate.is_closed(t0 + ms(2_001)));
        // a short line of a opens it
        gate.on_left_waiting("a", ms(100), t0 + ms(2_100));
        assert!(!gate.is_closed(t0 + ms(2_100)));
        // so does an activation that emptied a's line
        gate.on_left_waiting("a", ms(900), t0 + ms(2_200));
        assert!(gate.is_closed(t0 + ms(2_200)));
        gate.on_drained("a");
        assert!(!gate.is_closed(t0 + ms(2_200)));
        // workers that stop for good: the type goes stale and stops counting
        gate.on_left_waiting("c", ms(900), t0);
        assert!(gate.is_closed(t0 + ms(4_999)));
        assert!(!gate.is_closed(t0 + ms(5_000)), "stale after 10 x max_wait");
        // no gate configured: never closes
        let mut off = JobWaitGate::new(None);
        off.on_left_waiting("a", Duration::from_secs(60), t0);
        assert!(!off.is_closed(t0));
    }

    #[test]
    fn the_gate_refuses_only_new_instances() {
        let limiter = Limiter::new(&BackpressureConfig {
            enabled: true,
            algorithm: LimitAlgorithm::Fixed { limit: 100 },
            max_job_wait: Some(Duration::from_secs(30)),
        });
        limiter.on_jobs_left_waiting("slow", Duration::from_secs(31));
        assert_eq!(
            limiter.try_acquire(true).err(),
            Some(Refusal::JobBacklog),
            "creates are refused while jobs wait"
        );
        assert!(limiter.try_acquire(false).is_ok(), "other commands pass");
        assert!(starts_instances(
            ValueType::ProcessInstanceCreation,
            Intent::Create
        ));
        assert!(starts_instances(
            ValueType::ProcessInstanceCreation,
            Intent::CreateWithAwaitingResult
        ));
        assert!(!starts_instances(ValueType::Job, Intent::Complete));
    }

    #[test]
    fn new_instances_leave_a_quarter_of_the_limit_to_running_ones() {
        let limiter = Limiter::new(&BackpressureConfig {
            enabled: true,
            algorithm: LimitAlgorithm::Fixed { limit: 8 },
            max_job_wait: None,
        });
        let creates: Vec<_> = (0..6).map(|_| limiter.try_acquire(true).unwrap()).collect();
        assert_eq!(
            limiter.try_acquire(true).err(),
            Some(Refusal::Limit),
            "6 of 8 taken: no room for a 7th creation"
        );
        let message = limiter.try_acquire(false).expect("a message still passes");
        let _other = limiter.try_acquire(false).unwrap();
        assert_eq!(limiter.try_acquire(false).err(), Some(Refusal::Limit));
        drop(creates);
        drop(message);
        assert!(
            limiter.try_acquire(true).is_ok(),
            "room again once they finish"
        );
        assert_eq!(
            starts_limit(1),
            1,
            "a limit of one still lets instances start"
        );
        assert_eq!(starts_limit(256), 192);
    }

    #[test]
    fn draining_commands_are_exempt() {
        assert!(exempt(ValueType::Job, Intent::Complete));
        assert!(exempt(ValueType::JobBatch, Intent::Activate));
        assert!(!exempt(ValueType::ProcessInstanceCreation, Intent::Create));
    }
}
