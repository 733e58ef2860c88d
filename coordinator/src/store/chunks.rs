//! Chunks and cross-checks. A games task's finished ranges are recorded
//! with their checksums and workers: chunks committed with heartbeats
//! (their files let a later lease skip them) and the ranges a completion
//! played. When a games task completes, a seeded sample of its ranges
//! becomes check tasks that a different worker replays; a checksum that
//! differs marks the range's worker bad, and every games task it worked on
//! in that experiment is played again.

use jobs::layout::Stage;
use rusqlite::{OptionalExtension, Transaction, params};
use sha2::{Digest, Sha256};

use super::{Result, Store, TaskState, now_ms};

/// A finished range as a worker reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkIn {
    pub first_game: u64,
    pub games: u64,
    pub checksum: String,
    /// The chunk file relative to the results root (checked by the service
    /// before it gets here), or none for a range the partition holds.
    pub file: Option<String>,
}

/// Which worker played which games (for the report's per-worker residuals).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WorkerChunk {
    pub shard: u64,
    pub first_game: u64,
    pub games: u64,
    pub worker: String,
}

/// What a check task's completion found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    Passed,
    /// Two replays disagreed: a tie-break task decides.
    Disputed,
    /// The tie-break found these workers wrong; their tasks will be played again.
    Failed {
        worker: String,
        requeued: u64,
        /// What the service removes (relative to the results root) before
        /// the verdict commits: a training run's generations redone.
        remove: Vec<String>,
    },
    /// Not a check task.
    NotACheck,
}

/// While a check task waits for a worker other than the range's, for this
/// long; then any worker may take it (so a lone worker never waits forever).
/// A tie-break never goes to either disputant: it waits for a third worker.
const AVOID_MS: i64 = 120_000;

/// A training run's partition check waits this long instead: its
/// generation's fit waits for it, so a lone worker checks itself after
/// seconds, not minutes (other workers, idle once the generation's
/// partitions are played, take it before then).
const SELF_PLAY_AVOID_MS: i64 = 10_000;

/// Whether the range at (`shard`, `first_game`) of `experiment` is drawn
/// for a check: its SHA-256 read as a fraction below `fraction`.
pub(super) fn drawn(experiment: &str, shard: u64, first_game: u64, fraction: f64) -> bool {
    if fraction <= 0.0 {
        return false;
    }
    let h = Sha256::digest(format!("check\0{experiment}\0{shard}\0{first_game}").as_bytes());
    let x = u64::from_be_bytes(h[..8].try_into().expect("8 bytes")) as f64 / 2f64.powi(64);
    x < fraction
}

