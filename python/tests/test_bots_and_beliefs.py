"""muggins.Bot decides from the acting player's information only, is
reproducible and releases the GIL; resample_from_infostate keeps the
player's information and draws the hidden tiles exactly uniformly over the
placements that agree with it."""
import collections
import random
import threading
import time
from pathlib import Path

import pytest
from scipy import stats

import muggins

ENGINES = [
    ("mstar", dict(budget=3000, worlds=4)),
    ("mstar", dict(budget=3000, worlds=4, belief="model", evaluation="learned", opponent="random")),
    ("expectimax", dict(depth=2, worlds=2)),
    ("ismcts", dict(budget=200, worlds=4)),
    ("dominai", dict(budget=5000)),
    ("random", {}),
    ("scorer", {}),
    ("defender", {}),
    ("heaviest", {}),
]


def random_state(game, seed, plays, **knobs):
    """A state of `game` after a random deal and `plays` random decisions,
    at a decision with two or more legal actions."""
    rng = random.Random(seed)
    s = muggins.State(game, **knobs)
    made = 0
    while True:
        if s.is_terminal():
            return random_state(game, seed + 1000, plays, **knobs)
        if s.is_chance_node():
            s.apply_action(rng.choice(s.legal_actions()))
        elif made >= plays and len(s.legal_actions()) > 1:
            return s
        else:
            s.apply_action(rng.choice(s.legal_actions()))
            made += 1


def test_resample_keeps_the_players_information_and_moves_hidden_tiles():
    for game, knobs in [("all-fives", {}), ("all-fives", {"seats": 4}), ("block", {}), ("team", {}), ("thesis", {})]:
        for seed in range(20):
            s = random_state(game, seed, plays=seed % 7, **knobs)
            p = s.current_player()
            moved = False
            for k in range(10):
                w = s.resample(p, k)
                assert w.information_state_string(p) == s.information_state_string(p)
                assert w.observation_string(p) == s.observation_string(p)
                assert w.legal_actions() == s.legal_actions()
                assert w.hands()[p] == s.hands()[p]
                moved |= w.hands() != s.hands()
                # A true state of the game: its history replays.
                again = muggins.State(game, **knobs)
                for a in w.history():
                    again.apply_action(a)
                assert str(again) == str(w)
            assert moved or game == "thesis", (game, seed)


def test_resample_is_exactly_uniform_over_consistent_placements():
    # Thesis rules (double-3): after the opening, the opponent's hand and
    # the boneyard split the hidden tiles; every split that agrees with what
    # player 0 saw must come up equally often.
    sizes = []
    for seed in range(6):
        s = random_state("thesis", seed, plays=seed % 2)
        p = s.current_player()
        counts = collections.Counter()
        n = 4000
        for k in range(n):
            w = s.resample(p, k)
            counts[tuple(map(tuple, w.hands()))] += 1
        observed = list(counts.values())
        sizes.append(len(observed))
        if len(observed) == 1:
            continue
        # Tens of placements, each expected about n / len times.
        _, pvalue = stats.chisquare(observed)
        assert pvalue > 1e-4, (seed, len(observed), pvalue)
    assert max(sizes) > 10, sizes


def test_a_bot_decides_from_the_players_information_only():
    for game, knobs in [("all-fives", {}), ("all-fives", {"seats": 4}), ("block", {}), ("team", {})]:
        for engine, settings in ENGINES:
            if game != "all-fives" and engine not in ("mstar", "expectimax", "ismcts", "random", "heaviest"):
                continue
            if game != "all-fives" and "budget" in settings:
                settings = dict(budget=2000, worlds=2)
            if game != "all-fives" and engine == "ismcts":
                settings = dict(budget=300, worlds=4)
            bot = muggins.Bot(engine, seed=3, **settings)
            for seed in range(4):
                s = random_state(game, seed, plays=2, **knobs)
                p = s.current_player()
                other = next(s.resample(p, k) for k in range(50) if s.resample(p, k).hands() != s.hands())
                # The same information, other hidden tiles: the same action.
                a = bot.step(s)
                assert a in s.legal_actions()
                assert bot.step(other) == a, (game, engine, seed)
                # Reproducible: the same seed, the same action.
                assert muggins.Bot(engine, seed=3, **settings).step(s) == a


