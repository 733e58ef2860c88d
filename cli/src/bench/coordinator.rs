//! `muggins bench coordinator`: the coordinator under simulated load. A real
//! coordinator (gRPC on loopback, a SQLite state file, a results root) is
//! started in this process, an experiment of one-game shards is submitted,
//! and N simulated workers lease tasks, heartbeat while they "play" (they
//! only sleep), write a tiny stand-in partition and complete. It prints the
//! RPC rates and latency percentiles, and checks that no task was leased by
//! two workers at once and that every accepted completion is counted done.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use proto::{CompleteTaskRequest, GetExperimentRequest, HeartbeatRequest, LeaseTaskRequest};

use crate::text::plural;

/// The load to simulate.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Simulated workers.
    pub workers: usize,
    /// How long the load runs.
    pub duration: Duration,
    /// A worker's heartbeat period while it holds a task.
    pub heartbeat: Duration,
    /// A task's mean duration (each lasts 0.5 to 1.5 times it).
    pub task: Duration,
    /// gRPC connections the workers share (HTTP/2 multiplexes the rest).
    pub connections: usize,
    /// Whether a viewer keeps the web view open (its pages timed).
    pub view: bool,
}

/// Latencies of one RPC, in microseconds (bounded: one entry per call over
/// the run's fixed duration).
#[derive(Default)]
struct Latencies(Mutex<Vec<u32>>);

impl Latencies {
    fn add(&self, since: Instant) {
        let us = since.elapsed().as_micros().min(u32::MAX as u128) as u32;
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(us);
    }

    /// Calls, and the 50th, 90th, 99th percentiles and the maximum in ms.
    fn summary(&self) -> (usize, [f64; 4]) {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        v.sort_unstable();
        if v.is_empty() {
            return (0, [f64::NAN; 4]);
        }
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
        (
            v.len(),
            [
                at(0.5),
                at(0.9),
                at(0.99),
                *v.last().expect("non-empty") as f64 / 1000.0,
            ],
        )
    }
}

#[derive(Default)]
struct Tally {
    lease: Latencies,
    heartbeat: Latencies,
    complete: Latencies,
    idle: AtomicU64,
    accepted: AtomicU64,
    refused: AtomicU64,
    lost: AtomicU64,
    double: AtomicU64,
    errors: AtomicU64,
    /// The web view's pages (docs/web.md), fetched while the load runs:
    /// the experiments, the experiment's page and the workers page.
    web: [Latencies; 3],
    /// Tasks held right now: task id -> worker.
    held: Mutex<HashMap<String, usize>>,
}

/// The experiment the workers lease from: one-game shards of the thesis's
/// rules, enough for every worker to take a task every half task-length.
fn spec_text(load: &Load) -> String {
    let per_worker = (load.duration.as_secs_f64() / load.task.as_secs_f64() * 2.0).ceil() as u64 + 2;
    let tasks = (load.workers as u64 * per_worker).max(100);
    let repeats = tasks.div_ceil(4200).max(1);
    format!(
        "name = \"bench-coordinator\"\nseed = 1\n[grid]\ninformation_source = [\"oracle\"]\n\
         observability = [\"full\"]\ntarget = [\"scorer\"]\nstarting_states = \"0-4199\"\n\
         engine = [\"expectimax\"]\nrepeats = {repeats}\n[shards]\ngames = 1\n"
    )
}

