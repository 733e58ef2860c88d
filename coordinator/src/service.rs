//! The gRPC service: requests checked, store calls made off the async
//! threads, replies built around what `wire.rs` converts (rows to messages,
//! store errors to `Status`).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proto::coordinator_server::Coordinator;
use proto::*;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::Config;
use crate::metrics::Metrics;
use crate::shared::Shared;
use crate::store::{CompleteOutcome, Completed, FailOutcome, HeartbeatOutcome, LeaseRef, Reporter, Store, StoreError};
use crate::wire::{check_len, require, require_worker_id, status, task_to_proto, truncate_chars};

/// The coordinator's gRPC service.
#[derive(Clone, Debug)]
pub struct CoordinatorService {
    shared: Arc<Shared>,
}

impl CoordinatorService {
    pub fn new(store: Store, reader: Store, config: Config, marker: String) -> CoordinatorService {
        CoordinatorService {
            shared: Arc::new(Shared {
                store: Mutex::new(store),
                reader: Mutex::new(reader),
                config,
                samples: Mutex::new(HashMap::new()),
                metrics: Default::default(),
                marker,
                specs: Default::default(),
            }),
        }
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    fn lease_ms(&self) -> i64 {
        self.shared.config.lease.as_millis() as i64
    }

    fn get(&self, id: &str) -> Result<Experiment, Status> {
        let e = self.shared.store().experiment(id).map_err(status)?;
        Ok(self.shared.experiment_to_proto(&e))
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("the request's work failed: {e}")))
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<Experiment, Status>> + Send>>;

#[tonic::async_trait]
impl Coordinator for CoordinatorService {
    async fn submit_experiment(
        &self,
        request: Request<SubmitExperimentRequest>,
    ) -> Result<Response<SubmitExperimentResponse>, Status> {
        let SubmitExperimentRequest {
            spec_toml: text,
            start_model,
        } = request.into_inner();
        // A training run's `train.start` is the file the submission sent.
        let spec = jobs::Job::from_toml_with(&text, jobs::train::StartFrom::Bytes(&start_model))
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let shared = Arc::clone(&self.shared);
        let games = spec.games();
        let (id, created) = blocking(move || crate::files::submit(&shared, &spec, &text, &start_model))
            .await?
            .map_err(status)?;
        tracing::info!(%id, created, games, "experiment submitted");
        Ok(Response::new(SubmitExperimentResponse {
            experiment: Some(self.get(&id)?),
            created,
        }))
    }

    async fn get_experiment(&self, request: Request<GetExperimentRequest>) -> Result<Response<Experiment>, Status> {
        let id = request.into_inner().id;
        require("id", &id)?;
        Ok(Response::new(self.get(&id)?))
    }

    async fn list_experiments(
        &self,
        _request: Request<ListExperimentsRequest>,
    ) -> Result<Response<ListExperimentsResponse>, Status> {
        let rows = self.shared.store().experiments().map_err(status)?;
        Ok(Response::new(ListExperimentsResponse {
            experiments: rows.iter().map(|e| self.shared.experiment_to_proto(e)).collect(),
        }))
    }

    type WatchExperimentStream = WatchStream;

    async fn watch_experiment(
        &self,
        request: Request<GetExperimentRequest>,
    ) -> Result<Response<Self::WatchExperimentStream>, Status> {
        let id = request.into_inner().id;
        require("id", &id)?;
        let first = self.get(&id)?;
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        let this = self.clone();
        tokio::spawn(async move {
            let mut last = first;
            if tx.send(Ok(last.clone())).await.is_err() {
                return;
            }
            while last.state == ExperimentState::Running as i32 {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let now = match this.get(&id) {
                    Ok(e) => e,
                    Err(s) => {
                        let _ = tx.send(Err(s)).await;
                        return;
                    }
                };
                let changed = now.games_done != last.games_done || now.state != last.state || now.stages != last.stages;
                last = now;
                if changed && tx.send(Ok(last.clone())).await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))))
    }

    async fn cancel_experiment(
        &self,
        request: Request<CancelExperimentRequest>,
    ) -> Result<Response<Experiment>, Status> {
        let id = request.into_inner().id;
        require("id", &id)?;
        let e = self.shared.store().cancel(&id).map_err(status)?;
        tracing::info!(%id, "experiment cancelled");
        Ok(Response::new(self.shared.experiment_to_proto(&e)))
    }

