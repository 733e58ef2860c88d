//! A stateless worker: leases a task, heartbeats while it plays the shard on
//! all its threads, writes the partition under a hidden temporary name,
//! fsyncs, completes, and only then renames it to its final name. On shutdown
//! it leases nothing more and finishes its task (or, past the grace period,
//! gives it back).

mod assignment;
mod error;
mod stages;
mod task;
mod train;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jobs::Executor;
use proto::LeaseTaskRequest;
use proto::client::Auth;

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The coordinator's URL, e.g. `http://127.0.0.1:50051`.
    pub coordinator: String,
    /// The results root as this worker sees it (shared with the coordinator).
    pub results: PathBuf,
    pub threads: usize,
    /// Threads the classifier's fit uses (0: `threads`). A fit is a stage
    /// of its own (nothing else of its experiment can run beside it), so
    /// `muggins run` gives it every thread of the run, not one worker's share.
    pub fit_threads: usize,
    pub worker_id: String,
    /// Stop once no experiment is running (with `experiment`: once it is not).
    pub exit_when_done: bool,
    /// Lease only this experiment's tasks (`muggins run`'s own workers,
    /// `muggins worker --experiment`); `None`: any running experiment's.
    pub experiment: Option<String>,
    /// After shutdown is asked for, how long the current task may still run
    /// before it is given back.
    pub grace: Duration,
    /// A games task commits the games it played as a chunk whenever this
    /// long has passed since its last chunk (a killed worker loses at most
    /// that much play).
    pub chunk_every: Duration,
    /// The coordinator's bearer token, if it asks for one.
    pub auth: Auth,
    /// TLS towards the coordinator (`https://` URLs).
    pub tls: Option<proto::client::ClientTls>,
}

/// How often a games task commits a chunk unless told otherwise.
pub const DEFAULT_CHUNK_EVERY: Duration = Duration::from_secs(60);

/// What a worker did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub tasks_completed: u64,
    pub games: u64,
    pub tasks_failed: u64,
    pub completions_refused: u64,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        write!(
            f,
            "{} completed ({}), {} failed, {} refused by the coordinator",
            n(self.tasks_completed, "task", "tasks"),
            n(self.games, "game", "games"),
            n(self.tasks_failed, "task", "tasks"),
            n(self.completions_refused, "completion", "completions")
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("coordinator URL {url:?}: {message}")]
    Url { url: String, message: String },
    /// The coordinator will not give this worker work (e.g. it does not see
    /// the coordinator's results root).
    #[error("{0}")]
    Refused(String),
}

/// Refusals in a row (each after reading the marker again) before a worker gives up.
const MAX_REFUSALS: u32 = 5;

/// The results-root marker as this worker reads it (empty when missing).
fn read_marker(results: &Path) -> String {
    std::fs::read_to_string(results.join(jobs::layout::RESULTS_MARKER))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A default worker id: host name and process id.
pub fn default_worker_id() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "worker".into());
    format!("{host}-{}", std::process::id())
}

/// Runs until `shutdown` resolves (or, with `exit_when_done`, until no
/// experiment is running).
pub async fn run(config: Config, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<Stats, WorkerError> {
    // No agent this worker starts may read the results (nor, under
    // `muggins run`, the coordinator's state beside them).
    jobs::external::protect(&config.results);
    let channel = proto::client::endpoint(&config.coordinator, config.tls.as_ref())
        .map_err(|e| WorkerError::Url {
            url: config.coordinator.clone(),
            message: e.to_string(),
        })?
        .connect_timeout(Duration::from_secs(5))
        .connect_lazy();
    let mut client = proto::client::with_auth(channel, config.auth.clone());
    let stopping = Arc::new(AtomicBool::new(false));
    {
        let stopping = Arc::clone(&stopping);
        tokio::spawn(async move {
            shutdown.await;
            tracing::info!("shutdown asked for: leasing nothing more");
            stopping.store(true, Ordering::SeqCst);
        });
    }
    let executor = Arc::new(Executor::new(config.threads));
    let mut stats = Stats::default();
    let mut backoff = Duration::from_millis(100);
    let mut refusals = 0u32;
    // Read once, and again only while missing or refused.
    let mut marker = String::new();
    let results_shown = config
        .results
        .canonicalize()
        .unwrap_or_else(|_| config.results.clone())
        .display()
        .to_string();
    tracing::info!(worker = %config.worker_id, threads = config.threads, coordinator = %config.coordinator, "worker started");
    while !stopping.load(Ordering::SeqCst) {
        if marker.is_empty() || refusals > 0 {
            marker = read_marker(&config.results);
        }
        let lease = client
            .lease_task(LeaseTaskRequest {
                worker_id: config.worker_id.clone(),
                threads: config.threads as u32,
                results_marker: marker.clone(),
                results_root: results_shown.clone(),
                experiment_id: config.experiment.clone().unwrap_or_default(),
            })
            .await;
        let reply = match lease {
            Ok(r) => {
                backoff = Duration::from_millis(100);
                refusals = 0;
                r.into_inner()
            }
            Err(status) if status.code() == tonic::Code::FailedPrecondition => {
                // A worker started with its coordinator may have read the
                // marker before the coordinator wrote it: read it again a
                // few times before giving up.
                refusals += 1;
                if refusals >= MAX_REFUSALS {
                    tracing::error!(error = %status.message(), "the coordinator refuses this worker");
                    return Err(WorkerError::Refused(status.message().to_string()));
                }
                sleep_unless(&stopping, Duration::from_millis(200 * refusals as u64)).await;
                continue;
            }
            Err(status) => {
                tracing::warn!(error = %status.message(), code = ?status.code(), "cannot reach the coordinator; retrying");
                sleep_unless(&stopping, backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        let Some(task) = reply.task else {
            if reply.idle && config.exit_when_done {
                tracing::info!("no experiment is running: exiting");
                break;
            }
            sleep_unless(
                &stopping,
                Duration::from_millis(reply.retry_after_ms.clamp(10, 5000) as u64),
            )
            .await;
            continue;
        };
        task::run_task(&config, &mut client, &executor, task, &stopping, &mut stats).await;
    }
    tracing::info!("worker stopped: {stats}");
    Ok(stats)
}

async fn sleep_unless(stopping: &AtomicBool, d: Duration) {
    let step = Duration::from_millis(50);
    let mut left = d;
    while !left.is_zero() && !stopping.load(Ordering::SeqCst) {
        let s = left.min(step);
        tokio::time::sleep(s).await;
        left -= s;
    }
}
