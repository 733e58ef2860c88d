#!/usr/bin/env python3
"""Inference speed of a muggins model file (docs/rl.md, "Model files"):
muggins' forward pass (the `net` crate, as the engines run it) beside the
same network in JAX on the CPU, in one run, against this machine's own
fused multiply-add ceiling (the rate of a loop of FMAs and nothing else,
run on as many threads at once as the row uses: a processor may clock
lower with every core busy; the one-thread ceiling times the threads is
printed too).

    python3 scripts/net-bench.py [--model models/ppo-block.safetensors] [--seconds 2]
"""
import argparse
import os
import time

import numpy as np

import muggins.net as mn
from muggins._muggins import NetCore

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rate(f, rows, seconds):
    """Rows a second: the best of repeated timed calls within `seconds`."""
    f()
    best, start = float("inf"), time.perf_counter()
    while time.perf_counter() - start < seconds:
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return rows / best


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default=os.path.join(ROOT, "models", "ppo-block.safetensors"))
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--batch", type=int, default=4096)
    args = p.parse_args()
    net = mn.Net(args.model)
    flops = 2 * net._core.macs
    cores = os.cpu_count()
    peaks = {t: NetCore.fma_peak_flops(min(args.seconds, 1.0), t) for t in sorted({1, cores})}
    peak = peaks[1]
    x = (np.random.default_rng(0).random((args.batch, net.inputs)) < 0.2).astype(np.float32)
    print(f"model {os.path.basename(args.model)}: {net.inputs} -> {net.meta['hidden']} -> {net.actions}, "
          f"{flops / 1e6:.2f} Mflop an evaluation; FMA ceiling {peak / 1e9:.1f} Gflop/s on one thread, "
          f"{peaks[cores] / 1e9:.1f} on {cores} at once ({peak * cores / 1e9:.1f} if each ran as fast as one)")
    rows = []
    for threads in (1, cores):
        r = rate(lambda: net.forward(x, threads=threads), args.batch, args.seconds)
        rows.append((f"muggins batch {args.batch}, {threads} thread(s)", r, peaks[threads]))
    one = x[0]
    r = rate(lambda: net.forward(one), 1, args.seconds)
    rows.append(("muggins single (a Python call each)", r, peak))
    try:
        import jax
        import jax.numpy as jnp
        from safetensors.numpy import load_file
    except ImportError:
        jax = None
    if jax is not None:
        params = {k: jnp.asarray(v) for k, v in load_file(args.model).items()}
        layers = len(net.meta["hidden"])

        @jax.jit
        def forward(obs):
            h = obs
            for i in range(layers):
                h = jnp.tanh(h @ params[f"w{i}"] + params[f"b{i}"])
            return h @ params["w_pi"] + params["b_pi"], (h @ params["w_v"] + params["b_v"])[:, 0]

        xj = jnp.asarray(x)
        r = rate(lambda: jax.block_until_ready(forward(xj)), args.batch, args.seconds)
        rows.append((f"JAX {jax.__version__} batch {args.batch} (its own threads)", r, peaks[cores]))
        xo = jnp.asarray(x[:1])
        r = rate(lambda: jax.block_until_ready(forward(xo)), 1, args.seconds)
        rows.append(("JAX single (a Python call each)", r, peak))
        got, _ = net.forward(x)
        print(f"largest logit difference, muggins vs JAX: {np.abs(got - np.asarray(forward(xj)[0])).max():.2e}")
    print(f"{'':44} {'evals/s':>10} {'Gflop/s':>8} {'of ceiling':>10}")
    for name, r, ceiling in rows:
        print(f"{name:44} {r:10.0f} {r * flops / 1e9:8.1f} {100 * r * flops / ceiling:9.1f}%")


if __name__ == "__main__":
    main()