    async fn lease_task(&self, request: Request<LeaseTaskRequest>) -> Result<Response<LeaseTaskResponse>, Status> {
        let host = request.remote_addr().map(|a| a.ip().to_string()).unwrap_or_default();
        let r = request.into_inner();
        require_worker_id(&r.worker_id)?;
        check_len("results_root", &r.results_root, 4096)?;
        check_len("experiment_id", &r.experiment_id, 256)?;
        if r.results_marker != self.shared.marker {
            let theirs = if r.results_root.is_empty() {
                "its results root".to_string()
            } else {
                r.results_root.clone()
            };
            tracing::warn!(worker = %r.worker_id, worker_results = %theirs, "worker refused: it does not see this coordinator's results root");
            return Err(Status::failed_precondition(format!(
                "worker {} uses results root {theirs}, which is not this coordinator's results root {} (its marker file {} \
                 is missing there or different): start the worker with --results naming the same shared directory",
                r.worker_id,
                crate::files::display_root(&self.shared.config.results),
                jobs::layout::RESULTS_MARKER
            )));
        }
        let (leased, idle, workers) = {
            let mut store = self.shared.store();
            let only = (!r.experiment_id.is_empty()).then_some(r.experiment_id.as_str());
            let leased = store.lease(&r.worker_id, self.lease_ms(), only).map_err(status)?;
            let idle = leased.is_none() && {
                let running = store.running_ids().map_err(status)?;
                match only {
                    Some(id) => !running.iter().any(|r| r == id),
                    None => running.is_empty(),
                }
            };
            // The report task reads which worker played which games.
            let workers = match &leased {
                Some(t) if t.stage == jobs::layout::Stage::Report => {
                    Some((t.output.clone(), store.worker_chunks(&t.experiment_id).map_err(status)?))
                }
                _ => None,
            };
            (leased, idle, workers)
        };
        self.shared.metrics.seen(&r.worker_id, |w| {
            w.host = host;
            w.threads = r.threads;
            w.holds(leased.as_ref().map(|t| t.task_id.as_str()));
        });
        if let Some((output, chunks)) = workers {
            let path = jobs::layout::confine(
                &self.shared.config.results,
                &format!("{output}/{}", jobs::layout::WORKERS_FILE),
            )
            .map_err(|e| Status::internal(e.to_string()))?;
            let body = serde_json::to_vec_pretty(&serde_json::json!({ "chunks": chunks })).expect("chunks serialise");
            blocking(move || jobs::layout::write_atomic(&path, &body))
                .await?
                .map_err(|e| Status::internal(e.to_string()))?;
        }
        let task = leased.map(|t| {
            if t.was_expired {
                Metrics::inc(&self.shared.metrics.lease_expiries);
                tracing::warn!(task = %t.task_id, experiment = %t.experiment_id, "lease expired; task leased again");
            }
            task_to_proto(t, self.lease_ms() as u64)
        });
        Ok(Response::new(LeaseTaskResponse {
            task,
            retry_after_ms: 250,
            idle,
        }))
    }

    async fn heartbeat(&self, request: Request<HeartbeatRequest>) -> Result<Response<HeartbeatResponse>, Status> {
        let r = request.into_inner();
        require("task_id", &r.task_id)?;
        require("lease_token", &r.lease_token)?;
        self.shared
            .metrics
            .seen(&r.worker_id, |w| w.progress(&r.task_id, r.games_done));
        // Chunk files are measured before the store's lock is taken.
        let chunks = if r.chunks.is_empty() {
            Vec::new()
        } else {
            let (root, reported) = (
                self.shared.config.results.clone(),
                crate::wire::chunks_from_wire(&r.chunks),
            );
            match blocking(move || crate::files::chunks_in(&root, reported)).await? {
                Ok(c) => c,
                Err(why) => {
                    tracing::warn!(task = %r.task_id, worker = %r.worker_id, reason = %why, "chunks refused");
                    Vec::new()
                }
            }
        };
        let outcome = self
            .shared
            .store()
            .heartbeat(
                LeaseRef {
                    task_id: &r.task_id,
                    token: &r.lease_token,
                },
                r.games_done,
                self.lease_ms(),
                &r.worker_id,
                &chunks,
            )
            .map_err(status)?;
        Ok(Response::new(match outcome {
            HeartbeatOutcome::Valid { cancel, recorded } => {
                Metrics::add(&self.shared.metrics.chunks, recorded as u64);
                HeartbeatResponse {
                    lease_valid: true,
                    cancel,
                    lease_ms: self.lease_ms() as u64,
                    chunks_recorded: recorded as u64,
                }
            }
            HeartbeatOutcome::Invalid => HeartbeatResponse {
                lease_valid: false,
                cancel: false,
                lease_ms: 0,
                chunks_recorded: 0,
            },
            HeartbeatOutcome::BadProgress { games } => {
                return Err(Status::invalid_argument(format!(
                    "games_done = {} but task {} holds {games} games",
                    r.games_done, r.task_id
                )));
            }
        }))
    }

