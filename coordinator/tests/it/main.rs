//! The coordinator served for real on loopback, called through gRPC.
//! This file holds the shared setup (a server, a client and the RPC
//! helpers); the tests are in the modules, by topic.

use std::path::{Path, PathBuf};
use std::time::Duration;

use proto::coordinator_client::CoordinatorClient;
use proto::*;
use tonic::transport::Channel;

mod bad_input;
mod confinement;
mod integrity;
mod jobs_e2e;
mod leases;
mod metrics;
mod transport;
mod web;

const SPEC: &str = r#"
name = "tiny"
seed = 5
[grid]
information_source = ["oracle"]
observability = ["full", "partial"]
target = ["scorer"]
starting_states = "0-19"
engine = ["mstar", "expectimax"]
repeats = 1
[shards]
games = 20
"#;

#[derive(Debug)]
pub struct Server {
    pub url: String,
    /// Where `GET /metrics` answers.
    pub metrics: std::net::SocketAddr,
    /// Where the web view answers.
    pub web: std::net::SocketAddr,
    pub dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<Result<(), coordinator::ServeError>>>,
}

impl Server {
    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state.sqlite")
    }
    pub fn results(&self) -> PathBuf {
        self.dir.path().join("results")
    }
    pub async fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(h) = self.handle.take() {
            h.await.unwrap().unwrap();
        }
    }
}

pub async fn start_in(dir: tempfile::TempDir, lease: Duration) -> Server {
    start_with(dir, lease, None).await
}

pub async fn start_with(dir: tempfile::TempDir, lease: Duration, token: Option<&str>) -> Server {
    let token = token.map(str::to_string);
    start_config(dir, move |config| {
        config.lease = lease;
        config.token = coordinator::Token::new(token.as_deref());
    })
    .await
}

/// Starts a coordinator in `dir` (sweeping every 50 ms) with `adjust` applied to its config.
pub async fn start_config(dir: tempfile::TempDir, adjust: impl FnOnce(&mut coordinator::Config)) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut config = coordinator::Config::new(dir.path().join("state.sqlite"), dir.path().join("results"));
    config.sweep_every = Duration::from_millis(50);
    adjust(&mut config);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let metrics_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics = metrics_listener.local_addr().unwrap();
    let web_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let web = web_listener.local_addr().unwrap();
    let extra = coordinator::Listeners {
        metrics: Some(metrics_listener),
        web: Some(web_listener),
    };
    let handle = tokio::spawn(coordinator::serve_all(listener, extra, config, async {
        let _ = rx.await;
    }));
    Server {
        url,
        metrics,
        web,
        dir,
        stop: Some(tx),
        handle: Some(handle),
    }
}

pub async fn start(lease: Duration) -> Server {
    start_in(tempfile::tempdir().unwrap(), lease).await
}

pub async fn client(url: &str) -> CoordinatorClient<Channel> {
    for _ in 0..100 {
        if let Ok(c) = CoordinatorClient::connect(url.to_string()).await {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("coordinator at {url} did not answer");
}

pub async fn submit(c: &mut CoordinatorClient<Channel>, spec: &str) -> Experiment {
    c.submit_experiment(SubmitExperimentRequest {
        spec_toml: spec.into(),
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .experiment
    .unwrap()
}

/// The results-root marker a worker of `results` sends when it leases.
pub fn marker(results: &Path) -> String {
    std::fs::read_to_string(results.join(jobs::layout::RESULTS_MARKER))
        .map(|m| m.trim().to_string())
        .unwrap_or_default()
}

/// A lease request from `worker`, which sees the server's results root.
pub fn lease_request(s: &Server, worker: &str) -> LeaseTaskRequest {
    LeaseTaskRequest {
        worker_id: worker.into(),
        threads: 1,
        results_marker: marker(&s.results()),
        results_root: s.results().display().to_string(),
        experiment_id: String::new(),
    }
}

async fn lease(c: &mut CoordinatorClient<Channel>, s: &Server, worker: &str) -> Option<Task> {
    c.lease_task(lease_request(s, worker)).await.unwrap().into_inner().task
}

/// A completion of `temp` (relative to the results root) with the file's
/// real size and SHA-256.
pub fn completion(s: &Server, worker: &str, t: &Task, rows: u64, checksum: &str, temp: &str) -> CompleteTaskRequest {
    let (file_bytes, file_sha256) = jobs::layout::file_digest(&s.results().join(temp)).unwrap_or((0, "0".repeat(64)));
    CompleteTaskRequest {
        chunks: Vec::new(),
        worker_id: worker.into(),
        task_id: t.task_id.clone(),
        lease_token: t.lease_token.clone(),
        rows,
        checksum: checksum.into(),
        temp_file: temp.into(),
        file_bytes,
        file_sha256,
    }
}

/// Completes `t` under `token` with a stand-in partition written where the
/// worker would write it.
async fn complete(c: &mut CoordinatorClient<Channel>, s: &Server, t: &Task, token: &str) -> CompleteTaskResponse {
    let temp = format!("{}/games/.part-{:05}.tmp", t.output, t.shard);
    std::fs::write(s.results().join(&temp), b"a stand-in partition").unwrap();
    let mut req = completion(s, "w", t, t.games, "x", &temp);
    req.lease_token = token.into();
    c.complete_task(req).await.unwrap().into_inner()
}

async fn fail(
    c: &mut CoordinatorClient<Channel>,
    worker: &str,
    t: &Task,
    error: &str,
    retryable: bool,
) -> FailTaskResponse {
    c.fail_task(FailTaskRequest {
        worker_id: worker.into(),
        task_id: t.task_id.clone(),
        lease_token: t.lease_token.clone(),
        error: error.into(),
        retryable,
        release: false,
    })
    .await
    .unwrap()
    .into_inner()
}

async fn get(c: &mut CoordinatorClient<Channel>, id: &str) -> Experiment {
    c.get_experiment(GetExperimentRequest { id: id.into() })
        .await
        .unwrap()
        .into_inner()
}

pub fn read_rows(dir: &Path) -> Vec<jobs::GameRow> {
    let mut rows = Vec::new();
    for p in jobs::partitions(dir).unwrap() {
        rows.extend(jobs::read_partition(&p).unwrap().into_iter().map(|(_, r)| r));
    }
    rows
}

/// A plain channel to `url`, once the server answers.
pub async fn channel(url: &str) -> tonic::transport::Channel {
    for _ in 0..100 {
        if let Ok(ch) = tonic::transport::Endpoint::from_shared(url.to_string())
            .unwrap()
            .connect()
            .await
        {
            return ch;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no server at {url}");
}
