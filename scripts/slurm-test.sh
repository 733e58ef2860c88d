#!/usr/bin/env bash
# Brings up a real single-node Slurm cluster on this machine (munge, slurmctld,
# slurmd from Debian's slurm-wlm), runs the smoke and double6-smoke specs with a muggins
# coordinator and a job array of workers submitted with
# deploy/slurm/muggins-workers.sbatch, checks the experiment finished with
# every row, and stops only the daemons it started. Needs root (apt, munge).
#
# Usage: scripts/slurm-test.sh [path/to/muggins]   (default: target/release/muggins)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=$(realpath "${1:-target/release/muggins}")
[[ -x "$bin" ]] || { echo "slurm-test: $bin is not built (cargo build --release --bin muggins)"; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "slurm-test: needs root"; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "== installing slurm-wlm and munge"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

work=$(mktemp -d /tmp/muggins-slurm.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
    set +e
    [[ -n "${coord_pid:-}" ]] && kill "$coord_pid" 2>/dev/null
    for f in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munge-run/munged.pid"; do
        [[ -f $f ]] && kill "$(cat "$f")" 2>/dev/null
    done
    sleep 1
    for f in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munge-run/munged.pid"; do
        [[ -f $f ]] && kill -9 "$(cat "$f")" 2>/dev/null
    done
}
trap cleanup EXIT

echo "== munge"
install -d -o munge -g munge -m 700 "$work/munge-etc" "$work/munge-lib" "$work/munge-log"
install -d -o munge -g munge -m 755 "$work/munge-run"
dd if=/dev/urandom of="$work/munge-etc/munge.key" bs=1024 count=1 status=none
chown munge:munge "$work/munge-etc/munge.key"
chmod 400 "$work/munge-etc/munge.key"
runuser -u munge -- munged --key-file="$work/munge-etc/munge.key" --socket="$work/munge-run/munge.socket" \
    --pid-file="$work/munge-run/munged.pid" --log-file="$work/munge-log/munged.log" --seed-file="$work/munge-lib/munged.seed"
for _ in $(seq 50); do [[ -S "$work/munge-run/munge.socket" ]] && break; sleep 0.1; done

echo "== slurm.conf"
host=$(hostname -s)
node=$(slurmd -C | head -1 | sed "s/NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
mkdir -p "$work/spool" "$work/state"
cat > "$work/slurm.conf" <<CONF
ClusterName=muggins-test
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$work/munge-run/munge.socket
CryptoType=crypto/munge
SlurmUser=root
SlurmctldPort=16817
SlurmdPort=16818
SlurmdSpoolDir=$work/spool
StateSaveLocation=$work/state
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
$node State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"

echo "== slurmctld and slurmd"
slurmctld
slurmd
for _ in $(seq 100); do
    state=$(sinfo -h -o %T 2>/dev/null | head -1 || true)
    [[ "$state" == "idle" ]] && break
    sleep 0.2
done
[[ "$state" == "idle" ]] || { echo "slurm-test: the node is not idle ($state)"; cat "$work"/slurm*.log; exit 1; }
sinfo

echo "== coordinator"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
results="$work/results"
mkdir -p "$results"
chmod 777 "$results"
"$bin" coordinator --listen "127.0.0.1:$port" --state "$work/state.sqlite" --results "$results" >"$work/coordinator.log" 2>&1 &
coord_pid=$!
for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
export MUGGINS_COORDINATOR="http://127.0.0.1:$port" MUGGINS_RESULTS="$results" MUGGINS_BIN="$bin"
id=$("$bin" submit jobs/specs/smoke.toml)
echo "submitted $id"
id6=$("$bin" submit jobs/specs/double6-smoke.toml)
echo "submitted $id6"

echo "== sbatch a job array of 2 workers"
cores=$(nproc)
job=$(sbatch --parsable --array=0-1 --cpus-per-task=1 --chdir="$work" deploy/slurm/muggins-workers.sbatch)
echo "job $job"
deadline=$((SECONDS + 600))
while squeue -h -j "$job" 2>/dev/null | grep -q .; do
    (( SECONDS < deadline )) || { echo "slurm-test: the job array did not finish"; exit 1; }
    sleep 1
done
cat "$work"/muggins-worker-*.out | tail -n 4 || true

echo "== result"
for pair in "$id:smoke" "$id6:double6-smoke"; do
    eid=${pair%%:*}
    dir=${pair##*:}
    "$bin" status "$eid" | tee "$work/status.txt"
    grep -q " succeeded " "$work/status.txt" || { echo "slurm-test: $eid did not succeed"; tail -20 "$work/coordinator.log"; exit 1; }
    test -f "$results/$dir/_SUCCESS"
    python3 scripts/check-readers.py "$results/$dir"
done
ran=$(ls "$work"/muggins-worker-*.out | wc -l)
echo "slurm-test: $ran array tasks ran on a real Slurm node; the smoke and double6-smoke specs completed"
