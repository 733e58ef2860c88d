//! Experiment specs: TOML in, a validated [`Spec`] out. Every refusal names
//! the key and the value given.
//!
//! `fields` reads TOML key by key, `sections` parses each table, `states`
//! owns the starting-state sets, and `canonical` the hash and the id.

use std::fmt;

use ::full::{FullRules, FullTarget};
use engine::{Observability, PlayerEngine, Rules, RulesConfig, SearchConfig};
use serde::Serialize;

mod agents;
mod canonical;
mod cost;
mod external;
mod fields;
mod full;
mod keys;
mod net_agents;
mod open_pool;
mod parse;
mod pool;
mod rulesets;
mod sections;
mod shaping;
mod states;
mod walls;

pub use agents::{Agent, AgentPlay, AgentSearch, Format, Pool, Sprt, SprtOn};
pub(crate) use canonical::hex;
pub use external::ExternalAgent;
pub(crate) use external::SECRET_ENV;
pub use full::{FullSearch, FullSpec, MAX_BUDGET, MAX_WORLDS};
pub use rulesets::RuleSet;
pub use shaping::{ShapingLevel, ShapingParams, shaping_of};
pub use states::{MAX_LISTED_STATES, StateSet};
pub use walls::{SandboxMode, Walls};

/// The longest `output` accepted.
pub const MAX_OUTPUT_BYTES: usize = 256;
/// The longest path (relative to the results root) a completion may name.
pub const MAX_PATH_BYTES: usize = 1024;
/// Largest spec text accepted.
pub const MAX_SPEC_BYTES: usize = 1 << 20;
/// Largest grid accepted, in games.
pub const MAX_GAMES: u64 = 100_000_000;
/// Largest shard accepted, in games.
pub const MAX_SHARD_GAMES: u64 = 1_000_000;
/// Games per shard unless the spec says otherwise.
pub const DEFAULT_SHARD_GAMES: u64 = 5040;
/// The most games a shard holds under `[stop] sprt`: 16 pairs. The
/// coordinator leases them in order, and no further ahead of the first
/// shard not done than the leases in flight, so when the test decides at
/// most one task per worker has been played past the stopping point.
pub const MAX_STOP_SHARD_GAMES: u64 = 32;

/// A spec that cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Not TOML at all; the parser's message names the line and column.
    #[error("invalid spec: not valid TOML: {0}")]
    Syntax(String),
    /// A key the spec does not have; `hint` lists the keys expected there.
    #[error("invalid spec: unknown key `{key}`{hint}")]
    UnknownKey {
        /// The key's dotted path, e.g. `grid.targets`.
        key: String,
        /// " (expected one of: ...)".
        hint: String,
    },
    /// A required key is absent.
    #[error("invalid spec: missing key `{key}` ({reason})")]
    Missing {
        /// The key's dotted path.
        key: String,
        /// What the key is for, with an example.
        reason: String,
    },
    /// A key whose value cannot be used.
    #[error("invalid spec: {key} = {value}: {reason}")]
    Value {
        /// The key's dotted path.
        key: String,
        /// The value as given (TOML syntax).
        value: String,
        /// Why it is refused, and what is accepted.
        reason: String,
    },
}

impl SpecError {
    /// The key the error is about.
    pub fn key(&self) -> Option<&str> {
        match self {
            SpecError::Syntax(_) => None,
            SpecError::UnknownKey { key, .. } | SpecError::Missing { key, .. } | SpecError::Value { key, .. } => {
                Some(key)
            }
        }
    }
}

/// A check of one rule set of the rules factor, its refusal saying which.
fn in_rule_set(e: SpecError, name: &str) -> SpecError {
    match e {
        SpecError::Value { key, value, reason } => SpecError::Value {
            key,
            value,
            reason: format!("{reason} (under rule set [rules.{name}] of grid.rules)"),
        },
        SpecError::Missing { key, reason } => SpecError::Missing {
            key,
            reason: format!("{reason}; under rule set [rules.{name}] of grid.rules"),
        },
        other => other,
    }
}

/// Where M* takes its model of the target from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The target's true type (the thesis's perfect opponent model).
    Oracle,
    /// The type a trained classifier predicts from the target's first moves.
    Classifier,
    /// Beyond the thesis: a posterior over the types from observed actions.
    Bayes,
}

