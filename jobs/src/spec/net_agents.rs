//! Agents that play a model file: `engine = "net"` (its policy, or a
//! search guided by it: `simulations`), `engine = "ismcts"` with `net`
//! (the same guided search, on the ISMCTS budget), and `engine = "mstar"`
//! or `"expectimax"` with `net` (those searches on sampled worlds with the
//! network's value at the leaves). The file is read now, its hash in the
//! spec's id; its game is checked with the rules.

use engine::{DepthLimit, PlayerEngine, WorldCount};
use full::spiel::{
    GuidedBelief, LeafSearch, MAX_LEAF_DEPTH, MAX_LEAF_WORLDS, MAX_SIMULATIONS, MAX_TEMPERATURE,
    MAX_WORLD_SEARCH_BUDGET, MAX_WORLD_SEARCH_WORLDS, WorldSearch,
};
use toml::{Table, Value};

use super::SpecError;
use super::fields::{bad, int_in, missing, take_int, take_str};
use crate::nets::NetAgent;

/// `[agents.NAME] engine = "net"`: the model file `net`, its `temperature`,
/// `simulations` (guided by the network, 0: none), `adaptive` (the guided
/// search stops once its play is decided) and `belief` (where the guided
/// search's worlds come from); no other search settings.
pub(super) fn net_agent(name: &str, t: &mut Table) -> Result<NetAgent, SpecError> {
    let p = format!("agents.{name}");
    let key = |k: &str| format!("{p}.{k}");
    let path = model_path(t, &p, "engine = \"net\"")?;
    let temperature = match t.remove("temperature") {
        None => 0.0,
        Some(v) => match v.as_float().or(v.as_integer().map(|i| i as f64)) {
            Some(x) if (0.0..=MAX_TEMPERATURE).contains(&x) => x,
            _ => {
                return Err(bad(
                    &key("temperature"),
                    v,
                    format!("0 (the highest logit) to {MAX_TEMPERATURE} (a draw from the softmax at it)"),
                ));
            }
        },
    };
    let simulations = match t.remove("simulations") {
        None => 0,
        Some(v) => match v.as_integer() {
            Some(n) if (0..=MAX_SIMULATIONS as i64).contains(&n) => n as u64,
            _ => {
                return Err(bad(
                    &key("simulations"),
                    v,
                    format!("an integer, 0 (the policy alone) to {MAX_SIMULATIONS} (guided simulations a decision)"),
                ));
            }
        },
    };
    let (adaptive, belief) = guided_keys(t, &p, simulations)?;
    no_more(
        t,
        &p,
        "engine = \"net\" takes net (a model file), temperature, simulations, adaptive and belief; no other search \
         settings",
    )?;
    crate::nets::read(&path, temperature)
        .and_then(|a| a.with_simulations(simulations))
        .and_then(|a| a.with_adaptive(adaptive))
        .and_then(|a| a.with_belief(belief))
        .map_err(|why| bad(&key("net"), format!("\"{path}\""), why.to_string()))
}

/// `[search]`'s settings a search agent with a net starts from.
#[derive(Clone, Copy, Debug)]
pub(super) struct SearchDefaults {
    pub depth: DepthLimit,
    pub worlds: WorldCount,
    pub budget: u64,
}

