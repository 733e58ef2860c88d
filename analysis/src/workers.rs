//! Per-worker statistics (fishtest's residuals): which worker played which
//! games comes from `_workers.json` (the coordinator's record of every
//! committed range); each worker's games are compared with everyone's in
//! the same cell of the grid (all coordinates but the deal and repeat):
//!
//! `z_w = sum_c (S_cw - n_cw m_c) / sqrt(sum_c n_cw v_c)`
//!
//! with `S_cw`, `n_cw` the worker's score-difference sum and games in cell
//! `c`, `m_c` the median of the workers' means in the cell (a broken
//! minority does not move it, as it would move the pooled mean and make
//! every honest worker look off) and `v_c` the cell's variance over every
//! game. A worker whose games come from the same distribution as the
//! others' has `z` about standard normal; |z| >= 3 is flagged. `chi2 = sum_w z_w^2`
//! (W - 1 degrees of freedom) tests all of them at once; its p-value is
//! the chi-square tail.
//!
//! Memory: one accumulator per (cell, worker), and the ranges.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::nan_from_null;
use crate::stats::{self, Moments};
use crate::table::{Entry, Table};

/// One worker's residual.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerResidual {
    pub worker: String,
    pub games: u64,
    /// The worker's mean score difference minus what its cells' median
    /// worker means predict (points per game).
    #[serde(deserialize_with = "nan_from_null")]
    pub excess: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub z: f64,
    /// |z| >= 3.
    pub flagged: bool,
}

/// The per-worker section of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkersReport {
    pub workers: Vec<WorkerResidual>,
    #[serde(deserialize_with = "nan_from_null")]
    pub chi2: f64,
    pub df: u64,
    #[serde(deserialize_with = "nan_from_null")]
    pub p: f64,
}

/// `_workers.json` as the coordinator writes it.
#[derive(Debug, Deserialize)]
struct WorkersFile {
    chunks: Vec<Range>,
}

#[derive(Debug, Deserialize)]
struct Range {
    first_game: u64,
    games: u64,
    worker: String,
}

/// Folds rows by (cell, worker).
#[derive(Debug, Default)]
pub(crate) struct WorkerAcc {
    /// (first game, end, worker index), sorted.
    ranges: Vec<(u64, u64, usize)>,
    names: Vec<String>,
    cells: HashMap<(Cell, usize), Moments>,
}

/// A cell of the grid: every coordinate of a row but the deal and repeat.
type Cell = (
    Option<String>,
    jobs::Source,
    engine::Observability,
    full::FullTarget,
    engine::PlayerEngine,
    engine::Belief,
    jobs::ShapingLevel,
    Option<u64>,
    Option<String>,
    Option<String>,
    Option<u32>,
);

impl WorkerAcc {
    /// From `_workers.json`'s text.
    pub(crate) fn from_json(bytes: &[u8]) -> Result<WorkerAcc, String> {
        let f: WorkersFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let mut acc = WorkerAcc::default();
        for r in f.chunks {
            let k = match acc.names.iter().position(|n| *n == r.worker) {
                Some(k) => k,
                None => {
                    acc.names.push(r.worker);
                    acc.names.len() - 1
                }
            };
            acc.ranges.push((r.first_game, r.first_game + r.games, k));
        }
        acc.ranges.sort_unstable();
        Ok(acc)
    }

    fn worker_of(&self, game: u64) -> Option<usize> {
        let i = self.ranges.partition_point(|r| r.0 <= game);
        let &(a, b, w) = self.ranges.get(i.checked_sub(1)?)?;
        (a..b).contains(&game).then_some(w)
    }

    /// Adds a row; `belief` is its grid coordinate (see `shaping.rs`).
    pub(crate) fn add(&mut self, r: &jobs::GameRow, belief: engine::Belief) {
        let Some(w) = self.worker_of(r.game_index) else {
            return;
        };
        let cell = (
            r.rules.clone(),
            r.information_source,
            r.observability,
            r.target,
            r.engine,
            belief,
            r.shaping,
            r.budget,
            r.agent.clone(),
            r.opponent.clone(),
            r.agent_side,
        );
        self.cells.entry((cell, w)).or_default().add(r.score_diff as f64);
    }

