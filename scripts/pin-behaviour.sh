#!/usr/bin/env bash
# Pins what the experiments produce, to compare before and after a change
# that must not alter behaviour (a refactor):
#   bash scripts/pin-behaviour.sh BIN OUT   # runs the specs, writes OUT/digest.txt
#   diff before/digest.txt after/digest.txt
# The specs: smoke, double6-smoke, all-fives (jobs/specs/), and those in
# scripts/pin/ (the thesis spec on fewer states, block, team, an agents round
# robin, an SPRT). One worker, so the workers table is the same each time.
# The digest lists each experiment's id, every shard's checksum, and a hash
# of every report and classifier file with its timings (fit and predict
# milliseconds) masked. Left out: the Parquet bytes (rows carry elapsed_us,
# a measurement; the shard checksums cover everything else).
set -euo pipefail
bin=${1:?usage: pin-behaviour.sh BIN OUT}
out=${2:?usage: pin-behaviour.sh BIN OUT}
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
specs=("$here"/jobs/specs/{smoke,double6-smoke,all-fives}.toml "$here"/scripts/pin/*.toml)
digest="$out/digest.txt"
: >"$digest"
for spec in "${specs[@]}"; do
    res="$out/results"
    "$bin" run "$spec" --out "$res" --workers 1 --threads 2 >/dev/null
done
for exp in "$res"/*/; do
    python3 - "$exp" >>"$digest" <<'PY'
import json, sys, pathlib
d = pathlib.Path(sys.argv[1])
m = json.loads((d / "_manifest.json").read_text())
print(f"== {m['id']} games={m['games']}")
for s in m["shards"]:
    print(f"shard {s['shard']} {s['first_game']}+{s['games']} rows={s['rows']} {s['checksum']}")
PY
    python3 "$here/scripts/pin/digest.py" "$exp" >>"$digest"
done
echo "digest: $digest ($(grep -c '^==' "$digest") experiments)"
