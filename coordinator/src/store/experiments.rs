//! Experiments: submission (stages and tasks), listing, cancel, lost tasks
//! requeued with what depends on them, and the end states.

use jobs::Job;
use jobs::layout::Stage;
use rusqlite::{Connection, OptionalExtension, params};

use super::{ExpState, ExperimentRow, Result, StageRow, Store, StoreError, TaskState, now_ms};

/// The `muggins_tasks` state of an unfinished task of an experiment that
/// no longer runs.
pub const ABANDONED: &str = "abandoned";

impl Store {
    /// The other experiments writing to `output`, with their states.
    pub fn experiments_with_output(&self, output: &str) -> Result<Vec<(String, ExpState)>> {
        let mut q = self
            .conn
            .prepare("SELECT id, state FROM experiments WHERE output = ?1 ORDER BY created_ms, id")?;
        let rows = q.query_map([output], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Adds an experiment with its stages and tasks, or returns the existing one
    /// with the same id (an identical spec); a failed or cancelled one resumes.
    /// Returns the id and whether it was created.
    pub fn submit(&mut self, job: &Job, spec_toml: &str) -> Result<(String, bool)> {
        let hash = job.hash();
        let id = job.id();
        let tx = self.conn.transaction()?;
        let existing: Option<ExpState> = tx
            .prepare_cached("SELECT state FROM experiments WHERE id = ?1")?
            .query_row([&id], |r| r.get(0))
            .optional()?;
        if let Some(state) = existing {
            if matches!(state, ExpState::Failed | ExpState::Cancelled) {
                // Resubmitting resumes: unfinished tasks go back to pending.
                tx.prepare_cached(
                    "UPDATE tasks SET state = ?2, lease_token = NULL, lease_worker = NULL, error = NULL
                     WHERE experiment_id = ?1 AND state != ?3",
                )?
                .execute(params![id, TaskState::Pending, TaskState::Done])?;
                tx.prepare_cached("DELETE FROM task_failures WHERE experiment_id = ?1")?
                    .execute([&id])?;
                tx.prepare_cached("UPDATE experiments SET state = ?3, error = '', updated_ms = ?2 WHERE id = ?1")?
                    .execute(params![id, now_ms(), ExpState::Running])?;
            }
            tx.commit()?;
            return Ok((id, false));
        }
        let clash: Option<String> = tx
            .prepare_cached("SELECT id FROM experiments WHERE output = ?1 AND state = ?2")?
            .query_row(params![job.output(), ExpState::Running], |r| r.get(0))
            .optional()?;
        if let Some(other) = clash {
            return Err(StoreError::Conflict(format!(
                "output = \"{}\" is already used by experiment {other}; give this spec another name or output",
                job.output()
            )));
        }
        let now = now_ms();
        tx.prepare_cached("INSERT INTO experiments (id, name, spec_toml, spec_hash, output, state, games_total, created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?8, ?6, ?7, ?7)")?
.execute(
            params![id, job.name(), spec_toml, hash, job.output(), job.games() as i64, now, ExpState::Running],
        )?;
        // Stages in the order they run; a task waits for every task of an
        // earlier turn (`stage_seq`).
        for (seq, stage) in job.stages().iter().enumerate() {
            tx.prepare_cached("INSERT INTO stages (experiment_id, name, seq) VALUES (?1, ?2, ?3)")?
                .execute(params![id, stage.name(), seq as i64])?;
        }
        let mut ins = tx.prepare(
            "INSERT INTO tasks (experiment_id, task_id, stage, stage_seq, seq, shard, first_game, games, state)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8)",
        )?;
        for p in job.plan() {
            ins.execute(params![
                id,
                p.stage.task_id(p.shard.index),
                p.stage.name(),
                i64::from(p.order),
                p.shard.index as i64,
                p.shard.first_game as i64,
                p.shard.games as i64,
                TaskState::Pending
            ])?;
        }
        drop(ins);
        tx.commit()?;
        Ok((id, true))
    }

    fn experiment_in(tx: &Connection, id: &str) -> Result<ExperimentRow> {
        let mut e = tx
            .prepare_cached(
                "SELECT id, name, spec_toml, spec_hash, output, state, error, games_total, created_ms, updated_ms
                 FROM experiments WHERE id = ?1",
            )?
            .query_row([id], |r| {
                Ok(ExperimentRow {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    spec_toml: r.get(2)?,
                    spec_hash: r.get(3)?,
                    output: r.get(4)?,
                    state: r.get(5)?,
                    error: r.get(6)?,
                    games_total: r.get::<_, i64>(7)? as u64,
                    games_done: 0,
                    created_ms: r.get(8)?,
                    updated_ms: r.get(9)?,
                    stages: Vec::new(),
                    bad_workers: Vec::new(),
                    checks_passed: 0,
                    checks_failed: 0,
                })
            })
            .optional()?
            .ok_or_else(|| StoreError::NotFound(format!("no experiment with id {id:?}")))?;
        let mut q = tx.prepare(
            "SELECT s.name,
                    COUNT(t.task_id),
                    COALESCE(SUM(t.state = ?2), 0),
                    COALESCE(SUM(t.state = ?3), 0),
                    COALESCE(SUM(t.state = ?4), 0),
                    COALESCE(SUM(CASE WHEN t.state = ?2 THEN t.games WHEN t.state = ?3 THEN t.games_done ELSE 0 END), 0),
                    MAX(CASE WHEN t.state = ?5 AND t.avoid_until_ms > ?6
                                  AND EXISTS (SELECT 1 FROM task_avoid a
                                              WHERE a.experiment_id = t.experiment_id AND a.task_id = t.task_id)
                             THEN t.avoid_until_ms END)
             FROM stages s LEFT JOIN tasks t ON t.experiment_id = s.experiment_id AND t.stage = s.name
             WHERE s.experiment_id = ?1 GROUP BY s.name ORDER BY s.seq, s.rowid",
        )?;
        let rows = q.query_map(
            params![
                id,
                TaskState::Done,
                TaskState::Leased,
                TaskState::Failed,
                TaskState::Pending,
                now_ms()
            ],
            |r| {
                Ok((
                    StageRow {
                        name: r.get(0)?,
                        total: r.get::<_, i64>(1)? as u64,
                        done: r.get::<_, i64>(2)? as u64,
                        running: r.get::<_, i64>(3)? as u64,
                        failed: r.get::<_, i64>(4)? as u64,
                        waiting_until_ms: r.get(6)?,
                    },
                    r.get::<_, i64>(5)? as u64,
                ))
            },
        )?;
        for row in rows {
            let (stage, games) = row?;
            // A grid's games, or a training run's self-play games.
            if matches!(Stage::parse(&stage.name), Some(Stage::Games | Stage::SelfPlay)) {
                e.games_done = games;
            }
            e.stages.push(stage);
        }
        (e.bad_workers, e.checks_passed, e.checks_failed) = Self::checks_of(tx, id)?;
        Ok(e)
    }

    pub fn experiment(&self, id: &str) -> Result<ExperimentRow> {
        Self::experiment_in(&self.conn, id)
    }

    pub fn experiments(&self) -> Result<Vec<ExperimentRow>> {
        let ids: Vec<String> = self
            .conn
            .prepare("SELECT id FROM experiments ORDER BY created_ms, id")?
            .query_map([], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        ids.iter().map(|id| self.experiment(id)).collect()
    }

    pub fn running_ids(&self) -> Result<Vec<String>> {
        Ok(self
            .conn
            .prepare("SELECT id FROM experiments WHERE state = ?1 ORDER BY created_ms, id")?
            .query_map([ExpState::Running], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?)
    }

    pub fn cancel(&mut self, id: &str) -> Result<ExperimentRow> {
        let tx = self.conn.transaction()?;
        let e = Self::experiment_in(&tx, id)?;
        if e.state == ExpState::Running {
            tx.prepare_cached("UPDATE experiments SET state = ?3, updated_ms = ?2 WHERE id = ?1")?
                .execute(params![id, now_ms(), ExpState::Cancelled])?;
        }
        let e = Self::experiment_in(&tx, id)?;
        tx.commit()?;
        Ok(e)
    }

    /// Sends tasks whose files were lost back to pending, with what depends
    /// on them: the report (it reads every partition) and, after a lost
    /// model, everything after the fit (the grid carried that model's hash).
    /// A leased dependent loses its lease (its completion will be refused).
    /// An experiment that had succeeded runs again.
    pub fn requeue_lost(&mut self, id: &str, lost: &[String]) -> Result<()> {
        if lost.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        let mut ids: Vec<String> = lost.to_vec();
        let fit_seq: Option<i64> = tx
            .prepare_cached("SELECT stage_seq FROM tasks WHERE experiment_id = ?1 AND stage = ?2")?
            .query_row(params![id, Stage::Fit.name()], |r| r.get(0))
            .optional()?;
        let lost_fit = lost.iter().any(|t| Stage::of_task_id(t) == Some(Stage::Fit));
        {
            let mut q = tx.prepare(
                "SELECT task_id FROM tasks WHERE experiment_id = ?1 AND state != ?5
                   AND (stage = ?4 OR (?2 AND stage_seq > ?3))",
            )?;
            let deps = q.query_map(
                params![
                    id,
                    lost_fit,
                    fit_seq.unwrap_or(i64::MAX),
                    Stage::Report.name(),
                    TaskState::Pending
                ],
                |r| r.get::<_, String>(0),
            )?;
            for d in deps {
                let d = d?;
                if !ids.contains(&d) {
                    ids.push(d);
                }
            }
        }
        for t in &ids {
            tx.prepare_cached(
                "UPDATE tasks SET state = ?3, lease_token = NULL, lease_worker = NULL, rows = NULL,
                                  checksum = NULL, games_done = 0, placed = 0, file_bytes = NULL, file_sha256 = NULL
                 WHERE experiment_id = ?1 AND task_id = ?2",
            )?
            .execute(params![id, t, TaskState::Pending])?;
        }
        unseal_in(&tx, id)?;
        tx.commit()?;
        Ok(())
    }

    /// A succeeded experiment whose seal (manifest, `_SUCCESS`) is gone runs
    /// again, so the sweeper seals it anew.
    pub fn unseal(&mut self, id: &str) -> Result<()> {
        unseal_in(&self.conn, id)
    }

    /// (stage, state, count) over all experiments. A task of an experiment
    /// that is no longer running (cancelled, failed, or succeeded while a
    /// task was still open) that never finished counts as `abandoned`, not
    /// `pending` or `leased`: nothing will run it, so an autoscaler reading
    /// pending and leased tasks scales the workers to zero.
    pub fn task_counts(&self) -> Result<Vec<(String, &'static str, u64)>> {
        let mut q = self.conn.prepare(
            "SELECT t.stage, CASE WHEN e.state != ?1 AND t.state IN (?2, ?3) THEN ?4 ELSE t.state END AS s, COUNT(*)
             FROM tasks t JOIN experiments e ON e.id = t.experiment_id GROUP BY t.stage, s ORDER BY t.stage, s",
        )?;
        let rows = q.query_map(
            params![ExpState::Running, TaskState::Pending, TaskState::Leased, ABANDONED],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)? as u64,
                ))
            },
        )?;
        let state = |s: &str| {
            TaskState::ALL
                .iter()
                .map(|t| t.as_str())
                .find(|t| *t == s)
                .unwrap_or(ABANDONED)
        };
        Ok(rows
            .map(|r| r.map(|(stage, s, n)| (stage, state(&s), n)))
            .collect::<std::result::Result<_, _>>()?)
    }

