//! One entry point per stage that writes files in place, for the worker:
//! the fit stage ([`fit`]: the classifier from the samples, or the
//! opponent-move predictors of a shaped search) and the report stage's
//! inputs ([`report_partitions`]: the games partitions the report covers,
//! cut where an SPRT decided). The games and samples stages play through
//! [`crate::Executor`] and [`crate::training::run_samples`].

use std::path::{Path, PathBuf};

use crate::files::IoError;
use crate::layout::{self, GAMES_DIR};
use crate::sprt::{ShardPairs, Verdict, Walk};
use crate::{Spec, parquet_io};

/// A stage's file, written in place: where (relative to the experiment
/// directory), its hash, its size and the rows it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The file, relative to the experiment directory.
    pub file: String,
    /// The artifact's hash (the name's), or the file's SHA-256.
    pub hash: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// The rows (samples, decisions, games) it stands for.
    pub rows: u64,
}

/// Why the fit stage failed.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// Reading the samples or writing the artifact failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The fit itself failed.
    #[error(transparent)]
    Fit(#[from] crate::LearnError),
}

/// The fit stage in experiment directory `dir`: reads the samples, fits the
/// classifier and writes the model and its report; for a shaped search
/// instead fits the opponent-move predictors on their own training hands
/// and writes the artifact and its held-out report.
pub fn fit(spec: &Spec, dir: &Path, threads: usize) -> Result<Written, FitError> {
    if !spec.needs_classifier() {
        return fit_predictors(spec, dir);
    }
    let mut samples = Vec::new();
    for part in parquet_io::parts_in(&dir.join(layout::SAMPLES_DIR))? {
        samples.extend(parquet_io::read_samples(&part)?);
    }
    let out = crate::training::fit(spec, &samples, threads).map_err(FitError::Fit)?;
    layout::write_atomic(&dir.join(layout::model_file(&out.hash)), &out.artifact)?;
    let report = serde_json::to_vec_pretty(&out.report).expect("the report serialises");
    layout::write_atomic(&dir.join(layout::CLASSIFIER_REPORT), &report)?;
    Ok(Written {
        file: layout::model_file(&out.hash),
        hash: out.hash,
        bytes: out.artifact.len() as u64,
        rows: spec.classifier.samples,
    })
}

fn fit_predictors(spec: &Spec, dir: &Path) -> Result<Written, FitError> {
    let training = spec
        .prediction
        .expect("a spec that needs predictors has their training");
    let (set, json) = crate::predictors::fit(&training).map_err(FitError::Fit)?;
    let hash = crate::evals::eval_hash(&json);
    layout::write_atomic(&dir.join(layout::model_file(&hash)), json.as_bytes())?;
    let report = serde_json::to_vec_pretty(&crate::predictors::PredictionReport::of(&set, &hash))
        .expect("the report serialises");
    layout::write_atomic(&dir.join(layout::PREDICTION_REPORT), &report)?;
    Ok(Written {
        file: layout::model_file(&hash),
        hash,
        bytes: json.len() as u64,
        rows: set.holdout.iter().map(|s| s.decisions).sum(),
    })
}

/// The games partitions the report of the experiment in `dir` covers, in
/// shard order: every shard's, or under `[stop] sprt` those up to the shard
/// where the test decided (the coordinator's walk, pair by pair). The
/// partitions are read only to walk the test; a missing one ends the walk
/// (the caller waits for it).
pub fn report_partitions(spec: &Spec, dir: &Path) -> Result<Vec<PathBuf>, IoError> {
    let mut parts: Vec<PathBuf> = crate::grid::shards(spec)
        .iter()
        .map(|s| dir.join(GAMES_DIR).join(layout::part_file(s.index)))
        .collect();
    if let Some(sprt) = &spec.stop {
        let mut walk = Walk::untraced(*sprt);
        let mut kept = parts.len();
        for (k, p) in parts.iter().enumerate() {
            if !p.exists() {
                break;
            }
            let rows = parquet_io::read_partition(p)?;
            if walk.step(&ShardPairs::of_rows(rows.iter().map(|(_, r)| r))) != Verdict::Undecided {
                kept = k + 1;
                break;
            }
        }
        parts.truncate(kept);
    }
    Ok(parts)
}