    pub(crate) fn finish(&self) -> Option<WorkersReport> {
        if self.names.is_empty() || self.cells.is_empty() {
            return None;
        }
        // In a fixed order, so the sums (and the report) are the same every time.
        let mut entries: Vec<_> = self.cells.iter().collect();
        entries.sort_by_cached_key(|((c, w), _)| (*w, format!("{c:?}")));
        let mut pooled: HashMap<&Cell, (Moments, Vec<f64>)> = HashMap::new();
        for &((cell, _), m) in &entries {
            let p = pooled.entry(cell).or_default();
            p.0.n += m.n;
            p.0.sum += m.sum;
            p.0.sum_sq += m.sum_sq;
            p.1.push(m.mean());
        }
        let reference: HashMap<&Cell, (f64, f64)> = pooled
            .iter_mut()
            .map(|(c, (m, means))| {
                means.sort_by(f64::total_cmp);
                let k = means.len();
                let median = if k % 2 == 1 {
                    means[k / 2]
                } else {
                    (means[k / 2 - 1] + means[k / 2]) / 2.0
                };
                (*c, (median, m.var_sample()))
            })
            .collect();
        let mut out = Vec::new();
        for (k, name) in self.names.iter().enumerate() {
            let (mut games, mut dev, mut var) = (0u64, 0.0, 0.0);
            for &((cell, w), m) in &entries {
                if *w != k {
                    continue;
                }
                let (median, v) = reference[cell];
                games += m.n;
                dev += m.sum - m.n as f64 * median;
                var += m.n as f64 * v;
            }
            if games == 0 {
                continue;
            }
            let z = if var > 0.0 { dev / var.sqrt() } else { 0.0 };
            out.push(WorkerResidual {
                worker: name.clone(),
                games,
                excess: dev / games as f64,
                z,
                flagged: z.abs() >= 3.0,
            });
        }
        let chi2: f64 = out.iter().map(|w| w.z * w.z).sum();
        let df = out.len().saturating_sub(1) as u64;
        let p = if df == 0 {
            1.0
        } else {
            stats::chi_square_sf(df as f64, chi2)
        };
        Some(WorkersReport {
            workers: out,
            chi2,
            df,
            p,
        })
    }
}

/// The workers' table, for report.md and workers.csv.
fn table<'a>() -> Table<'a, WorkerResidual> {
    Table::new()
        .column("worker", &["worker"], |r: &WorkerResidual| Entry::same(&r.worker))
        .column("games", &["games"], |r| Entry::same(r.games))
        .column("excess score diff", &["excess"], |r| {
            Entry::new(format!("{:+.3}", r.excess), [r.excess])
        })
        .column("z", &["z"], |r| Entry::new(format!("{:+.2}", r.z), [r.z]))
        .column("flagged", &["flagged"], |r| {
            Entry::new(if r.flagged { "**yes**" } else { "no" }, [r.flagged])
        })
}

/// The section in Markdown.
pub(crate) fn markdown(w: &WorkersReport) -> String {
    let mut s = format!(
        "## Workers\n\nWho played which games (the coordinator's record, `_workers.json`), each worker's games \
         against the median worker's in the same cell of the grid: `z` is the worker's standardised residual \
         (about standard normal when its games come from the same distribution; |z| >= 3 is flagged), chi2 = {:.2} on {} \
         degrees of freedom, p = {:.3}. A flagged worker plays differently from the others: check its machine \
         (cross-checks replay a share of every worker's games; `muggins status` lists workers found wrong).\n\n",
        w.chi2, w.df, w.p
    );
    s.push_str(&table().markdown(&w.workers));
    s.push('\n');
    s
}

/// workers.csv.
pub(crate) fn csv(w: &WorkersReport) -> String {
    table().csv(&w.workers)
}
