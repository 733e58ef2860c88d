"""Time per decision of M* with the learned leaves on a network's worlds
(`muggins.Bot("mstar", model=..., evaluation="learned", belief="policy",
adaptive=True)`, a spec's `engine = "mstar"` with `net`; docs/train.md,
"The learned leaves over the network's worlds") beside M* as issues 45
and 46 set it (learned leaves, 32 worlds x 10,000 nodes, the `model`
belief), on the same decisions: the decisions with a choice of `--hands`
hands of All Fives dealt from a fixed seed and played by M* in every
seat; each bot is timed around `Bot.step` on each decision. A
measurement, printed (medians and means, milliseconds).

    python3 scripts/worlds-time.py [--hands 10] [--seats 2|4] [--worlds 64]
        [--budget 10000] [--adaptive 1|0] [--model PATH]
"""
import argparse
import statistics
import time

import numpy as np

import muggins

MODELS = {2: "models/train-all-fives-mstar.safetensors", 4: "models/train-all-fives-4.safetensors"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=10)
    ap.add_argument("--seats", type=int, choices=[2, 4], default=2)
    ap.add_argument("--worlds", type=int, default=64)
    ap.add_argument("--budget", type=int, default=10_000)
    ap.add_argument("--adaptive", type=int, choices=[0, 1], default=1)
    ap.add_argument("--model", default=None, help="the network (default: the shipped one for the seats)")
    args = ap.parse_args()
    model = args.model or MODELS[args.seats]
    mstar = muggins.Bot("mstar", budget=10_000, worlds=32, belief="model", evaluation="learned", seed=1)
    ours = muggins.Bot("mstar", model=model, evaluation="learned", budget=args.budget, worlds=args.worlds,
                       belief="policy", adaptive=bool(args.adaptive), seed=1)
    rng = np.random.default_rng(5)
    times = {"M*": [], "ours": []}
    for _ in range(args.hands):
        state = muggins.State("all-fives", seats=args.seats)
        while not state.is_terminal():
            if state.is_chance_node():
                ids, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(ids, p=probs)))
                continue
            if len(state.legal_actions()) < 2:
                state.apply_action(state.legal_actions()[0])
                continue
            for name, bot in [("ours", ours), ("M*", mstar)]:
                t = time.perf_counter()
                a = bot.step(state)
                times[name].append((time.perf_counter() - t) * 1000)
            state.apply_action(a)
    print(f"All Fives, {args.seats} seats, {len(times['M*'])} decisions of {args.hands} hands")
    for name, label in [("M*", "M* (32 x 10,000, learned, model)"),
                        ("ours", f"{ours.name()}")]:
        ts = times[name]
        print(f"  {label}: median {statistics.median(ts):.1f} ms, mean {statistics.mean(ts):.1f} ms")


if __name__ == "__main__":
    main()
