//! Per-cell summaries of game rows: what `muggins run` prints at the end.

use std::collections::BTreeMap;
use std::fmt::Write;

use engine::{Observability, PlayerEngine, TargetKind};

use crate::exec::GameRow;
use crate::spec::Source;

/// One cell of the grid: (information source, observability, target, engine).
#[derive(Clone, Debug, PartialEq)]
pub struct CellSummary {
    pub information_source: Source,
    pub observability: Observability,
    pub target: TargetKind,
    pub engine: PlayerEngine,
    pub games: u64,
    pub mean_score_diff: f64,
    pub wins_or_ties: u64,
    pub predictions: u64,
    pub predictions_correct: u64,
}

/// Summaries per cell, in a stable order.
pub fn summarize<'a>(rows: impl IntoIterator<Item = &'a GameRow>) -> Vec<CellSummary> {
    #[derive(Default)]
    struct Acc {
        games: u64,
        diff: i64,
        wins: u64,
        pred: u64,
        correct: u64,
    }
    let mut cells: BTreeMap<(Source, u8, TargetKind, u8), Acc> = BTreeMap::new();
    for r in rows {
        let key = (r.information_source, r.observability as u8, r.target, r.engine as u8);
        let a = cells.entry(key).or_default();
        a.games += 1;
        a.diff += r.score_diff as i64;
        a.wins += r.win_or_tie as u64;
        a.pred += r.predictions as u64;
        a.correct += r.predictions_correct as u64;
    }
    cells
        .into_iter()
        .map(|((s, o, t, e), a)| CellSummary {
            information_source: s,
            observability: if o == Observability::Full as u8 {
                Observability::Full
            } else {
                Observability::Partial
            },
            target: t,
            engine: if e == PlayerEngine::MStar as u8 {
                PlayerEngine::MStar
            } else {
                PlayerEngine::Expectimax
            },
            games: a.games,
            mean_score_diff: a.diff as f64 / a.games as f64,
            wins_or_ties: a.wins,
            predictions: a.pred,
            predictions_correct: a.correct,
        })
        .collect()
}

impl CellSummary {
    /// A fixed-width table of cells.
    pub fn table(cells: &[CellSummary]) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<10} {:<8} {:<9} {:<10} {:>9} {:>11} {:>10} {:>9}",
            "source", "observe", "target", "engine", "games", "mean diff", "win/tie", "accuracy"
        );
        for c in cells {
            let acc = if c.predictions > 0 {
                format!("{:.1}%", 100.0 * c.predictions_correct as f64 / c.predictions as f64)
            } else {
                "-".into()
            };
            let _ = writeln!(
                s,
                "{:<10} {:<8} {:<9} {:<10} {:>9} {:>11.4} {:>10} {:>9}",
                c.information_source.name(),
                c.observability.to_string(),
                c.target.to_string(),
                c.engine.to_string(),
                c.games,
                c.mean_score_diff,
                c.wins_or_ties,
                acc
            );
        }
        s
    }
}