    async fn complete_task(
        &self,
        request: Request<CompleteTaskRequest>,
    ) -> Result<Response<CompleteTaskResponse>, Status> {
        let r = request.into_inner();
        require_worker_id(&r.worker_id)?;
        require("task_id", &r.task_id)?;
        require("lease_token", &r.lease_token)?;
        check_len("checksum", &r.checksum, 128)?;
        check_len("file_sha256", &r.file_sha256, 128)?;
        check_len("temp_file", &r.temp_file, jobs::MAX_PATH_BYTES)?;
        let shared = Arc::clone(&self.shared);
        let (task, worker, rows) = (r.task_id.clone(), r.worker_id.clone(), r.rows);
        let outcome = blocking(move || complete(&shared, &r)).await?.map_err(status)?;
        self.shared.metrics.update(&worker, |w| {
            if matches!(outcome, CompleteOutcome::Accepted { .. })
                && jobs::layout::Stage::of_task_id(&task) == Some(jobs::layout::Stage::Games)
            {
                w.progress(&task, rows);
            }
            w.holds(None);
        });
        Ok(Response::new(match outcome {
            CompleteOutcome::Accepted {
                final_file,
                check,
                checks_added,
            } => {
                Metrics::inc(&self.shared.metrics.completions);
                Metrics::add(&self.shared.metrics.checks_added, checks_added);
                match check {
                    Some(crate::store::CheckOutcome::Passed) => Metrics::inc(&self.shared.metrics.checks_passed),
                    Some(crate::store::CheckOutcome::Disputed) => {
                        Metrics::inc(&self.shared.metrics.checks_failed);
                        tracing::warn!(task = %task, checker = %worker, "cross-check disagrees: a third worker decides");
                    }
                    Some(crate::store::CheckOutcome::Failed {
                        worker: bad, requeued, ..
                    }) => {
                        tracing::error!(task = %task, checker = %worker, %bad, requeued, "cross-check failed: worker marked bad, its games are played again");
                    }
                    _ => {}
                }
                CompleteTaskResponse {
                    accepted: true,
                    reason: String::new(),
                    final_file,
                }
            }
            CompleteOutcome::Refused(reason) => {
                Metrics::inc(&self.shared.metrics.stale_completions);
                if reason.starts_with(jobs::sprt::STOPPED) {
                    // Expected: the test decided while this task was played.
                    tracing::info!(%task, %worker, %reason, "completion not needed");
                } else {
                    tracing::warn!(%task, %worker, %reason, "completion refused");
                }
                CompleteTaskResponse {
                    accepted: false,
                    reason,
                    final_file: String::new(),
                }
            }
        }))
    }

    async fn fail_task(&self, request: Request<FailTaskRequest>) -> Result<Response<FailTaskResponse>, Status> {
        let r = request.into_inner();
        require_worker_id(&r.worker_id)?;
        require("task_id", &r.task_id)?;
        require("lease_token", &r.lease_token)?;
        let mut error = r.error;
        truncate_chars(&mut error, 8192);
        let outcome = self
            .shared
            .store()
            .fail(&r.worker_id, &r.task_id, &r.lease_token, &error, r.retryable, r.release)
            .map_err(status)?;
        self.shared.metrics.update(&r.worker_id, |w| {
            w.failures += u64::from(!r.release);
            w.holds(None);
        });
        let (accepted, reason) = record_failure(&self.shared, &r.task_id, &r.worker_id, &error, outcome);
        Ok(Response::new(FailTaskResponse { accepted, reason }))
    }
}

/// Counts and logs what a failure did; whether it was taken, and why not.
fn record_failure(shared: &Shared, task: &str, worker: &str, error: &str, outcome: FailOutcome) -> (bool, String) {
    match outcome {
        FailOutcome::Requeued => {
            Metrics::inc(&shared.metrics.retries);
            tracing::warn!(%task, %worker, %error, "task failed; it will be retried");
            (true, String::new())
        }
        FailOutcome::Released => (true, String::new()),
        FailOutcome::TaskFailed => {
            Metrics::inc(&shared.metrics.tasks_failed);
            tracing::error!(%task, %worker, %error, "task failed for good; experiment failed");
            (true, String::new())
        }
        FailOutcome::Refused(reason) => (false, reason),
    }
}

