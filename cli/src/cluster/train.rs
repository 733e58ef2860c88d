//! `muggins run` of a training spec (`[train]`, docs/train.md): the
//! generations in this process on every thread asked for (a coordinator's
//! workers play a submitted one: `jobs::train::cluster`), progress on
//! stderr and in the web view (its training pages), Ctrl-C stopping at the
//! next safe point (the same command resumes), and the report
//! (`report.md`, `report.json`, `curve.svg`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jobs::train::{Summary, TrainSpec, Trainer};

use super::*;

/// Runs (or resumes) the training spec `text` from `origin`.
pub fn run_training(text: &str, origin: &str, a: &RunArgs) -> Result<()> {
    let spec = TrainSpec::from_toml(text).with_context(|| format!("spec {origin}"))?;
    if let Some(w) = a.workers {
        eprintln!(
            "--workers {w}: ignored; `muggins run` plays a training spec in this process, on --threads threads \
             (workers share it when it is submitted to a coordinator: `muggins submit`, docs/train.md)"
        );
    }
    if a.threads == Some(0) {
        bail!("--threads 0: at least one thread is needed");
    }
    let threads = a.threads.unwrap_or_else(cores);
    let dir = a.out.join(&spec.name);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("--out {}: cannot create {}", a.out.display(), dir.display()))?;
    let _lock = super::lock_out_dir(&dir)?;
    eprintln!(
        "training {} from {origin}: {} of {} self-play games on {}, {}; results in {}",
        spec.name,
        plural(spec.train.generations, "generation"),
        spec.train.games,
        spec.train.game,
        plural(threads as u64, "thread"),
        dir.display()
    );
    let stop = Arc::new(AtomicBool::new(false));
    let rt = runtime()?;
    let view = View::start(&rt, a, &dir)?;
    if let Some(v) = &view {
        eprintln!("web view at {}", v.url);
        eprintln!("this run's page: {}training/{}", v.url, spec.name);
    }
    let flag = stop.clone();
    let signals = rt.spawn(async move {
        super::termination().await;
        eprintln!("\ninterrupted: stopping at the next safe point (again to stop at once)");
        flag.store(true, Ordering::Relaxed);
        super::termination().await;
        eprintln!("stopped at once");
        std::process::exit(Interrupted::EXIT);
    });
    let t0 = std::time::Instant::now();
    let progress = |line: &str| eprintln!("[{:7.1} s] {line}", t0.elapsed().as_secs_f64());
    let trainer = Trainer {
        spec: &spec,
        dir: dir.clone(),
        threads,
        stop: &stop,
        progress: &progress,
    };
    let summary = match trainer.run().with_context(|| format!("training {}", spec.name)) {
        Ok(Some(s)) => s,
        // Stopped (Ctrl-C) or failed: the view goes, the training's error is told.
        ended => {
            stop_view(&rt, view)?;
            return Err(ended
                .err()
                .unwrap_or_else(|| anyhow::Error::new(Interrupted { out: dir })));
        }
    };
    write_report(&dir, &spec, &summary)?;
    eprintln!(
        "done in {:.1} s: best network {} ({}); report {}",
        t0.elapsed().as_secs_f64(),
        &summary.best[..12],
        dir.join(jobs::layout::BEST_NET).display(),
        dir.join(jobs::layout::REPORT_MD_FILE).display()
    );
    if let (true, Some(v)) = (a.keep_web, &view) {
        // The wait below takes the next Ctrl-C, not the training's handler.
        signals.abort();
        eprintln!("the run is over; the web view stays at {} until Ctrl-C", v.url);
        rt.block_on(super::termination());
    }
    stop_view(&rt, view)
}

/// The web view of a training run: a coordinator with no experiments (its
/// own state file in the run's directory, so that it never shares one with
/// an experiment's run in the same `--out`) serving the training pages of
/// `--out`.
struct View {
    url: String,
    stop: tokio::sync::watch::Sender<bool>,
    server: tokio::task::JoinHandle<Result<(), coordinator::ServeError>>,
}

impl View {
    /// Starts the view unless `--no-web`.
    fn start(rt: &tokio::runtime::Runtime, a: &RunArgs, dir: &Path) -> Result<Option<View>> {
        if a.no_web {
            return Ok(None);
        }
        let (web, grpc) = rt.block_on(async {
            let web = tokio::net::TcpListener::bind(a.web_listen)
                .await
                .with_context(|| format!("--web-listen {}: cannot bind", a.web_listen))?;
            let grpc = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .context("binding a loopback port")?;
            anyhow::Ok((web, grpc))
        })?;
        let url = format!("http://{}/", web.local_addr()?);
        let config = coordinator::Config::new(dir.join(VIEW_STATE), a.out.clone());
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let extra = coordinator::Listeners {
            metrics: None,
            web: Some(web),
        };
        let server = rt.spawn(coordinator::serve_all(grpc, extra, config, async move {
            let _ = stopped.wait_for(|s| *s).await;
        }));
        Ok(Some(View { url, stop, server }))
    }
}

/// The view's state file, in the training run's directory.
const VIEW_STATE: &str = ".muggins-view.sqlite";

/// Stops the view (if any) and waits for it.
fn stop_view(rt: &tokio::runtime::Runtime, view: Option<View>) -> Result<()> {
    let Some(v) = view else { return Ok(()) };
    let _ = v.stop.send(true);
    match rt.block_on(v.server) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(anyhow::Error::from(e)),
        Err(e) => bail!("the web view's task failed: {e}"),
    }
}

/// Writes a training run's report (`report.json`, `curve.svg`, `report.md`) into `dir`.
pub(crate) fn write_report(dir: &Path, spec: &TrainSpec, s: &Summary) -> Result<()> {
    Ok(analysis::train_report::write(dir, spec, s)?)
}
