//! Named agents in the report (docs/analysis.md, "Agents, Elo and SPRT"):
//! per pairing the games, wins/ties/losses, the mean score difference with
//! its 95% interval, and over paired deals (the same deal with the sides
//! swapped) the pentanomial counts and the pairing's logistic Elo with its
//! interval; over the pool a Bradley-Terry fit (Elo, 95% intervals, the
//! likelihood of superiority of each agent over the next); and the SPRT's
//! verdict and LLR trace when the spec has `[stop]`.
//!
//! Memory: a game waits only for its pair's other game (the next index),
//! so at most one row per pairing is pending; the cells are one per
//! (agent, opponent, observability).
//!
//! This module owns the report's types and the fold over the rows; the fit
//! is in `bradley_terry`, the Markdown, CSV and plots in `render`.

use std::collections::{BTreeMap, HashMap};

use engine::Observability;
use jobs::sprt::{PairStats, TracePoint, Verdict};
use serde::{Deserialize, Serialize};

use crate::nan_from_null;
use crate::stats::{self, Moments};

mod bradley_terry;
mod render;

pub use bradley_terry::{Game, bradley_terry};
pub(crate) use render::{clamp_note, csv, elo_csv, elo_plot, f1, markdown, sprt_plot};

/// One pairing's games (the agent's point of view).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingSummary {
    pub agent: String,
    pub opponent: String,
    pub observability: Observability,
    pub games: u64,
    pub wins: u64,
    pub ties: u64,
    pub losses: u64,
    #[serde(deserialize_with = "nan_from_null")]
    pub mean_score_diff: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_high: f64,
    /// Pairs (both seatings of a deal) whose agent scored 0, 1/2, 1, 3/2, 2.
    pub penta: [u64; 5],
    /// Logistic Elo from the pairs' score, with its 95% interval (a pair
    /// one observation); absent without pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elo: Option<[f64; 3]>,
}

/// One agent's Bradley-Terry rating over the pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub name: String,
    /// Elo, the pool's mean at 0.
    #[serde(deserialize_with = "nan_from_null")]
    pub elo: f64,
    /// The 95% interval (NaN when the pool's games do not connect it).
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_high: f64,
    pub games: u64,
    /// Its points (wins and half the ties) over its games.
    #[serde(deserialize_with = "nan_from_null")]
    pub score: f64,
    /// The likelihood that it is stronger than the next agent down the
    /// table (absent for the last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub los_next: Option<f64>,
}

/// The SPRT's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtReport {
    /// `elo` or `diff`.
    pub on: String,
    pub h0: f64,
    pub h1: f64,
    pub alpha: f64,
    pub beta: f64,
    /// The LLR's bounds: accept H0 at or below `lower`, H1 at or above `upper`.
    pub lower: f64,
    pub upper: f64,
    pub verdict: Verdict,
    #[serde(deserialize_with = "nan_from_null")]
    pub llr: f64,
    pub pairs: u64,
    /// Games the test used (two a pair, up to the deciding one), games the
    /// experiment kept (every shard up to the one holding the deciding
    /// pair) and games the full grid holds.
    pub games: u64,
    #[serde(default)]
    pub kept_games: u64,
    pub grid_games: u64,
    pub penta: [u64; 5],
    /// Elo of the agent over the opponent with its 95% interval.
    pub elo: [f64; 3],
    /// The LLR after every pair, in game order.
    pub trace: Vec<TracePoint>,
}

impl SprtReport {
    /// One line: `LLR 6.29 (bounds -2.94, +2.94): H1 accepted after 18
    /// pairs (36 games)`.
    pub fn line(&self) -> String {
        format!(
            "LLR {:.2} (bounds {:+.2}, {:+.2}): {} after {} pairs ({} games)",
            self.llr,
            self.lower,
            self.upper,
            self.verdict.words(),
            self.pairs,
            self.games
        )
    }
}

