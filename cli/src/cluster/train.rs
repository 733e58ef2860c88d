//! `muggins run` of a training spec (`[train]`, docs/train.md): the
//! generations in this process on every thread asked for, progress on
//! stderr, Ctrl-C stopping at the next safe point (the same command
//! resumes), and the report (`report.md`, `report.json`, `curve.svg`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jobs::train::{Summary, TrainSpec, Trainer};

use super::*;

/// Runs (or resumes) the training spec `text` from `origin`.
pub fn run_training(text: &str, origin: &str, a: &RunArgs) -> Result<()> {
    let spec = TrainSpec::from_toml(text).with_context(|| format!("spec {origin}"))?;
    if let Some(w) = a.workers {
        eprintln!("--workers {w}: ignored; a training spec runs in this process, on --threads threads");
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
    let flag = stop.clone();
    rt.spawn(async move {
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
    let summary = trainer.run().with_context(|| format!("training {}", spec.name))?;
    let Some(summary) = summary else {
        return Err(anyhow::Error::new(Interrupted { out: dir }));
    };
    write_report(&dir, &spec, &summary)?;
    eprintln!(
        "done in {:.1} s: best network {} ({}); report {}",
        t0.elapsed().as_secs_f64(),
        &summary.best[..12],
        dir.join(jobs::layout::BEST_NET).display(),
        dir.join(jobs::layout::REPORT_MD_FILE).display()
    );
    Ok(())
}

/// Writes a training run's report (`report.json`, `curve.svg`, `report.md`) into `dir`.
pub(crate) fn write_report(dir: &Path, spec: &TrainSpec, s: &Summary) -> Result<()> {
    let json = serde_json::to_vec_pretty(s).expect("a summary serialises");
    jobs::layout::write_atomic(&dir.join(jobs::layout::REPORT_JSON_FILE), &json)?;
    let svg = analysis::train_report::curve_svg(s);
    jobs::layout::write_atomic(&dir.join(jobs::layout::TRAIN_CURVE), svg.as_bytes())?;
    let md = analysis::train_report::markdown(spec, s);
    jobs::layout::write_atomic(&dir.join(jobs::layout::REPORT_MD_FILE), md.as_bytes())?;
    Ok(())
}
