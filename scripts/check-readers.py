#!/usr/bin/env python3
"""Reads a muggins experiment directory with DuckDB, pyarrow and Polars, one
glob each, and checks they agree with each other and with the manifest.

Usage: check-readers.py RESULTS/EXPERIMENT
"""
import json
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as ds

REQUIRED = [
    "experiment", "game_index", "information_source", "observability", "target",
    "starting_state", "engine", "repeat", "leader", "player_score", "target_score",
    "score_diff", "win_or_tie", "ending", "turns", "player_draws", "target_draws",
    "predictions", "predictions_correct", "nodes", "moves", "elapsed_us",
]


def main() -> int:
    exp = Path(sys.argv[1])
    glob = str(exp / "games" / "*.parquet")
    manifest = json.loads((exp / "_manifest.json").read_text())
    assert (exp / "_SUCCESS").exists(), "no _SUCCESS marker"

    con = duckdb.connect()
    n, distinct, diff_sum, wins = con.execute(
        f"SELECT count(*), count(DISTINCT game_index), sum(score_diff), sum(win_or_tie::INT) FROM read_parquet('{glob}')"
    ).fetchone()
    cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{glob}')").fetchall()]
    missing = [c for c in REQUIRED if c not in cols]
    assert not missing, f"columns missing: {missing}"

    table = ds.dataset(str(exp / "games"), format="parquet").to_table()
    df = pl.scan_parquet(glob).select(
        pl.len().alias("n"), pl.col("score_diff").sum().alias("diff"), pl.col("win_or_tie").sum().alias("wins")
    ).collect()

    assert n == manifest["games"] == distinct, (n, manifest["games"], distinct)
    assert table.num_rows == n, (table.num_rows, n)
    assert df["n"][0] == n and df["diff"][0] == diff_sum and df["wins"][0] == wins, (df, diff_sum, wins)
    assert sum(s["rows"] for s in manifest["shards"]) == n
    print(f"duckdb, pyarrow and polars agree: {n} rows, {distinct} distinct games, sum(score_diff) = {diff_sum}, wins/ties = {wins}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
