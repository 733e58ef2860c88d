//! Aggregation: one pass over the rows, keeping per-cell moments and only the
//! unpaired half of each (starting state, repeat) pair in memory. The
//! report's types and the fold live here; reading an experiment directory
//! (partitions, spec, side files) is `read`.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use engine::Observability;
use full::FullTarget;
use jobs::Source;
use jobs::training::Report as ClassifierReport;
use serde::{Deserialize, Deserializer, Serialize};

use crate::nan_from_null;
use crate::stats::{self, BinomialTest, DiffOfMeans, McNemar, Moments, PairedTest};

mod read;
pub use read::{build, build_live};

/// What one engine did in one cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineSummary {
    pub games: u64,
    #[serde(deserialize_with = "nan_from_null")]
    pub mean_score_diff: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub var_score_diff: f64,
    pub wins_or_ties: u64,
    pub predictions: u64,
    pub predictions_correct: u64,
    /// predictions_correct / predictions (AC_OM), when any were made.
    pub accuracy: Option<f64>,
    /// score_diff -> games.
    pub histogram: BTreeMap<i32, u64>,
}

/// One cell: information source x observability x target, both engines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellReport {
    /// The rule set, with a rules factor (`[grid] rules`); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<String>,
    #[serde(deserialize_with = "source_by_name")]
    pub information_source: Source,
    pub observability: Observability,
    pub target: FullTarget,
    /// The node budget, where the grid lists several (each its own cell);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    pub mstar: EngineSummary,
    pub expectimax: EngineSummary,
    /// ISMCTS's games in this cell (full-game specs that ask for it), apart
    /// from the M*-versus-Expectimax tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ismcts: Option<EngineSummary>,
    /// Eq. 10 on score differences (one-tailed, M* > EM).
    pub score_test: DiffOfMeans,
    /// Eq. 11 on win/tie totals (two-tailed).
    pub win_test: BinomialTest,
    /// Per (starting state, repeat): M* score_diff - EM score_diff.
    pub paired: PairedTest,
    pub mcnemar: McNemar,
    /// Games of one engine with no partner of the other.
    pub unpaired: u64,
}

impl Report {
    /// The cells' rule sets in the grid's order (the cells come ordered by
    /// it); `[None]` without a rules factor.
    pub fn rule_sets(&self) -> Vec<Option<&str>> {
        let mut sets: Vec<Option<&str>> = Vec::new();
        for c in &self.cells {
            if !sets.contains(&c.rules.as_deref()) {
                sets.push(c.rules.as_deref());
            }
        }
        sets
    }
}

/// Expectimax ignores the information source: its games must not depend on it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consistency {
    /// Expectimax games compared across sources.
    pub compared: u64,
    /// Those whose score or move list differed.
    pub mismatches: u64,
}

/// The whole report's numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub experiment: String,
    pub games: u64,
    pub cells: Vec<CellReport>,
    pub consistency: Consistency,
    /// `classifier/report.json`, when the experiment has one.
    pub classifier: Option<ClassifierReport>,
    /// The full game's rules, for an experiment beyond the thesis's rules
    /// (no thesis numbers apply); absent for the thesis's rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<String>,
    /// Per belief (and the DominAI engine): games, accuracy and paired
    /// gains over `uniform` (docs/beliefs.md); empty for grids without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beliefs: Vec<crate::beliefs::BeliefSummary>,
    /// Per shaping of the search: games, nodes and paired gains over plain
    /// search (docs/prediction.md); empty for grids without one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shaping: Vec<crate::shaping::ShapingSummary>,
    /// `prediction/report.json`, when the experiment's fit stage trained
    /// the opponent-move predictors of a shaped search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<jobs::predictors::PredictionReport>,
    /// Named agents (`[grid] agents`): pairings, pentanomial counts, the
    /// pool's Elo and the SPRT (docs/analysis.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<crate::tournament::TournamentReport>,
    /// Every factor that varies, level by level (marginal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub factors: Vec<crate::factors::FactorLevel>,
    /// The experiment's seed, when the directory names its spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Per-worker residuals, when the coordinator recorded who played what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<crate::workers::WorkersReport>,
}

/// `jobs::Source` is written by its name; this reads it back.
fn source_by_name<'de, D: Deserializer<'de>>(d: D) -> Result<Source, D::Error> {
    String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
}

#[derive(Debug, Default)]
struct EngineAcc {
    m: Moments,
    wins: u64,
    predictions: u64,
    correct: u64,
    hist: BTreeMap<i32, u64>,
}

impl EngineAcc {
    fn summary(&self) -> EngineSummary {
        EngineSummary {
            games: self.m.n,
            mean_score_diff: self.m.mean(),
            var_score_diff: self.m.var_pop(),
            wins_or_ties: self.wins,
            predictions: self.predictions,
            predictions_correct: self.correct,
            accuracy: (self.predictions > 0).then(|| self.correct as f64 / self.predictions as f64),
            histogram: self.hist.clone(),
        }
    }
}

#[derive(Debug, Default)]
struct PairAcc {
    d: Moments,
    b: u64,
    c: u64,
}

