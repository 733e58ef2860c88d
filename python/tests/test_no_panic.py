"""No call from Python reaches a Rust panic (issue 41): every public
method of every class and function the extension exposes (muggins.State,
muggins.Bot, the module's functions, muggins.openspiel's games, states,
observers and bots) is called with ids, players, seats, seeds and knobs out
of range, negative and huge numbers and arguments of the wrong type. A
call may raise ValueError or TypeError (or OpenSpiel's own errors); it may
not raise pyo3_runtime.PanicException, a BaseException that `except
Exception` lets through."""
import random
import re
import time
import types

import numpy as np
import pyspiel
import pytest
import muggins
import muggins.openspiel
import open_spiel.python.games  # noqa: F401 (registers python_block_dominoes)
from muggins import _muggins

# Integers at and around every boundary an argument has: players and seats
# (-4, -1, 0..4), tiles (28, 55), action ids (112..114 for double-6, 154
# for block), the widths of u8..u64, and beyond.
INTS = [
    -(2**100), -(2**64), -(2**63) - 1, -(2**63), -(2**31), -5, -4, -2, -1, 0, 1, 2, 3, 4, 5, 7, 9, 10, 27, 28,
    29, 42, 55, 56, 63, 64, 111, 112, 113, 114, 115, 153, 154, 155, 255, 256, 9999, 65535, 65536, 2**31,
    2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**100,
]
OTHERS = [
    None, 1.5, float("nan"), float("inf"), -0.0, "0", "", "x", "all-fives", b"\x00", [], [0, 1], [2**70],
    [-1], ["a"], (1,), {}, {"seats": 9}, True, False, object(), np.int64(3), np.int64(-1), np.uint64(2**64 - 1),
    np.float32(2.0), np.array([1, 2]),
]
GAMES = [
    ("all-fives", {}),
    ("all-fives", {"seats": 3}),
    ("all-fives", {"seats": 4, "to": 150}),
    ("all-fives", {"set": 9, "seats": 4, "hand": 10}),
    ("all-fives", {"keep": 2, "lead": "highest-double", "blocked": "difference", "round": False}),
    ("block", {}),
    ("team", {}),
    ("thesis", {}),
]
FIVES_KNOBS = ["seats", "teams", "set", "hand", "keep", "round", "blocked", "lead", "to", "bogus"]
ENGINES = ["mstar", "expectimax", "ismcts", "dominai", "random", "scorer", "defender", "heaviest", "searcher", "x"]
SETTINGS = ["budget", "depth", "worlds", "belief", "evaluation", "opponent", "seed", "table_mb", "bogus"]
SETTING_VALUES = {
    "belief": ["constraints", "uniform", "model", "dominai", "x"],
    "evaluation": ["score", "learned", "x"],
    "opponent": ["searcher", "random", "scorer", "defender", "heaviest", "x"],
}


class Calls:
    """Calls functions and records every PanicException."""

    def __init__(self):
        self.panics = []
        self.count = 0

    def __call__(self, f, *args, **kwargs):
        self.count += 1
        try:
            return f(*args, **kwargs)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: B036 (PanicException is a BaseException)
            if type(e).__name__ == "PanicException":
                owner = getattr(f, "__self__", None)
                if owner is not None and not isinstance(owner, types.ModuleType):
                    kind = owner if isinstance(owner, type) else type(owner)
                    name = f"{kind.__qualname__}.{f.__name__}"
                else:
                    name = getattr(f, "__qualname__", getattr(f, "__name__", repr(f)))
                shown = ", ".join([short(a) for a in args] + [f"{k}={short(v)}" for k, v in kwargs.items()])
                self.panics.append(f"{name}({shown}): {e}")
            return None

    def check(self):
        where = sorted({p.split("(")[0] for p in self.panics})
        first = {}
        for p in self.panics:
            first.setdefault(p.split("(")[0], p)
        assert not self.panics, f"{len(self.panics)} calls panicked, in {where}, e.g.:\n" + "\n".join(first.values())


def short(v):
    r = repr(v)
    return r if len(r) < 60 else r[:57] + "..."


