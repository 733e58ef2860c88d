//! The client commands (submit, status, cancel) and how a client connects
//! to a coordinator and explains what went wrong.

use super::*;

impl CoordinatorUrl {
    /// A client of the coordinator, and what its errors are to be read against.
    async fn open(&self) -> Result<(Client, Rpc)> {
        // The URL first: a bad URL is the likelier mistake than a bad CA file.
        proto::client::check_url(&self.coordinator, self.tls_ca.is_some())
            .map_err(|e| url_error(&self.coordinator, e))?;
        let token = self.bearer()?;
        let client = connect(&self.coordinator, token.as_deref(), self.tls()?).await?;
        Ok((
            client,
            Rpc {
                url: self.coordinator.clone(),
                token_given: token.is_some(),
            },
        ))
    }

    /// The bearer token: from --token-file (its owner's alone, else
    /// refused), or --token / MUGGINS_TOKEN; both given is refused unless
    /// they agree.
    pub(super) fn bearer(&self) -> Result<Option<String>> {
        token_from(
            self.token.as_deref(),
            self.token_file.as_deref(),
            "--token-file",
            "--token (or MUGGINS_TOKEN)",
        )
    }

    pub(super) fn tls(&self) -> Result<Option<proto::client::ClientTls>> {
        let Some(ca) = &self.tls_ca else { return Ok(None) };
        let ca_pem = std::fs::read(ca).with_context(|| format!("--tls-ca {}", ca.display()))?;
        Ok(Some(proto::client::ClientTls {
            ca_pem,
            domain: self.tls_domain.clone(),
        }))
    }
}

/// How long a client waits for the coordinator to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

pub(super) async fn connect(url: &str, token: Option<&str>, tls: Option<proto::client::ClientTls>) -> Result<Client> {
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

pub fn submit(a: SubmitArgs) -> Result<()> {
    let text = read_spec(&a.spec)?;
    let job = jobs::Job::from_toml(&text).with_context(|| format!("spec {}", a.spec.display()))?;
    let start_model = start_file(&job)?;
    runtime()?.block_on(async {
        let (mut c, rpc) = a.url.open().await?;
        let r = c
            .submit_experiment(SubmitExperimentRequest {
                spec_toml: text,
                start_model,
            })
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

/// The most a submission's start file may hold: a request's limit (4 MiB)
/// less room for the spec.
const START_MAX_BYTES: usize = 4 * 1024 * 1024 - 256 * 1024;

/// A training spec's `train.start` file, as parsed (its hash the spec's),
/// to send with the submission; empty without one.
fn start_file(job: &jobs::Job) -> Result<Vec<u8>> {
    let jobs::Job::Train(spec) = job else {
        return Ok(Vec::new());
    };
    let (Some(path), Some(sha)) = (&spec.train.start, &spec.train.start_sha256) else {
        return Ok(Vec::new());
    };
    let bytes = std::fs::read(path).with_context(|| format!("train.start = {path:?}"))?;
    if &jobs::layout::bytes_digest(&bytes) != sha {
        bail!("train.start = {path:?}: the file changed while it was read; submit again");
    }
    if bytes.len() > START_MAX_BYTES {
        bail!(
            "train.start = {path:?}: the file has {} bytes, and a submission carries at most {START_MAX_BYTES}: run \
             the spec with `muggins run`",
            bytes.len()
        );
    }
    Ok(bytes)
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
    // The id is checked here, not by clap: with MUGGINS_TOKEN set, clap's
    // usage line would show --token as if it were required.
    let Some(id) = a.id.clone() else {
        anyhow::bail!("cancel needs the experiment's id: muggins cancel ID (`muggins status` lists them)");
    };
    runtime()?.block_on(async {
        let (mut c, rpc) = a.url.open().await?;
        let e = match c.cancel_experiment(CancelExperimentRequest { id: id.clone() }).await {
            Ok(e) => e.into_inner(),
            Err(s) => return Err(rpc.experiment_error(&mut c, &id, s).await),
        };
        println!("{}", describe(&e));
        Ok(())
    })
}

/// A token from `file` (flag `flag`): its owner's alone (mode 0600), else
/// refused; no file: `given` (the flag `other` or its variable). Both
/// given are refused unless they agree. The file becomes a path no agent
/// of this process may read.
pub(super) fn token_from(
    given: Option<&str>,
    file: Option<&std::path::Path>,
    flag: &str,
    other: &str,
) -> Result<Option<String>> {
    let Some(path) = file else {
        return Ok(given.map(str::to_string));
    };
    let shown = path.display();
    // No agent this process starts may read it.
    jobs::external::protect(path);
    let meta = std::fs::metadata(path).with_context(|| format!("{flag} {shown}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            bail!(
                "{flag} {shown} has mode {mode:04o}: others than its owner can read the token; run `chmod 600 {shown}`"
            );
        }
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("{flag} {shown}"))?;
    let token = text.trim().to_string();
    if token.is_empty() || token.contains(char::is_whitespace) {
        bail!("{flag} {shown} holds no token (one line, no spaces, is expected)");
    }
    if given.is_some_and(|t| t != token) {
        bail!("{flag} {shown} and {other} give two different tokens: give one of them");
    }
    Ok(Some(token))
}
