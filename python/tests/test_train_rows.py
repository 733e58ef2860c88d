"""A `[train]` run's outputs read by the Python tools analysts use: the
training rows with pyarrow and DuckDB (docs/train.md's columns), the
networks with `safetensors`, and the best network playing as `Bot("net")`."""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
from safetensors import safe_open

import muggins
import muggins.net

SPEC = """
name = "py-train"
seed = 9

[train]
game = "block"
generations = 2
games = 200
shard_games = 100
hidden = [16]
population_share = 0.5

[train.gate]
pairs = 20

[train.eval]
pairs = 20
"""


def _run(out: Path) -> Path:
    binary = os.environ.get("MUGGINS_BIN")
    assert binary and os.path.exists(binary), "set MUGGINS_BIN to the muggins binary (scripts/python-test.sh does)"
    spec = out / "train.toml"
    spec.write_text(SPEC)
    subprocess.run([binary, "run", str(spec), "--out", str(out), "--threads", "2"], check=True,
                   capture_output=True, text=True, timeout=600)
    return out / "py-train"


def test_training_rows_networks_and_report_read_back():
    with tempfile.TemporaryDirectory() as tmp:
        run = _run(Path(tmp))
        parts = sorted((run / "gen-001" / "selfplay").glob("part-*.parquet"))
        assert [p.name for p in parts] == ["part-00000.parquet", "part-00001.parquet"]
        table = pq.read_table(parts[0])
        assert table.column_names == ["game_index", "turn", "seat", "observation", "legal", "policy", "action",
                                      "value", "outcome", "searched"]
        width = len(muggins.State("block").encode(0, "rich"))
        rows = table.to_pylist()
        assert len(rows) > 100
        outcomes = {}
        for r in rows:
            assert len(r["observation"]) == width
            assert r["action"] in r["legal"] and len(r["legal"]) == len(r["policy"]) >= 2
            assert abs(sum(r["policy"]) - 1.0) < 1e-4
            outcomes.setdefault(r["game_index"], {})[r["seat"]] = r["outcome"]
        for g, by_seat in outcomes.items():
            if len(by_seat) == 2:
                assert by_seat[0] == -by_seat[1], g
        glob = str(run / "gen-*" / "selfplay" / "*.parquet")
        n, games, legal = duckdb.connect().execute(
            f"SELECT count(*), count(DISTINCT game_index), avg(len(legal)) FROM '{glob}'").fetchone()
        assert n > 2 * len(rows) - 50 and games <= 200 and legal >= 2

        summary = json.loads((run / "report.json").read_text())
        best = run / "best.safetensors"
        with safe_open(str(best), "np") as f:
            meta = json.loads(f.metadata()["muggins"])
            assert meta["game"] == "block" and meta["encoding"] == "rich" and meta["hidden"] == [16]
            assert meta["provenance"]["generation"] in (0, 1, 2)
            assert f.get_tensor("w0").shape == (width, 16)
        assert muggins.net.Net(str(best)).sha256 == summary["best"]
        bot = muggins.Bot("net", model=str(best))
        state = muggins.State("block")
        rng = np.random.default_rng(1)
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(actions, p=np.array(probs) / sum(probs))))
            else:
                state.apply_action(bot.step(state))
        assert sum(state.returns()) == 0