def anything(rng):
    return rng.choice(INTS) if rng.random() < 0.6 else rng.choice(OTHERS)


def some_args(rng, most=4):
    return [anything(rng) for _ in range(rng.randint(0, most))]


def play_states(game, knobs, rng):
    """States of a random game of `game`: the start, inside the deal, each
    decision, and the end."""
    s = muggins.State(game, **knobs)
    out = [s.clone()]
    while not s.is_terminal() and len(s.history()) < 400:
        s.apply_action(rng.choice(s.legal_actions()))
        if rng.random() < 0.25 or s.is_terminal():
            out.append(s.clone())
    return out


def decision_states(states):
    return [s for s in states if not s.is_chance_node() and not s.is_terminal()]


def fuzz_state_methods(call, rng, s):
    names = [m for m in dir(muggins.State) if not m.startswith("_") or m in ("__reduce__", "__deepcopy__")]
    seats = s.num_players()
    near = [-4, -1, 0, seats - 1, seats, 7, 2**63, -(2**63) - 1, 2**64]
    ids = [0, 27, 28, 55, 110, 111, 112, 113, 114, 115, 154, 155, 9999, 2**32, 2**64, -1, -114]
    for name in names:
        f = getattr(s.clone(), name)
        if name == "from_view":
            continue  # below
        for _ in range(6):
            call(f, *some_args(rng))
        for p in near:
            call(f, p)
            call(f, p, rng.choice(ids))
            call(f, p, anything(rng))
        if name in ("observation_string", "observation_tensor", "tensor_pieces"):
            for _ in range(3):
                call(f, *some_args(rng, 1), perfect_recall=anything(rng), private=anything(rng), public=anything(rng))
    for a in ids + [anything(rng) for _ in range(4)]:
        call(s.clone().apply_action, a)
        call(s.action_to_string, rng.choice(near), a)
        call(s.action_to_string, rng.choice([-1, 0, seats - 1]), a)


def public_view(s):
    """The acting seat, its tiles and the hand's public history (plays,
    draws, passes: no chance outcome) at a one-hand All-Fives decision."""
    t = muggins.State(s.game_name(), **s.knobs())
    public = []
    for a in s.history():
        if not t.is_chance_node():
            public.append(a)
        t.apply_action(a)
    return s.current_player(), s.hands()[s.current_player()], public


def fuzz_from_view(call, rng, states):
    views = [(s, public_view(s)) for s in decision_states(states) if s.game_name() in ("all-fives", "thesis")]
    views = [(s, v) for s, v in views if "to" not in s.knobs()]
    made = 0
    for s, (seat0, tiles0, h) in rng.sample(views, min(len(views), 30)):
        seats = s.num_players()
        knobs = s.knobs()
        made += call(muggins.State.from_view, s.game_name(), seat0, tiles0, h, **knobs) is not None
        for _ in range(15):
            tiles, seat, history, game = list(tiles0), seat0, list(h), s.game_name()
            what = rng.randint(0, 5)
            if what == 0:
                tiles = rng.choice([[0, 1, 2], list(range(30)), [28, 55], [-1], [2**70], "x", None, [], tiles0 + tiles0])
            elif what == 1:
                seat = rng.choice([seats - 1 - seat0, seats, 4, 7, -1, 255, 256, 2**64, None, "0"])
            elif what == 2 and history:
                # One action changed: to another id, a draw, a pass, out of range.
                history[rng.randrange(len(history))] = rng.choice(
                    [rng.randrange(s.num_distinct_actions() + 2), s.num_distinct_actions() - 2,
                     s.num_distinct_actions() - 1, -1, 2**40, "x"])
            elif what == 3:
                history = rng.choice([history[: rng.randint(0, len(history))], history + history, [112, 113], "x", None])
            elif what == 4:
                game = rng.choice(["block", "x", "thesis", "all-fives"])
            opts = dict(knobs)
            for k in rng.sample(["winner", "seed", "seats", "set", "hand", "to", "x"], rng.randint(0, 2)):
                opts[k] = rng.choice([0, 1, seats, 4, 7, -1, 2**64, 2**70, None, "x", True])
            call(muggins.State.from_view, game, seat, tiles, history, **opts)
    assert made > 0, "no valid from_view call was made"


