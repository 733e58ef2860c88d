"""muggins' games registered with OpenSpiel pass its generic checks
(random_sim_test with serialization, games_sim_test's sim_game: clone,
serialize and pickle round trips, chance outcomes, returns in range) for
every preset and seat count, and OpenSpiel's own bots play them."""
import pickle

import numpy as np
import pyspiel
from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts
from open_spiel.python.bots import uniform_random
from open_spiel.python.tests import games_sim_test

import muggins.openspiel  # noqa: F401 (registers)

GAMES = [
    "muggins_block",
    "muggins_team",
    "muggins_all_fives",
    "muggins_all_fives(seats=3)",
    "muggins_all_fives(seats=4)",
    "muggins_all_fives(seats=4,teams=true)",
    "muggins_all_fives(seats=2,keep=2,round=false,blocked=difference,lead=highest-double)",
    "muggins_all_fives(set=3,hand=3,round=false,blocked=difference,lead=highest-double)",
    "muggins_all_fives(seats=4,teams=true,to=100)",
    "muggins_all_fives(set=9,seats=4,hand=10)",
]


def test_random_sim_test_with_serialization_for_every_preset():
    for name in GAMES:
        game = pyspiel.load_game(name)
        sims = 5 if "to=" in name else 40
        pyspiel.random_sim_test(game, num_sims=sims, serialize=True, verbose=False)


def test_games_sim_test_checks():
    checker = games_sim_test.GamesSimTest()
    for name in GAMES:
        game = pyspiel.load_game(name)
        for _ in range(3):
            checker.sim_game(game)
        assert str(pickle.loads(pickle.dumps(game))) == str(game)


def test_chance_outcomes_sum_to_one_and_terminals_have_no_actions():
    rng = np.random.RandomState(5)
    for name in GAMES:
        game = pyspiel.load_game(name)
        for _ in range(10):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    actions, probs = zip(*state.chance_outcomes())
                    assert abs(sum(probs) - 1.0) < 1e-9
                    state.apply_action(rng.choice(actions, p=probs))
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
            assert state.legal_actions() == []
            assert all(game.min_utility() <= r <= game.max_utility() for r in state.returns())
            assert abs(sum(state.returns())) < 1e-9


def test_bad_parameters_are_refused_naming_them():
    for name, word in [("muggins_all_fives(seats=5)", "seats"), ("muggins_all_fives(hand=20)", "hand"),
                       ("muggins_all_fives(blocked=most)", "blocked")]:
        try:
            pyspiel.load_game(name)
        except Exception as e:  # pyspiel wraps the ValueError
            assert word in str(e), (name, str(e))
        else:
            raise AssertionError(f"{name} loaded")


def play(state, bots, rng):
    """OpenSpiel's evaluate_bots loop without restart_at (its Python
    ISMCTSBot does not implement it)."""
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choice(actions, p=probs))
        else:
            action = bots[state.current_player()].step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
    return state.returns()


def test_openspiel_bots_play_all_fives_block_and_team():
    rng = np.random.RandomState(11)
    for name in ["muggins_all_fives", "muggins_block", "muggins_team", "muggins_all_fives(seats=4,teams=true)"]:
        game = pyspiel.load_game(name)
        n = game.num_players()
        evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(3))
        is_bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 60, random_state=np.random.RandomState(4))
        mcts_bot = mcts.MCTSBot(game, 2.0, 30, evaluator, random_state=np.random.RandomState(5))
        randoms = [uniform_random.UniformRandomBot(p, rng) for p in range(n)]
        returns = play(game.new_initial_state(), [is_bot] + randoms[1:], rng)
        assert len(returns) == n and abs(sum(returns)) < 1e-9
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), [mcts_bot] + randoms[1:], rng)
        assert len(returns) == n and abs(sum(returns)) < 1e-9


def test_muggins_bots_in_evaluate_bots():
    rng = np.random.RandomState(12)
    game = pyspiel.load_game("muggins_all_fives")
    bots = [muggins.openspiel.bot("mstar", budget=2000, worlds=4, seed=1), muggins.Bot("scorer")]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
    assert len(returns) == 2 and returns[0] == -returns[1]


def test_four_seats_play_in_partnerships_by_default_as_muggins_state_does():
    import muggins

    assert muggins.State("all-fives", seats=4).knobs() == {"seats": 4}
    assert pyspiel.load_game("muggins_all_fives(seats=4)")._proto.knobs() == {"seats": 4}
    assert pyspiel.load_game("muggins_all_fives(seats=4,teams=false)")._proto.knobs() == {"seats": 4, "teams": False}
    assert pyspiel.load_game("muggins_all_fives(seats=3)")._proto.knobs() == {"seats": 3}
