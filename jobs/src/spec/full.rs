//! The full game in a spec: `[rules] preset = "all-fives"` (or `block`,
//! `team`) with its knobs, and `[match]`. A spec without a preset, or with
//! `preset = "thesis"`, is the thesis's and reads exactly as before.

use engine::{DepthLimit, Observability, PlayerEngine, SearchConfig, TargetKind, WorldCount};
use full::{FivesBlocked, FivesLead, FullConfig, FullRules, FullTarget, Preset};
use toml::{Table, Value};

use super::fields::{bad, int_in, no_unknown, take_int, take_str};
use super::{GridSpec, Source, SpecError};

/// A full-game experiment: the rules, and whether a grid point is a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FullSpec {
    /// The validated rule set (preset and knobs).
    pub config: FullConfig,
    /// `[match] to`: a grid point is a match of hands until a side reaches
    /// it; `None`: one hand.
    pub match_to: Option<u32>,
    /// `[search] partner`: the strategy of the agent's partner (seat 2) in
    /// partnerships; `None`: the agent itself ("agent", the default).
    pub partner: Option<FullTarget>,
    /// The full game's search settings beyond depth and worlds.
    pub search: FullSearch,
}

/// `[search]` keys of the full game (All Fives): see docs/search.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FullSearch {
    /// `budget`: nodes per world of a decision (ISMCTS: per decision, times
    /// the worlds); 0 (absent): no budget, search to `depth`.
    pub budget: u64,
    /// `table_mb`: the transposition table's megabytes, per thread.
    pub table_mb: u32,
    /// `evaluation = "learned"`: leaves valued by the shipped learned
    /// evaluation (else `"score"`, the score so far).
    pub learned: bool,
    /// `target_depth`: the `searcher` target's Expectimax depth.
    pub target_depth: u8,
    /// `adaptive = true` (99%) or a confidence such as `0.95`: a
    /// partial-observation decision of Expectimax or M* stops adding worlds
    /// once its best play is decided at that confidence (docs/search.md,
    /// "Adaptive effort"); at most `worlds`.
    pub adaptive: Option<full::Adaptive>,
}

impl Default for FullSearch {
    fn default() -> Self {
        FullSearch {
            budget: 0,
            table_mb: full::DEFAULT_TABLE_MB,
            learned: false,
            target_depth: full::DEFAULT_TARGET_DEPTH,
            adaptive: None,
        }
    }
}

/// The `[search]` keys of the shaping (All Fives only).
pub(super) const SHAPING_KEYS: [&str; 7] = ["shaping", "predictor", "top_n", "epsilon", "likely", "extend", "reduce"];

/// The most a budget may be: a million nodes a world is seconds a decision.
pub const MAX_BUDGET: u64 = 100_000_000;

