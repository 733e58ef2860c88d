//! Training as an experiment (`[train]`, docs/train.md): generations of
//! self-play, fit and gate of one network.
//!
//! A generation: the best network so far plays `games` self-play games at
//! the spec's temperature (partitions of training rows); the fit makes a
//! candidate from the best network and those rows; the gate plays the
//! candidate against the best, greedy, in pairs under an SPRT, and keeps
//! the better; the kept network then meets the fixed anchors. Everything a
//! generation writes is under `gen-NNN/` and every network under `nets/`,
//! named by its SHA-256; `gen-NNN/generation.json`, written last, is the
//! generation's record. Every file is written whole (a hidden temporary,
//! then a rename), so a run killed anywhere resumes from what is there:
//! the partitions written are kept, a fit or gate cut short is redone.
//! Each step is a function of the spec and the step before (the games'
//! streams are keyed by their coordinates, the fit's gradient is the same
//! bits on any thread count), so the final network's hash does not depend
//! on the thread count nor on where a run was stopped.

pub mod cluster;
mod fit;
mod fixed;
mod parse;
mod play;
mod rows;
pub mod spec;
mod stages;
mod trainer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

pub use fit::{FitReport, first_network};
pub use fixed::{Fixed, PAST_KEPT, TrainSearch};
pub use parse::StartFrom;
pub use play::{Player, pair, self_play};
pub use rows::{TrainRow, read_train, train_parquet, train_schema};
pub use spec::{BeliefPrior, Keep, TrainSpec, TrainSpecError, is_train_spec};
pub use trainer::Trainer;

use crate::files::{IoError, io};
use crate::layout::{
    BEST_NET, FIRST_FILE, GENERATION_FILE, NETS_DIR, SELF_PLAY_DIR, TRAIN_SPEC_FILE, TRAIN_SUMMARY, generation_dir,
    net_file, write_atomic,
};
use crate::manifest::write_json_atomic;
use crate::spec::{Sprt, SprtOn};
use crate::sprt::{PairStats, ShardPairs, Verdict, Walk};

/// Why training stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// Reading or writing a file.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The directory holds another spec's training.
    #[error(
        "{dir} holds the training of another spec (id {have}, this one's {want}); give another --out or another name"
    )]
    #[allow(missing_docs)]
    OtherSpec { dir: PathBuf, have: String, want: String },
    /// A network file of the directory cannot be read.
    #[error(transparent)]
    Net(#[from] net::NetError),
    /// `train.start`'s file is not the one the spec was parsed with.
    #[error("train.start = {0:?}: {1}")]
    Start(String, String),
}

/// The run's best networks before the next generation's (the first, then
/// each generation's kept one), each once, without the current best, the
/// last [`fixed::PAST_KEPT`] of them: what the population's `past` draws
/// from. A function of the generations' records, so a resumed run draws
/// from the same.
fn past_bests(summary: &Summary) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for h in std::iter::once(&summary.first).chain(summary.generations.iter().map(|r| &r.best)) {
        if *h != summary.best && !seen.contains(h) {
            seen.push(h.clone());
        }
    }
    let skip = seen.len().saturating_sub(fixed::PAST_KEPT);
    seen.split_off(skip)
}

/// A match's pairs: counts, score and Elo with its 95% interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchRecord {
    /// Pairs played.
    pub pairs: u64,
    /// Pairs scoring 0, 1/2, 1, 3/2, 2 points.
    pub penta: [u64; 5],
    /// The first side's score, 0 to 1.
    pub score: f64,
    /// Its logistic Elo.
    pub elo: f64,
    /// The 95% interval's low end.
    pub elo_low: f64,
    /// Its high end.
    pub elo_high: f64,
}

impl MatchRecord {
    fn of(s: &PairStats) -> MatchRecord {
        let (elo, elo_low, elo_high) = s.elo();
        MatchRecord {
            pairs: s.pairs(),
            penta: s.penta,
            score: s.score(),
            elo,
            elo_low,
            elo_high,
        }
    }
}

/// The gate of a generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateRecord {
    /// The candidate against the best.
    #[serde(flatten)]
    pub result: MatchRecord,
    /// The SPRT's log-likelihood ratio at the end.
    pub llr: f64,
    /// What it said.
    pub verdict: Verdict,
    /// Whether the candidate became the best.
    pub kept_candidate: bool,
}

/// A generation's record (`gen-NNN/generation.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    /// 1, 2, ...
    pub generation: u32,
    /// The network that played the self-play (the best before).
    pub played_by: String,
    /// Self-play games.
    pub games: u64,
    /// Their training rows.
    pub rows: u64,
    /// Self-play's wall time (seconds; of this run's part when resumed).
    pub self_play_seconds: f64,
    /// The fit.
    pub fit: FitReport,
    /// The candidate it made.
    pub candidate: String,
    /// The gate.
    pub gate: GateRecord,
    /// The best network after the gate.
    pub best: String,
    /// The best network against each anchor.
    pub anchors: Vec<(String, MatchRecord)>,
}

/// The run's summary (`summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The spec's name.
    pub name: String,
    /// The spec's id.
    pub spec_id: String,
    /// The untrained network.
    pub first: String,
    /// The first network against each anchor.
    pub first_anchors: Vec<(String, MatchRecord)>,
    /// Every generation done.
    pub generations: Vec<Generation>,
    /// The best network at the end.
    pub best: String,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, IoError> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| crate::files::format(path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// `f(0..n)` on `threads` threads, the results in order; `None` if `stop`
/// said so before every item was taken.
fn parallel<T: Send>(n: usize, threads: usize, stop: &AtomicBool, f: impl Fn(usize) -> T + Sync) -> Option<Vec<T>> {
    let next = AtomicUsize::new(0);
    let mut out: Vec<(usize, T)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.clamp(1, n.max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= n {
                            break;
                        }
                        mine.push((k, f(k)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    if out.len() < n {
        return None;
    }
    out.sort_by_key(|(k, _)| *k);
    Some(out.into_iter().map(|(_, t)| t).collect())
}

/// What `_train.json` holds: the spec and its id.
#[derive(Serialize, Deserialize)]
struct Held {
    spec_id: String,
    spec: TrainSpec,
}

/// A training run's spec and summary as its directory `dir` holds them
/// (`None` when `dir` is not a training run's or no generation is done),
/// for rebuilding its report.
pub fn read_run(dir: &Path) -> Result<Option<(TrainSpec, Summary)>, IoError> {
    let Some(held) = read_json::<Held>(&dir.join(TRAIN_SPEC_FILE))? else {
        return Ok(None);
    };
    Ok(read_json::<Summary>(&dir.join(TRAIN_SUMMARY))?.map(|s| (held.spec, s)))
}
