//! What a lease picks from: the running experiments (each with its SPRT,
//! read from its spec once) and the task rows it may take.

use jobs::layout::Stage;
use rusqlite::{Transaction, params};

use super::{ExpState, Result};

/// A task a lease may take.
pub(super) struct Candidate {
    /// Its place in the experiment's order (the earlier is leased first).
    pub(super) seq: i64,
    pub(super) task_id: String,
    pub(super) stage: Stage,
    pub(super) shard: i64,
    pub(super) first_game: i64,
    pub(super) games: i64,
}

/// A running experiment a lease looks in.
pub(super) struct Running {
    pub(super) id: String,
    pub(super) spec_toml: String,
    pub(super) spec_hash: String,
    pub(super) output: String,
}

/// The running experiments, oldest first (only `only` when given).
pub(super) fn running(tx: &Transaction<'_>, only: Option<&str>) -> Result<Vec<Running>> {
    let mut q = tx.prepare_cached(
        "SELECT id, spec_toml, spec_hash, output FROM experiments
         WHERE state = ?1 AND (?2 IS NULL OR id = ?2) ORDER BY created_ms, id",
    )?;
    let rows = q.query_map(params![ExpState::Running, only], |r| {
        Ok(Running {
            id: r.get(0)?,
            spec_toml: r.get(1)?,
            spec_hash: r.get(2)?,
            output: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The SPRT of running experiment `id` (read from its spec once), or
/// `None` when this version refuses its spec (accepted when submitted,
/// by another version): the experiment then fails, saying why, rather
/// than lease tasks no worker could play.
pub(super) fn stop_of(
    stops: &mut std::collections::HashMap<String, Option<jobs::Sprt>>,
    tx: &Transaction<'_>,
    id: &str,
    spec_toml: &str,
    now: i64,
) -> Result<Option<Option<jobs::Sprt>>> {
    if let Some(stop) = stops.get(id) {
        return Ok(Some(*stop));
    }
    // The SPRT is a grid's: a training run's start file is not read.
    match jobs::Job::from_toml_with(spec_toml, jobs::train::StartFrom::Unread) {
        Ok(job) => {
            let stop = job.grid().and_then(|s| s.stop);
            Ok(Some(*stops.entry(id.to_string()).or_insert(stop)))
        }
        Err(e) => {
            let why = format!("its spec is not valid for this coordinator's version: {e}");
            tracing::error!(experiment = %id, error = %e, "an experiment's spec no longer parses; it fails");
            tx.prepare_cached(
                "UPDATE experiments SET state = ?4, error = ?2, updated_ms = ?3 WHERE id = ?1 AND state = ?5",
            )?
            .execute(params![id, why, now, ExpState::Failed, ExpState::Running])?;
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ExpState, Store};
    use jobs::layout::Stage;

    const SPEC: &str = include_str!("../../../jobs/specs/speed-sprt.toml");

    #[test]
    fn a_lease_names_its_stage_and_a_spec_this_version_refuses_fails_its_experiment() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let spec = jobs::Spec::from_toml(SPEC).unwrap();
        let (id, _) = store.submit(&jobs::Job::Grid(spec.clone()), SPEC).unwrap();
        let t = store.lease("w", 60_000, None).unwrap().unwrap();
        assert_eq!(t.stage, Stage::Games);
        // A spec written by another version, which this one refuses.
        let text = SPEC.replace("name = \"", "name = \"b");
        let (id2, _) = store.submit(&jobs::Job::from_toml(&text).unwrap(), &text).unwrap();
        store
            .conn
            .execute(
                "UPDATE experiments SET spec_toml = 'colour = 3' WHERE id = ?1",
                rusqlite::params![id2],
            )
            .unwrap();
        // The first experiment's tasks still lease; the second fails, saying why.
        while let Some(t) = store.lease("w", 60_000, None).unwrap() {
            assert_eq!(t.experiment_id, id, "no task of the refused spec is leased");
        }
        let e = store.experiment(&id2).unwrap();
        assert_eq!(e.state, ExpState::Failed);
        assert!(
            e.error.contains("its spec is not valid for this coordinator's version") && e.error.contains("colour"),
            "{}",
            e.error
        );
    }
}
