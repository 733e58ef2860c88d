//! Read-only queries for the web view: an experiment's tasks (the ones in
//! play first), its cross-checks, the games shards done, and the failures
//! each worker reported. Each returns at most `limit` rows, so a page costs
//! the same whatever the experiment's size.

use jobs::layout::Stage;
use rusqlite::params;

use super::{Result, Store, TaskState};

/// One task as the experiment page shows it.
#[derive(Clone, Debug)]
pub struct TaskView {
    pub task_id: String,
    pub stage: String,
    pub games: u64,
    pub games_done: u64,
    pub state: TaskState,
    pub worker: Option<String>,
    pub attempts: u64,
    pub lease_expires_ms: Option<i64>,
    /// A check task's verdict, or a failed task's error.
    pub error: Option<String>,
}

impl Store {
    /// Up to `limit` tasks of experiment `id` of `stage` (all stages when
    /// `None`): leased ones first, then pending, failed and the latest
    /// done (each state an index range, so the cost does not grow with the
    /// experiment); and how many tasks it has in all.
    pub fn tasks_view(&self, id: &str, stage: Option<Stage>, limit: usize) -> Result<(Vec<TaskView>, u64)> {
        let stage = stage.map(Stage::name);
        let total: i64 = match stage {
            Some(st) => self.conn.query_row(
                "SELECT COUNT(*) FROM tasks WHERE experiment_id = ?1 AND stage = ?2",
                params![id, st],
                |r| r.get(0),
            )?,
            None => self.conn.query_row(
                "SELECT COUNT(*) FROM tasks WHERE experiment_id = ?1",
                params![id],
                |r| r.get(0),
            )?,
        };
        let mut rows = Vec::new();
        for state in [
            TaskState::Leased,
            TaskState::Pending,
            TaskState::Failed,
            TaskState::Done,
        ] {
            let left = limit.saturating_sub(rows.len());
            if left == 0 {
                break;
            }
            let mut q = self.conn.prepare_cached(
                "SELECT task_id, stage, games, games_done, state, lease_worker, attempts, lease_expires_ms, error
                 FROM tasks INDEXED BY tasks_by_state
                 WHERE state = ?1 AND experiment_id = ?2 AND (?3 IS NULL OR stage = ?3)
                 ORDER BY stage_seq DESC, seq DESC LIMIT ?4",
            )?;
            let found = q.query_map(params![state, id, stage, left as i64], |r| {
                Ok(TaskView {
                    task_id: r.get(0)?,
                    stage: r.get(1)?,
                    games: r.get::<_, i64>(2)? as u64,
                    games_done: r.get::<_, i64>(3)? as u64,
                    state: r.get(4)?,
                    worker: r.get(5)?,
                    attempts: r.get::<_, i64>(6)? as u64,
                    lease_expires_ms: r.get(7)?,
                    error: r.get(8)?,
                })
            })?;
            for t in found {
                rows.push(t?);
            }
        }
        Ok((rows, total as u64))
    }

    /// How many games shards of experiment `id` are done, and the last.
    pub fn done_shards_key(&self, id: &str) -> Result<(usize, u64)> {
        let (n, last): (i64, Option<i64>) = self.conn.query_row(
            "SELECT COUNT(*), MAX(shard) FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND state = ?3",
            params![id, Stage::Games.name(), TaskState::Done],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok((n as usize, last.unwrap_or(0) as u64))
    }

    /// The games shards of experiment `id` that are done.
    pub fn done_shards(&self, id: &str) -> Result<Vec<u64>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT shard FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND state = ?3 ORDER BY shard",
            )?
            .query_map(params![id, Stage::Games.name(), TaskState::Done], |r| {
                Ok(r.get::<_, i64>(0)? as u64)
            })?
            .collect::<std::result::Result<_, _>>()?)
    }

    /// Failures recorded per worker, all experiments.
    pub fn failures_by_worker(&self) -> Result<std::collections::HashMap<String, u64>> {
        Ok(self
            .conn
            .prepare_cached("SELECT worker_id, COUNT(*) FROM task_failures GROUP BY worker_id")?
            .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
            .collect::<std::result::Result<_, _>>()?)
    }

    /// The newest experiments' ids, newest first (at most `limit`), and
    /// how many there are.
    pub fn newest_ids(&self, limit: usize) -> Result<(Vec<String>, u64)> {
        let total: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM experiments", [], |r| r.get(0))?;
        let ids = self
            .conn
            .prepare_cached("SELECT id FROM experiments ORDER BY created_ms DESC, id DESC LIMIT ?1")?
            .query_map(params![limit as i64], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        Ok((ids, total as u64))
    }
}
