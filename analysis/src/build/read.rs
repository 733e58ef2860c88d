//! Reading an experiment directory into a report: its partitions (by its
//! spec when it has an owner record, else by glob), the SPRT's walk over the
//! shards, the workers' record, and the prediction and classifier reports
//! beside them.

use std::path::Path;

use super::{Accumulator, Report};
use crate::ReportError;

/// Reads an experiment directory partition by partition (only one in memory
/// at a time) and its classifier report.
///
/// A directory with an owner record (`_experiment.json`, written by the
/// coordinator) is read by its spec: exactly the spec's partitions, each of
/// which must hold the experiment's own rows for its shard's games; any other
/// file is ignored. A directory without one (made by hand) is read by the
/// glob `games/part-*.parquet`.
pub fn build(dir: &Path) -> Result<Report, ReportError> {
    let mut acc = Accumulator::default();
    // Without a spec, a deal's two seatings are paired when they are there.
    acc.tournament.paired = true;
    let mut game = None;
    let mut sprt_report = None;
    let mut seed = None;
    let workers_path = dir.join(jobs::layout::WORKERS_FILE);
    match std::fs::read(&workers_path) {
        Ok(bytes) => {
            acc.workers = crate::workers::WorkerAcc::from_json(&bytes).map_err(|message| ReportError::File {
                path: workers_path.clone(),
                message,
            })?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(ReportError::File {
                path: workers_path,
                message: e.to_string(),
            });
        }
    }
    match jobs::layout::Owner::read(dir)? {
        Some(owner) => {
            let spec = jobs::Spec::from_toml(&owner.spec_toml).map_err(|e| ReportError::File {
                path: dir.join(jobs::layout::OWNER_FILE),
                message: format!("its spec is invalid: {e}"),
            })?;
            game = describe_spec(&spec);
            seed = Some(spec.seed);
            prepare(&mut acc, &spec);
            sprt_report = fold_shards(&mut acc, dir, &spec, &owner.id, |_| true)?;
        }
        None => {
            let parts = jobs::partitions(dir)?;
            if parts.is_empty() {
                return Err(ReportError::Empty(dir.join(jobs::layout::GAMES_DIR)));
            }
            for p in parts {
                for (experiment, row) in jobs::read_partition(&p)? {
                    acc.add(&experiment, &row);
                }
            }
        }
    }
    let prediction = read_json(&dir.join(jobs::layout::PREDICTION_REPORT))?;
    let classifier = read_json(&dir.join(jobs::layout::CLASSIFIER_REPORT))?;
    let mut report = acc.finish(classifier);
    report.game = game;
    report.seed = seed;
    report.prediction = prediction;
    if let Some(t) = &mut report.tournament {
        t.sprt = sprt_report;
    }
    Ok(report)
}

/// The report so far of an experiment still running: its games shards
/// that are done (`done`, read in shard order up to the first one missing,
/// as the SPRT walks them) under `dir`, with `workers_json` (the
/// coordinator's record of who played what, as `_workers.json` holds it).
/// The web view shows it while the experiment runs.
pub fn build_live(
    dir: &Path,
    spec: &jobs::Spec,
    done: &[u64],
    workers_json: Option<&[u8]>,
) -> Result<Report, ReportError> {
    let mut acc = Accumulator::default();
    if let Some(bytes) = workers_json {
        acc.workers = crate::workers::WorkerAcc::from_json(bytes).map_err(|message| ReportError::File {
            path: dir.join(jobs::layout::WORKERS_FILE),
            message,
        })?;
    }
    prepare(&mut acc, spec);
    let sprt = fold_shards(&mut acc, dir, spec, &spec.name, |k| done.binary_search(&k).is_ok())?;
    let mut report = acc.finish(None);
    report.game = describe_spec(spec);
    report.seed = Some(spec.seed);
    if let Some(t) = &mut report.tournament {
        t.sprt = sprt;
    }
    Ok(report)
}

fn describe_spec(spec: &jobs::Spec) -> Option<String> {
    spec.full
        .as_ref()
        .map(|f| describe_game(f, &spec.rule_sets, &spec.search, &spec.grid.budget))
}

