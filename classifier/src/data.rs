//! The data every classifier shares: the feature and class counts, a labelled
//! sample, why a fit can fail, and the mapping between class numbers and
//! target types.

/// Number of features (Table 8).
pub const FEATURES: usize = 5;
/// Number of classes: random, scorer, defender (Table 8's target numbers 0-2).
pub const CLASSES: usize = 3;

/// One labelled sample.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub x: [f64; FEATURES],
    /// 0 random, 1 scorer, 2 defender.
    pub label: u8,
}

/// Why a classifier could not be fitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    #[error("cannot fit on {0} samples")]
    TooFew(usize),
    #[error("the samples hold only one class")]
    OneClass,
    #[error("label {0} is not a class (0 random, 1 scorer, 2 defender)")]
    BadLabel(u8),
}

/// The class with the most samples (ties: the lowest class number).
pub fn majority(samples: &[Sample]) -> u8 {
    let mut n = [0usize; CLASSES];
    for s in samples {
        n[s.label as usize] += 1;
    }
    (0..CLASSES).max_by_key(|&k| (n[k], std::cmp::Reverse(k))).unwrap_or(0) as u8
}

pub(crate) fn check(samples: &[Sample], min: usize) -> Result<(), FitError> {
    if samples.len() < min {
        return Err(FitError::TooFew(samples.len()));
    }
    if let Some(s) = samples.iter().find(|s| s.label as usize >= CLASSES) {
        return Err(FitError::BadLabel(s.label));
    }
    if samples.iter().all(|s| s.label == samples[0].label) {
        return Err(FitError::OneClass);
    }
    Ok(())
}

/// The class number of a target type.
pub fn class_of(t: engine::TargetKind) -> u8 {
    t as u8
}

/// The target type of a class number.
pub fn kind_of(class: u8) -> engine::TargetKind {
    engine::TargetKind::ALL[class as usize % CLASSES]
}
