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
    workers: Mutex<HashMap<String, WorkerInfo>>,
}

/// What the coordinator knows of one worker (the web view's workers page).
/// Bounded: a few fields and at most `RATE_SAMPLES` samples per worker.
#[derive(Clone, Debug)]
pub struct WorkerInfo {
    /// The address its last call came from (the worker's host as the
    /// coordinator sees it).
    pub host: String,
    pub threads: u32,
    pub last_seen: Instant,
    /// Unix ms of its last call.
    pub last_seen_ms: i64,
    /// The task it holds (none between tasks).
    pub task: Option<String>,
    /// Games it reported for `task` so far.
    task_games: u64,
    /// Games it played since the coordinator started.
    pub games: u64,
    /// Failures it reported since the coordinator started.
    pub failures: u64,
    /// (ms, games) samples, at least `RATE_SPACING_MS` apart, for its rate.
    samples: std::collections::VecDeque<(i64, u64)>,
}

const RATE_SAMPLES: usize = 8;
const RATE_SPACING_MS: i64 = 5_000;

impl WorkerInfo {
    fn new(now_ms: i64) -> WorkerInfo {
        WorkerInfo {
            host: String::new(),
            threads: 0,
            last_seen: Instant::now(),
            last_seen_ms: now_ms,
            task: None,
            task_games: 0,
            games: 0,
            failures: 0,
            samples: std::collections::VecDeque::new(),
        }
    }

    /// It holds `task` now (a new lease starts its count at 0).
    pub fn holds(&mut self, task: Option<&str>) {
        if self.task.as_deref() != task {
            self.task = task.map(str::to_string);
            self.task_games = 0;
        }
    }

    /// It reported `games` played of `task` so far.
    pub fn progress(&mut self, task: &str, games: u64) {
        self.holds(Some(task));
        self.games += games.saturating_sub(self.task_games);
        self.task_games = self.task_games.max(games);
    }

    /// Games a second over its recent samples (0 before two).
    pub fn rate(&self) -> f64 {
        match (self.samples.front(), self.samples.back()) {
            (Some(&(t0, g0)), Some(&(t1, g1))) if t1 > t0 => (g1 - g0) as f64 * 1000.0 / (t1 - t0) as f64,
            _ => 0.0,
        }
    }

    /// A call at `now_ms` that told `update`.
    fn heard(&mut self, now_ms: i64, update: impl FnOnce(&mut WorkerInfo)) {
        self.last_seen = Instant::now();
        self.last_seen_ms = now_ms;
        update(self);
        self.sample(now_ms);
    }

    fn sample(&mut self, now_ms: i64) {
        if self.samples.back().is_none_or(|&(t, _)| now_ms - t >= RATE_SPACING_MS) {
            self.samples.push_back((now_ms, self.games));
            if self.samples.len() > RATE_SAMPLES {
                self.samples.pop_front();
            }
        } else if self.samples.len() > 1 {
            // The newest sample moves with the count until the next is due.
            let games = self.games;
            if let Some(last) = self.samples.back_mut() {
                *last = (now_ms, games);
            }
        }
    }
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

    /// A worker called in; `update` records what the call told.
    pub fn seen(&self, worker: &str, update: impl FnOnce(&mut WorkerInfo)) {
        let now = crate::store::now_ms();
        let mut w = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        if w.len() > 100_000 {
            w.retain(|_, i| i.last_seen.elapsed() < ALIVE);
        }
        w.entry(worker.to_string())
            .or_insert_with(|| WorkerInfo::new(now))
            .heard(now, update);
    }

    /// A worker already heard from reported something (a completion, a
    /// failure); one never seen is not added.
    pub fn update(&self, worker: &str, update: impl FnOnce(&mut WorkerInfo)) {
        let now = crate::store::now_ms();
        let mut w = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(info) = w.get_mut(worker) {
            info.heard(now, update);
        }
    }

    pub(crate) fn alive(&self) -> usize {
        let w = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        w.values().filter(|i| i.last_seen.elapsed() < ALIVE).count()
    }

    /// Every worker heard from (a copy, so the lock is not held while a
    /// page renders).
    pub(crate) fn workers(&self) -> Vec<(String, WorkerInfo)> {
        let w = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        w.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}
