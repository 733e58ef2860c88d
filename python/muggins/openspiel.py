"""muggins' games registered with OpenSpiel (docs/python.md).

Importing this module registers three games with `pyspiel.register_game`:

- `muggins_block` and `muggins_team`: drop-in replacements for OpenSpiel's
  `python_block_dominoes` and `python_team_dominoes` (the same action ids,
  observation strings and tensors, returns and parameters), played by
  muggins' Rust engine;
- `muggins_all_fives`: All Fives for 2-4 seats, with the rules' knobs as
  game parameters, e.g. `pyspiel.load_game("muggins_all_fives(seats=4,teams=true)")`.

Each state implements `resample_from_infostate` exactly (the constraints
belief), so OpenSpiel's ISMCTSBot plays them. `bot(engine, **settings)`
gives a muggins engine as a `pyspiel.Bot`.
"""
import numpy as np
import pyspiel

from ._muggins import Bot as _Bot
from ._muggins import State as _State

__all__ = ["MugginsAllFivesGame", "MugginsBlockGame", "MugginsTeamGame", "MugginsState", "bot"]

# The All-Fives parameters and their defaults (hand = 0: the usual hand,
# 7 for two seats and 5 for three or four; teams: partnerships when there
# are four seats, as muggins.State and the specs default (pyspiel fills in
# every default, so `teams = true` cannot tell "given" from "default" and
# means nothing for two or three seats); to = 0: one hand, else a match).
_FIVES_PARAMS = {
    "seats": 2,
    "teams": True,
    "set": 6,
    "hand": 0,
    "keep": 0,
    "round": True,
    "blocked": "opponents",
    "lead": "winner",
    "to": 0,
}


def _core_of(state, method):
    """The `muggins.State` a muggins OpenSpiel state plays; anything else
    raises TypeError naming `method`."""
    core = getattr(state, "_core", None)
    if not isinstance(core, _State):
        kind = type(state)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError(f"{method} takes a state of a muggins OpenSpiel game, not {name}")
    return core


def _game_type(short_name, long_name, min_players, max_players, params):
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max_players,
        min_num_players=min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=True,
        parameter_specification=params,
    )


_BLOCK_TYPE = _game_type("muggins_block", "muggins block dominoes (python_block_dominoes exactly)", 2, 2, {})
_TEAM_TYPE = _game_type("muggins_team", "muggins team dominoes (python_team_dominoes exactly)", 4, 4, {})
_FIVES_TYPE = _game_type("muggins_all_fives", "muggins All Fives", 2, 4, dict(_FIVES_PARAMS))


def _fives_knobs(params):
    p = dict(_FIVES_PARAMS)
    unknown = set(params) - set(p)
    if unknown:
        raise ValueError(f"muggins_all_fives: unknown parameter(s) {sorted(unknown)}; it takes {sorted(p)}")
    p.update(params)
    knobs = {k: p[k] for k in ("seats", "teams", "set", "keep", "round", "blocked", "lead", "to")}
    if p["seats"] != 4:
        knobs["teams"] = False
    if p["hand"]:
        knobs["hand"] = p["hand"]
    return knobs


class _MugginsGame(pyspiel.Game):
    """A muggins game; subclasses name the preset."""

    _GAME_TYPE = None
    _PRESET = None

    def __init__(self, params=None):
        params = dict(params or {})
        knobs = _fives_knobs(params) if self._PRESET == "all-fives" else {}
        if self._PRESET != "all-fives" and params:
            raise ValueError(f"{self._GAME_TYPE.short_name} takes no parameters; got {sorted(params)}")
        self._proto = _State(self._PRESET, **knobs)
        p = self._proto
        info = pyspiel.GameInfo(
            num_distinct_actions=p.num_distinct_actions(),
            max_chance_outcomes=p.max_chance_outcomes(),
            num_players=p.num_players(),
            min_utility=p.min_utility(),
            max_utility=p.max_utility(),
            utility_sum=0.0,
            max_game_length=p.max_game_length(),
        )
        super().__init__(self._GAME_TYPE, info, params)

    def new_initial_state(self):
        return MugginsState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return MugginsObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class MugginsBlockGame(_MugginsGame):
    _GAME_TYPE = _BLOCK_TYPE
    _PRESET = "block"


