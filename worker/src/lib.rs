//! A stateless worker: leases a task, heartbeats while it plays the shard on
//! all its threads, writes the partition under a hidden temporary name,
//! fsyncs, completes, and only then renames it to its final name. On shutdown
//! it leases nothing more and finishes its task (or, past the grace period,
//! gives it back).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use jobs::layout::{self, ExperimentDir, Stage};
use jobs::{ExecError, Executor, Shard, Spec};
use proto::client::{Auth, Client};
use proto::{CompleteTaskRequest, FailTaskRequest, HeartbeatRequest, LeaseTaskRequest, Task};

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The coordinator's URL, e.g. `http://127.0.0.1:50051`.
    pub coordinator: String,
    /// The results root as this worker sees it (shared with the coordinator).
    pub results: PathBuf,
    pub threads: usize,
    pub worker_id: String,
    /// Stop once no experiment is running.
    pub exit_when_done: bool,
    /// After shutdown is asked for, how long the current task may still run
    /// before it is given back.
    pub grace: Duration,
    /// The coordinator's bearer token, if it asks for one.
    pub auth: Auth,
    /// TLS towards the coordinator (`https://` URLs).
    pub tls: Option<proto::client::ClientTls>,
}

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
    let results_shown = config
        .results
        .canonicalize()
        .unwrap_or_else(|_| config.results.clone())
        .display()
        .to_string();
    tracing::info!(worker = %config.worker_id, threads = config.threads, coordinator = %config.coordinator, "worker started");
    while !stopping.load(Ordering::SeqCst) {
        let lease = client
            .lease_task(LeaseTaskRequest {
                worker_id: config.worker_id.clone(),
                threads: config.threads as u32,
                results_marker: read_marker(&config.results),
                results_root: results_shown.clone(),
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
        run_task(&config, &mut client, &executor, task, &stopping, &mut stats).await;
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

/// What a task produced.
enum Output {
    Games(Vec<jobs::GameRow>),
    Samples(Vec<jobs::training::SampleRow>),
    /// A stage that wrote its own files (fit, report): the file that marks it
    /// done (relative to the experiment directory), its SHA-256, and a row count.
    Written {
        file: String,
        hash: String,
        rows: u64,
    },
}

/// Why the work of a task stopped early.
enum WorkError {
    Cancelled,
    Failed { error: String, retryable: bool },
}

/// How a task ended.
enum Outcome {
    Done(Output),
    /// The lease was lost or the experiment cancelled: discard silently.
    Abandoned,
    /// Shutdown outlasted the grace period: give the task back.
    Release,
    Failed {
        error: String,
        retryable: bool,
    },
}

async fn run_task(
    config: &Config,
    client: &mut Client,
    executor: &Arc<Executor>,
    task: Task,
    stopping: &Arc<AtomicBool>,
    stats: &mut Stats,
) {
    tracing::info!(task = %task.task_id, experiment = %task.experiment_id, games = task.games, "task leased");
    let outcome = play(config, client, executor, &task, stopping).await;
    let outcome = match outcome {
        Outcome::Done(output) => match finish(config, client, &task, output).await {
            Ok(true) => {
                stats.tasks_completed += 1;
                stats.games += task.games;
                return;
            }
            Ok(false) => {
                stats.completions_refused += 1;
                return;
            }
            Err(error) => Outcome::Failed { error, retryable: true },
        },
        other => other,
    };
    let (error, retryable, release) = match outcome {
        Outcome::Abandoned => {
            tracing::warn!(task = %task.task_id, "lease lost or experiment cancelled: work discarded");
            return;
        }
        Outcome::Release => ("worker shutting down".to_string(), true, true),
        Outcome::Failed { error, retryable } => {
            stats.tasks_failed += 1;
            tracing::error!(task = %task.task_id, %error, retryable, "task failed");
            (error, retryable, false)
        }
        Outcome::Done(_) => unreachable!(),
    };
    let request = FailTaskRequest {
        worker_id: config.worker_id.clone(),
        task_id: task.task_id.clone(),
        lease_token: task.lease_token.clone(),
        error,
        retryable,
        release,
    };
    // The coordinator must hear of the failure (else the task waits out its
    // lease): retry while it is unreachable, a bounded number of times.
    let mut wait = Duration::from_millis(100);
    for attempt in 1..=FAIL_TASK_TRIES {
        match client.fail_task(request.clone()).await {
            Ok(r) => {
                let r = r.into_inner();
                if !r.accepted {
                    tracing::warn!(task = %task.task_id, reason = %r.reason, "the coordinator did not take the failure");
                }
                return;
            }
            Err(status) if attempt < FAIL_TASK_TRIES => {
                tracing::warn!(task = %task.task_id, error = %status.message(), attempt, "reporting the failure failed; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            Err(status) => {
                tracing::error!(task = %task.task_id, error = %status.message(), "could not report the failure; the lease will expire");
            }
        }
    }
}

/// How often a worker tries to report a failed task.
const FAIL_TASK_TRIES: u32 = 8;

async fn play(
    config: &Config,
    client: &mut Client,
    executor: &Arc<Executor>,
    task: &Task,
    stopping: &Arc<AtomicBool>,
) -> Outcome {
    let spec = match Spec::from_toml(&task.spec_toml) {
        Ok(s) if s.hash() == task.spec_hash => s,
        Ok(_) => {
            return Outcome::Failed {
                error: "the spec's hash differs from the coordinator's: worker and coordinator versions differ".into(),
                retryable: true,
            };
        }
        Err(e) => {
            return Outcome::Failed {
                error: e.to_string(),
                retryable: false,
            };
        }
    };
    let shard = Shard {
        index: task.shard,
        first_game: task.first_game,
        games: task.games,
    };
    type Work = Box<dyn FnOnce(&AtomicU64, &AtomicBool) -> Result<Output, WorkError> + Send>;
    let work: Work = match Stage::parse(&task.stage) {
        Some(Stage::Games) => {
            let model = if spec.needs_classifier() {
                match load_model(config, task) {
                    Ok(m) => Some(m),
                    Err(outcome) => return outcome,
                }
            } else {
                None
            };
            let executor = Arc::clone(executor);
            Box::new(move |progress, cancel| {
                match executor.run_with(&spec, shard, model.as_deref(), progress, cancel) {
                    Ok(rows) => Ok(Output::Games(rows)),
                    Err(ExecError::Cancelled) => Err(WorkError::Cancelled),
                    Err(e) => Err(WorkError::Failed {
                        error: e.to_string(),
                        retryable: false,
                    }),
                }
            })
        }
        Some(Stage::Samples) => Box::new(move |progress, _| {
            let rows = jobs::training::run_samples(&spec, shard);
            progress.store(shard.games, Ordering::Relaxed);
            Ok(Output::Samples(rows))
        }),
        Some(Stage::Fit) => {
            let dir = match resolve(&config.results, &task.output) {
                Ok(d) => d,
                Err(error) => {
                    return Outcome::Failed {
                        error,
                        retryable: false,
                    };
                }
            };
            let threads = executor.threads();
            Box::new(move |_, _| fit(&spec, &dir, threads))
        }
        Some(Stage::Report) => {
            let dir = match resolve(&config.results, &task.output) {
                Ok(d) => d,
                Err(error) => {
                    return Outcome::Failed {
                        error,
                        retryable: false,
                    };
                }
            };
            Box::new(move |_, cancel| report(&spec, &dir, cancel))
        }
        None => {
            return Outcome::Failed {
                error: format!("this worker cannot run stage {:?}; upgrade it", task.stage),
                retryable: true,
            };
        }
    };
    let progress = Arc::new(AtomicU64::new(0));
    let cancel = Arc::new(AtomicBool::new(false));
    let lost = Arc::new(AtomicBool::new(false));
    let handle = {
        let (progress, cancel) = (Arc::clone(&progress), Arc::clone(&cancel));
        tokio::task::spawn_blocking(move || work(&progress, &cancel))
    };
    let beat_every = Duration::from_millis((task.lease_ms / 3).clamp(50, 2000));
    let mut beat = tokio::time::interval(beat_every);
    beat.tick().await;
    let mut stop_deadline: Option<tokio::time::Instant> = None;
    tokio::pin!(handle);
    let result = loop {
        tokio::select! {
            r = &mut handle => break r,
            _ = beat.tick() => {
                if stopping.load(Ordering::SeqCst) && stop_deadline.is_none() {
                    stop_deadline = Some(tokio::time::Instant::now() + config.grace);
                }
                if stop_deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                    cancel.store(true, Ordering::SeqCst);
                }
                let hb = client.heartbeat(HeartbeatRequest {
                    worker_id: config.worker_id.clone(),
                    task_id: task.task_id.clone(),
                    lease_token: task.lease_token.clone(),
                    games_done: progress.load(Ordering::Relaxed),
                }).await;
                match hb {
                    Ok(r) => {
                        let r = r.into_inner();
                        if !r.lease_valid || r.cancel {
                            lost.store(true, Ordering::SeqCst);
                            cancel.store(true, Ordering::SeqCst);
                        }
                    }
                    Err(status) => tracing::warn!(error = %status.message(), "heartbeat failed; will retry"),
                }
            }
        }
    };
    match result {
        Ok(Ok(output)) => Outcome::Done(output),
        Ok(Err(WorkError::Cancelled)) if lost.load(Ordering::SeqCst) => Outcome::Abandoned,
        Ok(Err(WorkError::Cancelled)) => Outcome::Release,
        Ok(Err(WorkError::Failed { error, retryable })) => Outcome::Failed { error, retryable },
        Err(join) => Outcome::Failed {
            error: format!("the task's threads panicked: {join}"),
            retryable: true,
        },
    }
}

/// Loads the grid's model artifact and checks its content hash. Never falls back.
fn load_model(config: &Config, task: &Task) -> Result<Arc<classifier::Artifact>, Outcome> {
    if task.model.is_empty() {
        return Err(Outcome::Failed {
            error: "the grid uses the classifier source but the task names no model".into(),
            retryable: false,
        });
    }
    let rel = ExperimentDir::new(&task.output).file(&layout::model_file(&task.model));
    let path = resolve(&config.results, &rel).map_err(|error| Outcome::Failed {
        error,
        retryable: false,
    })?;
    let bytes = std::fs::read(&path).map_err(|e| Outcome::Failed {
        error: format!("model artifact {} is missing or unreadable: {e}", path.display()),
        retryable: true,
    })?;
    classifier::Artifact::from_bytes(&bytes, &task.model)
        .map(Arc::new)
        .map_err(|e| Outcome::Failed {
            error: format!("model artifact {}: {e}", path.display()),
            retryable: false,
        })
}

/// The fit stage: reads the samples, fits, writes the model and the report.
fn fit(spec: &Spec, dir: &Path, threads: usize) -> Result<Output, WorkError> {
    let io = |error: String| WorkError::Failed { error, retryable: true };
    let mut samples = Vec::new();
    for part in jobs::parts_in(&dir.join(layout::SAMPLES_DIR)).map_err(|e| io(e.to_string()))? {
        samples.extend(jobs::read_samples(&part).map_err(|e| io(e.to_string()))?);
    }
    let out = jobs::training::fit(spec, &samples, threads).map_err(|error| WorkError::Failed {
        error,
        retryable: false,
    })?;
    let model = dir.join(layout::model_file(&out.hash));
    write_atomic(&model, &out.artifact).map_err(io)?;
    let report = serde_json::to_vec_pretty(&out.report).expect("the report serialises");
    write_atomic(&dir.join(layout::CLASSIFIER_REPORT), &report).map_err(io)?;
    Ok(Output::Written {
        file: layout::model_file(&out.hash),
        hash: out.hash,
        rows: spec.classifier.samples,
    })
}

/// The report stage: waits until every game partition is in place (a worker
/// renames its partition just after its completion is accepted), then builds
/// the report from the partitions alone.
fn report(spec: &Spec, dir: &Path, cancel: &AtomicBool) -> Result<Output, WorkError> {
    let parts: Vec<std::path::PathBuf> = jobs::shards(spec)
        .iter()
        .map(|s| dir.join(layout::GAMES_DIR).join(jobs::part_file(s.index)))
        .collect();
    // Every partition is in place before the coordinator leases the report;
    // one lost since then makes the coordinator re-run its task and take
    // this lease back (then `cancel` is set), so a short wait suffices.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while let Some(missing) = parts.iter().find(|p| !p.exists()) {
        if cancel.load(Ordering::SeqCst) {
            return Err(WorkError::Cancelled);
        }
        if std::time::Instant::now() > deadline {
            return Err(WorkError::Failed {
                error: format!("partition {} is still missing", missing.display()),
                retryable: true,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    analysis::write_report(dir).map_err(|e| WorkError::Failed {
        error: e.to_string(),
        retryable: true,
    })?;
    let report = dir.join(layout::REPORT_JSON);
    let bytes = std::fs::read(&report).map_err(|e| WorkError::Failed {
        error: format!("{}: {e}", report.display()),
        retryable: true,
    })?;
    Ok(Output::Written {
        file: layout::REPORT_JSON.into(),
        hash: classifier::sha256_hex(&bytes),
        rows: spec.games(),
    })
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    jobs::layout::write_atomic(path, bytes).map_err(|e| e.to_string())
}

/// Writes a task's output to the given (hidden) path.
type Writer = Box<dyn FnOnce(&Path) -> Result<(), String> + Send>;

/// Writes the partition under a hidden name, completes, then renames it.
/// Ok(true): completed; Ok(false): the coordinator refused (stale lease).
async fn finish(config: &Config, client: &mut Client, task: &Task, output: Output) -> Result<bool, String> {
    let token_tag: String = task.lease_token.chars().take(12).collect();
    let exp_dir = ExperimentDir::new(&task.output);
    let temp_for = |stage| {
        exp_dir
            .temp_partition(stage, task.shard, &token_tag)
            .expect("a partition stage")
    };
    let (rows, checksum, temp_rel, write): (u64, String, String, Option<Writer>) = match output {
        Output::Games(rows) => {
            let temp = temp_for(Stage::Games);
            let experiment = Spec::from_toml(&task.spec_toml).map(|s| s.name).unwrap_or_default();
            (
                rows.len() as u64,
                jobs::checksum(&rows),
                temp,
                Some(Box::new(move |p: &Path| {
                    jobs::write_partition(p, &experiment, &rows).map_err(|e| e.to_string())
                })),
            )
        }
        Output::Samples(rows) => {
            let temp = temp_for(Stage::Samples);
            (
                rows.len() as u64,
                jobs::training::samples_checksum(&rows),
                temp,
                Some(Box::new(move |p: &Path| {
                    jobs::write_samples(p, &rows).map_err(|e| e.to_string())
                })),
            )
        }
        Output::Written { file, hash, rows } => (rows, hash, exp_dir.file(&file), None),
    };
    let temp = resolve(&config.results, &temp_rel)?;
    let renames = write.is_some();
    let (file_bytes, file_sha256) = {
        let temp = temp.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(write) = write {
                if let Some(dir) = temp.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                }
                write(&temp)?;
            }
            jobs::layout::file_digest(&temp).map_err(|e| format!("{}: {e}", temp.display()))
        })
        .await
        .map_err(|e| e.to_string())??
    };
    let reply = client
        .complete_task(CompleteTaskRequest {
            worker_id: config.worker_id.clone(),
            task_id: task.task_id.clone(),
            lease_token: task.lease_token.clone(),
            rows,
            checksum,
            temp_file: temp_rel,
            file_bytes,
            file_sha256,
        })
        .await
        .map_err(|s| format!("completing the task: {}", s.message()))?
        .into_inner();
    if !reply.accepted {
        tracing::warn!(task = %task.task_id, reason = %reply.reason, "completion refused; output discarded");
        if renames {
            let _ = std::fs::remove_file(&temp);
        }
        return Ok(false);
    }
    if std::env::var_os("MUGGINS_FAILPOINT").is_some_and(|v| v == "exit-after-complete") {
        // Fault injection (tests): die between the accepted completion and the rename.
        tracing::error!(task = %task.task_id, "MUGGINS_FAILPOINT=exit-after-complete: exiting before the rename");
        std::process::exit(86);
    }
    if renames {
        let fin = resolve(&config.results, &reply.final_file)?;
        match jobs::durable_rename(&temp, &fin) {
            Ok(()) => {}
            // The coordinator may have finished the rename for us.
            Err(_) if fin.exists() && !temp.exists() => {}
            Err(e) => return Err(format!("completed, but the rename failed: {e}")),
        }
    }
    tracing::info!(task = %task.task_id, rows, "task completed");
    Ok(true)
}

fn resolve(root: &Path, relative: &str) -> Result<PathBuf, String> {
    jobs::layout::confine(root, relative).map_err(|e| format!("path from the coordinator refused: {e}"))
}
