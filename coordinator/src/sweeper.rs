//! Keeps every running experiment's files in order and seals finished ones.
//! Each tick it places completed partitions (finishing the rename of a
//! worker that died, re-running a task whose partition never appeared),
//! every few ticks it checks that placed files are still there (re-running
//! the tasks of lost ones at once), and when every task is done and in place
//! it writes `_manifest.json` and `_SUCCESS`. First, each tick writes the
//! heartbeats the store keeps in memory (store/beats.rs).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jobs::layout::{self, Stage};
use jobs::{Job, Manifest, ShardEntry};

use crate::files;
use crate::shared::Shared;
use crate::store::{ExpState, StoreError};

/// Why a sweep stopped (it runs again on the next tick).
#[derive(Debug, thiserror::Error)]
enum SweepError {
    /// The state database.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A running experiment's stored spec no longer parses.
    #[error("experiment {id}: its stored spec: {source}")]
    Spec { id: String, source: jobs::JobError },
    /// Writing the manifest or the success marker.
    #[error(transparent)]
    Io(#[from] jobs::IoError),
    /// The success marker could not be made.
    #[error("{path}: {source}")]
    Marker { path: String, source: std::io::Error },
}

/// Every this many ticks, placed files are checked to still be there.
const VERIFY_EVERY_TICKS: u64 = 10;

pub async fn run(shared: Arc<Shared>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut n: u64 = 0;
    loop {
        tick.tick().await;
        let s = Arc::clone(&shared);
        let verify = n.is_multiple_of(VERIFY_EVERY_TICKS);
        n += 1;
        match tokio::task::spawn_blocking(move || sweep(&s, verify)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "sweep failed"),
            Err(e) => tracing::error!(error = %e, "sweep panicked"),
        }
    }
}

fn sweep(shared: &Shared, verify: bool) -> Result<(), SweepError> {
    // The heartbeats answered since the last tick, in one transaction.
    shared.store().flush_beats()?;
    let ids = shared.store().running_ids()?;
    for id in ids {
        files::place(shared, &id)?;
        if verify {
            files::verify(shared, &id)?;
        }
        let Some(tasks) = shared.store().finished_tasks(&id)? else {
            continue;
        };
        seal(shared, &id, &tasks)?;
    }
    Ok(())
}

fn seal(shared: &Shared, id: &str, tasks: &[crate::store::DoneTask]) -> Result<(), SweepError> {
    let e = shared.store().experiment(id)?;
    let dir = shared.config.results.join(&e.output);
    // A training run's manifest has its spec with the start file's hash.
    let start = dir.join(layout::START_NET);
    let job =
        Job::from_toml_with(&e.spec_toml, jobs::train::StartFrom::Copy(&start)).map_err(|source| SweepError::Spec {
            id: id.to_string(),
            source,
        })?;
    let spec = match job {
        Job::Grid(spec) => spec,
        Job::Train(spec) => return seal_training(shared, &e, &spec, tasks, &dir),
    };
    let manifest = Manifest {
        predictors: tasks
            .iter()
            .find(|t| t.stage == Stage::Fit && spec.needs_predictors())
            .map(|fit| jobs::PredictorsEntry {
                model_hash: fit.checksum.clone(),
                model_file: layout::model_file(&fit.checksum),
                report_file: layout::PREDICTION_REPORT.into(),
            }),
        classifier: tasks
            .iter()
            .find(|t| t.stage == Stage::Fit && spec.needs_classifier())
            .map(|fit| jobs::ClassifierEntry {
                model_hash: fit.checksum.clone(),
                model_file: layout::model_file(&fit.checksum),
                report_file: layout::CLASSIFIER_REPORT.into(),
                samples: entries(tasks, Stage::Samples),
            }),
        ..manifest_of(&e, &spec.canonical_json(), entries(tasks, Stage::Games))
    };
    jobs::write_json_atomic(&dir.join(layout::MANIFEST), &manifest)?;
    remove_leftovers(&dir.join(layout::GAMES_DIR));
    remove_leftovers(&dir.join(layout::SAMPLES_DIR));
    // Every games partition is in place: the chunks they were built from go.
    let _ = std::fs::remove_dir_all(dir.join(layout::CHUNKS_DIR));
    if spec.stop.is_some() {
        // The SPRT stopped the games: a partition after the shard where it
        // decided (renamed by a worker just before) is not the experiment's.
        let kept = manifest.shards.len() as u64;
        for sub in [layout::GAMES_DIR, layout::MOVES_DIR, layout::HANDS_DIR] {
            for shard in kept..jobs::shards(&spec).len() as u64 {
                let _ = std::fs::remove_file(dir.join(sub).join(jobs::part_file(shard)));
            }
        }
    }
    succeed(shared, &e, &dir)
}