/// Tells the accumulator what the spec says of its rows: the grid's
/// beliefs and shapings, the agents and how they were paired.
fn prepare(acc: &mut Accumulator, spec: &jobs::Spec) {
    acc.set_belief_levels(spec.grid.belief.len());
    acc.set_grid_beliefs(spec);
    acc.shaping.pairing.levels = spec.grid.shaping.len();
    if let Some(pool) = &spec.pool {
        acc.tournament.paired = pool.paired;
        acc.tournament.external = pool
            .agents
            .iter()
            .filter(|a| a.is_external())
            .map(|a| a.name.clone())
            .collect();
        acc.format = pool.format.name().to_string();
    }
}

/// Folds the spec's games partitions under `dir` in shard order while
/// `available(shard)`, each checked to hold exactly its shard's games of
/// this experiment (`shown`: how errors name it). With `[stop] sprt` the
/// shards are walked in order and the walk ends where the test decided (as
/// the coordinator did); the test's report is returned.
fn fold_shards(
    acc: &mut Accumulator,
    dir: &Path,
    spec: &jobs::Spec,
    shown: &str,
    available: impl Fn(u64) -> bool,
) -> Result<Option<crate::tournament::SprtReport>, ReportError> {
    let mut sprt_walk = spec.stop.map(jobs::sprt::Walk::new);
    let mut kept_games = 0;
    for shard in jobs::shards(spec) {
        if !available(shard.index) {
            break;
        }
        let p = dir.join(jobs::layout::GAMES_DIR).join(jobs::part_file(shard.index));
        let range = shard.first_game..shard.first_game + shard.games;
        let rows = jobs::read_partition(&p)?;
        if rows.len() as u64 != shard.games {
            return Err(ReportError::File {
                path: p,
                message: format!(
                    "holds {} rows; shard {} has {} games",
                    rows.len(),
                    shard.index,
                    shard.games
                ),
            });
        }
        if let Some(walk) = &mut sprt_walk {
            walk.step(&jobs::sprt::ShardPairs::of_rows(rows.iter().map(|(_, r)| r)));
        }
        for (experiment, row) in rows {
            if experiment != spec.name || !range.contains(&row.game_index) {
                return Err(ReportError::File {
                    path: p,
                    message: format!(
                        "holds game {} of experiment {experiment:?}, not of {shown} (shard {} is games {}..{})",
                        row.game_index, shard.index, range.start, range.end
                    ),
                });
            }
            acc.add(&experiment, &row);
        }
        kept_games += shard.games;
        if sprt_walk
            .as_ref()
            .is_some_and(|w| w.verdict != jobs::sprt::Verdict::Undecided)
        {
            break;
        }
    }
    Ok(match (spec.stop, sprt_walk) {
        (Some(sprt), Some(walk)) => Some(crate::tournament::sprt_report(&sprt, walk, kept_games, spec.games())),
        _ => None,
    })
}

/// A JSON file of the experiment directory, `None` when it is absent.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, ReportError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).map_err(|e| ReportError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ReportError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// "all-fives: 2 seats of 7, one hand a game, search depth 2"; with a rules
/// factor, each rule set by name ("rules two (all-fives: ...) and four
/// (...)").
fn describe_game(f: &jobs::FullSpec, sets: &[jobs::RuleSet], search: &engine::SearchConfig, budgets: &[u64]) -> String {
    let per = match f.match_to {
        Some(to) => format!("a match to {to} a game"),
        None => "one hand a game".into(),
    };
    let depth = match search.depth {
        engine::DepthLimit::Turns(d) => format!(", search depth {d}"),
        engine::DepthLimit::Unlimited => String::new(),
    };
    let mut extra = String::new();
    let fs = &f.search;
    if budgets.len() > 1 {
        let list: Vec<String> = budgets.iter().map(u64::to_string).collect();
        extra.push_str(&format!(
            ", budgets of {} nodes (a grid factor: each table is split by budget)",
            list.join(", ")
        ));
    } else if fs.budget > 0 {
        extra.push_str(&format!(", budget {} nodes", fs.budget));
    }
    if let engine::WorldCount::Sample(k) = search.worlds {
        extra.push_str(&format!(", {k} worlds under partial observation"));
    }
    if fs.learned {
        extra.push_str(", learned evaluation");
    }
    let rules = f.rules();
    if sets.is_empty() {
        return format!("{}: {}, {per}{depth}{extra}", rules.kind(), rules.seating());
    }
    let named: Vec<String> = sets
        .iter()
        .map(|s| {
            let r = s.rules();
            format!("{} ({}: {})", s.name, r.kind(), r.seating())
        })
        .collect();
    format!("rule sets {}; {per}{depth}{extra}", named.join(", "))
}
