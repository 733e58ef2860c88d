//! The opponent-modeling stages: training games (Table 9) written as samples,
//! and the fit that turns them into a model artifact and a report.

use std::time::Instant;

use classifier::{
    Artifact, Confusion, FitError, Forest, ForestParams, Mda, Model, Sample, folds, holdout_split, majority,
};
use serde::{Deserialize, Serialize};

use crate::LearnError;
use crate::grid::Shard;
use crate::rows::SampleRow;
use crate::spec::Spec;

/// Training games per shard of the samples stage.
pub const TRAINING_SHARD_GAMES: u64 = 10_000;

/// The shards of the samples stage: the spec's training games, cut into
/// shards of [`TRAINING_SHARD_GAMES`].
pub fn sample_shards(spec: &Spec) -> Vec<Shard> {
    crate::grid::cut(spec.training_games(), TRAINING_SHARD_GAMES)
}

/// Plays the training games of a shard: one row per target turn, in game
/// then turn order.
pub fn run_samples(spec: &Spec, shard: Shard) -> Vec<SampleRow> {
    let rules = spec.rules();
    let mut out = Vec::new();
    for i in shard.first_game..shard.first_game + shard.games {
        let g = engine::training_game(&rules, spec.seed, i);
        for (t, f) in g.samples.iter().enumerate() {
            out.push(SampleRow {
                game: i,
                turn: t as u32 + 1,
                player_type: g.player,
                target_type: g.target,
                x: f.to_array(),
            });
        }
    }
    out
}

/// SHA-256 (hex) over the samples, one line each, in order.
pub fn samples_checksum(rows: &[SampleRow]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for r in rows {
        h.update(format!("{},{},{},{},{:?}\n", r.game, r.turn, r.player_type, r.target_type, r.x).as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// One classifier kind fitted and scored on one sample size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// `mda` or `random-forest`.
    pub kind: String,
    /// Samples evaluated on, train and holdout together: the first this many
    /// the samples stage gave.
    pub samples: u64,
    /// Samples cross-validated on and the model fitted on.
    pub train: u64,
    /// Samples held out (the `[classifier] holdout` fraction, rounded), scored
    /// once by the model fitted on `train`.
    pub holdout: u64,
    /// Accuracy of each cross-validation fold (`[classifier] folds` of them,
    /// over `train`), as a fraction.
    pub cv_folds: Vec<f64>,
    /// The mean of `cv_folds`; `kind = "best"` picks the kind with the higher.
    pub cv_accuracy: f64,
    /// Holdout counts. Rows: actual random, scorer, defender; columns: predicted.
    pub confusion: [[u64; 3]; 3],
    /// Accuracy on the holdout, as a fraction (Eq. 5 / 9).
    pub accuracy: f64,
    /// Wall time of the fit on `train`, in milliseconds.
    pub fit_ms: f64,
    /// Wall time of predicting the holdout, in milliseconds.
    pub predict_ms: f64,
}

/// `classifier/report.json` (read back by the analysis).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Samples the samples stage produced (at least the spec needs).
    pub samples_available: u64,
    /// `[classifier] kind`: `mda`, `random-forest` or `best`.
    pub kind_asked: String,
    /// The kind of the model written: `mda` or `random-forest`.
    pub chosen_kind: String,
    /// SHA-256 (hex) of the model artifact's bytes.
    pub model_hash: String,
    /// The model, relative to the experiment directory:
    /// `classifier/model-<model_hash>.json`.
    pub model_file: String,
    /// The prediction before the target's first turn: the most common type
    /// among the chosen model's training samples (`random`, `scorer` or `defender`).
    pub prior: String,
    /// The chosen model's evaluation on `[classifier] samples`.
    pub chosen: Evaluation,
    /// Both kinds at each of `[classifier] compare_samples` (Tables 13-18).
    pub comparisons: Vec<Evaluation>,
}

fn forest_params(spec: &Spec, threads: usize) -> ForestParams {
    ForestParams {
        seed: spec.seed,
        threads,
        ..ForestParams::default()
    }
}

fn fit_kind(kind: &str, data: &[Sample], spec: &Spec, threads: usize) -> Result<Model, FitError> {
    match kind {
        "mda" => Mda::fit(data).map(Model::Mda),
        _ => Forest::fit(data, &forest_params(spec, threads)).map(Model::RandomForest),
    }
}

fn pick(data: &[Sample], idx: &[usize]) -> Vec<Sample> {
    idx.iter().map(|&i| data[i]).collect()
}

/// Runs `jobs` (each given the tree threads it may use) on up to `threads`
/// threads, and returns their results in order: the same whatever the
/// count (every fit is a pure function of its samples and the seed).
fn in_parallel<T: Send>(threads: usize, jobs: Vec<Box<dyn FnOnce(usize) -> T + Send + '_>>) -> Vec<T> {
    let lanes = threads.clamp(1, jobs.len().max(1));
    if lanes == 1 {
        return jobs.into_iter().map(|job| job(threads)).collect();
    }
    // Each lane's share of the threads grows a forest's trees.
    let per_lane = (threads / lanes).max(1);
    let queue = std::sync::Mutex::new(jobs.into_iter().enumerate());
    let mut out: Vec<(usize, T)> = std::thread::scope(|scope| {
        let lanes: Vec<_> = (0..lanes)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                        let Some((k, job)) = next else { break done };
                        done.push((k, job(per_lane)));
                    }
                })
            })
            .collect();
        lanes
            .into_iter()
            .flat_map(|lane| lane.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    out.sort_by_key(|(k, _)| *k);
    out.into_iter().map(|(_, t)| t).collect()
}