def fuzz_knobs(call, rng):
    for _ in range(300):
        knobs = {}
        for k in rng.sample(FIVES_KNOBS, rng.randint(1, 4)):
            knobs[k] = rng.choice([anything(rng), rng.randint(0, 10), rng.choice(["opponents", "winner", "true"])])
        game = rng.choice(["all-fives", "all_fives", "thesis", "block", "team", "x"])
        s = call(muggins.State, game, **knobs)
        if s is not None and rng.random() < 0.3:
            # A valid odd game: play it through with a few queries.
            for t in play_states(game, knobs, rng)[:6]:
                call(t.observation_string, rng.randint(0, t.num_players() - 1))
                call(t.information_state_tensor, rng.randint(0, t.num_players() - 1))
                if not t.is_chance_node() and not t.is_terminal():
                    call(t.resample, t.current_player(), rng.randint(0, 9))
        call(_muggins.state_from_history, game, knobs, some_args(rng)[:1] or [0, 1, 2])
        call(_muggins.state_from_history, game, anything(rng), anything(rng))


def fuzz_bots(call, rng, states):
    # Construction with anything.
    for _ in range(300):
        settings = {k: rng.choice(SETTING_VALUES.get(k, []) + [anything(rng)]) for k in rng.sample(SETTINGS, rng.randint(0, 4))}
        call(muggins.Bot, rng.choice(ENGINES + [anything(rng)]), **settings)
        call(muggins.openspiel.bot, rng.choice(ENGINES), **settings)
    # Steps of cheap bots of every engine, belief, evaluation and opponent.
    decisions = decision_states(states)
    for _ in range(200):
        engine = rng.choice(ENGINES[:8])
        reach = rng.choice([("budget", 1), ("budget", 50), ("budget", 200), ("depth", 1), ("depth", 2)])
        settings = {
            reach[0]: reach[1],
            "worlds": rng.choice([1, 2]),
            "seed": rng.randint(0, 9),
        }
        for k in ("belief", "evaluation", "opponent"):
            if rng.random() < 0.5:
                settings[k] = rng.choice(SETTING_VALUES[k])
        bot = call(muggins.Bot, engine, **settings)
        if bot is None:
            continue
        for s in rng.sample(decisions, 3):
            call(bot.step, s)
    bot = muggins.Bot("random")
    for a in OTHERS + [muggins.State("all-fives"), muggins.State("block")] + decisions[:2]:
        call(bot.step, a)
        call(bot.restart_at, a)
        call(bot.inform_action, a, anything(rng), anything(rng))
        call(bot.inform_action, *some_args(rng))
        call(bot.name, *some_args(rng, 1))


def fuzz_playouts(call, rng):
    # n: never a large valid number (that would play it); past u64, u64's
    # edge, negative, wrong types.
    ns = [-1, 0, 1, 3, 2**63, 2**64 - 1, 2**64, 2**100, -(2**70), None, 1.5, "3", np.int64(2), [3]]
    fs = [muggins.playouts, muggins.playouts_list, _muggins.playouts_bytes]
    try:
        import pyarrow  # noqa: F401

        fs.append(muggins.playouts_arrow)
    except ImportError:
        pass
    for f in fs:
        for n in ns:
            call(f, "block", n, rng.choice([0, 1, 2**64 - 1]))
            call(f, rng.choice(["team", "all-fives", "x", None, 3]), n, anything(rng))


