"""scripts/agents/openspiel_agent.py rebuilds a block or team state from one
seat's view (docs/agents.md): every sampled state is one the seat cannot
tell from the true one, the void-aware sampler never runs dry, and when
rejection gives up, the placements it enumerates are drawn uniformly."""
import collections
import importlib.util
import pathlib
import random

import pyspiel

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("openspiel_agent", ROOT / "scripts/agents/openspiel_agent.py")
agent = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agent)


def decisions(kind, games, seed):
    """(state, seat, tiles, history) at every decision of random hands of
    OpenSpiel's own game."""
    game = pyspiel.load_game({"block": "python_block_dominoes", "team": "python_team_dominoes"}[kind])
    rng = random.Random(seed)
    for _ in range(games):
        s = game.new_initial_state()
        history = []
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice([a for a, _ in s.chance_outcomes()]))
                continue
            p = s.current_player()
            yield game, s, p, history
            a = rng.choice(s.legal_actions())
            history.append(a)
            s.apply_action(a)


def hand_of(world, state, p):
    """The seat's tiles in the agent's tile indices, read from its string."""
    text = state.information_state_string(p).split("hand:[")[1].split("]")[0]
    pairs = [tuple(int(float(v)) for v in t.split(", ")) for t in text.strip("()").split("), (") if t]
    return [world._index(a, b) for a, b in pairs]


def test_every_sample_is_a_state_the_seat_cannot_tell_apart():
    for kind in ["block", "team"]:
        checked, tight = 0, 0
        world = None
        for game, s, p, history in decisions(kind, 60, 7):
            world = world or agent.World(game, kind)
            tiles = hand_of(world, s, p)
            rng = random.Random(len(history))
            # tries=50 sends the tighter decisions down the enumeration path too.
            for tries in (20000, 50):
                w = world.sample(p, tiles, list(history), rng, tries=tries)
                assert w.information_state_string(p) == s.information_state_string(p)
                assert w.legal_actions() == s.legal_actions()
                checked += 1
            tight += any(world.voids(history, p))
        assert checked > 500 and tight > 50, (kind, checked, tight)


def test_enumerated_placements_are_drawn_uniformly():
    # Late team decisions with voids: few placements, each drawn about equally.
    game = pyspiel.load_game("python_team_dominoes")
    world = agent.World(game, "team")
    for _, s, p, history in decisions("team", 200, 3):
        if len(history) >= 14 and sum(map(len, world.voids(history, p))) >= 4:
            break
    else:
        raise AssertionError("no late decision with voids")
    tiles = hand_of(world, s, p)
    rng = random.Random(1)
    counts = collections.Counter()
    draws = 3000
    for _ in range(draws):
        w = world.sample(p, tiles, list(history), rng, tries=0)
        counts[tuple(w.information_state_string(q) for q in range(4) if q != p)] += 1
    k = len(counts)
    assert k >= 2, "a single placement says nothing of uniformity"
    expected = draws / k
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    # Well above the 99.9% point of chi-square with k - 1 degrees of freedom
    # for k up to a few hundred; a skewed sampler lands far beyond it.
    assert chi2 < (k - 1) + 6 * (2 * (k - 1)) ** 0.5 + 10, (k, chi2)
