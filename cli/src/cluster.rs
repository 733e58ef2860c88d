//! The job-system commands: run, coordinator, worker, submit, status, cancel.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::text::plural;
use clap::Args;
use proto::client::Client;
use proto::{
    CancelExperimentRequest, Experiment, ExperimentState, GetExperimentRequest, ListExperimentsRequest,
    SubmitExperimentRequest,
};

/// The coordinator a client or worker talks to when none is given.
pub const DEFAULT_COORDINATOR: &str = "http://127.0.0.1:50051";

#[derive(Debug, Clone, Args)]
pub struct CoordinatorUrl {
    /// The coordinator's URL.
    #[arg(long, env = "MUGGINS_COORDINATOR", default_value = DEFAULT_COORDINATOR)]
    pub coordinator: String,
    /// The coordinator's bearer token, if it requires one.
    #[arg(long, env = "MUGGINS_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// CA certificate (PEM) to check a TLS coordinator with (use an https:// URL).
    #[arg(long, env = "MUGGINS_TLS_CA")]
    pub tls_ca: Option<PathBuf>,
    /// The name in the coordinator's certificate, if not the URL's host.
    #[arg(long)]
    pub tls_domain: Option<String>,
}

impl CoordinatorUrl {
    /// A client of the coordinator, and what its errors are to be read against.
    async fn open(&self) -> Result<(Client, Rpc)> {
        // The URL first: a bad URL is the likelier mistake than a bad CA file.
        proto::client::check_url(&self.coordinator, self.tls_ca.is_some())
            .map_err(|e| url_error(&self.coordinator, e))?;
        let client = connect(&self.coordinator, self.token.as_deref(), self.tls()?).await?;
        Ok((
            client,
            Rpc {
                url: self.coordinator.clone(),
                token_given: self.token.is_some(),
            },
        ))
    }

    fn tls(&self) -> Result<Option<proto::client::ClientTls>> {
        let Some(ca) = &self.tls_ca else { return Ok(None) };
        let ca_pem = std::fs::read(ca).with_context(|| format!("--tls-ca {}", ca.display()))?;
        Ok(Some(proto::client::ClientTls {
            ca_pem,
            domain: self.tls_domain.clone(),
        }))
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The experiment spec (TOML). Default: the thesis spec built into muggins.
    pub spec: Option<PathBuf>,
    /// The results root; the experiment writes under <out>/<output>/.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Workers to start in this process (default: one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Threads in all, shared among the workers (default: all cores, and at
    /// least one per worker). Fewer threads than workers is refused.
    #[arg(long)]
    pub threads: Option<usize>,
}

#[derive(Debug, Args)]
pub struct CoordinatorArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,
    /// The SQLite state file.
    #[arg(long, default_value = "muggins-state.sqlite")]
    pub state: PathBuf,
    /// The results root.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Seconds a lease lasts without a heartbeat.
    #[arg(long, default_value_t = 30)]
    pub lease_secs: u64,
    /// TLS certificate chain (PEM); with --tls-key the coordinator speaks TLS only.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve Prometheus metrics (GET /metrics) on this address.
    #[arg(long)]
    pub metrics_listen: Option<SocketAddr>,
    /// Require this bearer token on every RPC (better: set MUGGINS_TOKEN).
    #[arg(long, env = "MUGGINS_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Log as JSON lines.
    #[arg(long)]
    pub log_json: bool,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub url: CoordinatorUrl,
    /// The results root as this machine sees it (shared with the coordinator).
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Exit once no experiment is running.
    #[arg(long)]
    pub exit_when_done: bool,
    /// Worker id (default: host name and process id).
    #[arg(long)]
    pub id: Option<String>,
    /// Seconds the current task may run on after SIGTERM before it is given back.
    #[arg(long, default_value_t = 90)]
    pub grace_secs: u64,
    /// Log as JSON lines.
    #[arg(long)]
    pub log_json: bool,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The experiment spec (TOML).
    pub spec: PathBuf,
    #[command(flatten)]
    pub url: CoordinatorUrl,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// An experiment id (default: list them all).
    pub id: Option<String>,
    /// Follow progress until the experiment ends.
    #[arg(long)]
    pub watch: bool,
    #[command(flatten)]
    pub url: CoordinatorUrl,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    pub id: String,
    #[command(flatten)]
    pub url: CoordinatorUrl,
}