/// `[agents.NAME] engine = E` with `net = FILE`, E a search engine:
/// `ismcts` is the network's guided search of `budget` x `worlds`
/// simulations (ISMCTS's own effort; the same agent as `engine = "net"`
/// with that many `simulations`), `mstar` and `expectimax` search `depth`
/// plays on `worlds` worlds with the network's value at the leaves. Depth,
/// budget and worlds default to `[search]`'s.
pub(super) fn net_search_agent(
    name: &str,
    engine: PlayerEngine,
    t: &mut Table,
    d: SearchDefaults,
) -> Result<NetAgent, SpecError> {
    let p = format!("agents.{name}");
    let key = |k: &str| format!("{p}.{k}");
    let path = model_path(t, &p, "")?;
    for k in ["temperature", "simulations"] {
        if let Some(v) = t.get(k) {
            return Err(bad(
                &key(k),
                v,
                format!(
                    "engine = \"{}\" with a net searches (ismcts: budget x worlds guided simulations; mstar and \
                     expectimax: depth and worlds); {k} belongs to engine = \"net\"",
                    engine.name()
                ),
            ));
        }
    }
    let worlds = match take_int(t, &p, "worlds")? {
        Some(v) => Some(v),
        None => match d.worlds {
            WorldCount::Sample(k) => Some(k as i64),
            WorldCount::All => None,
        },
    };
    let read = |simulations: u64| {
        crate::nets::read(&path, 0.0)
            .and_then(|a| a.with_simulations(simulations))
            .map_err(|why| bad(&key("net"), format!("\"{path}\""), why.to_string()))
    };
    let agent = match engine {
        PlayerEngine::Ismcts => {
            let budget = budget_or_default(
                t,
                &p,
                d,
                "with a net, ISMCTS is the network's guided search of budget x worlds simulations: give budget = N \
                 here or in [search]",
            )?;
            let budget = int_in(&key("budget"), budget, 1, MAX_SIMULATIONS as i64)?;
            let worlds = int_in(&key("worlds"), worlds.unwrap_or(1), 1, MAX_SIMULATIONS as i64)?;
            let simulations = budget * worlds;
            if simulations > MAX_SIMULATIONS as i64 {
                return Err(bad(
                    &key("budget"),
                    budget,
                    format!(
                        "with a net, ISMCTS is the network's guided search of budget x worlds simulations, here \
                         {budget} x {worlds} = {simulations}: at most {MAX_SIMULATIONS}"
                    ),
                ));
            }
            let (adaptive, belief) = guided_keys(t, &p, simulations as u64)?;
            no_more(
                t,
                &p,
                "engine = \"ismcts\" with a net (the network's guided search) takes net, budget, worlds, adaptive \
                 and belief",
            )?;
            read(simulations as u64)?
                .with_adaptive(adaptive)
                .and_then(|a| a.with_belief(belief))
                .map_err(|why| bad(&key("net"), format!("\"{path}\""), why.to_string()))?
        }
        PlayerEngine::MStar | PlayerEngine::Expectimax if t.contains_key("evaluation") => {
            learned_worlds_agent(name, engine, t, d, worlds, &path)?
        }
        PlayerEngine::MStar | PlayerEngine::Expectimax => {
            let depth = match take_int(t, &p, "depth")? {
                Some(v) => v,
                None => match d.depth {
                    DepthLimit::Turns(k) => k as i64,
                    DepthLimit::Unlimited => {
                        return Err(missing(
                            &key("depth"),
                            &format!(
                                "a network's value leaves are searched to a depth: give depth = 1 to {MAX_LEAF_DEPTH}"
                            ),
                        ));
                    }
                },
            };
            let depth = int_in(&key("depth"), depth, 1, MAX_LEAF_DEPTH as i64)?;
            let Some(worlds) = worlds else {
                return Err(missing(
                    &key("worlds"),
                    &format!(
                        "a network's value leaves are searched on sampled worlds: give worlds = 1 to {MAX_LEAF_WORLDS}"
                    ),
                ));
            };
            let worlds = int_in(&key("worlds"), worlds, 1, MAX_LEAF_WORLDS as i64)?;
            match take_str(t, &p, "belief")? {
                None => {}
                Some(b) if b == "constraints" => {}
                Some(b) => {
                    return Err(bad(
                        &key("belief"),
                        format!("\"{b}\""),
                        "a network's value-leaf search draws its worlds from the constraints belief: \"constraints\"",
                    ));
                }
            }
            no_more(
                t,
                &p,
                &format!(
                    "engine = \"{}\" with a net (value leaves) takes net, depth, worlds and belief = \"constraints\"",
                    engine.name()
                ),
            )?;
            let leaves = LeafSearch::new(engine, depth as u32, worlds as u32).expect("each field was checked");
            read(0)?
                .with_leaves(leaves)
                .map_err(|why| bad(&key("net"), format!("\"{path}\""), why.to_string()))?
        }
        other => {
            return Err(bad(
                &key("net"),
                format!("\"{path}\""),
                format!(
                    "engine = \"{}\" takes no network: a model file plays with engine = \"net\" (its policy), \
                     \"ismcts\" (a search guided by it) or \"mstar\" / \"expectimax\" (its value at the leaves)",
                    other.name()
                ),
            ));
        }
    };
    Ok(agent)
}

