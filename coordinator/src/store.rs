//! The coordinator's durable state: experiments, stages and tasks in SQLite
//! (a real file in WAL mode). Every change is one transaction, so a crash at
//! any point leaves a consistent state that a restart resumes.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use jobs::Spec;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

/// What went wrong, for the service to turn into a status.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("state database: {0}")]
    Db(#[from] rusqlite::Error),
}

pub type Result<T> = std::result::Result<T, StoreError>;

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpState {
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

impl ExpState {
    pub fn as_str(self) -> &'static str {
        match self {
            ExpState::Running => "running",
            ExpState::Succeeded => "succeeded",
            ExpState::Failed => "failed",
            ExpState::Cancelled => "cancelled",
        }
    }
    fn parse(s: &str) -> ExpState {
        match s {
            "succeeded" => ExpState::Succeeded,
            "failed" => ExpState::Failed,
            "cancelled" => ExpState::Cancelled,
            _ => ExpState::Running,
        }
    }
}

#[derive(Clone, Debug)]
pub struct StageRow {
    pub name: String,
    pub total: u64,
    pub done: u64,
    pub running: u64,
    pub failed: u64,
}

#[derive(Clone, Debug)]
pub struct ExperimentRow {
    pub id: String,
    pub name: String,
    pub spec_toml: String,
    pub spec_hash: String,
    pub output: String,
    pub state: ExpState,
    pub error: String,
    pub games_total: u64,
    /// Games in done tasks plus games reported by running ones.
    pub games_done: u64,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub stages: Vec<StageRow>,
}

#[derive(Clone, Debug)]
pub struct LeasedTask {
    pub experiment_id: String,
    pub task_id: String,
    pub stage: String,
    pub shard: u64,
    pub first_game: u64,
    pub games: u64,
    pub spec_toml: String,
    pub spec_hash: String,
    pub output: String,
    pub lease_token: String,
    /// Whether this lease replaced an expired one.
    pub was_expired: bool,
    /// The model hash for games tasks of a classifier grid (else empty).
    pub model: String,
}

/// A done task whose partition the sweeper checks before the experiment is finished.
#[derive(Clone, Debug)]
pub struct DoneTask {
    pub task_id: String,
    pub stage: String,
    pub shard: u64,
    pub first_game: u64,
    pub games: u64,
    pub rows: u64,
    pub checksum: String,
    pub temp_file: String,
    pub final_file: String,
    pub completed_ms: i64,
}

#[derive(Debug)]
pub enum HeartbeatOutcome {
    Valid { cancel: bool },
    Invalid,
}

#[derive(Debug)]
pub enum CompleteOutcome {
    Accepted { final_file: String },
    Refused(String),
}

#[derive(Debug)]
pub enum FailOutcome {
    Requeued,
    Released,
    TaskFailed,
    Refused(String),
}

/// The state database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS experiments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    spec_toml TEXT NOT NULL,
    spec_hash TEXT NOT NULL,
    output TEXT NOT NULL,
    state TEXT NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    games_total INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS stages (
    experiment_id TEXT NOT NULL REFERENCES experiments(id),
    name TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (experiment_id, name)
);
CREATE TABLE IF NOT EXISTS tasks (
    experiment_id TEXT NOT NULL REFERENCES experiments(id),
    task_id TEXT NOT NULL,
    stage TEXT NOT NULL,
    stage_seq INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    shard INTEGER NOT NULL,
    first_game INTEGER NOT NULL,
    games INTEGER NOT NULL,
    state TEXT NOT NULL,
    lease_token TEXT,
    lease_worker TEXT,
    lease_expires_ms INTEGER,
    games_done INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    rows INTEGER,
    checksum TEXT,
    temp_file TEXT,
    final_file TEXT,
    completed_ms INTEGER,
    error TEXT,
    PRIMARY KEY (experiment_id, task_id)
);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state, experiment_id, stage_seq, seq);
CREATE TABLE IF NOT EXISTS task_failures (
    experiment_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    worker_id TEXT NOT NULL,
    error TEXT NOT NULL,
    retryable INTEGER NOT NULL,
    at_ms INTEGER NOT NULL
);
";

/// A failing task fails its experiment after failures on this many different workers...
pub const MAX_WORKER_FAILURES: u64 = 3;
/// ...or after this many failures in all (one worker retrying forever).
pub const MAX_FAILURES: u64 = 6;