fn init_logs(default: &str, json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MUGGINS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only for a terminal: escape codes garble log files and collectors.
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let _ = if json { b.json().try_init() } else { b.try_init() };
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Resolves on SIGTERM or Ctrl-C.
async fn termination() {
    #[cfg(unix)]
    {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

/// How long a client waits for the coordinator to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

async fn connect(url: &str, token: Option<&str>, tls: Option<proto::client::ClientTls>) -> Result<Client> {
    let ch = proto::client::endpoint(url, tls.as_ref())
        .map_err(|e| url_error(url, e))?
        .connect_timeout(CONNECT_TIMEOUT)
        .connect()
        .await
        .map_err(|e| unreachable(url, &e))?;
    proto::client::new(ch, token).context("--token")
}

/// A bad coordinator URL, worded as the worker words it.
fn url_error(url: &str, e: proto::client::EndpointError) -> anyhow::Error {
    anyhow::anyhow!("coordinator URL {url:?}: {e}")
}

/// Why nothing answered at `url`, once, without the layers of wrapped
/// transport errors.
fn unreachable(url: &str, e: &(dyn std::error::Error + 'static)) -> anyhow::Error {
    let mut source = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return anyhow::anyhow!(
                        "nothing listens at {url} (connection refused): start the coordinator there, or give its \
                         --listen address with --coordinator or MUGGINS_COORDINATOR"
                    );
                }
                std::io::ErrorKind::TimedOut => break,
                _ => {}
            }
        }
        source = err.source();
    }
    let chain = proto::client::error_chain(e);
    if chain.contains("timed out") || chain.contains("timeout") {
        return anyhow::anyhow!(
            "no answer from {url} within {} s: check the host and port, and that no firewall drops the connection",
            CONNECT_TIMEOUT.as_secs()
        );
    }
    anyhow::anyhow!("cannot reach the coordinator at {url}: {chain}")
}

/// What a client needs to explain a refused call.
#[derive(Debug)]
struct Rpc {
    url: String,
    token_given: bool,
}

impl Rpc {
    /// A refused call, explained: a missing or wrong token, a server that is
    /// not a coordinator, or the coordinator's own message.
    fn error(&self, s: tonic::Status) -> anyhow::Error {
        let url = &self.url;
        if s.message().starts_with("grpc-status header missing") {
            // An HTTP server answered, but not with gRPC.
            return anyhow::anyhow!(
                "{url} is not a muggins coordinator: it answers HTTP but not the coordinator's gRPC ({}); perhaps \
                 it is the coordinator's metrics port (--metrics-listen): give its --listen address instead",
                s.message()
            );
        }
        match s.code() {
            tonic::Code::Unauthenticated if self.token_given => anyhow::anyhow!(
                "the coordinator at {url} refused the token: set MUGGINS_TOKEN (or --token) to the token the \
                 coordinator was started with"
            ),
            tonic::Code::Unauthenticated => anyhow::anyhow!(
                "the coordinator at {url} requires a token and none was given: set MUGGINS_TOKEN (or pass --token)"
            ),
            tonic::Code::Unavailable => unreachable(url, &s),
            _ => anyhow::anyhow!("{}", s.message()),
        }
    }

