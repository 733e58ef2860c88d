#!/usr/bin/env bash
# Checks the architecture invariants of ARCHITECTURE.md that a machine can check.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0

# The pure crates (the thesis engine, the full game, the classifiers) depend
# on no async runtime, RPC, storage or columnar-format crate.
pure="engine full classifier"
for c in $pure; do
    deps=$(cargo tree -p "$c" -e normal --prefix none --locked | awk '{print $1}' | sort -u)
    for bad in tokio async-std mio hyper tonic prost axum tower rusqlite arrow parquet polars duckdb reqwest; do
        if grep -qx "$bad" <<<"$deps"; then
            echo "invariant broken: $c depends on $bad"
            fail=1
        fi
    done
done

# They do no I/O and read no clock, environment or process state.
# shellcheck disable=SC2046
if grep -nE 'std::(fs|net|io|time|env|process)|(e)?print(ln)?!|Instant|SystemTime' $(find engine/src full/src classifier/src -name '*.rs'); then
    echo "invariant broken: engine, full or classifier does I/O or reads the clock (lines above)"
    fail=1
fi

# Direct dependencies of each workspace crate (name per line).
direct() {
    cargo tree -p "$1" -e normal --depth 1 --prefix none --locked | tail -n +2 | awk '{print $1}' | sort -u
}
crates="engine full classifier jobs analysis proto coordinator worker cli"

# Only jobs knows the Parquet format (arrow, parquet).
for c in $crates; do
    [ "$c" = jobs ] && continue
    for bad in arrow parquet arrow-array arrow-schema; do
        if grep -qx "$bad" <<<"$(direct "$c")"; then
            echo "invariant broken: $c depends on $bad directly (only jobs may)"
            fail=1
        fi
    done
done

# Only proto, coordinator, worker and cli speak gRPC (tonic, prost).
for c in engine full classifier jobs analysis; do
    for bad in tonic prost tonic-prost; do
        if grep -qx "$bad" <<<"$(cargo tree -p "$c" -e normal --prefix none --locked | awk '{print $1}' | sort -u)"; then
            echo "invariant broken: $c depends on $bad"
            fail=1
        fi
    done
done

# Wire types stay at the edges: in the coordinator only its service, its
# store-to-wire conversion and server setup; in the worker only its lease
# loop, the task's calls to the coordinator and the assignment it converts.
inner=$(
    find engine/src full/src classifier/src jobs/src analysis/src coordinator/src/store -name '*.rs'
    ls coordinator/src/*.rs | grep -vE '/(service|wire|lib)\.rs$'
    ls worker/src/*.rs | grep -vE '/(assignment|task|lib)\.rs$'
)
# shellcheck disable=SC2086
if grep -nE '\bproto::' $inner; then
    echo "invariant broken: proto:: types beyond the coordinator's and worker's edges (lines above)"
    fail=1
fi

# Task and experiment states are enums bound as parameters: no SQL spells one.
if grep -nE "'(pending|leased|done|failed|running|succeeded|cancelled)'" coordinator/src/*.rs coordinator/src/store/*.rs; then
    echo "invariant broken: an SQL statement spells a task or experiment state (use TaskState / ExpState)"
    fail=1
fi

# Layout names are spelled only in jobs::layout: no other source spells a
# results file name, a temporary name, a partition or task-id format as a
# literal (messages that mention a name in prose are not literals of it).
# shellcheck disable=SC2046
if grep -nE '"(part-|model-|\.parquet|\.tmp|tmp|hands\.parquet|report\.md|report\.json|_manifest\.json|_SUCCESS|_workers\.json|_experiment\.json|\.muggins-results|-tiebreak|\.json)"|:05\}|with_extension\(' \
    $(find */src -name '*.rs' -not -path 'jobs/src/layout.rs' -not -path 'target/*'); then
    echo "invariant broken: a results name or format spelled outside jobs/src/layout.rs (lines above)"
    fail=1
fi

# Store rows become proto messages in one place per edge: the coordinator's
# wire.rs and the worker's assignment.rs build the messages that carry them
# (Experiment, Stage, Task, Chunk); the services build only requests and
# responses around them.
# shellcheck disable=SC2046
if grep -nE '\b(proto::)?(Experiment|Stage|Task|Chunk)\s*\{' \
    $(ls coordinator/src/*.rs coordinator/src/store/*.rs worker/src/*.rs | grep -vE '^(coordinator/src/wire|worker/src/assignment)\.rs$') \
    | grep -vE '^\S+:\s*//|fn |impl |struct |enum '; then
    echo "invariant broken: a proto message built from rows outside wire.rs / assignment.rs (lines above)"
    fail=1
fi

# Randomness: every stream tag is spelled in engine/src/seed.rs (its one
# owner); nothing seeds from entropy or the clock; the only other seeding is
# the playout benchmark's (full/src/deal.rs, a timing, not a result).
if grep -rnE 'b"mug' --include=*.rs */src | grep -v '^engine/src/seed.rs:'; then
    echo "invariant broken: a stream tag spelled outside engine/src/seed.rs (lines above)"
    fail=1
fi
if grep -rnE 'seed_from_u64|from_entropy|thread_rng|OsRng|from_os_rng|rand::rng\(' --include=*.rs */src | grep -v '^full/src/deal.rs:'; then
    echo "invariant broken: a random stream not keyed by engine::seed::keyed_rng (lines above)"
    fail=1
fi

# ARCHITECTURE.md's codemap names every module: each file under a crate's
# src/ by its path from src/ (`spec/parse.rs`), a directory module by its
# directory (`spec/`); the crate roots (lib.rs, main.rs) by their crate.
missing=""
for f in $(find */src -name '*.rs' -not -path 'target/*' | sort); do
    rel=${f#*/src/}
    case "$rel" in
        lib.rs | main.rs) continue ;;
        */mod.rs) name="${rel%mod.rs}" ;;
        *) name="$rel" ;;
    esac
    grep -qF "\`$name" ARCHITECTURE.md || missing="$missing $f"
done
if [ -n "$missing" ]; then
    echo "invariant broken: ARCHITECTURE.md's codemap does not name:$missing"
    fail=1
fi

# The house rules (scripts/check-structure.py): no module import cycle, no
# file over 600 lines, no function over 150, no too_many_arguments allowance.
if ! python3 scripts/check-structure.py; then
    fail=1
fi

if [ "$fail" -ne 0 ]; then
    exit 1
fi
echo "engine, full, classifier: pure (no I/O, no clock, no runtime/RPC/columnar dependencies)"
echo "only jobs uses arrow/parquet; only proto, coordinator, worker and cli use tonic/prost; proto:: only at the edges; no state literal in SQL"
echo "results names only in jobs::layout; proto messages from rows only in wire.rs / assignment.rs"
