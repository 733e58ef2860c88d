//! The spec's sections, one parser each: `[rules]`, `[grid]`, `[search]`,
//! `[classifier]` and `[shards]`.

use engine::{Belief, Blocked, DepthLimit, Lead, Observability, PlayerEngine, RulesConfig, SearchConfig, TargetKind};
use full::FullTarget;
use toml::{Table, Value};

use super::fields::{bad, int_in, missing, no_unknown, path, take_int, take_str};
use super::states::parse_states;
use super::{ClassifierSpec, GridSpec, MAX_SHARD_GAMES, Source, SpecError, StateSet};

pub(super) fn parse_rules(t: Option<Table>) -> Result<RulesConfig, SpecError> {
    let mut r = RulesConfig::default();
    let Some(mut t) = t else { return Ok(r) };
    let p = "rules";
    if let Some(v) = take_int(&mut t, p, "set")? {
        r.set = int_in("rules.set", v, 1, 9)? as u8;
    }
    if let Some(v) = take_int(&mut t, p, "hand")? {
        r.hand = int_in("rules.hand", v, 1, 55)? as u8;
    }
    if let Some(v) = take_int(&mut t, p, "boneyard")? {
        r.boneyard = int_in("rules.boneyard", v, 0, 55)? as u8;
    }
    if let Some(v) = take_str(&mut t, p, "lead")? {
        r.lead = v
            .parse::<Lead>()
            .map_err(|e| bad("rules.lead", Value::String(v), e.reason))?;
    }
    if let Some(v) = take_str(&mut t, p, "blocked")? {
        r.blocked = v
            .parse::<Blocked>()
            .map_err(|e| bad("rules.blocked", Value::String(v), e.reason))?;
    }
    no_unknown(&t, p, &["set", "hand", "boneyard", "lead", "blocked"])?;
    Ok(r)
}

/// A non-empty list of distinct values, each parsed by `parse`; `example`
/// shows valid levels of this factor when it is missing.
fn factor<T: PartialEq>(
    t: &mut Table,
    key: &str,
    example: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, SpecError> {
    let full = path("grid", key);
    let v = t
        .remove(key)
        .ok_or_else(|| missing(&full, &format!("a list of levels, e.g. {key} = {example}")))?;
    let Value::Array(items) = v else {
        return Err(bad(&full, v, "must be a list of strings"));
    };
    if items.is_empty() {
        return Err(bad(&full, "[]", "a factor needs at least one level"));
    }
    let mut out = Vec::new();
    for item in &items {
        let Value::String(s) = item else {
            return Err(bad(&full, item, "each level must be a string"));
        };
        let level = parse(s).map_err(|reason| bad(&full, item, reason))?;
        if out.contains(&level) {
            return Err(bad(&full, item, "is listed twice"));
        }
        out.push(level);
    }
    Ok(out)
}

/// `[grid]`; `count` is the number of starting states (deals) of the rules,
/// and `deals` names them when `starting_states` must be given.
pub(super) fn parse_grid(mut t: Table, count: u64, deals: Option<&str>) -> Result<GridSpec, SpecError> {
    let information_source = factor(
        &mut t,
        "information_source",
        r#"["oracle", "classifier", "bayes"]"#,
        |s| s.parse::<Source>(),
    )?;
    let observability = factor(&mut t, "observability", r#"["full", "partial"]"#, |s| {
        s.parse::<Observability>()
    })?;
    // The thesis's rules know the thesis's targets (and say so when refusing
    // one); the full game's add heaviest.
    let target = factor(
        &mut t,
        "target",
        r#"["random", "scorer", "defender"]"#,
        |s| match deals {
            None => s.parse::<TargetKind>().map(FullTarget::Thesis),
            Some(_) => s.parse::<FullTarget>(),
        },
    )?;
    let engine = factor(
        &mut t,
        "engine",
        &format!("[\"{}\", \"{}\"]", PlayerEngine::MStar, PlayerEngine::Expectimax),
        super::fields::spec_engine,
    )?;
    let starting_states = match (t.remove("starting_states"), deals) {
        (None, None) => StateSet::all(count),
        (None, Some(deals)) => {
            return Err(missing(
                "grid.starting_states",
                &format!(
                    "the deals to play: indices of {deals} (0-{}), e.g. starting_states = \"0-999\"",
                    count - 1
                ),
            ));
        }
        (Some(v), _) => parse_states(v, count)?,
    };
    let repeats = take_int(&mut t, "grid", "repeats")?.ok_or_else(|| {
        missing(
            "grid.repeats",
            "how many times each game is repeated, e.g. repeats = 12",
        )
    })?;
    let repeats = int_in("grid.repeats", repeats, 1, 1_000_000)? as u32;
    no_unknown(&t, "grid", super::keys::GRID)?;
    Ok(GridSpec {
        belief: vec![Belief::Uniform],
        shaping: vec![super::shaping::ShapingLevel::NONE],
        budget: Vec::new(),
        information_source,
        observability,
        target,
        starting_states,
        engine,
        repeats,
    })
}

