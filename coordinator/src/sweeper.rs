//! Seals finished experiments: checks every partition is in place (renaming a
//! completed partition whose worker died before its rename, requeueing one
//! that was lost), then writes `_manifest.json` and `_SUCCESS`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jobs::{Manifest, ShardEntry, Spec};

use crate::service::Shared;
use crate::store::{ExpState, now_ms, under_root};

/// How long after a completion the coordinator waits for the worker's own rename.
const RENAME_GRACE_MS: i64 = 1500;

pub async fn run(shared: Arc<Shared>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let s = Arc::clone(&shared);
        match tokio::task::spawn_blocking(move || sweep(&s)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "sweep failed"),
            Err(e) => tracing::error!(error = %e, "sweep panicked"),
        }
    }
}

fn sweep(shared: &Shared) -> Result<(), String> {
    let ids = shared.store().running_ids().map_err(|e| e.to_string())?;
    for id in ids {
        let Some(tasks) = shared.store().finished_tasks(&id).map_err(|e| e.to_string())? else {
            continue;
        };
        let root = &shared.config.results;
        let mut ready = true;
        for t in &tasks {
            let (Some(fin), Some(tmp)) = (under_root(root, &t.final_file), under_root(root, &t.temp_file)) else {
                return Err(format!("task {} has a path outside the results root", t.task_id));
            };
            if fin.exists() {
                continue;
            }
            ready = false;
            if tmp.exists() {
                if now_ms() - t.completed_ms > RENAME_GRACE_MS {
                    // The worker completed but never renamed (it died): finish its rename.
                    match jobs::durable_rename(&tmp, &fin) {
                        Ok(()) => {
                            tracing::warn!(task = %t.task_id, "renamed a completed partition its worker left behind")
                        }
                        Err(e) if fin.exists() => {
                            tracing::debug!(error = %e, "the worker renamed it first")
                        }
                        Err(e) => return Err(e.to_string()),
                    }
                }
            } else {
                tracing::warn!(task = %t.task_id, file = %fin.display(), "partition missing; task requeued");
                shared
                    .store()
                    .requeue_lost(&id, &t.task_id)
                    .map_err(|e| e.to_string())?;
            }
        }
        if !ready {
            continue;
        }
        seal(shared, &id, &tasks)?;
    }
    Ok(())
}

fn seal(shared: &Shared, id: &str, tasks: &[crate::store::DoneTask]) -> Result<(), String> {
    let e = shared.store().experiment(id).map_err(|e| e.to_string())?;
    let spec = Spec::from_toml(&e.spec_toml).map_err(|e| e.to_string())?;
    let dir = shared.config.results.join(&e.output);
    let manifest = Manifest {
        experiment: e.name.clone(),
        id: e.id.clone(),
        schema_version: jobs::SCHEMA_VERSION,
        spec_hash: e.spec_hash.clone(),
        spec_toml: e.spec_toml.clone(),
        spec: serde_json::from_str(&spec.canonical_json()).map_err(|e| e.to_string())?,
        games: e.games_total,
        shards: entries(tasks, "games", "games"),
        classifier: tasks
            .iter()
            .find(|t| t.stage == "fit")
            .map(|fit| jobs::ClassifierEntry {
                model_hash: fit.checksum.clone(),
                model_file: jobs::training::model_file(&fit.checksum),
                report_file: "classifier/report.json".into(),
                samples: entries(tasks, "samples", "classifier/samples"),
            }),
    };
    jobs::write_json_atomic(&dir.join("_manifest.json"), &manifest).map_err(|e| e.to_string())?;
    remove_leftovers(&dir.join("games"));
    remove_leftovers(&dir.join("classifier/samples"));
    let success = dir.join("_SUCCESS");
    std::fs::File::create(&success)
        .and_then(|f| f.sync_all())
        .map_err(|err| format!("{}: {err}", success.display()))?;
    shared
        .store()
        .finish(id, ExpState::Succeeded, "")
        .map_err(|e| e.to_string())?;
    tracing::info!(%id, games = e.games_total, "experiment succeeded");
    Ok(())
}

fn entries(tasks: &[crate::store::DoneTask], stage: &str, dir: &str) -> Vec<ShardEntry> {
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
            if name.to_str().is_some_and(|n| n.starts_with(".part-")) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}