/// A cell of the grid, ordered as Table 6: observability (full first), then
/// source, then target in the spec's order (with a rules factor, the rule
/// set first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct CellKey {
    /// The rule set: 0 without a rules factor, else 1 + its place in
    /// `Accumulator::rule_sets` (the grid's order, as the rows come).
    rules: u16,
    source: Source,
    observability: Observability,
    /// The target's place in `Accumulator::targets` (the spec's order, as
    /// the rows first show them).
    target_order: u16,
    target: FullTarget,
    /// The node budget where the grid lists several (`[search] budget =
    /// [...]`), 0 otherwise: each budget is a cell of its own.
    budget: u64,
}

impl CellKey {
    fn rank(&self) -> (u16, bool, Source, u16, u64) {
        (
            self.rules,
            self.observability == Observability::Partial,
            self.source,
            self.target_order,
            self.budget,
        )
    }
}

impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// (observability, target, budget, starting state, repeat) of an
/// Expectimax game.
type EmKey = (Observability, FullTarget, u64, u64, u32);

/// Folds rows into the report's numbers.
#[derive(Debug, Default)]
pub struct Accumulator {
    experiment: String,
    games: u64,
    engines: BTreeMap<(CellKey, bool), EngineAcc>,
    /// ISMCTS's games by cell (not paired: the tests compare M* with Expectimax).
    ismcts: BTreeMap<CellKey, EngineAcc>,
    pairs: BTreeMap<CellKey, PairAcc>,
    /// Unpaired halves: (cell, state, repeat) -> (is_mstar, score_diff, win).
    pending: HashMap<(CellKey, u64, u32), (bool, i32, bool)>,
    /// Expectimax games seen: (observability, target, state, repeat) -> (source, score, moves hash).
    em_seen: HashMap<EmKey, (Source, i32, u64)>,
    consistency: Consistency,
    beliefs: crate::beliefs::BeliefAcc,
    shaping: crate::shaping::ShapingAcc,
    tournament: crate::tournament::TournamentAcc,
    /// How the agents' pairings were made (`cross` without a spec).
    format: String,
    workers: crate::workers::WorkerAcc,
    factors: crate::factors::FactorAcc,
    /// The rule sets of a rules factor, as the rows name them.
    rule_sets: Vec<String>,
    /// The targets in the order the rows first show them (the spec's).
    targets: Vec<FullTarget>,
    /// The spec, when its grid lists several beliefs (`set_grid_beliefs`).
    grid_spec: Option<Box<jobs::Spec>>,
}

