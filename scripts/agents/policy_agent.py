#!/usr/bin/env python3
"""A trained policy network as a muggins agent (docs/rl.md; protocol 2,
docs/agents.md).

    python3 policy_agent.py [--model models/ppo-block.safetensors] [--sample]

Plays block with a muggins model file (`python/examples/ppo_block.py`
writes one; docs/rl.md, "Model files"). At each decision it rebuilds a
state from what the protocol tells its seat (the other seats' tiles drawn
among the deals that replay the history, `openspiel_agent.World`) and asks
the engine `muggins.Bot("net", model=...)`, which reads only that seat's
observation in the encoding the model names (it depends on the seat's view
only, so any such deal gives the same one) and plays the legal action the
policy ranks first (`--sample`: drawn from the policy, seeded by the
game's seed). Needs OpenSpiel (`pip install open_spiel`) and the muggins
package.
"""
import argparse
import json
import os
import random
import sys

import pyspiel

import muggins

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openspiel_agent import GAMES, World, send  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def policy(model, sample, seed):
    """The engine playing `model`: greedy, or drawn (temperature 1) with `seed`."""
    return muggins.Bot("net", model=model, temperature=1.0 if sample else 0.0, seed=seed)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default=os.path.join(ROOT, "models", "ppo-block.safetensors"))
    p.add_argument("--sample", action="store_true", help="draw from the policy instead of its first choice")
    args = p.parse_args()
    bot = policy(args.model, args.sample, 0)
    game = pyspiel.load_game(GAMES["block"])
    world = World(game, "block")
    rng = random.Random(0)
    for line in sys.stdin:
        m = json.loads(line)
        kind = m.get("type")
        if kind == "hello":
            send({"type": "hello", "protocol": 2, "name": "policy", "games": ["block"]})
        elif kind == "game":
            if m["game"] != "block":
                print(f"policy_agent plays block, not {m['game']}", file=sys.stderr, flush=True)
                return
            rng = random.Random(m["seed"])
            if args.sample:  # the draws' stream is the game's (greedy play needs none)
                bot = policy(args.model, True, m["seed"] % 2**64)
        elif kind == "decide":
            state = world.sample(m["seat"], m["tiles"], m["history"], rng)
            action = int(bot.step(state))
            if action not in m["legal"]:
                print(f"policy_agent: {action} is not among {m['legal']}", file=sys.stderr, flush=True)
                return
            send({"type": "action", "id": m["id"], "action": action})
        elif kind == "quit":
            return


if __name__ == "__main__":
    main()
