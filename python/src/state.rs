//! `muggins.State`: one class for every preset (block and team with
//! OpenSpiel's ids and observations, All Fives and the thesis's rules with
//! the ids of docs/python.md), with OpenSpiel's method names.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use full::spiel::{CHANCE, FivesState, OpenSpielState, TERMINAL, View};

use super::game::Game;

/// The state of a preset.
#[derive(Clone, Debug)]
pub enum Core {
    Open(OpenSpielState),
    Fives(FivesState),
}

/// A game state (docs/python.md): `State("all-fives", seats=4)`.
#[pyclass(module = "muggins._muggins")]
#[derive(Clone, Debug)]
pub struct State {
    pub game: Game,
    pub core: Core,
}

impl State {
    pub fn new_game(game: Game) -> State {
        let core = if game.is_fives() {
            Core::Fives(FivesState::new(game.rules.clone(), game.to))
        } else {
            Core::Open(OpenSpielState::new(game.rules.clone()))
        };
        State { game, core }
    }

    fn view(perfect_recall: bool, private: bool, public: bool) -> View {
        View {
            perfect_recall,
            private,
            public,
        }
    }

    fn check_player(&self, player: i64) -> PyResult<u8> {
        let seats = self.game.rules.seats() as i64;
        if (0..seats).contains(&player) {
            Ok(player as u8)
        } else {
            Err(PyValueError::new_err(format!(
                "player {player}: this game has players 0 to {}",
                seats - 1
            )))
        }
    }

    /// The player to act (OpenSpiel's ids).
    pub fn current_player_id(&self) -> i64 {
        match &self.core {
            Core::Open(c) => c.current_player(),
            Core::Fives(c) => c.current_player(),
        }
    }

    pub fn history_vec(&self) -> &[u32] {
        match &self.core {
            Core::Open(c) => &c.history,
            Core::Fives(c) => &c.history,
        }
    }

    pub fn apply(&mut self, action: u32) -> Result<(), String> {
        match &mut self.core {
            Core::Open(c) => c.apply(action),
            Core::Fives(c) => c.apply(action),
        }
    }
}

/// A state of `game` (with `knobs`) after `history` (unpickling).
#[pyfunction]
#[pyo3(signature = (game, knobs, history))]
pub fn state_from_history(game: &str, knobs: &Bound<'_, PyDict>, history: Vec<u32>) -> PyResult<State> {
    let mut s = State::new_game(Game::from_py(game, Some(knobs))?);
    for a in history {
        s.apply(a).map_err(PyValueError::new_err)?;
    }
    Ok(s)
}

#[pymethods]
impl State {
    /// A new game of `game` ("all-fives", "block", "team" or "thesis") with
    /// its knobs, before the deal.
    #[new]
    #[pyo3(signature = (game, **knobs))]
    fn py_new(game: &str, knobs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Ok(State::new_game(Game::from_py(game, knobs)?))
    }

