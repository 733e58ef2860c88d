//! Why a learned model of the full game (the learned leaf evaluation, the
//! move predictors) could not be fitted, or was refused when read.

use engine::RulesError;

/// A learned model that could not be fitted or was refused: each variant
/// says what was wrong with it, in the words its `Display` prints.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The training's rules are not valid.
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// An evaluation fitted on other features than this build's.
    #[error("the evaluation's features {have:?} are not this build's {want:?}")]
    EvalFeatures {
        have: Vec<String>,
        want: &'static [&'static str],
    },
    /// An evaluation with a NaN or infinite weight.
    #[error("the evaluation has a weight that is not a finite number")]
    NonFinite,
    /// The least squares have no unique solution.
    #[error("the features are degenerate: no unique fit")]
    Degenerate,
    /// Predictors fitted on other features than this build's.
    #[error("the predictors' features {have:?} / {have_public:?} are not this build's {want:?} / {want_public:?}")]
    PredictorFeatures {
        have: Vec<String>,
        have_public: Vec<String>,
        want: &'static [&'static str],
        want_public: &'static [&'static str],
    },
    /// Predictors without one model a strategy and a pooled one.
    #[error("the predictors need {0} models of each kind")]
    PredictorCount(usize),
    /// A DBN whose number of hidden states is out of range.
    #[error("the DBN has {have} hidden states (1 to {max})")]
    DbnStates { have: usize, max: usize },
    /// Predictors asked to train on no hands.
    #[error("the predictors need at least one training hand a strategy")]
    NoHands,
}
