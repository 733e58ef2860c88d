//! `[stop] sprt` in the store: the lease window that keeps workers within
//! a task of the first shard not done, the test walked over done shards
//! (each experiment's walk kept, so each shard is read once) and the games
//! it makes unnecessary dropped.

use jobs::layout::Stage;
use rusqlite::{Transaction, params};

use super::{Result, Store, TaskState, now_ms};

impl Store {
    /// `[stop] sprt`: the last games shard a lease may take now. Shards are
    /// leased in order and no further than the leases in flight past the
    /// first shard not done (`F + L`), so when the test decides at most one
    /// task per worker has been played past the stopping point (a worker
    /// that ran ahead waits for the shards before it).
    pub(super) fn stop_window(tx: &Transaction<'_>, id: &str, now: i64) -> Result<i64> {
        let games = Stage::Games.name();
        let first: Option<i64> = tx
            .prepare_cached("SELECT MIN(shard) FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND state != ?3")?
            .query_row(params![id, games, TaskState::Done], |r| r.get(0))?;
        let Some(first) = first else { return Ok(i64::MAX) };
        let leased: i64 = tx.prepare_cached("SELECT COUNT(*) FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND state = ?3 AND lease_expires_ms >= ?4")?
.query_row(
            params![id, games, TaskState::Leased, now],
            |r| r.get(0),
        )?;
        Ok(first + leased)
    }

    /// Why a completion or heartbeat names a lease this coordinator does
    /// not hold: the SPRT's stop when it dropped the task (expected, said
    /// as such), else a stale lease.
    pub(super) fn stale_reason(&self, task_id: &str) -> String {
        self.stopped_by_sprt(task_id).unwrap_or_else(|| {
            format!(
                "stale lease: task {task_id} is not leased with this token (it expired and was leased again, or is \
                 finished)"
            )
        })
    }

    /// Why a games task this coordinator no longer has is gone, when an
    /// SPRT that decided before its shard dropped it.
    pub(super) fn stopped_by_sprt(&self, task_id: &str) -> Option<String> {
        if Stage::of_task_id(task_id) != Some(Stage::Games) {
            return None;
        }
        let shard: u64 = task_id.rsplit_once('-')?.1.parse().ok()?;
        self.walks.iter().find_map(|(id, w)| {
            let k = w.decided_at()?;
            (k < shard).then(|| {
                format!(
                    "{}: the SPRT of experiment {id} decided ({}) in shard {k}, so task {task_id}'s games \
                     are not needed",
                    jobs::sprt::STOPPED,
                    w.verdict.words()
                )
            })
        })
    }