    /// A refused call about experiment `id`: when the coordinator knows no
    /// such experiment, suggests the ids it does know whose name matches.
    async fn experiment_error(&self, c: &mut Client, id: &str, s: tonic::Status) -> anyhow::Error {
        if s.code() != tonic::Code::NotFound {
            return self.error(s);
        }
        let known: Vec<String> = match c.list_experiments(ListExperimentsRequest {}).await {
            Ok(r) => r.into_inner().experiments.into_iter().map(|e| e.id).collect(),
            Err(_) => return anyhow::anyhow!("no experiment with id {id:?}; `muggins status` lists them"),
        };
        anyhow::anyhow!("no experiment with id {id:?}; {}", suggest(id, &known))
    }
}

/// The name part of an experiment id `<name>-<12 hex digits>`, if it is one.
fn id_name(id: &str) -> Option<&str> {
    let (name, hash) = id.rsplit_once('-')?;
    (hash.len() == 12 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(name)
}

/// What to say after "no experiment with id ..." given the ids there are.
fn suggest(given: &str, known: &[String]) -> String {
    if known.is_empty() {
        return "the coordinator has no experiments (submit one with `muggins submit SPEC`)".into();
    }
    let name = id_name(given).unwrap_or(given);
    let matching: Vec<&str> = known
        .iter()
        .filter(|k| id_name(k) == Some(name) || (k.starts_with(given) && !given.is_empty()))
        .map(String::as_str)
        .collect();
    match matching.as_slice() {
        [] => format!("the experiments are: {}", known.join(", ")),
        [one] => format!("did you mean {one}?"),
        many => format!("did you mean one of {}?", many.join(", ")),
    }
}

fn read_spec(path: &Path) -> Result<String> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading spec {}", path.display()))?;
    if meta.len() > jobs::MAX_SPEC_BYTES as u64 {
        bail!(
            "spec {}: {} bytes; a spec may be at most {} bytes",
            path.display(),
            meta.len(),
            jobs::MAX_SPEC_BYTES
        );
    }
    std::fs::read_to_string(path).with_context(|| format!("reading spec {}", path.display()))
}

fn state_name(s: i32) -> &'static str {
    match ExperimentState::try_from(s).unwrap_or(ExperimentState::Unspecified) {
        ExperimentState::Running => "running",
        ExperimentState::Succeeded => "succeeded",
        ExperimentState::Failed => "failed",
        ExperimentState::Cancelled => "cancelled",
        ExperimentState::Unspecified => "unknown",
    }
}

fn describe(e: &Experiment) -> String {
    let tasks: Vec<String> = e
        .stages
        .iter()
        .map(|s| {
            format!(
                "{} {}/{} ({} running, {} failed)",
                s.name,
                s.tasks_done,
                plural(s.tasks_total, "task"),
                s.tasks_running,
                s.tasks_failed
            )
        })
        .collect();
    let eta = if e.eta_seconds >= 0.0 && e.state == ExperimentState::Running as i32 {
        format!(", ETA {:.0} s", e.eta_seconds)
    } else {
        String::new()
    };
    let mut s = format!(
        "{}  {}  {}/{} ({:.1}%), {:.0} games/s{eta}; {}",
        e.id,
        state_name(e.state),
        e.games_done,
        plural(e.games_total, "game"),
        100.0 * e.games_done as f64 / e.games_total.max(1) as f64,
        e.games_per_second,
        tasks.join(", ")
    );
    if !e.error.is_empty() {
        s.push_str(&format!("\n  error: {}", e.error));
    }
    s
}

