//! The muggins coordinator: splits experiments into stages of tasks, keeps
//! them durable in SQLite, leases tasks to workers over gRPC and survives
//! their failures (and its own restarts).
//!
//! [`serve`] runs the service on a listener until `shutdown` resolves, so tests
//! start it in-process on `127.0.0.1:0`.

mod files;
mod metrics;
mod metrics_http;
mod service;
mod shared;
mod store;
mod sweeper;
mod web;
mod wire;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use files::ensure_marker as ensure_results_marker;
pub use service::CoordinatorService;
pub use store::{ExpState, MAX_FAILURES, MAX_WORKER_FAILURES, Store, StoreError, TaskState};
pub use wire::truncate_chars;

/// A bearer token. Its `Debug` never shows it.
#[derive(Clone, Default)]
pub struct Token(Option<Arc<[u8]>>);

impl Token {
    pub fn new(token: Option<&str>) -> Token {
        Token(token.map(|t| Arc::from(t.as_bytes())))
    }
    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Token(set)" } else { "Token(none)" })
    }
}

/// Refuses requests without the configured bearer token, comparing in
/// constant time.
#[derive(Clone, Debug)]
struct CheckToken(Token, Arc<shared::Shared>);

impl tonic::service::Interceptor for CheckToken {
    fn call(&mut self, req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        use subtle::ConstantTimeEq;
        let Some(want) = &self.0.0 else { return Ok(req) };
        let given = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::as_bytes)
            .unwrap_or(b"");
        if bool::from(given.ct_eq(want)) {
            Ok(req)
        } else {
            metrics::Metrics::inc(&self.1.metrics.unauthenticated);
            Err(tonic::Status::unauthenticated("missing or wrong bearer token"))
        }
    }
}

/// The coordinator's TLS certificate chain and private key (PEM). `Debug`
/// never shows the key.
#[derive(Clone)]
pub struct Tls {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls(cert, key)")
    }
}

/// How the coordinator runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The SQLite state file.
    pub state: PathBuf,
    /// The results root: experiments write under `<results>/<output>/`.
    pub results: PathBuf,
    /// How long a lease lasts without a heartbeat.
    pub lease: Duration,
    /// How often finished experiments are checked and sealed.
    pub sweep_every: Duration,
    /// When set, every RPC must carry `authorization: Bearer <token>`.
    pub token: Token,
    /// When set, the web view also accepts this token (read-only: it
    /// opens no RPC); the view accepts `token` too.
    pub web_token: Token,
    /// When set, the coordinator speaks TLS (rustls) only.
    pub tls: Option<Tls>,
    /// At start, give back the leases of workers whose id starts with this
    /// (`muggins run`: its in-process workers of a previous run are gone).
    pub release_leases_of: Option<String>,
    /// The share of committed chunks replayed by another worker to check
    /// them (seeded by the chunk: the same chunks are drawn every time).
    pub check_fraction: f64,
}

/// The share of chunks cross-checked unless told otherwise (fishtest-like: 1%).
pub const DEFAULT_CHECK_FRACTION: f64 = 0.01;

/// How often the state file's WAL is checkpointed, off the write path
/// (store/checkpoint.rs).
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

impl Config {
    pub fn new(state: PathBuf, results: PathBuf) -> Config {
        Config {
            state,
            results,
            lease: Duration::from_secs(30),
            sweep_every: Duration::from_millis(200),
            token: Token::default(),
            web_token: Token::default(),
            tls: None,
            release_leases_of: None,
            check_fraction: DEFAULT_CHECK_FRACTION,
        }
    }
}

/// Why the coordinator could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("results root {path}: {message}")]
    Results { path: PathBuf, message: String },
    #[error("--state {path}: cannot create its directory {dir}: {message}")]
    StateDir {
        path: PathBuf,
        dir: PathBuf,
        message: String,
    },
    #[error("{0}")]
    State(String),
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("gRPC reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
}

/// Accepted connections, with Nagle's algorithm off: small request/response
/// pairs otherwise wait out the peer's delayed ACK (about 40 ms each).
fn incoming(
    listener: tokio::net::TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    use tokio_stream::StreamExt;
    tokio_stream::wrappers::TcpListenerStream::new(listener).map(|conn| {
        let conn = conn?;
        conn.set_nodelay(true)?;
        Ok(conn)
    })
}