    /// (state, count) of experiments.
    pub fn experiment_counts(&self) -> Result<Vec<(ExpState, u64)>> {
        let mut q = self
            .conn
            .prepare("SELECT state, COUNT(*) FROM experiments GROUP BY state ORDER BY state")?;
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Games in done grid and self-play tasks.
    pub fn games_done(&self) -> Result<u64> {
        self.games_done_since(i64::MIN)
    }

    /// Games in grid and self-play tasks completed since `ms`.
    pub fn games_done_since(&self, ms: i64) -> Result<u64> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT COALESCE(SUM(games), 0) FROM tasks
                 WHERE stage IN (?2, ?4) AND state = ?3 AND completed_ms >= ?1",
            )?
            .query_row(
                params![ms, Stage::Games.name(), TaskState::Done, Stage::SelfPlay.name()],
                |r| r.get::<_, i64>(0),
            )? as u64)
    }

    pub fn finish(&mut self, id: &str, state: ExpState, error: &str) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE experiments SET state = ?2, error = ?3, updated_ms = ?4 WHERE id = ?1 AND state = ?5",
            )?
            .execute(params![id, state, error, now_ms(), ExpState::Running])?;
        Ok(())
    }
}

/// A succeeded experiment goes back to running.
fn unseal_in(conn: &Connection, id: &str) -> Result<()> {
    conn.prepare_cached("UPDATE experiments SET state = ?3, error = '', updated_ms = ?2 WHERE id = ?1 AND state = ?4")?
        .execute(params![id, now_ms(), ExpState::Running, ExpState::Succeeded])?;
    Ok(())
}
