//! One leased task from start to end: play it on blocking threads while
//! heartbeating, write its output under a hidden name, complete, rename;
//! or report why it failed (or give it back on shutdown).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use jobs::Executor;
use jobs::layout::Stage;
use proto::client::Client;
use proto::{CompleteTaskRequest, FailTaskRequest, HeartbeatRequest};

use crate::assignment::{Assignment, ChunkRec, Lease};
use crate::error::TaskError;
use crate::stages::{Chunking, Halt, Output, Work, prepare, resolve};
use crate::{Config, Stats};

/// How a task's work ended.
enum Ended {
    Done(Output),
    /// The lease was lost or the experiment cancelled: discard silently.
    Abandoned,
    /// Shutdown outlasted the grace period: give the task back.
    Release,
    Failed(TaskError),
}

/// How often a worker tries to report a failed task.
const FAIL_TASK_TRIES: u32 = 8;

/// Runs one leased task to its end and tells the coordinator how it ended.
pub(crate) async fn run_task(
    config: &Config,
    client: &mut Client,
    executor: &Arc<Executor>,
    task: proto::Task,
    stopping: &Arc<AtomicBool>,
    stats: &mut Stats,
) {
    let chunking = Chunking {
        every: config.chunk_every,
        sink: Default::default(),
    };
    let ended = match Assignment::from_wire(task, &config.results) {
        Ok(a) => {
            tracing::info!(task = %a.lease.task_id, experiment = %a.lease.experiment_id, games = a.shard.games, "task leased");
            // A fit (the classifier's, or a training run's generation) runs
            // on `fit_threads`, 0 meaning the executor's.
            let fit = match config.fit_threads {
                0 => executor.threads(),
                n => n,
            };
            let prepared = match &a.job {
                jobs::Job::Grid(spec) => prepare(&config.results, executor, &a, spec, &chunking, fit),
                jobs::Job::Train(spec) => crate::train::prepare(&config.results, &a, spec, executor.threads(), fit),
            };
            let ended = match prepared {
                Ok(work) => execute(config, client, &a.lease, work, stopping, &chunking).await,
                Err(e) => Ended::Failed(e),
            };
            match ended {
                Ended::Done(output) => match finish(config, client, &a, output, &chunking).await {
                    Ok(true) => {
                        stats.tasks_completed += 1;
                        stats.games += a.shard.games;
                        return;
                    }
                    Ok(false) => {
                        stats.completions_refused += 1;
                        return;
                    }
                    Err(e) => (a.lease, Ended::Failed(e)),
                },
                other => (a.lease, other),
            }
        }
        Err(failed) => {
            let (lease, e) = *failed;
            (lease, Ended::Failed(e))
        }
    };
    let (lease, ended) = ended;
    let (error, retryable, release) = match ended {
        Ended::Abandoned => {
            tracing::warn!(task = %lease.task_id, "lease lost or experiment cancelled: work discarded");
            return;
        }
        Ended::Release => ("worker shutting down".to_string(), true, true),
        Ended::Failed(e) => {
            stats.tasks_failed += 1;
            let retryable = e.retryable();
            tracing::error!(task = %lease.task_id, error = %e, retryable, "task failed");
            (e.to_string(), retryable, false)
        }
        Ended::Done(_) => unreachable!("a finished task returned above"),
    };
    report_failure(config, client, &lease, error, retryable, release).await;
}

/// How often a task in play looks whether the worker is stopping.
const STOP_POLL: Duration = Duration::from_millis(100);

