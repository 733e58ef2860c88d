"""How much a network's plays tell about its hidden tiles (issue 46's
measure, the method of docs/agents.md, "Can the partner's tiles be
inferred"): team games that one network plays in every seat (greedy), and
at each decision of every seat the hidden tiles' holders inferred from
what that seat saw, scored by the mean log loss (nats) of each hidden
tile's true holder:

- `constraints`: worlds drawn uniformly from the constraints belief
  (`State.resample`), equally weighted;
- `prior`: that belief's exact marginals (`State.belief_prior`), which
  the worlds estimate;
- `partner`: the same worlds weighted by the likelihood of the partner's
  plays so far under the network itself (the partner's policy is known
  exactly: a softmax of its logits at `--temperature`, over the plays legal
  in each world);
- `everyone`: weighted by the likelihood of every other seat's plays;
- with a model that has a belief head (docs/train.md, "A belief head"),
  `head`: the head's own probabilities from the seat's observation (times
  the constraints belief's marginals, `State.belief_prior`, for a head
  that corrects them), and `head-worlds`: the constraints worlds weighted
  by the product of the head's exponentiated logits at where each world
  puts the hidden tiles (the guided search's pool).

The marginals are smoothed by one pseudo-world spread evenly over the
three holders (so a tile no drawn world gives its true holder costs
log(3 (W + 1)), not infinity). Deals come from `--seed`; every draw is
seeded, so the figures are a function of the arguments.

    python3 scripts/partner-signal.py [--model models/train-team.safetensors]
        [--games 40] [--worlds 100] [--temperature 1.0] [--seed 1]
"""
import argparse
import math

import numpy as np

import muggins
from muggins import _muggins
from muggins.net import Net


def self_play(net, encoding, rng):
    """One team game, the network greedy in every seat: the history and
    the index in it, seat and legal count of every decision."""
    s = muggins.State("team")
    decisions = []
    while not s.is_terminal():
        if s.is_chance_node():
            ids, p = zip(*s.chance_outcomes())
            s.apply_action(int(rng.choice(ids, p=p)))
            continue
        seat = s.current_player()
        legal = s.legal_actions()
        if len(legal) > 1:
            logits, _ = net.forward(np.asarray(s.encode(seat, encoding), np.float32))
            a = legal[int(np.argmax(logits[legal]))]
        else:
            a = legal[0]
        decisions.append((len(s.history()), seat, len(legal)))
        s.apply_action(int(a))
    return s.history(), decisions


def log_likelihoods(net, encoding, worlds, evidence, temperature):
    """For each world, the log-likelihood of each seat's evidence (plays
    with a choice): an array [worlds, 4]."""
    rows, legal_sets, picks, owners = [], [], [], []
    for w, hist in enumerate(worlds):
        for idx, seat, action in evidence:
            st = _muggins.state_from_history("team", {}, hist[:idx])
            rows.append(st.encode(seat, encoding))
            legal_sets.append(st.legal_actions())
            picks.append(action)
            owners.append((w, seat))
    out = np.zeros((len(worlds), 4))
    if not rows:
        return out
    logits, _ = net.forward(np.asarray(rows, np.float32), threads=2)
    for k, (legal, a, (w, seat)) in enumerate(zip(legal_sets, picks, owners)):
        z = logits[k, legal].astype(np.float64) / temperature
        top = z.max()
        lse = top + math.log(np.exp(z - top).sum())
        out[w, seat] += z[legal.index(a)] - lse
    return out


