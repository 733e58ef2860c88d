#!/usr/bin/env bash
# The whole test suite: formatting, lints, architecture invariants, tests.
# CI runs exactly this (see .ci/run); so can a developer.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each section opens with the seconds since the suite began, so a slow one shows.
section() { printf '== [%5d s] %s\n' "$SECONDS" "$*"; }

section "cargo fmt --check"
cargo fmt --all -- --check

section "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

section "the Python package's crate (python/, outside the workspace): fmt and clippy"
cargo fmt --manifest-path python/Cargo.toml -- --check
CARGO_TARGET_DIR=target/python cargo clippy --quiet --manifest-path python/Cargo.toml --locked -- -D warnings

section "the cargo-fuzz target builds (run it with: cargo +nightly fuzz run spec)"
# In the workspace's target directory: the dependencies clippy checked
# are reused (fuzz/target of its own cost CI 148 s of checking them again).
CARGO_TARGET_DIR="$PWD/target" cargo check --quiet --locked --manifest-path fuzz/Cargo.toml

section "architecture invariants"
bash scripts/check-invariants.sh
bash scripts/check-invariants-test.sh
bash scripts/check-one-engine.sh

section "Python tools for the tests (DuckDB, pyarrow, Polars, scikit-learn, scipy, grpcio-reflection, OpenSpiel, JAX and Optax for the PPO example)"
python3 -m pip install --quiet --disable-pip-version-check duckdb pyarrow polars scikit-learn scipy kubernetes-validate pyyaml grpcio grpcio-reflection open_spiel jax optax safetensors

section "Node.js for the misbehaving agents written in JavaScript (cli/tests/agents/attacker.js)"
if ! command -v node >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs) >/dev/null
    else
        echo "node is missing: sudo apt-get install nodejs"
        exit 1
    fi
fi

section "deployment files"
bash scripts/check-deploy.sh

section "cargo test"
log=$(mktemp)
cargo test --workspace --locked 2>&1 | tee "$log"

# The sections below run the muggins binary cargo test built for the
# integration tests (target/debug/muggins, the test profile's): a `cargo
# run` here would build every crate again with the dev profile and the
# features of a build without dev-dependencies (about 190 s on 2 cores).
muggins=target/debug/muggins
export MUGGINS_BIN="$PWD/$muggins"

section "the smoke spec, read back by DuckDB, pyarrow and Polars"
out=$(mktemp -d)
"$muggins" run jobs/specs/smoke.toml --out "$out" >/dev/null
python3 scripts/check-readers.py "$out/smoke"
rm -rf "$out"

section "the double-6 reference design on 20 deals (jobs/specs/double6-smoke.toml), read back"
out=$(mktemp -d)
"$muggins" run jobs/specs/double6-smoke.toml --out "$out" >/dev/null
python3 scripts/check-readers.py "$out/double6-smoke"
rm -rf "$out"

section "block and team against OpenSpiel: 10,000 random games of each, move for move"
python3 scripts/openspiel-check.py "$muggins" --games 10000
openspiel_ok=1

section "scripts/flamegraph.py folds perf script stacks (docs/search.md)"
python3 - <<'PY'
import subprocess
perf = """muggins 1 1.0: 1 cpu-clock:
\t  10 leaf+0x1 (/bin/m)
\t  11 search+0x2 (/bin/m)
\t  12 search+0x3 (/bin/m)
\t  13 decide+0x4 (/bin/m)
\t  14 main+0x5 (/bin/m)

muggins 1 1.1: 1 cpu-clock:
\t  20 probe+0x1 (/bin/m)
\t  21 search+0x2 (/bin/m)
\t  23 decide+0x4 (/bin/m)
\t  24 main+0x5 (/bin/m)

muggins 1 1.2: 1 cpu-clock:
\t  30 other+0x1 (/bin/m)
\t  34 main+0x5 (/bin/m)
"""
svg = subprocess.run(["python3", "scripts/flamegraph.py", "--root", "decide"], input=perf, text=True,
                     capture_output=True, check=True).stdout
for want in ["decide (2 samples, 100.0%)", "search (2 samples, 100.0%)", "leaf (1 samples, 50.0%)",
             "probe (1 samples, 50.0%)"]:
    assert want in svg, (want, svg)
assert "other" not in svg and "main" not in svg, svg
assert svg.count("<title>search ") == 1, "a direct recursion is one frame"
print("flamegraph.py: stacks folded from the root, recursion drawn once")
PY

section "the web view in a real browser: Debian's chromium through chromedriver (docs/web.md)"
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    if [[ "$(id -u)" == 0 ]]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >/dev/null
    else
        echo "chromium and chromedriver are missing: sudo apt-get install chromium chromium-driver"
        exit 1
    fi
fi
python3 scripts/web-test.py "$muggins" target/web-test
web_ok=1

section "the Python package: pip install ./python in a fresh venv, then its tests (docs/python.md)"
pylog=$(mktemp)
bash scripts/python-test.sh | tee "$pylog"
python_passed=$(grep -oE '[0-9]+ passed' "$pylog" | tail -1 | awk '{print $1}')
rm -f "$pylog"

if [[ "${MUGGINS_SLURM_TEST:-}" == 1 ]]; then
    section "a real single-node Slurm cluster runs the smoke spec (MUGGINS_SLURM_TEST=1)"
    bash scripts/slurm-test.sh "$muggins"
    slurm_ok=1
else
    section "Slurm test not run (set MUGGINS_SLURM_TEST=1, as .ci/run does; it needs root)"
    slurm_ok=0
fi

# One closing line for the whole suite: the test binaries plus the readers,
# OpenSpiel, the browser and (when run) Slurm checks.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
     END { printf "all tests: %d passed, %d failed\n", p + 1 + o + w + s + py, f }' o="$openspiel_ok" w="$web_ok" s="$slurm_ok" py="${python_passed:-0}" "$log"
rm -f "$log"
section "done"
