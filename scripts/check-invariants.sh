#!/usr/bin/env bash
# Checks the architecture invariants of ARCHITECTURE.md that a machine can check.
# `--sources-only` skips the dependency checks (cargo tree), for the test
# that plants a violation of each source check in a copy of the tree
# (scripts/check-invariants-test.sh). MUGGINS_CHECK_ROOT checks that tree
# instead of this one.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "${MUGGINS_CHECK_ROOT:-$repo}"
fail=0
sources_only=false
[ "${1:-}" = --sources-only ] && sources_only=true

# The pure crates (the thesis engine, the full game, the classifiers) depend
# on no async runtime, RPC, storage or columnar-format crate, no clock and
# no entropy.
pure="engine full classifier"
crates="engine full classifier jobs analysis proto coordinator worker cli"
# Each crate's dependencies, read once: all of them (name per line) and
# its direct ones (one cargo tree each, not one per name checked).
declare -A all_deps direct_deps
$sources_only || for c in $crates; do
    all_deps[$c]=$(cargo tree -p "$c" -e normal --prefix none --locked | awk '{print $1}' | sort -u)
    direct_deps[$c]=$(cargo tree -p "$c" -e normal --depth 1 --prefix none --locked | tail -n +2 | awk '{print $1}' | sort -u)
done
$sources_only || for c in $pure; do
    deps=${all_deps[$c]}
    for bad in tokio async-std mio hyper tonic prost axum tower rusqlite arrow parquet polars duckdb reqwest chrono time getrandom rand; do
        if grep -qx "$bad" <<<"$deps"; then
            echo "invariant broken: $c depends on $bad"
            fail=1
        fi
    done
done

# They do no I/O and read no clock, environment or process state.
# shellcheck disable=SC2046
if grep -nE 'std::(fs|net|io|time|env|process)|\b(env|fs|process)::|(e)?print(ln)?!|Instant|SystemTime|chrono::|getrandom' $(find engine/src full/src classifier/src -name '*.rs'); then
    echo "invariant broken: engine, full or classifier does I/O or reads the clock (lines above)"
    fail=1
fi

# Only jobs knows the Parquet format (arrow, parquet).
$sources_only || for c in $crates; do
    [ "$c" = jobs ] && continue
    for bad in arrow parquet arrow-array arrow-schema; do
        if grep -qx "$bad" <<<"${direct_deps[$c]}"; then
            echo "invariant broken: $c depends on $bad directly (only jobs may)"
            fail=1
        fi
    done
done

# Only proto, coordinator, worker and cli speak gRPC (tonic, prost).
$sources_only || for c in engine full classifier jobs analysis; do
    for bad in tonic prost tonic-prost; do
        if grep -qx "$bad" <<<"${all_deps[$c]}"; then
            echo "invariant broken: $c depends on $bad"
            fail=1
        fi
    done
done

# Wire types stay at the edges (in the coordinator only its service, its
# store-to-wire conversion and server setup; in the worker only its lease
# loop, the task's calls to the coordinator and the assignment it converts;
# the web view reads the store, never the wire), store rows become proto
# messages only in the coordinator's wire.rs and the worker's
# assignment.rs, and no function is over 150 lines: checks/, which reads
# the code with a real parser (syn), so that a renamed import, a macro's
# tokens or a brace in a string cannot hide a violation.
if ! cargo run --quiet --locked --manifest-path "$repo/Cargo.toml" -p checks -- . >"${TMPDIR:-/tmp}/muggins-checks.$$" 2>&1; then
    cat "${TMPDIR:-/tmp}/muggins-checks.$$"
    echo "invariant broken: proto:: types beyond the coordinator's and worker's edges, a proto message built from rows outside wire.rs / assignment.rs, or a function over 150 lines (lines above)"
    fail=1
fi
rm -f "${TMPDIR:-/tmp}/muggins-checks.$$"

# Task and experiment states are enums bound as parameters: no SQL spells
# one, whether in a literal or in a format! that builds the statement.
if grep -nE "'(pending|leased|done|failed|running|succeeded|cancelled)'|'\{[a-z_]*\}'" coordinator/src/*.rs coordinator/src/store/*.rs; then
    echo "invariant broken: an SQL statement spells a task or experiment state (use TaskState / ExpState)"
    fail=1
fi

# Layout names are spelled only in jobs::layout (jobs/src/layout/): no other source spells a
# results file name, a temporary name, a partition or task-id format as a
# literal (messages that mention a name in prose are not literals of it).
# shellcheck disable=SC2046
if grep -nE '"(part-|model-|\.parquet|\.tmp|tmp|hands\.parquet|report\.md|report\.json|_manifest\.json|_SUCCESS|_workers\.json|_experiment\.json|\.muggins-results|-tiebreak|\.json)"|:05\}|with_extension\(|\}\.(parquet|json|md|csv|svg)"' \
    $(find */src -name '*.rs' -not -path 'jobs/src/layout/*' -not -path 'target/*'); then
    echo "invariant broken: a results name or format spelled outside jobs/src/layout/ (lines above)"
    fail=1