/// `[search] budget`, `table_mb`, `evaluation` and `target_depth`, which
/// only the full game's All Fives reads.
/// Also returns the budgets when `budget` is a list (a grid factor; the
/// largest is `FullSearch::budget`), else an empty list.
pub(super) fn take_full_search(
    t: &mut Option<Table>,
    config: Option<&FullConfig>,
) -> Result<(FullSearch, Vec<u64>), SpecError> {
    let mut f = FullSearch::default();
    let Some(t) = t.as_mut() else {
        return Ok((f, Vec::new()));
    };
    let keys = ["budget", "table_mb", "evaluation", "target_depth"]
        .into_iter()
        .chain(SHAPING_KEYS)
        .collect::<Vec<_>>();
    let fives = config.is_some_and(|c| c.preset == Preset::AllFives);
    if !fives && let Some(k) = keys.iter().find(|k| t.contains_key(**k)) {
        let v = t.get(*k).expect("found above").clone();
        let why = match config {
            None => "the thesis's search is exact to its depth: this key applies to [rules] preset = \"all-fives\"",
            // Named agents of block and team take a budget each.
            Some(_) if *k == "budget" => {
                "block and team take a node budget only per agent ([agents.NAME] budget = N, with engine = \
                 \"mstar\", \"expectimax\" or \"ismcts\"); [search] budget applies to preset = \"all-fives\""
            }
            Some(_) => "block and team are searched to a fixed depth: this key applies to preset = \"all-fives\"",
        };
        return Err(bad(&format!("search.{k}"), v, why));
    }
    // Unknown keys were refused before any value was read (spec/keys.rs).
    let mut budgets = Vec::new();
    match t.remove("budget") {
        None => {}
        Some(Value::Integer(v)) => f.budget = int_in("search.budget", v, 1, MAX_BUDGET as i64)? as u64,
        Some(Value::Array(a)) if !a.is_empty() => {
            for item in a {
                let Value::Integer(v) = item else {
                    return Err(bad(
                        "search.budget",
                        &item,
                        "each budget must be a whole number of nodes",
                    ));
                };
                let b = int_in("search.budget", v, 1, MAX_BUDGET as i64)? as u64;
                if budgets.contains(&b) {
                    return Err(bad("search.budget", v, "is listed twice"));
                }
                budgets.push(b);
            }
            f.budget = budgets.iter().copied().max().expect("non-empty");
            if budgets.len() == 1 {
                budgets.clear();
            }
        }
        Some(v) => {
            return Err(bad(
                "search.budget",
                &v,
                "expected a node budget, or a list of them (a grid factor), e.g. budget = [2000, 10000]",
            ));
        }
    }
    if let Some(v) = take_int(t, "search", "table_mb")? {
        f.table_mb = int_in("search.table_mb", v, 1, 65_536)? as u32;
    }
    if let Some(v) = take_int(t, "search", "target_depth")? {
        f.target_depth = int_in("search.target_depth", v, 1, full::DEEPEST as i64)? as u8;
    }
    if let Some(a) = super::fields::take_adaptive(t, "search")? {
        f.adaptive = a;
    }
    if let Some(s) = take_str(t, "search", "evaluation")? {
        f.learned = s
            .parse::<full::Leaves>()
            .map_err(|why| bad("search.evaluation", Value::String(s), why))?
            .is_learned();
    }
    let need = full::FivesTable::mb_for_budget(f.budget);
    if f.budget > 0 && f.table_mb < need {
        return Err(bad(
            "search.table_mb",
            f.table_mb as i64,
            format!(
                "search.budget = {} needs a table of at least {need} MB so that no entry is ever replaced \
                 (results would depend on the table's size)",
                f.budget
            ),
        ));
    }
    Ok((f, budgets))
}

impl FullSpec {
    /// The rules.
    pub fn rules(&self) -> FullRules {
        FullRules::new(self.config).expect("validated when the spec was parsed")
    }
}

/// The preset `[rules]` names: `None` for the thesis (no `preset`, or
/// `preset = "thesis"`), else the full game's.
pub(super) fn take_preset(t: &mut Option<Table>) -> Result<Option<Preset>, SpecError> {
    let Some(t) = t.as_mut() else { return Ok(None) };
    match take_str(t, "rules", "preset")? {
        None => Ok(None),
        Some(p) if p == "thesis" => Ok(None),
        Some(p) => p.parse::<Preset>().map(Some).map_err(|_| {
            bad(
                "rules.preset",
                Value::String(p),
                "expected \"thesis\", \"all-fives\", \"block\" or \"team\"",
            )
        }),
    }
}

fn take_bool(t: &mut Table, p: &str, key: &str) -> Result<Option<bool>, SpecError> {
    match t.remove(key) {
        None => Ok(None),
        Some(Value::Boolean(b)) => Ok(Some(b)),
        Some(v) => Err(bad(&format!("{p}.{key}"), v, "must be true or false")),
    }
}

/// `[rules]` of a full-game preset: its knobs over the preset's defaults.
pub(super) fn parse_full_rules(preset: Preset, t: Option<Table>) -> Result<FullConfig, SpecError> {
    parse_full_rules_at("rules", preset, t)
}