def fuzz_openspiel(call, rng):
    names = [
        "muggins_all_fives", "muggins_block", "muggins_team", "muggins_all_fives(seats=4,teams=true,to=100)",
        "muggins_all_fives(set=3,hand=3)",
    ]
    for _ in range(40):
        params = {k: rng.choice([anything(rng), rng.randint(0, 9)]) for k in rng.sample(FIVES_KNOBS, rng.randint(1, 3))}
        call(pyspiel.load_game, "muggins_all_fives", params)
        call(muggins.openspiel.MugginsAllFivesGame, params)
    samplers = [
        pyspiel.UniformProbabilitySampler(1, 0.0, 1.0),
        lambda: 1.0, lambda: -0.5, lambda: 2.0, lambda: float("nan"), lambda: 1e300, lambda: "x", None, 3,
    ]
    for name in names:
        game = pyspiel.load_game(name)
        seats = game.num_players()
        observer = game.make_py_observer()
        state = game.new_initial_state()
        bot = muggins.openspiel.bot("random")
        while not state.is_terminal():
            p = rng.choice([-4, -1, 0, seats - 1, seats, 7, 2**63, 2**64, None, "x"])
            a = rng.choice([0, 28, 113, 114, 154, 9999, -1, 2**64, None, 1.5])
            call(state.action_to_string, p, a)
            call(state.action_to_string, a)
            call(state.legal_actions, p)
            call(state.observation_string, p)
            call(state.information_state_tensor, p)
            call(state.clone().apply_action, a)
            call(observer.string_from, state, p)
            call(observer.set_from, state, p)
            call(observer.string_from, anything(rng), 0)
            if not state.is_chance_node():
                call(state.resample_from_infostate, p, rng.choice(samplers))
                call(state.resample_from_infostate, state.current_player(), rng.choice(samplers))
                call(bot.step, state)
                call(bot.step, anything(rng))
            state.apply_action(rng.choice(state.legal_actions()))


def test_no_call_from_python_panics():
    rng = random.Random(41)
    call = Calls()
    start = time.time()
    states = []
    for game, knobs in GAMES:
        states += play_states(game, knobs, rng)
    for s in rng.sample(states, min(len(states), 25)):
        fuzz_state_methods(call, rng, s)
    fuzz_from_view(call, rng, states)
    fuzz_knobs(call, rng)
    fuzz_bots(call, rng, states)
    fuzz_playouts(call, rng)
    fuzz_openspiel(call, rng)
    elapsed = time.time() - start
    print(f"{call.count} calls in {elapsed:.1f} s")
    assert call.count > 2000
    call.check()


def test_action_to_string_checks_players_and_ids():
    s = muggins.State("all-fives")
    game = pyspiel.load_game("muggins_all_fives")
    through_pyspiel = game.new_initial_state()
    for f in (s.action_to_string, through_pyspiel.action_to_string):
        with pytest.raises(ValueError, match=r"action 9999 is not an action id of all-fives \(0\.\.114\)"):
            f(0, 9999)
        with pytest.raises(ValueError, match=r"action 114 is not an action id of all-fives"):
            f(0, 114)
        with pytest.raises(ValueError, match=r"chance outcome 99 is not a tile of all-fives \(0\.\.28\)"):
            f(-1, 99)
        with pytest.raises(ValueError, match=r"chance outcome 9999 is not a tile"):
            f(-1, 9999)
        with pytest.raises(ValueError, match=r"player 7: all-fives has 2 seats"):
            f(7, 0)
        with pytest.raises(ValueError, match=r"action -1 is not an action id"):
            f(0, -1)
        assert f(0, 112) == "p0 draw"
        assert f(1, 113) == "p1 pass"
        assert f(-1, 27) == "chance 6-6"
        assert f(0, np.int64(1)) == "p0 0-0R"
    # Past pyspiel's int64, muggins' own State.
    with pytest.raises(ValueError, match=rf"action {2**70} is not an action id"):
        s.action_to_string(0, 2**70)
    with pytest.raises(ValueError, match=r"action \d+: out of range"):
        s.action_to_string(0, 2**200)
    with pytest.raises(TypeError, match=r"action must be an int, not str"):
        s.action_to_string(0, "3")
    with pytest.raises(TypeError, match=r"player must be an int, not NoneType"):
        s.action_to_string(None, 3)
    block = muggins.State("block")
    with pytest.raises(ValueError, match=r"action 154 is not an action id of block \(0\.\.154\)"):
        block.action_to_string(0, 154)
    assert block.action_to_string(-1, 27) == "Deal (6.0, 6.0)"


