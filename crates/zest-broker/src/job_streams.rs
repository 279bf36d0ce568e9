//! Job push: the job streams (StreamActivatedJobs) open on this node and the places the engine
//! reserves in them.
//!
//! A stream is a bounded channel of [`PushedJob`]s (its window) read by the gateway's response
//! stream. When a job becomes activatable, the engine asks [`PartitionStreams::reserve`] for a
//! stream of its type; a stream with room gives up one place in its channel (a tokio
//! `OwnedPermit`), the engine writes JOB_BATCH ACTIVATED in the same batch, and once that batch
//! has committed the processing loop sends the job into the reserved place. A batch that fails
//! drops its permits, which frees the places. A full window reserves nothing, and the job waits
//! for workers as before (a notification wakes the stream, which then activates jobs as they
//! fit), so a slow worker holds at most its window.
//!
//! The window is counted twice: in jobs (the channel's capacity) and in bytes
//! ([`STREAM_WINDOW_BYTES`], by the jobs' variables and headers), since a job may carry
//! megabytes of variables: 32 of 4 MB would be 128 MB for one worker that does not read. A
//! stream whose bytes are at or above the bound takes no place; a place reserved counts the
//! size of the stream's last job until it is filled, so a group that reserves several places
//! at once cannot go far beyond the bound.
//!
//! All the node's streams together are held to a third bound, [`Registry`]'s share of the
//! memory budget (`BrokerConfig::job_stream_bytes`): 40 workers' streams of 1 MiB each would
//! otherwise hold 40 MiB of a 128 MiB node. A stream takes no place while the node's streams
//! hold that much, and its backlog activation asks for no more than fits in what is left
//! ([`Room`] holds the estimate of what it asked for until the jobs take its place).
//!
//! When the client goes away, [`JobStream`]'s `Drop` unregisters the stream, closes its channel
//! and, on a task, hands every job still in it (and every job whose place was reserved but not
//! yet sent) back with JOB YIELD, as Zeebe does, so another worker gets them at once instead of
//! after their timeout.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::sync::mpsc::{self, OwnedPermit};
use tokio::sync::Notify;
use zest_engine::{new_command, JobStreams, StreamTarget};
use zest_protocol::{partition_of_key, Intent, JobRecord, RecordValue};

use crate::router::{Router, Sent};

/// An activated job on its way to a worker: its key and its record, variables included.
#[derive(Debug, Clone)]
pub struct PushedJob {
    pub key: i64,
    pub job: JobRecord,
}

/// What a stream asks for.
#[derive(Debug, Clone)]
pub struct JobStreamSpec {
    pub job_type: String,
    pub worker: String,
    pub timeout: i64,
    pub fetch_variables: Vec<String>,
}

/// Bytes of jobs a stream holds ahead of what its client has read, beside its window in jobs.
/// Jobs with a typical payload (the realistic benchmark's carry 11 KB) fill the window in jobs
/// first: with 64 KiB, a stream's backlog was activated 5 jobs at a time instead of 32, and at
/// 20 PI/s on 3 nodes the cluster completed 8-11 PI/s instead of 11-13, with no less memory.
pub const STREAM_WINDOW_BYTES: usize = 1 << 20;

/// What a job takes in a stream's channel: its documents, and its record's other fields.
fn job_bytes(job: &JobRecord) -> usize {
    let headers: usize = job
        .custom_headers
        .iter()
        .map(|(k, v)| k.len() + v.len())
        .sum();
    job.variables.len() + headers + 256
}

/// The bytes all the node's streams hold, and their bound.
struct NodeHeld {
    bytes: AtomicUsize,
    limit: usize,
    /// Woken (every waiter) when the bytes fall below the bound.
    below: Notify,
}

impl NodeHeld {
    fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    fn free(&self) -> usize {
        self.limit.saturating_sub(self.bytes())
    }

    fn sub(&self, bytes: usize) {
        let before = self.bytes.fetch_sub(bytes, Ordering::AcqRel);
        if before >= self.limit && before.saturating_sub(bytes) < self.limit {
            self.below.notify_waiters();
        }
    }
}

/// The bytes a stream holds: jobs sent into its channel and not yet taken, and an estimate for
/// each place reserved and not yet filled. They count in the node's bytes too.
struct Held {
    bytes: AtomicUsize,
    /// Size of the last job sent, the estimate for the next place.
    last: AtomicUsize,
    /// Woken when the bytes fall below the bound.
    below: Notify,
    node: Arc<NodeHeld>,
}

