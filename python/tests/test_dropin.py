"""muggins_block and muggins_team against OpenSpiel's python_block_dominoes
and python_team_dominoes, on random histories: at every node the same
player, legal action ids, chance outcomes, action strings, observation and
information-state strings and tensors for every player, and at the end the
same returns. Also the plain `muggins.State` of each."""
import random

import numpy as np
import pyspiel
from open_spiel.python.games import block_dominoes, team_dominoes  # noqa: F401 (registers)

import muggins
import muggins.openspiel  # noqa: F401 (registers)

PAIRS = {"block": ("python_block_dominoes", "muggins_block"), "team": ("python_team_dominoes", "muggins_team")}


def same_node(theirs, ours, players):
    assert ours.current_player() == theirs.current_player()
    assert ours.is_chance_node() == theirs.is_chance_node()
    assert ours.legal_actions() == theirs.legal_actions()
    if theirs.is_chance_node():
        assert ours.chance_outcomes() == theirs.chance_outcomes()
        return
    for p in range(players):
        assert ours.observation_string(p) == theirs.observation_string(p)
        assert ours.information_state_string(p) == theirs.information_state_string(p)
        assert np.array_equal(ours.observation_tensor(p), theirs.observation_tensor(p))
        assert np.array_equal(ours.information_state_tensor(p), theirs.information_state_tensor(p))
    player = theirs.current_player()
    if player >= 0:
        for a in theirs.legal_actions():
            assert ours.action_to_string(player, a) == theirs.action_to_string(player, a)


def play_both(name, rng, full_check):
    theirs_name, ours_name = PAIRS[name]
    theirs = pyspiel.load_game(theirs_name).new_initial_state()
    ours = pyspiel.load_game(ours_name).new_initial_state()
    plain = muggins.State(name)
    players = theirs.num_players()
    while not theirs.is_terminal():
        if full_check or not theirs.is_chance_node():
            same_node(theirs, ours, players)
        assert plain.legal_actions() == theirs.legal_actions()
        a = rng.choice(theirs.legal_actions())
        if theirs.is_chance_node():
            assert ours.action_to_string(-1, a) == theirs.action_to_string(-1, a)
        theirs.apply_action(a)
        ours.apply_action(a)
        plain.apply_action(a)
    assert ours.is_terminal() and plain.is_terminal()
    same_node(theirs, ours, players)
    assert ours.returns() == theirs.returns() == plain.returns()
    assert ours.history() == theirs.history() == plain.history()


def test_game_info_matches_openspiel():
    for name, (theirs_name, ours_name) in PAIRS.items():
        theirs, ours = pyspiel.load_game(theirs_name), pyspiel.load_game(ours_name)
        for attr in ["num_distinct_actions", "max_chance_outcomes", "num_players", "min_utility",
                     "max_utility", "max_game_length", "get_parameters",
                     "observation_tensor_shape", "information_state_tensor_shape"]:
            assert getattr(ours, attr)() == getattr(theirs, attr)(), (name, attr)
        t, o = theirs.get_type(), ours.get_type()
        for attr in ["dynamics", "chance_mode", "information", "utility", "reward_model",
                     "provides_information_state_string", "provides_information_state_tensor",
                     "provides_observation_string", "provides_observation_tensor"]:
            assert getattr(o, attr) == getattr(t, attr), (name, attr)


def test_dropin_on_thousands_of_random_histories():
    rng = random.Random(2026)
    for name in PAIRS:
        for i in range(1500):
            play_both(name, rng, full_check=i < 100)


def test_illegal_actions_are_refused_naming_the_action():
    for game in ["block", "all-fives"]:
        s = muggins.State(game)
        try:
            s.apply_action(999)
        except ValueError as e:
            assert "999" in str(e)
        else:
            raise AssertionError("an illegal action was taken")


def test_playouts_are_seeded_numpy_and_arrow_arrays():
    a = muggins.playouts("block", 1000, 7)
    assert a.dtype == "int32" and a.shape == (1000,)
    assert (a == muggins.playouts("block", 1000, 7)).all()
    assert (a != muggins.playouts("block", 1000, 8)).any()
    assert a.tolist() == muggins.playouts_list("block", 1000, 7)
    # Within OpenSpiel's utility range for block, [-69, 69].
    assert (a != 0).any() and abs(a).max() <= 69
    arrow = muggins.playouts_arrow("team", 500, 3)
    assert str(arrow.type) == "int32" and arrow.to_pylist() == muggins.playouts_list("team", 500, 3)
