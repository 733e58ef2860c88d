"""scripts/partner-signal.py (docs/train.md): a function of its arguments;
the unweighted figure does not depend on the temperature, and weighting
the worlds by the other seats' plays under the network locates the
hidden tiles better than the worlds alone."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "partner-signal.py"


def run(*args):
    out = subprocess.run([sys.executable, str(SCRIPT), "--model", str(ROOT / "models" / "train-team.safetensors"),
                          "--games", "4", "--worlds", "60", *args],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    last = out.strip().splitlines()[-1]
    figures = dict(part.strip().split(" ") for part in last.split("): ")[1].split(", "))
    return {k: float(v) for k, v in figures.items()}


def test_the_partner_signal_is_repeatable_and_the_plays_inform():
    sharp = run("--temperature", "0.5")
    assert sharp == run("--temperature", "0.5")
    assert set(sharp) == {"constraints", "partner", "everyone"}
    assert run("--temperature", "1.0")["constraints"] == sharp["constraints"]
    # The plays carry information about the hands: weighting by them helps.
    assert sharp["everyone"] < sharp["constraints"]


def test_a_network_of_another_game_is_refused():
    out = subprocess.run([sys.executable, str(SCRIPT), "--model", str(ROOT / "models" / "train-block.safetensors")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode != 0 and "a team network is needed" in out.stderr
