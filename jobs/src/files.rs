//! Durable file operations and their error, with the path concerned: what
//! every writer of results (Parquet, JSON, markers) stands on.

use std::fs::File;
use std::path::{Path, PathBuf};

/// Errors reading or writing partitions, with the path concerned.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The file system refused an operation.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The content is wrong: Parquet that cannot be written or read, JSON
    /// that is not the record expected, a column missing or of the wrong
    /// type, or a value out of its column's domain.
    #[error("{path}: {message}")]
    Format {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IoError + '_ {
    move |source| IoError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(crate) fn format(path: &Path, e: impl std::fmt::Display) -> IoError {
    IoError::Format {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Renames `from` to `to` and syncs the directory, so the new name survives a crash.
pub fn durable_rename(from: &Path, to: &Path) -> Result<(), IoError> {
    std::fs::rename(from, to).map_err(io(to))?;
    if let Some(dir) = to.parent() {
        File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))?;
    }
    Ok(())
}
