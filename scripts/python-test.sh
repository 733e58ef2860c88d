#!/usr/bin/env bash
# The Python package (python/, docs/python.md): `pip install ./python` in a
# fresh virtual environment (with the system's site packages, where
# scripts/ci.sh installed OpenSpiel), then its pytest suite. Prints pytest's
# summary; scripts/ci.sh counts its passes. Then the docs' example, briefly,
# and the speed tables (scripts/python-bench.py, scripts/rl-bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv --system-site-packages "$venv"
# The agent test runs `muggins run` (python/tests/test_agent_view.py):
# MUGGINS_BIN's, else a debug build's (scripts/ci.sh passes the one its
# cargo test built).
if [ -z "${MUGGINS_BIN:-}" ]; then
    cargo build --quiet --locked --bin muggins
    export MUGGINS_BIN="$root/target/debug/muggins"
fi
CARGO_TARGET_DIR="$root/target/python" "$venv/bin/pip" install --quiet --disable-pip-version-check ./python pytest
# From outside the source tree, so `import muggins` is the installed package.
cd "$venv"
"$venv/bin/python" -m pytest -q --import-mode=importlib -p no:cacheprovider "$root/python/tests"
# The docs' example, on two hands (docs/python.md gives its 100-hand result).
"$venv/bin/python" "$root/python/examples/ismcts_vs_mstar.py" --hands 2 --simulations 100
"$venv/bin/python" "$root/scripts/python-bench.py"
# The reinforcement-learning environments' speed (docs/rl.md gives longer runs).
"$venv/bin/python" "$root/scripts/rl-bench.py" --seconds 1 --memory-steps 5000000
