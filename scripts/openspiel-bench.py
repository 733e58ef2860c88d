#!/usr/bin/env python3
"""Random playouts of block and team: muggins beside OpenSpiel's Python games.

Plays uniformly random games of OpenSpiel's python_block_dominoes and
python_team_dominoes for a few seconds each (one core), runs
`muggins bench --suite playouts` (one thread), and prints games/s of both and
the ratio. Build muggins with --release for figures worth quoting.

usage: openspiel-bench.py MUGGINS [--seconds S] [--runs N]
"""

import argparse
import random
import re
import subprocess
import time

import pyspiel
from open_spiel.python.games import block_dominoes, team_dominoes  # noqa: F401 (registers the games)


def openspiel_rate(name, seconds, seed=2014):
    game = pyspiel.load_game(name)
    rng = random.Random(seed)
    games = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        games += 1
    return games / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("muggins", help="path to the muggins binary (a release build)")
    ap.add_argument("--seconds", type=float, default=10.0, help="seconds of OpenSpiel play per game")
    ap.add_argument("--runs", type=int, default=5, help="muggins runs per game (median)")
    a = ap.parse_args()
    out = subprocess.run(
        [a.muggins, "bench", "--suite", "playouts", "--runs", str(a.runs)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ours = {}
    for line in out.splitlines():
        m = re.match(r"^(block|team)\s+\d+\s+[\d.]+ms\s+(\d+)\s", line)
        if m:
            ours[m.group(1)] = float(m.group(2))
    print(f"{'game':<24} {'OpenSpiel games/s':>18} {'muggins games/s':>16} {'ratio':>8}")
    for preset, name in [("block", "python_block_dominoes"), ("team", "python_team_dominoes")]:
        theirs = openspiel_rate(name, a.seconds)
        print(f"{name:<24} {theirs:>18.0f} {ours[preset]:>16.0f} {ours[preset] / theirs:>8.0f}x")


if __name__ == "__main__":
    main()
