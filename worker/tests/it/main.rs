//! The worker crate against a scripted coordinator on loopback: what it
//! sends, and how it behaves when the coordinator fails or refuses it.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proto::coordinator_server::{Coordinator, CoordinatorServer};
use proto::*;
use tonic::{Request, Response, Status};

/// A coordinator that hands out one task of a stage no worker can run, and
/// answers `FailTask` with `Unavailable` `fail_first` times before taking it.
#[derive(Default)]
struct Scripted {
    fail_first: u32,
    refuse_leases: bool,
    seen: Mutex<Seen>,
}

#[derive(Default, Debug, Clone)]
struct Seen {
    leases: Vec<LeaseTaskRequest>,
    fail_calls: u32,
    failures: Vec<FailTaskRequest>,
}

/// The served side of a shared script.
struct Fake(Arc<Scripted>);

impl std::ops::Deref for Fake {
    type Target = Scripted;
    fn deref(&self) -> &Scripted {
        &self.0
    }
}

type Stream = Pin<Box<dyn tokio_stream::Stream<Item = Result<Experiment, Status>> + Send>>;

#[tonic::async_trait]
impl Coordinator for Fake {
    async fn submit_experiment(
        &self,
        _: Request<SubmitExperimentRequest>,
    ) -> Result<Response<SubmitExperimentResponse>, Status> {
        Err(Status::unimplemented("scripted"))
    }
    async fn get_experiment(&self, _: Request<GetExperimentRequest>) -> Result<Response<Experiment>, Status> {
        Err(Status::unimplemented("scripted"))
    }
    async fn list_experiments(
        &self,
        _: Request<ListExperimentsRequest>,
    ) -> Result<Response<ListExperimentsResponse>, Status> {
        Err(Status::unimplemented("scripted"))
    }
    type WatchExperimentStream = Stream;
    async fn watch_experiment(&self, _: Request<GetExperimentRequest>) -> Result<Response<Stream>, Status> {
        Err(Status::unimplemented("scripted"))
    }
    async fn cancel_experiment(&self, _: Request<CancelExperimentRequest>) -> Result<Response<Experiment>, Status> {
        Err(Status::unimplemented("scripted"))
    }
    async fn lease_task(&self, r: Request<LeaseTaskRequest>) -> Result<Response<LeaseTaskResponse>, Status> {
        let mut seen = self.seen.lock().unwrap();
        seen.leases.push(r.into_inner());
        if self.refuse_leases {
            return Err(Status::failed_precondition("not this coordinator's results root"));
        }
        let first = seen.leases.len() == 1;
        Ok(Response::new(LeaseTaskResponse {
            task: first.then(|| Task {
                experiment_id: "x-000000000000".into(),
                task_id: "later-00000".into(),
                stage: "a-stage-from-the-future".into(),
                spec_toml: jobs::SMOKE_SPEC.into(),
                spec_hash: jobs::Spec::from_toml(jobs::SMOKE_SPEC).unwrap().hash(),
                output: "x".into(),
                lease_token: "t".into(),
                lease_ms: 30_000,
                ..Default::default()
            }),
            retry_after_ms: 10,
            idle: !first,
        }))
    }
    async fn heartbeat(&self, _: Request<HeartbeatRequest>) -> Result<Response<HeartbeatResponse>, Status> {
        Ok(Response::new(HeartbeatResponse {
            lease_valid: true,
            cancel: false,
            lease_ms: 30_000,
            chunks_recorded: 0,
        }))
    }
    async fn complete_task(&self, _: Request<CompleteTaskRequest>) -> Result<Response<CompleteTaskResponse>, Status> {
        Err(Status::unimplemented("scripted"))
    }
    async fn fail_task(&self, r: Request<FailTaskRequest>) -> Result<Response<FailTaskResponse>, Status> {
        let mut seen = self.seen.lock().unwrap();
        seen.fail_calls += 1;
        if seen.fail_calls <= self.fail_first {
            return Err(Status::unavailable("the coordinator is restarting"));
        }
        seen.failures.push(r.into_inner());
        Ok(Response::new(FailTaskResponse {
            accepted: true,
            reason: String::new(),
        }))
    }
}

/// Serves `script` on loopback; runs one worker with `results` until it stops.
async fn run_worker(script: Arc<Scripted>, results: &std::path::Path) -> Result<worker::Stats, worker::WorkerError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(CoordinatorServer::new(Fake(script)))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let config = worker::Config {
        chunk_every: worker::DEFAULT_CHUNK_EVERY,
        coordinator: url,
        results: results.to_path_buf(),
        threads: 1,
        fit_threads: 0,
        worker_id: "w".into(),
        exit_when_done: true,
        experiment: None,
        grace: Duration::from_secs(1),
        auth: Default::default(),
        tls: None,
    };
    tokio::time::timeout(Duration::from_secs(30), worker::run(config, std::future::pending()))
        .await
        .expect("the worker stops")
}

#[tokio::test]
async fn a_failure_the_coordinator_cannot_take_yet_is_reported_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(jobs::layout::RESULTS_MARKER), "m-123\n").unwrap();
    let script = Arc::new(Scripted {
        fail_first: 3,
        ..Default::default()
    });
    let stats = run_worker(Arc::clone(&script), dir.path()).await.unwrap();
    assert_eq!(stats.tasks_failed, 1);
    let seen = script.seen.lock().unwrap().clone();
    assert_eq!(seen.fail_calls, 4, "three refused tries, then the one taken");
    assert_eq!(seen.failures.len(), 1);
    assert!(
        seen.failures[0].error.contains("a-stage-from-the-future"),
        "{:?}",
        seen.failures[0]
    );
    // Every lease carried the marker the worker read and its results root.
    assert!(
        seen.leases.iter().all(|l| l.results_marker == "m-123"),
        "{:?}",
        seen.leases
    );
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(seen.leases[0].results_root, root.display().to_string());
    assert_eq!(
        stats.to_string(),
        "0 tasks completed (0 games), 1 task failed, 0 completions refused by the coordinator"
    );
}

#[tokio::test]
async fn a_worker_the_coordinator_refuses_stops_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Scripted {
        refuse_leases: true,
        ..Default::default()
    });
    let err = run_worker(Arc::clone(&script), dir.path()).await.unwrap_err();
    assert!(err.to_string().contains("results root"), "{err}");
    let tries = script.seen.lock().unwrap().leases.len();
    assert!(
        (2..=10).contains(&tries),
        "it reads the marker again a few times, then stops: {tries}"
    );
}
