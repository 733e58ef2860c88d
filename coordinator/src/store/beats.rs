//! Heartbeats. Three in four of a loaded coordinator's RPCs are heartbeats
//! that only push a lease's deadline on and count its games; writing each
//! in a transaction of its own made them most of the store's commits (and
//! of its WAL's pages, checkpointed inside some unlucky writer's commit).
//! So a heartbeat without chunks is checked by reads alone and kept in
//! memory, and the kept ones are written together: by the sweeper's next
//! tick (every 200 ms), and first thing in every lease, whose choice of an
//! expired task must see every deadline a heartbeat has pushed on. A
//! heartbeat with chunks writes at once, as before.
//!
//! What is kept is one entry a leased task, never one a game. A write is
//! guarded by the lease's token and state, so a beat for a lease that has
//! since been completed, failed, released or given to another worker writes
//! nothing. A crash loses at most the last 200 ms of beats: those leases
//! then end up to 200 ms early, which only re-leases a task (idempotent).

use rusqlite::{Connection, params};

use super::{ExpState, HeartbeatOutcome, LeaseRef, Result, Store, TaskState, now_ms};

/// A heartbeat answered but not yet written.
#[derive(Clone, Debug)]
pub(super) struct Beat {
    token: String,
    games_done: u64,
    expires_ms: i64,
}

/// The beats kept, by (experiment id, task id): one a leased task.
pub(super) type Beats = std::collections::HashMap<(String, String), Beat>;

/// What a valid heartbeat's lease is: its experiment, whether that still
/// runs, and the task's (shard, first game, games).
type Leased = (String, ExpState, (u64, u64, u64));

impl Store {
    /// A heartbeat for the lease `lease` of a worker that has played
    /// `games_done` of its task's games: valid while the lease is the task's
    /// current one and the worker is not marked bad; `cancel` when its
    /// experiment is no longer running. Chunks are recorded at once.
    pub fn heartbeat(
        &mut self,
        lease: LeaseRef,
        games_done: u64,
        lease_ms: i64,
        worker: &str,
        chunks: &[super::ChunkIn],
    ) -> Result<HeartbeatOutcome> {
        let beat = Beat {
            token: lease.token.to_string(),
            games_done,
            expires_ms: now_ms() + lease_ms,
        };
        if !chunks.is_empty() {
            return self.heartbeat_with_chunks(lease.task_id, beat, worker, chunks);
        }
        let (exp, state, _) = match check(&self.conn, lease, games_done, worker)? {
            Ok(leased) => leased,
            Err(refused) => return Ok(refused),
        };
        self.beats.insert((exp, lease.task_id.to_string()), beat);
        Ok(HeartbeatOutcome::Valid {
            cancel: state != ExpState::Running,
            recorded: 0,
        })
    }

    /// [`Self::heartbeat`] with chunks: recorded and the beat written in
    /// one transaction.
    fn heartbeat_with_chunks(
        &mut self,
        task_id: &str,
        beat: Beat,
        worker: &str,
        chunks: &[super::ChunkIn],
    ) -> Result<HeartbeatOutcome> {
        let tx = self.conn.transaction()?;
        let lease = LeaseRef {
            task_id,
            token: &beat.token,
        };
        let (exp, state, range) = match check(&tx, lease, beat.games_done, worker)? {
            Ok(leased) => leased,
            Err(refused) => return Ok(refused),
        };
        let recorded = match Self::record_chunks(&tx, &exp, range, worker, chunks)? {
            Ok(n) => n,
            Err(why) => {
                tracing::warn!(task = %task_id, %worker, reason = %why, "chunks refused");
                0
            }
        };
        write_beat(&tx, &exp, task_id, &beat)?;
        tx.commit()?;
        // Written: an older kept beat of this lease would only move it back.
        self.beats.remove(&(exp, task_id.to_string()));
        Ok(HeartbeatOutcome::Valid {
            cancel: state != ExpState::Running,
            recorded,
        })
    }

    /// Writes every kept heartbeat in one transaction; returns how many.
    pub fn flush_beats(&mut self) -> Result<usize> {
        if self.beats.is_empty() {
            return Ok(0);
        }
        let tx = self.conn.transaction()?;
        let n = Self::write_beats(&tx, &mut self.beats)?;
        tx.commit()?;
        Ok(n)
    }

    /// Writes (and forgets) the kept heartbeats inside the caller's
    /// transaction. Should it roll back, they are lost with it: those leases
    /// end up to a sweep early, which only re-leases their tasks.
    pub(super) fn write_beats(conn: &Connection, beats: &mut Beats) -> Result<usize> {
        let n = beats.len();
        for ((exp, task_id), beat) in beats.drain() {
            write_beat(conn, &exp, &task_id, &beat)?;
        }
        Ok(n)
    }
}

