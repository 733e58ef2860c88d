//! Why a task failed, and whether trying again (here or elsewhere) can help.
//! `retryable()` is the one place that decides.

/// A task's failure.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TaskError {
    #[error(
        "the spec's hash differs from the coordinator's: worker and coordinator versions differ, or a file an \
         external agent's hash_files covers changed since the experiment was submitted (docs/agents.md)"
    )]
    SpecHash,
    #[error("{0}")]
    Spec(String),
    #[error("this worker cannot run stage {0:?}; upgrade it")]
    UnknownStage(String),
    #[error("the grid uses the classifier source but the task names no model")]
    NoModel,
    #[error("model artifact {path} is missing or unreadable: {message}")]
    ModelMissing { path: String, message: String },
    #[error("model artifact {path}: {message}")]
    ModelCorrupt { path: String, message: String },
    #[error("path from the coordinator refused: {0}")]
    Path(String),
    /// Reading or writing files: the disk may be back on the next try.
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Fit(String),
    #[error("{0}")]
    Exec(String),
    #[error("the task's threads panicked: {0}")]
    Panicked(String),
    #[error("partition {0} is still missing")]
    PartitionMissing(String),
    #[error("completing the task: {0}")]
    Complete(String),
    #[error("completed, but the rename failed: {0}")]
    Rename(String),
}

impl TaskError {
    /// Whether another try (on this worker or another) can succeed.
    pub(crate) fn retryable(&self) -> bool {
        match self {
            // A newer worker, a disk that recovers, a model the fit writes
            // again, a partition the coordinator re-runs, a coordinator that
            // comes back.
            TaskError::SpecHash
            | TaskError::UnknownStage(_)
            | TaskError::ModelMissing { .. }
            | TaskError::Io(_)
            | TaskError::Panicked(_)
            | TaskError::PartitionMissing(_)
            | TaskError::Complete(_)
            | TaskError::Rename(_) => true,
            // The same inputs fail the same way anywhere.
            TaskError::Spec(_)
            | TaskError::NoModel
            | TaskError::ModelCorrupt { .. }
            | TaskError::Path(_)
            | TaskError::Fit(_)
            | TaskError::Exec(_) => false,
        }
    }
}
