//! Shaping in the report (docs/prediction.md): per (observability, target,
//! engine, budget, shaping) the games, mean score difference, win/tie rate
//! and mean nodes a game, and each shaping's paired gains over plain search
//! (`none`: same engine, same deal and repeat, the same node budget).
//!
//! Pairing keeps only the rows still waiting for their partners: a (cell,
//! deal, repeat) leaves memory once every level of the grid has been seen
//! there (the grid's level count is given by the spec; without one, pending
//! rows are kept to the end).

use std::collections::BTreeMap;

use engine::{Observability, PlayerEngine};
use full::FullTarget;
use jobs::ShapingLevel;
use serde::{Deserialize, Serialize};

use crate::nan_from_null;
use crate::pairing::Pairing;
use crate::stats::{self, McNemar, Moments, PairedTest};
use crate::table::{Entry, Table};

/// One shaping's games in one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapingSummary {
    /// The rule set, with a rules factor; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<String>,
    pub observability: Observability,
    pub target: FullTarget,
    pub engine: PlayerEngine,
    /// The node budget, where the grid lists several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    /// `none`, or `prune/logit`, `asymmetric/dbn`, `expect/naive-bayes`, ...
    pub shaping: String,
    pub games: u64,
    #[serde(deserialize_with = "nan_from_null")]
    pub mean_score_diff: f64,
    /// The 95% interval of the mean score difference.
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_high: f64,
    pub wins_or_ties: u64,
    /// Mean nodes the agent's searches spent a game.
    #[serde(deserialize_with = "nan_from_null")]
    pub mean_nodes: f64,
    /// Against `none` on the same deals: this shaping's score_diff minus
    /// plain search's (absent for `none`, or without `none` games).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_gain: Option<PairedTest>,
    /// McNemar on paired win/tie outcomes (b: only this shaping won or tied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub win_gain: Option<McNemar>,
}

/// (rule set, observability, target, engine, budget).
type Cell = (Option<String>, Observability, FullTarget, PlayerEngine, Option<u64>);

#[derive(Debug, Default)]
struct Acc {
    diff: Moments,
    nodes: Moments,
    wins: u64,
}

/// Folds the rows of grids with a shaping.
#[derive(Debug, Default)]
pub(crate) struct ShapingAcc {
    cells: BTreeMap<(Cell, String), Acc>,
    /// Each shaping against `none` per (cell, belief, deal, repeat); its
    /// `levels` are the grid's shaping levels.
    pub(crate) pairing: Pairing<(Cell, engine::Belief, u64, u32), (Cell, String)>,
    /// Whether any row was shaped (else the report has no shaping table).
    shaped: bool,
}

impl ShapingAcc {
    /// Whether a row belongs here: every row of a grid with several levels
    /// or several budgets (plain search is the baseline), and every shaped
    /// row.
    pub(crate) fn wants(&self, r: &jobs::GameRow) -> bool {
        self.pairing.levels > 1 || r.shaping != ShapingLevel::NONE || r.budget.is_some()
    }

    /// Adds a row; `belief` is its grid coordinate (a full-observation row
    /// names none, but the grid plays it once per belief level).
    pub(crate) fn add(&mut self, r: &jobs::GameRow, belief: engine::Belief) {
        let cell = (r.rules.clone(), r.observability, r.target, r.engine, r.budget);
        let name = r.shaping.name();
        self.shaped |= r.shaping != ShapingLevel::NONE;
        let a = self.cells.entry((cell.clone(), name.clone())).or_default();
        a.diff.add(r.score_diff as f64);
        a.nodes.add(r.nodes as f64);
        a.wins += r.win_or_tie as u64;
        self.pairing.add(
            (cell.clone(), belief, r.starting_state, r.repeat),
            (r.shaping != ShapingLevel::NONE).then_some((cell, name)),
            r.score_diff,
            r.win_or_tie,
        );
    }

