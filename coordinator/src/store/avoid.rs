//! The workers a task avoids for a while: a check task waits for a worker
//! other than the one that played its range, a tie-break for one other
//! than both disputants (chunks.rs). Each is a row of `task_avoid`, so a
//! lease's test is equality of whole ids, whatever characters they hold
//! (issue 43: the list was one column of ids joined by newlines, matched
//! with `instr`). The deadline stays on the task (`tasks.avoid_until_ms`);
//! the rows go with their task (`ON DELETE CASCADE`).

use rusqlite::{Connection, params};

use super::Result;

/// Makes the task `task_id` of `exp` avoid `workers` (its deadline is set
/// with the task). Called only for a task just inserted.
pub(super) fn avoid(tx: &Connection, exp: &str, task_id: &str, workers: &[&str]) -> Result<()> {
    let mut insert =
        tx.prepare_cached("INSERT OR IGNORE INTO task_avoid (experiment_id, task_id, worker) VALUES (?1, ?2, ?3)")?;
    for worker in workers {
        insert.execute(params![exp, task_id, worker])?;
    }
    Ok(())
}

/// A state file made before `task_avoid` keeps each task's avoid list in
/// `tasks.avoid_worker`: ids each followed by a newline (worker ids hold
/// no control character). Each id becomes a row, and the column goes, in
/// one transaction (a crash leaves the old file as it was). `columns`:
/// those `tasks` has.
pub(super) fn migrate_lists(conn: &Connection, columns: &[String]) -> rusqlite::Result<()> {
    if !columns.iter().any(|c| c == "avoid_worker") {
        return Ok(());
    }
    let tx = conn.unchecked_transaction()?;
    let lists: Vec<(String, String, String)> = tx
        .prepare("SELECT experiment_id, task_id, avoid_worker FROM tasks WHERE avoid_worker IS NOT NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut moved = 0;
    {
        let mut insert =
            tx.prepare("INSERT OR IGNORE INTO task_avoid (experiment_id, task_id, worker) VALUES (?1, ?2, ?3)")?;
        for (exp, task_id, list) in &lists {
            // The old test matched `\n` + id + `\n` in `\n` + list: exactly
            // the newline-terminated entries, an empty one included.
            for worker in list.split_terminator('\n') {
                moved += insert.execute(params![exp, task_id, worker])?;
            }
        }
    }
    tx.execute_batch("ALTER TABLE tasks DROP COLUMN avoid_worker")?;
    tx.commit()?;
    tracing::info!(
        tasks = lists.len(),
        workers = moved,
        "state file migrated: avoid lists moved to the task_avoid table"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::complete_as;
    use super::super::{CheckOutcome, CompleteOutcome, ExpState, Store, TaskState};
    use jobs::layout::Stage;
    use rusqlite::{Connection, params};

    const SPEC: &str = include_str!("../../../jobs/specs/speed-sprt.toml");

    /// The workers each task of the file avoids, in order.
    fn avoid_rows(path: &std::path::Path) -> Vec<(String, String)> {
        let conn = Connection::open(path).unwrap();
        let mut q = conn
            .prepare("SELECT task_id, worker FROM task_avoid ORDER BY task_id, worker")
            .unwrap();
        q.query_map([], |r| Ok((r.get(0).unwrap(), r.get(1).unwrap())))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// A check avoids exactly its range's worker and a tie-break exactly
    /// the two disputants, by whole ids: ids that are prefixes, suffixes or
    /// infixes of each other, SQL's quote and wildcards, spaces, tabs
    /// (printable-only ids are refused at the wire, not here) and
    /// non-ASCII letters.
    #[test]
    fn avoidance_matches_whole_worker_ids() {
        for (played, checker, third) in [
            ("w1", "w10", "w"),
            ("w10", "w1", "1"),
            ("xw1x", "w1", "x"),
            ("a%", "%", "_"),
            ("'; DROP TABLE tasks; --", "\"", "'"),
            ("a b", "a\tb", "b"),
            ("ü", "u", "üü"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("state.sqlite");
            let mut store = Store::open(&path).unwrap();
            let spec = jobs::Spec::from_toml(SPEC).unwrap();
            let (id, _) = store.submit(&jobs::Job::Grid(spec.clone()), SPEC).unwrap();
            let games = store.lease(played, 60_000, None).unwrap().unwrap();
            assert!(matches!(
                complete_as(&mut store, played, &games),
                CompleteOutcome::Accepted { .. }
            ));
            let check_id = Stage::check_task_id(games.shard, games.first_game);
            assert_eq!(avoid_rows(&path), [(check_id.clone(), played.to_string())]);
            // The player gets the next games task; the checker, the check.
            assert_eq!(
                store.lease(played, 60_000, None).unwrap().unwrap().stage,
                Stage::Games,
                "{played:?}"
            );
            let check = store.lease(checker, 60_000, None).unwrap().unwrap();
            assert_eq!(check.task_id, check_id, "{checker:?} after {played:?}");
            // The checker disagrees: a tie-break avoids both of them.
            let disputed = complete_as(&mut store, checker, &check);
            assert!(
                matches!(
                    disputed,
                    CompleteOutcome::Accepted {
                        check: Some(CheckOutcome::Disputed),
                        ..
                    }
                ),
                "{disputed:?}"
            );
            let tiebreak = Stage::tiebreak_task_id(&check_id);
            let mut want = vec![
                (check_id.clone(), played.to_string()),
                (tiebreak.clone(), played.to_string()),
                (tiebreak.clone(), checker.to_string()),
            ];
            want.sort();
            assert_eq!(avoid_rows(&path), want);
            for w in [played, checker] {
                let t = store.lease(w, 60_000, Some(&id)).unwrap();
                assert!(
                    t.is_none_or(|t| t.task_id != tiebreak),
                    "{w:?}, a disputant, got the tie-break"
                );
            }
            let t = store.lease(third, 60_000, Some(&id)).unwrap().unwrap();
            assert_eq!(t.task_id, tiebreak, "{third:?} after {played:?} and {checker:?}");
        }
    }

    /// A lease stays index look-ups with the avoid table: each pick is a
    /// range of its index in the order it takes, and its worker's row a
    /// look-up of `task_avoid`'s primary key, never a scan.
    #[test]
    fn a_lease_looks_up_avoided_workers_by_primary_key() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let [pending, expired] = store.lease_pick_plans().unwrap();
        for (plan, index) in [(&pending, "tasks_by_state"), (&expired, "tasks_by_expiry")] {
            assert!(plan.contains(&format!("SEARCH tasks USING INDEX {index}")), "{plan}");
            assert!(
                plan.contains("SEARCH a USING PRIMARY KEY (experiment_id=? AND task_id=? AND worker=?)"),
                "{plan}"
            );
            assert!(!plan.contains("SCAN") && !plan.contains("TEMP B-TREE"), "{plan}");
        }
    }

    /// The tasks table of a state file made before `task_avoid` (its other
    /// tables had what they have now).
    const OLD_TASKS: &str = "
        CREATE TABLE experiments (id TEXT PRIMARY KEY, name TEXT NOT NULL, spec_toml TEXT NOT NULL,
            spec_hash TEXT NOT NULL, output TEXT NOT NULL, state TEXT NOT NULL, error TEXT NOT NULL DEFAULT '',
            games_total INTEGER NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL);
        CREATE TABLE stages (experiment_id TEXT NOT NULL REFERENCES experiments(id), name TEXT NOT NULL,
            seq INTEGER NOT NULL, PRIMARY KEY (experiment_id, name));
        CREATE TABLE tasks (
            experiment_id TEXT NOT NULL REFERENCES experiments(id), task_id TEXT NOT NULL, stage TEXT NOT NULL,
            stage_seq INTEGER NOT NULL, seq INTEGER NOT NULL, shard INTEGER NOT NULL, first_game INTEGER NOT NULL,
            games INTEGER NOT NULL, state TEXT NOT NULL, lease_token TEXT, lease_worker TEXT,
            lease_expires_ms INTEGER, games_done INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,
            rows INTEGER, checksum TEXT, temp_file TEXT, final_file TEXT, completed_ms INTEGER, error TEXT,
            file_bytes INTEGER, file_sha256 TEXT, placed INTEGER NOT NULL DEFAULT 0, stats TEXT,
            avoid_worker TEXT, avoid_until_ms INTEGER, expected_checksum TEXT,
            PRIMARY KEY (experiment_id, task_id));";

    /// A state file with the old newline-joined avoid lists opens with
    /// each list's workers as rows, the column gone, and leases that avoid
    /// exactly what the lists said (until their deadlines); opening it
    /// again changes nothing; a deleted task's rows go with it.
    #[test]
    fn old_avoid_lists_become_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let far = super::super::now_ms() + 3_600_000;
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(OLD_TASKS).unwrap();
            conn.execute(
                "INSERT INTO experiments VALUES ('e', 'e', ?1, 'h', 'out', ?2, '', 4, 1, 1)",
                params![SPEC, ExpState::Running],
            )
            .unwrap();
            conn.execute("INSERT INTO stages VALUES ('e', 'check', 0)", []).unwrap();
            // (task, its avoid list, until): a past deadline avoids no one.
            let tasks: [(&str, Option<&str>, Option<i64>); 5] = [
                ("c0", Some("hw1\n"), Some(far)),
                ("c1", Some("w1\nw\n"), Some(i64::MAX)),
                ("c2", Some("a\n"), Some(1)),
                ("c3", Some("\nz\n"), Some(far)),
                ("c4", None, None),
            ];
            for (seq, (task, list, until)) in tasks.into_iter().enumerate() {
                conn.execute(
                    "INSERT INTO tasks (experiment_id, task_id, stage, stage_seq, seq, shard, first_game, games, state,
                                        avoid_worker, avoid_until_ms, expected_checksum)
                     VALUES ('e', ?1, 'check', 0, ?2, 0, ?2, 1, ?5, ?3, ?4, 'c')",
                    params![task, seq as i64, list, until, TaskState::Pending],
                )
                .unwrap();
            }
        }
        let want: Vec<(String, String)> = [
            ("c0", "hw1"),
            ("c1", "w"),
            ("c1", "w1"),
            ("c2", "a"),
            ("c3", ""),
            ("c3", "z"),
        ]
        .iter()
        .map(|(t, w)| (t.to_string(), w.to_string()))
        .collect();
        for _ in 0..2 {
            drop(Store::open(&path).unwrap());
            assert_eq!(avoid_rows(&path), want);
            let conn = Connection::open(&path).unwrap();
            let left: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM pragma_table_info('tasks') WHERE name = 'avoid_worker'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(left, 0, "the old column is gone");
        }
        let mut store = Store::open(&path).unwrap();
        // hw1 avoids c0, not c1 (w1 and w are not hw1); c2's deadline is
        // past, so a takes it; z avoids c3, and "" is no worker's id.
        for (worker, task) in [("hw1", "c1"), ("w1", "c0"), ("a", "c2"), ("z", "c4"), ("w", "c3")] {
            let t = store.lease(worker, 60_000, None).unwrap().unwrap();
            assert_eq!(t.task_id, task, "{worker}");
        }
        // A task's rows go with it (the store's connection enforces the
        // foreign key: the SPRT and a bad worker's replay delete tasks).
        store
            .conn
            .execute("DELETE FROM tasks WHERE task_id = 'c3'", [])
            .unwrap();
        assert_eq!(avoid_rows(&path), want[..4]);
    }
}