pub fn coordinator(a: CoordinatorArgs) -> Result<()> {
    init_logs("info", a.log_json);
    if a.lease_secs == 0 {
        bail!("--lease-secs 0: a lease must last at least one second");
    }
    let rt = runtime()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(a.listen)
            .await
            .with_context(|| format!("--listen {}: cannot bind", a.listen))?;
        let mut config = coordinator::Config::new(a.state.clone(), a.results.clone());
        config.lease = Duration::from_secs(a.lease_secs);
        if a.token.as_deref().is_some_and(|t| t.len() < 16) {
            bail!("--token: use at least 16 characters");
        }
        config.token = coordinator::Token::new(a.token.as_deref());
        if let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) {
            config.tls = Some(coordinator::Tls {
                cert_pem: std::fs::read(cert).with_context(|| format!("--tls-cert {}", cert.display()))?,
                key_pem: std::fs::read(key).with_context(|| format!("--tls-key {}", key.display()))?,
            });
        }
        let metrics = match a.metrics_listen {
            Some(addr) => Some(
                tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("--metrics-listen {addr}: cannot bind"))?,
            ),
            None => None,
        };
        tracing::info!(
            listen = %listener.local_addr()?,
            results = %a.results.display(),
            token = config.token.is_set(),
            tls = config.tls.is_some(),
            metrics = ?a.metrics_listen,
            "coordinator listening"
        );
        coordinator::serve_with_metrics(listener, metrics, config, termination()).await?;
        tracing::info!("coordinator stopped");
        Ok(())
    })
}

pub fn worker(a: WorkerArgs) -> Result<()> {
    init_logs("info", a.log_json);
    let threads = a.threads.unwrap_or_else(cores);
    if threads == 0 {
        bail!("--threads 0: a worker needs at least one thread");
    }
    let tls = a.url.tls()?;
    let config = worker::Config {
        coordinator: a.url.coordinator,
        results: a.results,
        threads,
        worker_id: a.id.unwrap_or_else(worker::default_worker_id),
        exit_when_done: a.exit_when_done,
        grace: Duration::from_secs(a.grace_secs),
        auth: proto::client::Auth::new(a.url.token.as_deref()).context("--token")?,
        tls,
    };
    let stats = runtime()?.block_on(worker::run(config, termination()))?;
    eprintln!("worker done: {stats}");
    Ok(())
}

pub fn submit(a: SubmitArgs) -> Result<()> {
    let text = read_spec(&a.spec)?;
    jobs::Spec::from_toml(&text).with_context(|| format!("spec {}", a.spec.display()))?;
    runtime()?.block_on(async {
        let (mut c, rpc) = a.url.open().await?;
        let r = c
            .submit_experiment(SubmitExperimentRequest { spec_toml: text })
            .await
            .map_err(|s| rpc.error(s))?
            .into_inner();
        let e = r.experiment.context("the coordinator returned no experiment")?;
        if !r.created {
            eprintln!("an identical spec was submitted before; this is its experiment");
        }
        println!("{}", e.id);
        eprintln!("{}", describe(&e));
        Ok(())
    })
}

pub fn status(a: StatusArgs) -> Result<()> {
    runtime()?.block_on(async {
        if a.id.is_none() && a.watch {
            bail!("--watch needs an experiment id (`muggins status` lists them)");
        }
        let (mut c, rpc) = a.url.open().await?;
        match (a.id, a.watch) {
            (None, true) => unreachable!("refused above"),
            (None, false) => {
                let list = c
                    .list_experiments(ListExperimentsRequest {})
                    .await
                    .map_err(|s| rpc.error(s))?;
                let list = list.into_inner().experiments;
                if list.is_empty() {
                    println!("no experiments");
                }
                for e in list {
                    println!("{}", describe(&e));
                }
            }
            (Some(id), false) => {
                let e = match c.get_experiment(GetExperimentRequest { id: id.clone() }).await {
                    Ok(e) => e,
                    Err(s) => return Err(rpc.experiment_error(&mut c, &id, s).await),
                };
                println!("{}", describe(&e.into_inner()));
            }
            (Some(id), true) => {
                let mut stream = match c.watch_experiment(GetExperimentRequest { id: id.clone() }).await {
                    Ok(s) => s.into_inner(),
                    Err(s) => return Err(rpc.experiment_error(&mut c, &id, s).await),
                };
                let mut last = None;
                while let Some(e) = stream.message().await.map_err(|s| rpc.error(s))? {
                    println!("{}", describe(&e));
                    last = Some(e);
                }
                if let Some(e) = last
                    && e.state != ExperimentState::Succeeded as i32
                {
                    bail!("experiment {} ended {}", e.id, state_name(e.state));
                }
            }
        }
        Ok(())
    })
}

