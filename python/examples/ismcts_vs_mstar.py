"""OpenSpiel's ISMCTS against muggins' M* on All Fives (docs/python.md).

Plays `--hands` hands of two-seat All Fives, in pairs: each deal twice with
the seats swapped (the same chance stream, so the same deal). OpenSpiel's
Python ISMCTSBot (random rollouts, `--simulations` per decision, its worlds
from muggins_all_fives' exact resample_from_infostate) against
muggins.Bot("mstar", budget=10_000, worlds=16, belief="model",
evaluation="learned"). Prints M*'s win rate (ties count half) and its mean
points per hand, each with a 95% interval (the pairs of seatings are the
units), and each side's mean time per decision.

Every random source is seeded from `--seed`, so a run is reproducible (the
same seed and arguments, the same hands, the same result):

- chance (the deals and draws): a numpy RandomState per deal;
- ISMCTS's own choices (tree policy ties, the final action, chance inside
  its simulations): its `random_state`;
- its random rollouts: the evaluator's `random_state`;
- its worlds: OpenSpiel's Python ISMCTSBot calls
  `state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0., 1.))`,
  a sampler seeded from std::random_device, so the example installs its own
  resampler (`ISMCTSBot.set_resampler`) giving one seeded
  `pyspiel.UniformProbabilitySampler(seed, 0., 1.)` instead;
- M*: muggins.Bot's `seed` (its stream is keyed by the seed, the history's
  length and the player).

    python3 python/examples/ismcts_vs_mstar.py --hands 100
"""
import argparse
import math
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import muggins
import muggins.openspiel  # noqa: F401 (registers muggins_all_fives)


def play_hand(game, bots, seed, clocks):
    """One hand; chance outcomes from a stream seeded by `seed`. Returns
    the final state."""
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
    return state


def ismcts_bot(game, simulations, seed):
    """OpenSpiel's Python ISMCTSBot with every random source seeded."""
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed + 1))
    bot = ismcts.ISMCTSBot(game, evaluator, 2.0, simulations, random_state=np.random.RandomState(seed))
    sampler = pyspiel.UniformProbabilitySampler(seed + 2, 0.0, 1.0)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
    return bot


def interval(values):
    """The mean of `values` and the half-width of its 95% interval (normal
    approximation; None with fewer than two values)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def run(hands, simulations, seed):
    """Plays `hands` hands (pairs of seatings); returns M*'s return in each
    hand, each hand's history, and the clocks."""
    game = pyspiel.load_game("muggins_all_fives")
    theirs = ismcts_bot(game, simulations, seed)
    ours = muggins.Bot("mstar", budget=10_000, worlds=16, belief="model", evaluation="learned", seed=seed)
    clocks = {"ISMCTS": [0.0, 0], "M*": [0.0, 0]}
    returns, histories = [], []
    for i in range(hands):
        deal = seed * 1_000_003 + i // 2
        mstar_seat = i % 2
        bots = [("M*", ours), ("ISMCTS", theirs)] if mstar_seat == 0 else [("ISMCTS", theirs), ("M*", ours)]
        state = play_hand(game, bots, deal, clocks)
        returns.append(state.returns()[mstar_seat])
        histories.append(state.history())
    return {"returns": returns, "histories": histories, "clocks": clocks}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=100, help="hands, an even number (pairs of seatings)")
    parser.add_argument("--simulations", type=int, default=1000, help="ISMCTS simulations per decision")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.hands < 2 or args.hands % 2:
        parser.error("--hands: an even number, at least 2 (each deal is played from both seats)")

    start = time.perf_counter()
    result = run(args.hands, args.simulations, args.seed)
    wall = time.perf_counter() - start
    returns = result["returns"]
    score = [1.0 if r > 0 else 0.5 if r == 0 else 0.0 for r in returns]
    # A deal's two seatings are not independent: the pair is the unit.
    pairs = len(returns) // 2
    win, win_hw = interval([(score[2 * k] + score[2 * k + 1]) / 2 for k in range(pairs)])
    pts, pts_hw = interval([(returns[2 * k] + returns[2 * k + 1]) / 2 for k in range(pairs)])

    def pm(hw, fmt):
        return "n/a (one pair)" if hw is None else f"+-{hw:{fmt}}"

    print(f"{args.hands} hands of All Fives (double-6, two seats), each deal played from both seats, seed {args.seed}")
    print(f"M* (budget 10000, 16 worlds, model belief, learned leaves) vs OpenSpiel ISMCTS ({args.simulations} simulations)")
    print(f"M* win rate: {win:.3f} (ties half), 95% interval {pm(win_hw, '.3f')}")
    print(f"M* mean points per hand: {pts:+.2f}, 95% interval {pm(pts_hw, '.2f')}")
    for name, (secs, n) in result["clocks"].items():
        print(f"{name}: {n} decisions, {1000 * secs / max(n, 1):.1f} ms per decision")
    print(f"wall time: {wall:.0f} s")


if __name__ == "__main__":
    main()