/// Plays `work` on a blocking thread, heartbeating every third of the lease
/// (at most every 2 s); stops it when the lease is lost, the experiment is
/// cancelled, or shutdown outlasts the grace period.
async fn execute(
    config: &Config,
    client: &mut Client,
    lease: &Lease,
    work: Work,
    stopping: &AtomicBool,
    chunking: &Chunking,
) -> Ended {
    let progress = Arc::new(AtomicU64::new(0));
    let cancel = Arc::new(AtomicBool::new(false));
    let mut lost = false;
    let handle = {
        let (progress, cancel) = (Arc::clone(&progress), Arc::clone(&cancel));
        tokio::task::spawn_blocking(move || work(&progress, &cancel))
    };
    let beat_every = (lease.duration / 3).clamp(Duration::from_millis(50), Duration::from_secs(2));
    let mut beat = tokio::time::interval(beat_every);
    beat.tick().await;
    let mut stop_deadline: Option<tokio::time::Instant> = None;
    // A stop is seen within a tenth of a second (Ctrl-C ends a run in two).
    let mut watch = tokio::time::interval(STOP_POLL);
    tokio::pin!(handle);
    let result = loop {
        tokio::select! {
            r = &mut handle => break r,
            _ = watch.tick() => {
                if stopping.load(Ordering::SeqCst) && stop_deadline.is_none() {
                    stop_deadline = Some(tokio::time::Instant::now() + config.grace);
                }
                if stop_deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                    cancel.store(true, Ordering::SeqCst);
                }
            }
            _ = beat.tick() => {
                // The chunks finished since the last heartbeat the
                // coordinator took; kept until it takes them.
                let chunks: Vec<ChunkRec> = chunking.sink.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let hb = client.heartbeat(HeartbeatRequest {
                    worker_id: config.worker_id.clone(),
                    task_id: lease.task_id.clone(),
                    lease_token: lease.token.clone(),
                    games_done: progress.load(Ordering::Relaxed),
                    chunks: chunks.iter().map(ChunkRec::to_wire).collect(),
                }).await;
                match hb {
                    Ok(r) => {
                        let r = r.into_inner();
                        if r.chunks_recorded > 0 {
                            let mut sink = chunking.sink.lock().unwrap_or_else(|e| e.into_inner());
                            let n = (r.chunks_recorded as usize).min(sink.len());
                            sink.drain(..n);
                        }
                        if !r.lease_valid || r.cancel {
                            lost = true;
                            cancel.store(true, Ordering::SeqCst);
                        }
                    }
                    Err(status) => tracing::warn!(error = %status.message(), "heartbeat failed; will retry"),
                }
            }
        }
    };
    match result {
        Ok(Ok(output)) => Ended::Done(output),
        Ok(Err(Halt::Cancelled)) if lost => Ended::Abandoned,
        Ok(Err(Halt::Cancelled)) => Ended::Release,
        Ok(Err(Halt::Failed(e))) => Ended::Failed(e),
        Err(join) => Ended::Failed(TaskError::Panicked(join.to_string())),
    }
}

/// A task's output on disk, ready to complete.
struct Written {
    rows: u64,
    checksum: String,
    /// The file the completion names, relative to the results root.
    file: String,
    path: PathBuf,
    bytes: u64,
    sha256: String,
    /// Whether the file is under a hidden name the worker renames after the
    /// completion is accepted (partitions), or already in place (fit, report).
    renames: bool,
    /// Games tasks: the ranges played by this lease and not committed.
    uncommitted: Vec<ChunkRec>,
}

/// Writes a partition under its hidden name, fsyncs and measures it; fit and
/// report wrote and measured theirs already.
async fn write_output(config: &Config, a: &Assignment, output: Output) -> Result<Written, TaskError> {
    type Writer = Box<dyn FnOnce(&std::path::Path) -> Result<(), String> + Send>;
    let tag: String = a.lease.token.chars().take(12).collect();
    let temp_for = |stage| {
        a.dir
            .temp_partition(stage, a.shard.index, &tag)
            .expect("a partition stage")
    };
    let mut uncommitted_out = Vec::new();
    let (rows, checksum, file, write): (u64, String, String, Writer) = match output {
        Output::Checked { checksum, rows } => {
            return Ok(Written {
                rows,
                checksum,
                file: String::new(),
                path: PathBuf::new(),
                bytes: 0,
                sha256: String::new(),
                renames: false,
                uncommitted: Vec::new(),
            });
        }
        Output::Games { rows, uncommitted } => {
            uncommitted_out = uncommitted;
            let experiment = a.job.name().to_string();
            let (n, checksum) = (rows.len() as u64, jobs::checksum(&rows));
            let write: Writer =
                Box::new(move |p| jobs::write_partition(p, &experiment, &rows).map_err(|e| e.to_string()));
            (n, checksum, temp_for(Stage::Games), write)
        }
        Output::Samples(rows) => {
            let (n, checksum) = (rows.len() as u64, jobs::training::samples_checksum(&rows));
            let write: Writer = Box::new(move |p| jobs::write_samples(p, &rows).map_err(|e| e.to_string()));
            (n, checksum, temp_for(Stage::Samples), write)
        }
        Output::Written {
            file,
            hash,
            bytes,
            rows,
        } => {
            let file = a.dir.file(&file);
            let path = resolve(&config.results, &file)?;
            return Ok(Written {
                rows,
                sha256: hash.clone(),
                checksum: hash,
                file,
                path,
                bytes,
                renames: false,
                uncommitted: Vec::new(),
            });
        }
    };
    let path = resolve(&config.results, &file)?;
    let (bytes, sha256) = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            write(&path)?;
            jobs::layout::file_digest(&path).map_err(|e| format!("{}: {e}", path.display()))
        })
        .await
        .map_err(|e| TaskError::Panicked(e.to_string()))?
        .map_err(TaskError::Io)?
    };
    Ok(Written {
        rows,
        checksum,
        file,
        path,
        bytes,
        sha256,
        renames: true,
        uncommitted: uncommitted_out,
    })
}