/// Removes the files of work a cross-check's verdict sends back
/// (`remove`, relative to the results root; a directory with all in it).
fn remove_redone(root: &std::path::Path, remove: &[String]) {
    for rel in remove {
        let Ok(path) = jobs::layout::confine(root, rel) else {
            tracing::warn!(path = %rel, "a redone file outside the results root is left alone");
            continue;
        };
        let gone = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        match gone {
            Ok(()) => tracing::info!(path = %path.display(), "removed: a bad worker's work is redone"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::error!(path = %path.display(), error = %e, "could not remove a bad worker's work"),
        }
    }
}

/// A completion: the lease is checked, then the file it names (outside the
/// store's lock: hashing a partition takes a moment), then it is recorded.
/// A missing or mismatched file counts as a failure of that worker.
fn complete(shared: &Shared, r: &CompleteTaskRequest) -> Result<CompleteOutcome, StoreError> {
    use crate::files::{Completion, Refusal, check_completion};
    let target = match shared.store().completion_target(&r.task_id, &r.lease_token)? {
        Ok(t) => t,
        Err(reason) => return Ok(CompleteOutcome::Refused(reason)),
    };
    let c = Completion {
        worker_id: &r.worker_id,
        task_id: &r.task_id,
        rows: r.rows,
        checksum: &r.checksum,
        temp_file: &r.temp_file,
        file_bytes: r.file_bytes,
        file_sha256: &r.file_sha256,
    };
    let chunks = match crate::files::chunks_in(&shared.config.results, crate::wire::chunks_from_wire(&r.chunks)) {
        Ok(c) => c,
        Err(reason) => return Ok(CompleteOutcome::Refused(reason)),
    };
    // A games task's spec, read once: the side tables it must have and
    // its `[stop] sprt`.
    let spec = (target.stage == jobs::layout::Stage::Games)
        .then(|| shared.spec(&target.experiment_id, &target.spec_toml))
        .flatten();
    let sprt = spec.as_ref().and_then(|s| s.stop);
    let checked = check_completion(&shared.config.results, &target, &c, spec.as_deref()).and_then(|f| {
        // `[stop] sprt`: the shard's paired outcomes, read from the file
        // just checked, kept with the task for the test.
        let stats = match sprt {
            Some(_) => Some(crate::files::pair_stats(&shared.config.results, &r.temp_file).map_err(Refusal::File)?),
            None => None,
        };
        Ok((f, stats))
    });
    let outcome = match checked {
        Ok((f, stats)) => {
            let lease = LeaseRef {
                task_id: &r.task_id,
                token: &r.lease_token,
            };
            let done = Completed {
                rows: r.rows,
                checksum: &r.checksum,
                temp_file: &r.temp_file,
                final_file: &f.final_file,
                file: (f.bytes, &f.sha256),
                placed: f.placed,
                stats: stats.as_deref(),
            };
            let by = Reporter {
                worker: &r.worker_id,
                chunks: &chunks,
                // An external agent's games are not a pure function of
                // the spec: no cross-check can replay them.
                check_fraction: if spec.as_deref().is_some_and(jobs::Spec::has_external_agents) {
                    0.0
                } else {
                    shared.config.check_fraction
                },
            };
            // A training run's generations to redo lose their files before
            // the verdict is committed, so before any of their tasks can be
            // leased again.
            let outcome = shared.store().complete_then(lease, &done, &by, |outcome| {
                if let CompleteOutcome::Accepted {
                    check: Some(crate::store::CheckOutcome::Failed { remove, .. }),
                    ..
                } = outcome
                {
                    remove_redone(&shared.config.results, remove);
                }
            })?;
            if let (Some(sprt), Some(_)) = (sprt, &stats)
                && let Some((shard, files)) = shared.store().sprt_stop(&target.experiment_id, &sprt)?
            {
                for f in files {
                    if let Ok(p) = jobs::layout::confine(&shared.config.results, &f) {
                        let _ = std::fs::remove_file(p);
                    }
                }
                tracing::info!(experiment = %target.experiment_id, shard, "the SPRT decided: no games after this shard");
            }
            outcome
        }
        // A refused completion's temporary file is never renamed: removed
        // here, whether or not its worker is still there to do it.
        Err(Refusal::Request(reason)) => {
            crate::files::discard_temp(&shared.config.results, &target, &r.temp_file);
            CompleteOutcome::Refused(reason)
        }
        Err(Refusal::File(reason)) => {
            crate::files::discard_temp(&shared.config.results, &target, &r.temp_file);
            let failed = shared
                .store()
                .fail(&r.worker_id, &r.task_id, &r.lease_token, &reason, true, false)?;
            record_failure(shared, &r.task_id, &r.worker_id, &reason, failed);
            CompleteOutcome::Refused(reason)
        }
    };
    Ok(outcome)
}