def test_bad_settings_are_refused_naming_them():
    for args, kw, word in [(("mstar",), dict(worlds=0), "worlds"), (("alphazero",), {}, "alphazero"),
                           (("mstar",), dict(belief="psychic"), "belief"), (("mstar",), dict(budgett=3), "budgett")]:
        try:
            muggins.Bot(*args, **kw)
        except ValueError as e:
            assert word in str(e), str(e)
        else:
            raise AssertionError(f"{args} {kw} accepted")
    # Learned leaves are alpha-beta's: an ISMCTS or DominAI asked for them is refused, not left without.
    for engine in ["ismcts", "dominai"]:
        try:
            muggins.Bot(engine, budget=200, evaluation="learned")
        except ValueError as e:
            assert "evaluation" in str(e) and engine in str(e), str(e)
        else:
            raise AssertionError(f"{engine} with learned leaves accepted")
    # Settings only All Fives has: refused at a block or team decision, never silently played as another.
    for game in ["block", "team"]:
        s = random_state(game, 1, plays=1)
        for kw, word in [(dict(belief="model"), "belief"), (dict(belief="dominai"), "belief"),
                         (dict(evaluation="learned"), "evaluation")]:
            try:
                muggins.Bot("mstar", depth=2, worlds=2, **kw).step(s)
            except ValueError as e:
                assert word in str(e) and kw[word] in str(e), str(e)
            else:
                raise AssertionError(f"{game} {kw} accepted")
        assert muggins.Bot("mstar", depth=2, worlds=2, belief="constraints").step(s) in s.legal_actions()
    for game, kw, word in [("all-fives", dict(seats=7), "seats"), ("block", dict(seats=4), "seats"),
                           ("all-fives", dict(colour="red"), "colour"), ("poker", {}, "poker")]:
        try:
            muggins.State(game, **kw)
        except ValueError as e:
            assert word in str(e), str(e)
        else:
            raise AssertionError(f"{game} {kw} accepted")


def forced_state(game, **knobs):
    """A state of `game` at a decision with exactly one legal action."""
    rng = random.Random(5)
    for _ in range(200):
        s = muggins.State(game, **knobs)
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice(s.legal_actions()))
            elif len(s.legal_actions()) == 1:
                return s
            else:
                s.apply_action(rng.choice(s.legal_actions()))
    raise AssertionError(f"no forced decision in 200 games of {game}")


def test_a_bot_that_cannot_play_the_game_is_refused_at_a_forced_move_too():
    # Refused whatever the decision: a forced move used to be played (the
    # only legal action returned) and the refusal met only at a later choice.
    for game in ["block", "team"]:
        s = forced_state(game)
        assert muggins.Bot("heaviest").step(s) == s.legal_actions()[0]
        assert muggins.Bot("mstar", depth=2, worlds=2).step(s) == s.legal_actions()[0]
        for bot, words in [(muggins.Bot("scorer"), ["scorer", "All Fives only"]),
                           (muggins.Bot("dominai", budget=200), ["dominai"]),
                           (muggins.Bot("mstar", depth=2, worlds=2, evaluation="learned"), ["evaluation", "learned"]),
                           (muggins.Bot("mstar", depth=2, worlds=2, belief="model"), ["belief", "model"])]:
            with pytest.raises(ValueError) as e:
                bot.step(s)
            assert all(w in str(e.value) for w in words), (game, bot.name(), str(e.value))
    # M*'s learned leaves on a network's worlds value All-Fives positions only.
    net = str(Path(__file__).resolve().parents[2] / "models" / "train-block.safetensors")
    with pytest.raises(ValueError, match="learned leaves"):
        muggins.Bot("mstar", model=net, evaluation="learned", budget=200, worlds=2).step(forced_state("block"))
    s = forced_state("all-fives", set=9)
    assert muggins.Bot("mstar", budget=200, worlds=2).step(s) == s.legal_actions()[0]
    with pytest.raises(ValueError, match="shipped evaluation is for double-6"):
        muggins.Bot("mstar", budget=200, worlds=2, evaluation="learned").step(s)


def test_a_bot_releases_the_gil_while_it_searches():
    s = random_state("all-fives", 1, plays=0)
    bot = muggins.Bot("mstar", budget=200_000, worlds=16)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    before = len(ticks)
    bot.step(s)
    during = len(ticks) - before
    done.set()
    t.join()
    # The counting thread ran while the step held no GIL.
    assert during > 5, during
