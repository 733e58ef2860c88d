//! `muggins.Bot`: muggins' engines and fixed strategies deciding for the
//! player to act from that player's information only. In All Fives the bot
//! first draws a state the player cannot tell from the true one
//! (`State::resample`, from the constraints belief) and decides on it, so
//! no hidden tile of the true state can reach the engine; in block and team
//! its searches (`full::decide_open`, the game loop's: PIMC, or ISMCTS)
//! read only the player's hand and the public part, their worlds drawn
//! from the belief. The stream is
//! keyed by the bot's seed, the history's length and the player: the same
//! bot gives the same action for the same information, whatever it was
//! asked before. The search runs with the GIL released.

use engine::{Observability, PlayerEngine};
use full::{FullAgent, FullTarget, Leaves, LinearEval, PlayerName, SearchSettings, Shaping};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::OnceLock;

use super::args;
use super::state::State;
use full::spiel::NetPolicy;

mod step;

/// The learned evaluation `muggins run` ships (jobs/evals/fives-double6.json).
fn shipped_eval() -> &'static LinearEval {
    static EVAL: OnceLock<LinearEval> = OnceLock::new();
    EVAL.get_or_init(|| {
        let eval: LinearEval = serde_json::from_str(include_str!("../../jobs/evals/fives-double6.json"))
            .expect("the shipped evaluation parses");
        eval.check().expect("the shipped evaluation is this build's");
        eval
    })
}

/// An engine or a fixed strategy with its settings, deciding for the
/// player to act from that player's information only (docs/python.md).
///
/// `Bot(engine, **settings)`. Engines: "mstar", "expectimax" (to `depth`
/// plies, or `budget` nodes a world), "ismcts" (`budget` nodes a world,
/// needed), "dominai" (All Fives); fixed strategies: "random", "heaviest",
/// and for All Fives "scorer", "defender". Settings: `budget`, `depth`,
/// `worlds` (sampled worlds a decision, default 16), `belief` ("constraints", "uniform"; All Fives
/// also "model", "dominai"), `evaluation` ("score", or "learned": All Fives' two-seat double-6
/// leaves), `opponent` (M*'s model of the others: "searcher", "random", "scorer", ...), `seed`,
/// `table_mb`. Engine "net" plays a network's policy: `model` (a model file, e.g.
/// "models/ppo-block.safetensors"), `temperature` (0, the default: the highest logit; above 0, a
/// draw from the softmax), `seed`. "ismcts" with a `model` is the network's guided search of
/// `budget` x `worlds` simulations; "mstar" and "expectimax" with a `model` search `depth` plays
/// on `worlds` worlds with its value at the leaves, or with `evaluation="learned"` and `budget`
/// (All Fives) M*'s own search with the learned leaves on the worlds the network draws (`belief`
/// "constraints" or "policy"). `step(state)` gives the action; a bot is picklable (its engine and
/// settings).
#[pyclass(module = "muggins._muggins")]
#[derive(Clone, Debug)]
pub struct Bot {
    player: Player,
    /// What the engine takes the other sides to play (M*'s model).
    opponent: FullTarget,
    seed: u64,
    table_mb: u32,
    /// What it was made from (for pickling): the engine and its settings.
    made_of: (String, Vec<(String, Setting)>),
}

/// What decides: one of muggins' engines or fixed strategies, or a
/// network's policy.
#[derive(Clone, Debug)]
enum Player {
    Agent(FullAgent),
    Net(NetPolicy),
}

/// A setting's value as given (every setting is an int, a float or a str).
#[derive(Clone, Debug)]
enum Setting {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
}

/// A bot's keyword settings and their defaults.
struct Settings {
    budget: u64,
    depth: Option<u8>,
    worlds: u16,
    belief: String,
    evaluation: String,
    opponent: String,
    seed: u64,
    table_mb: u32,
    model: Option<String>,
    temperature: Option<f64>,
    simulations: Option<u64>,
    adaptive: Option<bool>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            budget: 0,
            depth: None,
            worlds: 16,
            belief: "constraints".into(),
            evaluation: "score".into(),
            opponent: "searcher".into(),
            seed: 0,
            table_mb: full::DEFAULT_TABLE_MB,
            model: None,
            temperature: None,
            simulations: None,
            adaptive: None,
        }
    }
}