def test_players_seeds_and_settings_out_of_range_raise_value_error_naming_them():
    s = muggins.State("all-fives", seats=3)
    with pytest.raises(ValueError, match=r"player 3: all-fives has 3 seats"):
        s.observation_string(3)
    with pytest.raises(ValueError, match=r"player -1: all-fives has 3 seats"):
        s.information_state_tensor(-1)
    with pytest.raises(ValueError, match=r"seed -1: a seed is 0 to 2\*\*64 - 1"):
        s.resample(0, -1)
    with pytest.raises(ValueError, match=r"seat 7: all-fives has 2 seats"):
        muggins.State.from_view("all-fives", 7, [0, 1, 2, 3, 4, 5, 6], [])
    with pytest.raises(ValueError, match=r"seat 3: thesis has 2 seats"):
        muggins.State.from_view("thesis", 3, [0, 1, 2], [])
    with pytest.raises(ValueError, match=r"history\[1\] 9999 is not an action id of all-fives"):
        muggins.State.from_view("all-fives", 0, [0, 1, 2, 3, 4, 5, 6], [1, 9999])
    with pytest.raises(ValueError, match=r"knob set = \d+: out of range"):
        muggins.State("all-fives", set=2**70)
    for setting, value in [("budget", 2**64 - 1), ("budget", -1), ("depth", 255), ("depth", 0), ("worlds", 1001),
                           ("table_mb", 2**32), ("table_mb", 0), ("seed", -1), ("seed", 2**64)]:
        with pytest.raises(ValueError, match=rf"{setting} = "):
            muggins.Bot("mstar", **{setting: value})
    for setting, value in [("budget", 1.5), ("worlds", "8"), ("depth", None)]:
        with pytest.raises(TypeError, match=rf"^{setting} = {re.escape(repr(value))}: must be an int, not "):
            muggins.Bot("mstar", **{setting: value})
    for n in (-1, 2**63, 2**64 - 1, 1_000_000_001):
        with pytest.raises(ValueError, match=rf"n {n}: playouts play 0 to 1000000000 hands a call"):
            muggins.playouts("block", n, 1)
    with pytest.raises(ValueError, match=r"probability_sampler\(\) gave 2.0"):
        state = pyspiel.load_game("muggins_all_fives").new_initial_state()
        while state.is_chance_node():
            state.apply_action(state.legal_actions()[0])
        state.resample_from_infostate(0, lambda: 2.0)


def test_bot_methods_refuse_states_that_are_not_muggins():
    bot = muggins.Bot("random")
    wrapped = muggins.openspiel.bot("random")
    others = [
        pyspiel.load_game("python_block_dominoes").new_initial_state(),
        pyspiel.load_game("tic_tac_toe").new_initial_state(),
        None,
        "muggins",
    ]
    for other in others:
        kind = type(other)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        for step in (bot.step, wrapped.step):
            with pytest.raises(TypeError, match=rf"Bot.step takes a muggins.State \(or the muggins OpenSpiel game's state\), not {name}$"):
                step(other)
        with pytest.raises(TypeError, match=r"Bot.restart_at takes a muggins.State"):
            bot.restart_at(other)
        with pytest.raises(TypeError, match=r"Bot.inform_action takes a muggins.State"):
            bot.inform_action(other, 0, 1)
        observer = pyspiel.load_game("muggins_block").make_py_observer()
        with pytest.raises(TypeError, match=r"MugginsObserver.string_from takes a state of a muggins OpenSpiel game"):
            observer.string_from(other, 0)
    with pytest.raises(TypeError, match=r"not pyspiel.tic_tac_toe.TicTacToeState$"):
        bot.step(pyspiel.load_game("tic_tac_toe").new_initial_state())
    # muggins' own states still work, plain and through pyspiel.
    s = muggins.State("block")
    while s.is_chance_node():
        s.apply_action(s.legal_actions()[0])
    assert bot.step(s) in s.legal_actions()
    bot.restart_at(s)
    bot.inform_action(s, 0, s.legal_actions()[0])
    state = pyspiel.load_game("muggins_block").new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    assert bot.step(state) in state.legal_actions()
    assert wrapped.step(state) in state.legal_actions()