/// Writes `_SUCCESS` and marks the experiment done.
fn succeed(shared: &Shared, e: &crate::store::ExperimentRow, dir: &Path) -> Result<(), SweepError> {
    let success = dir.join(layout::SUCCESS);
    std::fs::File::create(&success)
        .and_then(|f| f.sync_all())
        .map_err(|source| SweepError::Marker {
            path: success.display().to_string(),
            source,
        })?;
    shared.store().finish(&e.id, ExpState::Succeeded, "")?;
    tracing::info!(id = %e.id, games = e.games_total, "experiment succeeded");
    Ok(())
}

/// A training run's seal: the manifest lists its self-play partitions
/// (each with its file's SHA-256 as checksum); its networks, records and
/// report are the generation tasks' files (docs/train.md).
fn seal_training(
    shared: &Shared,
    e: &crate::store::ExperimentRow,
    spec: &jobs::train::TrainSpec,
    tasks: &[crate::store::DoneTask],
    dir: &Path,
) -> Result<(), SweepError> {
    let inside = format!("{}/", e.output);
    let shards = tasks
        .iter()
        .filter(|t| t.stage == Stage::SelfPlay)
        .map(|t| ShardEntry {
            shard: t.shard,
            file: t.final_file.strip_prefix(&inside).unwrap_or(&t.final_file).to_string(),
            first_game: t.first_game,
            games: t.games,
            rows: t.rows,
            checksum: t.checksum.clone(),
        })
        .collect();
    let manifest = manifest_of(e, &spec.canonical(), shards);
    jobs::write_json_atomic(&dir.join(layout::MANIFEST), &manifest)?;
    succeed(shared, e, dir)
}

/// An experiment's manifest with its spec (canonical JSON) and partitions.
fn manifest_of(e: &crate::store::ExperimentRow, canonical: &str, shards: Vec<ShardEntry>) -> Manifest {
    Manifest {
        experiment: e.name.clone(),
        id: e.id.clone(),
        schema_version: jobs::SCHEMA_VERSION,
        spec_hash: e.spec_hash.clone(),
        spec_toml: e.spec_toml.clone(),
        spec: serde_json::from_str(canonical).expect("the canonical JSON is JSON"),
        games: e.games_total,
        shards,
        classifier: None,
        predictors: None,
    }
}

fn entries(tasks: &[crate::store::DoneTask], stage: Stage) -> Vec<ShardEntry> {
    let dir = stage.partitions_dir().unwrap_or_default();
    tasks
        .iter()
        .filter(|t| t.stage == stage)
        .map(|t| ShardEntry {
            shard: t.shard,
            file: format!("{dir}/{}", jobs::part_file(t.shard)),
            first_game: t.first_game,
            games: t.games,
            rows: t.rows,
            checksum: t.checksum.clone(),
        })
        .collect()
}

/// Removes hidden partial files left by workers that failed or lost their lease.
fn remove_leftovers(games: &Path) {
    if let Ok(entries) = std::fs::read_dir(games) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_str().is_some_and(|n| n.starts_with(layout::TEMP_PREFIX)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}
