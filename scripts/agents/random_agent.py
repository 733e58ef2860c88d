#!/usr/bin/env python3
"""A muggins agent (docs/agents.md, protocol 2) that plays a uniformly random
legal action. Copy it to start your own: replace `choose`.

muggins writes one JSON object per line on stdin and reads one per line on
stdout; anything on stderr goes to the worker's log. Run by hand to see it:

    echo '{"type": "hello", "protocol": 2}' | python3 random_agent.py
"""
import json
import random
import sys

NAME = "random"
GAMES = ["all-fives", "block", "team"]


def choose(state, rng):
    """The action to play: one of state["legal"]. `state` is the decide
    message: id, seat, hand, tiles, history, sizes, boneyard, points, totals,
    legal (docs/agents.md)."""
    return rng.choice(state["legal"])


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    rng = random.Random(0)
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send({"type": "hello", "protocol": 2, "name": NAME, "games": GAMES})
        elif kind == "game":
            # A new game: the rules, the seats we play, a seed for our randomness.
            rng = random.Random(message["seed"])
        elif kind == "decide":
            # The answer names the question's id (protocol 2).
            send({"type": "action", "id": message["id"], "action": choose(message, rng)})
        elif kind == "end":
            pass  # the game's result: points and winner, or a forfeit
        elif kind == "quit":
            return
        else:
            print(f"{NAME}: unknown message {kind!r}", file=sys.stderr)


if __name__ == "__main__":
    main()
