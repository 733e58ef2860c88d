"""python/examples/ismcts_vs_mstar.py is reproducible (issue 41): every
random source it uses, OpenSpiel's ISMCTS worlds included, is seeded from
--seed, so two runs with one seed play the same hands."""
import importlib.util
import pathlib

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "ismcts_vs_mstar.py"


def load_example():
    spec = importlib.util.spec_from_file_location("ismcts_vs_mstar", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_two_runs_with_one_seed_play_the_same_hands():
    example = load_example()
    first = example.run(hands=4, simulations=60, seed=5)
    second = example.run(hands=4, simulations=60, seed=5)
    assert first["histories"] == second["histories"]
    assert first["returns"] == second["returns"]
    # ISMCTS decided in these hands (its worlds were drawn).
    assert first["clocks"]["ISMCTS"][1] > 0
