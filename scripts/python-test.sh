#!/usr/bin/env bash
# The Python package (python/, docs/python.md): `pip install ./python` in a
# fresh virtual environment (with the system's site packages, where
# scripts/ci.sh installed OpenSpiel), then its pytest suite. Prints pytest's
# summary; scripts/ci.sh counts its passes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv --system-site-packages "$venv"
CARGO_TARGET_DIR="$root/target/python" "$venv/bin/pip" install --quiet --disable-pip-version-check ./python pytest
# From outside the source tree, so `import muggins` is the installed package.
cd "$venv"
"$venv/bin/python" -m pytest -q --import-mode=importlib -p no:cacheprovider "$root/python/tests"
"$venv/bin/python" "$root/scripts/python-bench.py"
