#!/usr/bin/env bash
# The whole test suite: formatting, lints, architecture invariants, tests.
# CI runs exactly this (see .ci/run); so can a developer.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== architecture invariants"
bash scripts/check-invariants.sh

echo "== cargo test"
log=$(mktemp)
cargo test --workspace --locked 2>&1 | tee "$log"
# One closing line for the whole suite, summed over the test binaries.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
     END { printf "all tests: %d passed, %d failed\n", p, f }' "$log"
rm -f "$log"
