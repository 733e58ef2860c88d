//! Reading the named agents: the pool's `[grid]` keys (`agents`,
//! `opponents`, `tournament`, `paired`), each `[agents.NAME]` table, the
//! pool fitted to the grid, and `[stop] sprt`.

use engine::{Belief, DepthLimit, SearchConfig, WorldCount};
use full::FullTarget;
use toml::{Table, Value};

use super::SpecError;
use super::agents::{Agent, AgentPlay, AgentSearch, Format, Pool, Sprt, SprtOn};
use super::fields::{bad, distinct_strings, int_in, missing, no_unknown, take_int, take_str};
use super::full::{FullSearch, MAX_BUDGET, MAX_WORLDS};
use super::shaping::{ShapingLevel, ShapingParams, shaping_of};

/// The `[grid]` keys of an agents spec, taken out before the grid is read.
#[derive(Debug, Default)]
pub(super) struct PoolKeys {
    agents: Vec<String>,
    opponents: Option<Vec<String>>,
    tournament: Option<Format>,
    paired: bool,
}

fn strings(key: &str, v: Value) -> Result<Vec<String>, SpecError> {
    let Value::Array(items) = v else {
        return Err(bad(
            key,
            v,
            "must be a list of names, e.g. [\"mstar_b1e4\", \"scorer\"]",
        ));
    };
    if items.is_empty() {
        return Err(bad(key, "[]", "needs at least one name"));
    }
    distinct_strings(key, items, "each entry must be a name (a string)")
}

/// Takes `agents`, `opponents`, `tournament` and `paired` out of `[grid]`;
/// `None` when the grid names no agents (then the other three are refused).
pub(super) fn take_pool_keys(grid: &mut Table) -> Result<Option<PoolKeys>, SpecError> {
    let agents = grid.remove("agents");
    let opponents = grid.remove("opponents");
    let tournament = grid.remove("tournament");
    let paired = grid.remove("paired");
    let Some(agents) = agents else {
        for (k, v) in [("opponents", opponents), ("tournament", tournament), ("paired", paired)] {
            if let Some(v) = v {
                return Err(bad(
                    &format!("grid.{k}"),
                    v,
                    "applies to a grid of named agents: give grid.agents = [...] and [agents.NAME] tables",
                ));
            }
        }
        return Ok(None);
    };
    let mut keys = PoolKeys {
        agents: strings("grid.agents", agents)?,
        opponents: opponents.map(|v| strings("grid.opponents", v)).transpose()?,
        tournament: None,
        paired: true,
    };
    if let Some(v) = tournament {
        keys.tournament = Some(match &v {
            Value::String(s) if s == "round-robin" => Format::RoundRobin,
            Value::String(s) if s == "gauntlet" => Format::Gauntlet,
            _ => return Err(bad("grid.tournament", v, "expected \"round-robin\" or \"gauntlet\"")),
        });
    }
    match (&keys.opponents, keys.tournament) {
        (Some(_), Some(_)) => {
            return Err(bad(
                "grid.tournament",
                format!("\"{}\"", keys.tournament.expect("matched").name()),
                "give either opponents (agents x opponents) or a tournament over grid.agents, not both",
            ));
        }
        (None, None) => {
            return Err(missing(
                "grid.opponents",
                "who the agents play: opponents = [\"scorer\", \"other_agent\"], or tournament = \"round-robin\" \
                 or \"gauntlet\" over grid.agents",
            ));
        }
        _ => {}
    }
    match paired {
        None => {}
        Some(Value::Boolean(b)) => keys.paired = b,
        Some(v) => return Err(bad("grid.paired", v, "must be true or false")),
    }
    for k in ["engine", "target"] {
        if let Some(v) = grid.get(k) {
            return Err(bad(
                &format!("grid.{k}"),
                v,
                "a grid of named agents takes each agent's engine from its [agents.NAME] table and the opponents \
                 from grid.opponents; remove this key",
            ));
        }
    }
    Ok(Some(keys))
}

/// The `[search]` defaults an agent's table starts from.
pub(super) struct Defaults<'a> {
    pub search: &'a SearchConfig,
    pub full: &'a FullSearch,
    pub belief: Belief,
}