    pub(crate) fn finish(&self) -> Vec<ShapingSummary> {
        if !self.shaped {
            return Vec::new();
        }
        self.cells
            .iter()
            .map(|((cell, shaping), a)| {
                let (score_gain, win_gain) = self.pairing.tests(&(cell.clone(), shaping.clone()));
                let (rules, observability, target, engine, budget) = cell.clone();
                let t = stats::paired_test(&a.diff);
                ShapingSummary {
                    rules,
                    observability,
                    target,
                    engine,
                    budget,
                    shaping: shaping.clone(),
                    games: a.diff.n,
                    mean_score_diff: a.diff.mean(),
                    ci_low: t.ci_low,
                    ci_high: t.ci_high,
                    wins_or_ties: a.wins,
                    mean_nodes: a.nodes.mean(),
                    score_gain,
                    win_gain,
                }
            })
            .collect()
    }
}

/// shaping.svg: per cell with more than one level, each shaping's mean
/// score difference (95% interval) against the mean nodes a game its
/// searches spent, over the grid's budgets: where a shaping's line lies
/// above plain search's, it buys more for the same nodes (the Pareto front).
/// Cells where every level played the same games are left out.
pub(crate) fn plot(rows: &[ShapingSummary]) -> Option<String> {
    let mut cells: Vec<(Option<&str>, Observability, FullTarget, PlayerEngine)> = Vec::new();
    for r in rows {
        let c = (r.rules.as_deref(), r.observability, r.target, r.engine);
        if !cells.contains(&c) {
            cells.push(c);
        }
    }
    let mut panels = Vec::new();
    for c in &cells {
        let mut series: Vec<(String, Vec<crate::svg::Point>)> = Vec::new();
        for r in rows
            .iter()
            .filter(|r| (r.rules.as_deref(), r.observability, r.target, r.engine) == *c)
        {
            let p = crate::svg::Point {
                x: r.mean_nodes,
                y: r.mean_score_diff,
                lo: r.ci_low,
                hi: r.ci_high,
            };
            match series.iter_mut().find(|(n, _)| *n == r.shaping) {
                Some((_, v)) => v.push(p),
                None => series.push((r.shaping.clone(), vec![p])),
            }
        }
        // A panel where every shaping played the same games (M* against a
        // deterministic strategy: no opponent node to shape) shows one line.
        let same = series
            .windows(2)
            .all(|w| w[0].1.len() == w[1].1.len() && w[0].1.iter().zip(&w[1].1).all(|(a, b)| a.x == b.x && a.y == b.y));
        // Plain search first: it is the baseline (black) in every panel.
        series.sort_by_key(|(n, _)| n != "none");
        if series.len() > 1 && !same {
            panels.push(crate::svg::Panel {
                title: match c.0 {
                    Some(set) => format!("{set}: {}, {} ({})", c.2, c.3, c.1),
                    None => format!("{}, {} ({})", c.2, c.3, c.1),
                },
                series,
            });
        }
    }
    if panels.is_empty() {
        return None;
    }
    let budgets = rows
        .iter()
        .filter_map(|r| r.budget)
        .collect::<std::collections::BTreeSet<_>>();
    Some(crate::svg::panels(
        "Shaping: mean score difference against nodes searched (95% intervals)",
        "nodes per game (log scale)",
        "mean score difference",
        budgets.len() > 1,
        &panels,
    ))
}

