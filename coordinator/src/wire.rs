//! The edge between the store's rows and the wire: experiments as clients
//! see them (with rate and ETA), store errors as `Status`, and the checks on
//! request fields. The service calls these; nothing else builds `proto` types
//! from store rows.

use proto::{Experiment, ExperimentState};
use tonic::Status;

use crate::shared::Shared;
use crate::store::{ExpState, ExperimentRow, LeasedTask, StoreError};

impl Shared {
    /// An experiment as clients see it, with its rate over the last 30 s and
    /// its ETA (-1 while nothing has been done; 0 once finished).
    pub(crate) fn experiment_to_proto(&self, e: &ExperimentRow) -> Experiment {
        let (rate, eta) = self.rate_eta(e);
        Experiment {
            id: e.id.clone(),
            name: e.name.clone(),
            state: state_to_proto(e.state) as i32,
            spec_hash: e.spec_hash.clone(),
            output: e.output.clone(),
            games_total: e.games_total,
            games_done: e.games_done,
            stages: e
                .stages
                .iter()
                .map(|s| proto::Stage {
                    name: s.name.clone(),
                    tasks_total: s.total,
                    tasks_done: s.done,
                    tasks_running: s.running,
                    tasks_failed: s.failed,
                    waiting_until_unix_ms: s.waiting_until_ms.map_or(0, |t| t.max(0) as u64),
                })
                .collect(),
            error: e.error.clone(),
            created_unix_ms: e.created_ms,
            updated_unix_ms: e.updated_ms,
            games_per_second: rate,
            eta_seconds: eta,
            bad_workers: e.bad_workers.clone(),
            checks_passed: e.checks_passed,
            checks_failed: e.checks_failed,
        }
    }
}

/// The wire's name for an experiment state.
pub(crate) fn state_to_proto(s: ExpState) -> ExperimentState {
    match s {
        ExpState::Running => ExperimentState::Running,
        ExpState::Succeeded => ExperimentState::Succeeded,
        ExpState::Failed => ExperimentState::Failed,
        ExpState::Cancelled => ExperimentState::Cancelled,
    }
}

/// A store error as the status a client gets.
pub(crate) fn status(e: StoreError) -> Status {
    match e {
        StoreError::Invalid(m) => Status::invalid_argument(m),
        StoreError::NotFound(m) => Status::not_found(m),
        StoreError::Conflict(m) => Status::already_exists(m),
        StoreError::Db(e) => {
            tracing::error!(error = %e, "state database error");
            Status::internal(format!("state database error: {e}"))
        }
        StoreError::Open(m) => Status::internal(m),
    }
}

/// `s` cut to at most `max` bytes, on a character boundary.
pub fn truncate_chars(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

pub(crate) fn check_len(field: &str, value: &str, max: usize) -> Result<(), Status> {
    if value.len() > max {
        return Err(Status::invalid_argument(format!(
            "{field} is {} bytes; at most {max} are accepted",
            value.len()
        )));
    }
    Ok(())
}

pub(crate) fn require(field: &str, value: &str) -> Result<(), Status> {
    if value.is_empty() {
        return Err(Status::invalid_argument(format!("{field} is required")));
    }
    check_len(field, value, 256)
}

/// A worker's id: required, at most 256 bytes, no control character (ids
/// are shown in logs, pages and reports, one a line).
pub(crate) fn require_worker_id(value: &str) -> Result<(), Status> {
    require("worker_id", value)?;
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(Status::invalid_argument(format!(
            "worker_id {value:?} holds the control character {c:?}; ids are printable"
        )));
    }
    Ok(())
}

/// Reported chunks off the wire (an empty file name: no file).
pub(crate) fn chunks_from_wire(chunks: &[proto::Chunk]) -> Vec<crate::files::ReportedChunk> {
    chunks
        .iter()
        .map(|c| crate::files::ReportedChunk {
            first_game: c.first_game,
            games: c.games,
            checksum: c.checksum.clone(),
            file: (!c.file.is_empty()).then(|| (c.file.clone(), c.file_bytes, c.file_sha256.clone())),
        })
        .collect()
}

/// A leased task as the worker receives it, with the lease's length.
pub(crate) fn task_to_proto(t: LeasedTask, lease_ms: u64) -> proto::Task {
    proto::Task {
        experiment_id: t.experiment_id,
        task_id: t.task_id,
        stage: t.stage.name().to_string(),
        shard: t.shard,
        first_game: t.first_game,
        games: t.games,
        spec_toml: t.spec_toml,
        spec_hash: t.spec_hash,
        output: t.output,
        lease_token: t.lease_token,
        lease_ms,
        model: t.model,
        chunks: t
            .chunks
            .into_iter()
            .map(|c| proto::Chunk {
                first_game: c.first_game,
                games: c.games,
                checksum: c.checksum,
                file: c.file.unwrap_or_default(),
                ..Default::default()
            })
            .collect(),
        expected_checksum: t.expected_checksum,
    }
}
