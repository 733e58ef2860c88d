//! Leases: handing out tasks with tokens and deadlines, heartbeats,
//! completions and failures (3 workers or 6 failures fail the experiment).

use jobs::layout::Stage;
use rusqlite::{OptionalExtension, Transaction, params};

use super::pick::{Candidate, Running, running, stop_of};
use super::{
    CompleteOutcome, CompletionTarget, DoneTask, ExpState, FailOutcome, LeasedTask, MAX_FAILURES, MAX_WORKER_FAILURES,
    Result, Store, TaskState, now_ms, token,
};

/// The done tasks of an experiment not yet in place, in order: what the
/// sweeper places each tick (a range of the index `tasks_to_place`).
const DONE_UNPLACED: &str = "SELECT task_id, shard, first_game, games, rows, checksum, temp_file, final_file,
        completed_ms, stage, file_bytes, placed
     FROM tasks WHERE state = ?2 AND experiment_id = ?1 AND placed = 0
     ORDER BY stage_seq, seq";

/// A lease's candidates in one experiment's stage (`?3`): the pending task
/// first in order, and the expired lease that expired first (`?1` the
/// state, `?4` the time). Past the SPRT's window (`?6`) no games task is
/// taken, and a task avoids the workers in `task_avoid` (`?5` the one
/// asking) until its `avoid_until_ms` (avoid.rs): that worker's row, if
/// any, is one look-up of `task_avoid`'s primary key.
const PENDING_PICK: &str = "SELECT seq, task_id, stage, shard, first_game, games FROM tasks
     WHERE state = ?1 AND experiment_id = ?2 AND stage_seq = ?3 AND (stage != ?7 OR shard <= ?6)
       AND (avoid_until_ms < ?4 OR NOT EXISTS (SELECT 1 FROM task_avoid a
            WHERE a.experiment_id = tasks.experiment_id AND a.task_id = tasks.task_id AND a.worker = ?5))
     ORDER BY seq LIMIT 1";
const EXPIRED_PICK: &str = "SELECT seq, task_id, stage, shard, first_game, games FROM tasks
     WHERE state = ?1 AND experiment_id = ?2 AND stage_seq = ?3 AND lease_expires_ms < ?4
       AND (stage != ?7 OR shard <= ?6)
       AND (avoid_until_ms < ?4 OR NOT EXISTS (SELECT 1 FROM task_avoid a
            WHERE a.experiment_id = tasks.experiment_id AND a.task_id = tasks.task_id AND a.worker = ?5))
     ORDER BY lease_expires_ms LIMIT 1";

impl Store {
    /// Gives back every lease held by a worker whose id starts with `prefix`
    /// (`muggins run` restarting: its previous in-process workers are gone).
    /// Returns how many.
    pub fn release_leases_of(&mut self, prefix: &str) -> Result<usize> {
        let pattern = format!("{}%", prefix.replace('%', "\\%").replace('_', "\\_"));
        Ok(self
            .conn
            .prepare_cached(
                "UPDATE tasks SET state = ?2, lease_token = NULL, lease_worker = NULL
             WHERE state = ?3 AND lease_worker LIKE ?1 ESCAPE '\\'",
            )?
            .execute(params![pattern, TaskState::Pending, TaskState::Leased])?)
    }

