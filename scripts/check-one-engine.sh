#!/usr/bin/env bash
# Issue 43's test of the one engine type: in a copy of the tree, add a
# dummy engine to engine::PlayerEngine (a variant and its name, nothing
# else) and let the compiler list every file that must change before it
# builds. The only one is full/src/agent.rs's `route`, where an engine is
# given the search that runs it; the spec, `muggins play`, the Python
# package, the rows and the reports take the new name with no edit (the
# tests that iterate PlayerEngine::SEARCHES and ALL then cover it). The
# Python package builds on the same crates and spells no engine name
# (scripts/check-invariants.sh).
#   bash scripts/check-one-engine.sh      # seconds after clippy, minutes cold: a cargo check
# It checks in the workspace's own target directory: the copy's crates live
# at other paths, so their artifacts have hashes of their own beside the
# workspace's, and the dependencies clippy already checked are reused (a
# target directory of its own cost CI 261 s of checking them again).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tree"
(cd "$here" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/tree")
cd "$work/tree"
record=engine/src/game/record.rs
python3 - "$record" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
anchor = "    /// An agent outside muggins on the named agent's side (docs/agents.md):"
assert anchor in s, "PlayerEngine's External variant moved: update this script"
s = s.replace(anchor, "    /// A planted engine.\n    Dummy,\n" + anchor, 1)
arm = '            PlayerEngine::External => "external",'
assert arm in s, "PlayerEngine::name moved: update this script"
s = s.replace(arm, '            PlayerEngine::Dummy => "dummy",\n' + arm, 1)
open(p, "w").write(s)
PY
export CARGO_TARGET_DIR="${MUGGINS_CHECK_TARGET:-$here/target}"
cargo check --workspace --all-targets --message-format short --locked 2>"$work/errors" || true
touched=$(grep -E '^[a-z_/]+\.rs:[0-9]+:[0-9]+: error' "$work/errors" | cut -d: -f1 | sort -u || true)
echo "check-one-engine: files the compiler asks to change for a new engine:" $touched
if [ "$touched" != "full/src/agent.rs" ]; then
    echo "check-one-engine: expected only full/src/agent.rs (its route)"
    grep -E 'error' "$work/errors" | head -20
    exit 1
fi
echo "check-one-engine: one variant and its name in engine/src/game/record.rs, its search in full/src/agent.rs"
