//! What a cross-check's verdict does to a bad worker's work (chunks.rs
//! judges): a grid's games tasks it played are played again, their chunks
//! forgotten and their unfinished checks dropped; in a training run every
//! generation from the first it touched (a self-play partition, or a
//! generation's fit, gate and anchors) is redone, since each generation
//! trains on the networks the ones before it made. The service removes
//! those generations' files before the verdict commits ([`Redo::remove`],
//! `Store::complete_then`).

use jobs::layout::{FIRST_FILE, Stage, generation_dir, self_play_of, self_play_shard};
use rusqlite::{OptionalExtension, Transaction, params};

use super::{Result, Store, TaskState};

/// The work a verdict sends back.
#[derive(Debug, Default)]
pub(super) struct Redo {
    /// Tasks sent back to pending.
    pub(super) requeued: u64,
    /// Files and directories to remove, relative to the results root.
    pub(super) remove: Vec<String>,
}

impl Redo {
    pub(super) fn add(&mut self, other: Redo) {
        self.requeued += other.requeued;
        for r in other.remove {
            if !self.remove.contains(&r) {
                self.remove.push(r);
            }
        }
    }
}

impl Store {
    /// Generation and partition of `shard` when it is a training run's
    /// self-play partition (its task is there), else `None`.
    pub(super) fn partition_of(tx: &Transaction<'_>, exp: &str, shard: u64) -> Result<Option<(u32, u64)>> {
        let found = tx
            .prepare_cached("SELECT 1 FROM tasks WHERE experiment_id = ?1 AND task_id = ?2")?
            .query_row(params![exp, Stage::SelfPlay.task_id(shard)], |_| Ok(()))
            .optional()?;
        Ok(found.map(|()| self_play_of(shard)))
    }