/// Two agents against one opponent on the same deals and seatings: the
/// paired difference of their score differences (`a` minus `b`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentComparison {
    pub a: String,
    pub b: String,
    pub opponent: String,
    pub observability: Observability,
    pub test: stats::PairedTest,
}

/// The tournament part of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentReport {
    /// `cross`, `round-robin` or `gauntlet`.
    pub format: String,
    pub pairings: Vec<PairingSummary>,
    /// Every two agents that faced one opponent on the same deals.
    #[serde(default)]
    pub comparisons: Vec<AgentComparison>,
    /// Best first.
    pub ratings: Vec<Rating>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtReport>,
    /// The agents that are programs outside muggins (docs/agents.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external: Vec<String>,
    /// Games forfeited, per agent and reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forfeits: Vec<ForfeitCount>,
}

/// Games an external agent forfeited for one reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForfeitCount {
    pub agent: String,
    /// `illegal`, `time`, `crash` or `protocol`.
    pub reason: String,
    pub games: u64,
}

type Cell = (String, String, Observability);

#[derive(Debug, Default)]
struct Acc {
    diff: Moments,
    wins: u64,
    ties: u64,
    losses: u64,
    pairs: PairStats,
}

/// Folds the rows of an agents grid.
#[derive(Debug, Default)]
pub(crate) struct TournamentAcc {
    cells: BTreeMap<Cell, Acc>,
    /// A pair's first game, waiting for the second: index / 2 -> diff.
    pending: HashMap<u64, i32>,
    /// Whether the grid plays paired deals.
    pub(crate) paired: bool,
    /// The games of one (rule set, observability, deal, repeat): every pairing's
    /// (agent, opponent, seating, score difference). The grid puts them
    /// together, so only one group is held at a time.
    group: Option<(GroupKey, Vec<GroupGame>)>,
    compared: BTreeMap<(String, String, String, Observability), Moments>,
    /// Games forfeited: (agent, reason) -> games.
    forfeits: BTreeMap<(String, String), u64>,
    /// The pool's external agents, from the spec.
    pub(crate) external: Vec<String>,
}

/// The side that gave a forfeited game up: the forfeiting side scores 0 and
/// the other the game's maximum (`jobs`' forfeit row), so the agent forfeited
/// when its difference is negative. An external agent may sit on either side
/// (`[grid] agents` or `opponents`).
fn forfeiter<'a>(r: &jobs::GameRow, agent: &'a String, opponent: &'a String) -> &'a String {
    if r.score_diff < 0 { agent } else { opponent }
}

/// (rule set, observability, deal, repeat).
type GroupKey = (Option<String>, Observability, u64, u32);
/// (agent, opponent, seating, score difference).
type GroupGame = (String, String, Option<u32>, i32);

impl TournamentAcc {
    pub(crate) fn add(&mut self, r: &jobs::GameRow) {
        let (Some(a), Some(o)) = (&r.agent, &r.opponent) else {
            return;
        };
        if let Some(f) = &r.forfeit {
            *self
                .forfeits
                .entry((forfeiter(r, a, o).clone(), f.clone()))
                .or_default() += 1;
        }
        let key = (r.rules.clone(), r.observability, r.starting_state, r.repeat);
        if self.group.as_ref().is_some_and(|(k, _)| *k != key) {
            self.flush();
        }
        self.group
            .get_or_insert_with(|| (key, Vec::new()))
            .1
            .push((a.clone(), o.clone(), r.agent_side, r.score_diff));
        let acc = self.cells.entry((a.clone(), o.clone(), r.observability)).or_default();
        acc.diff.add(r.score_diff as f64);
        match r.score_diff.signum() {
            1 => acc.wins += 1,
            0 => acc.ties += 1,
            _ => acc.losses += 1,
        }
        // A paired grid numbers a deal's two seatings 2k (side 0) and 2k + 1
        // (side 1), neighbours in one shard.
        if !self.paired || r.agent_side != Some((r.game_index % 2) as u32) {
            return;
        }
        let key = r.game_index / 2;
        match self.pending.remove(&key) {
            Some(first) => acc.pairs.add_pair(first, r.score_diff),
            None if r.game_index.is_multiple_of(2) => {
                self.pending.insert(key, r.score_diff);
            }
            None => {}
        }
    }

