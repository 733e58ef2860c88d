#!/usr/bin/env python3
"""PPO with action masking on muggins' block (docs/rl.md), CleanRL's
single-file style, on JAX and Optax (CPU wheels from PyPI).

    python3 python/examples/ppo_block.py --stages random:2000000,heaviest:2000000,self:4000000 \
        --out runs/ppo-block

Stages run in order, each for its number of the learner's steps: against
`random`, against `heaviest` (muggins' engines, played inside the vector
environment in Rust), then self-play (`self`: every seat is the learner's
and one network plays them all). The learner plays both seats: half the
games from each seat, or in self-play every seat.

Writes to `--out`: `policy.safetensors` (a muggins model file, docs/rl.md:
the weights `w0, b0, w1, b1, w_pi, b_pi, w_v, b_v`, tanh layers, and the
game, encoding and this command in its header; it plays as
`muggins.Bot("net", model=...)`), `curve.csv` and `curve.svg` (the win
rate of the greedy policy against `random` and `heaviest`, over both seats,
after each evaluation), and prints the same. `python/examples/` has no
tests of its own; `python/tests/test_ppo_smoke.py` runs a short training
and checks that it learned.
"""
import argparse
import csv
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

import muggins
import muggins.net

SCALE = 69.0  # block's largest return: rewards in [-1, 1]


def init_params(key, dims):
    """Orthogonal-ish (scaled normal) weights, zero biases."""
    params = {}
    sizes = list(zip(dims[:-1], dims[1:]))
    keys = jax.random.split(key, len(sizes) + 2)
    for i, (a, b) in enumerate(sizes):
        params[f"w{i}"] = jax.random.normal(keys[i], (a, b)) * np.sqrt(2.0 / a)
        params[f"b{i}"] = jnp.zeros(b)
    h = dims[-1]
    params["w_pi"] = jax.random.normal(keys[-2], (h, ACTIONS)) * 0.01
    params["b_pi"] = jnp.zeros(ACTIONS)
    params["w_v"] = jax.random.normal(keys[-1], (h, 1)) * 1.0 / np.sqrt(h)
    params["b_v"] = jnp.zeros(1)
    return params


def forward(params, obs, mask):
    h = obs
    i = 0
    while f"w{i}" in params:
        h = jnp.tanh(h @ params[f"w{i}"] + params[f"b{i}"])
        i += 1
    logits = h @ params["w_pi"] + params["b_pi"]
    logits = jnp.where(mask, logits, -1e9)
    return logits, (h @ params["w_v"] + params["b_v"])[:, 0]


@jax.jit
def act(params, obs, mask, key):
    logits, value = forward(params, obs, mask)
    action = jax.random.categorical(key, logits)
    logp = jax.nn.log_softmax(logits)[jnp.arange(len(action)), action]
    return action, logp, value


@jax.jit
def greedy(params, obs, mask):
    return jnp.argmax(forward(params, obs, mask)[0], axis=1)


@jax.jit
def values(params, obs):
    return forward(params, obs, jnp.ones((len(obs), ACTIONS), bool))[1]


def loss_fn(params, batch, clip, vf_coef, ent_coef):
    logits, value = forward(params, batch["obs"], batch["mask"])
    logp_all = jax.nn.log_softmax(logits)
    logp = logp_all[jnp.arange(len(batch["act"])), batch["act"]]
    ratio = jnp.exp(logp - batch["logp"])
    adv = batch["adv"]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - clip, 1 + clip) * adv).mean()
    v = 0.5 * ((value - batch["ret"]) ** 2).mean()
    probs = jnp.exp(logp_all)
    entropy = -jnp.where(batch["mask"], probs * logp_all, 0.0).sum(1).mean()
    return pg + vf_coef * v - ent_coef * entropy, (pg, v, entropy)


def make_update(optimizer, clip, vf_coef, ent_coef):
    @jax.jit
    def update(params, opt_state, batch):
        grads, aux = jax.grad(loss_fn, has_aux=True)(params, batch, clip, vf_coef, ent_coef)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, aux

    return update


