//! The estimated cost of a game, which `[shards] minutes` sizes shards
//! with: a model of where a game's time goes, its constants measured from
//! the rows' `nodes` and `elapsed_us` of real runs (docs/specs.md,
//! "`[shards] minutes`", has the table and the command).
//!
//! - A thesis game: about 15 us.
//! - A full-game hand: each seat that searches makes about `hand - 2`
//!   searched decisions (the last plays are forced or found exactly before
//!   the budget is spent: measured 5 with hands of 7, 2.5-2.8 with hands of
//!   5); a side searches from each of its seats (both partners, unless
//!   `[search] partner` names a strategy).
//! - A decision: the budget per world (or about 4^depth nodes without one)
//!   times the worlds, at about 12.5 million nodes a second with learned
//!   leaves, 20 million with the score so far, 9 million for ISMCTS.
//! - Adaptive effort (M* and Expectimax under partial observation) stops
//!   a decision's worlds early: about 59% of them at 95%, 77% at 99%
//!   (`muggins bench --suite double6`'s nodes), linear in the level's
//!   normal quantile between and beyond, at least a quarter and at most all.
//! - A match: about one hand per 20 points of its target.

use ::full::FullConfig;
use engine::{DepthLimit, Observability, PlayerEngine, WorldCount};

use super::Spec;
use super::agents::AgentPlay;

/// Nodes a second of a search with learned leaves (one core, this
/// project's 2-core machine, `double6.toml` measured at 12-15 million).
const LEARNED_NODES_PER_SEC: f64 = 12.5e6;
/// With leaves valued by the score so far (`double6-seats.toml`: 15-25 million).
const SCORE_NODES_PER_SEC: f64 = 20.0e6;
/// ISMCTS's positions stepped through a second (block: 9 million).
const ISMCTS_NODES_PER_SEC: f64 = 9.0e6;
/// A thesis game.
const THESIS_GAME_SECS: f64 = 15e-6;
/// The least a full-game hand is taken to cost.
const MIN_GAME_SECS: f64 = 2e-4;

/// The share of a decision's worlds that `engine` searches with adaptive
/// effort at `a` (1 without it, and for ISMCTS, which it does not stop):
/// measured at two levels on the double-6 bench's hands (6,366,560 and
/// 8,266,231 nodes of 10,743,606 at 95% and 99%).
fn adaptive_share(engine: PlayerEngine, a: Option<::full::Adaptive>) -> f64 {
    let (PlayerEngine::MStar | PlayerEngine::Expectimax, Some(a)) = (engine, a) else {
        return 1.0;
    };
    let (z95, z99, s95, s99) = (1.645, 2.326, 0.593, 0.769);
    (s95 + (a.z() - z95) * (s99 - s95) / (z99 - z95)).clamp(0.25, 1.0)
}

/// Searched decisions a seat makes in a hand of `config`.
fn seat_decisions(config: &FullConfig) -> f64 {
    (config.hand as f64 - 2.0).max(1.0)
}

/// Seats of one side.
fn side_seats(config: &FullConfig) -> f64 {
    if config.teams { 2.0 } else { 1.0 }
}

/// Seconds of one searched decision.
fn decision_secs(engine: PlayerEngine, depth: DepthLimit, budget: u64, worlds: u16, learned: bool) -> f64 {
    let depth = match depth {
        DepthLimit::Turns(d) => d as i32,
        DepthLimit::Unlimited => 30,
    };
    let by_depth = 4f64.powi(depth.min(12));
    let per_world = match (engine, budget) {
        // ISMCTS spends its budget whatever the depth.
        (PlayerEngine::Ismcts, b) => b as f64,
        (_, 0) => by_depth,
        (_, b) => (b as f64).min(by_depth),
    };
    let rate = match (engine, learned) {
        (PlayerEngine::Ismcts, _) => ISMCTS_NODES_PER_SEC,
        (_, true) => LEARNED_NODES_PER_SEC,
        (_, false) => SCORE_NODES_PER_SEC,
    };
    per_world * worlds.max(1) as f64 / rate
}

/// The estimated seconds of one game of `spec` on one core, averaged over
/// its grid.
pub(super) fn estimated_game_secs(spec: &Spec) -> f64 {
    let Some(full) = &spec.full else {
        return THESIS_GAME_SECS;
    };
    let configs: Vec<&FullConfig> = if spec.rule_sets.is_empty() {
        vec![&full.config]
    } else {
        spec.rule_sets.iter().map(|s| &s.config).collect()
    };
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    // A side's searched decisions in a hand, averaged over the rule sets;
    // a grid's agent searches alone in seat 0 when its partner is a strategy.
    let side = mean(
        &configs
            .iter()
            .map(|c| side_seats(c) * seat_decisions(c))
            .collect::<Vec<_>>(),
    );
    let alone = mean(&configs.iter().map(|c| seat_decisions(c)).collect::<Vec<_>>());
    let mut hands = Vec::new();
    match &spec.pool {
        Some(pool) => {
            for &(a, o) in &pool.pairings {
                for &obs in &spec.grid.observability {
                    let mut secs = 0.0;
                    for i in [a, o] {
                        if let AgentPlay::Search(crate::spec::AgentSearch { settings: s, .. }) =
                            pool.agents[i as usize].play
                        {
                            let (worlds, share) = if obs == Observability::Partial {
                                (s.worlds, adaptive_share(s.engine, s.adaptive))
                            } else {
                                (1, 1.0)
                            };
                            let depth = DepthLimit::Turns(s.depth);
                            secs += side * share * decision_secs(s.engine, depth, s.budget, worlds, s.learned);
                        }
                    }
                    hands.push(secs);
                }
            }
        }
        None => {
            let k = match spec.search.worlds {
                WorldCount::Sample(k) => k as u16,
                WorldCount::All => 1,
            };
            let budgets: Vec<u64> = if spec.grid.budget.is_empty() {
                vec![full.search.budget]
            } else {
                spec.grid.budget.clone()
            };
            let seats = if full.partner.is_some() { alone } else { side };
            for &o in &spec.grid.observability {
                for &e in &spec.grid.engine {
                    for &b in &budgets {
                        let (worlds, share) = if o == Observability::Partial {
                            (k, adaptive_share(e, full.search.adaptive))
                        } else {
                            (1, 1.0)
                        };
                        let d = decision_secs(e, spec.search.depth, b, worlds, full.search.learned);
                        hands.push(seats * share * d);
                    }
                }
            }
        }
    }
    let per_match = full.match_to.map_or(1.0, |to| (to as f64 / 20.0).max(1.0));
    (mean(&hands) * per_match).max(MIN_GAME_SECS)
}