fn agent_of(name: &str, mut t: Table, d: &Defaults) -> Result<Agent, SpecError> {
    if t.contains_key("command") {
        return Ok(Agent {
            name: name.to_string(),
            play: AgentPlay::External(super::external::external_of(name, t)?),
        });
    }
    let p = format!("agents.{name}");
    let key = |k: &str| format!("{p}.{k}");
    let engine = take_str(&mut t, &p, "engine")?;
    let strategy = take_str(&mut t, &p, "strategy")?;
    let play = match (engine, strategy) {
        (Some(e), None) if e == engine::PlayerEngine::Net.name() => {
            AgentPlay::Net(super::net_agents::net_agent(name, &mut t)?)
        }
        (Some(e), None) => {
            let engine = super::fields::spec_engine(&e).map_err(|why| bad(&key("engine"), format!("\"{e}\""), why))?;
            if t.contains_key("net") {
                return Ok(Agent {
                    name: name.to_string(),
                    play: AgentPlay::Net(super::net_agents::net_search_agent(
                        name,
                        engine,
                        &mut t,
                        super::net_agents::SearchDefaults {
                            depth: d.search.depth,
                            worlds: d.search.worlds,
                            budget: d.full.budget,
                        },
                    )?),
                });
            }
            super::net_agents::no_net_keys(&t, &p, &e)?;
            let depth = match take_int(&mut t, &p, "depth")? {
                Some(v) => DepthLimit::Turns(int_in(&key("depth"), v, 1, full::DEEPEST as i64)? as u8),
                None => d.search.depth,
            };
            let budget = match take_int(&mut t, &p, "budget")? {
                Some(v) => int_in(&key("budget"), v, 1, MAX_BUDGET as i64)? as u64,
                None => d.full.budget,
            };
            let unlimited = matches!(depth, DepthLimit::Unlimited | DepthLimit::Turns(full::DEEPEST));
            let depth = full::depth_of(depth);
            if unlimited && budget == 0 {
                return Err(bad(
                    &key("depth"),
                    "\"unlimited\"",
                    "an unlimited depth needs a node budget: give budget = N here or in [search]",
                ));
            }
            let worlds = match take_int(&mut t, &p, "worlds")? {
                Some(v) => int_in(&key("worlds"), v, 1, MAX_WORLDS as i64)? as u16,
                None => match d.search.worlds {
                    WorldCount::Sample(k) => k as u16,
                    WorldCount::All => 0,
                },
            };
            let belief = match take_str(&mut t, &p, "belief")? {
                Some(b) => b
                    .parse::<Belief>()
                    .map_err(|why| bad(&key("belief"), format!("\"{b}\""), why))?,
                None => d.belief,
            };
            let evaluation = take_str(&mut t, &p, "evaluation")?;
            let said = evaluation.is_some();
            let learned = match evaluation {
                None => d.full.learned,
                Some(s) => s
                    .parse::<full::Leaves>()
                    .map_err(|why| bad(&key("evaluation"), format!("\"{s}\""), why))?
                    .is_learned(),
            };
            let shaping = shaping_key(&mut t, &p)?;
            let adaptive = super::fields::take_adaptive(&mut t, &p)?.unwrap_or(d.full.adaptive);
            let table_mb = match take_int(&mut t, &p, "table_mb")? {
                Some(v) => int_in(&key("table_mb"), v, 1, 65_536)? as u32,
                None => d.full.table_mb,
            };
            let need = full::FivesTable::mb_for_budget(budget);
            if budget > 0 && table_mb < need {
                return Err(bad(
                    &key("table_mb"),
                    table_mb as i64,
                    format!(
                        "budget = {budget} needs a table of at least {need} MB so that no entry is ever replaced \
                         (results would depend on the table's size): give table_mb = {need} or more, here or in [search]"
                    ),
                ));
            }
            let settings = full::SearchSettings {
                engine,
                depth,
                budget,
                worlds,
                learned,
                belief,
                shaping: shaping.shaping,
                predictor: shaping.predictor,
                adaptive,
            };
            // [search]'s learned leaves are a default for the searches that
            // value leaves; said of this agent, they must be ones it values.
            let checked = full::SearchSettings {
                learned: learned && (said || engine.values_leaves()),
                ..settings
            };
            checked.check(None, None).map_err(|e| setting_error(name, e))?;
            AgentPlay::Search(AgentSearch { settings, table_mb })
        }
        (None, Some(s)) => {
            let target = s
                .parse::<FullTarget>()
                .map_err(|why| bad(&key("strategy"), format!("\"{s}\""), why))?;
            if let Some(k) = t.keys().next() {
                return Err(bad(
                    &key(k),
                    &t[k.as_str()],
                    "a strategy agent takes no search settings; remove this key",
                ));
            }
            AgentPlay::Strategy(target)
        }
        (Some(_), Some(s)) => {
            return Err(bad(
                &key("strategy"),
                format!("\"{s}\""),
                "an agent has an engine (it searches) or a strategy, not both",
            ));
        }
        (None, None) => {
            return Err(missing(
                &key("engine"),
                "how the agent plays: engine = \"mstar\" (or expectimax, ismcts, dominai), strategy = \"scorer\", \
             or command = [\"python3\", \"bot.py\"] (a program: docs/agents.md)",
            ));
        }
    };
    no_unknown(&t, &p, super::keys::AGENT_KEYS)?;
    Ok(Agent {
        name: name.to_string(),
        play,
    })
}

