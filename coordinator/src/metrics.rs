//! The coordinator's counters (`metrics_http.rs` serves them).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counters kept since the coordinator started (Prometheus handles resets).
#[derive(Debug, Default)]
pub struct Metrics {
    pub lease_expiries: AtomicU64,
    pub retries: AtomicU64,
    pub stale_completions: AtomicU64,
    pub tasks_failed: AtomicU64,
    pub completions: AtomicU64,
    pub unauthenticated: AtomicU64,
    /// Chunks recorded from heartbeats.
    pub chunks: AtomicU64,
    /// Check tasks drawn, passed and failed.
    pub checks_added: AtomicU64,
    pub checks_passed: AtomicU64,
    pub checks_failed: AtomicU64,
    workers: Mutex<HashMap<String, Instant>>,
}

/// A worker not heard from for this long is not counted as alive.
const ALIVE: Duration = Duration::from_secs(60);

impl Metrics {
    pub fn inc(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// A worker called in.
    pub fn seen(&self, worker: &str) {
        let mut w = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        if w.len() > 100_000 {
            w.retain(|_, t| t.elapsed() < ALIVE);
        }
        w.insert(worker.to_string(), Instant::now());
    }

    pub(crate) fn alive(&self) -> usize {
        let w = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        w.values().filter(|t| t.elapsed() < ALIVE).count()
    }
}