class Learner:
    """Vector environments for a stage: against an engine, two environments
    (the learner at seat 0, at seat 1); self-play, one."""

    def __init__(self, stage, num_envs, seed, threads, encoding):
        self.encoding = encoding
        if stage == "self":
            self.envs = [muggins.VecEnv("block", num_envs, seed=seed, threads=threads, copy=False,
                                        encoding=encoding)]
        else:
            half = num_envs // 2
            self.envs = [muggins.VecEnv("block", half, opponents=stage, seat=s, seed=seed + s,
                                        threads=threads, copy=False, encoding=encoding) for s in (0, 1)]
        self.parts = [e.reset() for e in self.envs]

    def observe(self):
        obs = np.concatenate([o for o, _ in self.parts])
        mask = np.concatenate([i["action_mask"] for _, i in self.parts])
        seat = np.concatenate([i["seat"] for _, i in self.parts])
        return obs, mask, seat

    def step(self, actions):
        """Steps every environment; each game's end and, where it ended,
        every seat's return."""
        terms, returns, k = [], [], 0
        for j, e in enumerate(self.envs):
            o, _, term, _, info = e.step(actions[k:k + e.num_envs])
            k += e.num_envs
            ended = np.zeros((e.num_envs, 2), np.float32)
            if term.any():
                ended[term] = info["returns"][term]
            terms.append(term.copy())
            returns.append(ended)
            self.parts[j] = (o.copy(), {key: info[key].copy() for key in ("action_mask", "seat")})
        term, returns = np.concatenate(terms), np.concatenate(returns)
        return term, returns

    def bootstrap(self, params, obs, seat):
        """Each seat's value now: the acting seat's from its observation,
        the other's from its own encoding of the same state."""
        v = np.zeros((len(obs), 2), np.float32)
        ar = np.arange(len(obs))
        v[ar, seat] = np.asarray(values(params, obs))
        other = []
        for e in self.envs:
            for i in range(e.num_envs):
                s = e.state(i)
                other.append(s.encode(1 - s.current_player(), self.encoding))
        v[ar, 1 - seat] = np.asarray(values(params, np.asarray(other, np.float32)))
        return v


def advantages(val, seat, term, returns, boot, gamma, lam, reward="points"):
    """GAE along each seat's own chain of decisions in each game: a
    transition's next value is its seat's next decision's; a game's end
    gives every seat its return (scaled) on its last decision."""
    T, N = val.shape
    ar = np.arange(N)
    nv, na = boot.copy(), np.zeros((N, 2), np.float32)
    pending, final = np.zeros((N, 2), np.float32), np.zeros((N, 2), bool)
    adv = np.zeros((T, N), np.float32)
    for t in range(T - 1, -1, -1):
        ended = term[t]
        nv[ended], na[ended] = 0.0, 0.0
        r = returns[t][ended]
        pending[ended], final[ended] = (np.sign(r) if reward == "win" else r / SCALE), True
        s = seat[t]
        nonterminal = ~final[ar, s]
        delta = pending[ar, s] + gamma * nv[ar, s] * nonterminal - val[t]
        a = delta + gamma * lam * nonterminal * na[ar, s]
        adv[t] = a
        nv[ar, s], na[ar, s] = val[t], a
        pending[ar, s], final[ar, s] = 0.0, False
    return adv, adv + val


def evaluate(params, opponent, games, seed, encoding):
    """The greedy policy against `opponent` on `games` deals, each played
    from both seats (the same deals: one seed for both environments):
    (games won, mean return, pairs won), a pair won when its two returns
    sum above 0 (a tied pair counts half)."""
    results = []
    for seat in (0, 1):
        env = muggins.VecEnv("block", games, opponents=opponent, seat=seat, seed=10_000 + seed,
                             encoding=encoding)
        obs, info = env.reset()
        done, res = np.zeros(games, bool), np.zeros(games)
        while not done.all():
            a = np.asarray(greedy(params, obs, info["action_mask"])).astype(np.int64)
            obs, r, term, _, info = env.step(a)
            new = term & ~done
            res[new], done = r[new], done | term
        results.append(res)
    pairs = results[0] + results[1]
    res = np.concatenate(results)
    return float((res > 0).mean()), float(res.mean()), float((pairs > 0).mean() + 0.5 * (pairs == 0).mean())


