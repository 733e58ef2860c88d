#!/usr/bin/env python3
"""Checks muggins's block and team rules against OpenSpiel, move for move.

Plays seeded random games of OpenSpiel's python_block_dominoes and
python_team_dominoes (pip install open_spiel), records the legal actions at
every decision node and the returns, and replays the same histories through
`muggins openspiel replay`: the legal actions and returns must be identical.
Muggins's own hands (`muggins play --preset block|team --json`) and the rows
of `muggins run` block and team experiments (whose `moves` column is the
OpenSpiel history) are loaded into OpenSpiel and must end with the same
returns. Some histories are cut short (muggins must list the legal actions at the last
node and give no returns), and some have one action replaced by an illegal
one (muggins must refuse it, naming that step and action id).

usage: openspiel-check.py MUGGINS [--games N] [--seed S]
(N full games of each, plus N/5 cut short and N/10 with an illegal step)
"""

import argparse
import json
import random
import subprocess
import sys
import time

import pyspiel
from open_spiel.python.games import block_dominoes, team_dominoes  # noqa: F401 (registers the games)


def play(game, rng):
    """One random game: its history, legal lists at decision nodes, returns."""
    state = game.new_initial_state()
    history, legal = [], []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = [a for a, _ in state.chance_outcomes()]
            action = rng.choice(outcomes)
        else:
            actions = state.legal_actions()
            legal.append(list(actions))
            action = rng.choice(actions)
        history.append(action)
        state.apply_action(action)
    return history, legal, [float(r) for r in state.returns()]


