"""Speed from Python (docs/python.md): muggins.playouts in batch, and random
games played through the Python loop (legal_actions, apply_action) on
muggins' states beside OpenSpiel's python_block_dominoes and
python_team_dominoes, on one core. A measurement, printed; nothing asserts
a time."""
import random
import time

import pyspiel
from open_spiel.python.games import block_dominoes, team_dominoes  # noqa: F401 (registers)

import muggins


def loop_rate(new_state, games, seed=1):
    rng = random.Random(seed)
    t = time.perf_counter()
    for _ in range(games):
        s = new_state()
        while not s.is_terminal():
            s.apply_action(rng.choice(s.legal_actions()))
    return games / (time.perf_counter() - t)


print(f"{'game':<8} {'playouts/s':>12} {'muggins loop/s':>15} {'OpenSpiel Python/s':>19} {'ratio':>7}")
for name, theirs, n in [("block", "python_block_dominoes", 500), ("team", "python_team_dominoes", 250)]:
    t = time.perf_counter()
    muggins.playouts(name, 1_000_000, 1)
    batch = 1_000_000 / (time.perf_counter() - t)
    ours = loop_rate(lambda: muggins.OpenState(name), 20 * n)
    game = pyspiel.load_game(theirs)
    base = loop_rate(game.new_initial_state, n)
    print(f"{name:<8} {batch:>12,.0f} {ours:>15,.0f} {base:>19,.0f} {ours / base:>6.1f}x")
