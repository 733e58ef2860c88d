//! `muggins.State`: one class for every preset (block and team with
//! OpenSpiel's ids and observations, All Fives and the thesis's rules with
//! the ids of docs/python.md), with OpenSpiel's method names.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use full::spiel::{CHANCE, FivesState, TERMINAL, View};

use super::args;
use super::game::Game;

/// The state of a preset (`full::spiel::SpielState`).
pub use full::spiel::SpielState as Core;

/// A game state (docs/python.md), with OpenSpiel's method names.
///
/// `State(game, **knobs)`: `game` is "block" or "team" (OpenSpiel's games
/// exactly: no knobs), "all-fives" (knobs `seats` 2-4, `teams` (four seats
/// in partnerships, the default for four), `set`, `hand`, `keep`, `round`,
/// `blocked` ("opponents", "difference"), `lead` ("winner", "highest-double"),
/// `to` (0: one hand, else a match to that score)) or "thesis" (knobs
/// `set`, `hand`). Bad knobs raise ValueError naming them.
///
/// Methods: `current_player`, `legal_actions`, `apply_action`, `returns`,
/// `is_terminal`, `is_chance_node`, `chance_outcomes`, the observation and
/// information-state strings and tensors, `encode` (the reinforcement-
/// learning encodings, docs/rl.md), `resample`, `from_view`, `clone`;
/// `game_name()` and `knobs()` say which game it is.
#[pyclass(module = "muggins._muggins")]
#[derive(Clone, Debug)]
pub struct State {
    pub game: Game,
    pub core: Core,
}

impl State {
    pub fn new_game(game: Game) -> State {
        let core = Core::new(game.rules.clone(), game.to);
        State { game, core }
    }

    fn view(perfect_recall: bool, private: bool, public: bool) -> View {
        View {
            perfect_recall,
            private,
            public,
        }
    }

    /// A seat of this game (a player id from Python), else a ValueError
    /// naming it.
    pub fn check_player(&self, player: &Bound<'_, PyAny>) -> PyResult<u8> {
        let seats = self.game.rules.seats() as i128;
        let p = args::int_in(player, "player", 0..=seats - 1, || {
            format!(": {} has {seats} seats (players 0 to {})", self.game.name, seats - 1)
        })?;
        Ok(p as u8)
    }

    /// `observer` if it is a seat of this game, else a ValueError naming it.
    fn check_observer(&self, observer: u8) -> PyResult<u8> {
        let seats = self.game.rules.seats();
        if observer >= seats {
            return Err(PyValueError::new_err(format!(
                "observer = {observer}: a seat, 0 to {}",
                seats - 1
            )));
        }
        Ok(observer)
    }

    /// The number of action ids.
    pub fn action_count(&self) -> u32 {
        self.core.action_count()
    }

    /// `action` as an action id of this game (0 to `action_count() - 1`),
    /// else a ValueError naming it; `what` names the argument.
    pub fn check_action(&self, action: &Bound<'_, PyAny>, what: &str) -> PyResult<u32> {
        let n = self.action_count();
        let a = args::int_in(action, what, 0..=n as i128 - 1, || {
            format!(" is not an action id of {} (0..{n})", self.game.name)
        })?;
        Ok(a as u32)
    }

    /// `outcome` as a chance outcome of this game (a tile index), else a
    /// ValueError naming it.
    pub fn check_outcome(&self, outcome: &Bound<'_, PyAny>) -> PyResult<u32> {
        let n = self.game.rules.tile_count() as i128;
        let t = args::int_in(outcome, "chance outcome", 0..=n - 1, || {
            format!(" is not a tile of {} (0..{n})", self.game.name)
        })?;
        Ok(t as u32)
    }

    /// The player to act (OpenSpiel's ids).
    pub fn current_player_id(&self) -> i64 {
        self.core.current_player()
    }

    pub fn history_vec(&self) -> &[u32] {
        self.core.history()
    }

    pub fn apply(&mut self, action: u32) -> Result<(), full::spiel::SpielError> {
        self.core.apply(action)
    }
}

