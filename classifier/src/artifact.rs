//! Model artifacts: a fitted classifier as canonical JSON bytes, named by the
//! SHA-256 of those bytes. Loading checks the hash before anything else.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::data::{FEATURES, kind_of};
use crate::forest::Forest;
use crate::mda::Mda;

/// Bumped whenever the artifact format changes.
pub const FORMAT: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    Mda(Mda),
    RandomForest(Forest),
}

impl Model {
    pub fn kind(&self) -> &'static str {
        match self {
            Model::Mda(_) => "mda",
            Model::RandomForest(_) => "random-forest",
        }
    }
    pub fn predict(&self, x: &[f64; FEATURES]) -> u8 {
        match self {
            Model::Mda(m) => m.predict(x),
            Model::RandomForest(f) => f.predict(x),
        }
    }

    /// [`Self::predict`] of each of `xs`, in order (a forest walks each
    /// tree over all of them while it is in cache).
    pub fn predict_many(&self, xs: &[[f64; FEATURES]]) -> Vec<u8> {
        match self {
            Model::Mda(m) => xs.iter().map(|x| m.predict(x)).collect(),
            Model::RandomForest(f) => f.predict_many(xs),
        }
    }
}

/// A model ready for the grid: the fitted classifier and the prior class.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    pub format: u32,
    /// The class with the largest share of the training samples: the
    /// prediction before the target's first turn.
    pub prior: u8,
    /// Samples the model was fitted on.
    pub trained_on: u64,
    pub model: Model,
}

/// An artifact that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    #[error("its content hash is {actual}, not the expected {expected}: the file is corrupted or not this model")]
    Hash { expected: String, actual: String },
    #[error("it is not a model artifact: {0}")]
    Format(String),
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Artifact {
    /// The artifact's bytes and their hash.
    pub fn to_bytes(&self) -> (Vec<u8>, String) {
        let bytes = serde_json::to_vec(self).expect("an artifact serialises");
        let hash = sha256_hex(&bytes);
        (bytes, hash)
    }

    /// Loads an artifact whose hash must be `expected`.
    pub fn from_bytes(bytes: &[u8], expected: &str) -> Result<Artifact, ArtifactError> {
        let actual = sha256_hex(bytes);
        if actual != expected {
            return Err(ArtifactError::Hash {
                expected: expected.to_string(),
                actual,
            });
        }
        let a: Artifact = serde_json::from_slice(bytes).map_err(|e| ArtifactError::Format(e.to_string()))?;
        if a.format != FORMAT {
            return Err(ArtifactError::Format(format!(
                "format {} is not the supported {FORMAT}",
                a.format
            )));
        }
        Ok(a)
    }
}

impl engine::OpponentModel for Artifact {
    fn prior(&self) -> engine::TargetKind {
        kind_of(self.prior)
    }
    fn predict(&self, f: &engine::Features) -> engine::TargetKind {
        kind_of(self.model.predict(&f.to_array()))
    }
}
