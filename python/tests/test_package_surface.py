"""The package as an editor and a user see it: type stubs that cover every
public method, a docstring on each, `help()` that names the engines and
games, and a `Bot` that pickles (so `multiprocessing` works)."""
import ast
import multiprocessing
import operator
import os
import pickle
import pydoc

import muggins
import muggins._muggins as core

STUB = os.path.join(os.path.dirname(muggins.__file__), "_muggins.pyi")


def public(cls):
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}


def stub_methods():
    tree = ast.parse(open(STUB).read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
    out["<module>"] = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    return out


def test_the_stubs_cover_every_public_name_and_the_package_is_typed():
    stubs = stub_methods()
    for cls in (core.State, core.Bot, core.VecCore):
        missing = public(cls) - stubs[cls.__name__]
        assert not missing, f"{cls.__name__}: {sorted(missing)} not in _muggins.pyi"
    functions = {n for n in dir(core) if not n.startswith("_") and callable(getattr(core, n))
                 and not isinstance(getattr(core, n), type)}
    assert functions <= stubs["<module>"], sorted(functions - stubs["<module>"])
    assert os.path.exists(os.path.join(os.path.dirname(muggins.__file__), "py.typed"))


def test_every_public_method_has_a_docstring():
    for cls in (core.State, core.Bot, core.VecCore, muggins.VecEnv):
        for name in public(cls):
            doc = getattr(getattr(cls, name), "__doc__", None)
            assert doc and doc.strip(), f"{cls.__name__}.{name} has no docstring"


def test_help_names_the_engines_settings_and_games():
    bot = pydoc.render_doc(muggins.Bot)
    for word in [*muggins.ENGINES, *muggins.STRATEGIES, "budget", "worlds", "belief"]:
        assert word in bot, word
    state = pydoc.render_doc(muggins.State)
    for word in ["block", "team", "all-fives", "thesis", "seats", "teams", "lead", "to"]:
        assert word in state, word


def test_a_bot_pickles_with_its_settings_and_works_in_a_process_pool():
    bot = muggins.Bot("ismcts", budget=200, worlds=2, seed=4, belief="uniform")
    again = pickle.loads(pickle.dumps(bot))
    assert again.name() == bot.name() and repr(again) == repr(bot)
    state = muggins.State("block")
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    # The pool's workers unpickle the bot and the state (nothing of this
    # test module, which they could not import) and decide there.
    decide = operator.methodcaller("step", state)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(decide, [bot, again], chunksize=1) == [bot.step(state)] * 2


def test_every_engine_and_strategy_the_package_names_plays():
    """`ENGINES` and `STRATEGIES` come from muggins' one engine type: each
    name makes a bot that decides a legal All Fives action, so an engine
    added in Rust reaches Python with no list to edit here."""
    assert {"mstar", "expectimax", "ismcts", "dominai", "net"} <= set(muggins.ENGINES)
    assert {"random", "heaviest"} <= set(muggins.STRATEGIES)
    model = os.path.join(os.path.dirname(__file__), "..", "..", "models", "ppo-block.safetensors")
    state = muggins.State("all-fives")
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    block = muggins.State("block")
    while block.is_chance_node():
        block.apply_action(block.legal_actions()[0])
    for name in muggins.ENGINES:
        if name == "net":
            bot, on = muggins.Bot(name, model=model), block
        else:
            bot, on = muggins.Bot(name, budget=200, worlds=2, seed=1), state
        assert bot.step(on) in on.legal_actions(), name
    for name in muggins.STRATEGIES:
        assert muggins.Bot(name).step(state) in state.legal_actions(), name
    try:
        muggins.Bot("minimax")
    except ValueError as e:
        assert all(n in str(e) for n in ("minimax", "mstar", "dominai", "heaviest")), e
    else:
        raise AssertionError("an unknown engine makes no bot")