def cases(game, n, rng):
    """(history, expected) pairs: full games, cut-short ones, illegal ones."""
    num_actions = game.num_distinct_actions()
    deal = {"python_block_dominoes": 14, "python_team_dominoes": 28}[game.get_type().short_name]
    out = []
    # n full games, then n/5 cut short and n/10 with an illegal step.
    kinds = ["full"] * n + ["cut"] * (n // 5) + ["illegal"] * (n // 10)
    for kind in kinds:
        history, legal, returns = play(game, rng)
        if kind == "full":
            out.append((history, {"legal": legal, "returns": returns}))
        elif kind == "cut":
            # Cut at a random point: in the deal (no decision node yet), or
            # before the k-th play (the legal list of that node comes last).
            cut = rng.randrange(0, len(history))
            if cut <= deal:
                expected_legal = [legal[0]] if cut == deal else []
            else:
                k = cut - deal
                expected_legal = legal[: k + 1]
            out.append((history[:cut], {"legal": expected_legal, "returns": None}))
        else:
            # One decision replaced by an action that is not legal there.
            k = rng.randrange(0, len(legal))
            bad = rng.choice([a for a in range(num_actions) if a not in legal[k]])
            step = deal + k
            out.append((history[:step] + [bad] + history[step + 1 :], {"error_step": step, "error_action": bad}))
    return out


def check(muggins, name, n, seed):
    game = pyspiel.load_game(name)
    rng = random.Random(seed)
    t0 = time.time()
    todo = cases(game, n, rng)
    t_openspiel = time.time() - t0
    text = "".join(json.dumps({"history": h}) + "\n" for h, _ in todo)
    t0 = time.time()
    proc = subprocess.run(
        [muggins, "openspiel", "replay", "--game", name],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    t_muggins = time.time() - t0
    if proc.returncode != 0:
        sys.exit(f"{name}: muggins failed: {proc.stderr}")
    lines = proc.stdout.splitlines()
    if len(lines) != len(todo):
        sys.exit(f"{name}: {len(todo)} histories in, {len(lines)} lines out")
    bad = 0
    counts = {"full": 0, "cut": 0, "illegal": 0, "decisions": 0}
    for (history, want), line in zip(todo, lines):
        got = json.loads(line)
        if "error_step" in want:
            counts["illegal"] += 1
            err = got.get("error", "")
            ok = f"step {want['error_step']} (action {want['error_action']})" in err
        else:
            counts["cut" if want["returns"] is None else "full"] += 1
            counts["decisions"] += len(want["legal"])
            ok = got.get("legal") == want["legal"] and (
                (want["returns"] is None and got.get("returns") is None)
                or (got.get("returns") is not None and [float(r) for r in got["returns"]] == want["returns"])
            )
        if not ok:
            bad += 1
            if bad <= 3:
                print(f"{name}: MISMATCH for history {history}\n  want {want}\n  got  {got}", file=sys.stderr)
    print(
        f"{name}: {len(todo)} histories ({counts['full']} full games, {counts['cut']} cut short, "
        f"{counts['illegal']} illegal), {counts['decisions']} decision nodes compared, {bad} mismatches; "
        f"OpenSpiel played them in {t_openspiel:.1f} s, muggins replayed them in {t_muggins:.2f} s"
    )
    return bad


def roundtrip(muggins, name, preset, n, seed):
    """Muggins's own hands, loaded into OpenSpiel: every action legal there, same returns."""
    game = pyspiel.load_game(name)
    rng = random.Random(seed)
    count = {"block": 137680171200, "team": 472518347558400}[preset]
    bad = 0
    for i in range(n):
        deal = rng.randrange(count)
        agents = ["random", "heaviest"][i % 2]
        out = subprocess.run(
            [muggins, "play", "--preset", preset, "--state", str(deal), "--repeat", str(i + 1), "--agent", agents,
             "--target", "random", "--json"],
            capture_output=True, text=True, check=True,
        ).stdout
        hand = json.loads(out)
        state = game.new_initial_state()
        ok = True
        for a in hand["openspiel_history"]:
            legal = [x for x, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            if a not in legal:
                ok = False
                break
            state.apply_action(a)
        ok = ok and state.is_terminal() and [float(r) for r in state.returns()] == [float(r) for r in hand["returns"]]
        if not ok:
            bad += 1
            if bad <= 3:
                print(f"{name}: muggins hand {deal} does not replay in OpenSpiel: {hand}", file=sys.stderr)
    print(f"{name}: {n} muggins hands loaded into OpenSpiel, {bad} mismatches")
    return bad


def experiments(muggins, seed):
    """Rows of `muggins run` block and team experiments, loaded into OpenSpiel
    from their `moves` column (the OpenSpiel history): same returns."""
    import os
    import tempfile

    import pyarrow.parquet as pq

    bad = 0
    for preset, name in [("block", "python_block_dominoes"), ("team", "python_team_dominoes")]:
        game = pyspiel.load_game(name)
        with tempfile.TemporaryDirectory() as d:
            spec = os.path.join(d, "spec.toml")
            with open(spec, "w") as f:
                f.write(
                    f'name = "{preset}"\nseed = {seed}\n[rules]\npreset = "{preset}"\n[grid]\n'
                    'information_source = ["oracle"]\nobservability = ["full"]\ntarget = ["random", "heaviest"]\n'
                    'starting_states = "0-49"\nengine = ["mstar", "expectimax"]\nrepeats = 1\n[search]\ndepth = 3\n'
                )
            subprocess.run([muggins, "run", spec, "--out", d], capture_output=True, text=True, check=True)
            rows = pq.read_table(os.path.join(d, preset, "games")).to_pylist()
            mismatches = 0
            for r in rows:
                state = game.new_initial_state()
                for a in map(int, r["moves"].split()):
                    state.apply_action(a)
                if not state.is_terminal() or float(state.returns()[0]) != float(r["score_diff"]):
                    mismatches += 1
        print(f"{name}: {len(rows)} rows of a muggins {preset} experiment loaded into OpenSpiel, {mismatches} mismatches")
        bad += mismatches
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("muggins", help="path to the muggins binary")
    ap.add_argument("--games", type=int, default=10000, help="full games per OpenSpiel game (default 10000)")
    ap.add_argument("--seed", type=int, default=2014)
    a = ap.parse_args()
    bad = sum(check(a.muggins, name, a.games, a.seed) for name in ["python_block_dominoes", "python_team_dominoes"])
    hands = max(1, a.games // 50)
    bad += roundtrip(a.muggins, "python_block_dominoes", "block", hands, a.seed)
    bad += roundtrip(a.muggins, "python_team_dominoes", "team", hands, a.seed)
    bad += experiments(a.muggins, a.seed)
    if bad:
        sys.exit(f"{bad} histories differ from OpenSpiel")


if __name__ == "__main__":
    main()