/// The settings' ranges (those of `muggins run`'s specs, jobs/src/spec).
const MAX_BUDGET: i128 = 100_000_000;
const MAX_WORLDS: i128 = 1_000;
const MAX_DEPTH: i128 = full::DEEPEST as i128;
const MAX_TABLE_MB: i128 = 65_536;

impl Settings {
    fn set(&mut self, key: &str, v: &Bound<'_, PyAny>) -> PyResult<()> {
        let bad = |e: PyErr| PyValueError::new_err(format!("{key} = {v}: {e}"));
        let int = |lo: i128, hi: i128, what: &str| {
            args::int_in(v, &format!("{key} ="), lo..=hi, || format!(": {what} ({lo} to {hi})"))
        };
        match key {
            "budget" => self.budget = int(0, MAX_BUDGET, "nodes per world; 0 searches to depth")? as u64,
            "depth" => self.depth = Some(int(1, MAX_DEPTH, "plies")? as u8),
            "worlds" => self.worlds = int(0, MAX_WORLDS, "sampled worlds a decision")? as u16,
            "belief" => self.belief = v.extract().map_err(bad)?,
            "evaluation" => self.evaluation = v.extract().map_err(bad)?,
            "opponent" => self.opponent = v.extract().map_err(bad)?,
            "seed" => self.seed = args::seed(v, "seed =")?,
            "table_mb" => self.table_mb = int(1, MAX_TABLE_MB, "megabytes of transposition table")? as u32,
            "model" => self.model = Some(v.extract().map_err(bad)?),
            "temperature" => {
                let t: f64 = v.extract().map_err(bad)?;
                if !(0.0..=full::spiel::MAX_TEMPERATURE).contains(&t) {
                    return Err(PyValueError::new_err(format!(
                        "temperature = {t}: 0 (the highest logit) to {}",
                        full::spiel::MAX_TEMPERATURE
                    )));
                }
                self.temperature = Some(t);
            }
            "simulations" => {
                let max = full::spiel::MAX_SIMULATIONS as i128;
                self.simulations = Some(int(0, max, "guided simulations a decision")? as u64);
            }
            "adaptive" => {
                let b = v.cast::<pyo3::types::PyBool>().map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "adaptive = {v}: True or False (a guided search that stops once its play is decided)"
                    ))
                })?;
                self.adaptive = Some(b.is_true());
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown setting {other:?}: a bot takes budget, depth, worlds, belief, evaluation, opponent, seed, \
                     table_mb, and engine \"net\" model, temperature, simulations and adaptive"
                )));
            }
        }
        Ok(())
    }
}

fn parse<T: std::str::FromStr<Err = String>>(what: &str, v: &str) -> PyResult<T> {
    v.parse()
        .map_err(|e: String| PyValueError::new_err(format!("{what} = {v:?}: {e}")))
}

