#!/usr/bin/env bash
# Checks the architecture invariants of ARCHITECTURE.md that a machine can check.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0

# The search core depends on no async runtime, RPC, storage or columnar-format crate.
deps=$(cargo tree -p engine -e normal --prefix none --locked | awk '{print $1}' | sort -u)
for bad in tokio async-std mio hyper tonic prost axum tower rusqlite arrow parquet polars duckdb reqwest; do
    if grep -qx "$bad" <<<"$deps"; then
        echo "invariant broken: engine depends on $bad"
        fail=1
    fi
done

# The search core does no I/O and reads no clock, environment or process state.
if grep -nE 'std::(fs|net|io|time|env|process)|(e)?print(ln)?!|Instant|SystemTime' engine/src/*.rs; then
    echo "invariant broken: engine/src does I/O or reads the clock (lines above)"
    fail=1
fi

if [ "$fail" -ne 0 ]; then
    exit 1
fi
echo "engine: pure (no I/O, no clock, no runtime/RPC/columnar dependencies)"
