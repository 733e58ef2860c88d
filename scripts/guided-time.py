"""Time per decision of the network-guided search (docs/train.md,
"Searching with the network"): `muggins.Bot("net", simulations=N)` on
the decisions with a choice of 20 hands of each game (block, team and
two-seat All Fives by default), dealt from a fixed seed and played by the
bot in every seat; a measurement, printed.

    python3 scripts/guided-time.py [--games block team all-fives]
        [--simulations 400 3000] [--hands 20] [--adaptive] [--mstar]
        [--belief constraints|head|policy] [--model-team PATH] [--seats 2|4]

`--adaptive` times the search that stops once its play is decided
(`adaptive=True`) beside the whole budget, on the same decisions.
`--belief` sets where the guided search's worlds come from (`belief=`,
docs/train.md); `--model-GAME` another model file for that game.
`--mstar` (All Fives) times M* as issue 46 sets it (learned leaves,
32 worlds x 10,000 nodes, the `model` belief) on the same decisions.
`--seats 4` plays All Fives at four seats in partnerships, with the
four-seat network (models/train-all-fives-4.safetensors) unless
`--model-all-fives` names another.
"""
import argparse
import time

import numpy as np

import muggins

MODELS = {"block": "models/train-block.safetensors", "team": "models/train-team.safetensors",
          "all-fives": "models/train-all-fives.safetensors"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--simulations", type=int, nargs="+", default=[400, 3000])
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--games", nargs="+", choices=list(MODELS), default=list(MODELS))
    ap.add_argument("--adaptive", action="store_true", help="also time adaptive=True on the same decisions")
    ap.add_argument("--mstar", action="store_true", help="All Fives: also time M* (32 x 10,000, learned, model)")
    ap.add_argument("--belief", choices=["constraints", "head", "policy"], default="constraints")
    ap.add_argument("--seats", type=int, choices=[2, 4], default=2, help="All Fives' seats (default 2)")
    for game, path in MODELS.items():
        ap.add_argument(f"--model-{game}", default=None, help=f"the {game} model (default {path})")
    args = ap.parse_args()
    defaults = dict(MODELS, **({"all-fives": "models/train-all-fives-4.safetensors"} if args.seats == 4 else {}))
    for game in args.games:
        model = getattr(args, f"model_{game.replace('-', '_')}") or defaults[game]
        knobs = {"seats": args.seats} if game == "all-fives" else {}
        for sims in args.simulations:
            bot = muggins.Bot("net", model=model, simulations=sims, seed=1, belief=args.belief)
            early = muggins.Bot("net", model=model, simulations=sims, seed=1, adaptive=True) if args.adaptive else None
            mstar = (muggins.Bot("mstar", budget=10_000, worlds=32, belief="model", evaluation="learned", seed=1)
                     if args.mstar and game == "all-fives" else None)
            rng = np.random.default_rng(0)
            times, early_times, mstar_times, same = [], [], [], 0
            for _ in range(args.hands):
                s = muggins.State(game, **knobs)
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
                        if early is not None:
                            t = time.perf_counter()
                            same += int(early.step(s) == a)
                            early_times.append(time.perf_counter() - t)
                        if mstar is not None:
                            t = time.perf_counter()
                            mstar.step(s)
                            mstar_times.append(time.perf_counter() - t)
                    else:
                        a = legal[0]
                    s.apply_action(int(a))
            print(f"{game:<6} {sims:>6} simulations ({args.belief} worlds): median {np.median(times) * 1e3:.1f} ms, "
                  f"90th percentile {np.percentile(times, 90) * 1e3:.1f} ms over {len(times)} decisions")
            if early is not None:
                print(f"{'':6} {'':6} adaptive:    median {np.median(early_times) * 1e3:.1f} ms, "
                      f"90th percentile {np.percentile(early_times, 90) * 1e3:.1f} ms; total "
                      f"{sum(early_times) / sum(times):.0%} of the whole budget's; the same play at "
                      f"{same} of {len(times)} decisions (a Bot's stream is keyed by the decision)")
            if mstar is not None:
                print(f"{'':6} {'':6} M* 32 x 10,000: median {np.median(mstar_times) * 1e3:.1f} ms, "
                      f"90th percentile {np.percentile(mstar_times, 90) * 1e3:.1f} ms on the same decisions")


if __name__ == "__main__":
    main()
