//! `muggins run`: a coordinator and workers in one process over loopback.

use super::client::connect;
use super::*;

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

/// A run stopped by Ctrl-C or SIGTERM: nothing is lost, and the same
/// command resumes it.
#[derive(Debug)]
pub struct Interrupted {
    /// The experiment's results directory.
    pub out: std::path::PathBuf,
}

impl Interrupted {
    /// The exit status (a shell's for SIGINT).
    pub const EXIT: i32 = 130;
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "interrupted: what was played is kept in {}; run the same command again to resume",
            self.out.display()
        )
    }
}

impl std::error::Error for Interrupted {}

/// Resolves on Ctrl-C or SIGTERM with the run's [`Interrupted`] error: the
/// workers then give their tasks back (the games of finished chunks are
/// kept), agents' processes end and their directories go; a second signal
/// stops the process at once.
async fn interruption(out: std::path::PathBuf) -> anyhow::Error {
    super::termination().await;
    eprintln!("\ninterrupted: giving back the tasks in play (again to stop at once)");
    tokio::spawn(async {
        super::termination().await;
        eprintln!("stopped at once");
        std::process::exit(Interrupted::EXIT);
    });
    anyhow::Error::new(Interrupted { out })
}

/// `muggins run`: a coordinator and workers in this process, over loopback gRPC.
pub fn run(a: RunArgs) -> Result<()> {
    init_logs("warn,agents=info", false);
    let (text, origin) = match &a.spec {
        Some(p) => (read_spec(p)?, p.display().to_string()),
        None => (
            jobs::MYERS2014_SPEC.to_string(),
            "the built-in thesis spec (jobs/specs/myers2014.toml)".into(),
        ),
    };
    if jobs::train::is_train_spec(&text) {
        return super::train::run_training(&text, &origin, &a);
    }
    let spec = jobs::Spec::from_toml(&text).with_context(|| format!("spec {origin}"))?;
    // The run's workers play only this experiment: an interrupted run of
    // another spec in the same --out waits for its own spec to be run again.
    let spec_id = spec.id();
    let (n_workers, threads) = run_shape(a.workers, a.threads, cores())?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("--out {}: cannot create it", a.out.display()))?;
    let _lock = super::lock_out_dir(&a.out)?;
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
    let mut printed = false;
    let final_state = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("binding a loopback port")?;
        let url = format!("http://{}", listener.local_addr()?);
        // Workers stop first, while the coordinator still answers them (a
        // task the end made unneeded is given back, not retried against a
        // closed port); then the coordinator.
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let (workers_stop_tx, workers_stop_rx) = tokio::sync::watch::channel(false);
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
        // Cross-checks need other workers: a second to replay a range and a
        // third to break a tie (a lone worker would wait out the checks'
        // avoid window, two would wait forever on a dispute).
        if n_workers < 3 {
            config.check_fraction = 0.0;
        }
        let web = if a.no_web {
            None
        } else {
            Some(
                tokio::net::TcpListener::bind(a.web_listen)
                    .await
                    .with_context(|| format!("--web-listen {}: cannot bind", a.web_listen))?,
            )
        };
        let web_url = match &web {
            Some(l) => Some(format!("http://{}/", l.local_addr()?)),
            None => None,
        };
        let extra = coordinator::Listeners { metrics: None, web };
        let server = tokio::spawn(coordinator::serve_all(listener, extra, config, until(stop_rx.clone())));
        let mut workers = Vec::new();
        for k in 0..n_workers {
            let share = threads / n_workers + usize::from(k < threads % n_workers);
            let config = worker::Config {
                coordinator: url.clone(),
                results: a.out.clone(),
                threads: share,
                // The fit runs alone: every thread of the run.
                fit_threads: threads,
                worker_id: format!("{LOCAL_WORKER_PREFIX}{k}"),
                exit_when_done: false,
                experiment: Some(spec_id.clone()),
                // When the run ends, a task still in play is unneeded (the
                // experiment is over) or interrupted: give it back at once.
                grace: Duration::ZERO,
                chunk_every: worker::DEFAULT_CHUNK_EVERY,
                auth: Default::default(),
                tls: None,
            };
            workers.push(worker::run(config, until(workers_stop_rx.clone())));
        }
        // The run ends when the experiment does, or when every worker has
        // stopped (a worker only stops early on an error it cannot get past).
        let mut workers: tokio::task::JoinSet<_> = workers.into_iter().collect();
        // Boxed so that it can be dropped when interrupted: its open watch
        // stream would hold the coordinator's graceful stop.
        let mut drive = Box::pin(drive(&url, web_url.as_deref(), &text, &spec_id));
        let mut signalled = Box::pin(interruption(a.out.join(&spec.output)));
        let mut worker_error = None;
        let outcome = loop {
            tokio::select! {
                o = &mut drive => break o,
                e = &mut signalled => break Err(e),
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
        drop(drive);
        if let (true, Some(url), Ok(e)) = (a.keep_web, &web_url, &outcome) {
            if e.state == ExperimentState::Succeeded as i32 {
                print_summary(&a.out.join(&spec.output))?;
                printed = true;
            }
            eprintln!("the run is over; the web view stays at {url} until Ctrl-C");
            super::termination().await;
        }
        let _ = workers_stop_tx.send(true);
        while workers.join_next().await.is_some() {}
        let _ = stop_tx.send(true);
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
    if !printed {
        print_summary(&a.out.join(&spec.output))?;
    }
    Ok(())
}

/// The finished experiment's summary table and where its rows and report are.
fn print_summary(dir: &Path) -> Result<()> {
    // The report stage has already aggregated every row: summarise from it
    // rather than reading the partitions again.
    let report = analysis::read_report(dir)?;
    println!("{}", analysis::summary_table(&report));
    println!(
        "{} in {}",
        plural(report.games, "row"),
        dir.join(jobs::layout::GAMES_DIR).display()
    );
    println!("report: {}", dir.join(jobs::layout::REPORT_MD).display());
    Ok(())
}

/// The ids of `muggins run`'s in-process workers start with this.
const LOCAL_WORKER_PREFIX: &str = "local-";

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
        line.push_str(&format!(", {}", rate_text(e.games_per_second)));
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
async fn drive(url: &str, web: Option<&str>, text: &str, spec_id: &str) -> Result<Experiment> {
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
            // A grid: no training start file.
            start_model: Vec::new(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner();
    let e = r.experiment.context("no experiment returned")?;
    // The workers were bound to the id this process derived from the spec.
    anyhow::ensure!(
        e.id == spec_id,
        "the coordinator named the experiment {} where this run's workers expect {spec_id}",
        e.id
    );
    if !r.created && e.games_done == 0 && e.state == ExperimentState::Running as i32 {
        eprintln!(
            "starting experiment {} over (none of its games are in its directory)",
            e.id
        );
    } else if !r.created {
        eprintln!(
            "resuming experiment {} ({} of {} games already done, files checked)",
            e.id, e.games_done, e.games_total
        );
    }
    // Another spec's interrupted run in this --out waits for its own spec.
    if let Ok(list) = c.list_experiments(ListExperimentsRequest {}).await {
        for o in list.into_inner().experiments {
            if o.id != e.id && o.state == ExperimentState::Running as i32 {
                eprintln!(
                    "note: this --out also holds unfinished experiment {} ({} of {} games); this run leaves it \
                     alone: run its spec to resume it",
                    o.id, o.games_done, o.games_total
                );
            }
        }
    }
    eprintln!(
        "coordinator at {url}: `muggins status {} --watch --coordinator {url}` follows this run",
        e.id
    );
    if let Some(web) = web {
        eprintln!("web view at {web}");
        eprintln!("this experiment's page: {web}experiments/{}", e.id);
    }
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
    if played == 0 && last.state == ExperimentState::Succeeded as i32 {
        eprintln!(
            "{} {}: already complete, {} (files checked; nothing to play)",
            last.id,
            state_name(last.state),
            plural(last.games_done, "game")
        );
        return Ok(last);
    }
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