class MugginsTeamGame(_MugginsGame):
    _GAME_TYPE = _TEAM_TYPE
    _PRESET = "team"


class MugginsAllFivesGame(_MugginsGame):
    _GAME_TYPE = _FIVES_TYPE
    _PRESET = "all-fives"


class MugginsState(pyspiel.State):
    """A state of a muggins game; `_core` is the `muggins.State` it plays."""

    def __init__(self, game, core=None):
        super().__init__(game)
        self._core = core if core is not None else game._proto.clone()

    # Read-only queries answered by the core directly (pyspiel's own C++
    # path reaches the same answers through current_player, _legal_actions
    # and chance_outcomes); apply_action stays pyspiel's, which keeps its
    # history.
    def current_player(self):
        return self._core.current_player()

    def is_chance_node(self):
        return self._core.is_chance_node()

    def legal_actions(self, player=None):
        if player is None or player == self._core.current_player():
            return self._core.legal_actions()
        return []

    def _legal_actions(self, player):
        if player != self._core.current_player():
            return []
        return self._core.legal_actions()

    def chance_outcomes(self):
        return self._core.chance_outcomes()

    def _apply_action(self, action):
        self._core.apply_action(int(action))

    def _action_to_string(self, player, action):
        return self._core.action_to_string(player, action)

    def is_terminal(self):
        return self._core.is_terminal()

    def returns(self):
        return self._core.returns()

    def resample_from_infostate(self, player_id, probability_sampler):
        """A state `player_id` cannot tell from this one: the hidden tiles
        drawn exactly from the constraints belief (uniform over the
        placements that agree with everything the player saw), the stream
        seeded from `probability_sampler`."""
        u = probability_sampler()
        if not isinstance(u, (float, int, np.floating, np.integer)) or not 0.0 <= u <= 1.0:
            raise ValueError(f"resample_from_infostate: probability_sampler() gave {u!r}; expected a float in [0, 1]")
        seed = int(u * 2**53)
        world = self._core.resample(player_id, seed)
        state = MugginsState(self.get_game(), self._core.restart())
        for a in world.history():
            state.apply_action(a)
        return state

    def __str__(self):
        return str(self._core)


class MugginsObserver:
    """OpenSpiel's observer interface: the tensor's pieces come from the
    core (block and team: OpenSpiel's own layout)."""

    def __init__(self, game, iig_obs_type, params):
        if params:
            raise ValueError(f"Observation parameters not supported; passed {params}")
        self._view = dict(
            perfect_recall=bool(iig_obs_type.perfect_recall),
            private=iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER,
            public=bool(iig_obs_type.public_info),
        )
        pieces = game._proto.tensor_pieces(**self._view)
        sizes = [int(np.prod(shape)) for _, shape in pieces]
        self.tensor = np.zeros(sum(sizes), np.float32)
        self.dict = {}
        index = 0
        for (name, shape), size in zip(pieces, sizes):
            self.dict[name] = self.tensor[index : index + size].reshape(shape)
            index += size

    def set_from(self, state, player):
        self.tensor[:] = _core_of(state, "MugginsObserver.set_from").observation_tensor(player, **self._view)

    def string_from(self, state, player):
        return _core_of(state, "MugginsObserver.string_from").observation_string(player, **self._view)


class _MugginsBot(pyspiel.Bot):
    def __init__(self, engine, settings):
        pyspiel.Bot.__init__(self)
        self._bot = _Bot(engine, **settings)

    def step(self, state):
        return self._bot.step(state)

    def restart_at(self, state):
        self._bot.restart_at(state)

    def inform_action(self, state, player_id, action):
        self._bot.inform_action(state, player_id, action)


def bot(engine, **settings):
    """A muggins engine (`muggins.Bot(engine, **settings)`) as a `pyspiel.Bot`."""
    return _MugginsBot(engine, settings)


pyspiel.register_game(_BLOCK_TYPE, MugginsBlockGame)
pyspiel.register_game(_TEAM_TYPE, MugginsTeamGame)
pyspiel.register_game(_FIVES_TYPE, MugginsAllFivesGame)
