//! The job-system commands: run, coordinator, worker, submit, status, cancel.
//! This module: their flags and what they share (logs, runtime, specs,
//! describing an experiment) and the two services; `client`: the commands
//! that talk to a coordinator and the errors they explain; `local`:
//! `muggins run`.

mod client;
mod local;
pub(crate) mod train;

pub use client::{cancel, status, submit};
pub use local::{Interrupted, run};

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
    /// A file holding the coordinator's bearer token (mode 0600: readable by
    /// its owner alone), instead of --token or MUGGINS_TOKEN; keeps the
    /// token out of the process's arguments and environment.
    #[arg(long, env = "MUGGINS_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// CA certificate (PEM) to check a TLS coordinator with (use an https:// URL).
    #[arg(long, env = "MUGGINS_TLS_CA")]
    pub tls_ca: Option<PathBuf>,
    /// The name in the coordinator's certificate, if not the URL's host.
    #[arg(long)]
    pub tls_domain: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The experiment spec (TOML), or a training spec (a `[train]` section:
    /// docs/train.md). Default: the thesis spec built into muggins.
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
    /// Serve the read-only web view (docs/web.md) on this address; the
    /// default is a free loopback port, printed as `web view at URL`.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub web_listen: SocketAddr,
    /// Serve no web view.
    #[arg(long, conflicts_with = "keep_web")]
    pub no_web: bool,
    /// When the experiment ends, keep serving the web view (with the
    /// finished report) until Ctrl-C or SIGTERM.
    #[arg(long)]
    pub keep_web: bool,
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
    /// The share of committed chunks replayed by another worker and
    /// compared (0 to 1; 0: no cross-checks). A mismatch marks the chunk's
    /// worker bad and plays its games again.
    #[arg(long, default_value_t = coordinator::DEFAULT_CHECK_FRACTION, value_parser = fraction)]
    pub check_fraction: f64,
    /// TLS certificate chain (PEM); with --tls-key the coordinator speaks TLS only.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve Prometheus metrics (GET /metrics) on this address.
    #[arg(long)]
    pub metrics_listen: Option<SocketAddr>,
    /// Serve the read-only web view (docs/web.md) on this address.
    #[arg(long)]
    pub web_listen: Option<SocketAddr>,
    /// Require this bearer token on every RPC (better: set MUGGINS_TOKEN).
    /// The web view asks for it too (or for --web-token).
    #[arg(long, env = "MUGGINS_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A file holding the bearer token (mode 0600), instead of --token or
    /// MUGGINS_TOKEN: keeps it out of the process's arguments and environment.
    #[arg(long, env = "MUGGINS_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// A read-only token for the web view alone: it opens the pages, never
    /// an RPC (better: set MUGGINS_WEB_TOKEN).
    #[arg(long, env = "MUGGINS_WEB_TOKEN", hide_env_values = true, requires = "web_listen")]
    pub web_token: Option<String>,
    /// A file holding the web view's token (mode 0600), instead of
    /// --web-token or MUGGINS_WEB_TOKEN.
    #[arg(long, env = "MUGGINS_WEB_TOKEN_FILE", requires = "web_listen")]
    pub web_token_file: Option<PathBuf>,
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
    /// Exit once no experiment is running (with --experiment: once that one is not).
    #[arg(long)]
    pub exit_when_done: bool,
    /// Play only this experiment's tasks (its id, as `muggins submit` prints it).
    #[arg(long)]
    pub experiment: Option<String>,
    /// Worker id (default: host name and process id).
    #[arg(long)]
    pub id: Option<String>,
    /// Seconds the current task may run on after SIGTERM before it is given back.
    #[arg(long, default_value_t = 90)]
    pub grace_secs: u64,
    /// A games task commits what it has played as a chunk every this many
    /// seconds (a killed worker loses at most that much play; only the
    /// games after its last chunk are played again).
    #[arg(long, default_value_t = 60.0, value_parser = positive_secs)]
    pub chunk_secs: f64,
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
    /// The experiment's id (`muggins status` lists them).
    pub id: Option<String>,
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

/// Holds `<out>/.muggins-run.lock` for the life of a run, so two runs never
/// share one results directory (and its state file).
pub(crate) fn lock_out_dir(out: &Path) -> Result<std::fs::File> {
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
pub(crate) async fn termination() {
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

/// An experiment's recent rate (the coordinator's, over its last 30 s) as
/// shown: `- games/s` when no game finished in that window, or when the
/// number is not a rate at all.
fn rate_text(games_per_second: f64) -> String {
    let r = games_per_second;
    if !(r.is_finite() && r > 0.0) {
        "- games/s".into()
    } else if r >= 10.0 {
        format!("{r:.0} games/s")
    } else if r >= 1.0 {
        format!("{r:.1} games/s")
    } else {
        format!("{r:.2} games/s")
    }
}

/// What a stage's pending cross-check waits for: a worker other than the
/// one that played its games, until any worker may take it.
fn waiting_note(until_ms: u64) -> Option<String> {
    if until_ms == 0 {
        return None;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let secs = until_ms.saturating_sub(now).div_ceil(1000);
    Some(format!(
        " [waiting for a worker other than the one that played its games; any worker takes it in {secs} s]"
    ))
}

fn describe(e: &Experiment) -> String {
    let tasks: Vec<String> = e
        .stages
        .iter()
        .map(|s| {
            let mut t = format!(
                "{} {}/{} ({} running, {} failed)",
                s.name,
                s.tasks_done,
                plural(s.tasks_total, "task"),
                s.tasks_running,
                s.tasks_failed
            );
            if let Some(note) = waiting_note(s.waiting_until_unix_ms) {
                t.push_str(&note);
            }
            t
        })
        .collect();
    let eta = if e.eta_seconds >= 0.0 && e.state == ExperimentState::Running as i32 {
        format!(", ETA {:.0} s", e.eta_seconds)
    } else {
        String::new()
    };
    let mut s = format!(
        "{}  {}  {}/{} ({:.1}%), {}{eta}; {}",
        e.id,
        state_name(e.state),
        e.games_done,
        plural(e.games_total, "game"),
        100.0 * e.games_done as f64 / e.games_total.max(1) as f64,
        rate_text(e.games_per_second),
        tasks.join(", ")
    );
    if e.checks_passed + e.checks_failed > 0 {
        s.push_str(&format!(
            "; cross-checks {} passed, {} failed",
            e.checks_passed, e.checks_failed
        ));
    }
    if !e.bad_workers.is_empty() {
        s.push_str(&format!(
            "\n  bad workers (a cross-check found their games wrong; their work was redone): {}",
            e.bad_workers.join(", ")
        ));
    }
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
        config.check_fraction = a.check_fraction;
        // A token the coordinator requires: from its flag, variable or file,
        // at least 16 characters.
        let required =
            |given: Option<&str>, file: Option<&Path>, flag: &str, var: &str| -> Result<coordinator::Token> {
                let token = client::token_from(given, file, &format!("{flag}-file"), &format!("{flag} (or {var})"))?;
                if token.as_deref().is_some_and(|t| t.len() < 16) {
                    bail!("{flag}: use at least 16 characters");
                }
                Ok(coordinator::Token::new(token.as_deref()))
            };
        config.token = required(a.token.as_deref(), a.token_file.as_deref(), "--token", "MUGGINS_TOKEN")?;
        config.web_token = required(
            a.web_token.as_deref(),
            a.web_token_file.as_deref(),
            "--web-token",
            "MUGGINS_WEB_TOKEN",
        )?;
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
        let web = match a.web_listen {
            Some(addr) => Some(
                tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("--web-listen {addr}: cannot bind"))?,
            ),
            None => None,
        };
        let web_url = match &web {
            Some(l) => Some(format!("http://{}/", l.local_addr()?)),
            None => None,
        };
        tracing::info!(
            listen = %listener.local_addr()?,
            results = %a.results.display(),
            token = config.token.is_set(),
            tls = config.tls.is_some(),
            metrics = ?a.metrics_listen,
            web = ?web_url,
            "coordinator listening"
        );
        if let Some(url) = &web_url {
            eprintln!("web view at {url}");
        }
        let extra = coordinator::Listeners { metrics, web };
        coordinator::serve_all(listener, extra, config, termination()).await?;
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
    let auth = proto::client::Auth::new(a.url.bearer()?.as_deref()).context("--token")?;
    let config = worker::Config {
        coordinator: a.url.coordinator,
        results: a.results,
        threads,
        fit_threads: 0,
        worker_id: a.id.unwrap_or_else(worker::default_worker_id),
        exit_when_done: a.exit_when_done,
        experiment: a.experiment,
        grace: Duration::from_secs(a.grace_secs),
        chunk_every: Duration::from_secs_f64(a.chunk_secs),
        auth,
        tls,
    };
    let stats = runtime()?.block_on(worker::run(config, termination()))?;
    eprintln!("worker done: {stats}");
    Ok(())
}

/// A number of seconds above 0 (and at most a day).
fn positive_secs(s: &str) -> std::result::Result<f64, String> {
    let x: f64 = s.parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(x > 0.0 && x <= 86_400.0) {
        return Err(format!("{s} seconds: give more than 0 and at most 86400"));
    }
    Ok(x)
}

/// A share from 0 to 1.
fn fraction(s: &str) -> std::result::Result<f64, String> {
    let x: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if !(0.0..=1.0).contains(&x) {
        return Err(format!("{s}: give a share from 0 to 1 (0.01 checks 1% of the chunks)"));
    }
    Ok(x)
}