/// A full-game rule set's knobs over its preset's defaults, the keys named
/// under `p` in errors (`rules`, or `rules.NAME` for a named rule set).
pub(super) fn parse_full_rules_at(p: &str, preset: Preset, t: Option<Table>) -> Result<FullConfig, SpecError> {
    let mut t = t.unwrap_or_default();
    let key = |k: &str| format!("{p}.{k}");
    let seats = take_int(&mut t, p, "seats")?
        .map(|v| int_in(&key("seats"), v, 2, 4))
        .transpose()?;
    let mut c = match (preset, seats) {
        (Preset::AllFives, Some(n)) => FullConfig::all_fives(n as u8),
        _ => FullConfig::preset(preset),
    };
    if let Some(n) = seats {
        c.seats = n as u8;
    }
    if let Some(v) = take_int(&mut t, p, "set")? {
        c.set = int_in(&key("set"), v, 1, 9)? as u8;
    }
    if let Some(v) = take_int(&mut t, p, "hand")? {
        c.hand = int_in(&key("hand"), v, 1, 55)? as u8;
    }
    if let Some(b) = take_bool(&mut t, p, "teams")? {
        c.teams = b;
    }
    if let Some(v) = take_int(&mut t, p, "keep")? {
        c.keep = int_in(&key("keep"), v, 0, 55)? as u8;
    }
    if let Some(b) = take_bool(&mut t, p, "round")? {
        c.round = b;
    }
    if let Some(v) = take_str(&mut t, p, "blocked")? {
        c.blocked = match v.as_str() {
            "opponents" => FivesBlocked::Opponents,
            "difference" => FivesBlocked::Difference,
            _ => {
                return Err(bad(
                    &key("blocked"),
                    Value::String(v),
                    format!("preset = \"{preset}\" scores a blocked hand by \"opponents\" or \"difference\""),
                ));
            }
        };
    }
    if let Some(v) = take_str(&mut t, p, "lead")? {
        c.lead = match v.as_str() {
            "winner" => FivesLead::Winner,
            "highest-double" => FivesLead::HighestDouble,
            _ => {
                return Err(bad(
                    &key("lead"),
                    Value::String(v),
                    format!("preset = \"{preset}\" leads by \"winner\" or \"highest-double\""),
                ));
            }
        };
    }
    let boneyard = take_int(&mut t, p, "boneyard")?;
    no_unknown(
        &t,
        p,
        &[
            "preset", "set", "seats", "hand", "boneyard", "teams", "keep", "round", "blocked", "lead",
        ],
    )?;
    let rules = FullRules::new(c).map_err(|e| bad(&key(e.field), &e.value, e.reason))?;
    // The boneyard is what the hands leave of the set: given, it must agree.
    let (tiles, left) = (rules.tile_count() as i64, (rules.tile_count() - rules.dealt()) as i64);
    if let Some(v) = boneyard.filter(|&v| v != left) {
        return Err(bad(
            &key("boneyard"),
            v,
            format!(
                "preset = \"{preset}\" with seats = {} and hand = {} leaves {left} of the {tiles} tiles in the \
                 boneyard; give boneyard = {left} or leave it out (keep sets how many must stay there)",
                c.seats, c.hand
            ),
        ));
    }
    Ok(c)
}

/// `[search] partner`: who plays beside the agent in partnerships.
pub(super) fn take_partner(
    t: &mut Option<Table>,
    config: Option<&FullConfig>,
) -> Result<Option<FullTarget>, SpecError> {
    let Some(v) = t.as_mut().and_then(|t| t.remove("partner")) else {
        return Ok(None);
    };
    let key = "search.partner";
    let Value::String(s) = &v else {
        return Err(bad(key, v, "must be \"agent\" or a strategy name"));
    };
    match config {
        Some(c) if c.teams => {}
        _ => {
            return Err(bad(
                key,
                &v,
                "a partner plays beside the agent in partnerships: give [rules] preset = \"team\", or \
                 \"all-fives\" with seats = 4 and teams = true",
            ));
        }
    }
    if s == "agent" {
        return Ok(None);
    }
    let target: FullTarget = s.parse().map_err(|_| {
        bad(
            key,
            &v,
            "expected \"agent\" (the default), random, scorer, defender or heaviest",
        )
    })?;
    if config.is_some_and(|c| c.preset != Preset::AllFives)
        && matches!(target, FullTarget::Thesis(TargetKind::Scorer | TargetKind::Defender))
    {
        return Err(bad(
            key,
            &v,
            "team has no count to score or defend: use agent, random or heaviest",
        ));
    }
    Ok(Some(target))
}

