#!/usr/bin/env python3
"""Match win rates with 95% intervals, per engine and target, of a full-game
experiment (e.g. jobs/specs/double6-strength.toml).

usage: python3 scripts/strength-table.py <out>/<experiment> [--markdown]

Reads <dir>/games/part-*.parquet with pyarrow. A match is won when the
agent's side ends with more points than the best target side
(score_diff > 0); the interval is Wilson's score interval at 95%. The mean
score difference carries a normal 95% interval. Partitions with a `belief`
column (schema 2) are grouped by belief too; "lost" counts score_diff < 0
(the rest are ties).
"""
import glob
import math
import sys

import pyarrow.parquet as pq


def wilson(k, n, z=1.959964):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    files = sorted(glob.glob(f"{args[0]}/games/part-*.parquet"))
    if not files:
        sys.exit(f"no partitions under {args[0]}/games: give the experiment directory, <out>/<experiment>")
    cells = {}
    for f in files:
        names = pq.read_schema(f).names
        cols = ["engine", "observability", "target", "score_diff"] + (["belief"] if "belief" in names else [])
        for r in pq.read_table(f, columns=cols).to_pylist():
            key = (r["engine"], r.get("belief", "uniform"), r["observability"], r["target"])
            cells.setdefault(key, []).append(r["score_diff"])
    md = "--markdown" in sys.argv
    head = ("engine", "belief", "observe", "target", "games", "won", "lost", "win rate [95% CI]", "mean diff [95% CI]")
    fmt = "{:<11} {:<12} {:<8} {:<9} {:>7} {:>5} {:>5} {:>22} {:>24}"
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(fmt.format(*head))
    for (engine, belief, obs, target), diffs in sorted(cells.items()):
        n = len(diffs)
        won = sum(1 for d in diffs if d > 0)
        lost = sum(1 for d in diffs if d < 0)
        lo, hi = wilson(won, n)
        mean = sum(diffs) / n
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n > 1 else float("nan")
        half = 1.959964 * sd / math.sqrt(n) if n > 1 else float("nan")
        rate = f"{100 * won / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
        diff = f"{mean:.1f} [{mean - half:.1f}, {mean + half:.1f}]"
        row = (engine, belief, obs, target, str(n), str(won), str(lost), rate, diff)
        if md:
            print("| " + " | ".join(row) + " |")
        else:
            print(fmt.format(*row))


if __name__ == "__main__":
    main()