/// An agent table's `shaping` (with its `predictor`): none when absent; a
/// predictor without a shaping is refused.
fn shaping_key(t: &mut Table, p: &str) -> Result<ShapingLevel, SpecError> {
    let key = |k: &str| format!("{p}.{k}");
    let shaping = match take_str(t, p, "shaping")? {
        None => ShapingLevel::NONE,
        Some(s) => {
            let shaping = shaping_of(&s, &ShapingParams::default())
                .map_err(|why| bad(&key("shaping"), format!("\"{s}\""), why))?;
            let predictor = match take_str(t, p, "predictor")? {
                None => full::predict::PredictModel::Logit,
                Some(m) => m
                    .parse()
                    .map_err(|why| bad(&key("predictor"), format!("\"{m}\""), why))?,
            };
            ShapingLevel { shaping, predictor }
        }
    };
    if let Some(v) = t.remove("predictor") {
        return Err(bad(
            &key("predictor"),
            v,
            "applies with a shaping: give shaping = \"expect\" (or prune, asymmetric)",
        ));
    }
    Ok(shaping)
}

/// The pool from `[agents]` and the grid's keys. A name that is not an
/// `[agents]` table may be a built-in strategy (`scorer`, ...).
pub(super) fn build_pool(keys: PoolKeys, tables: Option<Table>, d: &Defaults) -> Result<Pool, SpecError> {
    let tables = tables.ok_or_else(|| {
        missing(
            "agents",
            "grid.agents names agents: define each as a table, e.g. [agents.mstar_b1e4] engine = \"mstar\" budget = 10000",
        )
    })?;
    let mut defined = Vec::new();
    for (name, v) in tables {
        super::fields::check_label(&format!("agents.{name}"), &name)?;
        let Value::Table(t) = v else {
            return Err(bad(
                &format!("agents.{name}"),
                v,
                "must be a table, e.g. [agents.NAME] engine = \"mstar\"",
            ));
        };
        defined.push(agent_of(&name, t, d)?);
    }
    let mut pool = Pool {
        agents: defined,
        pairings: Vec::new(),
        paired: keys.paired,
        format: keys.tournament.unwrap_or(Format::Cross),
    };
    let index = |pool: &mut Pool, key: &str, name: &str| -> Result<u16, SpecError> {
        if let Some(i) = pool.agents.iter().position(|a| a.name == name) {
            return Ok(i as u16);
        }
        let target = name.parse::<FullTarget>().map_err(|_| {
            bad(
                key,
                format!("\"{name}\""),
                format!(
                    "is neither an [agents.{name}] table nor a strategy (random, scorer, defender, heaviest, searcher)"
                ),
            )
        })?;
        pool.agents.push(Agent {
            name: name.to_string(),
            play: AgentPlay::Strategy(target),
        });
        Ok(pool.agents.len() as u16 - 1)
    };
    let listed: Vec<u16> = keys
        .agents
        .iter()
        .map(|n| index(&mut pool, "grid.agents", n))
        .collect::<Result<_, _>>()?;
    // Who may take the agent's side: a searching or an external agent.
    let plays = |pool: &Pool, i: u16| {
        let a = &pool.agents[i as usize];
        a.searches() || a.is_external()
    };
    match pool.format {
        Format::Cross => {
            if let Some(&i) = listed.iter().find(|&&i| !plays(&pool, i)) {
                let a = &pool.agents[i as usize];
                return Err(bad(
                    "grid.agents",
                    format!("\"{}\"", a.name),
                    "is a strategy: grid.agents are searching or external agents (strategies go in grid.opponents)",
                ));
            }
            let opponents: Vec<u16> = keys
                .opponents
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|n| index(&mut pool, "grid.opponents", n))
                .collect::<Result<_, _>>()?;
            for &a in &listed {
                for &o in &opponents {
                    if a != o {
                        pool.pairings.push((a, o));
                    }
                }
            }
        }
        Format::RoundRobin => {
            for (x, &a) in listed.iter().enumerate() {
                for &b in &listed[x + 1..] {
                    match (plays(&pool, a), plays(&pool, b)) {
                        (true, _) => pool.pairings.push((a, b)),
                        (false, true) => pool.pairings.push((b, a)),
                        (false, false) => {}
                    }
                }
            }
        }
        Format::Gauntlet => {
            let first = listed[0];
            if !plays(&pool, first) {
                return Err(bad(
                    "grid.agents",
                    format!("\"{}\"", pool.agents[first as usize].name),
                    "a gauntlet's first agent plays every other one and must search or be external",
                ));
            }
            pool.pairings.extend(listed[1..].iter().map(|&o| (first, o)));
        }
    }
    if pool.pairings.is_empty() {
        return Err(bad(
            "grid.agents",
            format!("{:?}", keys.agents),
            "makes no pairing: an agent never plays itself and two strategies never meet",
        ));
    }
    Ok(pool)
}

