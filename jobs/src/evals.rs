//! The learned leaf evaluation of the full game's search, as a
//! content-hashed artifact (like the classifier's model): the shipped one
//! (`jobs/evals/fives-double6.json`, fitted by `muggins fit-eval` with the
//! training run it records), and reading and writing others.

use std::sync::OnceLock;

use full::{EvalTraining, LinearEval, fit_linear_eval};
use sha2::{Digest, Sha256};

use crate::LearnError;

/// The shipped evaluation's file, as `muggins fit-eval` wrote it.
pub const SHIPPED_EVAL_JSON: &str = include_str!("../evals/fives-double6.json");

/// The SHA-256 (hex) of an artifact's bytes: its identity.
pub fn eval_hash(json: &str) -> String {
    Sha256::digest(json.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An artifact's text: pretty JSON with a final newline (what is hashed).
pub fn eval_json(eval: &LinearEval) -> String {
    let mut s = serde_json::to_string_pretty(eval).expect("an evaluation serialises");
    s.push('\n');
    s
}

/// Reads an artifact, checking its features are this build's.
pub fn parse_eval(json: &str) -> Result<LinearEval, LearnError> {
    let eval: LinearEval = serde_json::from_str(json).map_err(|source| LearnError::Format {
        kind: "an evaluation",
        source,
    })?;
    eval.check()?;
    Ok(eval)
}

/// The shipped evaluation.
pub fn shipped_eval() -> &'static LinearEval {
    static EVAL: OnceLock<LinearEval> = OnceLock::new();
    EVAL.get_or_init(|| parse_eval(SHIPPED_EVAL_JSON).expect("the shipped evaluation is valid"))
}

/// The shipped evaluation's hash.
pub fn shipped_eval_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| eval_hash(SHIPPED_EVAL_JSON))
}

/// Fits an evaluation and returns it with its artifact's text.
pub fn fit_eval(training: &EvalTraining) -> Result<(LinearEval, String), LearnError> {
    let eval = fit_linear_eval(training)?;
    let json = eval_json(&eval);
    Ok((eval, json))
}
