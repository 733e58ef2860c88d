#!/usr/bin/env python3
"""A muggins agent that misbehaves as told (cli/tests/it/external.rs):
plays uniformly random legal actions except on every `--every`-th decision
of a process, where it (--mode) crashes, hangs, prints garbage, returns an
illegal id, floods stderr, or is slow; `--mode version` greets with
protocol 3."""
import argparse
import json
import random
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True,
               choices=["crash", "hang", "garbage", "illegal", "flood", "version", "slow", "none"])
p.add_argument("--every", type=int, default=3)
args = p.parse_args()


def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()


decisions = 0
rng = random.Random(0)
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print("misbehave: hello", file=sys.stderr, flush=True)
        send({"type": "hello", "protocol": 3 if args.mode == "version" else 1, "name": "misbehave",
              "games": ["all-fives", "block", "team"]})
    elif m["type"] == "decide":
        decisions += 1
        due = decisions % args.every == 0
        if due and args.mode == "crash":
            print("misbehave: crashing on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        if due and args.mode == "hang":
            time.sleep(3600)
        if due and args.mode == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        if due and args.mode == "illegal":
            send({"type": "action", "action": 9999})
            continue
        if args.mode == "flood":
            for i in range(20000):
                sys.stderr.write(f"flood line {i} " + "x" * 100 + "\n")
        if args.mode == "slow":
            time.sleep(0.05)
        send({"type": "action", "action": rng.choice(m["legal"])})
    elif m["type"] == "quit":
        break