fn moves_hash(moves: &str) -> u64 {
    // FNV-1a: enough to compare two move lists.
    moves.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

impl Accumulator {
    /// Folds in one row of `experiment` (the first row names the report's experiment).
    pub fn add(&mut self, experiment: &str, r: &jobs::GameRow) {
        if self.experiment.is_empty() {
            self.experiment = experiment.to_string();
        }
        self.games += 1;
        let belief = self.belief_of(r);
        self.workers.add(r, belief);
        self.factors.add(r);
        if r.agent.is_some() {
            // Named agents: their own tables (the thesis's cells compare
            // engines on one seat, not agents).
            self.tournament.add(r);
            return;
        }
        if self.beliefs.wants(r) && r.shaping == jobs::ShapingLevel::NONE {
            self.beliefs.add(r);
        }
        if self.shaping.wants(r) {
            self.shaping.add(r, belief);
        }
        // The M*-versus-Expectimax cells: of the grid's one belief, or of
        // `uniform` when the grid varies the belief (the beliefs' section
        // compares the others with it).
        let one_belief = self.beliefs.pairing.levels == 1;
        if (belief != engine::Belief::Uniform && !one_belief)
            || r.engine == engine::PlayerEngine::Dominai
            || r.shaping != jobs::ShapingLevel::NONE
        {
            return;
        }
        let rules = match &r.rules {
            None => 0,
            Some(name) => match self.rule_sets.iter().position(|n| n == name) {
                Some(i) => i as u16 + 1,
                None => {
                    self.rule_sets.push(name.clone());
                    self.rule_sets.len() as u16
                }
            },
        };
        let target_order = match self.targets.iter().position(|t| *t == r.target) {
            Some(i) => i as u16,
            None => {
                self.targets.push(r.target);
                self.targets.len() as u16 - 1
            }
        };
        let cell = CellKey {
            rules,
            source: r.information_source,
            observability: r.observability,
            target_order,
            target: r.target,
            budget: r.budget.unwrap_or(0),
        };
        let mstar = r.engine == engine::PlayerEngine::MStar;
        let e = match r.engine {
            engine::PlayerEngine::Ismcts => self.ismcts.entry(cell).or_default(),
            _ => self.engines.entry((cell, mstar)).or_default(),
        };
        e.m.add(r.score_diff as f64);
        e.wins += r.win_or_tie as u64;
        e.predictions += r.predictions as u64;
        e.correct += r.predictions_correct as u64;
        *e.hist.entry(r.score_diff).or_default() += 1;
        if r.engine == engine::PlayerEngine::Ismcts {
            return;
        }
        let key = (cell, r.starting_state, r.repeat);
        match self.pending.remove(&key) {
            Some((other_mstar, s, w)) if other_mstar != mstar => {
                let (ms, mw, es, ew) = if mstar {
                    (r.score_diff, r.win_or_tie, s, w)
                } else {
                    (s, w, r.score_diff, r.win_or_tie)
                };
                let p = self.pairs.entry(cell).or_default();
                p.d.add((ms - es) as f64);
                p.b += (mw && !ew) as u64;
                p.c += (ew && !mw) as u64;
            }
            Some(same) => {
                // A repeated key (not expected in a grid): keep the first.
                self.pending.insert(key, same);
            }
            None => {
                self.pending.insert(key, (mstar, r.score_diff, r.win_or_tie));
            }
        }
        if !mstar {
            let k = (r.observability, r.target, cell.budget, r.starting_state, r.repeat);
            let h = moves_hash(&r.moves);
            match self.em_seen.get(&k) {
                Some(&(src, s, mh)) if src != cell.source => {
                    self.consistency.compared += 1;
                    if s != r.score_diff || mh != h {
                        self.consistency.mismatches += 1;
                    }
                }
                Some(_) => {}
                None => {
                    self.em_seen.insert(k, (cell.source, r.score_diff, h));
                }
            }
        }
    }

    /// The report of the rows folded in, with the classifier's report if any.
    pub fn finish(mut self, classifier: Option<ClassifierReport>) -> Report {
        let mut unpaired: BTreeMap<CellKey, u64> = BTreeMap::new();
        for (cell, _, _) in self.pending.keys() {
            *unpaired.entry(*cell).or_default() += 1;
        }
        // In Table 6 order: the engines map is ordered by `CellKey`.
        let cells_keys: Vec<CellKey> = {
            let mut k: Vec<CellKey> = self.engines.keys().map(|(c, _)| *c).collect();
            k.extend(self.ismcts.keys().copied());
            k.sort();
            k.dedup();
            k
        };
        let empty = EngineAcc::default();
        let cells = cells_keys
            .into_iter()
            .map(|cell| {
                let m = self.engines.get(&(cell, true)).unwrap_or(&empty);
                let e = self.engines.get(&(cell, false)).unwrap_or(&empty);
                let pair = self.pairs.get(&cell);
                let d = pair.map(|p| p.d).unwrap_or_default();
                let n = m.m.n.min(e.m.n);
                CellReport {
                    rules: cell.rules.checked_sub(1).map(|k| self.rule_sets[k as usize].clone()),
                    information_source: cell.source,
                    observability: cell.observability,
                    target: cell.target,
                    budget: (cell.budget > 0).then_some(cell.budget),
                    mstar: m.summary(),
                    expectimax: e.summary(),
                    ismcts: self.ismcts.get(&cell).map(EngineAcc::summary),
                    score_test: stats::diff_of_means(&m.m, &e.m),
                    win_test: stats::binomial_test(m.wins, e.wins, n),
                    paired: stats::paired_test(&d),
                    mcnemar: stats::mcnemar(pair.map_or(0, |p| p.b), pair.map_or(0, |p| p.c)),
                    unpaired: unpaired.get(&cell).copied().unwrap_or(0),
                }
            })
            .collect();
        Report {
            experiment: self.experiment,
            games: self.games,
            cells,
            consistency: self.consistency,
            classifier,
            game: None,
            beliefs: crate::beliefs::comparing(self.beliefs.finish()),
            shaping: self.shaping.finish(),
            prediction: None,
            tournament: self
                .tournament
                .finish(if self.format.is_empty() { "cross" } else { &self.format }),
            workers: self.workers.finish(),
            factors: self.factors.finish(),
            seed: None,
        }
    }

    /// Tells the accumulator how many beliefs the grid has, so that paired
    /// rows leave memory as soon as every belief of a deal is in.
    pub fn set_belief_levels(&mut self, levels: usize) {
        self.beliefs.pairing.levels = levels;
    }

    /// Tells the accumulator the grid's beliefs in order, so that a
    /// full-observation row (which names no belief: no world is sampled)
    /// is counted once although the grid plays it once per belief level.
    pub fn set_grid_beliefs(&mut self, spec: &jobs::Spec) {
        self.grid_spec = (spec.grid.belief.len() > 1).then(|| Box::new(spec.clone()));
    }

    /// A row's belief coordinate: its own, else (full observation) the
    /// grid's at its game index, else `uniform`.
    fn belief_of(&self, r: &jobs::GameRow) -> engine::Belief {
        r.belief.unwrap_or_else(|| match &self.grid_spec {
            Some(spec) => jobs::coords(spec, r.game_index).belief,
            None => engine::Belief::Uniform,
        })
    }
}

/// The report of rows already in memory (tests, tools).
pub fn build_from_rows<'a>(
    experiment: &str,
    rows: impl IntoIterator<Item = &'a jobs::GameRow>,
    classifier: Option<ClassifierReport>,
) -> Report {
    let mut acc = Accumulator::default();
    for r in rows {
        acc.add(experiment, r);
    }
    acc.finish(classifier)
}