/// The predictors' held-out evaluation in Markdown (top-N and log loss per
/// model and strategy).
pub(crate) fn prediction_markdown(p: &jobs::predictors::PredictionReport) -> String {
    let t = &p.training;
    let mut s = format!(
        "## Prediction\n\nThe opponent-move predictors the fit stage trained (seed 004's setting: in each of {} \
         hands a strategy, seed {}, {} seats, one seat plays the strategy and the others play at random; a fifth \
         more hands held out; artifact `{}`). Top-N: the share of held-out decisions whose play was among the \
         model's N most probable (`prediction.svg` plots the curves); log loss: the mean -ln P(the play made).\n\n\
         | model | target | decisions | plays |",
        t.hands,
        t.seed,
        t.seats,
        &p.hash[..12.min(p.hash.len())]
    );
    let n = p.holdout.first().map_or(0, |h| h.top_n.len());
    for k in 1..=n {
        s += &format!(" top-{k} |");
    }
    s += " log loss |\n|---|---|---|---|";
    for _ in 0..n {
        s += "---|";
    }
    s += "---|\n";
    for h in &p.holdout {
        s += &format!("| {} | {} | {} | {:.2} |", h.model, h.target, h.decisions, h.mean_plays);
        for v in &h.top_n {
            s += &format!(" {:.1}% |", 100.0 * v);
        }
        s += &format!(" {:.4} |\n", h.log_loss);
    }
    // Seed 004's confidence contours from the same curves.
    s += "\nConfidence contours (seed 004): the plays N kept at each opponent node so that every actual \
          opponent play of a search `d` plies deep stays searched with probability 0.9 (top-N^(d/2) >= 0.9), \
          and the nodes that search needs against a full one (branching: the mean plays).\n\n\
          | model | target | d = 4: N | nodes / full | d = 8: N | nodes / full |\n|---|---|---|---|---|---|\n";
    for h in &p.holdout {
        let cell = |d: u32| match full::predict::confidence_nodes(&h.top_n, h.mean_plays, h.mean_plays, d, 0.9) {
            Some((n, nodes, full)) => format!("{n} | {nodes:.0} / {full:.0}"),
            None => "- | not reached".to_string(),
        };
        s += &format!("| {} | {} | {} | {} |\n", h.model, h.target, cell(4), cell(8));
    }
    s + "\n"
}

/// prediction.csv: one line per model and strategy.
pub(crate) fn prediction_csv(p: &jobs::predictors::PredictionReport) -> String {
    let n = p.holdout.first().map_or(0, |h| h.top_n.len());
    let mut s = String::from("model,target,decisions,mean_plays");
    for k in 1..=n {
        s += &format!(",top_{k}");
    }
    s += ",log_loss\n";
    for h in &p.holdout {
        s += &format!("{},{},{},{}", h.model, h.target, h.decisions, h.mean_plays);
        for v in &h.top_n {
            s += &format!(",{v}");
        }
        s += &format!(",{}\n", h.log_loss);
    }
    s
}

/// prediction.svg: the top-N curves, one panel per strategy, one line per model.
pub(crate) fn prediction_plot(p: &jobs::predictors::PredictionReport) -> String {
    let mut panels: Vec<crate::svg::Panel> = Vec::new();
    for h in &p.holdout {
        let pts: Vec<crate::svg::Point> = h
            .top_n
            .iter()
            .enumerate()
            .map(|(k, v)| crate::svg::Point {
                x: (k + 1) as f64,
                y: 100.0 * v,
                lo: 100.0 * v,
                hi: 100.0 * v,
            })
            .collect();
        match panels.iter_mut().find(|q| q.title == h.target) {
            Some(q) => q.series.push((h.model.clone(), pts)),
            None => panels.push(crate::svg::Panel {
                title: h.target.clone(),
                series: vec![(h.model.clone(), pts)],
            }),
        }
    }
    crate::svg::panels(
        "Held-out top-N curves: the actual play among the model's N most probable",
        "N (plays kept)",
        "share of decisions (%)",
        false,
        &panels,
    )
}

