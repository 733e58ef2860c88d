"""`muggins.VecEnv`: many games stepped together inside Rust (docs/rl.md).

A `gymnasium.vector.VectorEnv` with `autoreset_mode` SAME_STEP: a game that
ends is dealt again in the same step, its last observation in
`info["final_obs"]` and every seat's return in `info["returns"]` (the rows
of the games that ended flagged by `info["_final_obs"]`). The opponents'
seats, the deal and the draws are played in Rust with the GIL released.
"""
from __future__ import annotations

import numpy as np
import gymnasium as gym
from gymnasium.vector.vector_env import AutoresetMode

from ._muggins import Bot, VecCore

__all__ = ["NAMED", "VecEnv", "check_plays", "opponent_bots"]


#: The settings an engine named by its name alone plays with: ISMCTS needs
#: a node budget; the others' defaults are `Bot`'s.
NAMED = {"ismcts": {"budget": 1000, "worlds": 8}}


def _bot(spec, seed):
    if isinstance(spec, Bot):
        return spec
    if isinstance(spec, str):
        return Bot(spec, seed=seed, **NAMED.get(spec, {}))
    raise TypeError(
        f"an opponent is an engine's name (e.g. \"random\", \"heaviest\") or a muggins.Bot, "
        f"not {type(spec).__name__}"
    )


def check_plays(bot, game, knobs):
    """`bot` decides at the first decision of a game of `game`, or the
    ValueError it raises there is raised now (an engine that does not play
    this game, a setting it refuses), before any game is played."""
    from . import State

    state = State(game, **knobs)
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    try:
        bot.step(state)
    except ValueError as e:
        raise ValueError(f"opponent {bot!r} cannot play {game}: {e}") from None
    return bot


def opponent_bots(seats, opponents, seat, seed=0):
    """Per seat, the `Bot` that plays it, or None for the learner's seats.

    `opponents`: None (self-play: every seat is the learner's), one engine
    (a name or a `Bot`) for every seat but `seat`, or a dict or list giving
    each seat's (None for a learner's seat). `seat`: the learner's seat, or
    a list of them (e.g. both partners in team)."""
    if opponents is None:
        return [None] * seats
    if isinstance(opponents, dict):
        bad = [k for k in opponents if not isinstance(k, int) or not 0 <= k < seats]
        if bad:
            raise ValueError(f"opponents: seat {bad[0]!r} is not a seat of this game (0 to {seats - 1})")
        return [None if opponents.get(s) is None else _bot(opponents[s], seed) for s in range(seats)]
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != seats:
            raise ValueError(f"opponents: {len(opponents)} given, one per seat ({seats}) is needed")
        return [None if o is None else _bot(o, seed) for o in opponents]
    learners = [seat] if isinstance(seat, (int, np.integer)) else list(seat)
    for s in learners:
        if not isinstance(s, (int, np.integer)) or not 0 <= s < seats:
            raise ValueError(f"seat = {s!r}: this game has seats 0 to {seats - 1}")
    bot = _bot(opponents, seed)
    return [None if s in learners else bot for s in range(seats)]