/// A state of `game` (with `knobs`) after `history` (unpickling).
#[pyfunction]
#[pyo3(signature = (game, knobs, history))]
pub fn state_from_history(game: &str, knobs: &Bound<'_, PyDict>, history: &Bound<'_, PyAny>) -> PyResult<State> {
    let mut s = State::new_game(Game::from_py(game, Some(knobs))?);
    let history = args::int_list(history, "history", |i, a| s.check_action(a, &format!("history[{i}]")))?;
    for a in history {
        s.apply(a).map_err(args::value_error)?;
    }
    Ok(s)
}

/// The plays of a public `history` (`State.from_view`) are each legal
/// where they are made (the tile not on the board yet, matching the end it
/// is played on) and none comes after the hand's end: the checks
/// `FivesState::from_view` relies on and does not make (issue 41: an
/// unplayable tile there reached a panic). The replay is `from_view`'s own
/// (every seat may hold every tile not yet played).
fn check_view_history(rules: &full::FullRules, seat: u8, history: &[u32]) -> PyResult<()> {
    use full::{FivesPosition, MAX_SEATS, Opening, fives_action_of, fives_draw_id, fives_pass_id};
    let seats = rules.seats() as u64;
    let (draw, pass) = (fives_draw_id(rules), fives_pass_id(rules));
    let turns = history.iter().filter(|&&a| a != draw).count() as u64;
    let leader = ((seat as u64 + seats * (turns + 1) - turns % seats) % seats) as u8;
    let mut pos = FivesPosition::deal(rules, [rules.all_tiles(); MAX_SEATS], Opening { leader, forced: None });
    pos.boneyard = 0;
    let mut on_board = 0u64;
    let mut list = engine::ActionList::default();
    for (i, &a) in history.iter().enumerate() {
        if pos.end.is_some() {
            return Err(PyValueError::new_err(format!(
                "history[{i}] {a}: the hand is over before it"
            )));
        }
        if a == draw {
            continue;
        }
        if a == pass {
            pos.pass(rules);
            continue;
        }
        let act = fives_action_of(a);
        pos.actions(rules, &mut list);
        if on_board >> act.tile & 1 == 1 || !list.as_slice().contains(&act) {
            return Err(PyValueError::new_err(format!(
                "history[{i}] {a}: cannot be played here"
            )));
        }
        pos.play(rules, act);
        on_board |= 1 << act.tile;
    }
    Ok(())
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

    /// Whether chance acts next (a tile dealt or drawn).
    fn is_chance_node(&self) -> bool {
        self.current_player() == CHANCE
    }

    /// Whether the game is over.
    fn is_terminal(&self) -> bool {
        self.current_player() == TERMINAL
    }

    /// The legal actions, ascending (at a chance node, the outcomes).
    fn legal_actions(&self) -> Vec<u32> {
        self.core.legal_actions()
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
    fn apply_action(&mut self, action: &Bound<'_, PyAny>) -> PyResult<()> {
        let a = args::int(action, "action")?;
        let a = u32::try_from(a).map_err(|_| PyValueError::new_err(format!("action {a}: not legal here")))?;
        self.apply(a).map_err(args::value_error)
    }

    /// Every player's return (0 until the end).
    fn returns(&self) -> Vec<f64> {
        self.core.returns()
    }

    /// Every action so far, chance outcomes included, in order.
    fn history(&self) -> Vec<u32> {
        self.history_vec().to_vec()
    }

    /// The number of seats.
    fn num_players(&self) -> usize {
        self.game.rules.seats() as usize
    }

    /// A copy of this state (OpenSpiel's `clone`).
    fn clone(&self) -> Self {
        Clone::clone(self)
    }

    /// A copy of this state (`copy.copy`).
    fn __copy__(&self) -> Self {
        Clone::clone(self)
    }

    /// A copy of this state (`copy.deepcopy`; a state holds no Python object).
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        Clone::clone(self)
    }

    /// Pickling: the game, its knobs and the history.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let f = py.import("muggins._muggins")?.getattr("state_from_history")?;
        let args = (self.game.name, self.knobs(py)?, self.history());
        PyTuple::new(py, [f.into_any(), args.into_pyobject(py)?.into_any()])
    }

    /// The string of `action` taken by `player` (-1: chance, `action` a
    /// tile); a player or an id the game does not have raises ValueError.
    fn action_to_string(&self, player: &Bound<'_, PyAny>, action: &Bound<'_, PyAny>) -> PyResult<String> {
        let p = args::int(player, "player")?;
        let (player, action) = if p == CHANCE as i128 {
            (CHANCE, self.check_outcome(action)?)
        } else {
            let seats = self.game.rules.seats() as i128;
            if !(0..seats).contains(&p) {
                return Err(PyValueError::new_err(format!(
                    "player {p}: {} has {seats} seats (players 0 to {}, or -1 for chance)",
                    self.game.name,
                    seats - 1
                )));
            }
            (p as i64, self.check_action(action, "action")?)
        };
        Ok(self.core.action_string(player, action))
    }

    /// What `player` observes now (OpenSpiel's default observer: its own
    /// tiles and the public part; `perfect_recall` for the whole history).
    #[pyo3(signature = (player, perfect_recall=false, private=true, public=true))]
    fn observation_string(
        &self,
        player: &Bound<'_, PyAny>,
        perfect_recall: bool,
        private: bool,
        public: bool,
    ) -> PyResult<String> {
        let p = self.check_player(player)?;
        let v = State::view(perfect_recall, private, public);
        Ok(self.core.observation_string(p, v))
    }

    /// Everything `player` has seen, in order.
    fn information_state_string(&self, player: &Bound<'_, PyAny>) -> PyResult<String> {
        self.observation_string(player, true, true, true)
    }

    /// The observation tensor of `player` (flat; its pieces' names and
    /// shapes are `tensor_pieces`).
    #[pyo3(signature = (player, perfect_recall=false, private=true, public=true))]
    fn observation_tensor(
        &self,
        player: &Bound<'_, PyAny>,
        perfect_recall: bool,
        private: bool,
        public: bool,
    ) -> PyResult<Vec<f32>> {
        let p = self.check_player(player)?;
        let v = State::view(perfect_recall, private, public);
        Ok(self.core.tensor(p, v))
    }

    /// Everything `player` has seen, as a tensor (`observation_tensor` with
    /// `perfect_recall`; the reinforcement-learning environments' "info_state").
    fn information_state_tensor(&self, player: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
        self.observation_tensor(player, true, true, true)
    }

    /// `player`'s observation under `encoding` ("info_state": OpenSpiel's
    /// information-state tensor; "rich" or "rich_history": docs/rl.md), as the
    /// reinforcement-learning environments give it.
    #[pyo3(signature = (player, encoding="info_state"))]
    fn encode(&self, player: &Bound<'_, PyAny>, encoding: &str) -> PyResult<Vec<f32>> {
        let p = self.check_player(player)?;
        let e: full::spiel::Encoding = encoding.parse().map_err(PyValueError::new_err)?;
        let mut out = Vec::new();
        self.core.encode(p, e, &mut out);
        Ok(out)
    }

    /// The pieces of `encoding`: (name, shape) in order.
    #[pyo3(signature = (encoding="info_state"))]
    fn encoding_pieces(&self, encoding: &str) -> PyResult<Vec<(&'static str, Vec<usize>)>> {
        let e: full::spiel::Encoding = encoding.parse().map_err(PyValueError::new_err)?;
        Ok(self.core.encoding_pieces(e))
    }

    /// The tensor's pieces: (name, shape) in order.
    #[pyo3(signature = (perfect_recall=false, private=true, public=true))]
    fn tensor_pieces(&self, perfect_recall: bool, private: bool, public: bool) -> Vec<(&'static str, Vec<usize>)> {
        let v = State::view(perfect_recall, private, public);
        self.core.tensor_pieces(v)
    }

    /// A state `player` cannot tell from this one, its hidden tiles drawn
    /// exactly from the constraints belief with the stream keyed by `seed`
    /// (docs/python.md).
    fn resample(&self, py: Python<'_>, player: &Bound<'_, PyAny>, seed: &Bound<'_, PyAny>) -> PyResult<State> {
        let p = self.check_player(player)?;
        let seed = args::seed(seed, "seed")?;
        let mut rng = engine::seed::keyed_rng(seed, 0, 0, engine::seed::PYTHON, 1);
        let core = py
            .detach(|| self.core.resample(p, &mut rng))
            .map_err(args::value_error)?;
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
        seat: &Bound<'_, PyAny>,
        tiles: &Bound<'_, PyAny>,
        history: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<State> {
        // `winner` and `seed` are options; every other keyword is a knob.
        let knobs = PyDict::new(py);
        let (mut winner, mut seed) = (None, 0u64);
        if let Some(o) = options {
            for (k, v) in o.iter() {
                match k.extract::<String>()?.as_str() {
                    "winner" => winner = (!v.is_none()).then_some(v),
                    "seed" => seed = args::seed(&v, "seed")?,
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
        let shape = State::new_game(g.clone());
        let seats = g.rules.seats() as i128;
        let seat = args::int_in(seat, "seat", 0..=seats - 1, || {
            format!(": {} has {seats} seats (0 to {})", g.name, seats - 1)
        })? as u8;
        let winner = match winner {
            None => None,
            Some(w) => Some(args::int_in(&w, "winner", 0..=seats - 1, || {
                format!(
                    ": {} has {seats} seats (0 to {}, or None for a first hand)",
                    g.name,
                    seats - 1
                )
            })? as u8),
        };
        let tile_count = g.rules.tile_count() as i128;
        let tiles = args::int_list(tiles, "tiles", |i, t| {
            args::int_in(t, &format!("tiles[{i}]"), 0..=tile_count - 1, || {
                format!(" is not a tile of {} (0..{tile_count})", g.name)
            })
        })?;
        let set = tiles.iter().fold(0u64, |m, &t| m | 1 << t);
        let history = args::int_list(history, "history", |i, a| {
            shape.check_action(a, &format!("history[{i}]"))
        })?;
        check_view_history(&g.rules, seat, &history)?;
        let previous = winner.map(full::HandEnd::Domino);
        let mut rng = engine::seed::keyed_rng(seed, 0, 0, engine::seed::PYTHON, 2);
        let rules = g.rules.clone();
        let core = py
            .detach(|| FivesState::from_view(&rules, seat, set, &history, previous, &mut rng))
            .map_err(args::value_error)?;
        Ok(State {
            game: g,
            core: Core::Fives(core),
        })
    }

    /// This game at its start (the same rules; a hand built by `from_view`
    /// keeps who leads it).
    fn restart(&self) -> State {
        State {
            game: self.game.clone(),
            core: self.core.restart(),
        }
    }

    /// The number of action ids (`num_distinct_actions` in OpenSpiel).
    fn num_distinct_actions(&self) -> u32 {
        self.action_count()
    }

    /// The most outcomes a chance node has (the tiles of the set).
    fn max_chance_outcomes(&self) -> u32 {
        self.game.rules.tile_count() as u32
    }

    /// The bounds of a return (OpenSpiel's for block and team).
    fn min_utility(&self) -> f64 {
        self.core.min_utility()
    }

    /// The largest return (`-min_utility()` for one hand; 1 for a match).
    fn max_utility(&self) -> f64 {
        self.core.max_utility()
    }

    /// The most actions a game takes (OpenSpiel's number for block and team).
    fn max_game_length(&self) -> u64 {
        self.core.max_game_length()
    }

    /// Every seat's tiles now (the whole truth: for tests and debugging).
    fn hands(&self) -> Vec<Vec<u32>> {
        let seats = self.game.rules.seats() as usize;
        (0..seats)
            .map(|s| engine::bits(self.core.hand_of(s as u8)).map(u32::from).collect())
            .collect()
    }

    /// Where each tile is from `observer`'s side (the whole truth, a
    /// belief head's target; docs/train.md, "A belief head"): for each
    /// tile id, `k` when the seat `k + 1` places after the observer holds
    /// it, `seats - 1` in the boneyard, 255 when the observer sees it (its
    /// own, or played).
    fn holders(&self, observer: u8) -> PyResult<Vec<u8>> {
        let observer = self.check_observer(observer)?;
        let mut out = Vec::new();
        self.core.holders(observer, &mut out);
        Ok(out)
    }

    /// The constraints belief's marginals from `observer`'s side, the
    /// prior a belief head with `belief_prior = "constraints"` corrects
    /// (docs/train.md, "A belief head"): for each tile id, the probability
    /// of each holder (in `holders`' order), all 0 for a tile the observer
    /// sees.
    fn belief_prior(&self, observer: u8) -> PyResult<Vec<Vec<f32>>> {
        let observer = self.check_observer(observer)?;
        let mut out = Vec::new();
        self.core.belief_prior(observer, &mut out);
        Ok(out
            .chunks(self.game.rules.seats() as usize)
            .map(<[f32]>::to_vec)
            .collect())
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