pub fn cancel(a: CancelArgs) -> Result<()> {
    runtime()?.block_on(async {
        let (mut c, rpc) = a.url.open().await?;
        let e = match c.cancel_experiment(CancelExperimentRequest { id: a.id.clone() }).await {
            Ok(e) => e.into_inner(),
            Err(s) => return Err(rpc.experiment_error(&mut c, &a.id, s).await),
        };
        println!("{}", describe(&e));
        Ok(())
    })
}

/// How many workers and threads `muggins run` starts: `--threads` is the
/// total, shared among the workers, and every worker needs one.
pub fn run_shape(workers: Option<usize>, threads: Option<usize>, cores: usize) -> Result<(usize, usize)> {
    if workers == Some(0) {
        bail!("--workers 0: at least one worker is needed");
    }
    if threads == Some(0) {
        bail!("--threads 0: at least one thread is needed");
    }
    Ok(match (workers, threads) {
        (Some(w), Some(t)) if t < w => bail!(
            "--threads {t} is fewer than --workers {w}: --threads is the total shared among the workers and each \
             needs at least one; give --threads {w} or more, or --workers {t} or fewer"
        ),
        (Some(w), Some(t)) => (w, t),
        (None, Some(t)) => (cores.min(t), t),
        (Some(w), None) => (w, cores.max(w)),
        (None, None) => (cores, cores),
    })
}

/// Holds `<out>/.muggins-run.lock` for the life of a run, so two runs never
/// share one results directory (and its state file).
fn lock_out_dir(out: &Path) -> Result<std::fs::File> {
    let path = out.join(".muggins-run.lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("--out {}: cannot create {}", out.display(), path.display()))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => bail!(
            "another `muggins run` is using --out {} (it holds {}); wait for it, or give another --out",
            out.display(),
            path.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", path.display())),
    }
}

