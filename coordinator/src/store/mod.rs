//! The coordinator's durable state: experiments, stages and tasks in SQLite
//! (a real file in WAL mode). Every change is one transaction, so a crash at
//! any point leaves a consistent state that a restart resumes.
//!
//! This module: the schema and its migrations, the row types and opening
//! the file; `experiments`: submission, listing, cancel, requeueing lost
//! tasks, sealing; `leasing`: leases, completions, failures; `beats`:
//! heartbeats, kept in memory and written together; `avoid`: the workers
//! a check task avoids; `chunks`: ranges and cross-checks; `verdict`: what
//! a bad worker's work becomes.

mod avoid;
mod beats;
mod checkpoint;
mod chunks;
mod experiments;
mod leasing;
mod pick;
mod sprt;
mod verdict;
mod view;

pub use chunks::{CheckOutcome, ChunkIn};
pub use leasing::{Completed, LeaseRef, Reporter};

/// Column `i` of a row as a [`Stage`]: a name no stage has is an error
/// (a state written by another version), never a silent skip.
pub(crate) fn stage_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Stage> {
    let name: String = r.get(i)?;
    Stage::parse(&name).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            format!("{name:?} is not a stage of this version").into(),
        )
    })
}

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use jobs::layout::Stage;
use rusqlite::Connection;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

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

/// An experiment's state, stored as its name in `experiments.state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpState {
    /// Tasks are being leased (or the experiment waits for its seal).
    Running,
    /// Every task is done and placed, and the output is sealed.
    Succeeded,
    /// A task failed too often; resubmitting resumes it.
    Failed,
    /// Cancelled by a client; resubmitting resumes it.
    Cancelled,
}

impl ExpState {
    /// The name stored in the database and shown to clients.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpState::Running => "running",
            ExpState::Succeeded => "succeeded",
            ExpState::Failed => "failed",
            ExpState::Cancelled => "cancelled",
        }
    }
    fn parse(s: &str) -> Option<ExpState> {
        [
            ExpState::Running,
            ExpState::Succeeded,
            ExpState::Failed,
            ExpState::Cancelled,
        ]
        .into_iter()
        .find(|e| e.as_str() == s)
    }
}

/// A task's state, stored as its name in `tasks.state`: the only place these
/// names are spelled (SQL statements bind them as parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Waiting for a worker (new, released, requeued or resumed).
    Pending,
    /// Held by a worker until its lease expires.
    Leased,
    /// Completed; its file was checked (and is `placed` once under its final name).
    Done,
    /// Failed too often; its experiment failed with it.
    Failed,
}

impl TaskState {
    /// Every state, in the order the lifecycle visits them.
    pub const ALL: [TaskState; 4] = [
        TaskState::Pending,
        TaskState::Leased,
        TaskState::Done,
        TaskState::Failed,
    ];

    /// The name stored in the database and shown in metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Leased => "leased",
            TaskState::Done => "done",
            TaskState::Failed => "failed",
        }
    }
    fn parse(s: &str) -> Option<TaskState> {
        TaskState::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

macro_rules! stored_as_name {
    ($t:ty, $what:literal) => {
        impl ToSql for $t {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::Borrowed(ValueRef::Text(self.as_str().as_bytes())))
            }
        }
        impl FromSql for $t {
            fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
                let s = v.as_str()?;
                <$t>::parse(s).ok_or_else(|| FromSqlError::Other(format!("unknown {} {s:?}", $what).into()))
            }
        }
    };
}
stored_as_name!(ExpState, "experiment state");
stored_as_name!(TaskState, "task state");

#[derive(Clone, Debug)]
pub struct StageRow {
    pub name: String,
    pub total: u64,
    pub done: u64,
    pub running: u64,
    pub failed: u64,
    /// The latest time (Unix ms) until which a pending task of the stage
    /// waits for a worker other than the one that played its games (a
    /// cross-check); `None` when none waits.
    pub waiting_until_ms: Option<i64>,
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
    /// Workers a cross-check of this experiment found wrong.
    pub bad_workers: Vec<String>,
    /// Check tasks done that matched, and that did not.
    pub checks_passed: u64,
    pub checks_failed: u64,
}