    /// Sends back what bad `worker` did for `exp`, a training run's if
    /// `training` (its checks are of partitions: [`Self::partition_of`]);
    /// `verdict` is the check task deciding, kept.
    pub(super) fn redo_work_of(
        tx: &Transaction<'_>,
        exp: &str,
        worker: &str,
        verdict: &str,
        training: bool,
    ) -> Result<Redo> {
        let shards: Vec<i64> = tx
            .prepare("SELECT DISTINCT shard FROM chunks WHERE experiment_id = ?1 AND worker_id = ?2")?
            .query_map(params![exp, worker], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        if training {
            return Self::redo_generations(tx, exp, worker, verdict, &shards);
        }
        for &s in &shards {
            tx.prepare_cached(
                "UPDATE tasks SET state = ?4, placed = 0, lease_token = NULL, lease_worker = NULL, games_done = 0,
                                  rows = NULL, checksum = NULL
                 WHERE experiment_id = ?1 AND stage = ?2 AND shard = ?3",
            )?
            .execute(params![exp, Stage::Games.name(), s, TaskState::Pending])?;
            tx.prepare_cached("DELETE FROM chunks WHERE experiment_id = ?1 AND shard = ?2")?
                .execute(params![exp, s])?;
            tx.prepare_cached(
                "DELETE FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND shard = ?3 AND state != ?4 AND task_id != ?5",
            )?
            .execute(params![exp, Stage::Check.name(), s, TaskState::Done, verdict])?;
        }
        Ok(Redo {
            requeued: shards.len() as u64,
            remove: Vec::new(),
        })
    }

    /// A training run's bad worker: every generation from the first it
    /// played a partition of (`shards`) or completed is redone: its
    /// self-play and generation tasks and all after them pending again,
    /// their ranges and unfinished checks forgotten, their directories
    /// (and, from the first generation, `first.json`) to be removed.
    fn redo_generations(tx: &Transaction<'_>, exp: &str, worker: &str, verdict: &str, shards: &[i64]) -> Result<Redo> {
        let played = shards.iter().map(|&s| self_play_of(s as u64).0).min();
        let completed: Option<i64> = tx
            .prepare_cached(
                "SELECT MIN(shard) FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND state = ?3 AND lease_worker = ?4",
            )?
            .query_row(params![exp, Stage::Generation.name(), TaskState::Done, worker], |r| r.get(0))?;
        let Some(from) = played.into_iter().chain(completed.map(|g| g as u32)).min() else {
            return Ok(Redo::default());
        };
        // The turn of generation `from`'s self-play: it and every later one.
        let seq: i64 = tx
            .prepare_cached("SELECT stage_seq FROM tasks WHERE experiment_id = ?1 AND task_id = ?2")?
            .query_row(params![exp, Stage::SelfPlay.task_id(self_play_shard(from, 0))], |r| {
                r.get(0)
            })?;
        let requeued = tx
            .prepare_cached(
                "UPDATE tasks SET state = ?5, placed = 0, lease_token = NULL, lease_worker = NULL, games_done = 0,
                                  rows = NULL, checksum = NULL, error = NULL
                 WHERE experiment_id = ?1 AND stage_seq >= ?2 AND stage IN (?3, ?4) AND state != ?5",
            )?
            .execute(params![
                exp,
                seq,
                Stage::SelfPlay.name(),
                Stage::Generation.name(),
                TaskState::Pending
            ])?;
        tx.prepare_cached("DELETE FROM chunks WHERE experiment_id = ?1 AND shard >= ?2")?
            .execute(params![exp, self_play_shard(from, 0) as i64])?;
        tx.prepare_cached(
            "DELETE FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND stage_seq >= ?3 AND state != ?4 AND task_id != ?5",
        )?
        .execute(params![exp, Stage::Check.name(), seq, TaskState::Done, verdict])?;
        let (output, last): (String, Option<i64>) = tx
            .prepare_cached(
                "SELECT e.output, (SELECT MAX(shard) FROM tasks t WHERE t.experiment_id = e.id AND t.stage = ?2)
                 FROM experiments e WHERE e.id = ?1",
            )?
            .query_row(params![exp, Stage::Generation.name()], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let mut remove: Vec<String> = (from..=last.unwrap_or(0) as u32)
            .map(|g| format!("{output}/{}", generation_dir(g)))
            .collect();
        if from == 1 {
            remove.push(format!("{output}/{FIRST_FILE}"));
        }
        Ok(Redo {
            requeued: requeued as u64,
            remove,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Store, TaskState};
    use jobs::layout::{Stage, self_play_shard};
    use rusqlite::params;

    /// 4 generations of 10 partitions.
    const SPEC: &str = include_str!("../../../jobs/specs/train-block-smoke.toml");

    /// A store with the smoke spec's generations `1..=done` done, their
    /// partitions played by "good" but partition 3 of generation
    /// `bad_gen` by "bad", and the generation tasks completed by `fitter`.
    fn store_with(done: u32, bad_gen: u32, fitter: &str) -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let job = jobs::Job::from_toml(SPEC).unwrap();
        let (id, _) = store.submit(&job, SPEC).unwrap();
        for g in 1..=done {
            for k in 0..10 {
                let worker = if g == bad_gen && k == 3 { "bad" } else { "good" };
                let shard = self_play_shard(g, k) as i64;
                store
                    .conn
                    .execute(
                        "INSERT INTO chunks (experiment_id, shard, first_game, games, checksum, file, worker_id)
                         VALUES (?1, ?2, 0, 500, 'h', NULL, ?3)",
                        params![id, shard, worker],
                    )
                    .unwrap();
            }
            store
                .conn
                .execute(
                    "UPDATE tasks SET state = ?2, placed = 1, lease_worker = CASE stage WHEN ?5 THEN ?4 ELSE 'good' END
                     WHERE experiment_id = ?1 AND ((stage = ?5 AND shard = ?3) OR (stage = ?6 AND shard / 1000000 = ?3))",
                    params![
                        id,
                        TaskState::Done,
                        g,
                        fitter,
                        Stage::Generation.name(),
                        Stage::SelfPlay.name()
                    ],
                )
                .unwrap();
        }
        (dir, store, id)
    }

    fn states(store: &Store, id: &str, stage: Stage) -> Vec<(i64, TaskState)> {
        store
            .conn
            .prepare("SELECT shard, state FROM tasks WHERE experiment_id = ?1 AND stage = ?2 ORDER BY shard")
            .unwrap()
            .query_map(params![id, stage.name()], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// A completed partition is a range with its file's hash; its check
    /// goes to another worker first, for 10 s (the fit waits for it), with
    /// the hash to compare; a replay with another hash is a dispute.
    #[test]
    fn a_partitions_check_goes_to_another_worker_first_and_compares_the_files_hash() {
        use super::super::{CheckOutcome, CompleteOutcome, Completed, LeaseRef, Reporter, now_ms};
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let job = jobs::Job::from_toml(SPEC).unwrap();
        store.submit(&job, SPEC).unwrap();
        let complete = |store: &mut Store, worker: &str, t: &super::super::LeasedTask, hash: &str| {
            let done = Completed {
                rows: t.games,
                checksum: hash,
                temp_file: "",
                final_file: "f",
                file: (1, hash),
                placed: true,
                stats: None,
            };
            let by = Reporter {
                worker,
                chunks: &[],
                check_fraction: 1.0,
            };
            let lease = LeaseRef {
                task_id: &t.task_id,
                token: &t.lease_token,
            };
            store.complete(lease, &done, &by).unwrap()
        };
        let first = store.lease("w", 60_000, None).unwrap().unwrap();
        assert_eq!(first.stage, Stage::SelfPlay);
        let before = now_ms();
        assert!(matches!(
            complete(&mut store, "w", &first, "h"),
            CompleteOutcome::Accepted { checks_added: 1, .. }
        ));
        let until: i64 = store
            .conn
            .query_row("SELECT avoid_until_ms FROM tasks WHERE stage = 'check'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert!((before + 9_000..=now_ms() + 10_000).contains(&until), "{until}");
        // Its own worker gets the next partition; another gets the check.
        assert_eq!(store.lease("w", 60_000, None).unwrap().unwrap().stage, Stage::SelfPlay);
        let check = store.lease("v", 60_000, None).unwrap().unwrap();
        assert_eq!(check.stage, Stage::Check);
        assert_eq!((check.shard, check.games), (first.shard, first.games));
        assert_eq!(check.expected_checksum, "h");
        assert!(matches!(
            complete(&mut store, "v", &check, "other"),
            CompleteOutcome::Accepted {
                check: Some(CheckOutcome::Disputed),
                ..
            }
        ));
    }

    #[test]
    fn a_bad_workers_partition_redoes_its_generation_and_every_one_after() {
        let (_dir, mut store, id) = store_with(3, 2, "good");
        let tx = store.conn.transaction().unwrap();
        let redo = Store::redo_work_of(&tx, &id, "bad", "check-x", true).unwrap();
        tx.commit().unwrap();
        // Generations 2 and 3's 2 x 11 tasks, done before, are pending again;
        // generation 1 stays done, and the 4th was pending already.
        assert_eq!(redo.requeued, 22);
        assert_eq!(
            redo.remove,
            [
                "train-block-smoke/gen-002",
                "train-block-smoke/gen-003",
                "train-block-smoke/gen-004"
            ]
        );
        let generations = states(&store, &id, Stage::Generation);
        assert_eq!(
            generations.iter().map(|(_, s)| *s).collect::<Vec<_>>(),
            [
                TaskState::Done,
                TaskState::Pending,
                TaskState::Pending,
                TaskState::Pending
            ]
        );
        for (shard, state) in states(&store, &id, Stage::SelfPlay) {
            let want = if shard < 2_000_000 {
                TaskState::Done
            } else {
                TaskState::Pending
            };
            assert_eq!(state, want, "partition {shard}");
        }
        // Generation 1's ranges are kept (their checks would still compare them), the rest forgotten.
        let ranges: i64 = store
            .conn
            .query_row("SELECT COUNT(*) FROM chunks WHERE experiment_id = ?1", [&id], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(ranges, 10);
    }

    #[test]
    fn a_bad_worker_that_fitted_the_first_generation_redoes_the_whole_run() {
        // No partition of its own, but generation 1's fit, gate and anchors.
        let (_dir, mut store, id) = store_with(2, 0, "bad");
        let tx = store.conn.transaction().unwrap();
        let redo = Store::redo_work_of(&tx, &id, "bad", "check-x", true).unwrap();
        tx.commit().unwrap();
        assert_eq!(redo.requeued, 22);
        assert!(redo.remove.contains(&"train-block-smoke/gen-001".to_string()));
        assert!(redo.remove.contains(&"train-block-smoke/first.json".to_string()));
        assert!(
            states(&store, &id, Stage::SelfPlay)
                .iter()
                .all(|(_, s)| *s == TaskState::Pending)
        );
        // A worker that did nothing for the run sends nothing back.
        let tx = store.conn.transaction().unwrap();
        let none = Store::redo_work_of(&tx, &id, "stranger", "check-x", true).unwrap();
        assert_eq!((none.requeued, none.remove.len()), (0, 0));
    }
}
