#!/usr/bin/env bash
# Validates the deployment files offline: Kubernetes manifests against the
# Kubernetes schemas (kubernetes-validate, strict), the KEDA object's shape,
# and the shell scripts' syntax.
set -euo pipefail
cd "$(dirname "$0")/.."
k=deploy/kubernetes
kubernetes-validate --strict --quiet "$k"/namespace.yaml "$k"/results-pvc.yaml "$k"/service.yaml "$k"/coordinator.yaml "$k"/worker.yaml
python3 - <<'PY'
import yaml
k = yaml.safe_load(open("deploy/kubernetes/kustomization.yaml"))
listed = set(k["resources"])
want = {"namespace.yaml", "results-pvc.yaml", "service.yaml", "coordinator.yaml", "worker.yaml"}
assert want <= listed, f"kustomization lists {listed}, expected {want}"
so = yaml.safe_load(open("deploy/kubernetes/keda/scaledobject.yaml"))
assert so["kind"] == "ScaledObject" and so["spec"]["scaleTargetRef"]["name"] == "muggins-worker"
assert "muggins_tasks" in so["spec"]["triggers"][0]["metadata"]["query"]
print("kustomization and KEDA ScaledObject: ok")
PY
bash -n deploy/slurm/muggins-workers.sbatch deploy/slurm/run-coordinator.sh
echo "deployment files: valid"