impl Source {
    /// Every source, in the grid's order.
    pub const ALL: [Source; 3] = [Source::Oracle, Source::Classifier, Source::Bayes];

    /// The name used in specs, flags, Parquet and reports.
    pub fn name(self) -> &'static str {
        match self {
            Source::Oracle => "oracle",
            Source::Classifier => "classifier",
            Source::Bayes => "bayes",
        }
    }
}

/// The one parser of a source's name, for the spec's `information_source`,
/// the CLI's `--source` and the Parquet reader.
impl std::str::FromStr for Source {
    type Err = String;
    fn from_str(s: &str) -> Result<Source, String> {
        Source::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| format!("unknown information source {s:?}: expected oracle, classifier or bayes"))
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The levels and factors (Table 12 of the thesis).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridSpec {
    /// Where M* takes its model of the target from (one level per source).
    pub information_source: Vec<Source>,
    /// What the player sees.
    pub observability: Vec<Observability>,
    /// The fixed opponents (`heaviest` only under a full-game preset).
    pub target: Vec<FullTarget>,
    /// The deals, as starting-state indices of the rules.
    pub starting_states: StateSet,
    /// The player's decision engines.
    pub engine: Vec<PlayerEngine>,
    /// Games per grid point (each with its own seed stream).
    pub repeats: u32,
    /// `[search] belief`: where partial observation's worlds come from; a
    /// list makes it a factor of the grid (varying just slower than the
    /// engine, so every belief plays the same deals).
    pub belief: Vec<engine::Belief>,
    /// `[search] shaping` x `predictor` (All Fives): how opponents' nodes
    /// are shaped; several levels make it a factor of the grid (varying
    /// just slower than the engine, faster than the belief).
    pub shaping: Vec<ShapingLevel>,
    /// `[search] budget` as a list (All Fives): the node budgets, a factor
    /// of the grid varying just slower than the shaping; empty when the
    /// spec gives one budget or none (then every game has
    /// `FullSearch::budget`).
    pub budget: Vec<u64>,
}

/// Classifier settings (used by the opponent-modeling stages).
#[derive(Clone, Debug, PartialEq)]
pub struct ClassifierSpec {
    /// "mda", "random-forest", or "best" (whichever cross-validates better).
    pub kind: String,
    /// Samples the model used by the grid is fitted on.
    pub samples: u64,
    /// Sample counts of the accuracy comparison in the classifier report.
    pub compare_samples: Vec<u64>,
    /// Cross-validation folds.
    pub folds: u32,
    /// Fraction of the samples held out for the final accuracy.
    pub holdout: f64,
}

impl Default for ClassifierSpec {
    fn default() -> Self {
        ClassifierSpec {
            kind: "best".into(),
            samples: 8000,
            compare_samples: vec![8000, 50000, 130000],
            folds: 5,
            holdout: 0.2,
        }
    }
}

/// A validated experiment spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// The experiment's name (the id's prefix).
    pub name: String,
    /// The root of every random stream of the experiment.
    pub seed: u64,
    /// Where results go, relative to the results root.
    pub output: String,
    /// The rule set (`[rules]`).
    pub rules: RulesConfig,
    /// The levels and factors (`[grid]`).
    pub grid: GridSpec,
    /// The player's search settings (`[search]`).
    pub search: SearchConfig,
    /// Classifier training and evaluation (`[classifier]`).
    pub classifier: ClassifierSpec,
    /// Games per shard.
    pub shard_games: u64,
    /// The full game's rules and match, when `[rules] preset` names one
    /// (`rules` then holds the thesis defaults and is not used).
    pub full: Option<FullSpec>,
    /// `[output] moves = true`: the games stage also writes the per-move
    /// table (`moves/part-*.parquet`, one row per play).
    pub output_moves: bool,
    /// `[prediction]`: how the fit stage trains the opponent-move
    /// predictors, when the grid shapes its search (else `None`).
    pub prediction: Option<::full::predict::PredictTraining>,
    /// `[agents]` with `[grid] agents`: the named agents and who plays whom
    /// (then the grid is observability x deal x repeat x pairing x seat).
    pub pool: Option<Pool>,
    /// `[stop] sprt`: the sequential test that ends an A-versus-B
    /// experiment early.
    pub stop: Option<Sprt>,
    /// `[grid] rules` with `[rules.NAME]` tables: the rules factor (the
    /// grid's slowest-varying), in the grid's order; empty when the spec
    /// has one rule set (`full` holds it). With the factor, `full.config`
    /// is the first set's.
    pub rule_sets: Vec<RuleSet>,
}

