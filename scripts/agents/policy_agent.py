#!/usr/bin/env python3
"""A trained policy network as a muggins agent (docs/rl.md; protocol 2,
docs/agents.md).

    python3 policy_agent.py [--model models/ppo-block.npz] [--sample]

Plays block with the network `python/examples/ppo_block.py` writes (numpy
weights `w0, b0, ...`, tanh layers, a policy and a value head). At each
decision it rebuilds a state from what the protocol tells its seat (the
other seats' tiles drawn among the deals that replay the history,
`openspiel_agent.World`), takes that seat's observation in the encoding
the network was trained on (the model file's `encoding`: it depends on
the seat's view only, so any such deal gives the same one), and plays the legal action the
policy ranks first (`--sample`: drawn from the policy, seeded by the
game's seed). Needs numpy and OpenSpiel (`pip install open_spiel`), and the
muggins package for its `muggins_block`.
"""
import argparse
import json
import os
import random
import sys

import numpy as np
import pyspiel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openspiel_agent import GAMES, World, send  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Policy:
    def __init__(self, path):
        with np.load(path) as f:
            self.encoding = str(f["encoding"]) if "encoding" in f.files else "info_state"
            self.p = {k: f[k].astype(np.float32) for k in f.files if k != "encoding"}
        self.layers = sum(1 for k in self.p if k.startswith("w") and k[1:].isdigit())

    def logits(self, obs):
        h = np.asarray(obs, np.float32)
        for i in range(self.layers):
            h = np.tanh(h @ self.p[f"w{i}"] + self.p[f"b{i}"])
        return h @ self.p["w_pi"] + self.p["b_pi"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default=os.path.join(ROOT, "models", "ppo-block.npz"))
    p.add_argument("--sample", action="store_true", help="draw from the policy instead of its first choice")
    args = p.parse_args()
    policy = Policy(args.model)
    game = pyspiel.load_game(GAMES["block"])
    world = World(game, "block")
    rng, np_rng = random.Random(0), np.random.default_rng(0)
    for line in sys.stdin:
        m = json.loads(line)
        kind = m.get("type")
        if kind == "hello":
            send({"type": "hello", "protocol": 2, "name": "policy", "games": ["block"]})
        elif kind == "game":
            if m["game"] != "block":
                print(f"policy_agent plays block, not {m['game']}", file=sys.stderr, flush=True)
                return
            rng, np_rng = random.Random(m["seed"]), np.random.default_rng(m["seed"])
        elif kind == "decide":
            state = world.sample(m["seat"], m["tiles"], m["history"], rng)
            if policy.encoding == "info_state":
                obs = state.information_state_tensor(m["seat"])
            else:  # muggins' own encodings, from the muggins.State the game wraps
                obs = state._core.encode(m["seat"], policy.encoding)
            logits = policy.logits(obs)
            legal = np.asarray(m["legal"])
            if args.sample:
                z = logits[legal] - logits[legal].max()
                action = int(np_rng.choice(legal, p=np.exp(z) / np.exp(z).sum()))
            else:
                action = int(legal[np.argmax(logits[legal])])
            send({"type": "action", "id": m["id"], "action": action})
        elif kind == "quit":
            return


if __name__ == "__main__":
    main()
