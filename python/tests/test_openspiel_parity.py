"""muggins' block and team states against OpenSpiel's Python games, move for
move on random histories: the same legal action ids, players and returns."""
import random

import pyspiel
from open_spiel.python.games import block_dominoes, team_dominoes  # noqa: F401 (registers)

import muggins

GAMES = {"block": "python_block_dominoes", "team": "python_team_dominoes"}


def play_both(name, rng):
    theirs = pyspiel.load_game(GAMES[name]).new_initial_state()
    ours = muggins.OpenState(name)
    while not theirs.is_terminal():
        assert ours.current_player() == theirs.current_player()
        assert ours.legal_actions() == sorted(theirs.legal_actions())
        if theirs.is_chance_node():
            outcomes = dict(ours.chance_outcomes())
            assert sorted(outcomes) == sorted(a for a, _ in theirs.chance_outcomes())
            assert abs(sum(outcomes.values()) - 1.0) < 1e-12
        a = rng.choice(theirs.legal_actions())
        theirs.apply_action(a)
        ours.apply_action(a)
    assert ours.is_terminal()
    assert ours.returns() == list(theirs.returns())
    assert ours.legal_actions() == []


def test_block_and_team_match_openspiel_move_for_move():
    rng = random.Random(2026)
    for name in GAMES:
        for _ in range(300):
            play_both(name, rng)


def test_illegal_actions_are_refused_naming_the_action():
    s = muggins.OpenState("block")
    try:
        s.apply_action(999)
    except ValueError as e:
        assert "999" in str(e)
    else:
        raise AssertionError("an illegal action was taken")


def test_playouts_are_seeded_numpy_arrays():
    a = muggins.playouts("block", 1000, 7)
    assert a.dtype == "int32" and a.shape == (1000,)
    assert (a == muggins.playouts("block", 1000, 7)).all()
    assert (a != muggins.playouts("block", 1000, 8)).any()
    assert a.tolist() == muggins.playouts_list("block", 1000, 7)
    # Within OpenSpiel's utility range for block, [-69, 69].
    assert (a != 0).any() and abs(a).max() <= 69