#[derive(Clone, Debug)]
pub struct LeasedTask {
    pub experiment_id: String,
    pub task_id: String,
    pub stage: Stage,
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
    /// Games tasks: the chunks committed by earlier leases (with files).
    pub chunks: Vec<ChunkIn>,
    /// Check tasks: the checksum the range had.
    pub expected_checksum: String,
}

/// A done task whose partition the sweeper checks before the experiment is finished.
#[derive(Clone, Debug)]
pub struct DoneTask {
    pub task_id: String,
    pub stage: Stage,
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
        /// Chunks recorded.
        recorded: usize,
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
    pub stage: Stage,
    pub shard: u64,
    pub games: u64,
    pub output: String,
    /// The experiment's spec (what the completion must have written).
    pub spec_toml: String,
}

#[derive(Debug)]
pub enum CompleteOutcome {
    Accepted {
        final_file: String,
        /// A check task's verdict.
        check: Option<CheckOutcome>,
        /// Check tasks drawn from a games task's ranges.
        checks_added: u64,
    },
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
    /// Each running experiment's `[stop] sprt` (`None`: it has none), read
    /// from its spec once; and the test's walk over its done shards so
    /// far. One entry per experiment, never per game or task.
    stops: std::collections::HashMap<String, Option<jobs::Sprt>>,
    walks: std::collections::HashMap<String, jobs::sprt::Walk>,
    /// Heartbeats answered but not yet written (one a leased task).
    beats: beats::Beats,
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
    stats TEXT,
    -- Until when the task waits for a worker not in its avoid list
    -- (`task_avoid`); then any worker may take it.
    avoid_until_ms INTEGER,
    expected_checksum TEXT,
    PRIMARY KEY (experiment_id, task_id)
);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state, experiment_id, stage_seq, seq);
-- Leases, heartbeats and completions look tasks up by index ranges, never by
-- a scan of an experiment's tasks (`muggins bench coordinator`): the first
-- stage with a task not done and placed (placed is set only on done tasks),
-- the lease that expired first, and a lease by its token.
CREATE INDEX IF NOT EXISTS tasks_open ON tasks (experiment_id, placed, stage_seq);
CREATE INDEX IF NOT EXISTS tasks_by_expiry ON tasks (state, experiment_id, stage_seq, lease_expires_ms);
CREATE INDEX IF NOT EXISTS tasks_by_token ON tasks (lease_token);
-- The sweeper's tick: the done tasks not yet in place, in order, without a
-- pass over the experiment's done ones (10,000s, under the store's lock).
CREATE INDEX IF NOT EXISTS tasks_to_place ON tasks (state, experiment_id, placed, stage_seq, seq);
-- An experiment's check tasks by state (status counts them).
CREATE INDEX IF NOT EXISTS tasks_by_stage ON tasks (experiment_id, stage, state);
-- The workers a task avoids until its `avoid_until_ms`, one row each
-- (store/avoid.rs): a check task its range's worker, a tie-break both
-- disputants. A lease asks for its worker's row by the primary key.
CREATE TABLE IF NOT EXISTS task_avoid (
    experiment_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    worker TEXT NOT NULL,
    PRIMARY KEY (experiment_id, task_id, worker),
    FOREIGN KEY (experiment_id, task_id) REFERENCES tasks (experiment_id, task_id) ON DELETE CASCADE
) WITHOUT ROWID;
-- The finished ranges of games tasks with their checksums and workers:
-- committed chunks (with a file) and the ranges a completion played.
CREATE TABLE IF NOT EXISTS chunks (
    experiment_id TEXT NOT NULL,
    shard INTEGER NOT NULL,
    first_game INTEGER NOT NULL,
    games INTEGER NOT NULL,
    checksum TEXT NOT NULL,
    file TEXT,
    worker_id TEXT NOT NULL,
    PRIMARY KEY (experiment_id, shard, first_game)
);
-- Workers a cross-check found wrong: they lease nothing more.
CREATE TABLE IF NOT EXISTS bad_workers (
    worker_id TEXT PRIMARY KEY,
    experiment_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    at_ms INTEGER NOT NULL
);
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

