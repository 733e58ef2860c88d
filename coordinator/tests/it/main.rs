//! The coordinator served for real on loopback, called through gRPC.

use std::path::{Path, PathBuf};
use std::time::Duration;

use proto::coordinator_client::CoordinatorClient;
use proto::*;
use tonic::transport::Channel;

mod bad_input;
mod integrity;
mod jobs_e2e;

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
    let handle = tokio::spawn(coordinator::serve_with_metrics(
        listener,
        Some(metrics_listener),
        config,
        async {
            let _ = rx.await;
        },
    ));
    Server {
        url,
        metrics,
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
    c.submit_experiment(SubmitExperimentRequest { spec_toml: spec.into() })
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

#[tokio::test]
async fn a_stale_completion_is_refused() {
    let mut s = start(Duration::from_millis(300)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    assert_eq!(e.games_total, 80);
    let a = lease(&mut c, &s, "worker-a").await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    // The lease expired: the same task goes to another worker with a new token.
    let b = lease(&mut c, &s, "worker-b").await.unwrap();
    assert_eq!(a.task_id, b.task_id);
    assert_ne!(a.lease_token, b.lease_token);
    let late = complete(&mut c, &s, &a, &a.lease_token).await;
    assert!(!late.accepted);
    assert!(late.reason.contains("stale lease"), "{}", late.reason);
    let hb = c
        .heartbeat(HeartbeatRequest {
            chunks: Vec::new(),
            worker_id: "worker-a".into(),
            task_id: a.task_id.clone(),
            lease_token: a.lease_token.clone(),
            games_done: 3,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!hb.lease_valid);
    // A task nobody leased with this token cannot be completed either.
    let never = complete(&mut c, &s, &b, "0123456789abcdef").await;
    assert!(!never.accepted);
    let good = complete(&mut c, &s, &b, &b.lease_token).await;
    assert!(good.accepted, "{}", good.reason);
    assert_eq!(
        good.final_file,
        format!("{}/games/part-{:05}.parquet", b.output, b.shard)
    );
    // A second completion with the same token is stale too.
    assert!(!complete(&mut c, &s, &b, &b.lease_token).await.accepted);
    s.stop().await;
}

#[tokio::test]
async fn a_poisoned_task_fails_the_experiment_after_three_workers() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    for (i, w) in ["w1", "w2", "w3"].iter().enumerate() {
        let t = lease(&mut c, &s, w).await.unwrap();
        assert_eq!(t.task_id, "games-00000", "the failed task is retried first");
        assert!(fail(&mut c, w, &t, "disk on fire", true).await.accepted);
        let now = get(&mut c, &e.id).await;
        let want = if i < 2 {
            ExperimentState::Running
        } else {
            ExperimentState::Failed
        };
        assert_eq!(now.state, want as i32, "after failure {}", i + 1);
    }
    let failed = get(&mut c, &e.id).await;
    assert!(failed.error.contains("games-00000"), "{}", failed.error);
    assert!(failed.error.contains("3 workers"), "{}", failed.error);
    assert!(failed.error.contains("disk on fire"), "{}", failed.error);
    assert!(
        lease(&mut c, &s, "w4").await.is_none(),
        "a failed experiment dispatches nothing"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_non_retryable_failure_fails_at_once_and_a_release_is_no_failure() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w1").await.unwrap();
    let r = c
        .fail_task(FailTaskRequest {
            worker_id: "w1".into(),
            task_id: t.task_id.clone(),
            lease_token: t.lease_token.clone(),
            error: "shutting down".into(),
            retryable: true,
            release: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(r.accepted);
    let again = lease(&mut c, &s, "w2").await.unwrap();
    assert_eq!(again.task_id, t.task_id);
    assert!(fail(&mut c, "w2", &again, "bad spec", false).await.accepted);
    let now = get(&mut c, &e.id).await;
    assert_eq!(now.state, ExperimentState::Failed as i32);
    assert!(now.error.contains("cannot be retried: bad spec"), "{}", now.error);
    // Failing with a stale token is refused.
    assert!(!fail(&mut c, "w2", &again, "x", true).await.accepted);
    // Resubmitting the same spec resumes it.
    let r = c
        .submit_experiment(SubmitExperimentRequest { spec_toml: SPEC.into() })
        .await
        .unwrap()
        .into_inner();
    assert!(!r.created);
    assert_eq!(r.experiment.unwrap().state, ExperimentState::Running as i32);
    s.stop().await;
}

#[tokio::test]
async fn cancel_stops_dispatch_and_tells_workers() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w1").await.unwrap();
    let cancelled = c
        .cancel_experiment(CancelExperimentRequest { id: e.id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(cancelled.state, ExperimentState::Cancelled as i32);
    let hb = c
        .heartbeat(HeartbeatRequest {
            chunks: Vec::new(),
            worker_id: "w1".into(),
            task_id: t.task_id.clone(),
            lease_token: t.lease_token.clone(),
            games_done: 1,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(hb.cancel);
    assert!(lease(&mut c, &s, "w2").await.is_none());
    assert!(!complete(&mut c, &s, &t, &t.lease_token).await.accepted);
    s.stop().await;
}

#[tokio::test]
async fn bad_requests_get_clear_errors_and_the_server_keeps_serving() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let bad = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.replace("repeats = 1", "repeats = 0"),
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    assert!(bad.message().contains("grid.repeats = 0"), "{}", bad.message());
    let missing = c
        .get_experiment(GetExperimentRequest { id: "nope".into() })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    assert!(missing.message().contains("\"nope\""));
    let no_worker = c.lease_task(lease_request(&s, "")).await.unwrap_err();
    assert_eq!(no_worker.code(), tonic::Code::InvalidArgument);
    assert!(no_worker.message().contains("worker_id is required"));
    let e = submit(&mut c, SPEC).await;
    let same = c
        .submit_experiment(SubmitExperimentRequest { spec_toml: SPEC.into() })
        .await
        .unwrap()
        .into_inner();
    assert!(!same.created);
    assert_eq!(same.experiment.unwrap().id, e.id);
    let clash = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.replace("seed = 5", "seed = 6"),
        })
        .await
        .unwrap_err();
    assert_eq!(clash.code(), tonic::Code::AlreadyExists);
    assert!(clash.message().contains("output = \"tiny\""), "{}", clash.message());
    // A completion naming a file outside the experiment's games directory is refused.
    let t = lease(&mut c, &s, "w").await.unwrap();
    let r = c
        .complete_task(completion(&s, "w", &t, t.games, "x", "../../etc/passwd"))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.accepted && r.reason.contains("hidden file"), "{}", r.reason);
    let r = complete(&mut c, &s, &Task { games: 3, ..t.clone() }, &t.lease_token).await;
    assert!(!r.accepted && r.reason.contains("20 games but 3 rows"), "{}", r.reason);
    assert_eq!(
        c.list_experiments(ListExperimentsRequest {})
            .await
            .unwrap()
            .into_inner()
            .experiments
            .len(),
        1
    );
    s.stop().await;
}

#[tokio::test]
async fn state_survives_a_restart_in_a_wal_sqlite_file() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w1").await.unwrap();
    s.stop().await;
    let state = s.state();
    assert_eq!(coordinator::Store::open(&state).unwrap().journal_mode().unwrap(), "wal");
    let dir = std::mem::replace(&mut s.dir, tempfile::tempdir().unwrap());
    let mut s2 = start_in(dir, Duration::from_secs(30)).await;
    let mut c = client(&s2.url).await;
    let again = get(&mut c, &e.id).await;
    assert_eq!(again.state, ExperimentState::Running as i32);
    // The lease taken before the restart still holds: its worker may complete.
    let next = lease(&mut c, &s2, "w2").await.unwrap();
    assert_ne!(next.task_id, t.task_id);
    assert!(complete(&mut c, &s2, &t, &t.lease_token).await.accepted);
    s2.stop().await;
}

#[tokio::test]
async fn grpc_reflection_lists_the_service() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let mut s = start(Duration::from_secs(30)).await;
    client(&s.url).await;
    let channel = tonic::transport::Endpoint::from_shared(s.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut r = ServerReflectionClient::new(channel);
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream = r
        .server_reflection_info(tokio_stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let msg = stream.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = msg.message_response else {
        panic!("unexpected reflection answer");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"muggins.v1.Coordinator".to_string()), "{names:?}");
    s.stop().await;
}

pub fn read_rows(dir: &Path) -> Vec<jobs::GameRow> {
    let mut rows = Vec::new();
    for p in jobs::partitions(dir).unwrap() {
        rows.extend(jobs::read_partition(&p).unwrap().into_iter().map(|(_, r)| r));
    }
    rows
}

#[tokio::test]
async fn a_configured_token_is_required_on_every_rpc() {
    let token = "s3cret-token-0123456789";
    let mut s = start_with(tempfile::tempdir().unwrap(), Duration::from_secs(30), Some(token)).await;
    let channel = channel(&s.url).await;
    for bad in [None, Some("wrong-token-0123456789"), Some("s3cret-token-012345678")] {
        let mut c = proto::client::new(channel.clone(), bad).unwrap();
        let e = c.list_experiments(ListExperimentsRequest {}).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated, "{bad:?}");
        assert!(e.message().contains("bearer token"));
        assert!(!e.message().contains(token), "the token is never echoed");
        let e = c.lease_task(lease_request(&s, "w")).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
        let e = c
            .submit_experiment(SubmitExperimentRequest { spec_toml: SPEC.into() })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
    }
    // Reflection is behind the token too.
    {
        use tonic_reflection::pb::v1::ServerReflectionRequest;
        use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
        let mut r = ServerReflectionClient::new(channel.clone());
        let req = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let e = r
            .server_reflection_info(tokio_stream::iter(vec![req]))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
    }
    let mut c = proto::client::new(channel, Some(token)).unwrap();
    let e = c
        .submit_experiment(SubmitExperimentRequest { spec_toml: SPEC.into() })
        .await
        .unwrap()
        .into_inner();
    assert!(e.created);
    assert!(
        c.lease_task(lease_request(&s, "w"))
            .await
            .unwrap()
            .into_inner()
            .task
            .is_some()
    );
    assert!(
        proto::client::new(
            tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy(),
            Some("has space")
        )
        .is_err()
    );
    assert_eq!(format!("{:?}", coordinator::Token::new(Some(token))), "Token(set)");
    s.stop().await;
}

/// `GET /metrics` over a plain HTTP/1.1 request.
pub async fn scrape(addr: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut body = String::new();
    conn.read_to_string(&mut body).await.unwrap();
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    body
}

fn metric(text: &str, line_start: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(line_start))
        .unwrap_or_else(|| panic!("no {line_start} in {text}"))
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn metrics_count_tasks_games_workers_and_refusals() {
    let mut s = start(Duration::from_millis(300)).await;
    let mut c = client(&s.url).await;
    submit(&mut c, SPEC).await;
    let a = lease(&mut c, &s, "worker-a").await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let b = lease(&mut c, &s, "worker-b").await.unwrap();
    assert!(!complete(&mut c, &s, &a, &a.lease_token).await.accepted);
    assert!(complete(&mut c, &s, &b, &b.lease_token).await.accepted);
    let t = lease(&mut c, &s, "worker-b").await.unwrap();
    assert!(fail(&mut c, "worker-b", &t, "flaky", true).await.accepted);
    let text = scrape(s.metrics).await;
    assert!(text.contains("# TYPE muggins_tasks gauge"), "{text}");
    assert_eq!(metric(&text, "muggins_tasks{stage=\"games\",state=\"done\"}"), 1.0);
    assert_eq!(metric(&text, "muggins_tasks{stage=\"games\",state=\"pending\"}"), 3.0);
    assert_eq!(metric(&text, "muggins_experiments{state=\"running\"}"), 1.0);
    assert_eq!(metric(&text, "muggins_games_completed "), 20.0);
    assert!(metric(&text, "muggins_games_per_second ") > 0.0);
    assert_eq!(metric(&text, "muggins_workers_alive "), 2.0);
    assert_eq!(metric(&text, "muggins_lease_expiries_total "), 1.0);
    assert_eq!(metric(&text, "muggins_stale_completions_rejected_total "), 1.0);
    assert_eq!(metric(&text, "muggins_task_retries_total "), 1.0);
    assert_eq!(metric(&text, "muggins_completions_total "), 1.0);
    s.stop().await;
}

/// The KEDA rule's query in deploy/kubernetes/keda/scaledobject.yaml,
/// `sum(muggins_tasks{state=~"pending|leased"})`, over a scrape.
fn keda_demand(text: &str) -> f64 {
    let rule = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/kubernetes/keda/scaledobject.yaml"
    ))
    .unwrap();
    assert!(
        rule.contains(r#"sum(muggins_tasks{state=~"pending|leased"})"#),
        "{rule}"
    );
    text.lines()
        .filter(|l| {
            l.starts_with("muggins_tasks{") && (l.contains(r#"state="pending""#) || l.contains(r#"state="leased""#))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

#[tokio::test]
async fn a_cancelled_experiments_tasks_are_not_pending_so_workers_scale_to_zero() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let _held = lease(&mut c, &s, "worker-a").await.unwrap();
    assert!(keda_demand(&scrape(s.metrics).await) > 0.0);
    c.cancel_experiment(CancelExperimentRequest { id: e.id.clone() })
        .await
        .unwrap();
    let text = scrape(s.metrics).await;
    assert_eq!(keda_demand(&text), 0.0, "{text}");
    assert!(
        metric(&text, "muggins_tasks{stage=\"games\",state=\"abandoned\"}") >= 3.0,
        "{text}"
    );
    assert!(!text.contains(r#"state="pending""#), "{text}");
    s.stop().await;
}

#[tokio::test]
async fn tls_with_rustls_serves_clients_that_trust_the_certificate() {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let tls = coordinator::Tls {
        cert_pem: ck.cert.pem().into_bytes(),
        key_pem: ck.signing_key.serialize_pem().into_bytes(),
    };
    assert_eq!(format!("{tls:?}"), "Tls(cert, key)");
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut config = coordinator::Config::new(dir.path().join("state.sqlite"), dir.path().join("results"));
    config.tls = Some(tls);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(coordinator::serve(listener, config, async {
        let _ = rx.await;
    }));
    let trust = proto::client::ClientTls {
        ca_pem: ck.cert.pem().into_bytes(),
        domain: None,
    };
    let url = format!("https://localhost:{port}");
    let mut ok = None;
    for _ in 0..100 {
        if let Ok(ch) = proto::client::endpoint(&url, Some(&trust)).unwrap().connect().await {
            ok = Some(ch);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut c = proto::client::new(ok.expect("a TLS connection"), None).unwrap();
    let e = c
        .submit_experiment(SubmitExperimentRequest { spec_toml: SPEC.into() })
        .await
        .unwrap()
        .into_inner();
    assert!(e.created);
    // A plaintext client gets nowhere.
    let plain = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await;
    if let Ok(ch) = plain {
        let mut c = proto::client::new(ch, None).unwrap();
        assert!(c.list_experiments(ListExperimentsRequest {}).await.is_err());
    }
    // A client that does not trust the certificate cannot connect.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let wrong = proto::client::ClientTls {
        ca_pem: other.cert.pem().into_bytes(),
        domain: None,
    };
    let res = proto::client::endpoint(&url, Some(&wrong)).unwrap().connect().await;
    match res {
        Err(_) => {}
        Ok(ch) => assert!(
            proto::client::new(ch, None)
                .unwrap()
                .list_experiments(ListExperimentsRequest {})
                .await
                .is_err()
        ),
    }
    let _ = tx.send(());
    handle.await.unwrap().unwrap();
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
