//! The coordinator's durable state: experiments, stages and tasks in SQLite
//! (a real file in WAL mode). Every change is one transaction, so a crash at
//! any point leaves a consistent state that a restart resumes.

use std::path::Path;
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
    /// The state file cannot be opened as a muggins state database.
    #[error("{0}")]
    Open(String),
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
    /// The file's size and SHA-256 as checked at completion (None for rows
    /// completed before they were recorded).
    pub file_bytes: Option<u64>,
    /// Whether the file is known to be under its final name.
    pub placed: bool,
}

#[derive(Debug)]
pub enum HeartbeatOutcome {
    Valid {
        cancel: bool,
    },
    Invalid,
    /// More games reported done than the task holds.
    BadProgress {
        games: u64,
    },
}

/// Where a leased task's completion must have put its file.
#[derive(Clone, Debug)]
pub struct CompletionTarget {
    pub experiment_id: String,
    pub stage: String,
    pub shard: u64,
    pub games: u64,
    pub output: String,
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
    file_bytes INTEGER,
    file_sha256 TEXT,
    placed INTEGER NOT NULL DEFAULT 0,
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
    /// Opens (or creates) the state file. Errors name the file and say what
    /// to do: not a database, in use by another process, unreadable.
    pub fn open(path: &Path) -> Result<Store> {
        let explain = |e: rusqlite::Error| {
            use rusqlite::ErrorCode::*;
            let shown = path.display();
            StoreError::Open(match e.sqlite_error_code() {
                Some(NotADatabase) => format!(
                    "state file {shown} is not a muggins state database (not SQLite); give --state a new file or this coordinator's own"
                ),
                Some(DatabaseBusy | DatabaseLocked) => format!(
                    "state file {shown} is in use by another coordinator or `muggins run` (the database is locked); stop it, or use another --state / --out"
                ),
                Some(CannotOpen | PermissionDenied | ReadOnly) => {
                    format!("state file {shown} cannot be opened for writing: {e}")
                }
                _ => format!("state file {shown}: {e}"),
            })
        };
        let conn = Connection::open(path).map_err(explain)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(explain)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(explain)?;
        // NORMAL in WAL mode survives any process crash; an OS crash may lose the
        // last transactions, which only re-leases or re-runs tasks (idempotent).
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(explain)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(explain)?;
        conn.execute_batch(SCHEMA).map_err(explain)?;
        migrate(&conn).map_err(explain)?;
        Ok(Store { conn })
    }

    /// Gives back every lease held by a worker whose id starts with `prefix`
    /// (`muggins run` restarting: its previous in-process workers are gone).
    /// Returns how many.
    pub fn release_leases_of(&mut self, prefix: &str) -> Result<usize> {
        let pattern = format!("{}%", prefix.replace('%', "\\%").replace('_', "\\_"));
        Ok(self.conn.execute(
            "UPDATE tasks SET state = 'pending', lease_token = NULL, lease_worker = NULL
             WHERE state = 'leased' AND lease_worker LIKE ?1 ESCAPE '\\'",
            [pattern],
        )?)
    }

