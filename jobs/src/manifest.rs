//! `_manifest.json`: what an experiment directory holds.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::parquet_io::IoError;

/// One shard's partition as recorded in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardEntry {
    pub shard: u64,
    pub file: String,
    pub first_game: u64,
    pub games: u64,
    pub rows: u64,
    /// SHA-256 over the rows' deterministic columns (all but elapsed_us).
    pub checksum: String,
}

/// The manifest of a finished experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub experiment: String,
    pub id: String,
    pub schema_version: u32,
    pub spec_hash: String,
    /// The spec as submitted.
    pub spec_toml: String,
    /// The validated spec, canonical (what spec_hash covers).
    pub spec: serde_json::Value,
    pub games: u64,
    pub shards: Vec<ShardEntry>,
    /// The opponent-modeling stages, when the grid uses the classifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierEntry>,
}

/// The classifier's files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassifierEntry {
    /// SHA-256 of the model artifact.
    pub model_hash: String,
    pub model_file: String,
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
