//! What each stage computes: the grid's games, training samples, the
//! classifier fit and the report. Each runs on blocking threads, reporting
//! progress and watching for cancellation.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use jobs::layout::{self, Stage};
use jobs::{ExecError, Executor, Spec};

use crate::assignment::Assignment;
use crate::error::TaskError;

/// What a task produced.
pub(crate) enum Output {
    Games(Vec<jobs::GameRow>),
    Samples(Vec<jobs::training::SampleRow>),
    /// A stage that wrote its own files (fit, report): the file that marks it
    /// done (relative to the experiment directory), its SHA-256 and size, and
    /// a row count.
    Written {
        file: String,
        hash: String,
        bytes: u64,
        rows: u64,
    },
}

/// Why a stage's work stopped early.
pub(crate) enum Halt {
    Cancelled,
    Failed(TaskError),
}

impl From<TaskError> for Halt {
    fn from(e: TaskError) -> Halt {
        Halt::Failed(e)
    }
}

/// A stage's work: runs on a blocking thread with a progress counter and a
/// cancel flag.
pub(crate) type Work = Box<dyn FnOnce(&AtomicU64, &AtomicBool) -> Result<Output, Halt> + Send>;

/// `relative` under the results root, confined to it.
pub(crate) fn resolve(root: &Path, relative: &str) -> Result<PathBuf, TaskError> {
    layout::confine(root, relative).map_err(|e| TaskError::Path(e.to_string()))
}

/// The work of assignment `a` (loading what it needs first).
pub(crate) fn prepare(results: &Path, executor: &Arc<Executor>, a: &Assignment) -> Result<Work, TaskError> {
    let spec = a.spec.clone();
    let shard = a.shard;
    Ok(match a.stage {
        Stage::Games => {
            let model = match &a.model {
                Some(hash) if spec.needs_classifier() => Some(Arc::new(jobs::predictors::Trained::Classifier(
                    load_model(results, a, hash)?,
                ))),
                Some(hash) if spec.needs_predictors() => Some(Arc::new(jobs::predictors::Trained::Predictors(
                    load_predictors(results, a, hash)?,
                ))),
                _ => None,
            };
            let executor = Arc::clone(executor);
            // The per-move table, when asked for, goes in place before the
            // games partition is written, so a completed shard has both.
            let moves_path = match spec.output_moves {
                true => Some(resolve(results, &a.dir.moves_partition(shard.index))?),
                false => None,
            };
            Box::new(move |progress, cancel| {
                match executor.run_with_moves(&spec, shard, model.as_deref(), progress, cancel) {
                    Ok((rows, moves)) => {
                        if let Some(path) = moves_path {
                            write_moves(&path, &spec.name, &moves)?;
                        }
                        Ok(Output::Games(rows))
                    }
                    Err(ExecError::Cancelled) => Err(Halt::Cancelled),
                    Err(e) => Err(TaskError::Exec(e.to_string()).into()),
                }
            })
        }
        Stage::Samples => Box::new(move |progress, _| {
            let rows = jobs::training::run_samples(&spec, shard);
            progress.store(shard.games, Ordering::Relaxed);
            Ok(Output::Samples(rows))
        }),
        Stage::Fit => {
            let dir = resolve(results, a.dir.output())?;
            let threads = executor.threads();
            Box::new(move |_, _| fit(&spec, &dir, threads).map_err(Halt::from))
        }
        Stage::Report => {
            let dir = resolve(results, a.dir.output())?;
            Box::new(move |_, cancel| report(&spec, &dir, cancel))
        }
    })
}