/// `muggins run`: a coordinator and workers in this process, over loopback gRPC.
pub fn run(a: RunArgs) -> Result<()> {
    init_logs("warn", false);
    let (text, origin) = match &a.spec {
        Some(p) => (read_spec(p)?, p.display().to_string()),
        None => (
            jobs::MYERS2014_SPEC.to_string(),
            "the built-in thesis spec (jobs/specs/myers2014.toml)".into(),
        ),
    };
    let spec = jobs::Spec::from_toml(&text).with_context(|| format!("spec {origin}"))?;
    let (n_workers, threads) = run_shape(a.workers, a.threads, cores())?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("--out {}: cannot create it", a.out.display()))?;
    let _lock = lock_out_dir(&a.out)?;
    let state = a.out.join(".muggins-state.sqlite");
    eprintln!(
        "running {} ({} in {}) from {origin}: {}, {}, results in {}",
        spec.name,
        plural(spec.games(), "game"),
        plural(jobs::shards(&spec).len() as u64, "shard"),
        plural(n_workers as u64, "worker"),
        plural(threads as u64, "thread"),
        a.out.join(&spec.output).display()
    );
    let rt = runtime()?;
    let final_state = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("binding a loopback port")?;
        let url = format!("http://{}", listener.local_addr()?);
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let until = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        // The marker the workers must read exists before any of them starts.
        coordinator::ensure_results_marker(&a.out)
            .with_context(|| format!("--out {}: cannot write its marker file", a.out.display()))?;
        let mut config = coordinator::Config::new(state.clone(), a.out.clone());
        // Leases of this directory's previous run (stopped by Ctrl-C) are
        // given back at once instead of waiting out their expiry.
        config.release_leases_of = Some(LOCAL_WORKER_PREFIX.into());
        let server = tokio::spawn(coordinator::serve(listener, config, until(stop_rx.clone())));
        let mut workers = Vec::new();
        for k in 0..n_workers {
            let share = threads / n_workers + usize::from(k < threads % n_workers);
            let config = worker::Config {
                coordinator: url.clone(),
                results: a.out.clone(),
                threads: share,
                worker_id: format!("{LOCAL_WORKER_PREFIX}{k}"),
                exit_when_done: false,
                grace: Duration::from_secs(5),
                auth: Default::default(),
                tls: None,
            };
            workers.push(worker::run(config, until(stop_rx.clone())));
        }
        // The run ends when the experiment does, or when every worker has
        // stopped (a worker only stops early on an error it cannot get past).
        let mut workers: tokio::task::JoinSet<_> = workers.into_iter().collect();
        let drive = drive(&url, &text);
        tokio::pin!(drive);
        let mut worker_error = None;
        let outcome = loop {
            tokio::select! {
                o = &mut drive => break o,
                w = workers.join_next() => match w {
                    Some(Ok(Ok(_))) => {}
                    Some(Ok(Err(e))) => { worker_error.get_or_insert(e.to_string()); }
                    Some(Err(e)) => { worker_error.get_or_insert(format!("a worker task failed: {e}")); }
                    None => break Err(anyhow::anyhow!(
                        "every worker stopped before the experiment ended: {}",
                        worker_error.take().unwrap_or_else(|| "no error given".into())
                    )),
                },
            }
        };
        let _ = stop_tx.send(true);
        while workers.join_next().await.is_some() {}
        match server.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(anyhow::Error::from(e)),
            Err(e) => bail!("the coordinator task failed: {e}"),
        }
        outcome
    })?;
    if final_state.state != ExperimentState::Succeeded as i32 {
        bail!(
            "experiment {} {}: {}",
            final_state.id,
            state_name(final_state.state),
            final_state.error
        );
    }
    let dir = a.out.join(&spec.output);
    // The report stage has already aggregated every row: summarise from it
    // rather than reading the partitions again.
    let path = dir.join(jobs::layout::REPORT_JSON);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).with_context(|| format!("{}", path.display()))?)
            .with_context(|| format!("{}", path.display()))?;
    let cells = summary_cells(&report).with_context(|| format!("{}: unexpected content", path.display()))?;
    println!("{}", jobs::CellSummary::table(&cells));
    let games = report["games"].as_u64().context("report.json has no games count")?;
    println!(
        "{} in {}",
        plural(games, "row"),
        dir.join(jobs::layout::GAMES_DIR).display()
    );
    println!("report: {}", dir.join(jobs::layout::REPORT_MD).display());
    Ok(())
}

/// The ids of `muggins run`'s in-process workers start with this.
const LOCAL_WORKER_PREFIX: &str = "local-";

/// The per-cell summary table's rows, from report.json's cells.
fn summary_cells(report: &serde_json::Value) -> Option<Vec<jobs::CellSummary>> {
    let mut out = Vec::new();
    for c in report["cells"].as_array()? {
        for (engine, key) in [
            (engine::PlayerEngine::MStar, "mstar"),
            (engine::PlayerEngine::Expectimax, "expectimax"),
        ] {
            let e = &c[key];
            out.push(jobs::CellSummary {
                information_source: jobs::Source::parse(c["information_source"].as_str()?)?,
                observability: c["observability"].as_str()?.parse().ok()?,
                target: c["target"].as_str()?.parse().ok()?,
                engine,
                games: e["games"].as_u64()?,
                mean_score_diff: e["mean_score_diff"].as_f64()?,
                wins_or_ties: e["wins_or_ties"].as_u64()?,
                predictions: e["predictions"].as_u64()?,
                predictions_correct: e["predictions_correct"].as_u64()?,
            });
        }
    }
    out.sort_by_key(|c| (c.information_source, c.observability as u8, c.target, c.engine as u8));
    Some(out)
}

/// The stage an experiment is in: the first whose tasks are not all done.
fn current_stage(e: &Experiment) -> Option<&proto::Stage> {
    e.stages.iter().find(|s| s.tasks_done < s.tasks_total)
}