    /// The other experiments writing to `output`, with their states.
    pub fn experiments_with_output(&self, output: &str) -> Result<Vec<(String, ExpState)>> {
        let mut q = self
            .conn
            .prepare("SELECT id, state FROM experiments WHERE output = ?1 ORDER BY created_ms, id")?;
        let rows = q.query_map([output], |r| Ok((r.get(0)?, ExpState::parse(&r.get::<_, String>(1)?))))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The state of experiment `id`, if it exists.
    pub fn state_of(&self, id: &str) -> Result<Option<ExpState>> {
        Ok(self
            .conn
            .query_row("SELECT state FROM experiments WHERE id = ?1", [id], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
            .map(|s| ExpState::parse(&s)))
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
        let id = spec.id();
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
                "SELECT id FROM experiments WHERE output = ?1 AND state = 'running'",
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
                                   AND u.stage_seq < t.stage_seq AND (u.state != 'done' OR u.placed = 0))
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
        let games: i64 = tx.query_row(
            "SELECT games FROM tasks WHERE experiment_id = ?1 AND task_id = ?2",
            params![exp, task_id],
            |r| r.get(0),
        )?;
        if games_done > games as u64 {
            return Ok(HeartbeatOutcome::BadProgress { games: games as u64 });
        }
        tx.execute(
            "UPDATE tasks SET lease_expires_ms = ?3, games_done = ?4 WHERE experiment_id = ?1 AND task_id = ?2",
            params![exp, task_id, now_ms() + lease_ms, games_done as i64],
        )?;
        tx.commit()?;
        Ok(HeartbeatOutcome::Valid {
            cancel: state != "running",
        })
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
            .query_row(
                "SELECT t.experiment_id, e.state, t.stage, t.shard, t.games, e.output
                 FROM tasks t JOIN experiments e ON e.id = t.experiment_id
                 WHERE t.task_id = ?1 AND t.lease_token = ?2 AND t.state = 'leased'",
                params![task_id, token],
                |r| {
                    Ok((
                        r.get::<_, String>(1)?,
                        CompletionTarget {
                            experiment_id: r.get(0)?,
                            stage: r.get(2)?,
                            shard: r.get::<_, i64>(3)? as u64,
                            games: r.get::<_, i64>(4)? as u64,
                            output: r.get(5)?,
                        },
                    ))
                },
            )
            .optional()?;
        Ok(match found {
            None => Err(format!(
                "stale lease: task {task_id} is not leased with this token (it expired and was leased again, or is finished)"
            )),
            Some((state, t)) if state != "running" => Err(format!("experiment {} is {state}", t.experiment_id)),
            Some((_, t)) => Ok(t),
        })
    }

    /// Records a completion whose file the service has checked: `final_file`
    /// is where it goes, `placed` whether it is there already (fit and
    /// report write in place; partitions are renamed by the worker next).
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &mut self,
        task_id: &str,
        token: &str,
        rows: u64,
        checksum: &str,
        temp_file: &str,
        final_file: &str,
        file: (u64, &str),
        placed: bool,
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
        tx.execute(
            "UPDATE tasks SET state = 'done', rows = ?3, checksum = ?4, temp_file = ?5, final_file = ?6,
                              completed_ms = ?7, games_done = games, file_bytes = ?8, file_sha256 = ?9, placed = ?10
             WHERE experiment_id = ?1 AND task_id = ?2",
            params![
                exp,
                task_id,
                rows as i64,
                checksum,
                temp_file,
                final_file,
                now_ms(),
                file.0 as i64,
                file.1,
                placed
            ],
        )?;
        tx.execute(
            "UPDATE experiments SET updated_ms = ?2 WHERE id = ?1",
            params![exp, now_ms()],
        )?;
        tx.commit()?;
        Ok(CompleteOutcome::Accepted {
            final_file: final_file.to_string(),
        })
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

    /// The done tasks of a running experiment whose every task is done and
    /// in place, or `None` while some task is not.
    pub fn finished_tasks(&self, id: &str) -> Result<Option<Vec<DoneTask>>> {
        let open: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM tasks WHERE experiment_id = ?1 AND (state != 'done' OR placed = 0)",
            [id],
            |r| r.get(0),
        )?;
        if open > 0 {
            return Ok(None);
        }
        self.done_tasks(id, false).map(Some)
    }