#[pymethods]
impl Bot {
    /// A bot: `engine` is "mstar", "expectimax", "ismcts", "dominai", or a
    /// fixed strategy ("random", "scorer", "defender", "heaviest"); the
    /// settings are keyword arguments (docs/python.md).
    #[new]
    #[pyo3(signature = (engine, **settings))]
    fn new(engine: &str, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut k = Settings::default();
        let mut given = Vec::new();
        if let Some(d) = settings {
            for (key, value) in d.iter() {
                let key = key.extract::<String>()?;
                k.set(&key, &value)?;
                let v = match value.extract::<String>() {
                    Ok(text) => Setting::Str(text),
                    Err(_) if key == "adaptive" => Setting::Bool(k.adaptive.unwrap_or(false)),
                    Err(_) if key == "temperature" => Setting::Float(value.extract()?),
                    Err(_) => Setting::Int(args::int(&value, &key)?),
                };
                given.push((key, v));
            }
        }
        let opponent: FullTarget = parse("opponent", &k.opponent)?;
        let name = engine
            .parse::<PlayerName>()
            .map_err(|e| PyValueError::new_err(format!("engine = {engine:?}: {e}")))?;
        if name == PlayerName::Net {
            return net_bot(&k, engine, given);
        }
        if let (PlayerName::Search(e), Some(_)) = (name, &k.model) {
            return net_search_bot(&k, e, engine, given);
        }
        if let Some(key) = [
            ("model", k.model.is_some()),
            ("temperature", k.temperature.is_some()),
            ("simulations", k.simulations.is_some()),
            ("adaptive", k.adaptive.is_some()),
        ]
        .into_iter()
        .find_map(|(key, set)| set.then_some(key))
        {
            return Err(PyValueError::new_err(format!(
                "{key}: only engine {:?} takes a model, a temperature, simulations and adaptive (engine = {engine:?})",
                PlayerEngine::Net.name()
            )));
        }
        let agent = match name {
            PlayerName::Fixed(t) => FullAgent::Fixed(t),
            PlayerName::Net => unreachable!("made by net_bot above"),
            PlayerName::Search(e) => {
                if k.worlds == 0 {
                    return Err(PyValueError::new_err(
                        "worlds = 0: a bot sees only its own tiles and decides over sampled worlds (at least 1)",
                    ));
                }
                let settings = SearchSettings {
                    engine: e,
                    depth: k.depth.unwrap_or(if k.budget > 0 { full::DEEPEST } else { 3 }).max(1),
                    budget: k.budget,
                    worlds: k.worlds,
                    learned: parse::<Leaves>("evaluation", &k.evaluation)?.is_learned(),
                    belief: parse("belief", &k.belief)?,
                    shaping: Shaping::None,
                    predictor: full::predict::PredictModel::Logit,
                    adaptive: None,
                };
                settings
                    .check(None, Some(Observability::Partial))
                    .map_err(args::value_error)?;
                FullAgent::Search(settings)
            }
        };
        Ok(Bot {
            player: Player::Agent(agent),
            opponent,
            seed: k.seed,
            table_mb: k.table_mb,
            made_of: (engine.to_string(), given),
        })
    }

    /// Pickling (`multiprocessing`, `copy`): the engine and its settings.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let settings = PyDict::new(py);
        for (k, v) in &self.made_of.1 {
            match v {
                Setting::Int(i) => settings.set_item(k, i)?,
                Setting::Float(f) => settings.set_item(k, f)?,
                Setting::Str(text) => settings.set_item(k, text)?,
                Setting::Bool(b) => settings.set_item(k, b)?,
            }
        }
        let f = py.import("muggins._muggins")?.getattr("bot_from_settings")?;
        let args = (self.made_of.0.clone(), settings);
        pyo3::types::PyTuple::new(py, [f.into_any(), args.into_pyobject(py)?.into_any()])
    }

    fn __repr__(&self) -> String {
        let settings: Vec<String> = self
            .made_of
            .1
            .iter()
            .map(|(k, v)| match v {
                Setting::Int(i) => format!(", {k}={i}"),
                Setting::Float(f) => format!(", {k}={f:?}"),
                Setting::Str(text) => format!(", {k}={text:?}"),
                Setting::Bool(b) => format!(", {k}={}", if *b { "True" } else { "False" }),
            })
            .collect();
        format!("muggins.Bot({:?}{})", self.made_of.0, settings.concat())
    }

    /// The bot's name as `muggins run` writes agents, e.g. `mstar (10000 nodes, 16 worlds, model)`.
    fn name(&self) -> String {
        match &self.player {
            Player::Agent(a) => a.name(),
            Player::Net(p) => p.name(),
        }
    }

    /// OpenSpiel's bot interface (`evaluate_bots`): the bot keeps nothing
    /// between decisions, so these only check that `state` is muggins'.
    fn restart_at(&self, state: &Bound<'_, PyAny>) -> PyResult<()> {
        state_of(state, "restart_at").map(drop)
    }

    /// OpenSpiel's bot interface: the bot keeps nothing between decisions,
    /// so this only checks that `state` is muggins'.
    #[pyo3(signature = (state, player_id, action))]
    fn inform_action(
        &self,
        state: &Bound<'_, PyAny>,
        player_id: &Bound<'_, PyAny>,
        action: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let _ = (player_id, action);
        state_of(state, "inform_action").map(drop)
    }

    /// The action the bot takes for the player to act in `state` (a
    /// `muggins.State`, or a `muggins.openspiel` state).
    fn step(&self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<u32> {
        let state = state_of(state, "step")?;
        let player = state.current_player_id();
        let Ok(player) = u8::try_from(player) else {
            return Err(PyValueError::new_err(format!(
                "step: no player acts here (current player {player})"
            )));
        };
        let mut rng = engine::seed::keyed_rng(
            self.seed,
            state.history_vec().len() as u64,
            player as u64,
            engine::seed::PYTHON,
            0,
        );
        let bot = self.clone();
        py.detach(move || bot.decide(&state.core, player, &mut rng))
            .map_err(PyValueError::new_err)
    }
}