fi

# Randomness: every stream tag is spelled in engine/src/seed.rs (its one
# owner) and starts `mug`; nothing seeds from entropy or the clock; the only
# other seeding is the playout benchmark's (full/src/deal.rs, a timing, not a
# result).
if grep -rnE 'b"mug' --include=*.rs */src | grep -v '^engine/src/seed.rs:'; then
    echo "invariant broken: a stream tag spelled outside engine/src/seed.rs (lines above)"
    fail=1
fi
if grep -nE 'const [A-Z_0-9]+: &\[u8; 8\] = b"' engine/src/seed.rs | grep -v 'b"mug'; then
    echo "invariant broken: a stream tag that does not start mug (lines above)"
    fail=1
fi
if grep -rnE 'seed_from_u64|from_entropy|thread_rng|OsRng|from_os_rng|rand::rng\(' --include=*.rs */src | grep -v '^full/src/deal.rs:'; then
    echo "invariant broken: a random stream not keyed by engine::seed::keyed_rng (lines above)"
    fail=1
fi

# One engine type: an engine's name is spelled only by engine::PlayerEngine
# (engine/src/game/record.rs); the spec, the CLI, the Python package and
# the reports read it from there (a belief named dominai is the belief's;
# `net` is also the spec key of a model file, so it is not grepped).
if grep -rnE '"(mstar|expectimax|ismcts|dominai|external)"' --include=*.rs */src \
    | grep -vE '^engine/src/game/record\.rs:|^\S+:\s*//|^engine/src/worlds\.rs:[0-9]+:\s*Belief::Dominai'; then
    echo "invariant broken: an engine name spelled outside engine::PlayerEngine (lines above)"
    fail=1
fi

# ARCHITECTURE.md's codemap names every module: each file under a crate's
# src/ by its path from src/ (`spec/parse.rs`), a directory module by its
# directory (`spec/`); the crate roots (lib.rs, main.rs) by their crate.
# The name must be in its own crate's section (from its `### \`crate\``
# heading to the next heading of that level), not anywhere in the file.
missing=""
declare -A sections
for f in $(find */src -name '*.rs' -not -path 'target/*' | sort); do
    crate=${f%%/*}
    rel=${f#*/src/}
    case "$rel" in
        lib.rs | main.rs) continue ;;
        */mod.rs) name="${rel%mod.rs}" ;;
        *) name="$rel" ;;
    esac
    [[ -v "sections[$crate]" ]] ||
        sections[$crate]=$(awk -v h="### \`$crate" 'index($0, h) == 1 { on = 1; print; next } /^(#|##|###) / { on = 0 } on' ARCHITECTURE.md)
    grep -qF "\`$name" <<<"${sections[$crate]}" || missing="$missing $f"
done
if [ -n "$missing" ]; then
    echo "invariant broken: ARCHITECTURE.md's codemap does not name:$missing"
    fail=1
fi

# The house rules (scripts/check-structure.py): no module import cycle, no
# file over 600 lines, no too_many_arguments allowance.
if ! python3 scripts/check-structure.py; then
    fail=1
fi

# No lint group switched off, no clippy threshold raised to let a long or
# complex function through (proto's generated code is the one exception).
# shellcheck disable=SC2046
if grep -nE 'allow\(clippy::(complexity|cognitive_complexity|too_many_lines|all|pedantic)' $(find */src */tests -name '*.rs' -not -path 'target/*' -not -path 'proto/src/lib.rs' 2>/dev/null) \
    || find . -maxdepth 2 -not -path './target/*' \( -name clippy.toml -o -name .clippy.toml \) | grep .; then
    echo "invariant broken: a clippy group allowed or a clippy.toml threshold (lines above)"
    fail=1
fi

if [ "$fail" -ne 0 ]; then
    exit 1
fi
echo "engine, full, classifier: pure (no I/O, no clock, no runtime/RPC/columnar dependencies)"
echo "only jobs uses arrow/parquet; only proto, coordinator, worker and cli use tonic/prost; proto:: only at the edges; no state literal in SQL"
echo "results names only in jobs::layout; proto messages from rows only in wire.rs / assignment.rs"