/// Prepared statements a connection keeps (the store has fewer distinct ones).
const STATEMENTS_KEPT: usize = 128;

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
        // Every statement of the lease, heartbeat and completion paths is
        // prepared once and kept (parsing SQL was a tenth of a loaded
        // coordinator's time).
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        Ok(Store {
            conn,
            stops: Default::default(),
            walks: Default::default(),
            beats: Default::default(),
        })
    }

    /// A second, read-only connection to the state file that [`Self::open`]
    /// made: the web view and the metrics endpoint read through it, so that a
    /// page never waits on (or holds up) the lock that leases take. In WAL
    /// mode a reader sees the last committed state and blocks no writer.
    pub fn open_reader(path: &Path) -> Result<Store> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let explain = |e: rusqlite::Error| StoreError::Open(format!("state file {} (read-only): {e}", path.display()));
        let conn = Connection::open_with_flags(path, flags).map_err(explain)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(explain)?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        Ok(Store {
            conn,
            stops: Default::default(),
            walks: Default::default(),
            beats: Default::default(),
        })
    }

    /// The journal mode in force (for tests: "wal").
    pub fn journal_mode(&self) -> Result<String> {
        Ok(self
            .conn
            .prepare_cached("PRAGMA journal_mode")?
            .query_row([], |r| r.get(0))?)
    }
}

/// Brings a state file made by an older version up to this one's schema:
/// the columns it lacks are added, and its avoid lists become rows of
/// `task_avoid` (avoid.rs).
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let have: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('tasks')")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for (col, ddl) in [
        ("file_bytes", "ALTER TABLE tasks ADD COLUMN file_bytes INTEGER"),
        ("file_sha256", "ALTER TABLE tasks ADD COLUMN file_sha256 TEXT"),
        (
            "placed",
            "ALTER TABLE tasks ADD COLUMN placed INTEGER NOT NULL DEFAULT 0",
        ),
        ("stats", "ALTER TABLE tasks ADD COLUMN stats TEXT"),
        ("avoid_until_ms", "ALTER TABLE tasks ADD COLUMN avoid_until_ms INTEGER"),
        (
            "expected_checksum",
            "ALTER TABLE tasks ADD COLUMN expected_checksum TEXT",
        ),
    ] {
        if !have.iter().any(|h| h == col) {
            conn.execute_batch(ddl)?;
            if col == "placed" {
                // Tasks done before placement was tracked were checked by the old sweeper.
                conn.prepare_cached("UPDATE tasks SET placed = 1 WHERE state = ?1")?
                    .execute([TaskState::Done])?;
            }
        }
    }
    avoid::migrate_lists(conn, &have)
}

/// What the store's tests share.
#[cfg(test)]
pub(super) mod testing {
    use super::{ChunkIn, CompleteOutcome, Completed, LeaseRef, LeasedTask, Reporter, Store};
    use jobs::layout::Stage;

    /// Completes `t` as reported `by` a worker, with a stand-in file and
    /// `stats` (an SPRT shard's pairs).
    pub(in crate::store) fn complete_by(
        store: &mut Store,
        t: &LeasedTask,
        by: &Reporter<'_>,
        stats: &str,
    ) -> CompleteOutcome {
        let done = Completed {
            rows: t.games,
            checksum: "0",
            temp_file: "",
            final_file: "f",
            file: (1, "0"),
            placed: false,
            stats: Some(stats),
        };
        let lease = LeaseRef {
            task_id: &t.task_id,
            token: &t.lease_token,
        };
        store.complete(lease, &done, by).unwrap()
    }

    /// Completes `t` as `worker`: a games task as one chunk (checksum "c",
    /// every range drawn for a check), a check task with checksum "0".
    pub(in crate::store) fn complete_as(store: &mut Store, worker: &str, t: &LeasedTask) -> CompleteOutcome {
        let chunks = [ChunkIn {
            first_game: t.first_game,
            games: t.games,
            checksum: "c".into(),
            file: None,
        }];
        let by = Reporter {
            worker,
            chunks: if t.stage == Stage::Games { &chunks } else { &[] },
            check_fraction: 1.0,
        };
        complete_by(store, t, &by, r#"{"pairs": []}"#)
    }
}