/// A fit of the cross validation (its fold's accuracy) or the final one
/// (the model and the fit's milliseconds).
type FitJob<'a> = Box<dyn FnOnce(usize) -> Result<FitDone, FitError> + Send + 'a>;

enum FitDone {
    Fold(f64),
    Final(Model, f64),
}

/// Cross validation on `train`, then a fit on all of it scored on `test`:
/// the folds and the final fit run side by side on `threads` threads.
fn evaluate(kind: &str, data: &[Sample], spec: &Spec, threads: usize) -> Result<(Evaluation, Model), FitError> {
    let c = &spec.classifier;
    let (train, test) = holdout_split(data.len(), c.holdout, spec.seed);
    let train_set = pick(data, &train);
    let train_set = &train_set;
    let mut jobs: Vec<FitJob<'_>> = Vec::new();
    for fold in folds(train_set.len(), c.folds as usize, spec.seed) {
        jobs.push(Box::new(move |threads| {
            let inside: std::collections::HashSet<usize> = fold.iter().copied().collect();
            let fit_on: Vec<Sample> = (0..train_set.len())
                .filter(|i| !inside.contains(i))
                .map(|i| train_set[i])
                .collect();
            let m = fit_kind(kind, &fit_on, spec, threads)?;
            let xs: Vec<_> = fold.iter().map(|&i| train_set[i].x).collect();
            let mut conf = Confusion::default();
            for (&i, predicted) in fold.iter().zip(m.predict_many(&xs)) {
                conf.add(train_set[i].label, predicted);
            }
            Ok(FitDone::Fold(conf.accuracy()))
        }));
    }
    jobs.push(Box::new(move |threads| {
        let t = Instant::now();
        let model = fit_kind(kind, train_set, spec, threads)?;
        Ok(FitDone::Final(model, t.elapsed().as_secs_f64() * 1e3))
    }));
    let mut cv_folds = Vec::new();
    let mut last = None;
    for done in in_parallel(threads, jobs) {
        match done? {
            FitDone::Fold(accuracy) => cv_folds.push(accuracy),
            FitDone::Final(model, ms) => last = Some((model, ms)),
        }
    }
    let (model, fit_ms) = last.expect("the final fit");
    let t = Instant::now();
    let mut conf = Confusion::default();
    let xs: Vec<_> = test.iter().map(|&i| data[i].x).collect();
    for (&i, predicted) in test.iter().zip(model.predict_many(&xs)) {
        conf.add(data[i].label, predicted);
    }
    let predict_ms = t.elapsed().as_secs_f64() * 1e3;
    let cv_accuracy = cv_folds.iter().sum::<f64>() / cv_folds.len().max(1) as f64;
    Ok((
        Evaluation {
            kind: kind.to_string(),
            samples: data.len() as u64,
            train: train.len() as u64,
            holdout: test.len() as u64,
            cv_folds,
            cv_accuracy,
            confusion: conf.counts,
            accuracy: conf.accuracy(),
            fit_ms,
            predict_ms,
        },
        model,
    ))
}

/// What the fit stage produces.
#[derive(Debug)]
pub struct FitOutput {
    /// The model artifact as JSON bytes, written to the model file.
    pub artifact: Vec<u8>,
    /// SHA-256 (hex) of `artifact`; names the model file.
    pub hash: String,
    /// What `classifier/report.json` holds.
    pub report: Report,
}

use crate::layout::model_file;

/// Fits the classifier from `samples` (in sample order: the first
/// `[classifier] samples` train the model), evaluating as the spec asks.
pub fn fit(spec: &Spec, samples: &[([f64; 5], u8)], threads: usize) -> Result<FitOutput, LearnError> {
    let c = &spec.classifier;
    let need = spec.samples_needed();
    if (samples.len() as u64) < need {
        return Err(LearnError::TooFewSamples {
            got: samples.len() as u64,
            need,
        });
    }
    let all: Vec<Sample> = samples.iter().map(|&(x, label)| Sample { x, label }).collect();
    let mut comparisons = Vec::new();
    for &n in &c.compare_samples {
        for kind in ["mda", "random-forest"] {
            comparisons.push(evaluate(kind, &all[..n as usize], spec, threads)?.0);
        }
    }
    let data = &all[..c.samples as usize];
    let candidates: Vec<&str> = match c.kind.as_str() {
        "best" => vec!["mda", "random-forest"],
        k => vec![k],
    };
    let mut best: Option<(Evaluation, Model)> = None;
    for kind in candidates {
        let (e, m) = evaluate(kind, data, spec, threads)?;
        // Highest cross-validation accuracy; ties keep the first (MDA).
        if best.as_ref().is_none_or(|(b, _)| e.cv_accuracy > b.cv_accuracy) {
            best = Some((e, m));
        }
    }
    let (chosen, model) = best.expect("at least one candidate");
    let (train, _) = holdout_split(data.len(), c.holdout, spec.seed);
    let prior = majority(&pick(data, &train));
    let artifact = Artifact {
        format: 1,
        prior,
        trained_on: chosen.train,
        model,
    };
    let (bytes, hash) = artifact.to_bytes();
    Ok(FitOutput {
        artifact: bytes,
        report: Report {
            samples_available: samples.len() as u64,
            kind_asked: c.kind.clone(),
            chosen_kind: chosen.kind.clone(),
            model_hash: hash.clone(),
            model_file: model_file(&hash),
            prior: classifier::kind_of(prior).to_string(),
            chosen,
            comparisons,
        },
        hash,
    })
}