impl Held {
    fn new(node: Arc<NodeHeld>) -> Held {
        Held {
            bytes: AtomicUsize::new(0),
            last: AtomicUsize::new(0),
            below: Notify::new(),
            node,
        }
    }

    fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    fn has_room(&self) -> bool {
        self.bytes() < STREAM_WINDOW_BYTES && self.node.free() > 0
    }

    /// Bytes that may still be added: the least of what the stream and the node have left.
    fn free(&self) -> usize {
        STREAM_WINDOW_BYTES
            .saturating_sub(self.bytes())
            .min(self.node.free())
    }

    fn estimate(&self) -> usize {
        self.last
            .load(Ordering::Relaxed)
            .max(job_bytes(&JobRecord::default()))
    }

    fn add(&self, bytes: usize) {
        self.bytes.fetch_add(bytes, Ordering::AcqRel);
        self.node.bytes.fetch_add(bytes, Ordering::AcqRel);
    }

    fn sub(&self, bytes: usize) {
        let before = self.bytes.fetch_sub(bytes, Ordering::AcqRel);
        self.node.sub(bytes);
        if before.saturating_sub(bytes) < STREAM_WINDOW_BYTES {
            self.below.notify_one();
        }
    }

    /// A job enters the channel (in place of an estimate, if it fills a reserved place).
    fn sent(&self, job: &PushedJob, estimate: usize) {
        let bytes = job_bytes(&job.job);
        self.last.store(bytes, Ordering::Relaxed);
        self.add(bytes);
        if estimate > 0 {
            self.sub(estimate);
        }
    }
}

/// Jobs activated for a poll, counted in the node's bytes (see [`Registry::hold_polled`]).
pub struct PolledJobs {
    node: Arc<NodeHeld>,
    bytes: usize,
}

impl PolledJobs {
    /// Counts more jobs of the same poll.
    pub fn add(&mut self, jobs: &[PushedJob]) {
        let bytes: usize = jobs.iter().map(|j| job_bytes(&j.job)).sum();
        self.node.bytes.fetch_add(bytes, Ordering::AcqRel);
        self.bytes += bytes;
    }
}

impl Drop for PolledJobs {
    fn drop(&mut self) {
        self.node.sub(self.bytes);
    }
}

/// A place reserved in a stream's channel for a job whose batch is committing. Filled by
/// [`Place::send`]; dropped unfilled (the batch failed), it frees the place and its estimate.
pub(crate) struct Place {
    permit: Option<OwnedPermit<PushedJob>>,
    held: Arc<Held>,
    estimate: usize,
}

impl Place {
    pub fn send(mut self, job: PushedJob) {
        if let Some(permit) = self.permit.take() {
            self.held.sent(&job, self.estimate);
            permit.send(job);
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.permit.is_some() {
            self.held.sub(self.estimate);
        }
    }
}

struct OpenStream {
    id: u64,
    target: StreamTarget,
    tx: mpsc::Sender<PushedJob>,
    held: Arc<Held>,
}

#[derive(Default)]
struct TypeStreams {
    streams: Vec<OpenStream>,
    /// Where the next reservation starts looking (round-robin between a type's streams).
    next: usize,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    by_type: HashMap<String, TypeStreams>,
}

/// The streams of the node, by job type, and the bytes they hold together.
pub(crate) struct Registry {
    inner: Mutex<Inner>,
    held: Arc<NodeHeld>,
}

impl Registry {
    /// A registry whose streams hold at most about `limit` bytes together (one stream always
    /// gets one job: a job larger than the bound still reaches a worker).
    pub fn new(limit: usize) -> Registry {
        Registry {
            inner: Mutex::default(),
            held: Arc::new(NodeHeld {
                bytes: AtomicUsize::new(0),
                limit: limit.max(1),
                below: Notify::new(),
            }),
        }
    }

    /// Bytes the node's streams hold ahead of their clients (jobs and places reserved), and
    /// the jobs activated for polls and not yet handed to the gRPC layer.
    pub fn held_bytes(&self) -> usize {
        self.held.bytes()
    }

    /// Whether the node's jobs held ahead of their clients leave room for more.
    pub fn has_room(&self) -> bool {
        self.held.free() > 0
    }

