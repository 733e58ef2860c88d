"""Gymnasium environments: one seat of a muggins game against fixed
opponents (docs/rl.md).

`import muggins` registers "muggins/Block-v0", "muggins/Team-v0",
"muggins/AllFives-v0" and "muggins/Thesis-v0":

    env = gymnasium.make("muggins/Block-v0", opponent="heaviest", seat=0)

`gymnasium.make_vec` on the same ids gives `muggins.VecEnv` (the games
stepped together in Rust).
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from . import Bot, State

__all__ = ["DominoesEnv", "IDS", "make_vec", "register"]

#: The registered ids and their games.
IDS = {"muggins/Block-v0": "block", "muggins/Team-v0": "team",
       "muggins/AllFives-v0": "all-fives", "muggins/Thesis-v0": "thesis"}


def observation_bound(game, knobs):
    """A bound on every value of an observation: counts of tiles, pips and
    seats, and points (a hand's most, plus a match's target twice over)."""
    one_hand = {k: v for k, v in knobs.items() if k != "to"}
    s = State(game, **one_hand)
    return float(max(64.0, s.max_utility() + 2 * knobs.get("to", 0)))


def _player(opponent, seed, game, knobs):
    """A function state -> action for the opponents' seats (an engine
    tried on the game's first decision first)."""
    from .vector import _bot, check_plays

    if isinstance(opponent, (str, Bot)):
        return check_plays(_bot(opponent, seed), game, knobs).step
    if callable(opponent):
        return opponent
    raise TypeError(
        "opponent: an engine's name (e.g. \"random\", \"heaviest\", \"ismcts\"), a muggins.Bot, "
        f"or a callable state -> action, not {type(opponent).__name__}"
    )


class DominoesEnv(gym.Env):
    """`seat` of `game` played by the agent; every other seat by `opponent`
    (an engine's name: "ismcts" plays 1,000 nodes x 8 worlds, the others
    `Bot`'s defaults; a `muggins.Bot` with its settings; or a Python
    callable taking a `muggins.State` and returning an action id). An
    engine that cannot play the game raises ValueError here.

    - Observation: `encoding` ("info_state": OpenSpiel's information-state
      tensor; "rich" or "rich_history": docs/rl.md), float32. `info["action_mask"]` and
      `action_masks()` give the legal actions.
    - Reward: the seat's return when the game ends, 0 before.
    - `seat=None` draws the agent's seat at each reset.
    - `illegal`: "forfeit" (the default: the game ends with the worst
      return; Gymnasium's checkers send random actions) or "raise".
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, game="block", opponent="random", seat=0, encoding="info_state",
                 illegal="forfeit", render_mode=None, **knobs):
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: expected None or \"ansi\"")
        if illegal not in ("forfeit", "raise"):
            raise ValueError(f"illegal {illegal!r}: expected \"forfeit\" or \"raise\"")
        if encoding not in ("info_state", "rich", "rich_history"):
            raise ValueError(f"encoding {encoding!r}: expected \"info_state\", \"rich\" or \"rich_history\"")
        self.game, self.knobs, self.encoding, self.illegal = game, dict(knobs), encoding, illegal
        self.render_mode = render_mode
        self.state = State(game, **knobs)
        seats = self.state.num_players()
        if seat is not None and (not isinstance(seat, (int, np.integer)) or not 0 <= seat < seats):
            raise ValueError(f"seat = {seat!r}: {game} has seats 0 to {seats - 1} (or None: drawn each game)")
        self.fixed_seat, self.seat = seat, seat or 0
        self.opponent = _player(opponent, 0, game, knobs)
        actions = self.state.num_distinct_actions()
        size = len(self.state.encode(0, encoding))
        self.observation_space = gym.spaces.Box(0.0, observation_bound(game, knobs), (size,), np.float32)
        self.action_space = gym.spaces.Discrete(actions)
        self._over = True

    def _chance_and_opponents(self):
        s = self.state
        while not s.is_terminal():
            p = s.current_player()
            if p == self.seat:
                return
            if s.is_chance_node():
                outcomes = s.legal_actions()
                s.apply_action(outcomes[self.np_random.integers(len(outcomes))])
            else:
                s.apply_action(self._opponent_action(s, p))

    def _opponent_action(self, s, p):
        """The opponent's action for seat `p`, checked: a callable's answer
        that is not an int or not legal raises naming the seat and the legal
        actions (before, the state's own error did not say who chose it)."""
        a = self.opponent(s)
        if not isinstance(a, (int, np.integer)) or isinstance(a, (bool, np.bool_)):
            raise TypeError(f"opponent for seat {p} returned {a!r} ({type(a).__name__}): expected an action id (int)")
        legal = s.legal_actions()
        if int(a) not in legal:
            raise ValueError(f"opponent for seat {p} returned action {int(a)}: not legal here (legal: {legal})")
        return int(a)

    def _obs(self):
        return np.asarray(self.state.encode(self.seat, self.encoding), np.float32)

    def action_masks(self):
        """The legal actions now (sb3-contrib's MaskablePPO reads this)."""
        mask = np.zeros(self.action_space.n, np.int8)
        if not self.state.is_terminal():
            mask[self.state.legal_actions()] = 1
        return mask

    def _info(self, **extra):
        return {"action_mask": self.action_masks(), "seat": self.seat, **extra}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.seat = self.fixed_seat if self.fixed_seat is not None else int(
            self.np_random.integers(self.state.num_players()))
        # A game the opponents end before the agent's first turn is dealt again.
        self.state = State(self.game, **self.knobs)
        self._chance_and_opponents()
        while self.state.is_terminal():
            self.state = State(self.game, **self.knobs)
            self._chance_and_opponents()
        self._over = False
        return self._obs(), self._info()

    def step(self, action):
        if self._over:
            raise RuntimeError("step after the game ended: call reset() first")
        legal = self.state.legal_actions()
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise TypeError(f"action {action!r}: an action id (int) is needed") from None
        if a not in legal:
            if self.illegal == "raise":
                raise ValueError(f"action {a}: not legal for seat {self.seat} (legal: {legal})")
            self._over = True
            return self._obs(), float(self.state.min_utility()), True, False, self._info(forfeit=True)
        self.state.apply_action(a)
        self._chance_and_opponents()
        if self.render_mode == "ansi":
            print(self.render())
        if self.state.is_terminal():
            self._over = True
            returns = self.state.returns()
            return self._obs(), float(returns[self.seat]), True, False, self._info(returns=returns)
        return self._obs(), 0.0, False, False, self._info()

    def render(self):
        if self.render_mode is None:
            return None
        return str(self.state)


def make_vec(game="block", num_envs=1, opponent="random", seat=0, **kwargs):
    """`gymnasium.make_vec`'s entry point: a `muggins.VecEnv` of `num_envs`
    games against `opponent` (an engine's name or a `muggins.Bot`)."""
    from .vector import VecEnv

    kwargs.pop("render_mode", None)
    return VecEnv(game, num_envs, opponents=opponent, seat=seat, **kwargs)


def register():
    """Registers the ids with Gymnasium (done by `import muggins`)."""
    for env_id, game in IDS.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=DominoesEnv, kwargs={"game": game},
                         vector_entry_point=make_vec)
