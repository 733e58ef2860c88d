"""PettingZoo environments of every muggins preset (docs/rl.md).

`env(game="block", **knobs)` is the AEC form with PettingZoo's classic-game
conventions: agents "player_0", ..., observations
`{"observation": float32, "action_mask": int8}`, rewards the game's returns
at its end, `render_mode="ansi"`. `parallel_env(...)` is the parallel form:
each step takes an action from every live agent and plays the acting one's
(the others' masks are all zeros and their actions are ignored).

The chance nodes (the deal, All Fives' draws) are drawn from a numpy
generator seeded by `reset(seed=...)`: the same seed, the same game for the
same actions.
"""
from __future__ import annotations

import functools

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers

from . import State
from .gym import observation_bound

__all__ = ["env", "raw_env", "parallel_env", "GAMES"]

#: The presets and their PettingZoo names.
GAMES = {"block": "muggins_block_v0", "team": "muggins_team_v0",
         "all-fives": "muggins_all_fives_v0", "thesis": "muggins_thesis_v0"}


class _Table:
    """One game of a preset with its chance stream and encoding."""

    def __init__(self, game, encoding, knobs):
        if game == "all_fives":
            game = "all-fives"
        if game not in GAMES:
            raise ValueError(f"game {game!r}: expected one of {', '.join(map(repr, GAMES))}")
        if encoding not in ("info_state", "rich", "rich_history"):
            raise ValueError(f"encoding {encoding!r}: expected \"info_state\", \"rich\" or \"rich_history\"")
        self.game, self.encoding, self.knobs = game, encoding, dict(knobs)
        self.state = State(game, **knobs)
        self.seats = self.state.num_players()
        self.actions = self.state.num_distinct_actions()
        self.size = len(self.state.encode(0, encoding))
        self.rng = np.random.default_rng()

    def reset(self, seed):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.state = State(self.game, **self.knobs)
        self.chance()

    def chance(self):
        """Plays the chance nodes up to the next player node or the end."""
        s = self.state
        while s.is_chance_node():
            outcomes = s.legal_actions()
            s.apply_action(outcomes[self.rng.integers(len(outcomes))])

    def play(self, action):
        legal = self.state.legal_actions()
        if action not in legal:
            raise ValueError(f"action {action!r}: not legal for player_{self.state.current_player()} "
                             f"(legal: {legal})")
        self.state.apply_action(int(action))
        self.chance()

    def observe(self, seat, acting):
        mask = np.zeros(self.actions, np.int8)
        if acting:
            mask[self.state.legal_actions()] = 1
        obs = np.asarray(self.state.encode(seat, self.encoding), np.float32)
        return {"observation": obs, "action_mask": mask}

    def spaces(self):
        obs = spaces.Dict({
            "observation": spaces.Box(0.0, observation_bound(self.game, self.knobs), (self.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (self.actions,), np.int8),
        })
        return obs, spaces.Discrete(self.actions)

    def render(self):
        return str(self.state)


def _setup(env, game, render_mode, encoding, knobs):
    """What both forms hold: the game, its metadata and agents."""
    EzPickle.__init__(env, game, render_mode, encoding, **knobs)
    if render_mode not in (None, "ansi"):
        raise ValueError(f"render_mode {render_mode!r}: expected None or \"ansi\"")
    env.table = _Table(game, encoding, knobs)
    env.metadata = dict(env.metadata, name=GAMES[env.table.game])
    env.render_mode = render_mode
    env.possible_agents = [f"player_{s}" for s in range(env.table.seats)]
    env.agents = []


class _Shown:
    """`render` (ansi: the state as text) and `close`, for both forms."""

    def render(self):
        if self.render_mode is None:
            return None
        return self.table.render()

    def close(self):
        pass


class raw_env(_Shown, AECEnv, EzPickle):
    """The AEC environment without PettingZoo's wrappers (`env` adds them)."""

    metadata = {"render_modes": ["ansi"], "name": "muggins_v0", "is_parallelizable": False}

    def __init__(self, game="block", render_mode=None, encoding="info_state", **knobs):
        super().__init__()
        _setup(self, game, render_mode, encoding, knobs)
        obs, act = self.table.spaces()
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs)
        self.action_spaces = dict.fromkeys(self.possible_agents, act)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent):
        seat = self.possible_agents.index(agent)
        return self.table.observe(seat, agent == self.agent_selection and self.agents != [])

    def _select(self):
        p = self.table.state.current_player()
        if p >= 0:
            self.agent_selection = self.possible_agents[p]

    def reset(self, seed=None, options=None):
        self.table.reset(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[0]
        self._select()

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        self._cumulative_rewards[agent] = 0.0
        self.table.play(action)
        if self.table.state.is_terminal():
            returns = self.table.state.returns()
            self.rewards = {a: float(r) for a, r in zip(self.agents, returns)}
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._select()
        self._accumulate_rewards()
        if self.render_mode == "ansi":
            print(self.render())


def env(game="block", render_mode=None, encoding="info_state", **knobs):
    """The AEC environment of `game` ("block", "team", "all-fives",
    "thesis"; All Fives' knobs as keywords) with PettingZoo's wrappers: an
    illegal action ends the game with the acting player's worst return."""
    e = raw_env(game, render_mode=render_mode, encoding=encoding, **knobs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=e.table.state.min_utility())
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


class parallel_env(_Shown, ParallelEnv, EzPickle):
    """The parallel form: every live agent gives an action each step; the
    acting agent's is played (the others' masks are zeros, their actions
    ignored)."""

    metadata = {"render_modes": ["ansi"], "name": "muggins_v0", "is_parallelizable": True}

    def __init__(self, game="block", render_mode=None, encoding="info_state", **knobs):
        _setup(self, game, render_mode, encoding, knobs)
        self._spaces = self.table.spaces()

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent):
        return self._spaces[0]

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent):
        return self._spaces[1]

    def _observations(self):
        p = self.table.state.current_player()
        return {a: self.table.observe(s, s == p) for s, a in enumerate(self.possible_agents)}

    def reset(self, seed=None, options=None):
        self.table.reset(seed)
        self.agents = self.possible_agents[:]
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions):
        if not self.agents:
            raise RuntimeError("step after the game ended: call reset() first")
        acting = self.possible_agents[self.table.state.current_player()]
        if acting not in actions:
            raise ValueError(f"actions: no action for {acting}, the agent to act")
        self.table.play(actions[acting])
        obs = self._observations()
        agents = self.agents
        if self.table.state.is_terminal():
            rewards = {a: float(r) for a, r in zip(agents, self.table.state.returns())}
            done = dict.fromkeys(agents, True)
            self.agents = []
        else:
            rewards = dict.fromkeys(agents, 0.0)
            done = dict.fromkeys(agents, False)
        if self.render_mode == "ansi":
            print(self.render())
        return obs, rewards, done, dict.fromkeys(agents, False), {a: {} for a in agents}
