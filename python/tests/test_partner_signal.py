"""scripts/partner-signal.py (docs/train.md): a function of its arguments;
the unweighted figure does not depend on the temperature, and weighting
the worlds by the other seats' plays under the network locates the
hidden tiles better than the worlds alone."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "partner-signal.py"


def run(*args, model="train-team.safetensors"):
    path = str(ROOT / "models" / model)
    out = subprocess.run([sys.executable, str(SCRIPT), "--model", path, "--games", "4", "--worlds", "60", *args],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    last = next(line for line in out.splitlines() if line.startswith(path + ":"))
    figures = dict(part.strip().split(" ") for part in last.split("): ")[1].split(", "))
    return {k: float(v) for k, v in figures.items()}


def test_the_partner_signal_is_repeatable_and_the_plays_inform():
    sharp = run("--temperature", "0.5")
    assert sharp == run("--temperature", "0.5")
    assert set(sharp) == {"constraints", "prior", "partner", "everyone"}
    mild = run("--temperature", "1.0")
    assert (mild["constraints"], mild["prior"]) == (sharp["constraints"], sharp["prior"])
    # The exact marginals score better than 60 worlds drawn from them.
    assert sharp["prior"] < sharp["constraints"]
    # The plays carry information about the hands: weighting by them helps.
    assert sharp["everyone"] < sharp["constraints"]


def test_a_network_of_another_game_is_refused():
    out = subprocess.run([sys.executable, str(SCRIPT), "--model", str(ROOT / "models" / "train-block.safetensors")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode != 0 and "a team network is needed" in out.stderr


def test_a_belief_head_over_the_prior_locates_the_tiles_better_than_the_prior():
    # models/train-team-belief-trunk.safetensors (docs/train.md, "A belief
    # head"): its head, and the worlds weighted by it, beat the constraints
    # belief's marginals and worlds on games it never saw.
    f = run(model="train-team-belief-trunk.safetensors")
    assert {"head", "head-worlds"} <= set(f)
    assert f["head"] < f["prior"] - 0.02 and f["head-worlds"] < f["constraints"] - 0.02, f
