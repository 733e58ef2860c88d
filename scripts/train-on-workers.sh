#!/usr/bin/env bash
# Times a training spec on a coordinator's worker processes beside
# `muggins run` of the same spec, and checks both made the same best
# network (docs/train.md, "On a cluster"):
#   scripts/train-on-workers.sh jobs/specs/train-block-smoke.toml [WORKERS] [THREADS_EACH]
# WORKERS (default 2) workers of THREADS_EACH threads (default 1) on this
# machine, over loopback; `muggins run` takes WORKERS x THREADS_EACH threads.
# CHECK_FRACTION sets the coordinator's --check-fraction (its default: 1%).
set -euo pipefail
spec=${1:?usage: scripts/train-on-workers.sh SPEC [WORKERS] [THREADS_EACH]}
workers=${2:-2}
each=${3:-1}
bin=${MUGGINS_BIN:-target/release/muggins}
[ -x "$bin" ] || { echo "no $bin: cargo build --release --bin muggins (or set MUGGINS_BIN)" >&2; exit 2; }
dir=$(mktemp -d)
coordinator=
cleanup() {
    [ -n "$coordinator" ] && kill "$coordinator" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
name=$(sed -n 's/^name *= *"\(.*\)".*/\1/p' "$spec" | head -1)

t0=$(date +%s.%N)
"$bin" run "$spec" --out "$dir/one" --threads $((workers * each)) --no-web 2>"$dir/one.log"
t1=$(date +%s.%N)

"$bin" coordinator --listen "127.0.0.1:$port" --state "$dir/state.sqlite" --results "$dir/results" \
    ${CHECK_FRACTION:+--check-fraction "$CHECK_FRACTION"} >"$dir/coordinator.log" 2>&1 &
coordinator=$!
for _ in $(seq 100); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done
t2=$(date +%s.%N)
id=$("$bin" submit --coordinator "http://127.0.0.1:$port" "$spec" 2>/dev/null)
pids=()
for k in $(seq "$workers"); do
    "$bin" worker --coordinator "http://127.0.0.1:$port" --results "$dir/results" --threads "$each" \
        --exit-when-done >"$dir/worker-$k.log" 2>&1 &
    pids+=($!)
done
wait "${pids[@]}"
t3=$(date +%s.%N)
"$bin" status --coordinator "http://127.0.0.1:$port" "$id"

one=$(sha256sum "$dir/one/$name/best.safetensors" | cut -c1-64)
many=$(sha256sum "$dir/results/$name/best.safetensors" | cut -c1-64)
printf 'muggins run, %d threads: %.2f s\n' $((workers * each)) "$(echo "$t1 - $t0" | bc)"
printf '%d workers of %d threads: %.2f s (from the submission)\n' "$workers" "$each" "$(echo "$t3 - $t2" | bc)"
echo "best network: $one (muggins run), $many (workers)"
[ "$one" = "$many" ] || { echo "the networks differ" >&2; exit 1; }