/// `[match]`: `to`, the score that ends a match (all-fives only).
pub(super) fn parse_match(t: Option<Table>, preset: Option<Preset>) -> Result<Option<u32>, SpecError> {
    let Some(mut t) = t else { return Ok(None) };
    if preset != Some(Preset::AllFives) {
        return Err(bad(
            "match",
            "[match]",
            "matches are hands repeated to a target score, a rule of preset = \"all-fives\"; the thesis plays one hand",
        ));
    }
    let to = take_int(&mut t, "match", "to")?.map_or(Ok(150), |v| int_in("match.to", v, 1, 100_000))?;
    no_unknown(&t, "match", &["to"])?;
    Ok(Some(to as u32))
}

/// What a full-game grid and search may ask for today.
pub(super) fn check_full_grid(
    preset: Preset,
    g: &GridSpec,
    search: &SearchConfig,
    full: &FullSearch,
    agents: bool,
) -> Result<(), SpecError> {
    if preset != Preset::AllFives {
        let counted = |t: &&FullTarget| {
            matches!(
                t,
                FullTarget::Thesis(TargetKind::Scorer | TargetKind::Defender) | FullTarget::Searcher
            )
        };
        // With named agents the grid's targets are placeholders (a searching
        // or external opponent is `searcher`); check_open_pool checks them.
        if let Some(t) = g.target.iter().find(counted).filter(|_| !agents) {
            return Err(bad(
                "grid.target",
                Value::String(t.name().into()),
                format!("{preset} has no count to score or defend: its targets are random and heaviest"),
            ));
        }
        // Under partial observation mstar and expectimax search sampled
        // worlds (PIMC, docs/search.md); dominai plays from its own hand.
    }
    if g.engine.contains(&PlayerEngine::Dominai) && g.observability.contains(&Observability::Full) {
        return Err(bad(
            "grid.observability",
            "\"full\"",
            "dominai plays from its own hand and its probability matrices, never seeing the others' tiles: use \
             [\"partial\"]",
        ));
    }
    if let Some(s) = g.information_source.iter().find(|&&s| s != Source::Oracle) {
        return Err(bad(
            "grid.information_source",
            Value::String(s.name().into()),
            "the full game's M* models each target by its true strategy: use [\"oracle\"] (the classifier and \
             bayes sources of the full game come with the prediction issue)",
        ));
    }
    if agents {
        // Each named agent's depth, budget and worlds were checked with it.
        return Ok(());
    }
    let searched = g.engine.iter().any(|&e| e != PlayerEngine::Dominai);
    if search.depth == DepthLimit::Unlimited && full.budget == 0 && searched {
        return Err(bad(
            "search.depth",
            "\"unlimited\"",
            "an exact search of the full game would not finish; give a depth in plays and draws (depth = 3), or a \
             node budget per decision (budget = 100000)",
        ));
    }
    if g.engine.contains(&PlayerEngine::Ismcts) && full.budget == 0 {
        return Err(bad(
            "grid.engine",
            "\"ismcts\"",
            "ismcts runs until a node budget is spent: give search.budget, e.g. budget = 20000",
        ));
    }
    let partial = g.observability.contains(&Observability::Partial) && searched;
    match search.worlds {
        WorldCount::All if partial => {
            return Err(bad(
                "search.worlds",
                "\"all\"",
                "the full game's partial observation samples worlds: give a number, e.g. worlds = 16",
            ));
        }
        WorldCount::Sample(k) if !partial => {
            return Err(bad(
                "search.worlds",
                k as i64,
                "worlds are sampled under partial observation only: add \"partial\" to grid.observability, or \
                 leave worlds out",
            ));
        }
        WorldCount::Sample(k) if k > MAX_WORLDS => {
            return Err(bad(
                "search.worlds",
                k as i64,
                format!("the full game samples at most {MAX_WORLDS} worlds per decision"),
            ));
        }
        _ => {}
    }
    Ok(())
}

/// The most worlds a full-game decision may sample.
pub const MAX_WORLDS: u32 = 1_000;