class VecEnv(gym.vector.VectorEnv):
    """`num_envs` games of `game` ("block", "team", "all-fives", "thesis";
    All Fives' knobs as keywords) stepped together in Rust.

    - `opponents`: None for self-play (every seat is the learner's; the
      observation is the acting seat's, `info["seat"]` says which), or an
      engine (a name such as "random", "heaviest", "ismcts" (1,000 nodes x
      8 worlds), or a `muggins.Bot` with its settings) for every seat but
      `seat`; a dict or a list per seat. Each engine is tried on the
      game's first decision here: one that cannot play it raises
      ValueError now.
    - `seed`: the games are a function of it (and of nothing else: not
      the thread count). `threads`: 0 uses every core.
    - `encoding`: "info_state" (OpenSpiel's information-state tensor),
      "rich" or "rich_history" (docs/rl.md).
    - `illegal`: "raise" (ValueError naming the game and the action,
      nothing played) or "forfeit" (that game is lost with the worst
      return).
    - `copy`: return copies of the observation (True) or the arrays the
      environment fills in place (False: fastest; they change at the next
      step).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, game="block", num_envs=1, opponents=None, seat=0, seed=0, threads=0,
                 encoding="info_state", illegal="raise", copy=True, **knobs):
        from . import State

        probe = State(game, **knobs)
        bots = opponent_bots(probe.num_players(), opponents, seat, seed)
        for bot in {id(b): b for b in bots if b is not None}.values():
            check_plays(bot, game, knobs)
        options = {"seed": seed, "threads": threads, "encoding": encoding, "illegal": illegal}
        self._core = VecCore(game, knobs, num_envs, bots, options)
        dim, actions, seats, width = self._core.shape()
        self.num_envs = int(num_envs)
        self.game, self.encoding, self.copy = game, encoding, bool(copy)
        self.num_seats = seats
        from .gym import observation_bound

        high = observation_bound(game, knobs)
        self.single_observation_space = gym.spaces.Box(0.0, high, (dim,), np.float32)
        self.single_action_space = gym.spaces.Discrete(actions)
        self.observation_space = gym.spaces.Box(0.0, high, (self.num_envs, dim), np.float32)
        self.action_space = gym.spaces.MultiDiscrete(np.full(self.num_envs, actions))
        n = self.num_envs
        self._obs = np.zeros((n, dim), np.float32)
        self._mask = np.zeros((n, actions), np.bool_)
        self._legal = np.full((n, width), -1, np.int32)
        self._count = np.zeros(n, np.int32)
        self._reward = np.zeros(n, np.float32)
        self._terminated = np.zeros(n, np.bool_)
        self._truncated = np.zeros(n, np.bool_)
        self._seat = np.zeros(n, np.int32)
        self._final_obs = np.zeros((n, dim), np.float32)
        self._returns = np.zeros((n, seats), np.float32)
        self._started = False
        # The core writes into these from its threads; a game that ends
        # writes its rows of the last two.
        self._arrays = (self._obs, self._mask.view(np.uint8), self._legal, self._count, self._reward,
                        self._terminated.view(np.uint8), self._seat, self._final_obs, self._returns)

    @property
    def pieces(self):
        """The observation's pieces: (name, shape) in order."""
        return self._core.pieces()

    def _info(self):
        info = {"action_mask": self._mask, "legal": self._legal, "num_legal": self._count,
                "seat": self._seat}
        if self._started and self._terminated.any():
            ended = self._terminated.copy()
            final = self._final_obs.copy() if self.copy else self._final_obs
            info.update(final_obs=final, _final_obs=ended, returns=self._returns.copy(), _returns=ended)
        return info

    def _out(self):
        return self._obs.copy() if self.copy else self._obs

    def reset(self, *, seed=None, options=None):
        """Deals every game anew; `seed` starts the streams again from it."""
        if options:
            raise ValueError(f"options: VecEnv.reset takes none, got {sorted(options)}")
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an int, not {type(seed).__name__} (one seed keys every game)")
        self._core.reset(self._arrays, seed)
        self._terminated[:] = False
        self._started = True
        return self._out(), self._info()

    def step(self, actions):
        """One action per game (an int array of shape (num_envs,))."""
        if not self._started:
            raise RuntimeError("VecEnv.step before reset(): call reset() first")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions: shape {a.shape}, expected ({self.num_envs},): one action per game")
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions: dtype {a.dtype}, expected integers (action ids)")
        a = np.ascontiguousarray(a, dtype=np.int64)
        self._core.step(a, self._arrays)
        return self._out(), self._reward.copy(), self._terminated.copy(), self._truncated.copy(), self._info()

    def action_masks(self):
        """The legal actions of each game's acting seat (sb3-contrib's name)."""
        return self._mask.copy()

    def state(self, i):
        """Game `i` now, as a `muggins.State` (a copy)."""
        return self._core.state(i)