    /// `[stop] sprt`: walks the games tasks done in shard order (up to the
    /// first one not done), pair by pair, through the test; once it
    /// decides in shard `k`, the games tasks after `k` are removed, whatever
    /// their state, and the experiment's games are those kept. Returns the
    /// shard and the files of removed tasks that were done (to delete), or
    /// `None` while the test has not decided. The walk so far is kept per
    /// experiment, so each shard is read once; deciding again changes
    /// nothing.
    pub fn sprt_stop(&mut self, id: &str, sprt: &jobs::Sprt) -> Result<Option<(u64, Vec<String>)>> {
        let tx = self.conn.transaction()?;
        let games = Stage::Games.name();
        let walk = self
            .walks
            .entry(id.to_string())
            .or_insert_with(|| jobs::sprt::Walk::untraced(*sprt));
        if walk.verdict == jobs::sprt::Verdict::Undecided {
            let mut q = tx.prepare_cached(
                "SELECT state, stats FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND shard >= ?3 ORDER BY shard",
            )?;
            let mut rows = q.query(params![id, games, walk.shards as i64])?;
            while let Some(r) = rows.next()? {
                let (state, stats): (TaskState, Option<String>) = (r.get(0)?, r.get(1)?);
                let pairs = match state {
                    TaskState::Done => stats.and_then(|t| serde_json::from_str::<jobs::sprt::ShardPairs>(&t).ok()),
                    _ => None,
                };
                let Some(pairs) = pairs else { break };
                if walk.step(&pairs) != jobs::sprt::Verdict::Undecided {
                    break;
                }
            }
        }
        let Some(k) = walk.decided_at() else {
            return Ok(None);
        };
        let files: Vec<String> = tx
            .prepare_cached(
                "SELECT temp_file, final_file FROM tasks WHERE experiment_id = ?1 AND stage = ?2 AND shard > ?3 AND state = ?4",
            )?
            .query_map(params![id, games, k as i64, TaskState::Done], |r| {
                Ok([r.get::<_, Option<String>>(0)?, r.get::<_, Option<String>>(1)?])
            })?
            .collect::<std::result::Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        tx.prepare_cached("DELETE FROM tasks WHERE experiment_id = ?1 AND stage IN (?2, ?4) AND shard > ?3")?
            .execute(params![id, games, k as i64, Stage::Check.name()])?;
        tx.prepare_cached("DELETE FROM chunks WHERE experiment_id = ?1 AND shard > ?2")?
            .execute(params![id, k as i64])?;
        tx.prepare_cached(
            "UPDATE experiments SET games_total =
                (SELECT COALESCE(SUM(games), 0) FROM tasks WHERE experiment_id = ?1 AND stage = ?2), updated_ms = ?3
             WHERE id = ?1",
        )?
        .execute(params![id, games, now_ms()])?;
        tx.commit()?;
        Ok(Some((k, files)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::complete_by;
    use super::super::{CompleteOutcome, FailOutcome, LeasedTask, Reporter, Store};

    /// The shipped SPRT spec (32-game shards).
    const SPEC: &str = include_str!("../../../jobs/specs/speed-sprt.toml");

    fn complete(store: &mut Store, t: &LeasedTask, stats: &str) -> CompleteOutcome {
        let by = Reporter {
            worker: "w",
            chunks: &[],
            check_fraction: 0.0,
        };
        complete_by(store, t, &by, stats)
    }

    /// A task the SPRT dropped while a worker held it is refused with the
    /// SPRT's reason, whether the worker completes or gives it back: the
    /// worker logs it as expected, not as a stale lease.
    #[test]
    fn a_task_the_sprt_dropped_is_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let spec = jobs::Spec::from_toml(SPEC).unwrap();
        let sprt = spec.stop.unwrap();
        let (id, _) = store.submit(&jobs::Job::Grid(spec.clone()), SPEC).unwrap();
        // Every pair won from both seatings: the test accepts H1 soon.
        let wins = serde_json::json!({ "pairs": vec![[40, 40]; 16] }).to_string();
        let mut held = store.lease("w", 60_000, None).unwrap().unwrap();
        let dropped = loop {
            let next = store.lease("w", 60_000, None).unwrap().expect("a next games task");
            assert!(matches!(
                complete(&mut store, &held, &wins),
                CompleteOutcome::Accepted { .. }
            ));
            if store.sprt_stop(&id, &sprt).unwrap().is_some() {
                break next;
            }
            held = next;
        };
        let lease = (dropped.task_id.as_str(), dropped.lease_token.as_str());
        let FailOutcome::Refused(why) = store.fail("w", lease.0, lease.1, "shutting down", true, true).unwrap() else {
            panic!("a dropped task cannot be given back")
        };
        assert!(why.starts_with(jobs::sprt::STOPPED), "{why}");
        let CompleteOutcome::Refused(why) = complete(&mut store, &dropped, &wins) else {
            panic!("a dropped task cannot be completed")
        };
        assert!(why.starts_with(jobs::sprt::STOPPED), "{why}");
        // A lease that merely went stale (a task the test kept, done) still
        // says so.
        let FailOutcome::Refused(why) = store
            .fail("w", &held.task_id, &held.lease_token, "x", true, true)
            .unwrap()
        else {
            panic!("a done task cannot be given back")
        };
        assert!(why.starts_with("stale lease"), "{why}");
    }
}
