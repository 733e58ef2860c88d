//! Beliefs in the report: per (observability, target, engine, belief) the
//! games, mean score difference, win/tie rate and the belief's accuracy
//! (mean log loss, Brier score and, for `model`, effective sample size),
//! and the paired gains of each belief over `uniform` (same engine, same
//! deal and repeat: common random numbers).
//!
//! Pairing keeps only the rows still waiting for their partners: a
//! (cell, deal, repeat) leaves memory once every belief of the grid has
//! been seen there (the grid's belief count is given by the spec; without
//! one, pending rows are kept to the end).

use std::collections::BTreeMap;

use engine::{Belief, Observability, PlayerEngine};
use full::FullTarget;
use serde::{Deserialize, Serialize};

use crate::nan_from_null;
use crate::pairing::Pairing;
use crate::stats::{McNemar, Moments, PairedTest};
use crate::table::{Entry, Table};

/// One belief's games in one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BeliefSummary {
    /// The rule set, with a rules factor; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<String>,
    pub observability: Observability,
    pub target: FullTarget,
    pub engine: PlayerEngine,
    pub belief: Belief,
    pub games: u64,
    #[serde(deserialize_with = "nan_from_null")]
    pub mean_score_diff: f64,
    pub wins_or_ties: u64,
    /// Mean over games of the per-game mean log loss of the belief's
    /// marginals (`None` when the rows carry none: full observation).
    pub log_loss: Option<f64>,
    /// The same for the Brier score.
    pub brier: Option<f64>,
    /// `model`: the mean effective sample size of its pools.
    pub ess: Option<f64>,
    /// Against `uniform` on the same deals (absent for `uniform` itself, or
    /// without `uniform` games): per (deal, repeat), this belief's
    /// score_diff minus uniform's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_gain: Option<PairedTest>,
    /// McNemar on paired win/tie outcomes (b: this belief won or tied and
    /// uniform did not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub win_gain: Option<McNemar>,
}

/// (rule set, observability, target, engine).
type Cell = (Option<String>, Observability, FullTarget, PlayerEngine);

#[derive(Debug, Default)]
struct Acc {
    diff: Moments,
    wins: u64,
    log_loss: Moments,
    brier: Moments,
    ess: Moments,
}

/// Folds the rows that concern beliefs.
#[derive(Debug, Default)]
pub(crate) struct BeliefAcc {
    cells: BTreeMap<(Cell, Belief), Acc>,
    /// Each belief against `uniform` per (cell, deal, repeat); its
    /// `levels` are the grid's beliefs.
    pub(crate) pairing: Pairing<(Cell, u64, u32), (Cell, Belief)>,
}

/// The beliefs' table only where it compares something: two beliefs or
/// more among its rows (one belief alone would repeat the main table), or
/// the DominAI engine's games (which have no other table); else nothing.
pub(crate) fn comparing(rows: Vec<BeliefSummary>) -> Vec<BeliefSummary> {
    let first = rows.first().map(|r| r.belief);
    let compares = rows.iter().any(|r| Some(r.belief) != first);
    if compares || rows.iter().any(|r| r.engine == PlayerEngine::Dominai) {
        rows
    } else {
        Vec::new()
    }
}

impl BeliefAcc {
    /// Whether a row belongs here: every row of a grid with several
    /// beliefs (a `uniform` hand may have had no decision to score), else a
    /// belief other than `uniform`, the DominAI engine, or a decision scored
    /// against the hidden tiles.
    /// A belief applies only where worlds are sampled: full-observation
    /// rows never belong here.
    pub(crate) fn wants(&self, r: &jobs::GameRow) -> bool {
        r.observability == engine::Observability::Partial
            && r.belief.is_some()
            && (self.pairing.levels > 1
                || r.belief != Some(Belief::Uniform)
                || r.engine == PlayerEngine::Dominai
                || r.belief_log_loss.is_some())
    }

    /// Adds a row [`wants`](Self::wants) (one with a belief).
    pub(crate) fn add(&mut self, r: &jobs::GameRow) {
        let Some(belief) = r.belief else { return };
        let cell = (r.rules.clone(), r.observability, r.target, r.engine);
        let a = self.cells.entry((cell.clone(), belief)).or_default();
        a.diff.add(r.score_diff as f64);
        a.wins += r.win_or_tie as u64;
        if let Some(x) = r.belief_log_loss {
            a.log_loss.add(x);
        }
        if let Some(x) = r.belief_brier {
            a.brier.add(x);
        }
        if let Some(x) = r.belief_ess {
            a.ess.add(x);
        }
        self.pairing.add(
            (cell.clone(), r.starting_state, r.repeat),
            (belief != Belief::Uniform).then_some((cell, belief)),
            r.score_diff,
            r.win_or_tie,
        );
    }