/// The lease a heartbeat names, if it is the task's current one, its worker
/// is not marked bad and its progress fits the task; else the answer.
fn check(
    conn: &Connection,
    lease: LeaseRef,
    games_done: u64,
    worker: &str,
) -> Result<std::result::Result<Leased, HeartbeatOutcome>> {
    let Some((exp, state)) = Store::leased_by(conn, lease.task_id, lease.token)? else {
        return Ok(Err(HeartbeatOutcome::Invalid));
    };
    if Store::is_bad(conn, worker)? {
        // A cross-check found this worker wrong: its work is not wanted.
        return Ok(Err(HeartbeatOutcome::Invalid));
    }
    let (shard, first, games): (i64, i64, i64) = conn
        .prepare_cached("SELECT shard, first_game, games FROM tasks WHERE experiment_id = ?1 AND task_id = ?2")?
        .query_row(params![exp, lease.task_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    if games_done > games as u64 {
        return Ok(Err(HeartbeatOutcome::BadProgress { games: games as u64 }));
    }
    Ok(Ok((exp, state, (shard as u64, first as u64, games as u64))))
}

/// Pushes a lease's deadline on and counts its games, if the lease is still
/// the task's current one (its token, leased): otherwise nothing.
fn write_beat(conn: &Connection, exp: &str, task_id: &str, beat: &Beat) -> Result<()> {
    conn.prepare_cached(
        "UPDATE tasks SET lease_expires_ms = ?3, games_done = ?4
         WHERE experiment_id = ?1 AND task_id = ?2 AND lease_token = ?5 AND state = ?6",
    )?
    .execute(params![
        exp,
        task_id,
        beat.expires_ms,
        beat.games_done as i64,
        beat.token,
        TaskState::Leased
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::{HeartbeatOutcome, LeaseRef, Store};

    const SPEC: &str = include_str!("../../../jobs/specs/speed-sprt.toml");

    fn games_done(store: &Store, id: &str, task_id: &str) -> u64 {
        let (tasks, _) = store.tasks_view(id, None, 10_000).unwrap();
        tasks.iter().find(|t| t.task_id == task_id).unwrap().games_done
    }

    /// A heartbeat is answered at once and written with the next flush; a
    /// lease writes the kept ones first, so a lease a heartbeat pushed on is
    /// not handed to another worker however short it was; a kept beat of a
    /// lease that has moved on writes nothing.
    #[test]
    fn kept_heartbeats_are_written_before_any_lease_and_only_for_their_lease() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let spec = jobs::Spec::from_toml(SPEC).unwrap();
        let (id, _) = store.submit(&jobs::Job::Grid(spec.clone()), SPEC).unwrap();
        let a = store.lease("a", 50, None).unwrap().unwrap();
        let lease = LeaseRef {
            task_id: &a.task_id,
            token: &a.lease_token,
        };
        let hb = store.heartbeat(lease, 2, 60_000, "a", &[]).unwrap();
        assert!(matches!(
            hb,
            HeartbeatOutcome::Valid {
                cancel: false,
                recorded: 0
            }
        ));
        assert_eq!(games_done(&store, &id, &a.task_id), 0, "kept, not yet written");
        std::thread::sleep(Duration::from_millis(120));
        // Without the beat, a's 50 ms lease has expired and is the task that
        // came first: b would get it.
        let b = store.lease("b", 60_000, None).unwrap().unwrap();
        assert_ne!(b.task_id, a.task_id, "a lease a heartbeat pushed on was taken");
        assert_eq!(games_done(&store, &id, &a.task_id), 2);
        assert_eq!(store.flush_beats().unwrap(), 0, "the lease wrote it");
        // Progress beyond the task is refused at once.
        let too_many = store.heartbeat(lease, a.games + 1, 60_000, "a", &[]).unwrap();
        assert!(matches!(too_many, HeartbeatOutcome::BadProgress { .. }));
        // A beat kept for a lease that is then given back writes nothing.
        let b_lease = LeaseRef {
            task_id: &b.task_id,
            token: &b.lease_token,
        };
        store.heartbeat(b_lease, 1, 60_000, "b", &[]).unwrap();
        store
            .fail("b", &b.task_id, &b.lease_token, "stopping", true, true)
            .unwrap();
        assert_eq!(store.flush_beats().unwrap(), 1);
        assert_eq!(games_done(&store, &id, &b.task_id), 0, "a released lease took a beat");
        let stale = store.heartbeat(b_lease, 1, 60_000, "b", &[]).unwrap();
        assert!(matches!(stale, HeartbeatOutcome::Invalid));
    }

    /// The sweeper's look-up of the tasks to place, every tick under the
    /// store's lock, is a range of its index, not a pass over the done
    /// tasks (it was: 10,000s of rows every 200 ms, the RPCs' p99 tail).
    #[test]
    fn the_tasks_to_place_are_an_index_range() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let plan = store.done_unplaced_plan().unwrap();
        assert!(
            plan.contains("USING INDEX tasks_to_place") || plan.contains("USING COVERING INDEX tasks_to_place"),
            "{plan}"
        );
        assert!(!plan.contains("TEMP B-TREE"), "sorted after the look-up: {plan}");
    }

    /// With the checkpoints in the background, the WAL stays bounded
    /// (the writer's own checkpoints are off).
    #[test]
    fn background_checkpoints_keep_the_wal_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let mut store = Store::open(&path).unwrap();
        let _checkpoints = store.checkpoint_in_background(&path, Duration::from_millis(5)).unwrap();
        let spec = jobs::Spec::from_toml(SPEC).unwrap();
        store.submit(&jobs::Job::Grid(spec.clone()), SPEC).unwrap();
        let t = store.lease("a", 60_000, None).unwrap().unwrap();
        let lease = LeaseRef {
            task_id: &t.task_id,
            token: &t.lease_token,
        };
        // SQLite's write-ahead log sits beside the file, its name + "-wal".
        let mut wal = path.clone().into_os_string();
        wal.push("-wal");
        let mut most = 0;
        for i in 0..3_000u64 {
            store.heartbeat(lease, i % t.games, 60_000, "a", &[]).unwrap();
            store.flush_beats().unwrap();
            if i % 100 == 0 {
                std::thread::sleep(Duration::from_millis(10));
                most = most.max(std::fs::metadata(&wal).unwrap().len());
            }
        }
        // 3,000 commits of a few pages each would be ~40 MB of WAL unchecked.
        assert!(most < 8 << 20, "the WAL grew to {most} bytes");
    }
}