impl Spec {
    /// Parses and validates a spec (`parse.rs`).
    pub fn from_toml(text: &str) -> Result<Spec, SpecError> {
        parse::spec(text)
    }

    fn games_u128(&self) -> u128 {
        self.rule_sets.len().max(1) as u128 * self.games_per_set_u128()
    }

    /// Games of one level of the rules factor (all of them without one).
    pub(crate) fn games_per_rule_set(&self) -> u64 {
        self.games_per_set_u128() as u64
    }

    fn games_per_set_u128(&self) -> u128 {
        let g = &self.grid;
        if let Some(p) = &self.pool {
            return g.observability.len() as u128
                * p.pairings.len() as u128
                * g.starting_states.len() as u128
                * g.repeats as u128
                * p.seatings() as u128;
        }
        g.information_source.len() as u128
            * g.observability.len() as u128
            * g.target.len() as u128
            * g.starting_states.len() as u128
            * g.engine.len() as u128
            * g.belief.len() as u128
            * g.shaping.len() as u128
            * g.budget.len().max(1) as u128
            * g.repeats as u128
    }

    /// The estimated seconds one game of this spec takes on one core,
    /// averaged over the grid: what `[shards] minutes` sizes shards with
    /// (the model and its measured constants: `cost.rs`).
    pub fn estimated_game_secs(&self) -> f64 {
        cost::estimated_game_secs(self)
    }

    /// Whether an agent of the pool is a program outside muggins: its
    /// games are not a pure function of the spec, so no cross-check replays
    /// them (docs/agents.md).
    pub fn has_external_agents(&self) -> bool {
        self.pool
            .as_ref()
            .is_some_and(|p| p.agents.iter().any(Agent::is_external))
    }

    /// The full game's rules of rule set `k` of the rules factor (a game's
    /// `GameCoords::rules`), or the spec's one rule set (`None`); `None`
    /// for a thesis spec.
    pub fn full_rules(&self, k: Option<u32>) -> Option<FullRules> {
        match k {
            Some(k) => Some(self.rule_sets[k as usize].rules()),
            None => self.full.as_ref().map(FullSpec::rules),
        }
    }

    /// Games in the grid.
    pub fn games(&self) -> u64 {
        self.games_u128() as u64
    }

    /// The validated rules.
    pub fn rules(&self) -> Rules {
        Rules::new(self.rules).expect("validated when the spec was parsed")
    }

    /// Whether the grid needs a trained classifier (and so the training stages).
    pub fn needs_classifier(&self) -> bool {
        self.grid.information_source.contains(&Source::Classifier)
    }

    /// Whether the fit stage trains the opponent-move predictors (the grid
    /// shapes its search).
    pub fn needs_predictors(&self) -> bool {
        self.prediction.is_some()
    }

    /// Whether the games stage also writes the per-hand table
    /// (`hands/part-*.parquet`): an All-Fives grid of matches (`[match]`).
    pub fn writes_hands(&self) -> bool {
        self.full
            .as_ref()
            .is_some_and(|f| f.match_to.is_some() && f.config.preset == ::full::Preset::AllFives)
    }

    /// Whether the experiment has a fit stage.
    pub fn needs_fit(&self) -> bool {
        self.needs_classifier() || self.needs_predictors()
    }

    /// Samples the training stage must provide: the most any fit asks for.
    pub fn samples_needed(&self) -> u64 {
        self.classifier
            .compare_samples
            .iter()
            .copied()
            .chain([self.classifier.samples])
            .max()
            .unwrap_or(0)
    }

    /// Training games to play: enough for `samples_needed` with room to spare
    /// (a game gives the target seat at least `hand` turns less a few; the
    /// thesis deal gives about 3.5 samples a game). The fit stage refuses to
    /// run on fewer samples than it needs, naming both numbers.
    pub fn training_games(&self) -> u64 {
        let per_game = (self.rules.hand as u64).max(2) - 1;
        self.samples_needed().div_ceil(per_game)
    }
}