/// Reads the fit stage's artifact `hash` and parses it with `parse`, which
/// checks the content hash. Never falls back.
fn read_artifact<T>(
    results: &Path,
    a: &Assignment,
    hash: &str,
    parse: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, TaskError> {
    let path = resolve(results, &a.dir.file(&layout::model_file(hash)))?;
    let shown = path.display().to_string();
    let bytes = std::fs::read(&path).map_err(|e| TaskError::ModelMissing {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    parse(&bytes).map_err(|message| TaskError::ModelCorrupt { path: shown, message })
}

/// The grid's predictors artifact.
fn load_predictors(results: &Path, a: &Assignment, hash: &str) -> Result<jobs::predictors::Predictors, TaskError> {
    read_artifact(results, a, hash, |b| jobs::predictors::from_bytes(b, hash))
}

/// The grid's classifier artifact.
fn load_model(results: &Path, a: &Assignment, hash: &str) -> Result<classifier::Artifact, TaskError> {
    read_artifact(results, a, hash, |b| {
        classifier::Artifact::from_bytes(b, hash).map_err(|e| e.to_string())
    })
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), TaskError> {
    layout::write_atomic(path, bytes).map_err(|e| TaskError::Io(e.to_string()))
}

/// The fit stage of a shaped search: fits the opponent-move predictors on
/// their own training hands, writes the artifact and its held-out report.
fn fit_predictors(spec: &Spec, dir: &Path) -> Result<Output, TaskError> {
    let training = spec
        .prediction
        .expect("a spec that needs predictors has their training");
    let (set, json) = jobs::predictors::fit(&training).map_err(TaskError::Fit)?;
    let hash = jobs::evals::eval_hash(&json);
    write_atomic(&dir.join(layout::model_file(&hash)), json.as_bytes())?;
    let report =
        serde_json::to_vec_pretty(&jobs::predictors::PredictionReport::of(&set, &hash)).expect("the report serialises");
    write_atomic(&dir.join(layout::PREDICTION_REPORT), &report)?;
    Ok(Output::Written {
        file: layout::model_file(&hash),
        hash,
        bytes: json.len() as u64,
        rows: set.holdout.iter().map(|s| s.decisions).sum(),
    })
}

/// The fit stage: reads the samples, fits, writes the model and the report.
fn fit(spec: &Spec, dir: &Path, threads: usize) -> Result<Output, TaskError> {
    if !spec.needs_classifier() {
        return fit_predictors(spec, dir);
    }
    let io = |e: jobs::IoError| TaskError::Io(e.to_string());
    let mut samples = Vec::new();
    for part in jobs::parts_in(&dir.join(layout::SAMPLES_DIR)).map_err(io)? {
        samples.extend(jobs::read_samples(&part).map_err(io)?);
    }
    let out = jobs::training::fit(spec, &samples, threads).map_err(TaskError::Fit)?;
    write_atomic(&dir.join(layout::model_file(&out.hash)), &out.artifact)?;
    let report = serde_json::to_vec_pretty(&out.report).expect("the report serialises");
    write_atomic(&dir.join(layout::CLASSIFIER_REPORT), &report)?;
    Ok(Output::Written {
        file: layout::model_file(&out.hash),
        hash: out.hash,
        bytes: out.artifact.len() as u64,
        rows: spec.classifier.samples,
    })
}

/// The report stage: builds the report from the partitions alone.
fn report(spec: &Spec, dir: &Path, cancel: &AtomicBool) -> Result<Output, Halt> {
    let mut parts: Vec<PathBuf> = jobs::shards(spec)
        .iter()
        .map(|s| dir.join(layout::GAMES_DIR).join(jobs::part_file(s.index)))
        .collect();
    if let Some(sprt) = &spec.stop {
        // The SPRT ended the games where it decided: the partitions up to
        // that shard are the experiment's (the same walk as the coordinator's).
        let mut total = jobs::sprt::PairStats::default();
        let mut kept = parts.len();
        for (k, p) in parts.iter().enumerate() {
            if !p.exists() {
                break;
            }
            let rows: Vec<jobs::GameRow> = jobs::read_partition(p)
                .map_err(|e| TaskError::Io(e.to_string()))?
                .into_iter()
                .map(|(_, r)| r)
                .collect();
            total.merge(&jobs::sprt::shard_stats(&rows));
            if sprt.verdict(sprt.llr(&total)) != jobs::sprt::Verdict::Undecided {
                kept = k + 1;
                break;
            }
        }
        parts.truncate(kept);
    }
    // Every partition is in place before the coordinator leases the report;
    // one lost since then makes the coordinator re-run its task and take
    // this lease back (then `cancel` is set), so a short wait suffices.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while let Some(missing) = parts.iter().find(|p| !p.exists()) {
        if cancel.load(Ordering::SeqCst) {
            return Err(Halt::Cancelled);
        }
        if std::time::Instant::now() > deadline {
            return Err(TaskError::PartitionMissing(missing.display().to_string()).into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    analysis::write_report(dir).map_err(|e| TaskError::Io(e.to_string()))?;
    let report = dir.join(layout::REPORT_JSON);
    let bytes = std::fs::read(&report).map_err(|e| TaskError::Io(format!("{}: {e}", report.display())))?;
    Ok(Output::Written {
        file: layout::REPORT_JSON.into(),
        hash: classifier::sha256_hex(&bytes),
        bytes: bytes.len() as u64,
        rows: spec.games(),
    })
}

/// Writes a shard's per-move table under its final name (atomically: a
/// re-run writes the same bytes).
fn write_moves(path: &Path, experiment: &str, moves: &[jobs::MoveRow]) -> Result<(), TaskError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| TaskError::Io(format!("{}: {e}", dir.display())))?;
    }
    layout::write_atomic(path, &jobs::moves_parquet(experiment, moves)).map_err(|e| TaskError::Io(e.to_string()))
}
