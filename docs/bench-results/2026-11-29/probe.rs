//! TEMPORARY latency probe (not for commit).
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;
pub const NAMES: [&str; 10] = ["queue_wait", "group_proc", "client_write", "append_enc", "append_io", "fsync", "sm_apply", "commit", "finish", "rt_late"];
struct Slot { n: AtomicU64, sum_us: AtomicU64, gt5: AtomicU64, gt20: AtomicU64, gt50: AtomicU64, max_us: AtomicU64 }
static SLOTS: [Slot; 10] = [const { Slot { n: AtomicU64::new(0), sum_us: AtomicU64::new(0), gt5: AtomicU64::new(0), gt20: AtomicU64::new(0), gt50: AtomicU64::new(0), max_us: AtomicU64::new(0) } }; 10];
pub fn rec(i: usize, d: Duration) {
    let us = d.as_micros() as u64;
    let s = &SLOTS[i];
    s.n.fetch_add(1, Relaxed); s.sum_us.fetch_add(us, Relaxed);
    if us > 5000 { s.gt5.fetch_add(1, Relaxed); }
    if us > 20000 { s.gt20.fetch_add(1, Relaxed); }
    if us > 50000 { s.gt50.fetch_add(1, Relaxed); }
    s.max_us.fetch_max(us, Relaxed);
}
pub fn start() {
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_secs(10));
        let mut line = String::new();
        for (i, s) in SLOTS.iter().enumerate() {
            let n = s.n.swap(0, Relaxed); let sum = s.sum_us.swap(0, Relaxed);
            let (a, b, c, m) = (s.gt5.swap(0, Relaxed), s.gt20.swap(0, Relaxed), s.gt50.swap(0, Relaxed), s.max_us.swap(0, Relaxed));
            if n > 0 { line += &format!("{} n={} mean={:.2}ms >5={} >20={} >50={} max={:.1}ms; ", NAMES[i], n, sum as f64 / n as f64 / 1000.0, a, b, c, m as f64 / 1000.0); }
        }
        eprintln!("PROBE {line}");
    });
    tokio::spawn(async {
        loop {
            let t = std::time::Instant::now();
            tokio::time::sleep(Duration::from_millis(1)).await;
            rec(9, t.elapsed().saturating_sub(Duration::from_millis(1)));
        }
    });
}