/// `[agents.NAME] engine = "mstar"` (or `"expectimax"`) with `net` and
/// `evaluation = "learned"`: that search with the learned leaves, `budget`
/// nodes on each of `worlds` worlds the network's agent draws (`belief`:
/// `"constraints"`, the All-Fives state's own resampling, or `"policy"`,
/// weighted by the network's likelihood of the others' plays), `adaptive`
/// (the worlds stop once the play is decided). Budget and worlds default to
/// `[search]`'s.
fn learned_worlds_agent(
    name: &str,
    engine: PlayerEngine,
    t: &mut Table,
    d: SearchDefaults,
    worlds: Option<i64>,
    path: &str,
) -> Result<NetAgent, SpecError> {
    let p = format!("agents.{name}");
    let key = |k: &str| format!("{p}.{k}");
    match take_str(t, &p, "evaluation")? {
        Some(e) if e == "learned" => {}
        e => {
            return Err(bad(
                &key("evaluation"),
                format!("\"{}\"", e.unwrap_or_default()),
                "\"learned\": the searches' learned leaves over the network's worlds (leave it out for the \
                 network's value at the leaves)",
            ));
        }
    }
    if let Some(v) = t.get("depth") {
        return Err(bad(
            &key("depth"),
            v,
            "the learned leaves' search deepens within its node budget: give budget, not depth",
        ));
    }
    let budget = budget_or_default(
        t,
        &p,
        d,
        "the learned leaves' search spends a node budget a world: give budget = N here or in [search]",
    )?;
    let budget = int_in(&key("budget"), budget, 1, MAX_WORLD_SEARCH_BUDGET as i64)?;
    let Some(worlds) = worlds else {
        return Err(missing(
            &key("worlds"),
            &format!("the learned leaves are searched on sampled worlds: give worlds = 1 to {MAX_WORLD_SEARCH_WORLDS}"),
        ));
    };
    let worlds = int_in(&key("worlds"), worlds, 1, MAX_WORLD_SEARCH_WORLDS as i64)?;
    let belief = match take_str(t, &p, "belief")? {
        None => GuidedBelief::Constraints,
        Some(b) if b == "constraints" => GuidedBelief::Constraints,
        Some(b) if b == "policy" => GuidedBelief::Policy,
        Some(b) => {
            return Err(bad(
                &key("belief"),
                format!("\"{b}\""),
                "\"constraints\" (the state's own resampling) or \"policy\" (weighted by the network's likelihood \
                 of the other seats' plays)",
            ));
        }
    };
    let adaptive = super::fields::take_adaptive(t, &p)?.flatten();
    no_more(
        t,
        &p,
        &format!(
            "engine = \"{}\" with a net and evaluation = \"learned\" takes net, budget, worlds, belief and adaptive",
            engine.name()
        ),
    )?;
    let search = WorldSearch::new(engine, budget as u64, worlds as u64, belief)
        .expect("each field was checked")
        .with_adaptive(adaptive);
    crate::nets::read(path, 0.0)
        .and_then(|a| a.with_world_search(search))
        .map_err(|why| bad(&key("net"), format!("\"{path}\""), why.to_string()))
}

/// The agent's `budget`, else `[search]`'s; missing (saying `why`) when
/// neither gives one.
fn budget_or_default(t: &mut Table, p: &str, d: SearchDefaults, why: &str) -> Result<i64, SpecError> {
    match take_int(t, p, "budget")? {
        Some(v) => Ok(v),
        None if d.budget > 0 => Ok(d.budget as i64),
        None => Err(missing(&format!("{p}.budget"), why)),
    }
}

/// A network's own knobs on a search without a net: refused by name,
/// never ignored.
pub(super) fn no_net_keys(t: &Table, p: &str, engine: &str) -> Result<(), SpecError> {
    for k in ["temperature", "simulations"] {
        if let Some(v) = t.get(k) {
            return Err(bad(
                &format!("{p}.{k}"),
                v,
                format!(
                    "{k} belongs to a network's agent (engine = \"net\", net = \"models/...\"), not to engine = \"{engine}\""
                ),
            ));
        }
    }
    Ok(())
}

/// The model file's path (`net`), required.
fn model_path(t: &mut Table, p: &str, what: &str) -> Result<String, SpecError> {
    let why = format!("{what} plays a model file: give net = \"models/ppo-block.safetensors\"");
    take_str(t, p, "net")?.ok_or_else(|| missing(&format!("{p}.net"), why.trim_start()))
}

/// A guided search's `adaptive` and `belief` (both refused without
/// simulations).
fn guided_keys(t: &mut Table, p: &str, simulations: u64) -> Result<(bool, GuidedBelief), SpecError> {
    let key = |k: &str| format!("{p}.{k}");
    let adaptive = match t.remove("adaptive") {
        None => false,
        Some(Value::Boolean(b)) if !b || simulations > 0 => b,
        Some(v) => {
            return Err(bad(
                &key("adaptive"),
                v,
                "true or false; true stops a guided search once its play is decided, so it needs simulations > 0",
            ));
        }
    };
    let belief = match t.remove("belief") {
        None => GuidedBelief::Constraints,
        Some(Value::String(b)) if simulations > 0 && b.parse::<GuidedBelief>().is_ok() => b.parse().expect("parsed"),
        Some(v) => {
            return Err(bad(
                &key("belief"),
                v,
                "\"constraints\" (the default), \"head\" (the model's belief head) or \"policy\" (the likelihood \
                 of the other seats' plays under the model): where a guided search's worlds come from, so it needs \
                 simulations > 0",
            ));
        }
    };
    Ok((adaptive, belief))
}

/// Refuses any key left but `engine`, with `why`.
fn no_more(t: &mut Table, p: &str, why: &str) -> Result<(), SpecError> {
    if let Some(k) = t.keys().find(|k| *k != "engine") {
        return Err(bad(&format!("{p}.{k}"), &t[k.as_str()], why));
    }
    t.remove("engine");
    Ok(())
}