def scores(hidden, truth, hands, weights):
    """The mean log loss of each hidden tile's true holder under the
    weighted worlds' marginals (one pseudo-world spread over the holders)."""
    total = weights.sum()
    loss = 0.0
    for t in hidden:
        holder = truth[t]
        mass = sum(w for w, h in zip(weights, hands) if t in h[holder])
        p = (mass + total / len(weights) / 3.0) / (total + total / len(weights))
        loss -= math.log(p)
    return loss / len(hidden)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="models/train-team.safetensors")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--worlds", type=int, default=100)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    net = Net(args.model)
    encoding = net.meta["encoding"]
    if net.meta["game"] != "team":
        raise SystemExit(f"--model {args.model}: a team network is needed, this one plays {net.meta['game']}")
    rng = np.random.default_rng(args.seed)
    sums = {"constraints": 0.0, "prior": 0.0, "partner": 0.0, "everyone": 0.0}
    head = "belief" in net.meta
    if head:
        sums.update({"head": 0.0, "head-worlds": 0.0})
    points = 0
    diffs = []  # each decision's head loss less its prior's
    for g in range(args.games):
        history, decisions = self_play(net, encoding, rng)
        for n, (idx, seat, _) in enumerate(decisions):
            partner = (seat + 2) % 4
            st = _muggins.state_from_history("team", {}, history[:idx])
            true_hands = [set(h) for h in st.hands()]
            truth = {t: h for h in range(4) if h != seat for t in true_hands[h]}
            hidden = sorted(truth)
            if not hidden:
                continue
            worlds, hands = [], []
            for k in range(args.worlds):
                w = st.resample(seat, (args.seed << 40) ^ (g << 24) ^ (n << 12) ^ k)
                worlds.append(w.history())
                hands.append([set(h) for h in w.hands()])
            evidence = [(i, s, history[i]) for i, s, legal in decisions[:n] if s != seat and legal > 1]
            ll = log_likelihoods(net, encoding, worlds, evidence, args.temperature)
            m = st.belief_prior(seat)
            prior_loss = -sum(math.log(max(m[t][(truth[t] - seat - 1) % 4], 1e-9)) for t in hidden) / len(hidden)
            sums["prior"] += prior_loss
            if head:
                obs = np.asarray(st.encode(seat, encoding), np.float32)
                prior = st.belief_prior(seat) if net.meta.get("belief_prior") else None
                p = net.belief(obs, prior=prior)
                k = {t: (truth[t] - seat - 1) % 4 for t in hidden}
                head_loss = -sum(math.log(max(float(p[t, k[t]]), 1e-9)) for t in hidden) / len(hidden)
                sums["head"] += head_loss
                diffs.append(head_loss - prior_loss)
                # Each world weighted by the head's logits at its holders
                # (the search's pool: a tile's normaliser, and the prior the
                # worlds are already drawn from, are the same in every world).
                z = np.asarray(net._core.belief_logits(obs), np.float64).reshape(-1, 4)
                logw = np.array([sum(z[t, (h - seat - 1) % 4] for h in range(4) if h != seat for t in hs[h])
                                 for hs in hands])
                sums["head-worlds"] += scores(hidden, truth, hands, np.exp(logw - logw.max()))
            for name, cols in [("constraints", []), ("partner", [partner]), ("everyone", [s for s in range(4) if s != seat])]:
                logw = ll[:, cols].sum(axis=1) if cols else np.zeros(len(worlds))
                weights = np.exp(logw - logw.max())
                sums[name] += scores(hidden, truth, hands, weights)
            points += 1
        print(f"game {g + 1}/{args.games}: " + ", ".join(f"{k} {v / points:.3f}" for k, v in sums.items()),
              flush=True)
    print(f"{args.model}: {args.games} self-play team games, {points} decisions, {args.worlds} worlds each, "
          f"temperature {args.temperature}: nats a hidden tile (mean log loss of its true holder): "
          + ", ".join(f"{k} {v / points:.3f}" for k, v in sums.items()))
    if head and len(diffs) > 1:
        d = np.asarray(diffs)
        half = 1.96 * d.std(ddof=1) / math.sqrt(len(d))
        print(f"head less prior: {d.mean():+.4f} nats a hidden tile [{d.mean() - half:+.4f}, {d.mean() + half:+.4f}] "
              f"(95%, over {len(d)} decisions)")


if __name__ == "__main__":
    main()