    /// The preset's name.
    fn game_name(&self) -> &'static str {
        self.game.name
    }

    /// The knobs that differ from the preset's defaults.
    fn knobs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.game.knobs() {
            d.set_item(k, v.to_py(py)?)?;
        }
        Ok(d)
    }

    /// The player to act: a seat, -1 at a chance node, -4 when over.
    fn current_player(&self) -> i64 {
        self.current_player_id()
    }

    fn is_chance_node(&self) -> bool {
        self.current_player() == CHANCE
    }

    fn is_terminal(&self) -> bool {
        self.current_player() == TERMINAL
    }

    /// The legal actions, ascending (at a chance node, the outcomes).
    fn legal_actions(&self) -> Vec<u32> {
        match &self.core {
            Core::Open(c) => c.legal_actions(),
            Core::Fives(c) => c.legal_actions(),
        }
    }

    /// A chance node's outcomes with their probabilities (uniform).
    fn chance_outcomes(&self) -> Vec<(u32, f64)> {
        if !self.is_chance_node() {
            return Vec::new();
        }
        let left = self.legal_actions();
        let p = 1.0 / left.len() as f64;
        left.into_iter().map(|a| (a, p)).collect()
    }

    /// Applies a legal action; an illegal one raises ValueError naming it.
    fn apply_action(&mut self, action: i64) -> PyResult<()> {
        let a = u32::try_from(action).map_err(|_| PyValueError::new_err(format!("action {action}: not legal here")))?;
        self.apply(a).map_err(PyValueError::new_err)
    }

    /// Every player's return (0 until the end).
    fn returns(&self) -> Vec<f64> {
        match &self.core {
            Core::Open(c) => c.returns(),
            Core::Fives(c) => c.returns(),
        }
    }

    fn history(&self) -> Vec<u32> {
        self.history_vec().to_vec()
    }

    fn num_players(&self) -> usize {
        self.game.rules.seats() as usize
    }

    fn clone(&self) -> Self {
        Clone::clone(self)
    }

    fn __copy__(&self) -> Self {
        Clone::clone(self)
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        Clone::clone(self)
    }

    /// Pickling: the game, its knobs and the history.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let f = py.import("muggins._muggins")?.getattr("state_from_history")?;
        let args = (self.game.name, self.knobs(py)?, self.history());
        PyTuple::new(py, [f.into_any(), args.into_pyobject(py)?.into_any()])
    }

    /// The string of `action` taken by `player` (-1: chance).
    fn action_to_string(&self, player: i64, action: u32) -> String {
        match &self.core {
            Core::Open(c) => c.action_string(player, action),
            Core::Fives(c) => c.action_string(player, action),
        }
    }

    /// What `player` observes now (OpenSpiel's default observer: its own
    /// tiles and the public part; `perfect_recall` for the whole history).
    #[pyo3(signature = (player, perfect_recall=false, private=true, public=true))]
    fn observation_string(&self, player: i64, perfect_recall: bool, private: bool, public: bool) -> PyResult<String> {
        let p = self.check_player(player)?;
        let v = State::view(perfect_recall, private, public);
        Ok(match &self.core {
            Core::Open(c) => c.observation_string(p, v),
            Core::Fives(c) => c.observation_string(p, v),
        })
    }

    /// Everything `player` has seen, in order.
    fn information_state_string(&self, player: i64) -> PyResult<String> {
        self.observation_string(player, true, true, true)
    }

    /// The observation tensor of `player` (flat; its pieces' names and
    /// shapes are `tensor_pieces`).
    #[pyo3(signature = (player, perfect_recall=false, private=true, public=true))]
    fn observation_tensor(&self, player: i64, perfect_recall: bool, private: bool, public: bool) -> PyResult<Vec<f32>> {
        let p = self.check_player(player)?;
        let v = State::view(perfect_recall, private, public);
        Ok(match &self.core {
            Core::Open(c) => c.tensor(p, v),
            Core::Fives(c) => c.tensor(p, v),
        })
    }

    fn information_state_tensor(&self, player: i64) -> PyResult<Vec<f32>> {
        self.observation_tensor(player, true, true, true)
    }

    /// The tensor's pieces: (name, shape) in order.
    #[pyo3(signature = (perfect_recall=false, private=true, public=true))]
    fn tensor_pieces(&self, perfect_recall: bool, private: bool, public: bool) -> Vec<(&'static str, Vec<usize>)> {
        let v = State::view(perfect_recall, private, public);
        match &self.core {
            Core::Open(c) => c.tensor_pieces(v),
            Core::Fives(c) => c.tensor_pieces(v),
        }
    }

    /// A state `player` cannot tell from this one, its hidden tiles drawn
    /// exactly from the constraints belief with the stream keyed by `seed`
    /// (docs/python.md).
    fn resample(&self, py: Python<'_>, player: i64, seed: u64) -> PyResult<State> {
        let p = self.check_player(player)?;
        let mut rng = engine::seed::keyed_rng(seed, 0, 0, engine::seed::PYTHON, 1);
        let core = py
            .detach(|| match &self.core {
                Core::Open(c) => c.resample(p, &mut rng).map(Core::Open),
                Core::Fives(c) => c.resample(p, &mut rng).map(Core::Fives),
            })
            .map_err(PyValueError::new_err)?;
        Ok(State {
            game: self.game.clone(),
            core,
        })
    }

    /// A one-hand All-Fives state that `seat`, holding `tiles`, cannot tell
    /// from the hand it plays, given the hand's public `history` (the agent
    /// protocol's view, docs/agents.md): the others' tiles drawn exactly
    /// from the constraints belief with the stream keyed by `seed`.
    /// `winner`: the seat that dominoed the match's previous hand (under
    /// `lead = "winner"` it leads this one); `None` for a first hand.
    #[staticmethod]
    #[pyo3(signature = (game, seat, tiles, history, **options))]
    fn from_view(
        py: Python<'_>,
        game: &str,
        seat: u8,
        tiles: Vec<u8>,
        history: Vec<u32>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<State> {
        // `winner` and `seed` are options; every other keyword is a knob.
        let knobs = PyDict::new(py);
        let (mut winner, mut seed) = (None::<u8>, 0u64);
        if let Some(o) = options {
            for (k, v) in o.iter() {
                match k.extract::<String>()?.as_str() {
                    "winner" => winner = v.extract()?,
                    "seed" => seed = v.extract()?,
                    _ => knobs.set_item(k, v)?,
                }
            }
        }
        let knobs = Some(&knobs);
        let mut g = Game::from_py(game, knobs)?;
        if !g.is_fives() {
            return Err(PyValueError::new_err(format!(
                "from_view: game {game:?}; it builds all-fives and thesis hands"
            )));
        }
        g.to = 0;
        let set = tiles
            .iter()
            .try_fold(0u64, |m, &t| (t < g.rules.tile_count()).then_some(m | 1 << t).ok_or(t));
        let set = set.map_err(|t| PyValueError::new_err(format!("tiles: {t} is not a tile of this set")))?;
        let previous = winner.map(full::HandEnd::Domino);
        let mut rng = engine::seed::keyed_rng(seed, 0, 0, engine::seed::PYTHON, 2);
        let rules = g.rules.clone();
        let core = py
            .detach(|| FivesState::from_view(&rules, seat, set, &history, previous, &mut rng))
            .map_err(PyValueError::new_err)?;
        Ok(State {
            game: g,
            core: Core::Fives(core),
        })
    }

    /// This game at its start (the same rules; a hand built by `from_view`
    /// keeps who leads it).
    fn restart(&self) -> State {
        let core = match &self.core {
            Core::Open(c) => Core::Open(OpenSpielState::new(c.rules.clone())),
            Core::Fives(c) => Core::Fives(c.restart()),
        };
        State {
            game: self.game.clone(),
            core,
        }
    }

    /// The number of action ids (`num_distinct_actions` in OpenSpiel).
    fn num_distinct_actions(&self) -> u32 {
        match &self.core {
            Core::Open(c) => c.rules.seats() as u32 * c.rules.actions_per_seat() as u32,
            Core::Fives(c) => c.num_distinct_actions(),
        }
    }

    fn max_chance_outcomes(&self) -> u32 {
        self.game.rules.tile_count() as u32
    }

    /// The bounds of a return (OpenSpiel's for block and team).
    fn min_utility(&self) -> f64 {
        match &self.core {
            Core::Open(c) if c.rules.seats() == 2 => -69.0,
            Core::Open(_) => -100.0,
            Core::Fives(c) => c.min_utility(),
        }
    }

    fn max_utility(&self) -> f64 {
        match &self.core {
            Core::Fives(c) => c.max_utility(),
            Core::Open(_) => -self.min_utility(),
        }
    }

    /// The most actions a game takes (OpenSpiel's number for block and team).
    fn max_game_length(&self) -> u64 {
        match &self.core {
            Core::Open(_) => 28,
            Core::Fives(c) => c.max_game_length(),
        }
    }

    /// Every seat's tiles now (the whole truth: for tests and debugging).
    fn hands(&self) -> Vec<Vec<u32>> {
        let seats = self.game.rules.seats() as usize;
        (0..seats)
            .map(|s| {
                let set = match &self.core {
                    Core::Open(c) => c.lists[s].iter().fold(0u64, |m, &t| m | 1 << t),
                    Core::Fives(c) => c.hand_of(s as u8),
                };
                engine::bits(set).map(u32::from).collect()
            })
            .collect()
    }

    fn __str__(&self) -> String {
        let hands: Vec<String> = self
            .hands()
            .iter()
            .enumerate()
            .map(|(s, h)| format!("p{s}:{h:?}"))
            .collect();
        format!(
            "{} {} history:{:?}",
            self.game.name,
            hands.join(" "),
            self.history_vec()
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "<muggins.State {} after {} actions>",
            self.game.name,
            self.history_vec().len()
        )
    }
}