    /// Leases the next runnable task: in the oldest running experiment with
    /// one, its first stage with a task not done and placed (every earlier
    /// stage is done), the pending task first in order or, if one comes
    /// first, the expired lease that expired first. Every lookup is a range
    /// of an index (`tasks_open`, `tasks_by_state`, `tasks_by_expiry`), so a
    /// lease costs the same with 100 tasks or 100,000 (`muggins bench
    /// coordinator`). With `only`, just that experiment's tasks (a
    /// `muggins run`'s own workers leave the other experiments of its
    /// results directory alone).
    pub fn lease(&mut self, worker: &str, lease_ms: i64, only: Option<&str>) -> Result<Option<LeasedTask>> {
        let now = now_ms();
        let games_stage = Stage::Games.name();
        let tx = self.conn.transaction()?;
        // Kept heartbeats first: the expired lease chosen below must be one
        // no answered heartbeat has pushed on (beats.rs).
        let beats_written = Self::write_beats(&tx, &mut self.beats)? > 0;
        if Self::is_bad(&tx, worker)? {
            if beats_written {
                tx.commit()?;
            }
            return Ok(None);
        }
        let experiments = running(&tx, only)?;
        let mut found = None;
        let mut failed_one = false;
        for Running {
            id: experiment_id,
            spec_toml,
            spec_hash,
            output,
        } in experiments
        {
            // The first stage with a task not done and placed (placed is set
            // only on done tasks, and cleared when one is requeued).
            let stage: Option<i64> = tx
                .prepare_cached("SELECT MIN(stage_seq) FROM tasks WHERE experiment_id = ?1 AND placed = 0")?
                .query_row(params![experiment_id], |r| r.get(0))?;
            let Some(stage) = stage else { continue };
            let Some(stop) = stop_of(&mut self.stops, &tx, &experiment_id, &spec_toml, now)? else {
                failed_one = true;
                continue;
            };
            let last_shard = match stop {
                Some(_) => Self::stop_window(&tx, &experiment_id, now)?,
                None => i64::MAX,
            };
            let pick = |sql: &str, state: TaskState| -> Result<Option<Candidate>> {
                Ok(tx
                    .prepare_cached(sql)?
                    .query_row(
                        params![state, experiment_id, stage, now, worker, last_shard, games_stage],
                        |r| {
                            Ok(Candidate {
                                seq: r.get(0)?,
                                task_id: r.get(1)?,
                                stage: super::stage_at(r, 2)?,
                                shard: r.get(3)?,
                                first_game: r.get(4)?,
                                games: r.get(5)?,
                            })
                        },
                    )
                    .optional()?)
            };
            let pending = pick(PENDING_PICK, TaskState::Pending)?;
            let expired = pick(EXPIRED_PICK, TaskState::Leased)?;
            let (row, was_expired) = match (pending, expired) {
                (Some(p), Some(e)) if e.seq < p.seq => (e, true),
                (Some(p), _) => (p, false),
                (None, Some(e)) => (e, true),
                (None, None) => continue,
            };
            found = Some(LeasedTask {
                experiment_id,
                task_id: row.task_id,
                stage: row.stage,
                shard: row.shard as u64,
                first_game: row.first_game as u64,
                games: row.games as u64,
                was_expired,
                spec_toml,
                spec_hash,
                output,
                lease_token: token(),
                model: String::new(),
                chunks: Vec::new(),
                expected_checksum: String::new(),
            });
            break;
        }
        let Some(mut task) = found else {
            if failed_one || beats_written {
                tx.commit()?;
            }
            return Ok(None);
        };
        let stage = task.stage;
        let mut resumed = 0;
        if stage == Stage::Games {
            // Ranges an earlier completion played without a chunk file are in
            // no file now (its partition is being redone): played again.
            tx.prepare_cached("DELETE FROM chunks WHERE experiment_id = ?1 AND shard = ?2 AND file IS NULL")?
                .execute(params![task.experiment_id, task.shard as i64])?;
            task.chunks = Self::committed_chunks(&tx, &task.experiment_id, task.shard)?;
            resumed = task.chunks.iter().map(|c| c.games).sum::<u64>();
        }
        if stage == Stage::Check {
            task.expected_checksum = tx
                .prepare_cached(
                    "SELECT COALESCE(expected_checksum, '') FROM tasks WHERE experiment_id = ?1 AND task_id = ?2",
                )?
                .query_row(params![task.experiment_id, task.task_id], |r| r.get(0))?;
        }
        if matches!(stage, Stage::Games | Stage::Check) {
            task.model = tx
                .prepare_cached("SELECT checksum FROM tasks WHERE experiment_id = ?1 AND task_id = ?2 AND state = ?3")?
                .query_row(
                    params![task.experiment_id, Stage::Fit.task_id(0), TaskState::Done],
                    |r| r.get(0),
                )
                .optional()?
                .unwrap_or_default();
        }
        tx.prepare_cached(
            "UPDATE tasks SET state = ?6, lease_token = ?3, lease_worker = ?4, lease_expires_ms = ?5,
                              games_done = ?7, attempts = attempts + 1
             WHERE experiment_id = ?1 AND task_id = ?2",
        )?
        .execute(params![
            task.experiment_id,
            task.task_id,
            task.lease_token,
            worker,
            now + lease_ms,
            TaskState::Leased,
            resumed as i64
        ])?;
        tx.commit()?;
        Ok(Some(task))
    }

