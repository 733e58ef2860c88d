#!/usr/bin/env bash
#
# Start the muggins coordinator on a login or service node that the compute
# nodes can reach over the network. Runs in the foreground; use tmux/screen,
# nohup or a systemd user unit to keep it running.

set -euo pipefail

usage() {
    cat <<USAGE
Usage: MUGGINS_RESULTS=DIR $(basename "$0") [-h|--help]

Starts: muggins coordinator --listen LISTEN --state STATE --results DIR

Environment:
  MUGGINS_RESULTS  (required) results directory on a filesystem shared with
                   all compute nodes, e.g. /shared/muggins/results
  MUGGINS_STATE    SQLite state file of the coordinator
                   (default: \${XDG_STATE_HOME:-\$HOME/.local/state}/muggins/state.sqlite).
                   Prefer a local disk: SQLite on NFS is unreliable.
  MUGGINS_LISTEN   listen address (default: 0.0.0.0:50051)
  MUGGINS_BIN      muggins binary (default: muggins on PATH)

Workers then use MUGGINS_COORDINATOR=http://$(hostname -f 2>/dev/null || hostname):PORT
USAGE
}

case "${1:-}" in
    -h|--help) usage; exit 0 ;;
    "") ;;
    *) usage >&2; exit 2 ;;
esac

if [[ -z "${MUGGINS_RESULTS:-}" ]]; then
    echo "run-coordinator.sh: error: MUGGINS_RESULTS is not set" >&2
    echo >&2
    usage >&2
    exit 2
fi

MUGGINS_BIN="${MUGGINS_BIN:-muggins}"
LISTEN="${MUGGINS_LISTEN:-0.0.0.0:50051}"
STATE="${MUGGINS_STATE:-${XDG_STATE_HOME:-$HOME/.local/state}/muggins/state.sqlite}"

if ! command -v "$MUGGINS_BIN" >/dev/null 2>&1; then
    echo "run-coordinator.sh: error: MUGGINS_BIN=$MUGGINS_BIN not found; put muggins on PATH or set MUGGINS_BIN" >&2
    exit 1
fi

mkdir -p "$(dirname "$STATE")" "$MUGGINS_RESULTS"

echo "muggins coordinator: listen $LISTEN, state $STATE, results $MUGGINS_RESULTS"
echo "workers: export MUGGINS_COORDINATOR=http://$(hostname -f 2>/dev/null || hostname):${LISTEN##*:}"

exec "$MUGGINS_BIN" coordinator \
    --listen "$LISTEN" \
    --state "$STATE" \
    --results "$MUGGINS_RESULTS"