    /// Compares the agents of the group just completed that faced the same opponent.
    fn flush(&mut self) {
        let Some(((_, obs, ..), games)) = self.group.take() else {
            return;
        };
        for (i, (a, o, side, d)) in games.iter().enumerate() {
            for (b, o2, side2, e) in &games[i + 1..] {
                if o == o2 && side == side2 && a != b {
                    let (x, y, diff) = if a < b { (a, b, d - e) } else { (b, a, e - d) };
                    self.compared
                        .entry((x.clone(), y.clone(), o.clone(), obs))
                        .or_default()
                        .add(diff as f64);
                }
            }
        }
    }

    pub(crate) fn finish(&mut self, format: &str) -> Option<TournamentReport> {
        self.flush();
        if self.cells.is_empty() {
            return None;
        }
        let comparisons = self
            .compared
            .iter()
            .map(|((a, b, o, obs), m)| AgentComparison {
                a: a.clone(),
                b: b.clone(),
                opponent: o.clone(),
                observability: *obs,
                test: stats::paired_test(m),
            })
            .collect();
        let pairings: Vec<PairingSummary> = self
            .cells
            .iter()
            .map(|((a, o, obs), c)| {
                let t = stats::paired_test(&c.diff);
                PairingSummary {
                    agent: a.clone(),
                    opponent: o.clone(),
                    observability: *obs,
                    games: c.diff.n,
                    wins: c.wins,
                    ties: c.ties,
                    losses: c.losses,
                    mean_score_diff: c.diff.mean(),
                    ci_low: t.ci_low,
                    ci_high: t.ci_high,
                    penta: c.pairs.penta,
                    elo: (self.paired && c.pairs.pairs() > 0).then(|| {
                        let (e, lo, hi) = c.pairs.elo();
                        [e, lo, hi]
                    }),
                }
            })
            .collect();
        let mut games: Vec<Game> = Vec::new();
        for p in &pairings {
            games.push(Game {
                a: p.agent.clone(),
                b: p.opponent.clone(),
                score_a: p.wins as f64 + p.ties as f64 / 2.0,
                n: p.games as f64,
            });
        }
        Some(TournamentReport {
            format: format.to_string(),
            pairings,
            comparisons,
            ratings: bradley_terry(&games),
            sprt: None,
            external: self.external.clone(),
            forfeits: self
                .forfeits
                .iter()
                .map(|((agent, reason), &games)| ForfeitCount {
                    agent: agent.clone(),
                    reason: reason.clone(),
                    games,
                })
                .collect(),
        })
    }
}

/// The SPRT part of the report from the pairs of the shards it walked.
pub(crate) fn sprt_report(sprt: &jobs::Sprt, walk: jobs::sprt::Walk, kept_games: u64, grid_games: u64) -> SprtReport {
    let (lower, upper) = sprt.bounds();
    let total = *walk.total();
    let (e, lo, hi) = if total.pairs() > 0 {
        total.elo()
    } else {
        (f64::NAN, f64::NAN, f64::NAN)
    };
    SprtReport {
        on: match sprt.on {
            jobs::SprtOn::Elo => "elo".into(),
            jobs::SprtOn::ScoreDiff => "diff".into(),
        },
        h0: sprt.h0,
        h1: sprt.h1,
        alpha: sprt.alpha,
        beta: sprt.beta,
        lower,
        upper,
        verdict: walk.verdict,
        llr: walk.llr,
        pairs: total.pairs(),
        games: 2 * total.pairs(),
        kept_games,
        grid_games,
        penta: total.penta,
        elo: [e, lo, hi],
        trace: walk.trace,
    }
}
