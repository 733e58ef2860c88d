"""OpenSpiel's ISMCTS against muggins' M* on All Fives (docs/python.md).

Plays `--hands` hands of two-seat All Fives, in pairs: each deal twice with
the seats swapped (the same chance stream, so the same deal). OpenSpiel's
Python ISMCTSBot (random rollouts, `--simulations` per decision, its worlds
from muggins_all_fives' exact resample_from_infostate) against
muggins.Bot("mstar", budget=10_000, worlds=16, belief="model",
evaluation="learned"). Prints M*'s win rate (ties count half), its mean
points per hand, and each side's mean time per decision.

    python3 python/examples/ismcts_vs_mstar.py --hands 100
"""
import argparse
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import muggins
import muggins.openspiel  # noqa: F401 (registers muggins_all_fives)


def play_hand(game, bots, seed, clocks):
    """One hand; chance outcomes from a stream seeded by `seed`."""
    rng = np.random.RandomState(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choice(actions, p=probs))
            continue
        player = state.current_player()
        legal = state.legal_actions()
        if len(legal) == 1:
            state.apply_action(legal[0])
            continue
        name, bot = bots[player]
        start = time.perf_counter()
        action = bot.step(state)
        clocks[name][0] += time.perf_counter() - start
        clocks[name][1] += 1
        state.apply_action(action)
    return state.returns()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=100, help="hands, an even number (pairs of seatings)")
    parser.add_argument("--simulations", type=int, default=1000, help="ISMCTS simulations per decision")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    game = pyspiel.load_game("muggins_all_fives")
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(args.seed))
    theirs = ismcts.ISMCTSBot(game, evaluator, 2.0, args.simulations, random_state=np.random.RandomState(args.seed))
    ours = muggins.Bot("mstar", budget=10_000, worlds=16, belief="model", evaluation="learned", seed=args.seed)
    clocks = {"ISMCTS": [0.0, 0], "M*": [0.0, 0]}
    wins = points = 0.0
    for i in range(args.hands):
        deal = args.seed * 1_000_003 + i // 2
        mstar_seat = i % 2
        bots = [("M*", ours), ("ISMCTS", theirs)] if mstar_seat == 0 else [("ISMCTS", theirs), ("M*", ours)]
        r = play_hand(game, bots, deal, clocks)[mstar_seat]
        wins += 1.0 if r > 0 else 0.5 if r == 0 else 0.0
        points += r
    print(f"{args.hands} hands of All Fives (double-6, two seats), each deal played from both seats")
    print(f"M* (budget 10000, 16 worlds, model belief, learned leaves) vs OpenSpiel ISMCTS ({args.simulations} simulations)")
    print(f"M* win rate: {wins / args.hands:.3f} (ties half); mean points per hand: {points / args.hands:+.2f}")
    for name, (secs, n) in clocks.items():
        print(f"{name}: {n} decisions, {1000 * secs / max(n, 1):.1f} ms per decision")


if __name__ == "__main__":
    main()