fn token() -> String {
    let a: u64 = rand::random();
    let b: u64 = rand::random();
    format!("{a:016x}{b:016x}")
}

impl Store {
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // NORMAL in WAL mode survives any process crash; an OS crash may lose the
        // last transactions, which only re-leases or re-runs tasks (idempotent).
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store { conn })
    }

    /// The journal mode in force (for tests: "wal").
    pub fn journal_mode(&self) -> Result<String> {
        Ok(self.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?)
    }

    /// Adds an experiment with its stages and tasks, or returns the existing one
    /// with the same id (an identical spec); a failed or cancelled one resumes.
    /// Returns the id and whether it was created.
    pub fn submit(&mut self, spec: &Spec, spec_toml: &str) -> Result<(String, bool)> {
        let hash = spec.hash();
        let id = format!("{}-{}", spec.name, &hash[..12]);
        let tx = self.conn.transaction()?;
        let existing: Option<String> = tx
            .query_row("SELECT state FROM experiments WHERE id = ?1", [&id], |r| r.get(0))
            .optional()?;
        if let Some(state) = existing {
            let state = ExpState::parse(&state);
            if matches!(state, ExpState::Failed | ExpState::Cancelled) {
                // Resubmitting resumes: unfinished tasks go back to pending.
                tx.execute(
                    "UPDATE tasks SET state = 'pending', lease_token = NULL, lease_worker = NULL, error = NULL
                     WHERE experiment_id = ?1 AND state != 'done'",
                    [&id],
                )?;
                tx.execute("DELETE FROM task_failures WHERE experiment_id = ?1", [&id])?;
                tx.execute(
                    "UPDATE experiments SET state = 'running', error = '', updated_ms = ?2 WHERE id = ?1",
                    params![id, now_ms()],
                )?;
            }
            tx.commit()?;
            return Ok((id, false));
        }
        let clash: Option<String> = tx
            .query_row(
                "SELECT id FROM experiments WHERE output = ?1 AND state IN ('running', 'succeeded')",
                [&spec.output],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(other) = clash {
            return Err(StoreError::Conflict(format!(
                "output = \"{}\" is already used by experiment {other}; give this spec another name or output",
                spec.output
            )));
        }
        let now = now_ms();
        tx.execute(
            "INSERT INTO experiments (id, name, spec_toml, spec_hash, output, state, games_total, created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7, ?7)",
            params![id, spec.name, spec_toml, hash, spec.output, spec.games() as i64, now],
        )?;
        // Stages run in seq order: the classifier's training games and fit
        // come before the grid when the grid uses the classifier source.
        let mut stages: Vec<(&str, Vec<jobs::Shard>)> = Vec::new();
        if spec.needs_classifier() {
            stages.push(("samples", jobs::training::sample_shards(spec)));
            stages.push((
                "fit",
                vec![jobs::Shard {
                    index: 0,
                    first_game: 0,
                    games: 0,
                }],
            ));
        }
        stages.push(("games", jobs::shards(spec)));
        stages.push((
            "report",
            vec![jobs::Shard {
                index: 0,
                first_game: 0,
                games: 0,
            }],
        ));
        for (seq, (stage, shards)) in stages.iter().enumerate() {
            tx.execute(
                "INSERT INTO stages (experiment_id, name, seq) VALUES (?1, ?2, ?3)",
                params![id, stage, seq as i64],
            )?;
            let mut ins = tx.prepare(
                "INSERT INTO tasks (experiment_id, task_id, stage, stage_seq, seq, shard, first_game, games, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, 'pending')",
            )?;
            for s in shards {
                ins.execute(params![
                    id,
                    format!("{stage}-{:05}", s.index),
                    stage,
                    seq as i64,
                    s.index as i64,
                    s.first_game as i64,
                    s.games as i64
                ])?;
            }
        }
        tx.commit()?;
        Ok((id, true))
    }

    fn experiment_in(tx: &Connection, id: &str) -> Result<ExperimentRow> {
        let mut e = tx
            .query_row(
                "SELECT id, name, spec_toml, spec_hash, output, state, error, games_total, created_ms, updated_ms
                 FROM experiments WHERE id = ?1",
                [id],
                |r| {
                    Ok(ExperimentRow {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        spec_toml: r.get(2)?,
                        spec_hash: r.get(3)?,
                        output: r.get(4)?,
                        state: ExpState::parse(&r.get::<_, String>(5)?),
                        error: r.get(6)?,
                        games_total: r.get::<_, i64>(7)? as u64,
                        games_done: 0,
                        created_ms: r.get(8)?,
                        updated_ms: r.get(9)?,
                        stages: Vec::new(),
                    })
                },
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound(format!("no experiment with id {id:?}")))?;
        let mut q = tx.prepare(
            "SELECT s.name,
                    COUNT(t.task_id),
                    COALESCE(SUM(t.state = 'done'), 0),
                    COALESCE(SUM(t.state = 'leased'), 0),
                    COALESCE(SUM(t.state = 'failed'), 0),
                    COALESCE(SUM(CASE WHEN t.state = 'done' THEN t.games WHEN t.state = 'leased' THEN t.games_done ELSE 0 END), 0)
             FROM stages s LEFT JOIN tasks t ON t.experiment_id = s.experiment_id AND t.stage = s.name
             WHERE s.experiment_id = ?1 GROUP BY s.name ORDER BY s.seq",
        )?;
        let rows = q.query_map([id], |r| {
            Ok((
                StageRow {
                    name: r.get(0)?,
                    total: r.get::<_, i64>(1)? as u64,
                    done: r.get::<_, i64>(2)? as u64,
                    running: r.get::<_, i64>(3)? as u64,
                    failed: r.get::<_, i64>(4)? as u64,
                },
                r.get::<_, i64>(5)? as u64,
            ))
        })?;
        for row in rows {
            let (stage, games) = row?;
            if stage.name == "games" {
                e.games_done = games;
            }
            e.stages.push(stage);
        }
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
            .prepare("SELECT id FROM experiments WHERE state = 'running' ORDER BY created_ms, id")?
            .query_map([], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?)
    }

    pub fn cancel(&mut self, id: &str) -> Result<ExperimentRow> {
        let tx = self.conn.transaction()?;
        let e = Self::experiment_in(&tx, id)?;
        if e.state == ExpState::Running {
            tx.execute(
                "UPDATE experiments SET state = 'cancelled', updated_ms = ?2 WHERE id = ?1",
                params![id, now_ms()],
            )?;
        }
        let e = Self::experiment_in(&tx, id)?;
        tx.commit()?;
        Ok(e)
    }

    /// Leases the next runnable task: the first pending (or expired) task of
    /// the oldest running experiment whose earlier stages are all done.
    pub fn lease(&mut self, worker: &str, lease_ms: i64) -> Result<Option<LeasedTask>> {
        let now = now_ms();
        let tx = self.conn.transaction()?;
        let found = tx
            .query_row(
                "SELECT t.experiment_id, t.task_id, t.stage, t.shard, t.first_game, t.games, t.state,
                        e.spec_toml, e.spec_hash, e.output
                 FROM tasks t JOIN experiments e ON e.id = t.experiment_id
                 WHERE e.state = 'running'
                   AND (t.state = 'pending' OR (t.state = 'leased' AND t.lease_expires_ms < ?1))
                   AND NOT EXISTS (SELECT 1 FROM tasks u WHERE u.experiment_id = t.experiment_id
                                   AND u.stage_seq < t.stage_seq AND u.state != 'done')
                 ORDER BY e.created_ms, e.id, t.stage_seq, t.seq LIMIT 1",
                [now],
                |r| {
                    Ok(LeasedTask {
                        experiment_id: r.get(0)?,
                        task_id: r.get(1)?,
                        stage: r.get(2)?,
                        shard: r.get::<_, i64>(3)? as u64,
                        first_game: r.get::<_, i64>(4)? as u64,
                        games: r.get::<_, i64>(5)? as u64,
                        was_expired: r.get::<_, String>(6)? == "leased",
                        spec_toml: r.get(7)?,
                        spec_hash: r.get(8)?,
                        output: r.get(9)?,
                        lease_token: token(),
                        model: String::new(),
                    })
                },
            )
            .optional()?;
        let Some(mut task) = found else {
            return Ok(None);
        };
        if task.stage == "games" {
            task.model = tx
                .query_row(
                    "SELECT checksum FROM tasks WHERE experiment_id = ?1 AND stage = 'fit' AND state = 'done'",
                    [&task.experiment_id],
                    |r| r.get(0),
                )
                .optional()?
                .unwrap_or_default();
        }
        tx.execute(
            "UPDATE tasks SET state = 'leased', lease_token = ?3, lease_worker = ?4, lease_expires_ms = ?5,
                              games_done = 0, attempts = attempts + 1
             WHERE experiment_id = ?1 AND task_id = ?2",
            params![
                task.experiment_id,
                task.task_id,
                task.lease_token,
                worker,
                now + lease_ms
            ],
        )?;
        tx.commit()?;
        Ok(Some(task))
    }

    fn leased_by<'a>(tx: &Transaction<'a>, task_id: &str, token: &str) -> Result<Option<(String, String)>> {
        Ok(tx
            .query_row(
                "SELECT t.experiment_id, e.state FROM tasks t JOIN experiments e ON e.id = t.experiment_id
                 WHERE t.task_id = ?1 AND t.lease_token = ?2 AND t.state = 'leased'",
                params![task_id, token],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    pub fn heartbeat(
        &mut self,
        task_id: &str,
        token: &str,
        games_done: u64,
        lease_ms: i64,
    ) -> Result<HeartbeatOutcome> {
        let tx = self.conn.transaction()?;
        let Some((exp, state)) = Self::leased_by(&tx, task_id, token)? else {
            return Ok(HeartbeatOutcome::Invalid);
        };
        tx.execute(
            "UPDATE tasks SET lease_expires_ms = ?3, games_done = ?4 WHERE experiment_id = ?1 AND task_id = ?2",
            params![exp, task_id, now_ms() + lease_ms, games_done as i64],
        )?;
        tx.commit()?;
        Ok(HeartbeatOutcome::Valid {
            cancel: state != "running",
        })
    }

    pub fn complete(
        &mut self,
        task_id: &str,
        token: &str,
        rows: u64,
        checksum: &str,
        temp_file: &str,
    ) -> Result<CompleteOutcome> {
        let tx = self.conn.transaction()?;
        let Some((exp, state)) = Self::leased_by(&tx, task_id, token)? else {
            return Ok(CompleteOutcome::Refused(format!(
                "stale lease: task {task_id} is not leased with this token (it expired and was leased again, or is finished)"
            )));
        };
        if state != "running" {
            return Ok(CompleteOutcome::Refused(format!("experiment {exp} is {state}")));
        }
        let (games, shard, output, stage): (i64, i64, String, String) = tx.query_row(
            "SELECT t.games, t.shard, e.output, t.stage FROM tasks t JOIN experiments e ON e.id = t.experiment_id
             WHERE t.experiment_id = ?1 AND t.task_id = ?2",
            params![exp, task_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        if stage == "games" && rows != games as u64 {
            return Ok(CompleteOutcome::Refused(format!(
                "task {task_id} has {games} games but {rows} rows were reported"
            )));
        }
        let final_file = match stage.as_str() {
            "fit" | "report" => {
                // These stages write their files themselves (atomically) and
                // complete with the SHA-256 of the file that marks them done.
                let want = if stage == "fit" {
                    format!("{output}/{}", jobs::training::model_file(checksum))
                } else {
                    format!("{output}/report/report.json")
                };
                let hex = checksum.len() == 64 && checksum.bytes().all(|b| b.is_ascii_hexdigit());
                if !hex || temp_file != want {
                    return Ok(CompleteOutcome::Refused(format!(
                        "a {stage} task completes with its file's SHA-256 as checksum and the file {want:?}; got {temp_file:?}"
                    )));
                }
                want
            }
            _ => {
                let dir = if stage == "samples" {
                    format!("{output}/classifier/samples/")
                } else {
                    format!("{output}/games/")
                };
                let ok_temp = temp_file.strip_prefix(&dir).is_some_and(|n| {
                    n.starts_with('.') && !n.contains('/') && !n.ends_with(".parquet") && !n.contains("..")
                });
                if !ok_temp {
                    return Ok(CompleteOutcome::Refused(format!(
                        "temp_file {temp_file:?} must be a hidden file directly under {dir}"
                    )));
                }
                format!("{dir}{}", jobs::part_file(shard as u64))
            }
        };
        tx.execute(
            "UPDATE tasks SET state = 'done', rows = ?3, checksum = ?4, temp_file = ?5, final_file = ?6,
                              completed_ms = ?7, games_done = games
             WHERE experiment_id = ?1 AND task_id = ?2",
            params![exp, task_id, rows as i64, checksum, temp_file, final_file, now_ms()],
        )?;
        tx.execute(
            "UPDATE experiments SET updated_ms = ?2 WHERE id = ?1",
            params![exp, now_ms()],
        )?;
        tx.commit()?;
        Ok(CompleteOutcome::Accepted { final_file })
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
            return Ok(FailOutcome::Refused(format!(
                "stale lease: task {task_id} is not leased with this token"
            )));
        };
        if release {
            tx.execute(
                "UPDATE tasks SET state = 'pending', lease_token = NULL, lease_worker = NULL WHERE experiment_id = ?1 AND task_id = ?2",
                params![exp, task_id],
            )?;
            tx.commit()?;
            return Ok(FailOutcome::Released);
        }
        let now = now_ms();
        tx.execute(
            "INSERT INTO task_failures (experiment_id, task_id, worker_id, error, retryable, at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![exp, task_id, worker, error, retryable, now],
        )?;
        let (workers, failures): (i64, i64) = tx.query_row(
            "SELECT COUNT(DISTINCT worker_id), COUNT(*) FROM task_failures WHERE experiment_id = ?1 AND task_id = ?2",
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
            tx.execute(
                "UPDATE tasks SET state = 'failed', error = ?3, lease_token = NULL WHERE experiment_id = ?1 AND task_id = ?2",
                params![exp, task_id, error],
            )?;
            tx.execute(
                "UPDATE experiments SET state = 'failed', error = ?2, updated_ms = ?3 WHERE id = ?1 AND state = 'running'",
                params![exp, why, now],
            )?;
            tx.commit()?;
            return Ok(FailOutcome::TaskFailed);
        }
        tx.execute(
            "UPDATE tasks SET state = 'pending', lease_token = NULL, lease_worker = NULL, error = ?3
             WHERE experiment_id = ?1 AND task_id = ?2",
            params![exp, task_id, error],
        )?;
        tx.commit()?;
        Ok(FailOutcome::Requeued)
    }

    /// The done tasks of a running experiment whose every task is done, or
    /// `None` while some task is not done.
    pub fn finished_tasks(&self, id: &str) -> Result<Option<Vec<DoneTask>>> {
        let open: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM tasks WHERE experiment_id = ?1 AND state != 'done'",
            [id],
            |r| r.get(0),
        )?;
        if open > 0 {
            return Ok(None);
        }
        let mut q = self.conn.prepare(
            "SELECT task_id, shard, first_game, games, rows, checksum, temp_file, final_file, completed_ms, stage
             FROM tasks WHERE experiment_id = ?1 ORDER BY stage_seq, seq",
        )?;
        let rows = q.query_map([id], |r| {
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
                stage: r.get(9)?,
            })
        })?;
        Ok(Some(rows.collect::<std::result::Result<_, _>>()?))
    }

    /// A done task whose partition was lost goes back to pending.
    pub fn requeue_lost(&mut self, id: &str, task_id: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE tasks SET state = 'pending', lease_token = NULL, rows = NULL, checksum = NULL, games_done = 0
             WHERE experiment_id = ?1 AND task_id = ?2 AND state = 'done'",
            params![id, task_id],
        )?;
        Ok(())
    }

    /// (stage, state, count) over all experiments.
    pub fn task_counts(&self) -> Result<Vec<(String, String, u64)>> {
        let mut q = self
            .conn
            .prepare("SELECT stage, state, COUNT(*) FROM tasks GROUP BY stage, state ORDER BY stage, state")?;
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// (state, count) of experiments.
    pub fn experiment_counts(&self) -> Result<Vec<(String, u64)>> {
        let mut q = self
            .conn
            .prepare("SELECT state, COUNT(*) FROM experiments GROUP BY state ORDER BY state")?;
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Games in done grid tasks.
    pub fn games_done(&self) -> Result<u64> {
        self.games_done_since(i64::MIN)
    }

    /// Games in grid tasks completed since `ms`.
    pub fn games_done_since(&self, ms: i64) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT COALESCE(SUM(games), 0) FROM tasks WHERE stage = 'games' AND state = 'done' AND completed_ms >= ?1",
            [ms],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    pub fn finish(&mut self, id: &str, state: ExpState, error: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE experiments SET state = ?2, error = ?3, updated_ms = ?4 WHERE id = ?1 AND state = 'running'",
            params![id, state.as_str(), error, now_ms()],
        )?;
        Ok(())
    }
}

/// Resolves a path relative to the results root, refusing anything outside it.
pub fn under_root(root: &Path, relative: &str) -> Option<PathBuf> {
    let p = Path::new(relative);
    if p.is_absolute() || p.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
        return None;
    }
    Some(root.join(p))
}
