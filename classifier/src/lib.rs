//! Opponent classifiers (the thesis's chapter III, "The Opponent Classifier"):
//! multi-class linear discriminant analysis (MDA) and a random forest, seeded
//! splits and cross validation, confusion matrices, and model artifacts with a
//! content hash. Pure: no I/O; callers read and write the bytes.

mod artifact;
mod data;
mod eval;
mod forest;
mod mda;

pub use artifact::{Artifact, ArtifactError, Model, sha256_hex};
pub use data::{CLASSES, FEATURES, FitError, Sample, class_of, kind_of, majority};
pub use eval::{Confusion, folds, holdout_split};
pub use forest::{Forest, ForestParams};
pub use mda::Mda;