pub(super) fn parse_search(t: Option<Table>, rules: &RulesConfig) -> Result<SearchConfig, SpecError> {
    let mut c = SearchConfig::default();
    let Some(mut t) = t else {
        return check_depth(c, rules);
    };
    if let Some(v) = t.remove("worlds") {
        c.worlds = parse_level("search.worlds", v, "all")?;
    }
    if let Some(v) = t.remove("depth") {
        c.depth = parse_level("search.depth", v, "unlimited")?;
    }
    no_unknown(&t, "search", &["worlds", "belief", "depth"])?;
    check_depth(c, rules)
}

/// A search setting written as the string `word` or an integer, parsed by
/// the engine type's own `FromStr` (which the CLI flags use too).
fn parse_level<T: std::str::FromStr<Err = String>>(key: &str, v: Value, word: &str) -> Result<T, SpecError> {
    let text = match &v {
        Value::String(s) if s == word => s.clone(),
        Value::Integer(k) => k.to_string(),
        _ => String::new(),
    };
    text.parse().map_err(|why: String| bad(key, &v, why))
}

/// Exact search beyond double-4 would not finish: ask for a depth.
fn check_depth(c: SearchConfig, rules: &RulesConfig) -> Result<SearchConfig, SpecError> {
    if c.depth == DepthLimit::Unlimited && rules.set > 4 {
        return Err(bad(
            "search.depth",
            "\"unlimited\"",
            format!(
                "exact search of a double-{} set would not finish; give a depth in turns, e.g. depth = 4",
                rules.set
            ),
        ));
    }
    Ok(c)
}