pub fn run(load: Load) -> Result<()> {
    if load.workers == 0 || load.workers > 100_000 {
        bail!("--workers {}: give 1 to 100,000 simulated workers", load.workers);
    }
    if load.duration.is_zero() || load.duration > Duration::from_secs(3600) {
        bail!("--duration: give 1 to 3,600 seconds");
    }
    let dir = tempfile_dir()?;
    let results = dir.join("results");
    let state = dir.join("state.sqlite");
    let text = spec_text(&load);
    let spec = jobs::Spec::from_toml(&text).expect("the bench's spec is valid");
    println!(
        "muggins bench coordinator: {} over loopback for {} s (heartbeat every {} s, tasks of about {} s, {} \
         shared), {} of one game; state {}",
        plural(load.workers as u64, "simulated worker"),
        load.duration.as_secs(),
        load.heartbeat.as_secs_f64(),
        load.task.as_secs_f64(),
        plural(load.connections as u64, "connection"),
        plural(spec.games(), "task"),
        state.display()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let out = rt.block_on(drive(load, &results, &state, &text));
    std::fs::remove_dir_all(&dir).ok();
    out
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("muggins-bench-coordinator-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

async fn drive(load: Load, results: &std::path::Path, state: &std::path::Path, text: &str) -> Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding a loopback port")?;
    let url = format!("http://{}", listener.local_addr()?);
    let marker = coordinator::ensure_results_marker(results).context("reading the results marker")?;
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let config = coordinator::Config::new(state.to_path_buf(), results.to_path_buf());
    let web = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding a loopback port")?;
    let web_addr = web.local_addr()?;
    let extra = coordinator::Listeners {
        metrics: None,
        web: Some(web),
    };
    let server = tokio::spawn(coordinator::serve_all(listener, extra, config, async move {
        let _ = stop_rx.wait_for(|s| *s).await;
    }));
    let mut clients = Vec::new();
    for _ in 0..load.connections.max(1) {
        let channel = connect(&url).await?;
        clients.push(proto::client::new(channel, None).expect("no token"));
    }
    let submitted = clients[0]
        .submit_experiment(proto::SubmitExperimentRequest {
            spec_toml: text.to_string(),
            // A grid: no training start file.
            start_model: Vec::new(),
        })
        .await
        .context("submitting the bench's experiment")?
        .into_inner();
    let id = submitted.experiment.map(|e| e.id).unwrap_or_default();
    let tally = Arc::new(Tally::default());
    let start = Instant::now();
    let deadline = start + load.duration;
    let mut set = tokio::task::JoinSet::new();
    for w in 0..load.workers {
        let client = clients[w % clients.len()].clone();
        let tally = Arc::clone(&tally);
        let (marker, root) = (marker.clone(), results.display().to_string());
        let results = results.to_path_buf();
        let sim = SimWorker {
            w,
            worker_id: format!("bench-{w}"),
            load,
            client,
            tally,
            deadline,
            marker,
            root,
            results,
        };
        set.spawn(sim.run());
    }
    // A viewer with the web view open: each page in turn, as a browser's
    // refresh would fetch it, for as long as the load runs.
    let viewer = load
        .view
        .then(|| tokio::spawn(view(web_addr, id.clone(), Arc::clone(&tally), deadline)));
    while set.join_next().await.is_some() {}
    let pages = match viewer {
        Some(v) => Some(v.await.unwrap_or(0)),
        None => None,
    };
    let wall = start.elapsed().as_secs_f64();
    // What the coordinator counts done, against the completions it accepted.
    let exp = clients[0]
        .get_experiment(GetExperimentRequest { id: id.clone() })
        .await
        .context("reading the experiment back")?
        .into_inner();
    let done: u64 = exp
        .stages
        .iter()
        .filter(|s| s.name == "games")
        .map(|s| s.tasks_done)
        .sum();
    let _ = stop_tx.send(true);
    match server.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(anyhow::Error::from(e)),
        Err(e) => bail!("the coordinator task failed: {e}"),
    }
    println!(
        "{:<10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "rpc", "calls", "per s", "p50 ms", "p90 ms", "p99 ms", "max ms"
    );
    for (name, l) in [
        ("lease", &tally.lease),
        ("heartbeat", &tally.heartbeat),
        ("complete", &tally.complete),
    ] {
        let (n, [p50, p90, p99, max]) = l.summary();
        println!(
            "{name:<10} {n:>9} {:>9.1} {p50:>9.2} {p90:>9.2} {p99:>9.2} {max:>9.2}",
            n as f64 / wall
        );
    }
    if let Some(pages) = pages {
        println!(
            "{:<22} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "web view page", "fetches", "p50 ms", "p90 ms", "p99 ms", "max ms"
        );
        for (name, l) in ["/", "/experiments/ID", "/workers"].iter().zip(&tally.web) {
            let (n, [p50, p90, p99, max]) = l.summary();
            println!("GET {name:<18} {n:>9} {p50:>9.2} {p90:>9.2} {p99:>9.2} {max:>9.2}");
        }
        if pages == 0 {
            bail!("the web view answered no page");
        }
    }
    let accepted = tally.accepted.load(Ordering::Relaxed);
    let double = tally.double.load(Ordering::Relaxed);
    println!(
        "completions accepted {accepted}, refused {}; leases answered idle {}; leases lost while held {}; RPC \
         errors {}",
        tally.refused.load(Ordering::Relaxed),
        tally.idle.load(Ordering::Relaxed),
        tally.lost.load(Ordering::Relaxed),
        tally.errors.load(Ordering::Relaxed)
    );
    println!(
        "tasks leased by two workers at once: {double}; the coordinator counts {done} tasks done, the workers \
         {accepted}: {}",
        if done == accepted && double == 0 {
            "nothing lost or doubled"
        } else {
            "MISMATCH"
        }
    );
    if done != accepted || double > 0 {
        bail!("the coordinator lost or doubled work under load");
    }
    Ok(())
}

/// Fetches the web view's three pages in turn (a new connection each, the
/// whole body read) until `deadline`; the number of 200 answers.
async fn view(addr: std::net::SocketAddr, id: String, tally: Arc<Tally>, deadline: Instant) -> u64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let paths = ["/".to_string(), format!("/experiments/{id}"), "/workers".to_string()];
    let mut ok = 0;
    tokio::time::sleep(Duration::from_secs(1)).await;
    while Instant::now() < deadline {
        for (path, lat) in paths.iter().zip(&tally.web) {
            let t = Instant::now();
            let Ok(mut conn) = tokio::net::TcpStream::connect(addr).await else {
                continue;
            };
            let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
            let mut body = Vec::new();
            if conn.write_all(req.as_bytes()).await.is_ok() && conn.read_to_end(&mut body).await.is_ok() {
                lat.add(t);
                ok += u64::from(body.starts_with(b"HTTP/1.1 200"));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    ok
}

async fn connect(url: &str) -> Result<tonic::transport::Channel> {
    proto::client::endpoint(url, None)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .tcp_nodelay(true)
        .connect()
        .await
        .with_context(|| format!("connecting to the coordinator at {url}"))
}

/// A deterministic fraction in [0, 1) for worker `w`'s `k`-th draw.
fn unit(w: usize, k: u64) -> f64 {
    let mut x = (w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 29;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// One simulated worker: it leases, heartbeats for its task's simulated
/// time, writes a stand-in partition and completes, until the deadline.
struct SimWorker {
    w: usize,
    worker_id: String,
    load: Load,
    client: proto::client::Client,
    tally: Arc<Tally>,
    deadline: Instant,
    marker: String,
    root: String,
    results: std::path::PathBuf,
}

impl SimWorker {
    async fn run(mut self) {
        // Workers start spread over one heartbeat period, as a fleet comes up.
        tokio::time::sleep(self.load.heartbeat.mul_f64(unit(self.w, 0))).await;
        let mut draw = 1;
        while Instant::now() < self.deadline {
            let Some(task) = self.lease().await else {
                continue;
            };
            {
                let mut held = self.tally.held.lock().unwrap_or_else(|e| e.into_inner());
                if held.insert(task.task_id.clone(), self.w).is_some() {
                    self.tally.double.fetch_add(1, Ordering::Relaxed);
                }
            }
            let work = self.load.task.mul_f64(0.5 + unit(self.w, draw));
            draw += 1;
            let valid = self.hold(&task, work).await;
            let tally = Arc::clone(&self.tally);
            let id = task.task_id.clone();
            let held = move || {
                tally.held.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
            };
            if !valid {
                self.tally.lost.fetch_add(1, Ordering::Relaxed);
                held();
                continue;
            }
            if Instant::now() >= self.deadline {
                // The run is over: the task stays leased (a killed worker's).
                held();
                break;
            }
            self.complete(&task, held).await;
        }
    }

    /// A leased task, or `None` after an error or an idle reply (having
    /// waited as told).
    async fn lease(&mut self) -> Option<proto::Task> {
        let t = Instant::now();
        let reply = self
            .client
            .lease_task(LeaseTaskRequest {
                worker_id: self.worker_id.clone(),
                threads: 1,
                results_marker: self.marker.clone(),
                results_root: self.root.clone(),
                experiment_id: String::new(),
            })
            .await;
        self.tally.lease.add(t);
        let reply = match reply {
            Ok(r) => r.into_inner(),
            Err(_) => {
                self.tally.errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(500)).await;
                return None;
            }
        };
        if reply.task.is_none() {
            self.tally.idle.fetch_add(1, Ordering::Relaxed);
            let wait = Duration::from_millis(reply.retry_after_ms.clamp(100, 5000) as u64);
            tokio::time::sleep(wait.min(self.deadline.saturating_duration_since(Instant::now()))).await;
        }
        reply.task
    }

    /// Holds `task` for `work`, heartbeating; false if the lease was lost.
    async fn hold(&mut self, task: &proto::Task, work: Duration) -> bool {
        let began = Instant::now();
        while began.elapsed() < work && Instant::now() < self.deadline {
            let left = work
                .saturating_sub(began.elapsed())
                .min(self.deadline.saturating_duration_since(Instant::now()));
            tokio::time::sleep(left.min(self.load.heartbeat)).await;
            if began.elapsed() >= work || Instant::now() >= self.deadline {
                break;
            }
            let t = Instant::now();
            let hb = self
                .client
                .heartbeat(HeartbeatRequest {
                    chunks: Vec::new(),
                    worker_id: self.worker_id.clone(),
                    task_id: task.task_id.clone(),
                    lease_token: task.lease_token.clone(),
                    games_done: 0,
                })
                .await;
            self.tally.heartbeat.add(t);
            match hb {
                Ok(r) if r.get_ref().lease_valid => {}
                Ok(_) => return false,
                Err(_) => {
                    self.tally.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        true
    }

    /// Writes a tiny stand-in partition where a worker writes its own,
    /// completes the task (`held` takes it off the shared set first: once
    /// the coordinator takes it, the task may be leased again) and renames
    /// the partition to its final name, as a worker does.
    async fn complete(&mut self, task: &proto::Task, held: impl Fn()) {
        let tag: String = task.lease_token.chars().take(12).collect();
        let Some(rel) =
            jobs::layout::ExperimentDir::new(&task.output).temp_partition(jobs::layout::Stage::Games, task.shard, &tag)
        else {
            held();
            return;
        };
        let path = self.results.join(&rel);
        let bytes = format!("bench partition {} {}\n", task.task_id, task.lease_token);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&path, &bytes))
            .and_then(|_| jobs::layout::file_digest(&path));
        let Ok((size, sha)) = written else {
            self.tally.errors.fetch_add(1, Ordering::Relaxed);
            held();
            return;
        };
        held();
        let t = Instant::now();
        let done = self
            .client
            .complete_task(CompleteTaskRequest {
                chunks: Vec::new(),
                worker_id: self.worker_id.clone(),
                task_id: task.task_id.clone(),
                lease_token: task.lease_token.clone(),
                rows: task.games,
                checksum: "bench".into(),
                temp_file: rel.clone(),
                file_bytes: size,
                file_sha256: sha,
            })
            .await;
        self.tally.complete.add(t);
        match done {
            Ok(r) if r.get_ref().accepted => {
                self.tally.accepted.fetch_add(1, Ordering::Relaxed);
                let fin = self.results.join(&r.get_ref().final_file);
                if jobs::durable_rename(&self.results.join(&rel), &fin).is_err() {
                    self.tally.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(_) => {
                self.tally.refused.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                self.tally.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