def svg_curve(rows, path, stages=()):
    """The win rates (games solid, deal pairs dashed) against each opponent
    over the learner's steps, the stages' starts marked, as an SVG."""
    w, h, m = 720, 400, 56
    xmax = max(r["steps"] for r in rows) or 1

    def xy(steps, rate):
        return m + (w - 2 * m) * steps / xmax, h - m - (h - 2 * m) * rate

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
             f'font-size="12"><rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">PPO on block: the greedy policy\'s '
             f'win rate (200 deals, both seats)</text>',
             f'<text x="16" y="{h / 2}" text-anchor="middle" transform="rotate(-90 16 {h / 2})">win rate</text>']
    for rate in (0.0, 0.25, 0.5, 0.75, 1.0):
        x0, y = xy(0, rate)
        parts.append(f'<line x1="{x0}" y1="{y}" x2="{w - m}" y2="{y}" stroke="#ddd"/>'
                     f'<text x="{x0 - 6}" y="{y + 4}" text-anchor="end">{rate:.2f}</text>')
    for k in range(5):
        steps = xmax * k / 4
        x, y = xy(steps, 0)
        parts.append(f'<text x="{x}" y="{y + 16}" text-anchor="middle">{steps / 1e6:.1f} M</text>')
    parts.append(f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">learner steps (millions)</text>')
    for name, at in stages:
        x, y = xy(at, 1.0)
        parts.append(f'<line x1="{x}" y1="{y}" x2="{x}" y2="{h - m}" stroke="#999" stroke-dasharray="2,3"/>'
                     f'<text x="{x + 4}" y="{y + 12}" fill="#555">{name}</text>')
    legend = [("vs_random", "#1f77b4", "", "games vs random"),
              ("pairs_vs_random", "#1f77b4", "6,4", "pairs vs random"),
              ("vs_heaviest", "#d62728", "", "games vs heaviest"),
              ("pairs_vs_heaviest", "#d62728", "6,4", "pairs vs heaviest")]
    for i, (key, colour, dash, label) in enumerate(legend):
        pts = " ".join("%.1f,%.1f" % xy(r["steps"], r[key]) for r in rows)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2" '
                     f'stroke-dasharray="{dash}"/>')
        lx, ly = w - m - 150, h - m - 80 + 16 * i
        parts.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 24}" y2="{ly - 4}" stroke="{colour}" '
                     f'stroke-width="2" stroke-dasharray="{dash}"/><text x="{lx + 30}" y="{ly}">{label}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stages", default="random:2000000,heaviest:2000000,self:4000000",
                   help="stage:steps,... with stage random, heaviest or self")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--rollout", type=int, default=32, help="steps per environment per update")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--gamma", type=float, default=1.0)
    p.add_argument("--lam", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--eval-every", type=int, default=500_000, help="learner steps between evaluations")
    p.add_argument("--eval-games", type=int, default=200, help="games from each seat per evaluation")
    p.add_argument("--reward", choices=["points", "win"], default="points",
                   help="the learner's reward at a game's end: its return (scaled to [-1, 1]) or its sign")
    p.add_argument("--encoding", choices=["info_state", "rich", "rich_history"], default="rich")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--out", default="runs/ppo-block")
    args = p.parse_args()
    stages = []
    for part in args.stages.split(","):
        name, _, steps = part.partition(":")
        if name not in ("random", "heaviest", "self") or not steps.isdigit():
            p.error(f"--stages: {part!r} is not stage:steps (random, heaviest or self)")
        stages.append((name, int(steps)))
    os.makedirs(args.out, exist_ok=True)

    key = jax.random.PRNGKey(args.seed)
    key, sub = jax.random.split(key)
    obs_size = muggins.VecEnv("block", 1, encoding=args.encoding).single_observation_space.shape[0]
    params = init_params(sub, [obs_size] + [args.hidden] * args.layers)
    optimizer = optax.chain(optax.clip_by_global_norm(0.5), optax.adam(args.lr, eps=1e-5))
    opt_state = optimizer.init(params)
    update = make_update(optimizer, args.clip, args.vf_coef, args.ent_coef)
    rows, total, next_eval, start = [], 0, 0, time.time()

    def record():
        vr = evaluate(params, "random", args.eval_games, args.seed, args.encoding)
        vh = evaluate(params, "heaviest", args.eval_games, args.seed, args.encoding)
        row = {"steps": total, "seconds": round(time.time() - start, 1), "vs_random": vr[0],
               "vs_heaviest": vh[0], "return_vs_random": vr[1], "return_vs_heaviest": vh[1],
               "pairs_vs_random": vr[2], "pairs_vs_heaviest": vh[2]}
        rows.append(row)
        print(f"{total:>10,} steps {row['seconds']:>7.1f} s  vs random: games {vr[0]:.3f} pairs {vr[2]:.3f} "
              f"(mean {vr[1]:+.2f})  vs heaviest: games {vh[0]:.3f} pairs {vh[2]:.3f} (mean {vh[1]:+.2f})",
              flush=True)

    T, N = args.rollout, args.num_envs
    for stage, steps in stages:
        learner = Learner(stage, N, args.seed + len(rows), args.threads, args.encoding)
        done_steps = 0
        while done_steps < steps:
            if total >= next_eval:
                record()
                next_eval += args.eval_every
            buf = {k: [] for k in ("obs", "mask", "act", "logp", "val", "seat", "term", "returns")}
            for _ in range(T):
                obs, mask, seat = learner.observe()
                key, sub = jax.random.split(key)
                a, logp, v = act(params, obs, mask, sub)
                a = np.asarray(a).astype(np.int64)
                term, returns = learner.step(a)
                for k, x in (("obs", obs), ("mask", mask), ("act", a), ("logp", np.asarray(logp)),
                             ("val", np.asarray(v)), ("seat", seat), ("term", term), ("returns", returns)):
                    buf[k].append(x)
            b = {k: np.stack(x) for k, x in buf.items()}
            obs, _, seat = learner.observe()
            boot = learner.bootstrap(params, obs, seat)
            adv, ret = advantages(b["val"], b["seat"], b["term"], b["returns"], boot, args.gamma, args.lam,
                                  args.reward)
            flat = {"obs": b["obs"].reshape(T * N, -1), "mask": b["mask"].reshape(T * N, -1),
                    "act": b["act"].reshape(-1), "logp": b["logp"].reshape(-1),
                    "adv": adv.reshape(-1), "ret": ret.reshape(-1)}
            size = T * N // args.minibatches
            rng = np.random.default_rng(total)
            for _ in range(args.epochs):
                order = rng.permutation(T * N)
                for m in range(args.minibatches):
                    idx = order[m * size:(m + 1) * size]
                    params, opt_state, _ = update(params, opt_state, {k: v[idx] for k, v in flat.items()})
            done_steps += T * N
            total += T * N
    record()
    muggins.net.save(os.path.join(args.out, "policy.safetensors"),
                     {k: np.asarray(v, np.float32) for k, v in params.items()},
                     game="block", encoding=args.encoding, made_by=" ".join(["python3", *sys.argv]))
    with open(os.path.join(args.out, "curve.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    starts, at = [], 0
    for name, steps in stages:
        starts.append((name, at))
        at += steps
    svg_curve(rows, os.path.join(args.out, "curve.svg"), starts)
    print(f"wrote {args.out}/policy.safetensors, curve.csv, curve.svg ({time.time() - start:.0f} s)")


ACTIONS = muggins.VecEnv("block", 1).single_action_space.n

if __name__ == "__main__":
    main()