pub(super) fn parse_classifier(t: Option<Table>) -> Result<ClassifierSpec, SpecError> {
    let mut c = ClassifierSpec::default();
    let Some(mut t) = t else { return Ok(c) };
    let p = "classifier";
    if let Some(k) = take_str(&mut t, p, "kind")? {
        if !["mda", "random-forest", "best"].contains(&k.as_str()) {
            return Err(bad(
                "classifier.kind",
                Value::String(k),
                "expected \"mda\", \"random-forest\" or \"best\"",
            ));
        }
        c.kind = k;
    }
    if let Some(v) = take_int(&mut t, p, "samples")? {
        c.samples = int_in("classifier.samples", v, 100, 100_000_000)? as u64;
    }
    if let Some(v) = t.remove("compare_samples") {
        let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
            bad(
                "classifier.compare_samples",
                &v,
                "must be a non-empty list of sample counts",
            )
        })?;
        c.compare_samples = items
            .iter()
            .map(|i| match i.as_integer() {
                Some(n) if (100..=100_000_000).contains(&n) => Ok(n as u64),
                _ => Err(bad(
                    "classifier.compare_samples",
                    i,
                    "each sample count must be between 100 and 100000000",
                )),
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(v) = take_int(&mut t, p, "folds")? {
        c.folds = int_in("classifier.folds", v, 2, 20)? as u32;
    }
    match t.remove("holdout") {
        None => {}
        Some(Value::Float(h)) if h > 0.0 && h < 1.0 => c.holdout = h,
        Some(v) => {
            return Err(bad(
                "classifier.holdout",
                v,
                "must be a fraction strictly between 0 and 1, e.g. 0.2",
            ));
        }
    }
    no_unknown(&t, p, &["kind", "samples", "compare_samples", "folds", "holdout"])?;
    Ok(c)
}

/// The fewest samples a fit may be given (MDA's minimum with three classes).
const MIN_FIT_SAMPLES: u64 = 5;

/// Refuses a classifier section whose cross validation could never fit: every
/// sample count it fits at must leave, after the holdout, at least one
/// sample per fold and `MIN_FIT_SAMPLES` outside each fold, and a non-empty
/// holdout.
pub(super) fn check_classifier_fits(c: &ClassifierSpec) -> Result<(), SpecError> {
    let counts = std::iter::once(("classifier.samples", c.samples))
        .chain(c.compare_samples.iter().map(|&n| ("classifier.compare_samples", n)));
    for (key, n) in counts {
        let test = ((c.holdout * n as f64).round() as u64).min(n);
        let train = n - test;
        let folds = u64::from(c.folds);
        // The largest fold holds ceil(train / folds); the fit leaves it out.
        let fit_on = train - train.div_ceil(folds.max(1));
        if test == 0 || train < folds || fit_on < MIN_FIT_SAMPLES {
            let why = if test == 0 {
                format!(
                    "classifier.holdout = {} of {n} samples leaves no holdout sample",
                    c.holdout
                )
            } else {
                format!(
                    "with classifier.holdout = {} only {train} of {n} samples are left to train on; \
                     classifier.folds = {} then fits on {fit_on} (at least {MIN_FIT_SAMPLES} are needed, \
                     and a sample per fold)",
                    c.holdout, c.folds
                )
            };
            return Err(bad(
                key,
                n as i64,
                format!("cannot be fitted: {why}; raise the sample count or lower holdout or folds"),
            ));
        }
    }
    Ok(())
}

/// `[shards]`: `games` per shard, or `minutes`: shards sized from the
/// estimated cost of a game (see `Spec::estimated_game_secs`) to take
/// about that long on one core.
pub(super) enum ShardSize {
    /// No `[shards]` table (or an empty one): the default size.
    Default,
    Games(u64),
    Minutes(f64),
}

pub(super) fn parse_shards(t: Option<Table>) -> Result<ShardSize, SpecError> {
    let Some(mut t) = t else {
        return Ok(ShardSize::Default);
    };
    let games = take_int(&mut t, "shards", "games")?;
    let minutes = match t.remove("minutes") {
        None => None,
        Some(Value::Integer(i)) => Some(i as f64),
        Some(Value::Float(x)) => Some(x),
        Some(v) => {
            return Err(bad(
                "shards.minutes",
                v,
                "must be a number of minutes, e.g. minutes = 5",
            ));
        }
    };
    no_unknown(&t, "shards", &["games", "minutes"])?;
    match (games, minutes) {
        (Some(_), Some(m)) => Err(bad(
            "shards.minutes",
            m,
            "give games (a fixed shard size) or minutes (sized from the estimated cost of a game), not both",
        )),
        (Some(g), None) => Ok(ShardSize::Games(
            int_in("shards.games", g, 1, MAX_SHARD_GAMES as i64)? as u64
        )),
        (None, Some(m)) if m.is_finite() && (0.1..=1440.0).contains(&m) => Ok(ShardSize::Minutes(m)),
        (None, Some(m)) => Err(bad("shards.minutes", m, "must be between 0.1 and 1440 (a day)")),
        (None, None) => Ok(ShardSize::Default),
    }
}

/// `[output]`: `dir`, the results directory (as `output = "..."` gives it),
/// and `moves = true` to write the per-move table beside the games.
pub(super) fn parse_output(mut t: Table) -> Result<(Option<String>, bool), SpecError> {
    let dir = take_str(&mut t, "output", "dir")?;
    let moves = match t.remove("moves") {
        None => false,
        Some(Value::Boolean(b)) => b,
        Some(v) => return Err(bad("output.moves", v, "must be true or false")),
    };
    no_unknown(&t, "output", &["dir", "moves"])?;
    Ok((dir, moves))
}

/// `[search] belief`: one belief, or a list of them (a grid factor), each
/// one the rules can use; more than `uniform` needs partial observation.
pub(super) fn take_beliefs(
    t: &mut Option<Table>,
    full: Option<&full::FullConfig>,
    grid: &GridSpec,
) -> Result<Vec<Belief>, SpecError> {
    let Some(v) = t.as_mut().and_then(|t| t.remove("belief")) else {
        return Ok(vec![Belief::Uniform]);
    };
    let key = "search.belief";
    let items = match &v {
        Value::String(_) => vec![v.clone()],
        Value::Array(a) if !a.is_empty() => a.clone(),
        _ => {
            return Err(bad(
                key,
                &v,
                "expected a belief (\"uniform\", \"constraints\", \"dominai\" or \"model\") or a list of them",
            ));
        }
    };
    // Item by item: a belief is parsed and checked against the preset as
    // it comes, and twice means the same belief (not `fields::distinct_strings`).
    let mut out = Vec::new();
    for item in items {
        let Value::String(s) = &item else {
            return Err(bad(key, &item, "each belief must be a string"));
        };
        let b: Belief = s.parse().map_err(|why: String| bad(key, &item, why))?;
        if out.contains(&b) {
            return Err(bad(key, &item, "is listed twice"));
        }
        let preset = full.map(|f| f.preset);
        match (preset, b) {
            (None, b) if b.all_fives_only() => {
                return Err(bad(
                    key,
                    &item,
                    "the thesis's worlds split the unseen tiles between the target and the boneyard: its \
                     beliefs are \"uniform\" and \"constraints\"; dominai and model apply to [rules] preset = \
                     \"all-fives\"",
                ));
            }
            (Some(p), b) if b.all_fives_only() && p != full::Preset::AllFives => {
                return Err(bad(
                    key,
                    &item,
                    format!(
                        "{p}'s worlds come from \"uniform\" or \"constraints\" (the dominai engine keeps its own \
                         matrices; the model belief weighs All-Fives plays)"
                    ),
                ));
            }
            _ => {}
        }
        out.push(b);
    }
    if out != [Belief::Uniform] && !grid.observability.contains(&Observability::Partial) {
        return Err(bad(
            key,
            &v,
            "beliefs choose the worlds of partial observation: add \"partial\" to grid.observability",
        ));
    }
    Ok(out)
}
