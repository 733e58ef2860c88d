"""muggins.State.from_view rebuilds an All-Fives hand from one seat's view
(the agent protocol's decide message), and scripts/agents/openspiel_agent.py
plays All Fives through it in a real `muggins run` (docs/agents.md)."""
import os
import pathlib
import random
import subprocess
import sys

import pyarrow.parquet as pq

import muggins

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_from_view_rebuilds_a_hand_the_seat_cannot_tell_apart():
    checked = 0
    for seed in range(150):
        rng = random.Random(seed)
        seats = [2, 3, 4][seed % 3]
        s = muggins.State("all-fives", seats=seats)
        public = []
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice(s.legal_actions()))
                continue
            legal = s.legal_actions()
            if len(legal) > 1 and rng.random() < 0.3:
                p = s.current_player()
                w = muggins.State.from_view("all-fives", p, s.hands()[p], public, seed=seed, seats=seats)
                assert w.current_player() == p
                assert w.legal_actions() == legal
                assert w.hands()[p] == s.hands()[p]
                # The table as every seat sees it: ends, count, points, sizes, boneyard.
                assert w.observation_string(p).split(" hand_no")[1] == s.observation_string(p).split(" hand_no")[1]
                checked += 1
            a = rng.choice(legal)
            public.append(a)
            s.apply_action(a)
    assert checked > 300


def test_from_view_refuses_a_history_that_does_not_add_up():
    try:
        muggins.State.from_view("all-fives", 0, [0, 1, 2], [5])
    except ValueError as e:
        assert "history" in str(e) or "add up" in str(e), str(e)
    else:
        raise AssertionError("accepted")


def muggins_bin():
    path = os.environ.get("MUGGINS_BIN")
    assert path and os.path.exists(path), "set MUGGINS_BIN to the muggins binary (scripts/python-test.sh does)"
    return path


def test_openspiel_ismcts_plays_all_fives_hands_and_matches_as_an_agent(tmp_path):
    agent = ROOT / "scripts/agents/openspiel_agent.py"
    for extra in ["", "[match]\nto = 61\n"]:
        spec = tmp_path / "spec.toml"
        spec.write_text(f"""
name = "af-os"
seed = 4
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["partial"]
starting_states = "spread:2"
repeats = 1
agents = ["mstar"]
opponents = ["openspiel"]
paired = true
[search]
depth = 2
worlds = 2
budget = 200
{extra}
[agents.mstar]
engine = "mstar"
[agents.openspiel]
command = ["{sys.executable}", "{agent}", "--bot", "ismcts", "--simulations", "20"]
time_ms = 60000
""")
        out = tmp_path / ("out" + str(len(extra)))
        run = subprocess.run([muggins_bin(), "run", str(spec), "--out", str(out)],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        rows = pq.read_table(out / "af-os" / "games").to_pylist()
        assert len(rows) == 4
        assert all(r["forfeit"] is None for r in rows), [r["forfeit"] for r in rows]
        assert "[agent openspiel]" in run.stderr