/// The shaping table, for report.md and shaping.csv.
fn table<'a>(rows: &[ShapingSummary]) -> Table<'a, ShapingSummary> {
    let csv = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x}"));
    // With a rules factor, a column for the rule set first.
    let sets = rows.iter().any(|r| r.rules.is_some());
    Table::new()
        .column_if(sets, "rules", &["rules"], |r: &ShapingSummary| {
            Entry::same(r.rules.as_deref().unwrap_or(""))
        })
        .column("observe", &["observability"], |r| Entry::same(r.observability))
        .column("target", &["target"], |r| Entry::same(r.target))
        .column("engine", &["engine"], |r| Entry::same(r.engine))
        .column("budget", &["budget"], |r| {
            Entry::new(
                r.budget.map_or("spec's".to_string(), |b| b.to_string()),
                [r.budget.map_or(String::new(), |b| b.to_string())],
            )
        })
        .column("shaping", &["shaping"], |r| Entry::same(&r.shaping))
        .column("games", &["games"], |r| Entry::same(r.games))
        .column(
            "mean diff",
            &["mean_score_diff", "mean_score_diff_ci_low", "mean_score_diff_ci_high"],
            |r| {
                Entry::new(
                    format!("{:.2}", r.mean_score_diff),
                    [r.mean_score_diff, r.ci_low, r.ci_high],
                )
            },
        )
        .column("win/tie", &["wins_or_ties"], |r| {
            Entry::new(
                format!("{:.1}%", 100.0 * r.wins_or_ties as f64 / r.games.max(1) as f64),
                [r.wins_or_ties],
            )
        })
        .column("nodes/game", &["mean_nodes"], |r| {
            Entry::new(format!("{:.0}", r.mean_nodes), [r.mean_nodes])
        })
        .column(
            "score gain [95% CI]",
            &["score_gain", "score_gain_ci_low", "score_gain_ci_high"],
            move |r| {
                let g = r.score_gain.as_ref();
                let text = match g {
                    None => "-".into(),
                    // Every paired game came out the same: nothing was shaped.
                    Some(t) if t.all_equal() => "identical".into(),
                    Some(t) => format!("{:+.2} [{:+.2}, {:+.2}]", t.mean, t.ci_low, t.ci_high),
                };
                Entry::new(
                    text,
                    [
                        csv(g.map(|t| t.mean)),
                        csv(g.map(|t| t.ci_low)),
                        csv(g.map(|t| t.ci_high)),
                    ],
                )
            },
        )
        .column("p", &["score_gain_p"], move |r| {
            let g = r.score_gain.as_ref();
            let text = match g {
                Some(t) if !t.all_equal() => format!("{:.3}", t.p),
                _ => "-".into(),
            };
            Entry::new(text, [csv(g.map(|t| t.p))])
        })
        .column("wins b/c", &["win_gain_b", "win_gain_c"], |r| match &r.win_gain {
            Some(m) => Entry::new(format!("{}/{}", m.b, m.c), [m.b, m.c]),
            None => Entry::new("-", ["", ""]),
        })
        .column("p", &["win_gain_p"], move |r| {
            let p = r.win_gain.as_ref().map(|m| m.p);
            Entry::new(p.map_or("-".into(), |p| format!("{p:.3}")), [csv(p)])
        })
}

/// The shaping table in Markdown (empty without shaping rows).
pub(crate) fn markdown(rows: &[ShapingSummary]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "## Shaping\n\nHow the search spent its nodes at opponents' nodes, shaped by a prediction of their play \
         (docs/prediction.md). Every shaping searches under the same node budget; gains are paired against \
         plain search (`none`) on the same deals: mean score_diff gain with its 95% interval, and McNemar's \
         test on wins/ties (b: only this shaping won or tied, c: only plain search). `shaping.svg` plots each \
         shaping's mean score difference against the nodes it spent, over the grid's budgets (cells where every \
         shaping played the same games are left out).\n\n",
    );
    s += &table(rows).markdown(rows);
    s + "\n"
}

/// shaping.csv: one line per row of the shaping table.
pub(crate) fn csv(rows: &[ShapingSummary]) -> String {
    table(rows).csv(rows)
}