    pub(super) fn leased_by(
        tx: &rusqlite::Connection,
        task_id: &str,
        token: &str,
    ) -> Result<Option<(String, ExpState)>> {
        Ok(tx
            .prepare_cached(
                "SELECT t.experiment_id, e.state FROM tasks t JOIN experiments e ON e.id = t.experiment_id
                 WHERE t.task_id = ?1 AND t.lease_token = ?2 AND t.state = ?3",
            )?
            .query_row(params![task_id, token, TaskState::Leased], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?)
    }

    /// What a completion of `task_id` under `token` must have written, or
    /// why it is refused before any file is looked at.
    pub fn completion_target(
        &self,
        task_id: &str,
        token: &str,
    ) -> Result<std::result::Result<CompletionTarget, String>> {
        let found = self
            .conn
            .prepare_cached(
                "SELECT t.experiment_id, e.state, t.stage, t.shard, t.games, e.output, e.spec_toml
                 FROM tasks t JOIN experiments e ON e.id = t.experiment_id
                 WHERE t.task_id = ?1 AND t.lease_token = ?2 AND t.state = ?3",
            )?
            .query_row(params![task_id, token, TaskState::Leased], |r| {
                Ok((
                    r.get::<_, ExpState>(1)?,
                    CompletionTarget {
                        experiment_id: r.get(0)?,
                        stage: super::stage_at(r, 2)?,
                        shard: r.get::<_, i64>(3)? as u64,
                        games: r.get::<_, i64>(4)? as u64,
                        output: r.get(5)?,
                        spec_toml: r.get(6)?,
                    },
                ))
            })
            .optional()?;
        Ok(match found {
            None => Err(self.stale_reason(task_id)),
            Some((state, t)) if state != ExpState::Running => {
                Err(format!("experiment {} is {}", t.experiment_id, state.as_str()))
            }
            Some((_, t)) => Ok(t),
        })
    }

    /// Records a completion whose file the service has checked: `final_file`
    /// is where it goes, `placed` whether it is there already (fit and
    /// report write in place; partitions are renamed by the worker next).
    pub fn complete(&mut self, lease: LeaseRef, done: &Completed, by: &Reporter) -> Result<CompleteOutcome> {
        self.complete_then(lease, done, by, |_| {})
    }

    /// [`Self::complete`], `before_commit` given the accepted outcome just
    /// before it is committed: what a verdict sends back loses its files
    /// first (a crash after that leaves done tasks whose files are gone,
    /// which the sweeper's verification plays again; the other order would
    /// leave pending tasks beside their old files).
    pub fn complete_then(
        &mut self,
        lease: LeaseRef,
        done: &Completed,
        by: &Reporter,
        before_commit: impl FnOnce(&CompleteOutcome),
    ) -> Result<CompleteOutcome> {
        let LeaseRef { task_id, token } = lease;
        let Completed {
            rows,
            checksum,
            temp_file,
            final_file,
            file,
            placed,
            stats,
        } = *done;
        let Reporter {
            worker,
            chunks,
            check_fraction,
        } = *by;
        let tx = self.conn.transaction()?;
        let Some((exp, state)) = Self::leased_by(&tx, task_id, token)? else {
            // The SPRT may have decided since the service's first look.
            drop(tx);
            return Ok(CompleteOutcome::Refused(self.stale_reason(task_id)));
        };
        if state != ExpState::Running {
            return Ok(CompleteOutcome::Refused(format!(
                "experiment {exp} is {}",
                state.as_str()
            )));
        }
        if Self::is_bad(&tx, worker)? {
            return Ok(CompleteOutcome::Refused(format!(
                "worker {worker} is marked bad (a cross-check found its games wrong): its work is not taken"
            )));
        }
        let (stage, shard, first, games): (String, i64, i64, i64) = tx
            .prepare_cached(
                "SELECT stage, shard, first_game, games FROM tasks WHERE experiment_id = ?1 AND task_id = ?2",
            )?
            .query_row(params![exp, task_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
        let stage = Stage::parse(&stage);
        let span = (shard as u64, first as u64, games as u64);
        if stage == Some(Stage::Games)
            && !chunks.is_empty()
            && let Err(why) = Self::record_chunks(&tx, &exp, span, worker, chunks)?
        {
            return Ok(CompleteOutcome::Refused(why));
        }
        if stage == Some(Stage::SelfPlay) {
            // The partition's file hash (checked) and its worker: what a
            // cross-check compares and a verdict finds.
            Self::record_partition(&tx, &exp, span, worker, checksum)?;
        }
        let check = match stage {
            Some(Stage::Check) => Some(Self::judge_check(&tx, &exp, task_id, checksum, worker)?),
            _ => None,
        };
        tx.prepare_cached(
            "UPDATE tasks SET state = ?11, rows = ?3, checksum = ?4, temp_file = ?5, final_file = ?6,
                              completed_ms = ?7, games_done = games, file_bytes = ?8, file_sha256 = ?9, placed = ?10,
                              stats = ?12
             WHERE experiment_id = ?1 AND task_id = ?2",
        )?
        .execute(params![
            exp,
            task_id,
            rows as i64,
            checksum,
            temp_file,
            final_file,
            now_ms(),
            file.0 as i64,
            file.1,
            placed,
            TaskState::Done,
            stats
        ])?;
        let checks_added = match stage {
            Some(source @ (Stage::Games | Stage::SelfPlay)) => {
                Self::add_checks(&tx, &exp, source, shard as u64, check_fraction)?
            }
            _ => 0,
        };
        tx.prepare_cached("UPDATE experiments SET updated_ms = ?2 WHERE id = ?1")?
            .execute(params![exp, now_ms()])?;
        let outcome = CompleteOutcome::Accepted {
            final_file: final_file.to_string(),
            check,
            checks_added,
        };
        before_commit(&outcome);
        tx.commit()?;
        Ok(outcome)
    }

    pub fn fail(
        &mut self,
        worker: &str,
        task_id: &str,
        token: &str,
        error: &str,
        retryable: bool,
        release: bool,
    ) -> Result<FailOutcome> {
        let tx = self.conn.transaction()?;
        let Some((exp, _)) = Self::leased_by(&tx, task_id, token)? else {
            drop(tx);
            return Ok(FailOutcome::Refused(self.stale_reason(task_id)));
        };
        if release {
            tx.prepare_cached("UPDATE tasks SET state = ?3, lease_token = NULL, lease_worker = NULL WHERE experiment_id = ?1 AND task_id = ?2")?
.execute(
                params![exp, task_id, TaskState::Pending],
            )?;
            tx.commit()?;
            return Ok(FailOutcome::Released);
        }
        if Self::count_failure(&tx, &exp, task_id, worker, error, retryable)? {
            tx.commit()?;
            return Ok(FailOutcome::TaskFailed);
        }
        tx.prepare_cached(
            "UPDATE tasks SET state = ?4, lease_token = NULL, lease_worker = NULL, error = ?3
             WHERE experiment_id = ?1 AND task_id = ?2",
        )?
        .execute(params![exp, task_id, error, TaskState::Pending])?;
        tx.commit()?;
        Ok(FailOutcome::Requeued)
    }

    /// Records a failure of `task_id` by `worker`; once it is one too many
    /// (not retryable, or [`MAX_WORKER_FAILURES`] workers, or
    /// [`MAX_FAILURES`] failures), the task and its experiment fail, and
    /// `true` is returned. The caller commits.
    pub(super) fn count_failure(
        tx: &Transaction<'_>,
        exp: &str,
        task_id: &str,
        worker: &str,
        error: &str,
        retryable: bool,
    ) -> Result<bool> {
        let now = now_ms();
        tx.prepare_cached("INSERT INTO task_failures (experiment_id, task_id, worker_id, error, retryable, at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
.execute(
            params![exp, task_id, worker, error, retryable, now],
        )?;
        let (workers, failures): (i64, i64) = tx.prepare_cached("SELECT COUNT(DISTINCT worker_id), COUNT(*) FROM task_failures WHERE experiment_id = ?1 AND task_id = ?2")?
.query_row(
            params![exp, task_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let give_up = !retryable || workers as u64 >= MAX_WORKER_FAILURES || failures as u64 >= MAX_FAILURES;
        if give_up {
            let why = if retryable {
                format!("task {task_id} failed {failures} times on {workers} workers; last error: {error}")
            } else {
                format!("task {task_id} failed and cannot be retried: {error}")
            };
            tx.prepare_cached(
                "UPDATE tasks SET state = ?4, error = ?3, lease_token = NULL WHERE experiment_id = ?1 AND task_id = ?2",
            )?
            .execute(params![exp, task_id, error, TaskState::Failed])?;
            tx.prepare_cached(
                "UPDATE experiments SET state = ?4, error = ?2, updated_ms = ?3 WHERE id = ?1 AND state = ?5",
            )?
            .execute(params![exp, why, now, ExpState::Failed, ExpState::Running])?;
        }
        Ok(give_up)
    }

    /// A done task whose file could not be put in place (the coordinator
    /// found its name unusable): a failure of the worker that completed
    /// it, like any other; the task runs again with what depends on it
    /// (`requeue_lost`), or, when that was one failure too many, the task
    /// and its experiment fail. Returns whether they failed.
    pub fn fail_done(&mut self, id: &str, task_id: &str, error: &str) -> Result<bool> {
        let tx = self.conn.transaction()?;
        let worker: Option<Option<String>> = tx
            .prepare_cached("SELECT lease_worker FROM tasks WHERE experiment_id = ?1 AND task_id = ?2 AND state = ?3")?
            .query_row(params![id, task_id, TaskState::Done], |r| r.get(0))
            .optional()?;
        let Some(worker) = worker else {
            return Ok(false);
        };
        let failed = Self::count_failure(&tx, id, task_id, worker.as_deref().unwrap_or("unknown"), error, true)?;
        tx.commit()?;
        if !failed {
            self.requeue_lost(id, &[task_id.to_string()])?;
        }
        Ok(failed)
    }

    /// The done tasks of a running experiment whose every task is done and
    /// in place, or `None` while some task is not.
    pub fn finished_tasks(&self, id: &str) -> Result<Option<Vec<DoneTask>>> {
        let open: i64 = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*) FROM (SELECT 1 FROM tasks WHERE experiment_id = ?1 AND placed = 0 LIMIT 1)",
            )?
            .query_row(params![id], |r| r.get(0))?;
        if open > 0 {
            return Ok(None);
        }
        self.done_tasks(id, false).map(Some)
    }

    /// The query plan of the sweeper's look-up (tests: an index range).
    #[cfg(test)]
    pub(super) fn done_unplaced_plan(&self) -> Result<String> {
        let mut q = self.conn.prepare(&format!("EXPLAIN QUERY PLAN {DONE_UNPLACED}"))?;
        let rows = q.query_map(params!["x", TaskState::Done], |r| r.get::<_, String>(3))?;
        Ok(rows.collect::<std::result::Result<Vec<_>, _>>()?.join("; "))
    }

    /// The query plans of a lease's two picks, pending and expired (tests).
    #[cfg(test)]
    pub(super) fn lease_pick_plans(&self) -> Result<[String; 2]> {
        let plan = |sql: &str, state: TaskState| -> Result<String> {
            let mut q = self.conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
            let rows = q.query_map(params![state, "x", 0, 0, "w", 0, "games"], |r| r.get::<_, String>(3))?;
            Ok(rows.collect::<std::result::Result<Vec<_>, _>>()?.join("; "))
        };
        Ok([
            plan(PENDING_PICK, TaskState::Pending)?,
            plan(EXPIRED_PICK, TaskState::Leased)?,
        ])
    }

    /// The done tasks of experiment `id` (only those not yet in place when
    /// `unplaced_only`), in stage and shard order.
    pub fn done_tasks(&self, id: &str, unplaced_only: bool) -> Result<Vec<DoneTask>> {
        // Two statements, so that the sweeper's (unplaced only, every tick)
        // is a range of `tasks_to_place`.
        let mut q = self.conn.prepare_cached(if unplaced_only {
            DONE_UNPLACED
        } else {
            "SELECT task_id, shard, first_game, games, rows, checksum, temp_file, final_file, completed_ms, stage,
                    file_bytes, placed
             FROM tasks WHERE experiment_id = ?1 AND state = ?2
             ORDER BY stage_seq, seq"
        })?;
        let rows = q.query_map(params![id, TaskState::Done], |r| {
            Ok(DoneTask {
                task_id: r.get(0)?,
                shard: r.get::<_, i64>(1)? as u64,
                first_game: r.get::<_, i64>(2)? as u64,
                games: r.get::<_, i64>(3)? as u64,
                rows: r.get::<_, i64>(4)? as u64,
                checksum: r.get(5)?,
                temp_file: r.get(6)?,
                final_file: r.get(7)?,
                completed_ms: r.get(8)?,
                stage: super::stage_at(r, 9)?,
                file_bytes: r.get::<_, Option<i64>>(10)?.map(|b| b as u64),
                placed: r.get(11)?,
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Marks a done task's file as under its final name.
    pub fn mark_placed(&mut self, id: &str, task_id: &str) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE tasks SET placed = 1 WHERE experiment_id = ?1 AND task_id = ?2 AND state = ?3")?
            .execute(params![id, task_id, TaskState::Done])?;
        Ok(())
    }
}

/// A lease as a worker names it: the task and the token it was leased with.
#[derive(Clone, Copy, Debug)]
pub struct LeaseRef<'a> {
    pub task_id: &'a str,
    pub token: &'a str,
}

/// Who reports on a lease: the worker, the chunks of games it committed, and
/// the share of a games task's games the coordinator cross-checks.
#[derive(Clone, Copy, Debug)]
pub struct Reporter<'a> {
    pub worker: &'a str,
    pub chunks: &'a [super::ChunkIn],
    pub check_fraction: f64,
}

/// A completion the service has checked: its rows and checksum, the temporary
/// file and where it goes, the file's size and SHA-256, whether it is in place
/// already (fit and report write in place; partitions are renamed next), and
/// an SPRT shard's pair counts.
#[derive(Clone, Copy, Debug)]
pub struct Completed<'a> {
    pub rows: u64,
    pub checksum: &'a str,
    pub temp_file: &'a str,
    pub final_file: &'a str,
    pub file: (u64, &'a str),
    pub placed: bool,
    pub stats: Option<&'a str>,
}
