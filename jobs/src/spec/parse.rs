//! [`Spec::from_toml`]'s work: the spec's tables read in a fixed order, one
//! function a phase (the name and output, the rules, the grid, the searches,
//! the agents, the checks across tables, the shards). The order is the
//! order of the refusals: a spec with two mistakes is refused for the same
//! one every time.

use ::full::{FullConfig, FullRules, FullTarget, Preset, deal_count};
use engine::{PlayerEngine, Rules, RulesConfig, SearchConfig};
use toml::Table;

use super::fields::{bad, check_name, check_output, check_title, missing, no_unknown, take_int, take_str, take_table};
use super::full as full_spec;
use super::sections::{
    ShardSize, check_classifier_fits, parse_classifier, parse_grid, parse_output, parse_rules, parse_search,
    parse_shards,
};
use super::{
    DEFAULT_SHARD_GAMES, FullSearch, FullSpec, GridSpec, MAX_GAMES, MAX_SHARD_GAMES, MAX_SPEC_BYTES,
    MAX_STOP_SHARD_GAMES, Pool, RuleSet, Source, Spec, SpecError, in_rule_set, keys, pool, rulesets, sections, shaping,
};

/// Parses and validates a spec.
pub(super) fn spec(text: &str) -> Result<Spec, SpecError> {
    let mut root = parse_root(text)?;
    let (name, seed, output, output_moves) = identity(&mut root)?;
    let mut rules_table = take_table(&mut root, "", "rules")?;
    let named_sets = rulesets::take_named(&mut rules_table);
    let preset = full_spec::take_preset(&mut rules_table)?;
    let mut grid_table =
        take_table(&mut root, "", "grid")?.ok_or_else(|| missing("grid", "the [grid] table of levels and factors"))?;
    refuse_rules_in_grid(&grid_table)?;
    let rule_sets = rulesets::parse(grid_table.remove("rules"), named_sets, rules_table.as_ref(), preset)?;
    let (rules, full_config, count) = rules_of(rule_sets.as_deref(), preset, rules_table)?;
    // With a rules factor, the first set stands for the spec's rules
    // wherever one rule set is read; every set is checked on its own.
    let preset = full_config.map(|c| c.preset);
    let sets = rule_sets.as_deref().unwrap_or_default();
    let match_to = full_spec::parse_match(take_table(&mut root, "", "match")?, preset)?;
    let pool_keys = pool::take_pool_keys(&mut grid_table)?;
    check_all_fives(sets, preset, match_to.is_some(), pool_keys.is_some(), &mut grid_table)?;
    let deals = match sets {
        [] => preset.map(|p| format!("preset = \"{p}\"")),
        _ => Some("every rule set of grid.rules".to_string()),
    };
    let mut grid = parse_grid(grid_table, count, deals.as_deref())?;
    let searches = searches(
        take_table(&mut root, "", "search")?,
        &mut grid,
        full_config.as_ref(),
        sets,
        &rules,
    )?;
    let agent_tables = take_table(&mut root, "", "agents")?;
    let pool = match (pool_keys, full_config.as_ref()) {
        (None, _) => {
            refuse_unlisted_agents(agent_tables)?;
            None
        }
        (Some(keys), Some(config)) => {
            let defaults = pool::Defaults {
                search: &searches.search,
                full: &searches.full,
                belief: grid.belief[0],
            };
            let pool = pool::build_pool(keys, agent_tables, &defaults)?;
            if sets.is_empty() {
                pool::two_sides(config)?;
            }
            for s in sets {
                pool::two_sides(&s.config).map_err(|e| in_rule_set(e, &s.name))?;
            }
            pool::fit_grid(&pool, &mut grid, searches.partner)?;
            for s in sets.iter().map(|s| &s.config).chain(std::iter::once(config)) {
                super::open_pool::check_open_pool(&pool, s, match_to)?;
            }
            Some(pool)
        }
        (Some(_), None) => unreachable!("refused above: agents need a preset"),
    };
    let full = full_config.map(|config| FullSpec {
        config,
        match_to,
        partner: searches.partner,
        search: searches.full,
    });
    check_engines(full.as_ref(), sets, &grid, &searches.search, pool.is_some())?;
    let prediction = shaping::take_prediction(take_table(&mut root, "", "prediction")?, &grid, full_config.as_ref())?;
    if prediction.is_some() {
        check_same_seats(sets)?;
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
    let stop = pool::parse_stop(take_table(&mut root, "", "stop")?, pool.as_ref())?;
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
    let mut spec = Spec {
        name,
        seed,
        output,
        rules,
        grid,
        search: searches.search,
        classifier,
        shard_games: 0,
        full,
        output_moves,
        prediction,
        pool,
        stop,
        rule_sets: rule_sets.unwrap_or_default(),
    };
    spec.shard_games = shard_games(&spec, shard_size)?;
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

/// The TOML document, its size checked and its keys checked against the
/// spec's (with did-you-mean) before any value is read.
fn parse_root(text: &str) -> Result<Table, SpecError> {
    if text.len() > MAX_SPEC_BYTES {
        return Err(bad(
            "spec",
            format!("{} bytes", text.len()),
            format!("a spec may be at most {MAX_SPEC_BYTES} bytes"),
        ));
    }
    let root: Table = text
        .parse()
        .map_err(|e: toml::de::Error| SpecError::Syntax(e.to_string().trim().to_string()))?;
    keys::check_all(&root)?;
    Ok(root)
}

/// `name`, `seed` and `output` (with `[output] moves`).
fn identity(root: &mut Table) -> Result<(String, u64, String, bool), SpecError> {
    let name = take_str(root, "", "name")?.ok_or_else(|| missing("name", "every experiment has a name"))?;
    check_title(&name)?;
    let seed = take_int(root, "", "seed")?.ok_or_else(|| missing("seed", "the experiment seed, e.g. seed = 2014"))?;
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
        None => {
            check_name("name", &name).map_err(|_| {
                bad(
                    "name",
                    toml::Value::String(name.clone()),
                    "is not a directory name (1 to 64 letters, digits, '-', '_' or '.', not starting with '.', \
                     '_' or '-'), and output is not given: give the results directory, output = \"my-experiment\"",
                )
            })?;
            name.clone()
        }
    };
    Ok((name, seed, output, output_moves))
}

/// Rules vary as rule sets, never as grid keys.
fn refuse_rules_in_grid(grid_table: &Table) -> Result<(), SpecError> {
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
    Ok(())
}

/// The thesis rules (the defaults under a preset), the full game's rules if
/// any (the first rule set's with a rules factor), and the deals a grid
/// may draw from (the fewest of the rule sets').
fn rules_of(
    sets: Option<&[RuleSet]>,
    preset: Option<Preset>,
    rules_table: Option<Table>,
) -> Result<(RulesConfig, Option<FullConfig>, u64), SpecError> {
    match (sets, preset) {
        (Some(sets), _) => {
            let fewest = sets.iter().map(|s| s.deals).min().expect("a factor has a level");
            Ok((RulesConfig::default(), Some(sets[0].config), fewest))
        }
        (None, None) => {
            let rules = parse_rules(rules_table)?;
            let checked = Rules::new(rules).map_err(|e| bad(&format!("rules.{}", e.field), &e.value, e.reason))?;
            Ok((rules, None, checked.starting_states()))
        }
        (None, Some(p)) => {
            let config = full_spec::parse_full_rules(p, rules_table)?;
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
            Ok((RulesConfig::default(), Some(config), count))
        }
    }
}

/// Matches play All Fives, named agents the full game's presets; with
/// named agents the grid's engine and target get placeholders, replaced by the agents' engines and
/// the opponents when the pool is fitted to the grid.
fn check_all_fives(
    sets: &[RuleSet],
    preset: Option<Preset>,
    matches: bool,
    agents: bool,
    grid_table: &mut Table,
) -> Result<(), SpecError> {
    if matches {
        let what = "[match]";
        if let Some(s) = sets.iter().find(|s| s.config.preset != Preset::AllFives) {
            return Err(bad(
                &format!("rules.{}.preset", s.name),
                format!("\"{}\"", s.config.preset),
                format!("{what} play preset = \"all-fives\": every rule set of grid.rules must be all-fives"),
            ));
        }
    }
    if agents {
        if preset.is_none() {
            return Err(bad(
                "grid.agents",
                "[...]",
                "named agents play the full game: give [rules] preset = \"all-fives\", \"block\" or \"team\"",
            ));
        }
        grid_table.insert(
            "engine".into(),
            toml::Value::Array(vec![engine::PlayerEngine::MStar.name().into()]),
        );
        grid_table.insert("target".into(), toml::Value::Array(vec!["random".into()]));
    }
    Ok(())
}

/// What `[search]` sets: the thesis search, the full game's, and the partner.
struct Searches {
    search: SearchConfig,
    full: FullSearch,
    partner: Option<FullTarget>,
}

/// `[search]`: the beliefs, budgets and shapings (grid factors it sets),
/// the partner, and the searches' settings.
fn searches(
    mut search_table: Option<Table>,
    grid: &mut GridSpec,
    full_config: Option<&FullConfig>,
    sets: &[RuleSet],
    rules: &RulesConfig,
) -> Result<Searches, SpecError> {
    grid.belief = sections::take_beliefs(&mut search_table, full_config, grid)?;
    // A partner plays in the partnerships of the rule sets that have them.
    let teams = sets.iter().find(|s| s.config.teams).map(|s| &s.config);
    let partner = full_spec::take_partner(&mut search_table, teams.or(full_config))?;
    let target_depth = search_table.as_ref().and_then(|t| t.get("target_depth")).cloned();
    let (full, budgets) = full_spec::take_full_search(&mut search_table, full_config)?;
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
    grid.shaping = shaping::take_shaping(&mut search_table, grid)?;
    let mut search = parse_search(search_table, rules)?;
    search.belief = grid.belief[0];
    Ok(Searches { search, full, partner })
}

/// `[agents.NAME]` tables play only when the grid names them.
fn refuse_unlisted_agents(agent_tables: Option<Table>) -> Result<(), SpecError> {
    if let Some(t) = agent_tables {
        let k = t.keys().next().cloned().unwrap_or_default();
        return Err(bad(
            &format!("agents.{k}"),
            "{...}",
            "named agents play when the grid names them: give grid.agents = [...] and grid.opponents \
             (or grid.tournament)",
        ));
    }
    Ok(())
}

/// The grid's engines and targets fit the game: the full game's checks per
/// rule set; the thesis searched by M* and Expectimax against its targets.
fn check_engines(
    full: Option<&FullSpec>,
    sets: &[RuleSet],
    grid: &GridSpec,
    search: &SearchConfig,
    pool: bool,
) -> Result<(), SpecError> {
    match full {
        Some(f) if sets.is_empty() => full_spec::check_full_grid(f.config.preset, grid, search, &f.search, pool),
        Some(f) => {
            for s in sets {
                full_spec::check_full_grid(s.config.preset, grid, search, &f.search, pool)
                    .map_err(|e| in_rule_set(e, &s.name))?;
            }
            Ok(())
        }
        None => {
            for (e, plays) in [
                (
                    PlayerEngine::Ismcts,
                    "ismcts plays [rules] preset = \"all-fives\", \"block\" and \"team\"",
                ),
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
            if grid.target.contains(&FullTarget::Searcher) {
                return Err(bad(
                    "grid.target",
                    "\"searcher\"",
                    "the thesis's targets are random, scorer and defender; searcher plays [rules] preset = \"all-fives\"",
                ));
            }
            Ok(())
        }
    }
}

/// A shaped grid's predictors are trained for one number of seats.
fn check_same_seats(sets: &[RuleSet]) -> Result<(), SpecError> {
    if let Some(s) = sets.iter().find(|s| s.config.seats != sets[0].config.seats) {
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
    Ok(())
}

/// Games per shard: `[shards]`, or the default (small under `[stop]`, so a
/// decision wastes little), even when a pool is paired (a pair's two games
/// share a shard: the SPRT counts whole pairs).
fn shard_games(spec: &Spec, size: ShardSize) -> Result<u64, SpecError> {
    let stop_cap = MAX_STOP_SHARD_GAMES;
    let mut games = match size {
        ShardSize::Default if spec.stop.is_some() => stop_cap,
        ShardSize::Default => DEFAULT_SHARD_GAMES,
        ShardSize::Games(g) if spec.stop.is_some() && g > stop_cap => {
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
        ShardSize::Games(g) => g,
        ShardSize::Minutes(m) => {
            let g = ((m * 60.0 / spec.estimated_game_secs()).round() as u64).clamp(1, MAX_SHARD_GAMES);
            if spec.stop.is_some() { g.min(stop_cap) } else { g }
        }
    };
    if spec.pool.as_ref().is_some_and(|p: &Pool| p.paired) && games % 2 == 1 {
        games += 1;
    }
    Ok(games)
}
