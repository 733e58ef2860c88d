//! The opponent-move predictors of the full game's search shaping, as a
//! content-hashed artifact (like the learned evaluation): the shipped one
//! (`jobs/predictors/fives-double6.json`, fitted by `muggins fit-predict`
//! with the training run it records), and reading and writing others.

use std::sync::OnceLock;

use full::predict::fit_predictors;

use crate::LearnError;
pub use full::predict::{PredictTraining, Predictors};

/// The shipped predictors' file, as `muggins fit-predict` wrote it.
pub const SHIPPED_PREDICTORS_JSON: &str = include_str!("../predictors/fives-double6.json");

/// An artifact's text: pretty JSON with a final newline (what is hashed).
pub fn predictors_json(set: &Predictors) -> String {
    let mut s = serde_json::to_string_pretty(set).expect("predictors serialise");
    s.push('\n');
    s
}

/// Reads an artifact, checking its features are this build's.
pub fn parse_predictors(json: &str) -> Result<Predictors, LearnError> {
    let set: Predictors = serde_json::from_str(json).map_err(|source| LearnError::Format {
        kind: "a predictors",
        source,
    })?;
    set.check()?;
    Ok(set)
}

/// The shipped predictors.
pub fn shipped_predictors() -> &'static Predictors {
    static SET: OnceLock<Predictors> = OnceLock::new();
    SET.get_or_init(|| parse_predictors(SHIPPED_PREDICTORS_JSON).expect("the shipped predictors are valid"))
}

/// What an experiment's fit stage trained: the classifier of the
/// `classifier` source, or the opponent-move predictors of the shaping.
#[derive(Clone, Debug)]
pub enum Trained {
    /// The classifier artifact.
    Classifier(classifier::Artifact),
    /// The predictors artifact.
    Predictors(Predictors),
}

impl Trained {
    /// The classifier, if that is what was trained.
    pub fn classifier(&self) -> Option<&classifier::Artifact> {
        match self {
            Trained::Classifier(a) => Some(a),
            Trained::Predictors(_) => None,
        }
    }

    /// The predictors, if that is what was trained.
    pub fn predictors(&self) -> Option<&Predictors> {
        match self {
            Trained::Predictors(p) => Some(p),
            Trained::Classifier(_) => None,
        }
    }
}

/// The predictors of `spec`'s fit stage (`None` when it shapes no search).
pub fn fit_for(spec: &crate::Spec) -> Option<Result<(Predictors, String), LearnError>> {
    spec.prediction.as_ref().map(fit)
}

/// Reads a predictors artifact and checks its content hash first.
pub fn from_bytes(bytes: &[u8], hash: &str) -> Result<Predictors, LearnError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LearnError::NotText)?;
    let got = crate::evals::eval_hash(text);
    if got != hash {
        return Err(LearnError::Hash {
            got,
            want: hash.to_string(),
        });
    }
    parse_predictors(text)
}

/// What the fit stage reports of the predictors it fitted
/// (`prediction/report.json`): the training, the artifact's hash and the
/// held-out scores, which the experiment's report shows.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PredictionReport {
    /// How they were trained.
    pub training: PredictTraining,
    /// The artifact's SHA-256.
    pub hash: String,
    /// Held-out top-N and log loss per model and strategy.
    pub holdout: Vec<full::predict::PredictScore>,
}

impl PredictionReport {
    /// The report of `set`, whose artifact hashes to `hash`.
    pub fn of(set: &Predictors, hash: &str) -> PredictionReport {
        PredictionReport {
            training: set.training,
            hash: hash.to_string(),
            holdout: set.holdout.clone(),
        }
    }
}

/// Fits the predictors and returns them with their artifact's text.
pub fn fit(training: &PredictTraining) -> Result<(Predictors, String), LearnError> {
    let set = fit_predictors(training)?;
    let json = predictors_json(&set);
    Ok((set, json))
}
