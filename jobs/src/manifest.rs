//! `_manifest.json`: what an experiment directory holds.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::files::IoError;

/// One shard's partition as recorded in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardEntry {
    /// The shard's number ([`Shard::index`](crate::Shard::index)).
    pub shard: u64,
    /// The partition, relative to the experiment directory, e.g.
    /// `games/part-00000.parquet`.
    pub file: String,
    /// Index of the shard's first game.
    pub first_game: u64,
    /// Games the shard played.
    pub games: u64,
    /// Rows in the partition: one per game, or one per sample in
    /// `classifier/samples`.
    pub rows: u64,
    /// SHA-256 (hex) over the rows' deterministic columns: [`checksum`](crate::checksum)
    /// for games, [`samples_checksum`](crate::training::samples_checksum) for samples.
    pub checksum: String,
}

/// The manifest of a finished experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The spec's `name`.
    pub experiment: String,
    /// The experiment id: the name and the first 12 hex digits of `spec_hash`.
    pub id: String,
    /// [`SCHEMA_VERSION`](crate::SCHEMA_VERSION) of the partitions.
    pub schema_version: u32,
    /// SHA-256 (hex) of the canonical spec.
    pub spec_hash: String,
    /// The spec as submitted.
    pub spec_toml: String,
    /// The validated spec, canonical (what spec_hash covers).
    pub spec: serde_json::Value,
    /// Games in the grid (rows over all of `shards`).
    pub games: u64,
    /// The `games/` partitions, one per shard.
    pub shards: Vec<ShardEntry>,
    /// The opponent-modeling stages, when the grid uses the classifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierEntry>,
    /// The opponent-move predictors the fit stage made, when the grid
    /// shapes its search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predictors: Option<PredictorsEntry>,
}

/// The predictors' files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictorsEntry {
    /// SHA-256 of the predictors artifact.
    pub model_hash: String,
    /// The artifact, relative to the experiment directory (the fit stage's
    /// model file, `classifier/model-<model_hash>.json`).
    pub model_file: String,
    /// The held-out evaluation, `prediction/report.json`.
    pub report_file: String,
}

/// The classifier's files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassifierEntry {
    /// SHA-256 of the model artifact.
    pub model_hash: String,
    /// The model, relative to the experiment directory:
    /// `classifier/model-<model_hash>.json`.
    pub model_file: String,
    /// The fit's report, relative to the experiment directory:
    /// `classifier/report.json`.
    pub report_file: String,
    /// The training samples, one partition per shard of training games.
    pub samples: Vec<ShardEntry>,
}

/// Writes JSON to `path` through a hidden temporary file, fsync and rename.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), IoError> {
    let mut text = serde_json::to_vec_pretty(value).expect("manifest serialises");
    text.push(b'\n');
    crate::layout::write_atomic(path, &text)
}