impl Store {
    /// Records `chunks` of the games task `task_id` (its shard `shard`,
    /// games `first..first + games`) played by `worker`: each must lie in
    /// the task; older records it overlaps are replaced (the games are
    /// counted once: the partition holds each game's row once). Returns
    /// how many were recorded, or why none were.
    pub(super) fn record_chunks(
        tx: &Transaction<'_>,
        exp: &str,
        (shard, first, games): (u64, u64, u64),
        worker: &str,
        chunks: &[ChunkIn],
    ) -> Result<std::result::Result<usize, String>> {
        for c in chunks {
            let end = c.first_game + c.games;
            if c.games == 0 || c.first_game < first || end > first + games {
                return Ok(Err(format!(
                    "chunk of games {}..{end} is not inside shard {shard}'s games {first}..{}",
                    c.first_game,
                    first + games
                )));
            }
            // The lease holder's ranges supersede older records they
            // overlap (a chunk file found missing or wrong and replayed).
            let gone = tx
                .prepare_cached(
                    "DELETE FROM chunks WHERE experiment_id = ?1 AND shard = ?2
                 AND first_game < ?4 AND first_game + games > ?3",
                )?
                .execute(params![exp, shard as i64, c.first_game as i64, end as i64])?;
            if gone > 0 {
                tracing::info!(%exp, shard, first = c.first_game, games = c.games, replaced = gone, "replayed range replaces older chunk records");
            }
        }
        for c in chunks {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO chunks (experiment_id, shard, first_game, games, checksum, file, worker_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                exp,
                shard as i64,
                c.first_game as i64,
                c.games as i64,
                c.checksum,
                c.file,
                worker
            ])?;
        }
        Ok(Ok(chunks.len()))
    }

    /// The chunks with files of a shard, for the lease that plays the rest.
    pub(super) fn committed_chunks(tx: &Transaction<'_>, exp: &str, shard: u64) -> Result<Vec<ChunkIn>> {
        Ok(tx
            .prepare_cached(
                "SELECT first_game, games, checksum, file FROM chunks
                 WHERE experiment_id = ?1 AND shard = ?2 AND file IS NOT NULL ORDER BY first_game",
            )?
            .query_map(params![exp, shard as i64], |r| {
                Ok(ChunkIn {
                    first_game: r.get::<_, i64>(0)? as u64,
                    games: r.get::<_, i64>(1)? as u64,
                    checksum: r.get(2)?,
                    file: r.get(3)?,
                })
            })?
            .collect::<std::result::Result<_, _>>()?)
    }

    /// A training run's self-play partition `shard` (games `first..first +
    /// games`) completed by `worker` with its file's SHA-256 `checksum`:
    /// one range, no chunk file (the partition is the file), replacing
    /// an earlier completion's.
    pub(super) fn record_partition(
        tx: &Transaction<'_>,
        exp: &str,
        (shard, first, games): (u64, u64, u64),
        worker: &str,
        checksum: &str,
    ) -> Result<()> {
        tx.prepare_cached("DELETE FROM chunks WHERE experiment_id = ?1 AND shard = ?2")?
            .execute(params![exp, shard as i64])?;
        tx.prepare_cached(
            "INSERT INTO chunks (experiment_id, shard, first_game, games, checksum, file, worker_id)
             VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6)",
        )?
        .execute(params![exp, shard as i64, first as i64, games as i64, checksum, worker])?;
        Ok(())
    }

    /// After task `shard` of `source` completed (a grid's games, or a
    /// training run's self-play partition): its ranges drawn for a check
    /// become check tasks, each avoiding the range's worker for a while (a
    /// lone worker then checks itself, which still catches a game that is
    /// not a pure function of its coordinates).
    pub(super) fn add_checks(tx: &Transaction<'_>, exp: &str, source: Stage, shard: u64, fraction: f64) -> Result<u64> {
        if fraction <= 0.0 {
            return Ok(0);
        }
        let ranges: Vec<(i64, i64, String, String)> = tx
            .prepare_cached(
                "SELECT first_game, games, checksum, worker_id FROM chunks WHERE experiment_id = ?1 AND shard = ?2",
            )?
            .query_map(params![exp, shard as i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<std::result::Result<_, _>>()?;
        if ranges.is_empty() {
            return Ok(0);
        }
        // The games task's own place in the stage: its checks are leased
        // next to it (a primary-key lookup, not a scan of the tasks).
        let (stage_seq, seq): (i64, i64) = tx
            .prepare_cached("SELECT stage_seq, seq FROM tasks WHERE experiment_id = ?1 AND task_id = ?2")?
            .query_row(params![exp, source.task_id(shard)], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let mut added = 0;
        for (first, games, checksum, worker) in ranges {
            if !drawn(exp, shard, first as u64, fraction) {
                continue;
            }
            tx.prepare_cached("INSERT OR IGNORE INTO stages (experiment_id, name, seq) VALUES (?1, ?2, ?3)")?
                .execute(params![exp, Stage::Check.name(), stage_seq])?;
            let task_id = Stage::check_task_id(shard, first as u64);
            let n = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO tasks (experiment_id, task_id, stage, stage_seq, seq, shard, first_game, games, state,
                                              avoid_until_ms, expected_checksum)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )?
                .execute(params![
                    exp,
                    task_id,
                    Stage::Check.name(),
                    stage_seq,
                    seq,
                    shard as i64,
                    first,
                    games,
                    TaskState::Pending,
                    now_ms() + if source == Stage::SelfPlay { SELF_PLAY_AVOID_MS } else { AVOID_MS },
                    checksum
                ])?;
            // A check already there keeps the workers it avoids.
            if n > 0 {
                super::avoid::avoid(tx, exp, &task_id, &[worker.as_str()])?;
            }
            added += n as u64;
        }
        Ok(added)
    }

    /// A check task's completion with `checksum` by `checker`. The same
    /// checksum: passed. Another: two workers disagree, and a third replay
    /// (a tie-break task that avoids both) decides: the worker it
    /// disagrees with is marked bad (both, if it agrees with neither), and
    /// every games task a bad worker played for the experiment is played
    /// again (its chunks forgotten, its unfinished checks dropped).
    pub(super) fn judge_check(
        tx: &Transaction<'_>,
        exp: &str,
        task_id: &str,
        checksum: &str,
        checker: &str,
    ) -> Result<CheckOutcome> {
        type Row = (String, Option<String>, i64, i64, i64, i64, Option<String>);
        let row: Option<Row> = tx
            .prepare_cached(
                "SELECT stage, expected_checksum, shard, first_game, games, seq, stats FROM tasks
                 WHERE experiment_id = ?1 AND task_id = ?2",
            )?
            .query_row(params![exp, task_id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })
            .optional()?;
        let Some((stage, Some(expected), shard, first, games, seq, disputed)) = row else {
            return Ok(CheckOutcome::NotACheck);
        };
        if Stage::parse(&stage) != Some(Stage::Check) {
            return Ok(CheckOutcome::NotACheck);
        }
        let original: String = tx
            .prepare_cached("SELECT worker_id FROM chunks WHERE experiment_id = ?1 AND shard = ?2 AND first_game = ?3")?
            .query_row(params![exp, shard, first], |r| r.get(0))
            .optional()?
            .unwrap_or_default();
        let bad: Vec<String> = match disputed.as_deref().and_then(|d| d.split_once('\t')) {
            None if expected == checksum => return Ok(CheckOutcome::Passed),
            None => {
                // Two workers disagree: a third decides.
                tx.prepare_cached("UPDATE tasks SET error = ?3 WHERE experiment_id = ?1 AND task_id = ?2")?
                    .execute(params![
                        exp,
                        task_id,
                        format!("disputed: {checker} got {checksum}, {original} {expected}")
                    ])?;
                let tiebreak = Stage::tiebreak_task_id(task_id);
                let n = tx
                    .prepare_cached(
                        "INSERT OR IGNORE INTO tasks (experiment_id, task_id, stage, stage_seq, seq, shard, first_game, games,
                                                  state, avoid_until_ms, expected_checksum, stats)
                     SELECT experiment_id, ?3, stage, stage_seq, ?4, shard, first_game, games, ?5, ?6, ?7, ?8
                     FROM tasks WHERE experiment_id = ?1 AND task_id = ?2",
                    )?
                    .execute(params![
                        exp,
                        task_id,
                        tiebreak,
                        seq,
                        TaskState::Pending,
                        // Never either of them: a disputant would only repeat itself.
                        i64::MAX,
                        expected,
                        format!("{checker}\t{checksum}")
                    ])?;
                if n > 0 {
                    super::avoid::avoid(tx, exp, &tiebreak, &[original.as_str(), checker])?;
                }
                return Ok(CheckOutcome::Disputed);
            }
            Some((first_checker, theirs)) => {
                let verdict = if checksum == expected {
                    vec![first_checker.to_string()]
                } else if checksum == theirs {
                    vec![original.clone()]
                } else {
                    vec![original.clone(), first_checker.to_string()]
                };
                if checksum != expected {
                    tx.prepare_cached("UPDATE tasks SET error = ?3 WHERE experiment_id = ?1 AND task_id = ?2")?
                        .execute(params![
                            exp,
                            task_id,
                            format!("{checker} got {checksum}; bad: {}", verdict.join(", "))
                        ])?;
                }
                verdict
            }
        };
        let partition = Self::partition_of(tx, exp, shard as u64)?;
        let why = |worker: &str| match partition {
            Some((g, k)) => {
                format!("generation {g}'s self-play partition {k}: three replays, {worker}'s the odd one out")
            }
            None => format!(
                "games {first}..{} of shard {shard}: three replays, {worker}'s the odd one out",
                first + games
            ),
        };
        let mut redo = super::verdict::Redo::default();
        for worker in bad.iter().filter(|w| !w.is_empty()) {
            tx.prepare_cached("INSERT OR IGNORE INTO bad_workers (worker_id, experiment_id, task_id, reason, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)")?
.execute(
                params![worker, exp, task_id, why(worker), now_ms()],
            )?;
            redo.add(Self::redo_work_of(tx, exp, worker, task_id, partition.is_some())?);
        }
        Ok(CheckOutcome::Failed {
            worker: bad.join(", "),
            requeued: redo.requeued,
            remove: redo.remove,
        })
    }

    /// Whether a cross-check found `worker` wrong.
    pub(super) fn is_bad(tx: &rusqlite::Connection, worker: &str) -> Result<bool> {
        Ok(tx
            .prepare_cached("SELECT 1 FROM bad_workers WHERE worker_id = ?1")?
            .query_row(params![worker], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Which worker played which games of `exp` (every range recorded).
    pub fn worker_chunks(&self, exp: &str) -> Result<Vec<WorkerChunk>> {
        Ok(self
            .conn
            .prepare("SELECT shard, first_game, games, worker_id FROM chunks WHERE experiment_id = ?1 ORDER BY shard, first_game")?
            .query_map(params![exp], |r| {
                Ok(WorkerChunk {
                    shard: r.get::<_, i64>(0)? as u64,
                    first_game: r.get::<_, i64>(1)? as u64,
                    games: r.get::<_, i64>(2)? as u64,
                    worker: r.get(3)?,
                })
            })?
            .collect::<std::result::Result<_, _>>()?)
    }
}

impl Store {
    /// Every worker a cross-check found wrong.
    pub fn bad_workers(&self) -> Result<Vec<String>> {
        Ok(self
            .conn
            .prepare("SELECT worker_id FROM bad_workers ORDER BY worker_id")?
            .query_map([], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?)
    }

    /// An experiment's bad workers and check counts: replays that matched
    /// the committed checksum, and replays that did not (disputes, and
    /// tie-breaks that found the committing worker wrong).
    pub(super) fn checks_of(conn: &rusqlite::Connection, exp: &str) -> Result<(Vec<String>, u64, u64)> {
        let bad = conn
            .prepare("SELECT worker_id FROM bad_workers WHERE experiment_id = ?1 ORDER BY worker_id")?
            .query_map(params![exp], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        let (passed, failed): (i64, i64) = conn
            .prepare_cached(
                "SELECT COALESCE(SUM(error IS NULL), 0), COALESCE(SUM(error IS NOT NULL), 0)
             FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND state = ?3",
            )?
            .query_row(params![exp, Stage::Check.name(), TaskState::Done], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        Ok((bad, passed as u64, failed as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::complete_as;
    use super::super::{CompleteOutcome, Store};
    use jobs::layout::Stage;

    /// A spec whose first stage is its games (no training, no fit).
    const SPEC: &str = include_str!("../../../jobs/specs/speed-sprt.toml");

    /// Issue 41: a check avoids exactly the worker that played its range.
    /// Before, membership was a suffix match (`instr(avoid, id || '\n')`),
    /// so the check of a range `hw1` played was refused to `w1` for the
    /// whole avoidance window. Ids that are suffixes and prefixes of each
    /// other: each is avoided only by its own check (avoid.rs has more).
    #[test]
    fn a_check_avoids_only_the_worker_that_played_its_range() {
        for (played, other) in [("hw1", "w1"), ("w1", "hw1"), ("w1", "w"), ("w", "w1"), ("a\tb", "b")] {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
            let spec = jobs::Spec::from_toml(SPEC).unwrap();
            store.submit(&jobs::Job::Grid(spec.clone()), SPEC).unwrap();
            let first = store.lease(played, 60_000, None).unwrap().unwrap();
            assert!(matches!(
                complete_as(&mut store, played, &first),
                CompleteOutcome::Accepted { .. }
            ));
            // The player itself gets the next games task, never the check.
            let own = store.lease(played, 60_000, None).unwrap().unwrap();
            assert_eq!(own.stage, Stage::Games, "{played}: {}", own.task_id);
            // Any other worker gets the check first (it comes in the games task's place).
            let check = store.lease(other, 60_000, None).unwrap().unwrap();
            assert_eq!(check.stage, Stage::Check, "{other} after {played}: {}", check.task_id);
        }
    }
}
