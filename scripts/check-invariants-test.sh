#!/usr/bin/env bash
# Each source check of scripts/check-invariants.sh fails on a planted
# violation: a copy of the tree's sources passes, then each violation is
# planted in a fresh copy and the check must fail naming it. (The
# dependency checks read `cargo tree`; they are not planted here.) The
# cases run side by side, as many at once as there are cores, each in a
# copy of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
# On an interrupt or a failure, the cases still running stop before their
# copies go.
trap 'kill $(jobs -p) 2>/dev/null || true; wait; rm -rf "$work"' EXIT

# fresh DIR: a copy of the tree's sources in DIR.
fresh() {
    local src m
    rm -rf "$1"
    mkdir -p "$1"
    for src in */src */tests; do
        [ -d "$src" ] || continue
        mkdir -p "$1/$(dirname "$src")"
        cp -r "$src" "$1/$src"
    done
    for m in Cargo.toml */Cargo.toml; do
        mkdir -p "$1/$(dirname "$m")"
        cp "$m" "$1/$m"
    done
    cp -r scripts ARCHITECTURE.md "$1/"
}

# check DIR: the source checks on DIR, their output in DIR.out.
check() {
    MUGGINS_CHECK_ROOT="$1" bash "$root/scripts/check-invariants.sh" --sources-only >"$1.out" 2>&1
}

# The build the checks run (`cargo run -p checks`) made once, before the
# cases run it at once.
cargo build --quiet --locked -p checks

unchanged() {
    fresh "$1"
    if ! check "$1"; then
        cat "$1.out"
        echo "check-invariants-test: the unchanged copy fails"
        return 1
    fi
}

# plant NAME FILE LINE EXPECTED DIR: append LINE to FILE in a fresh copy;
# the check must fail and print EXPECTED.
plant() {
    fresh "$5"
    printf '%s\n' "$3" >>"$5/$2"
    if check "$5"; then
        echo "check-invariants-test: not caught: $1 ($2: $3)"
        return 1
    fi
    if ! grep -qF "$4" "$5.out"; then
        cat "$5.out"
        echo "check-invariants-test: $1 failed without saying \"$4\""
        return 1
    fi
}

# A new file named only in another crate's section of the codemap.
other_section() {
    fresh "$1"
    echo 'pub fn f() {}' >"$1/full/src/planted_file.rs"
    echo 'The cli has `planted_file.rs` too.' >>"$1/ARCHITECTURE.md"
    if check "$1" || ! grep -qF "does not name: full/src/planted_file.rs" "$1.out"; then
        echo "check-invariants-test: a file named only in another crate's section was not caught"
        return 1
    fi
}

# A clippy.toml threshold.
clippy_toml() {
    fresh "$1"
    echo 'too-many-lines-threshold = 1000' >"$1/clippy.toml"
    if check "$1" || ! grep -qF "clippy.toml" "$1.out"; then
        echo "check-invariants-test: a clippy.toml was not caught"
        return 1
    fi
}

# A file over 600 lines, and a function over 150 (scripts/check-structure.py).
long_file() {
    fresh "$1"
    {
        echo 'pub fn long() {'
        for i in $(seq 1 160); do echo "    let _x$i = $i;"; done
        echo '}'
        for i in $(seq 1 460); do echo "// line $i"; done
    } >>"$1/jobs/src/sprt.rs"
    if check "$1" || ! grep -qF "(over 600)" "$1.out" || ! grep -qF "(over 150)" "$1.out"; then
        cat "$1.out"
        echo "check-invariants-test: a long file or function was not caught"
        return 1
    fi
}

# case CMD ARGS...: runs CMD ARGS... DIR in the background (DIR a copy of
# its own), at most as many at once as there are cores; DIR.ok marks a pass.
cases=0
at_once=$(nproc 2>/dev/null || echo 2)
case_() {
    while [ "$(jobs -rp | wc -l)" -ge "$at_once" ]; do wait -n || true; done
    cases=$((cases + 1))
    local dir="$work/case$cases"
    ("$@" "$dir" && touch "$dir.ok") >"$dir.log" 2>&1 &
}

case_ unchanged
case_ plant "environment in a pure crate" full/src/deal.rs 'fn _x() -> Option<String> { std::env::var("X").ok() }' "does I/O"
case_ plant "env:: after a use" full/src/deal.rs 'fn _y() -> bool { env::args().count() > 1 }' "does I/O"
case_ plant "chrono in a pure crate" engine/src/seed.rs 'fn _t() { let _ = chrono::Utc::now(); }' "does I/O"
case_ plant "getrandom in a pure crate" classifier/src/lib.rs 'fn _r(b: &mut [u8]) { getrandom::fill(b).ok(); }' "does I/O"
case_ plant "proto:: in the web view" coordinator/src/web/pages.rs 'fn _p(_t: proto::Task) {}' "proto:: types beyond"
case_ plant "proto:: in a pure crate" jobs/src/lib.rs 'fn _q(_t: proto::Chunk) {}' "proto:: types beyond"
case_ plant "a state literal in SQL" coordinator/src/store/pick.rs 'const _S: &str = "UPDATE tasks SET state = '"'"'leased'"'"'";' "spells a task or experiment state"
case_ plant "a state in a format! SQL" coordinator/src/sweeper.rs 'fn _s(s: &str) -> String { format!("UPDATE tasks SET state = '"'"'{s}'"'"'") }' "spells a task or experiment state"
case_ plant "a results name by format!" analysis/src/lib.rs 'pub fn _n(x: &str) -> String { format!("{x}.parquet") }' "results name or format"
case_ plant "a report name spelled" cli/src/main.rs 'const _R: &str = "report.md";' "results name or format"
case_ plant "a proto message built from rows" coordinator/src/service.rs $'fn _m() -> proto::Task {\n    proto::Task { id: 1, ..Default::default() }\n}' "proto message built from rows"
case_ plant "a proto default then field writes" coordinator/src/service.rs $'fn _d() {\n    let mut t = proto::Task::default();\n    t.id = 3;\n}' "proto message built from rows"
case_ plant "a stream tag outside seed.rs" jobs/src/lib.rs 'pub const _TAG: &[u8; 8] = b"mugplnt1";' "stream tag spelled outside"
case_ plant "a stream tag not starting mug" engine/src/seed.rs 'pub const PLANTED: &[u8; 8] = b"xyzplnt1";' "does not start mug"
case_ plant "an entropy seed" jobs/src/lib.rs 'fn _e() { let _ = rand::rng(); }' "not keyed by engine::seed"
case_ plant "an engine name spelled twice" python/src/bot.rs 'const _E: &str = "ismcts";' "engine name spelled outside"
case_ plant "a clippy group allowed" jobs/src/lib.rs '#[allow(clippy::complexity)] fn _c() {}' "clippy group allowed"
case_ plant "a module the codemap does not name" full/src/planted_module.rs 'pub fn f() {}' "codemap does not name"

case_ other_section
case_ clippy_toml
case_ long_file
wait

planted=0
failed=0
for n in $(seq 1 "$cases"); do
    if [ -e "$work/case$n.ok" ]; then
        planted=$((planted + 1))
    else
        cat "$work/case$n.log"
        failed=1
    fi
done
[ "$failed" = 0 ] || exit 1
# The unchanged copy is the first case, not a planted violation.
echo "check-invariants-test: $((planted - 1)) planted violations, each caught"
