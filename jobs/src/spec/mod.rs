//! Experiment specs: TOML in, a validated [`Spec`] out. Every refusal names
//! the key and the value given.
//!
//! `fields` reads TOML key by key, `sections` parses each table, `states`
//! owns the starting-state sets, and `canonical` the hash and the id.

use std::fmt;

use ::full::{FullRules, FullTarget, deal_count};
use engine::{Observability, PlayerEngine, Rules, RulesConfig, SearchConfig};
use serde::Serialize;
use toml::Table;

mod agents;
mod canonical;
mod fields;
mod full;
mod keys;
mod rulesets;
mod sections;
mod states;

pub use agents::{Agent, AgentPlay, AgentSearch, Format, Pool, Sprt, SprtOn};
pub(crate) use canonical::hex;
use fields::{bad, check_name, check_output, missing, no_unknown, take_int, take_str, take_table};
pub use full::{FullSearch, FullSpec, MAX_BUDGET, MAX_WORLDS, ShapingLevel, ShapingParams, shaping_of};
pub use rulesets::RuleSet;
use sections::{
    check_classifier_fits, parse_classifier, parse_grid, parse_output, parse_rules, parse_search, parse_shards,
};
pub use states::{MAX_LISTED_STATES, StateSet};

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
    pub shaping: Vec<full::ShapingLevel>,
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
    /// Parses and validates a spec.
    pub fn from_toml(text: &str) -> Result<Spec, SpecError> {
        if text.len() > MAX_SPEC_BYTES {
            return Err(bad(
                "spec",
                format!("{} bytes", text.len()),
                format!("a spec may be at most {MAX_SPEC_BYTES} bytes"),
            ));
        }
        let mut root: Table = text
            .parse()
            .map_err(|e: toml::de::Error| SpecError::Syntax(e.to_string().trim().to_string()))?;
        keys::check_all(&root)?;
        let name = take_str(&mut root, "", "name")?.ok_or_else(|| missing("name", "every experiment has a name"))?;
        check_name("name", &name)?;
        let seed =
            take_int(&mut root, "", "seed")?.ok_or_else(|| missing("seed", "the experiment seed, e.g. seed = 2014"))?;
        let seed = u64::try_from(seed).map_err(|_| bad("seed", seed, "must not be negative"))?;
        // `output` is the results directory (a string), or the table
        // `[output]` with `dir` (the same) and `moves` (the per-move table).
        let (output, output_moves) = match root.remove("output") {
            None => (None, false),
            Some(toml::Value::String(o)) => (Some(o), false),
            Some(toml::Value::Table(t)) => parse_output(t)?,
            Some(v) => {
                return Err(bad(
                    "output",
                    v,
                    "must be the results directory (a string), or a table [output] with dir and moves",
                ));
            }
        };
        let output = match output {
            Some(o) => {
                check_output(&o)?;
                o
            }
            None => name.clone(),
        };
        let mut rules_table = take_table(&mut root, "", "rules")?;
        let named_sets = rulesets::take_named(&mut rules_table);
        let preset = full::take_preset(&mut rules_table)?;
        let mut grid_table = take_table(&mut root, "", "grid")?
            .ok_or_else(|| missing("grid", "the [grid] table of levels and factors"))?;
        for k in ["preset", "seats", "teams", "partnerships", "hand", "set"] {
            if let Some(v) = grid_table.get(k) {
                return Err(bad(
                    &format!("grid.{k}"),
                    v,
                    "rules vary as rule sets: define each in a table, e.g. [rules.four] seats = 4 teams = true, and \
                     list them in grid.rules = [\"two\", \"four\"] (a preset's name alone is a set too)",
                ));
            }
        }
        let rule_sets = rulesets::parse(grid_table.remove("rules"), named_sets, rules_table.as_ref(), preset)?;
        let (rules, full_config, count) = match (&rule_sets, preset) {
            (Some(sets), _) => {
                let fewest = sets.iter().map(|s| s.deals).min().expect("a factor has a level");
                (RulesConfig::default(), Some(sets[0].config), fewest)
            }
            (None, None) => {
                let rules = parse_rules(rules_table)?;
                let checked = Rules::new(rules).map_err(|e| bad(&format!("rules.{}", e.field), &e.value, e.reason))?;
                (rules, None, checked.starting_states())
            }
            (None, Some(p)) => {
                let config = full::parse_full_rules(p, rules_table)?;
                let count = FullRules::new(config)
                    .ok()
                    .and_then(|r| deal_count(&r))
                    .ok_or_else(|| {
                        bad(
                            "rules",
                            format!("preset = \"{p}\""),
                            "has more deals than a u64 can index; use fewer or smaller hands",
                        )
                    })?;
                (RulesConfig::default(), Some(config), count)
            }
        };
        // With a rules factor, the first set stands for the spec's rules
        // wherever one rule set is read; every set is checked on its own.
        let preset = full_config.map(|c| c.preset);
        let sets = rule_sets.as_deref().unwrap_or_default();
        let match_to = full::parse_match(take_table(&mut root, "", "match")?, preset)?;
        let pool_keys = agents::take_pool_keys(&mut grid_table)?;
        if match_to.is_some() || pool_keys.is_some() {
            let what = if match_to.is_some() { "[match]" } else { "named agents" };
            if let Some(s) = sets.iter().find(|s| s.config.preset != ::full::Preset::AllFives) {
                return Err(bad(
                    &format!("rules.{}.preset", s.name),
                    format!("\"{}\"", s.config.preset),
                    format!("{what} play preset = \"all-fives\": every rule set of grid.rules must be all-fives"),
                ));
            }
        }
        if pool_keys.is_some() {
            if preset != Some(::full::Preset::AllFives) {
                return Err(bad(
                    "grid.agents",
                    "[...]",
                    "named agents play [rules] preset = \"all-fives\"",
                ));
            }
            // Placeholders, replaced by the agents' engines and the opponents below.
            grid_table.insert("engine".into(), toml::Value::Array(vec!["mstar".into()]));
            grid_table.insert("target".into(), toml::Value::Array(vec!["random".into()]));
        }
        let deals = match sets {
            [] => preset.map(|p| format!("preset = \"{p}\"")),
            _ => Some("every rule set of grid.rules".to_string()),
        };
        let mut grid = parse_grid(grid_table, count, deals.as_deref())?;
        let mut search_table = take_table(&mut root, "", "search")?;
        grid.belief = sections::take_beliefs(&mut search_table, full_config.as_ref(), &grid)?;
        // A partner plays in the partnerships of the rule sets that have them.
        let teams = sets.iter().find(|s| s.config.teams).map(|s| &s.config);
        let partner = full::take_partner(&mut search_table, teams.or(full_config.as_ref()))?;
        let target_depth = search_table.as_ref().and_then(|t| t.get("target_depth")).cloned();
        let (full_search, budgets) = full::take_full_search(&mut search_table, full_config.as_ref())?;
        if let Some(v) = target_depth
            && !grid.target.contains(&FullTarget::Searcher)
        {
            return Err(bad(
                "search.target_depth",
                v,
                "is the searcher target's depth; grid.target does not list \"searcher\": remove it, or add that target",
            ));
        }
        grid.budget = budgets;
        grid.shaping = full::take_shaping(&mut search_table, &grid)?;
        let mut search = parse_search(search_table, &rules)?;
        search.belief = grid.belief[0];
        let agent_tables = take_table(&mut root, "", "agents")?;
        let pool = match (pool_keys, full_config.as_ref()) {
            (None, _) => {
                if let Some(t) = agent_tables {
                    let k = t.keys().next().cloned().unwrap_or_default();
                    return Err(bad(
                        &format!("agents.{k}"),
                        "{...}",
                        "named agents play when the grid names them: give grid.agents = [...] and grid.opponents \
                         (or grid.tournament)",
                    ));
                }
                None
            }
            (Some(keys), Some(config)) => {
                let defaults = agents::Defaults {
                    search: &search,
                    full: &full_search,
                    belief: grid.belief[0],
                };
                let pool = agents::build_pool(keys, agent_tables, &defaults)?;
                if sets.is_empty() {
                    agents::two_sides(config)?;
                }
                for s in sets {
                    agents::two_sides(&s.config).map_err(|e| in_rule_set(e, &s.name))?;
                }
                agents::fit_grid(&pool, &mut grid, partner)?;
                Some(pool)
            }
            (Some(_), None) => unreachable!("refused above: agents need a preset"),
        };
        let full = full_config.map(|config| FullSpec {
            config,
            match_to,
            partner,
            search: full_search,
        });
        match &full {
            Some(f) if sets.is_empty() => {
                full::check_full_grid(f.config.preset, &grid, &search, &f.search, pool.is_some())?
            }
            Some(f) => {
                for s in sets {
                    full::check_full_grid(s.config.preset, &grid, &search, &f.search, pool.is_some())
                        .map_err(|e| in_rule_set(e, &s.name))?;
                }
            }
            None => {
                for (e, plays) in [
                    (PlayerEngine::Ismcts, "ismcts plays [rules] preset = \"all-fives\""),
                    (
                        PlayerEngine::Dominai,
                        "dominai plays [rules] preset = \"all-fives\" and \"team\"",
                    ),
                ] {
                    if grid.engine.contains(&e) {
                        return Err(bad(
                            "grid.engine",
                            format!("\"{e}\""),
                            format!("the thesis is searched by mstar and expectimax; {plays}"),
                        ));
                    }
                }
                if grid.target.contains(&::full::FullTarget::Searcher) {
                    return Err(bad(
                        "grid.target",
                        "\"searcher\"",
                        "the thesis's targets are random, scorer and defender; searcher plays [rules] preset = \"all-fives\"",
                    ));
                }
            }
        }
        let prediction = full::take_prediction(take_table(&mut root, "", "prediction")?, &grid, full_config.as_ref())?;
        if prediction.is_some()
            && let Some(s) = sets.iter().find(|s| s.config.seats != sets[0].config.seats)
        {
            return Err(bad(
                "grid.rules",
                format!("[\"{}\", \"{}\"]", sets[0].name, s.name),
                format!(
                    "the shaped search's predictors are trained for one number of seats; these rule sets have {} and \
                     {}: give the rule sets of a shaped grid the same seats",
                    sets[0].config.seats, s.config.seats
                ),
            ));
        }
        let classifier_table = take_table(&mut root, "", "classifier")?;
        if let Some(t) = &classifier_table
            && !grid.information_source.contains(&Source::Classifier)
        {
            return Err(bad(
                "classifier",
                t.keys().next().map_or("{}".to_string(), |k| k.clone()),
                "trains the classifier source; grid.information_source does not list \"classifier\": remove \
                 [classifier], or add that source",
            ));
        }
        let classifier = parse_classifier(classifier_table)?;
        check_classifier_fits(&classifier)?;
        let stop = agents::parse_stop(take_table(&mut root, "", "stop")?, pool.as_ref())?;
        if stop.is_some() && !sets.is_empty() {
            return Err(bad(
                "stop.sprt",
                "{...}",
                "tests one rule set: the grid plays its rule sets one after another, so the test would decide on \
                 the first set alone; run one experiment per rule set (or leave out grid.rules)",
            ));
        }
        let shard_size = parse_shards(take_table(&mut root, "", "shards")?)?;
        no_unknown(&root, "", keys::ROOT)?;
        let spec = Spec {
            name,
            seed,
            output,
            rules,
            grid,
            search,
            classifier,
            shard_games: 0,
            full,
            output_moves,
            prediction,
            pool,
            stop,
            rule_sets: rule_sets.unwrap_or_default(),
        };
        let mut spec = spec;
        let stop_cap = crate::sprt::MAX_STOP_SHARD_GAMES;
        spec.shard_games = match shard_size {
            // `[stop] sprt`: small shards, so a decision wastes little
            // (crate::sprt::MAX_STOP_SHARD_GAMES).
            sections::ShardSize::Default if spec.stop.is_some() => stop_cap,
            sections::ShardSize::Default => DEFAULT_SHARD_GAMES,
            sections::ShardSize::Games(g) if spec.stop.is_some() && g > stop_cap => {
                return Err(bad(
                    "shards.games",
                    g as i64,
                    format!(
                        "with [stop] sprt a shard holds at most {stop_cap} games ({} pairs), so that when the test \
                         decides at most one task per worker was played past that point; give at most {stop_cap} \
                         or leave [shards] out",
                        stop_cap / 2
                    ),
                ));
            }
            sections::ShardSize::Games(g) => g,
            sections::ShardSize::Minutes(m) => {
                let g = ((m * 60.0 / spec.estimated_game_secs()).round() as u64).clamp(1, MAX_SHARD_GAMES);
                if spec.stop.is_some() { g.min(stop_cap) } else { g }
            }
        };
        if spec.pool.as_ref().is_some_and(|p| p.paired) && spec.shard_games % 2 == 1 {
            // A pair's two games share a shard (the SPRT counts whole pairs).
            spec.shard_games += 1;
        }
        let games = spec.games_u128();
        if games > MAX_GAMES as u128 {
            return Err(bad(
                "grid",
                format!("{games} games"),
                format!("a grid may hold at most {MAX_GAMES} games"),
            ));
        }
        Ok(spec)
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

    /// The estimated seconds one game of this spec takes on one core of a
    /// 2020s machine, averaged over the grid: what `[shards] minutes`
    /// sizes shards with. A thesis game is about 15 us. A full-game hand
    /// makes about 10 searched decisions a side; a budgeted search costs
    /// its budget per world at about 15 million nodes a second, an
    /// unbudgeted one about 4^depth nodes; a match is about one hand per
    /// 20 points of its target. Measured figures: docs/jobs.md, "Task sizes".
    pub fn estimated_game_secs(&self) -> f64 {
        const NODES_PER_SEC: f64 = 15.0e6;
        let Some(full) = &self.full else {
            return 15e-6;
        };
        let depth = match self.search.depth {
            engine::DepthLimit::Turns(d) => d as i32,
            engine::DepthLimit::Unlimited => 30,
        };
        let per_world = |budget: u64| -> f64 {
            let by_depth = 4f64.powi(depth.min(12));
            if budget > 0 {
                (budget as f64).min(by_depth)
            } else {
                by_depth
            }
        };
        let worlds = |k: u16| if k > 0 { k as f64 } else { 1.0 };
        // The grid's searches, each level as often as it is played.
        let mut nodes = Vec::new();
        match &self.pool {
            Some(pool) => {
                for &(a, o) in &pool.pairings {
                    let mut n = 0.0;
                    for i in [a, o] {
                        if let AgentPlay::Search(s) = pool.agents[i as usize].play {
                            n += per_world(s.budget) * worlds(s.worlds);
                        }
                    }
                    nodes.push(n);
                }
            }
            None => {
                let k = match self.search.worlds {
                    engine::WorldCount::Sample(k) => k as u16,
                    engine::WorldCount::All => 1,
                };
                let budgets: Vec<u64> = if self.grid.budget.is_empty() {
                    vec![full.search.budget]
                } else {
                    self.grid.budget.clone()
                };
                for &o in &self.grid.observability {
                    for &b in &budgets {
                        let w = if o == engine::Observability::Partial {
                            worlds(k)
                        } else {
                            1.0
                        };
                        nodes.push(per_world(b) * w);
                    }
                }
            }
        }
        let mean = nodes.iter().sum::<f64>() / nodes.len().max(1) as f64;
        let hands = full.match_to.map_or(1.0, |to| (to as f64 / 20.0).max(1.0));
        (10.0 * mean / NODES_PER_SEC * hands).max(2e-4)
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
