//! The opponent-move predictors of the full game's search shaping, as a
//! content-hashed artifact (like the learned evaluation): the shipped one
//! (`jobs/predictors/fives-double6.json`, fitted by `muggins fit-predict`
//! with the training run it records), and reading and writing others.

use std::sync::OnceLock;

use engine::full::predict::{PredictTraining, Predictors, fit_predictors};

/// The shipped predictors' file, as `muggins fit-predict` wrote it.
pub const SHIPPED_PREDICTORS_JSON: &str = include_str!("../predictors/fives-double6.json");

/// An artifact's text: pretty JSON with a final newline (what is hashed).
pub fn predictors_json(set: &Predictors) -> String {
    let mut s = serde_json::to_string_pretty(set).expect("predictors serialise");
    s.push('\n');
    s
}

/// Reads an artifact, checking its features are this build's.
pub fn parse_predictors(json: &str) -> Result<Predictors, String> {
    let set: Predictors = serde_json::from_str(json).map_err(|e| format!("not a predictors artifact: {e}"))?;
    set.check()?;
    Ok(set)
}

/// The shipped predictors.
pub fn shipped_predictors() -> &'static Predictors {
    static SET: OnceLock<Predictors> = OnceLock::new();
    SET.get_or_init(|| parse_predictors(SHIPPED_PREDICTORS_JSON).expect("the shipped predictors are valid"))
}

/// The shipped predictors' hash (SHA-256, hex).
pub fn shipped_predictors_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| crate::evals::eval_hash(SHIPPED_PREDICTORS_JSON))
}

/// Fits the predictors and returns them with their artifact's text.
pub fn fit(training: &PredictTraining) -> Result<(Predictors, String), String> {
    let set = fit_predictors(training)?;
    let json = predictors_json(&set);
    Ok((set, json))
}