    pub(crate) fn finish(&self) -> Vec<BeliefSummary> {
        let mean = |m: &Moments| (m.n > 0).then(|| m.mean());
        self.cells
            .iter()
            .map(|(key, a)| {
                let (score_gain, win_gain) = self.pairing.tests(key);
                let ((rules, observability, target, engine), belief) = key.clone();
                BeliefSummary {
                    rules,
                    observability,
                    target,
                    engine,
                    belief,
                    games: a.diff.n,
                    mean_score_diff: a.diff.mean(),
                    wins_or_ties: a.wins,
                    log_loss: mean(&a.log_loss),
                    brier: mean(&a.brier),
                    ess: mean(&a.ess),
                    score_gain,
                    win_gain,
                }
            })
            .collect()
    }
}

/// The beliefs' table, for report.md and beliefs.csv.
fn table<'a>(rows: &[BeliefSummary]) -> Table<'a, BeliefSummary> {
    let md = |x: Option<f64>, digits: usize| x.map_or("-".to_string(), |x| format!("{x:.digits$}"));
    let csv = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x}"));
    // With a rules factor, a column for the rule set first.
    let sets = rows.iter().any(|r| r.rules.is_some());
    Table::new()
        .column_if(sets, "rules", &["rules"], |r: &BeliefSummary| {
            Entry::same(r.rules.as_deref().unwrap_or(""))
        })
        .column("observe", &["observability"], |r| Entry::same(r.observability))
        .column("target", &["target"], |r| Entry::same(r.target))
        .column("engine", &["engine"], |r| Entry::same(r.engine))
        .column("belief", &["belief"], |r| Entry::same(r.belief.name()))
        .column("games", &["games"], |r| Entry::same(r.games))
        .column("mean diff", &["mean_score_diff"], |r| {
            Entry::new(format!("{:.2}", r.mean_score_diff), [r.mean_score_diff])
        })
        .column("win/tie", &["wins_or_ties"], |r| {
            Entry::new(
                format!("{:.1}%", 100.0 * r.wins_or_ties as f64 / r.games.max(1) as f64),
                [r.wins_or_ties],
            )
        })
        .column("log loss", &["log_loss"], move |r| {
            Entry::new(md(r.log_loss, 4), [csv(r.log_loss)])
        })
        .column("Brier", &["brier"], move |r| Entry::new(md(r.brier, 4), [csv(r.brier)]))
        .column("ESS", &["ess"], move |r| Entry::new(md(r.ess, 1), [csv(r.ess)]))
        .column(
            "score gain [95% CI]",
            &["score_gain", "score_gain_ci_low", "score_gain_ci_high"],
            move |r| {
                let g = r.score_gain.as_ref();
                Entry::new(
                    g.map_or("-".into(), |t| {
                        format!("{:+.2} [{:+.2}, {:+.2}]", t.mean, t.ci_low, t.ci_high)
                    }),
                    [
                        csv(g.map(|t| t.mean)),
                        csv(g.map(|t| t.ci_low)),
                        csv(g.map(|t| t.ci_high)),
                    ],
                )
            },
        )
        .column("p", &["score_gain_p"], move |r| {
            let p = r.score_gain.as_ref().map(|t| t.p);
            Entry::new(p.map_or("-".into(), |p| format!("{p:.3}")), [csv(p)])
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

/// The beliefs' table in Markdown (empty without belief rows).
pub(crate) fn markdown(rows: &[BeliefSummary]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "## Beliefs\n\nWhere partial observation's worlds came from, and how well each belief placed the hidden \
         tiles (mean per-decision log loss and Brier score over the agent's decisions; ESS: the `model` \
         pool's effective sample size). Gains are paired against `uniform` on the same deals: mean score_diff \
         gain with its 95% interval, and McNemar's test on wins/ties (b: only this belief won or tied, c: only \
         uniform).\n\n",
    );
    s += &table(rows).markdown(rows);
    s + "\n"
}

/// beliefs.csv: one line per row of the beliefs' table.
pub(crate) fn csv(rows: &[BeliefSummary]) -> String {
    table(rows).csv(rows)
}
