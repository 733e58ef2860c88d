//! Why one of the jobs' learned models (the classifier, the learned
//! evaluation, the opponent-move predictors) could not be fitted or read.

/// A learned model that could not be fitted, or an artifact refused when
/// read; `Display` says which and why.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// The training games gave fewer samples than the spec fits on.
    #[error(
        "the training games gave {got} samples but the spec asks for {need} (classifier.samples / compare_samples)"
    )]
    TooFewSamples {
        /// The samples the games gave.
        got: u64,
        /// The samples the spec fits and compares on.
        need: u64,
    },
    /// The classifier's fit failed.
    #[error(transparent)]
    Classifier(#[from] classifier::FitError),
    /// The full game's fit failed, or its model was refused when read.
    #[error(transparent)]
    Model(#[from] full::ModelError),
    /// An artifact that is not JSON of its kind.
    #[error("not {kind} artifact: {source}")]
    Format {
        /// What it should have been: "an evaluation", "a predictors".
        kind: &'static str,
        /// What the JSON reader said.
        source: serde_json::Error,
    },
    /// An artifact that is not text.
    #[error("not UTF-8 text")]
    NotText,
    /// An artifact whose content hash is not the one it was asked for by.
    #[error("its SHA-256 is {got}, not {want}")]
    Hash {
        /// The artifact's SHA-256.
        got: String,
        /// The SHA-256 it was named by.
        want: String,
    },
}