/// Engine "net": a model file's policy, checked when the bot is made (the
/// file) and at each decision (that it plays the game).
fn net_bot(k: &Settings, engine: &str, given: Vec<(String, Setting)>) -> PyResult<Bot> {
    let Some(model) = &k.model else {
        return Err(PyValueError::new_err(
            "engine = \"net\" needs model, a model file, e.g. model=\"models/ppo-block.safetensors\"",
        ));
    };
    if let Some((key, _)) = given.iter().find(|(key, _)| {
        !matches!(
            key.as_str(),
            "model" | "temperature" | "simulations" | "adaptive" | "belief" | "seed"
        )
    }) {
        return Err(PyValueError::new_err(format!(
            "{key}: engine \"net\" takes model, temperature, simulations, adaptive, belief and seed (no other search \
             settings)"
        )));
    }
    let belief: full::spiel::GuidedBelief = parse("belief", &k.belief)?;
    let file = net::Model::load(std::path::Path::new(model)).map_err(args::value_error)?;
    let policy = NetPolicy::new(std::sync::Arc::new(file), model, k.temperature.unwrap_or(0.0))
        .and_then(|p| p.with_simulations(k.simulations.unwrap_or(0)))
        .and_then(|p| p.with_adaptive(k.adaptive.unwrap_or(false)))
        .and_then(|p| p.with_belief(belief))
        .map_err(args::value_error)?;
    Ok(net_player(policy, k, engine, given))
}

