"""The reinforcement-learning environments' speed (docs/rl.md), side by
side in one run; a measurement, printed, nothing asserts a time.

- `muggins.VecEnv(game, 4096)` with random legal actions drawn in numpy
  (from `info["legal"]` and `info["num_legal"]`), observations and masks
  filled every step: agent steps a second, self-play (every seat the
  learner's) and against `random` (its moves, played in Rust, not counted);
- OpenSpiel's `rl_environment` on `python_block_dominoes` (its Python game)
  with random legal actions: agent steps a second;
- the PettingZoo AEC loop over `muggins.pettingzoo.env(game)` with random
  legal actions from the mask: agent steps a second;
- the resident memory after `--memory-steps` VecEnv steps against after
  the first million (flat: no table grows with the steps).

    python3 scripts/rl-bench.py [--seconds 2] [--memory-steps 20000000]
"""
import argparse
import time

import numpy as np

import muggins
import muggins.pettingzoo as mpz


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def vec_rate(game, opponents, seconds, num_envs=4096, **knobs):
    env = muggins.VecEnv(game, num_envs, opponents=opponents, seed=1, copy=False, **knobs)
    rng = np.random.default_rng(0)
    ar = np.arange(num_envs)
    obs, info = env.reset()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        k = (rng.random(num_envs, dtype=np.float32) * info["num_legal"]).astype(np.int64)
        obs, reward, term, trunc, info = env.step(info["legal"][ar, k])
        steps += num_envs
    return steps / (time.perf_counter() - start)


def median(f, runs=3):
    return sorted(f() for _ in range(runs))[runs // 2]


def openspiel_rate(seconds):
    from open_spiel.python import rl_environment
    from open_spiel.python.games import block_dominoes  # noqa: F401 (registers)

    env = rl_environment.Environment("python_block_dominoes")
    env.seed(1)
    rng = np.random.default_rng(0)
    steps, start = 0, time.perf_counter()
    ts = env.reset()
    while time.perf_counter() - start < seconds:
        if ts.last():
            ts = env.reset()
            continue
        p = ts.observations["current_player"]
        legal = ts.observations["legal_actions"][p]
        ts = env.step([legal[rng.integers(len(legal))]])
        steps += 1
    return steps / (time.perf_counter() - start)


def pettingzoo_rate(game, seconds, **knobs):
    env = mpz.env(game, **knobs)
    rng = np.random.default_rng(0)
    steps, start = 0, time.perf_counter()
    env.reset(seed=1)
    while time.perf_counter() - start < seconds:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        env.reset()
    return steps / (time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=2.0, help="each measurement's length (median of 3)")
    p.add_argument("--memory-steps", type=int, default=20_000_000)
    args = p.parse_args()
    s = args.seconds
    print(f"agent steps a second (median of 3 runs of {s} s; VecEnv: 4096 games, every core)")
    print(f"{'game':<12} {'VecEnv self':>12} {'VecEnv vs random':>17} {'PettingZoo AEC':>15} {'ratio':>7}"
          f" {'OpenSpiel rl_env':>17} {'ratio':>7}")
    base = median(lambda: openspiel_rate(s))
    for game, knobs in [("block", {}), ("team", {}), ("all-fives", {})]:
        own = median(lambda: vec_rate(game, None, s, **knobs))
        against = median(lambda: vec_rate(game, "random", s, **knobs))
        aec = median(lambda: pettingzoo_rate(game, s, **knobs))
        spiel = f"{base:>17,.0f} {own / base:>6.0f}x" if game == "block" else f"{'(block only)':>17} {'':>7}"
        print(f"{game:<12} {own:>12,.0f} {against:>17,.0f} {aec:>15,.0f} {own / aec:>6.0f}x {spiel}")

    env = muggins.VecEnv("block", 4096, seed=2, copy=False)
    rng = np.random.default_rng(0)
    ar = np.arange(4096)
    obs, info = env.reset()
    steps, marks = 0, {}
    while steps < args.memory_steps:
        k = (rng.random(4096, dtype=np.float32) * info["num_legal"]).astype(np.int64)
        obs, reward, term, trunc, info = env.step(info["legal"][ar, k])
        steps += 4096
        if not marks and steps >= 1_000_000:
            marks["first"] = (steps, rss_mb())
    print(f"memory: VecEnv('block', 4096) resident {marks['first'][1]:.1f} MB after {marks['first'][0]:,} "
          f"steps, {rss_mb():.1f} MB after {steps:,}")


if __name__ == "__main__":
    main()