    /// The done tasks of experiment `id` (only those not yet in place when
    /// `unplaced_only`), in stage and shard order.
    pub fn done_tasks(&self, id: &str, unplaced_only: bool) -> Result<Vec<DoneTask>> {
        let mut q = self.conn.prepare(
            "SELECT task_id, shard, first_game, games, rows, checksum, temp_file, final_file, completed_ms, stage,
                    file_bytes, placed
             FROM tasks WHERE experiment_id = ?1 AND state = 'done' AND (?2 = 0 OR placed = 0)
             ORDER BY stage_seq, seq",
        )?;
        let rows = q.query_map(params![id, unplaced_only], |r| {
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
                file_bytes: r.get::<_, Option<i64>>(10)?.map(|b| b as u64),
                placed: r.get(11)?,
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Marks a done task's file as under its final name.
    pub fn mark_placed(&mut self, id: &str, task_id: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE tasks SET placed = 1 WHERE experiment_id = ?1 AND task_id = ?2 AND state = 'done'",
            params![id, task_id],
        )?;
        Ok(())
    }

    /// Sends tasks whose files were lost back to pending, with what depends
    /// on them: the report (it reads every partition) and, after a lost
    /// model, everything after the fit (the grid carried that model's hash).
    /// A leased dependent loses its lease (its completion will be refused).
    /// An experiment that had succeeded runs again. Returns the task ids
    /// requeued.
    pub fn requeue_lost(&mut self, id: &str, lost: &[String]) -> Result<Vec<String>> {
        if lost.is_empty() {
            return Ok(Vec::new());
        }
        let tx = self.conn.transaction()?;
        let mut ids: Vec<String> = lost.to_vec();
        let fit_seq: Option<i64> = tx
            .query_row(
                "SELECT stage_seq FROM tasks WHERE experiment_id = ?1 AND stage = 'fit'",
                [id],
                |r| r.get(0),
            )
            .optional()?;
        let lost_fit = lost.iter().any(|t| t.starts_with("fit-"));
        {
            let mut q = tx.prepare(
                "SELECT task_id FROM tasks WHERE experiment_id = ?1 AND state != 'pending'
                   AND (stage = 'report' OR (?2 AND stage_seq > ?3))",
            )?;
            let deps = q.query_map(params![id, lost_fit, fit_seq.unwrap_or(i64::MAX)], |r| {
                r.get::<_, String>(0)
            })?;
            for d in deps {
                let d = d?;
                if !ids.contains(&d) {
                    ids.push(d);
                }
            }
        }
        for t in &ids {
            tx.execute(
                "UPDATE tasks SET state = 'pending', lease_token = NULL, lease_worker = NULL, rows = NULL,
                                  checksum = NULL, games_done = 0, placed = 0, file_bytes = NULL, file_sha256 = NULL
                 WHERE experiment_id = ?1 AND task_id = ?2",
                params![id, t],
            )?;
        }
        tx.execute(
            "UPDATE experiments SET state = 'running', error = '', updated_ms = ?2 WHERE id = ?1 AND state = 'succeeded'",
            params![id, now_ms()],
        )?;
        tx.commit()?;
        Ok(ids)
    }

    /// A succeeded experiment whose seal (manifest, `_SUCCESS`) is gone runs
    /// again, so the sweeper seals it anew.
    pub fn unseal(&mut self, id: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE experiments SET state = 'running', updated_ms = ?2 WHERE id = ?1 AND state = 'succeeded'",
            params![id, now_ms()],
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

/// Adds the columns newer versions keep to a state file made by an older one.
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let have: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('tasks')")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for (col, ddl) in [
        ("file_bytes", "ALTER TABLE tasks ADD COLUMN file_bytes INTEGER"),
        ("file_sha256", "ALTER TABLE tasks ADD COLUMN file_sha256 TEXT"),
        // Tasks done before placement was tracked were checked by the old sweeper.
        (
            "placed",
            "ALTER TABLE tasks ADD COLUMN placed INTEGER NOT NULL DEFAULT 0; UPDATE tasks SET placed = 1 WHERE state = 'done'",
        ),
    ] {
        if !have.iter().any(|h| h == col) {
            conn.execute_batch(ddl)?;
        }
    }
    Ok(())
}