/// A search engine with a model: "ismcts" is the network's guided search
/// of `budget` x `worlds` simulations, "mstar" and "expectimax" search
/// `depth` plays (default 3) on `worlds` worlds with its value at the
/// leaves (`full::spiel::leaf_decide`), as a spec's `engine = E` with `net`;
/// with `evaluation="learned"` they spend `budget` nodes on each of
/// `worlds` worlds the network draws (`belief` "constraints" or "policy")
/// with the learned leaves (`full::spiel::world_decide`, All Fives).
fn net_search_bot(k: &Settings, e: PlayerEngine, engine: &str, given: Vec<(String, Setting)>) -> PyResult<Bot> {
    let model = k.model.as_deref().expect("called with a model");
    let learned = parse::<Leaves>("evaluation", &k.evaluation)?.is_learned();
    let takes: &[&str] = match e {
        PlayerEngine::Ismcts => &["model", "budget", "worlds", "adaptive", "belief", "seed"],
        PlayerEngine::MStar | PlayerEngine::Expectimax if learned => {
            &["model", "evaluation", "budget", "worlds", "belief", "adaptive", "seed"]
        }
        PlayerEngine::MStar | PlayerEngine::Expectimax => &["model", "depth", "worlds", "belief", "evaluation", "seed"],
        _ => &[],
    };
    if takes.is_empty() {
        return Err(PyValueError::new_err(format!(
            "model: engine {engine:?} takes no network; a model plays with engine \"net\" (its policy), \"ismcts\" \
             (a search guided by it) or \"mstar\" / \"expectimax\" (its value at the leaves, or with \
             evaluation=\"learned\" the learned leaves on its worlds)"
        )));
    }
    if let Some((key, _)) = given.iter().find(|(key, _)| !takes.contains(&key.as_str())) {
        let with = if learned && e != PlayerEngine::Ismcts {
            " and evaluation=\"learned\""
        } else {
            ""
        };
        return Err(PyValueError::new_err(format!(
            "{key}: engine {engine:?} with a model{with} takes {}",
            takes.join(", ")
        )));
    }
    let file = net::Model::load(std::path::Path::new(model)).map_err(args::value_error)?;
    let plain = NetPolicy::new(std::sync::Arc::new(file), model, 0.0).map_err(args::value_error)?;
    let belief = || parse::<full::spiel::GuidedBelief>("belief", &k.belief);
    let policy = if e == PlayerEngine::Ismcts {
        if k.budget == 0 {
            return Err(PyValueError::new_err(
                "budget: engine \"ismcts\" with a model is the network's guided search of budget x worlds \
                 simulations: give budget=N",
            ));
        }
        let belief = belief()?;
        plain
            .with_simulations(k.budget.saturating_mul(k.worlds.max(1) as u64))
            .and_then(|p| p.with_adaptive(k.adaptive.unwrap_or(false)))
            .and_then(|p| p.with_belief(belief))
            .map_err(args::value_error)?
    } else if learned {
        if k.budget == 0 {
            return Err(PyValueError::new_err(format!(
                "budget: engine {engine:?} with a model and evaluation=\"learned\" spends a node budget a world: \
                 give budget=N"
            )));
        }
        // adaptive=True: the worlds stop once the play is decided at 99%.
        let adaptive = k.adaptive.unwrap_or(false).then_some(full::Adaptive::DEFAULT);
        let how = full::spiel::WorldSearch::new(e, k.budget, k.worlds as u64, belief()?)
            .map_err(args::value_error)?
            .with_adaptive(adaptive);
        plain
            .with_world_search(how, std::sync::Arc::new(shipped_eval().clone()))
            .map_err(args::value_error)?
    } else {
        if k.belief != "constraints" {
            return Err(PyValueError::new_err(format!(
                "belief = {:?}: a network's value-leaf search draws its worlds from the \"constraints\" belief \
                 (\"policy\" goes with evaluation=\"learned\")",
                k.belief
            )));
        }
        let how =
            full::spiel::LeafSearch::new(e, k.depth.unwrap_or(3) as u32, k.worlds as u32).map_err(args::value_error)?;
        plain.with_leaves(how).map_err(args::value_error)?
    };
    Ok(net_player(policy, k, engine, given))
}

/// A bot that `policy` plays, made of `engine` and `given`.
fn net_player(policy: NetPolicy, k: &Settings, engine: &str, given: Vec<(String, Setting)>) -> Bot {
    Bot {
        player: Player::Net(policy),
        opponent: FullTarget::Searcher,
        seed: k.seed,
        table_mb: k.table_mb,
        made_of: (engine.to_string(), given),
    }
}

/// A bot of `engine` with `settings` (unpickling).
#[pyfunction]
pub fn bot_from_settings(engine: &str, settings: &Bound<'_, PyDict>) -> PyResult<Bot> {
    Bot::new(engine, Some(settings))
}

/// The `muggins.State` that `state` is or plays (a `muggins.openspiel`
/// state holds it as `_core`); anything else raises TypeError naming
/// `Bot.{method}` and what it was given.
fn state_of(state: &Bound<'_, PyAny>, method: &str) -> PyResult<State> {
    if let Ok(s) = state.cast::<State>() {
        return Ok(s.borrow().clone());
    }
    if let Ok(core) = state.getattr("_core")
        && let Ok(s) = core.cast::<State>()
    {
        return Ok(s.borrow().clone());
    }
    Err(PyTypeError::new_err(format!(
        "Bot.{method} takes a muggins.State (or the muggins OpenSpiel game's state), not {}",
        args::type_name(state)
    )))
}