/// `[stop]`: `sprt = { elo0, elo1, alpha, beta }` (or `diff0`, `diff1`);
/// only for an agents grid of one pairing, paired.
pub(super) fn parse_stop(t: Option<Table>, pool: Option<&Pool>) -> Result<Option<Sprt>, SpecError> {
    let Some(mut t) = t else { return Ok(None) };
    let v = t.remove("sprt").ok_or_else(|| {
        missing(
            "stop.sprt",
            "the test that stops the experiment, e.g. sprt = { elo0 = 0, elo1 = 5, alpha = 0.05, beta = 0.05 }",
        )
    })?;
    no_unknown(&t, "stop", &["sprt"])?;
    let Value::Table(mut s) = v else {
        return Err(bad(
            "stop.sprt",
            v,
            "must be a table, e.g. { elo0 = 0, elo1 = 5, alpha = 0.05, beta = 0.05 }",
        ));
    };
    let mut num = |k: &str| -> Result<Option<f64>, SpecError> {
        match s.remove(k) {
            None => Ok(None),
            Some(Value::Float(x)) if x.is_finite() => Ok(Some(x)),
            Some(Value::Integer(i)) => Ok(Some(i as f64)),
            Some(v) => Err(bad(&format!("stop.sprt.{k}"), v, "must be a number")),
        }
    };
    let (elo0, elo1, diff0, diff1) = (num("elo0")?, num("elo1")?, num("diff0")?, num("diff1")?);
    let alpha = num("alpha")?.unwrap_or(0.05);
    let beta = num("beta")?.unwrap_or(0.05);
    no_unknown(&s, "stop.sprt", &["elo0", "elo1", "diff0", "diff1", "alpha", "beta"])?;
    let (on, h0, h1) = match (elo0, elo1, diff0, diff1) {
        (Some(a), Some(b), None, None) => (SprtOn::Elo, a, b),
        (None, None, Some(a), Some(b)) => (SprtOn::ScoreDiff, a, b),
        _ => {
            return Err(bad(
                "stop.sprt",
                "{...}",
                "give elo0 and elo1 (logistic Elo), or diff0 and diff1 (score difference per game), not a mix",
            ));
        }
    };
    let which = if on == SprtOn::Elo { "elo" } else { "diff" };
    if h1 <= h0 {
        return Err(bad(
            &format!("stop.sprt.{which}1"),
            h1,
            format!("must be greater than {which}0 = {h0}"),
        ));
    }
    if on == SprtOn::Elo && (h0.abs() >= 800.0 || h1.abs() >= 800.0) {
        return Err(bad("stop.sprt.elo1", h1, "Elo hypotheses must lie within +-800"));
    }
    for (k, x) in [("alpha", alpha), ("beta", beta)] {
        if !(x > 0.0 && x < 0.5) {
            return Err(bad(
                &format!("stop.sprt.{k}"),
                x,
                "must be between 0 and 0.5 (exclusive)",
            ));
        }
    }
    let pool = pool.ok_or_else(|| {
        bad(
            "stop.sprt",
            "{...}",
            "tests one agent against another: give grid.agents = [\"A\"] and grid.opponents = [\"B\"]",
        )
    })?;
    if pool.pairings.len() != 1 || !pool.paired {
        return Err(bad(
            "stop.sprt",
            "{...}",
            format!(
                "tests one pairing on paired deals; this grid has {} pairing(s){}",
                pool.pairings.len(),
                if pool.paired { "" } else { " and paired = false" }
            ),
        ));
    }
    Ok(Some(Sprt {
        on,
        h0,
        h1,
        alpha,
        beta,
    }))
}

