//! The worker's edge: a leased `proto::Task` becomes an [`Assignment`] in
//! domain types once, and nothing past this module reads the wire type.

use std::path::Path;
use std::time::Duration;

use jobs::layout::{ExperimentDir, Stage};
use jobs::train::StartFrom;
use jobs::{Job, Shard};

use crate::error::TaskError;

/// The lease a task came with: what every message about it names.
#[derive(Clone, Debug)]
pub(crate) struct Lease {
    pub experiment_id: String,
    pub task_id: String,
    pub token: String,
    /// How long the lease lasts without a heartbeat.
    pub duration: Duration,
}

/// What a leased task asks for.
#[derive(Clone, Debug)]
pub(crate) struct Assignment {
    pub lease: Lease,
    pub stage: Stage,
    pub shard: Shard,
    /// The spec: a grid's, or a training run's (its self-play and
    /// generation tasks).
    pub job: Job,
    pub dir: ExperimentDir,
    /// The model artifact's hash, for grid tasks of a classifier experiment.
    pub model: Option<String>,
    /// Games tasks: the ranges committed by earlier leases, with their files.
    pub chunks: Vec<ChunkRec>,
}

/// A range of a games task's games whose rows are finished: committed in a
/// chunk file (`file`), or played by this lease and not yet committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ChunkRec {
    pub first_game: u64,
    pub games: u64,
    /// `jobs::checksum` of the range's rows.
    pub checksum: String,
    /// The chunk file, relative to the results root, with its size and
    /// SHA-256 (none for a range the completion's partition holds).
    pub file: Option<(String, u64, String)>,
}

impl ChunkRec {
    pub(crate) fn from_wire(c: proto::Chunk) -> ChunkRec {
        ChunkRec {
            first_game: c.first_game,
            games: c.games,
            checksum: c.checksum,
            file: (!c.file.is_empty()).then_some((c.file, c.file_bytes, c.file_sha256)),
        }
    }

    pub(crate) fn to_wire(&self) -> proto::Chunk {
        let (file, file_bytes, file_sha256) = self.file.clone().unwrap_or_default();
        proto::Chunk {
            first_game: self.first_game,
            games: self.games,
            checksum: self.checksum.clone(),
            file,
            file_bytes,
            file_sha256,
        }
    }
}

impl Assignment {
    /// Converts a leased task. On failure the lease comes back with the
    /// error, so the failure can still be reported.
    /// A training run's `train.start` is read from the coordinator's copy
    /// in its directory under `results`.
    pub(crate) fn from_wire(t: proto::Task, results: &Path) -> Result<Assignment, Box<(Lease, TaskError)>> {
        let lease = Lease {
            experiment_id: t.experiment_id,
            task_id: t.task_id,
            token: t.lease_token,
            duration: Duration::from_millis(t.lease_ms),
        };
        let copy = if jobs::train::is_train_spec(&t.spec_toml) {
            match jobs::layout::confine(results, &ExperimentDir::new(&t.output).file(jobs::layout::START_NET)) {
                Ok(p) => Some(p),
                Err(e) => return Err(Box::new((lease, TaskError::Spec(e.to_string())))),
            }
        } else {
            None
        };
        let from = copy.as_deref().map_or(StartFrom::Path, StartFrom::Copy);
        let job = match Job::from_toml_with(&t.spec_toml, from) {
            Ok(s) if s.hash() == t.spec_hash => s,
            Ok(_) => return Err(Box::new((lease, TaskError::SpecHash))),
            Err(e) => return Err(Box::new((lease, TaskError::Spec(e.to_string())))),
        };
        let Some(stage) = Stage::parse(&t.stage) else {
            return Err(Box::new((lease, TaskError::UnknownStage(t.stage))));
        };
        let model = Some(t.model).filter(|m| !m.is_empty());
        if stage == Stage::Games && job.grid().is_some_and(|s| s.needs_fit()) && model.is_none() {
            return Err(Box::new((lease, TaskError::NoModel)));
        }
        Ok(Assignment {
            lease,
            stage,
            shard: Shard {
                index: t.shard,
                first_game: t.first_game,
                games: t.games,
            },
            job,
            dir: ExperimentDir::new(&t.output),
            model,
            chunks: t.chunks.into_iter().map(ChunkRec::from_wire).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(stage: &str, spec: &str, model: &str) -> proto::Task {
        proto::Task {
            task_id: "t-00000".into(),
            stage: stage.into(),
            spec_toml: spec.into(),
            spec_hash: Job::from_toml(spec).map(|s| s.hash()).unwrap_or_default(),
            output: "smoke".into(),
            lease_token: "tok".into(),
            lease_ms: 3000,
            games: 7,
            model: model.into(),
            ..Default::default()
        }
    }

    fn refused(t: proto::Task) -> TaskError {
        let failed = Assignment::from_wire(t, Path::new(".")).unwrap_err();
        assert_eq!(
            failed.0.task_id, "t-00000",
            "the lease comes back to report the failure"
        );
        failed.1
    }

    #[test]
    fn a_task_converts_once_into_domain_types() {
        let a = Assignment::from_wire(task("games", jobs::SMOKE_SPEC, "ab"), Path::new(".")).unwrap();
        assert_eq!(a.stage, Stage::Games);
        assert_eq!(a.shard.games, 7);
        assert_eq!(a.model.as_deref(), Some("ab"));
        assert_eq!(a.lease.duration, Duration::from_secs(3));
        assert_eq!(a.dir.output(), "smoke");
        let a = Assignment::from_wire(task("report", jobs::SMOKE_SPEC, ""), Path::new(".")).unwrap();
        assert_eq!(a.model, None, "an empty model field is no model");
    }

    #[test]
    fn each_refusal_says_whether_a_retry_can_help() {
        let e = refused(task("grid", jobs::SMOKE_SPEC, ""));
        assert!(
            matches!(e, TaskError::UnknownStage(_)) && e.retryable(),
            "a newer worker can run it"
        );
        let e = refused(task("games", jobs::SMOKE_SPEC, ""));
        assert!(matches!(e, TaskError::NoModel) && !e.retryable());
        let mut t = task("games", jobs::SMOKE_SPEC, "ab");
        t.spec_hash = "0".repeat(64);
        let e = refused(t);
        assert!(matches!(e, TaskError::SpecHash) && e.retryable());
        let e = refused(task("games", "name = 1", ""));
        assert!(matches!(e, TaskError::Spec(_)) && !e.retryable());
    }
}