/// Writes the output, completes, then renames a partition into place.
/// Ok(true): completed; Ok(false): the coordinator refused (stale lease).
async fn finish(
    config: &Config,
    client: &mut Client,
    a: &Assignment,
    output: Output,
    chunking: &Chunking,
) -> Result<bool, TaskError> {
    let w = write_output(config, a, output).await?;
    // Chunks no heartbeat delivered, then the ranges never committed: with
    // them the coordinator knows every range's checksum and worker.
    let mut chunks: Vec<proto::Chunk> = chunking
        .sink
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .drain(..)
        .map(|c| c.to_wire())
        .collect();
    chunks.extend(w.uncommitted.iter().map(ChunkRec::to_wire));
    let reply = client
        .complete_task(CompleteTaskRequest {
            worker_id: config.worker_id.clone(),
            task_id: a.lease.task_id.clone(),
            lease_token: a.lease.token.clone(),
            rows: w.rows,
            checksum: w.checksum.clone(),
            temp_file: w.file.clone(),
            file_bytes: w.bytes,
            file_sha256: w.sha256.clone(),
            chunks,
        })
        .await
        .map_err(|s| TaskError::Complete(s.message().to_string()))?
        .into_inner();
    if !reply.accepted {
        if reply.reason.starts_with(jobs::sprt::STOPPED) {
            tracing::info!(task = %a.lease.task_id, reason = %reply.reason, "the SPRT stopped the experiment; these games are not needed");
        } else {
            tracing::warn!(task = %a.lease.task_id, reason = %reply.reason, "completion refused; output discarded");
        }
        if w.renames {
            let _ = std::fs::remove_file(&w.path);
        }
        return Ok(false);
    }
    if std::env::var_os("MUGGINS_FAILPOINT").is_some_and(|v| v == "exit-after-complete") {
        // Fault injection (tests): die between the accepted completion and the rename.
        tracing::error!(task = %a.lease.task_id, "MUGGINS_FAILPOINT=exit-after-complete: exiting before the rename");
        std::process::exit(86);
    }
    if w.renames {
        // A rename's target: a symbolic link at the name is replaced, never
        // written through, wherever it leads.
        let fin = jobs::layout::confine_name(&config.results, &reply.final_file)
            .map_err(|e| TaskError::Path(e.to_string()))?;
        match jobs::durable_rename(&w.path, &fin) {
            Ok(()) => {}
            // The coordinator may have finished the rename for us.
            Err(_) if jobs::layout::is_plain_file(&fin) && !w.path.exists() => {}
            Err(e) => return Err(TaskError::Rename(e.to_string())),
        }
    }
    tracing::info!(task = %a.lease.task_id, rows = w.rows, "task completed");
    Ok(true)
}

/// Tells the coordinator a task failed (or is given back). It must hear of
/// it, else the task waits out its lease: retried while the coordinator is
/// unreachable, a bounded number of times.
async fn report_failure(
    config: &Config,
    client: &mut Client,
    lease: &Lease,
    error: String,
    retryable: bool,
    release: bool,
) {
    let request = FailTaskRequest {
        worker_id: config.worker_id.clone(),
        task_id: lease.task_id.clone(),
        lease_token: lease.token.clone(),
        error,
        retryable,
        release,
    };
    let mut wait = Duration::from_millis(100);
    for attempt in 1..=FAIL_TASK_TRIES {
        match client.fail_task(request.clone()).await {
            Ok(r) => {
                let r = r.into_inner();
                // Given back after the SPRT decided: nothing to take.
                let stopped = r.reason.starts_with(jobs::sprt::STOPPED);
                if !r.accepted && stopped {
                    tracing::info!(task = %lease.task_id, reason = %r.reason, "the SPRT stopped the experiment; nothing to give back");
                } else if !r.accepted {
                    tracing::warn!(task = %lease.task_id, reason = %r.reason, "the coordinator did not take the failure");
                }
                return;
            }
            Err(status) if attempt < FAIL_TASK_TRIES => {
                tracing::warn!(task = %lease.task_id, error = %status.message(), attempt, "reporting the failure failed; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            Err(status) => {
                tracing::error!(task = %lease.task_id, error = %status.message(), "could not report the failure; the lease will expire");
            }
        }
    }
}
