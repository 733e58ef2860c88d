"""Time per decision of the network-guided search (docs/train.md,
"Searching with the network"): `muggins.Bot("net", simulations=N)` on
the decisions with a choice of 20 hands of block and of team, dealt from
a fixed seed and played by the bot in every seat; a measurement, printed.

    python3 scripts/guided-time.py [--simulations 400 3000] [--hands 20]
"""
import argparse
import time

import numpy as np

import muggins

MODELS = {"block": "models/train-block.safetensors", "team": "models/train-team.safetensors"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--simulations", type=int, nargs="+", default=[400, 3000])
    ap.add_argument("--hands", type=int, default=20)
    args = ap.parse_args()
    for game, model in MODELS.items():
        for sims in args.simulations:
            bot = muggins.Bot("net", model=model, simulations=sims, seed=1)
            rng = np.random.default_rng(0)
            times = []
            for _ in range(args.hands):
                s = muggins.State(game)
                while not s.is_terminal():
                    if s.is_chance_node():
                        ids, p = zip(*s.chance_outcomes())
                        s.apply_action(int(rng.choice(ids, p=p)))
                        continue
                    legal = s.legal_actions()
                    if len(legal) > 1:
                        t = time.perf_counter()
                        a = bot.step(s)
                        times.append(time.perf_counter() - t)
                    else:
                        a = legal[0]
                    s.apply_action(int(a))
            print(f"{game:<6} {sims:>6} simulations: median {np.median(times) * 1e3:.1f} ms, "
                  f"90th percentile {np.percentile(times, 90) * 1e3:.1f} ms over {len(times)} decisions")


if __name__ == "__main__":
    main()
