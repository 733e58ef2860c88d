"""Speed from Python (docs/python.md), on one core; a measurement, printed,
nothing asserts a time:
- muggins.playouts in batch (hands a second);
- random games through OpenSpiel's own API (pyspiel's Python loop:
  state.legal_actions(), state.apply_action(), chance outcomes sampled)
  on muggins_block and muggins_team beside OpenSpiel's python_block_dominoes
  and python_team_dominoes, and muggins_all_fives;
- the same loop on the plain muggins.State;
- the same loop on a do-nothing pyspiel Python game of the same shape (14
  chance nodes, 14 decisions, the same Python-level overrides): the ceiling
  of any game registered from Python, since pyspiel's apply_action calls
  back into Python twice per action."""
import random
import time

import pyspiel
from open_spiel.python.games import block_dominoes, team_dominoes  # noqa: F401 (registers)

import muggins
import muggins.openspiel  # noqa: F401 (registers)


def loop_rate(new_state, seconds, seed=1):
    """Random games a second: uniform chance outcomes and legal actions."""
    rng = random.Random(seed)
    games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        s = new_state()
        while not s.is_terminal():
            s.apply_action(rng.choice(s.legal_actions()))
        games += 1
    return games / (time.perf_counter() - start)


def median_rate(new_state, seconds, runs=3):
    return sorted(loop_rate(new_state, seconds, seed=r) for r in range(runs))[runs // 2]


print("random games a second through pyspiel's Python loop (median of 3 runs of 1 s, one core)")
print(f"{'game':<22} {'muggins/s':>11} {'OpenSpiel Python/s':>19} {'ratio':>7} {'plain State/s':>14}")
for ours, theirs, plain in [("muggins_block", "python_block_dominoes", "block"),
                            ("muggins_team", "python_team_dominoes", "team"),
                            ("muggins_all_fives", None, "all-fives")]:
    game = pyspiel.load_game(ours)
    rate = median_rate(game.new_initial_state, 1.0)
    plain_rate = median_rate(lambda: muggins.State(plain), 1.0)
    if theirs:
        base = median_rate(pyspiel.load_game(theirs).new_initial_state, 1.0)
        print(f"{ours:<22} {rate:>11,.0f} {base:>19,.0f} {rate / base:>6.1f}x {plain_rate:>14,.0f}")
    else:
        print(f"{ours:<22} {rate:>11,.0f} {'(none)':>19} {'':>7} {plain_rate:>14,.0f}")

FLOOR_TYPE = pyspiel.GameType(
    short_name="muggins_bench_floor", long_name="a game that does nothing, 28 actions",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL, chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION, utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL, max_num_players=2, min_num_players=2,
    provides_information_state_string=False, provides_information_state_tensor=False,
    provides_observation_string=False, provides_observation_tensor=False)
FLOOR_INFO = pyspiel.GameInfo(num_distinct_actions=1, max_chance_outcomes=1, num_players=2, min_utility=-1.0,
                              max_utility=1.0, utility_sum=0.0, max_game_length=28)


class FloorGame(pyspiel.Game):
    def __init__(self, params=None):
        super().__init__(FLOOR_TYPE, FLOOR_INFO, params or {})

    def new_initial_state(self):
        return FloorState(self)


class FloorState(pyspiel.State):
    def __init__(self, game):
        super().__init__(game)
        self.n = 0

    def current_player(self):
        return -4 if self.n >= 28 else -1 if self.n < 14 else self.n % 2

    def _legal_actions(self, player):
        return [0]

    def legal_actions(self, player=None):
        return [0]

    def chance_outcomes(self):
        return [(0, 1.0)]

    def _apply_action(self, action):
        self.n += 1

    def is_terminal(self):
        return self.n >= 28

    def returns(self):
        return [0.0, 0.0]


pyspiel.register_game(FLOOR_TYPE, FloorGame)
floor = median_rate(pyspiel.load_game("muggins_bench_floor").new_initial_state, 1.0)
print(f"{'(do-nothing game)':<22} {floor:>11,.0f}   the ceiling of a game registered from Python")

print()
print("muggins.playouts in batch (1,000,000 hands, one core)")
for name in ["block", "team"]:
    t = time.perf_counter()
    muggins.playouts(name, 1_000_000, 1)
    print(f"{name:<8} {1_000_000 / (time.perf_counter() - t):>12,.0f} hands/s")