    /// Waits until the node's jobs held ahead of their clients leave room for more.
    pub async fn room(&self) {
        loop {
            let below = self.held.below.notified();
            tokio::pin!(below);
            below.as_mut().enable();
            if self.has_room() {
                return;
            }
            below.await;
        }
    }

    /// A count of the jobs a poll (`ActivateJobs`) activates in the node's bytes, empty until
    /// [`PolledJobs::add`], given back when dropped: the gateway drops it once it has handed
    /// the batch to the gRPC layer.
    pub fn hold_polled(&self) -> PolledJobs {
        PolledJobs {
            node: self.held.clone(),
            bytes: 0,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn open(&self, spec: &JobStreamSpec, tx: mpsc::Sender<PushedJob>, held: Arc<Held>) -> u64 {
        let mut inner = self.lock();
        inner.next_id += 1;
        let id = inner.next_id;
        inner
            .by_type
            .entry(spec.job_type.clone())
            .or_default()
            .streams
            .push(OpenStream {
                id,
                target: StreamTarget {
                    worker: spec.worker.clone(),
                    timeout: spec.timeout,
                    fetch_variables: spec.fetch_variables.clone(),
                },
                tx,
                held,
            });
        id
    }

    fn close(&self, job_type: &str, id: u64) {
        let mut inner = self.lock();
        if let Some(t) = inner.by_type.get_mut(job_type) {
            t.streams.retain(|s| s.id != id);
            if t.streams.is_empty() {
                inner.by_type.remove(job_type);
            }
        }
    }

    /// A place in a stream of the job's type with room (in jobs and in bytes), round-robin
    /// between the type's streams.
    fn reserve(&self, job: &JobRecord) -> Option<(StreamTarget, Place)> {
        let mut inner = self.lock();
        let t = inner.by_type.get_mut(&job.job_type)?;
        let n = t.streams.len();
        for i in 0..n {
            let idx = (t.next + i) % n;
            let s = &t.streams[idx];
            if !s.held.has_room() {
                continue;
            }
            if let Ok(permit) = s.tx.clone().try_reserve_owned() {
                let estimate = s.held.estimate();
                s.held.add(estimate);
                let place = Place {
                    permit: Some(permit),
                    held: s.held.clone(),
                    estimate,
                };
                let target = s.target.clone();
                t.next = (idx + 1) % n;
                return Some((target, place));
            }
        }
        None
    }

    #[cfg(test)]
    fn count(&self) -> usize {
        self.lock().by_type.values().map(|t| t.streams.len()).sum()
    }
}

/// One partition's view of the registry, given to its engine: places reserved while a command
/// is processed wait here until the processing loop takes them into the command's group.
pub(crate) struct PartitionStreams {
    registry: Arc<Registry>,
    reserved: Mutex<Vec<(i64, Place)>>,
}

impl PartitionStreams {
    pub fn new(registry: Arc<Registry>) -> PartitionStreams {
        PartitionStreams {
            registry,
            reserved: Mutex::new(Vec::new()),
        }
    }

    /// The places reserved since the last call.
    pub fn take(&self) -> Vec<(i64, Place)> {
        std::mem::take(&mut *self.reserved.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl JobStreams for PartitionStreams {
    fn reserve(&self, job_key: i64, job: &JobRecord) -> Option<StreamTarget> {
        let (target, place) = self.registry.reserve(job)?;
        self.reserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((job_key, place));
        Some(target)
    }
}

/// Sends JOB YIELD for a pushed job that did not reach its worker. Without room in the
/// partition's internal queue the job stays activated until its deadline, as before job push.
pub(crate) fn yield_job(router: &Router, pushed: PushedJob) {
    let job = JobRecord {
        variables: String::new(),
        ..pushed.job
    };
    let command = new_command(
        pushed.key,
        Intent::Yield,
        RecordValue::Job(Box::new(job)),
        -1,
        -1,
    );
    if router.send(partition_of_key(pushed.key), command) != Sent::Yes {
        tracing::warn!(
            job = pushed.key,
            "could not yield a job its stream did not deliver; it is activated until its deadline"
        );
    }
}

/// An open job stream: the jobs pushed to it, in order. Dropping it closes the stream and yields
/// what it did not deliver.
pub struct JobStream {
    id: u64,
    job_type: String,
    registry: Arc<Registry>,
    rx: Option<mpsc::Receiver<PushedJob>>,
    tx: mpsc::Sender<PushedJob>,
    held: Arc<Held>,
    internal: Arc<Router>,
}

/// The way into a stream's channel for jobs activated for it by JOB_BATCH ACTIVATE (the
/// backlog), held to the same window in jobs and in bytes as pushes.
#[derive(Clone)]
pub struct StreamSender {
    tx: mpsc::Sender<PushedJob>,
    held: Arc<Held>,
}

/// Room granted to a stream's backlog activation: `jobs` jobs of the size of the stream's last
/// one. Their estimated bytes count in the stream's and the node's bytes from the grant on, so
/// that streams woken together do not all ask for the same free bytes; each job sent takes one
/// estimate's place, and dropping the room gives back what no job took.
pub struct Room {
    pub jobs: usize,
    held: Arc<Held>,
    estimate: usize,
    reserved: usize,
}

impl Room {
    fn take_one(&mut self) -> usize {
        let estimate = self.estimate.min(self.reserved);
        self.reserved -= estimate;
        estimate
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        if self.reserved > 0 {
            self.held.sub(self.reserved);
        }
    }
}

impl StreamSender {
    /// Waits until the stream has room, in jobs and in bytes (its own and the node's), and
    /// grants as many jobs of the size of its last one as fit (at least one); None once the
    /// stream is closed.
    pub async fn room(&self) -> Option<Room> {
        loop {
            drop(self.tx.reserve().await.ok()?);
            // registered before the check: a wake-up between the two is not missed
            let node_below = self.held.node.below.notified();
            tokio::pin!(node_below);
            node_below.as_mut().enable();
            let free = self.held.free();
            if free > 0 {
                let estimate = self.held.estimate();
                let jobs = self.tx.capacity().min(free / estimate).max(1);
                self.held.add(jobs * estimate);
                return Some(Room {
                    jobs,
                    held: self.held.clone(),
                    estimate,
                    reserved: jobs * estimate,
                });
            }
            tokio::select! {
                _ = self.held.below.notified() => {}
                _ = node_below => {}
                _ = self.tx.closed() => return None,
            }
        }
    }

    /// Sends a job into the channel in a place of `room`, waiting for a place in the channel;
    /// the job comes back if the stream is closed.
    pub async fn send(&self, job: PushedJob, room: &mut Room) -> Result<(), PushedJob> {
        let permit = match self.tx.reserve().await {
            Ok(permit) => permit,
            Err(_) => return Err(job),
        };
        self.held.sent(&job, room.take_one());
        permit.send(job);
        Ok(())
    }

    /// Resolves once the stream is closed (its client went away).
    pub async fn closed(&self) {
        self.tx.closed().await
    }
}

impl JobStream {
    pub(crate) fn open(
        registry: Arc<Registry>,
        internal: Arc<Router>,
        spec: &JobStreamSpec,
        window: usize,
    ) -> JobStream {
        let (tx, rx) = mpsc::channel(window.max(1));
        let held = Arc::new(Held::new(registry.held.clone()));
        let id = registry.open(spec, tx.clone(), held.clone());
        JobStream {
            id,
            job_type: spec.job_type.clone(),
            registry,
            rx: Some(rx),
            tx,
            held,
            internal,
        }
    }

    /// The stream's channel, for jobs activated for it by JOB_BATCH ACTIVATE (the backlog that
    /// was there before the stream opened, or that did not fit when it was full). Resolves
    /// `closed()` once the stream is dropped.
    pub fn sender(&self) -> StreamSender {
        StreamSender {
            tx: self.tx.clone(),
            held: self.held.clone(),
        }
    }

    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<PushedJob>> {
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = rx.poll_recv(cx);
        if let Poll::Ready(Some(job)) = &polled {
            self.held.sub(job_bytes(&job.job));
        }
        polled
    }

    /// Bytes the stream holds ahead of its client (jobs in the channel, places reserved).
    #[cfg(test)]
    fn held_bytes(&self) -> usize {
        self.held.bytes()
    }

    /// Hands a job that could not be delivered back (JOB YIELD).
    pub fn give_back(&self, job: PushedJob) {
        yield_job(&self.internal, job);
    }
}

impl Drop for JobStream {
    fn drop(&mut self) {
        self.registry.close(&self.job_type, self.id);
        let Some(mut rx) = self.rx.take() else {
            return;
        };
        // no new places; jobs already buffered, and places reserved by batches still committing,
        // arrive until `recv` ends
        rx.close();
        let internal = self.internal.clone();
        // each job handed back leaves the node's count of bytes held
        let held = self.held.clone();
        let give_back = move |job: PushedJob| {
            held.sub(job_bytes(&job.job));
            yield_job(&internal, job);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    while let Some(job) = rx.recv().await {
                        give_back(job);
                    }
                });
            }
            Err(_) => {
                while let Ok(job) = rx.try_recv() {
                    give_back(job);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(job_type: &str) -> JobStreamSpec {
        JobStreamSpec {
            job_type: job_type.into(),
            worker: "w".into(),
            timeout: 1000,
            fetch_variables: vec![],
        }
    }

    fn job(job_type: &str) -> JobRecord {
        JobRecord {
            job_type: job_type.into(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn reservations_respect_each_window_and_alternate_between_streams() {
        let registry = Arc::new(Registry::new(64 << 20));
        let internal = Router::for_tests(Vec::new());
        let a = JobStream::open(registry.clone(), internal.clone(), &spec("t"), 2);
        let b = JobStream::open(registry.clone(), internal.clone(), &spec("t"), 1);
        let streams = PartitionStreams::new(registry.clone());
        // three places in all: a, b, a
        for key in 1..=3 {
            assert!(streams.reserve(key, &job("t")).is_some(), "place {key}");
        }
        assert!(streams.reserve(4, &job("t")).is_none(), "both windows full");
        assert!(
            streams.reserve(5, &job("other")).is_none(),
            "no stream of that type"
        );
        let reserved = streams.take();
        assert_eq!(reserved.len(), 3);
        // a dropped reservation frees its place
        drop(reserved);
        assert!(streams.reserve(6, &job("t")).is_some());
        drop(streams.take());
        drop(a);
        drop(b);
        assert_eq!(registry.count(), 0, "dropped streams are unregistered");
    }

    #[tokio::test]
    async fn a_stream_takes_no_place_once_its_jobs_fill_its_bytes() {
        let registry = Arc::new(Registry::new(64 << 20));
        let internal = Router::for_tests(Vec::new());
        let mut stream = JobStream::open(registry.clone(), internal, &spec("t"), 32);
        let streams = PartitionStreams::new(registry);
        let big = |key| PushedJob {
            key,
            job: JobRecord {
                variables: "x".repeat(STREAM_WINDOW_BYTES / 2),
                ..job("t")
            },
        };
        // two jobs of half the bound each fill it, though the window has 30 places left
        for key in 1..=2 {
            streams.reserve(key, &job("t")).expect("a place");
            let (_, place) = streams.take().pop().expect("reserved");
            place.send(big(key));
        }
        assert!(stream.held_bytes() >= STREAM_WINDOW_BYTES);
        assert!(streams.reserve(3, &job("t")).is_none(), "full by bytes");
        // the backlog waits too, until the client reads one
        let sender = stream.sender();
        let waiting = tokio::spawn(async move { sender.room().await });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        let read = std::future::poll_fn(|cx| stream.poll_recv(cx)).await;
        assert_eq!(read.map(|j| j.key), Some(1));
        let room = tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("room in time")
            .unwrap();
        assert_eq!(
            room.map(|r| r.jobs),
            Some(1),
            "one more job of that size fits"
        );
        // a reserved place counts the last job's size until it is filled or dropped
        let before = stream.held_bytes();
        streams.reserve(4, &job("t")).expect("a place");
        assert!(stream.held_bytes() > before + STREAM_WINDOW_BYTES / 4);
        drop(streams.take());
        assert_eq!(stream.held_bytes(), before);
    }

    #[tokio::test]
    async fn the_node_s_streams_together_stay_within_their_share_of_the_budget() {
        // room for four jobs of 100 KB in all, over two streams whose own windows hold ten
        let job_of = |key| PushedJob {
            key,
            job: JobRecord {
                variables: "x".repeat(100_000 - 256),
                ..job("t")
            },
        };
        let registry = Arc::new(Registry::new(400_000));
        let internal = Router::for_tests(Vec::new());
        let mut a = JobStream::open(registry.clone(), internal.clone(), &spec("t"), 32);
        let b = JobStream::open(registry.clone(), internal, &spec("t"), 32);
        let streams = PartitionStreams::new(registry.clone());
        for key in 1..=4 {
            streams.reserve(key, &job("t")).expect("a place");
            let (_, place) = streams.take().pop().expect("reserved");
            place.send(job_of(key));
        }
        assert_eq!(registry.held_bytes(), 400_000);
        assert!(
            streams.reserve(5, &job("t")).is_none(),
            "the node's share is full"
        );
        // b's backlog waits for room though its own window is half empty
        let sender = b.sender();
        let waiting = tokio::spawn(async move { sender.room().await.map(|r| r.jobs) });
        tokio::task::yield_now().await;
        assert!(
            !waiting.is_finished(),
            "no room while the node's streams are full"
        );
        // a's client reads one (a got jobs 1 and 3): one job of that size fits again
        let read = std::future::poll_fn(|cx| a.poll_recv(cx)).await;
        assert_eq!(read.map(|j| j.key), Some(1));
        let room = tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("room in time")
            .unwrap();
        assert_eq!(
            room,
            Some(1),
            "room for what a's client read, not for b's whole window"
        );
        // a grant holds its bytes until jobs take its place: a second one finds none left
        let first = b.sender().room().await.expect("room");
        assert_eq!(first.jobs, 1);
        assert_eq!(registry.held_bytes(), 400_000);
        assert!(
            streams.reserve(6, &job("t")).is_none(),
            "the grant holds the room"
        );
        let mut first = first;
        b.sender().send(job_of(7), &mut first).await.unwrap();
        drop(first);
        assert_eq!(
            registry.held_bytes(),
            400_000,
            "the job took the grant's place"
        );
        drop(streams.take());
        // streams that go away hand their jobs back, and their bytes with them
        drop(a);
        drop(b);
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            while registry.held_bytes() > 0 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the node's bytes back to 0");
    }

    #[tokio::test]
    async fn jobs_activated_for_polls_share_the_node_s_budget_with_the_streams() {
        let job_of = |key| PushedJob {
            key,
            job: JobRecord {
                variables: "x".repeat(100_000 - 256),
                ..job("t")
            },
        };
        let registry = Arc::new(Registry::new(200_000));
        let internal = Router::for_tests(Vec::new());
        let stream = JobStream::open(registry.clone(), internal, &spec("t"), 32);
        let streams = PartitionStreams::new(registry.clone());
        // a poll's two jobs fill the node's share: streams get no place, polls no room
        let mut polled = registry.hold_polled();
        polled.add(&[job_of(1), job_of(2)]);
        assert_eq!(registry.held_bytes(), 200_000);
        assert!(!registry.has_room());
        assert!(
            streams.reserve(3, &job("t")).is_none(),
            "no place for a stream while polled jobs fill the node's share"
        );
        let waiting = {
            let registry = registry.clone();
            tokio::spawn(async move { registry.room().await })
        };
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "the next poll waits for room");
        // handed over, the polled jobs leave the count and the poll goes on
        drop(polled);
        assert_eq!(registry.held_bytes(), 0);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("room in time")
            .unwrap();
        assert!(registry.has_room());
        assert!(
            streams.reserve(3, &job("t")).is_some(),
            "streams get places again"
        );
        drop(streams.take());
        drop(stream);
    }

    #[tokio::test]
    async fn jobs_a_dropped_stream_did_not_deliver_are_yielded() {
        let registry = Arc::new(Registry::new(64 << 20));
        let (itx, mut irx) = mpsc::channel(16);
        let internal = Router::for_tests(vec![itx]);
        let stream = JobStream::open(registry.clone(), internal, &spec("t"), 4);
        let streams = PartitionStreams::new(registry);
        let key = zest_protocol::encode_key(1, 7);
        streams.reserve(key, &job("t")).expect("a place");
        let (_, permit) = streams.take().pop().expect("reserved");
        // the client goes away while the job's batch is still committing
        drop(stream);
        permit.send(PushedJob { key, job: job("t") });
        let s = tokio::time::timeout(std::time::Duration::from_secs(5), irx.recv())
            .await
            .expect("a yield in time")
            .expect("a yield");
        assert_eq!(s.record.intent, Intent::Yield);
        assert_eq!(s.record.key, key);
    }
}
