#!/usr/bin/env bash
# Each source check of scripts/check-invariants.sh fails on a planted
# violation: a copy of the tree's sources passes, then each violation is
# planted in a fresh copy and the check must fail naming it. (The
# dependency checks read `cargo tree`; they are not planted here.)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fresh() {
    rm -rf "$work/tree"
    mkdir -p "$work/tree"
    for d in */src */tests; do
        [ -d "$d" ] || continue
        mkdir -p "$work/tree/$(dirname "$d")"
        cp -r "$d" "$work/tree/$d"
    done
    for m in Cargo.toml */Cargo.toml; do
        mkdir -p "$work/tree/$(dirname "$m")"
        cp "$m" "$work/tree/$m"
    done
    cp -r scripts ARCHITECTURE.md "$work/tree/"
}

check() {
    MUGGINS_CHECK_ROOT="$work/tree" bash "$root/scripts/check-invariants.sh" --sources-only >"$work/out" 2>&1
}

fresh
if ! check; then
    cat "$work/out"
    echo "check-invariants-test: the unchanged copy fails"
    exit 1
fi

planted=0
# plant NAME FILE LINE EXPECTED: append LINE to FILE in a fresh copy; the
# check must fail and print EXPECTED.
plant() {
    fresh
    printf '%s\n' "$3" >>"$work/tree/$2"
    if check; then
        echo "check-invariants-test: not caught: $1 ($2: $3)"
        exit 1
    fi
    if ! grep -qF "$4" "$work/out"; then
        cat "$work/out"
        echo "check-invariants-test: $1 failed without saying \"$4\""
        exit 1
    fi
    planted=$((planted + 1))
}

plant "environment in a pure crate" full/src/deal.rs 'fn _x() -> Option<String> { std::env::var("X").ok() }' "does I/O"
plant "env:: after a use" full/src/deal.rs 'fn _y() -> bool { env::args().count() > 1 }' "does I/O"
plant "chrono in a pure crate" engine/src/seed.rs 'fn _t() { let _ = chrono::Utc::now(); }' "does I/O"
plant "getrandom in a pure crate" classifier/src/lib.rs 'fn _r(b: &mut [u8]) { getrandom::fill(b).ok(); }' "does I/O"
plant "proto:: in the web view" coordinator/src/web/pages.rs 'fn _p(_t: proto::Task) {}' "proto:: types beyond"
plant "proto:: in a pure crate" jobs/src/lib.rs 'fn _q(_t: proto::Chunk) {}' "proto:: types beyond"
plant "a state literal in SQL" coordinator/src/store/pick.rs 'const _S: &str = "UPDATE tasks SET state = '"'"'leased'"'"'";' "spells a task or experiment state"
plant "a state in a format! SQL" coordinator/src/sweeper.rs 'fn _s(s: &str) -> String { format!("UPDATE tasks SET state = '"'"'{s}'"'"'") }' "spells a task or experiment state"
plant "a results name by format!" analysis/src/lib.rs 'pub fn _n(x: &str) -> String { format!("{x}.parquet") }' "results name or format"
plant "a report name spelled" cli/src/main.rs 'const _R: &str = "report.md";' "results name or format"
plant "a proto message built from rows" coordinator/src/service.rs $'fn _m() -> proto::Task {\n    proto::Task { id: 1, ..Default::default() }\n}' "proto message built from rows"
plant "a proto default then field writes" coordinator/src/service.rs $'fn _d() {\n    let mut t = proto::Task::default();\n    t.id = 3;\n}' "proto message built from rows"
plant "a stream tag outside seed.rs" jobs/src/lib.rs 'pub const _TAG: &[u8; 8] = b"mugplnt1";' "stream tag spelled outside"
plant "a stream tag not starting mug" engine/src/seed.rs 'pub const PLANTED: &[u8; 8] = b"xyzplnt1";' "does not start mug"
plant "an entropy seed" jobs/src/lib.rs 'fn _e() { let _ = rand::rng(); }' "not keyed by engine::seed"
plant "an engine name spelled twice" python/src/bot.rs 'const _E: &str = "ismcts";' "engine name spelled outside"
plant "a clippy group allowed" jobs/src/lib.rs '#[allow(clippy::complexity)] fn _c() {}' "clippy group allowed"
plant "a module the codemap does not name" full/src/planted_module.rs 'pub fn f() {}' "codemap does not name"

# A new file named only in another crate's section of the codemap.
fresh
echo 'pub fn f() {}' >"$work/tree/full/src/planted_file.rs"
echo 'The cli has `planted_file.rs` too.' >>"$work/tree/ARCHITECTURE.md"
if check || ! grep -qF "does not name: full/src/planted_file.rs" "$work/out"; then
    echo "check-invariants-test: a file named only in another crate's section was not caught"
    exit 1
fi
planted=$((planted + 1))

# A clippy.toml threshold.
fresh
echo 'too-many-lines-threshold = 1000' >"$work/tree/clippy.toml"
if check || ! grep -qF "clippy.toml" "$work/out"; then
    echo "check-invariants-test: a clippy.toml was not caught"
    exit 1
fi
planted=$((planted + 1))

# A file over 600 lines, and a function over 150 (scripts/check-structure.py).
fresh
{
    echo 'pub fn long() {'
    for i in $(seq 1 160); do echo "    let _x$i = $i;"; done
    echo '}'
    for i in $(seq 1 460); do echo "// line $i"; done
} >>"$work/tree/jobs/src/sprt.rs"
if check || ! grep -qF "(over 600)" "$work/out" || ! grep -qF "(over 150)" "$work/out"; then
    cat "$work/out"
    echo "check-invariants-test: a long file or function was not caught"
    exit 1
fi
planted=$((planted + 1))

echo "check-invariants-test: $planted planted violations, each caught"