/// (stage name, done, total, unit) of an experiment's progress: games in
/// the grid stage, tasks in the others.
fn progress(e: &Experiment) -> (String, u64, u64, &'static str) {
    match current_stage(e) {
        Some(s) if s.name == jobs::layout::Stage::Games.name() => {
            (s.name.clone(), e.games_done, e.games_total, "games")
        }
        Some(s) => (s.name.clone(), s.tasks_done, s.tasks_total, "tasks"),
        None => ("done".into(), e.games_done, e.games_total, "games"),
    }
}

/// One plain progress line (for logs, when stderr is not a terminal).
fn progress_line(e: &Experiment, elapsed: Duration) -> String {
    let (stage, done, total, unit) = progress(e);
    let pct = 100.0 * done as f64 / total.max(1) as f64;
    let mut line = format!(
        "[{:>6.0} s] {stage}: {done}/{total} {unit} ({pct:.1}%)",
        elapsed.as_secs_f64()
    );
    if stage == jobs::layout::Stage::Games.name() {
        line.push_str(&format!(", {:.0} games/s", e.games_per_second));
        if e.eta_seconds >= 0.0 {
            line.push_str(&format!(", ETA {:.0} s", e.eta_seconds));
        }
    }
    line
}

/// How often a progress line is printed when stderr is not a terminal.
const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Submits the spec and shows progress until the experiment ends: a bar
/// naming the stage on a terminal, else a plain line every 10 s.
async fn drive(url: &str, text: &str) -> Result<Experiment> {
    let mut client = None;
    for _ in 0..100 {
        match connect(url, None, None).await {
            Ok(c) => {
                client = Some(c);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    let mut c = client.context("the in-process coordinator did not start")?;
    let r = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: text.to_string(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner();
    let e = r.experiment.context("no experiment returned")?;
    if !r.created {
        eprintln!(
            "resuming experiment {} ({} of {} games already done, files checked)",
            e.id, e.games_done, e.games_total
        );
    }
    eprintln!(
        "coordinator at {url}: `muggins status {} --watch --coordinator {url}` follows this run",
        e.id
    );
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = indicatif::ProgressBar::new(e.games_total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix:>8} {elapsed_precise} [{bar:40}] {pos}/{len} {msg}  {per_sec}  ETA {eta}",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    let started = std::time::Instant::now();
    let done_before = e.games_done;
    let mut stream = c
        .watch_experiment(GetExperimentRequest { id: e.id.clone() })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner();
    let mut tick = tokio::time::interval(PLAIN_PROGRESS_EVERY);
    tick.tick().await;
    let mut shown_stage = String::new();
    let mut last = e;
    loop {
        tokio::select! {
            m = stream.message() => {
                let Some(e) = m.map_err(|s| anyhow::anyhow!("{}", s.message()))? else { break };
                let (stage, done, total, unit) = progress(&e);
                if stage != shown_stage {
                    bar.reset();
                    bar.set_length(total);
                    bar.set_prefix(stage.clone());
                    bar.set_message(unit);
                    if !terminal {
                        eprintln!("{}", progress_line(&e, started.elapsed()));
                    }
                    shown_stage = stage;
                }
                bar.set_position(done);
                last = e;
            }
            _ = tick.tick(), if !terminal => eprintln!("{}", progress_line(&last, started.elapsed())),
        }
    }
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    // The rate counts only the games played by this run.
    let played = last.games_done.saturating_sub(done_before);
    let note = if played == last.games_done {
        String::new()
    } else {
        format!(", {} of them now", plural(played, "game"))
    };
    eprintln!(
        "{} {}: {}{note} in {:.1} s ({:.0} games/s)",
        last.id,
        state_name(last.state),
        plural(last.games_done, "game"),
        secs,
        played as f64 / secs.max(1e-9)
    );
    Ok(last)
}