/// Named agents play two sides: refuses rules with any other number.
pub(super) fn two_sides(config: &full::FullConfig) -> Result<(), SpecError> {
    let sides = full::FullRules::new(*config).map_or(0, |r| r.sides());
    if sides != 2 {
        return Err(bad(
            "grid.agents",
            "[...]",
            format!("named agents play two sides (2 seats, or 4 in partnerships); these rules have {sides}"),
        ));
    }
    Ok(())
}

/// Checks an agents grid against the rest of the spec and fills the grid's
/// engine, target and shaping lists from the pool (they feed the checks
/// every full-game grid passes, and the fit stage of a shaped agent).
pub(super) fn fit_grid(pool: &Pool, grid: &mut super::GridSpec, partner: Option<FullTarget>) -> Result<(), SpecError> {
    if let Some(p) = partner {
        return Err(bad(
            "search.partner",
            format!("\"{}\"", p.name()),
            "with named agents every seat of a side plays that side's agent; remove search.partner",
        ));
    }
    if !grid.budget.is_empty() {
        return Err(bad(
            "search.budget",
            format!("{:?}", grid.budget),
            "with named agents give each agent its budget ([agents.NAME] budget = N); [search] budget is one default",
        ));
    }
    if grid.shaping != [ShapingLevel::NONE] {
        return Err(bad(
            "search.shaping",
            "[...]",
            "with named agents give each agent its shaping ([agents.NAME] shaping = \"expect\")",
        ));
    }
    if grid.belief.len() != 1 {
        return Err(bad(
            "search.belief",
            "[...]",
            "with named agents give each agent its belief ([agents.NAME] belief = \"model\"); [search] belief is one default",
        ));
    }
    for a in &pool.agents {
        let AgentPlay::Search(s) = a.play else { continue };
        let settings = full::SearchSettings {
            learned: s.settings.learned && s.settings.engine.values_leaves(),
            ..s.settings
        };
        for &o in &grid.observability {
            settings.check(None, Some(o)).map_err(|e| setting_error(&a.name, e))?;
        }
    }
    let mut engines = Vec::new();
    let mut targets = Vec::new();
    let mut shapings = vec![ShapingLevel::NONE];
    // Each agent's table was checked against its budget with it.
    for a in &pool.agents {
        match a.play {
            AgentPlay::Search(s) => {
                push_new(&mut engines, s.settings.engine);
                push_new(&mut shapings, s.shaping());
            }
            AgentPlay::Strategy(t) => push_new(&mut targets, t),
            AgentPlay::External(_) => push_new(&mut targets, FullTarget::Searcher),
            AgentPlay::Net(_) => {
                push_new(&mut engines, engine::PlayerEngine::Net);
                push_new(&mut targets, FullTarget::Searcher);
            }
        }
    }
    if targets.is_empty() || pool.pairings.iter().any(|&(_, o)| pool.agents[o as usize].searches()) {
        push_new(&mut targets, FullTarget::Searcher);
    }
    grid.engine = engines;
    grid.target = targets;
    grid.shaping = shapings;
    Ok(())
}

/// A named agent's settings that do not go together, named as its table's
/// key (`agents.NAME.budget`), or the grid's observability.
pub(super) fn setting_error(name: &str, e: full::SettingError) -> SpecError {
    let key = match e.setting {
        full::Setting::Observability => "grid.observability".to_string(),
        s => format!("agents.{name}.{}", s.name()),
    };
    let why = match e.setting {
        full::Setting::Observability => format!("agent {name}: {}", e.why),
        _ => e.why,
    };
    bad(&key, e.value, why)
}

fn push_new<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}
