"""The PPO example learns (docs/rl.md): a one-minute training against
`random` on `muggins.VecEnv("block")` must beat `random` on 200 deals
played from both seats. A test that fails when learning breaks (the
environment's rewards, masks or observations, or the trainer's
advantages); it needs JAX and Optax (scripts/ci.sh installs them)."""
import csv
import os
import subprocess
import sys

import muggins

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "ppo_block.py")


def test_ppo_smoke_training_beats_random(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, EXAMPLE, "--stages", "random:1000000", "--eval-every", "1000000",
           "--eval-games", "200", "--seed", "1", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(out / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    first, last = rows[0], rows[-1]
    assert int(last["steps"]) >= 1_000_000
    # Untrained, the greedy network is about random's equal; trained, it wins
    # at least 70% of the deal pairs and more than 57% of the games.
    assert float(last["pairs_vs_random"]) >= 0.70, rows
    assert float(last["vs_random"]) >= 0.57, rows
    assert float(last["return_vs_random"]) > float(first["return_vs_random"]) + 2.0, rows
    # The model file plays as the "net" engine, as well as the run measured.
    net = muggins.Bot("net", model=str(out / "policy.safetensors"))
    assert "net (policy.safetensors" in net.name()
    assert (out / "curve.svg").read_text().startswith("<svg")