/// Serves the coordinator on `listener` until `shutdown` resolves. Every
/// unfinished experiment in the state file resumes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    serve_with_metrics(listener, None, config, shutdown).await
}

/// [`serve`], with the Prometheus endpoint `GET /metrics` on `metrics`.
pub async fn serve_with_metrics(
    listener: tokio::net::TcpListener,
    metrics: Option<tokio::net::TcpListener>,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let extra = Listeners { metrics, web: None };
    serve_all(listener, extra, config, shutdown).await
}

/// The listeners beside the gRPC one.
#[derive(Debug, Default)]
pub struct Listeners {
    /// The Prometheus endpoint, `GET /metrics`.
    pub metrics: Option<tokio::net::TcpListener>,
    /// The web view (docs/web.md).
    pub web: Option<tokio::net::TcpListener>,
}

/// [`serve`], with the Prometheus endpoint and the web view on their own
/// listeners when given.
pub async fn serve_all(
    listener: tokio::net::TcpListener,
    extra: Listeners,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let Listeners { metrics, web } = extra;
    let results_error = |e: std::io::Error| ServeError::Results {
        path: config.results.clone(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&config.results).map_err(results_error)?;
    let marker = files::ensure_marker(&config.results).map_err(results_error)?;
    if let Some(parent) = config.state.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| ServeError::StateDir {
            path: config.state.clone(),
            dir: parent.to_path_buf(),
            message: e.to_string(),
        })?;
    }
    let mut store = Store::open(&config.state).map_err(|e| ServeError::State(e.to_string()))?;
    let _checkpoints = store
        .checkpoint_in_background(&config.state, CHECKPOINT_EVERY)
        .map_err(|e| ServeError::State(e.to_string()))?;
    if let Some(prefix) = &config.release_leases_of {
        let n = store
            .release_leases_of(prefix)
            .map_err(|e| ServeError::State(e.to_string()))?;
        if n > 0 {
            tracing::info!(tasks = n, "gave back the leases of this run's previous workers");
        }
    }
    let running = store.running_ids().unwrap_or_default();
    tracing::info!(experiments = running.len(), state = %config.state.display(), "coordinator resuming");
    let reader = Store::open_reader(&config.state).map_err(|e| ServeError::State(e.to_string()))?;
    let service = CoordinatorService::new(store, reader, config.clone(), marker);
    let sweeper = tokio::spawn(sweeper::run(Arc::clone(service.shared()), config.sweep_every));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let metrics_task = metrics.map(|l| {
        let mut rx = stop_rx.clone();
        tokio::spawn(metrics_http::serve(l, Arc::clone(service.shared()), async move {
            let _ = rx.wait_for(|v| *v).await;
        }))
    });
    let web_task = web.map(|l| {
        let mut rx = stop_rx.clone();
        let tokens = vec![config.token.clone(), config.web_token.clone()];
        tokio::spawn(web::serve(l, Arc::clone(service.shared()), tokens, async move {
            let _ = rx.wait_for(|v| *v).await;
        }))
    });
    // Both reflection versions: grpcurl speaks v1, Python's grpcio-reflection v1alpha.
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;
    let check = CheckToken(config.token.clone(), Arc::clone(service.shared()));
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = &config.tls {
        let identity = tonic::transport::Identity::from_pem(&tls.cert_pem, &tls.key_pem);
        builder = builder.tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))?;
    }
    let result = builder
        .add_service(tonic::service::interceptor::InterceptedService::new(
            reflection,
            check.clone(),
        ))
        .add_service(tonic::service::interceptor::InterceptedService::new(
            reflection_alpha,
            check.clone(),
        ))
        .add_service(tonic::service::interceptor::InterceptedService::new(
            proto::coordinator_server::CoordinatorServer::new(service)
                .max_decoding_message_size(4 << 20)
                .max_encoding_message_size(16 << 20),
            check,
        ))
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await;
    sweeper.abort();
    let _ = stop_tx.send(true);
    for task in [metrics_task, web_task].into_iter().flatten() {
        let _ = task.await;
    }
    Ok(result?)
}
