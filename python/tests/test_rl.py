"""The reinforcement-learning environments (docs/rl.md): PettingZoo's and
Gymnasium's own checkers on every preset, and `muggins.VecEnv` against
`muggins.State` (the same observations, masks and returns), its
determinism, and every bad input it refuses."""
import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, seed_test

import muggins
import muggins.pettingzoo as mpz

PRESETS = [("block", {}), ("team", {}), ("all-fives", {}), ("all-fives", {"seats": 4}),
           ("all-fives", {"seats": 3}), ("thesis", {})]


@pytest.mark.parametrize("game,knobs", PRESETS)
@pytest.mark.parametrize("encoding", ["info_state", "rich"])
def test_pettingzoo_checkers(game, knobs, encoding):
    api_test(mpz.env(game, encoding=encoding, **knobs), num_cycles=200)
    seed_test(lambda: mpz.env(game, encoding=encoding, **knobs), num_cycles=200)
    parallel_api_test(mpz.parallel_env(game, encoding=encoding, **knobs), num_cycles=200)


def test_pettingzoo_plays_a_game_to_its_returns():
    env = mpz.env("team", render_mode="ansi")
    env.reset(seed=5)
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    # Team: partners share a return, the sides' returns are opposite.
    r = [total[f"player_{s}"] for s in range(4)]
    assert r[0] == r[2] and r[1] == r[3] and r[0] == -r[1]
    assert env.render().startswith("team ")


def test_pettingzoo_refuses_unknown_games_and_knobs():
    with pytest.raises(ValueError, match="game 'go'"):
        mpz.env("go")
    with pytest.raises(ValueError, match="unknown knob"):
        mpz.env("block", seats=4)
    with pytest.raises(ValueError, match="encoding 'pixels'"):
        mpz.env("block", encoding="pixels")


@pytest.mark.parametrize("env_id", sorted(muggins.gym.IDS))
def test_gymnasium_checker(env_id):
    for opponent in ["random", "heaviest", muggins.Bot("random", seed=3), lambda s: s.legal_actions()[0]]:
        check_env(gymnasium.make(env_id, opponent=opponent).unwrapped, skip_render_check=True)


def test_gymnasium_env_plays_against_a_search_engine_with_a_drawn_seat():
    env = gymnasium.make("muggins/Team-v0", opponent=muggins.Bot("ismcts", budget=100, worlds=2), seat=None)
    seats = set()
    for g in range(6):
        obs, info = env.reset(seed=g)
        seats.add(info["seat"])
        done = False
        while not done:
            obs, reward, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        assert reward == info["returns"][info["seat"]]
    assert len(seats) > 1


def test_gymnasium_refusals():
    with pytest.raises(ValueError, match="seat = 5"):
        gymnasium.make("muggins/Block-v0", seat=5)
    with pytest.raises(TypeError, match="opponent"):
        gymnasium.make("muggins/Block-v0", opponent=3.5)
    env = gymnasium.make("muggins/Block-v0", illegal="raise").unwrapped
    _, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=f"action {bad}: not legal"):
        env.step(bad)
    forfeit = gymnasium.make("muggins/Block-v0").unwrapped
    forfeit.reset(seed=0)
    _, reward, done, _, info = forfeit.step(bad)
    assert done and info["forfeit"] and reward == forfeit.state.min_utility()
    with pytest.raises(RuntimeError, match="reset"):
        forfeit.step(0)
    # An opponent function's bad answer is named as the opponent's.
    for answer, error, says in [
        (10**9, ValueError, r"opponent for seat 1 returned action 1000000000: not legal here \(legal: \["),
        (None, TypeError, r"opponent for seat 1 returned None \(NoneType\): expected an action id"),
        ("3", TypeError, r"opponent for seat 1 returned '3' \(str\)"),
    ]:
        env = gymnasium.make("muggins/Block-v0", opponent=lambda s, a=answer: a, seat=0).unwrapped
        with pytest.raises(error, match=says):
            env.reset(seed=1)
            while True:
                env.step(int(np.flatnonzero(env.action_masks())[0]))


def random_legal(rng, info):
    k = (rng.random(len(info["num_legal"])) * info["num_legal"]).astype(np.int64)
    return info["legal"][np.arange(len(k)), k].astype(np.int64)


@pytest.mark.parametrize("game,knobs", PRESETS)
@pytest.mark.parametrize("encoding", ["info_state", "rich", "rich_history"])
def test_vecenv_matches_the_states(game, knobs, encoding):
    env = muggins.VecEnv(game, 6, seed=11, encoding=encoding, **knobs)
    rng = np.random.default_rng(0)
    obs, info = env.reset()
    assert obs.shape == (6, env.single_observation_space.shape[0])
    ended = 0
    for _ in range(60):
        for i in range(6):
            s = env.state(i)
            p = s.current_player()
            assert info["seat"][i] == p
            assert np.array_equal(obs[i], np.asarray(s.encode(p, encoding), np.float32))
            legal = s.legal_actions()
            assert np.flatnonzero(info["action_mask"][i]).tolist() == legal
            assert info["legal"][i][: info["num_legal"][i]].tolist() == legal
            assert (info["legal"][i][info["num_legal"][i]:] == -1).all()
        actor = info["seat"].copy()
        obs, reward, term, trunc, info = env.step(random_legal(rng, info))
        assert not trunc.any()
        assert (reward[~term] == 0).all()
        if term.any():
            ended += int(term.sum())
            assert info["_final_obs"].tolist() == term.tolist()
            for i in np.flatnonzero(term):
                # The reward is the return of the seat that acted last; the returns are zero-sum.
                assert reward[i] == info["returns"][i][actor[i]]
                assert abs(info["returns"][i].sum()) < 1e-3
    assert ended > 0


def trajectory(threads, seed, steps=40, **kw):
    env = muggins.VecEnv("block", 64, seed=seed, threads=threads, **kw)
    rng = np.random.default_rng(1)
    obs, info = env.reset()
    out = [obs.copy()]
    for _ in range(steps):
        obs, reward, term, _, info = env.step(random_legal(rng, info))
        out += [obs.copy(), reward.copy(), term.copy()]
        # The ended games' last observations and returns, which the
        # threads write straight into their rows.
        if term.any():
            out += [info["final_obs"][term].copy(), info["returns"][term].copy()]
    return out


def test_vecenv_is_a_function_of_its_seed_not_its_threads():
    a, b = trajectory(1, 7), trajectory(2, 7)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    c = trajectory(2, 8)
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    d = trajectory(1, 7, opponents="random")
    e = trajectory(3, 7, opponents="random")
    assert all(np.array_equal(x, y) for x, y in zip(d, e))


def test_vecenv_reset_with_a_seed_repeats_and_without_goes_on():
    env = muggins.VecEnv("team", 4, seed=3, opponents="heaviest")
    first, _ = env.reset(seed=9)
    again, _ = env.reset(seed=9)
    assert np.array_equal(first, again)
    later, _ = env.reset()
    assert not np.array_equal(first, later)


def test_vecenv_with_opponents_gives_the_learner_its_seat_and_its_return():
    env = muggins.VecEnv("block", 32, opponents="heaviest", seat=1, seed=2)
    rng = np.random.default_rng(2)
    obs, info = env.reset()
    wins = games = 0
    for _ in range(100):
        assert (info["seat"] == 1).all()
        obs, reward, term, _, info = env.step(random_legal(rng, info))
        for i in np.flatnonzero(term):
            assert reward[i] == info["returns"][i][1]
            games += 1
            wins += reward[i] > 0
    assert games > 100 and wins < games  # heaviest beats random more often than not


@pytest.mark.parametrize("game", ["block", "team", "all-fives"])
def test_vecenv_accepts_exactly_the_legal_actions(game):
    # The mask step checks is kept in Rust, one bit an action in words of
    # 64: every id of the action space, across the words' boundaries, is
    # refused unless it is legal, and the legal ones play.
    env = muggins.VecEnv(game, 3, seed=5, threads=2)
    _, info = env.reset()
    actions_n = info["action_mask"].shape[1]
    rng = np.random.default_rng(2)
    for _ in range(12):
        legal_now = set(int(a) for a in info["legal"][1, : info["num_legal"][1]])
        assert legal_now == set(np.flatnonzero(info["action_mask"][1]).tolist())
        base = info["legal"][np.arange(3), 0].astype(np.int64)
        for a in range(-1, actions_n + 1):
            if a in legal_now:
                continue
            acts = base.copy()
            acts[1] = a
            with pytest.raises(ValueError, match=rf"actions\[1\] = {a}: not a legal action of game 1"):
                env.step(acts)
        k = (rng.random(3) * info["num_legal"]).astype(np.int64)
        _, _, _, _, info = env.step(info["legal"][np.arange(3), k])


def test_vecenv_refuses_bad_input_clearly():
    env = muggins.VecEnv("block", 4, seed=0)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros(4, np.int64))
    _, info = env.reset()
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="dtype float"):
        env.step(np.zeros(4))
    legal = info["legal"][:, 0].astype(np.int64)
    bad = legal.copy()
    bad[2] = int(np.flatnonzero(~info["action_mask"][2])[0])
    with pytest.raises(ValueError, match=rf"actions\[2\] = {bad[2]}: not a legal action of game 2"):
        env.step(bad)
    with pytest.raises(ValueError, match=r"actions\[1\] = -5"):
        env.step(np.array([legal[0], -5, legal[2], legal[3]]))
    env.step(legal)  # nothing was played by the refused steps
    for kw, err, msg in [
        (dict(num_envs=0), ValueError, "num_envs 0"),
        (dict(num_envs=10**9), ValueError, "num_envs 1000000000"),
        (dict(threads=-1), ValueError, "threads -1"),
        (dict(encoding="pixels"), ValueError, "encoding"),
        (dict(illegal="ignore"), ValueError, "illegal"),
        (dict(seed=-1), ValueError, "seed -1"),
        (dict(opponents=["random"]), ValueError, "one per seat"),
        (dict(opponents=3), TypeError, "opponent"),
        (dict(opponents="random", seat=7), ValueError, "seat = 7"),
        (dict(opponents=["random", "random"]), ValueError, "leave the learner"),
        (dict(seats=4), ValueError, "unknown knob"),
        (dict(opponents="scorer"), ValueError, "cannot play block"),
        (dict(opponents="dominai"), ValueError, "cannot play block"),
    ]:
        with pytest.raises(err, match=msg):
            env = muggins.VecEnv("block", **{"num_envs": 2, **kw})
            env.reset()
            env.step(env.action_masks().argmax(1))


def test_vecenv_writes_only_into_arrays_laid_out_as_its_games():
    """The core writes straight into numpy's arrays from its threads: one
    of another dtype, length, order (a Fortran-ordered array is contiguous,
    its items not in the games' order), read-only, not numpy, or the same
    array twice is refused naming it, and the kept mask, not Python's copy
    of it, decides what is legal."""
    env = muggins.VecEnv("block", 4, seed=0, copy=False)
    _, info = env.reset()
    arrays = list(env._arrays)
    read_only = arrays[0].copy()
    read_only.flags.writeable = False
    dim = arrays[0].shape[1]
    for i, bad, err, msg in [
        (0, np.zeros(3, np.float32), ValueError, "obs: a writable contiguous array of"),
        (0, np.zeros((4, dim)), TypeError, "obs: .*float64"),
        (0, np.zeros((dim, 4), np.float32).T, ValueError, "obs: a writable contiguous array"),
        (0, read_only, TypeError, "obs: .*not writeable"),
        (0, bytearray(4 * dim * 4), TypeError, "obs: .*ndarray"),
        (3, arrays[6], TypeError, "seat: .*already borrowed"),
    ]:
        given = list(arrays)
        given[i] = bad
        with pytest.raises(err, match=msg):
            env._core.reset(tuple(given))
    # Marking an illegal action legal in Python's mask changes nothing.
    illegal = int(np.flatnonzero(~info["action_mask"][0])[0])
    info["action_mask"][0, illegal] = True
    actions = info["legal"][:, 0].astype(np.int64)
    actions[0] = illegal
    with pytest.raises(ValueError, match=rf"actions\[0\] = {illegal}: not a legal action"):
        env.step(actions)


def test_vecenv_forfeit_ends_only_that_game():
    env = muggins.VecEnv("block", 3, seed=0, illegal="forfeit")
    _, info = env.reset()
    actor = int(info["seat"][1])
    actions = info["legal"][:, 0].astype(np.int64)
    actions[1] = int(np.flatnonzero(~info["action_mask"][1])[-1])
    _, reward, term, _, info = env.step(actions)
    assert term.tolist() == [False, True, False] and reward[1] == -69.0
    assert info["returns"][1][actor] == -69.0 and info["returns"][1][1 - actor] == 69.0


def test_vecenv_is_a_gymnasium_vector_env_and_make_vec_builds_it():
    env = gymnasium.make_vec("muggins/AllFives-v0", num_envs=3, opponent="scorer", seats=3)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    obs, info = env.reset(seed=1)
    assert obs.shape == env.observation_space.shape and env.observation_space.contains(obs)
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert [n for n, _ in env.pieces][:3] == ["player", "hand", "board"]


def test_no_argument_reaches_a_panic():
    """Every public entry of the vector environment's core with values out
    of range and of the wrong type: exceptions are fine, a Rust panic
    (pyo3's PanicException, a BaseException) fails the test."""
    rng = np.random.default_rng(5)
    junk = [None, -1, 0, 1, 2**70, -2**70, 3.5, "x", b"y", [], [1, 2], {"seed": -3}, np.zeros(3),
            np.zeros(2, np.int64), np.full(2, 10**6, np.int64), np.full(2, -7, np.int64), object()]
    calls = 0
    for _ in range(400):
        args = [junk[rng.integers(len(junk))] for _ in range(5)]
        for make in (
            lambda: muggins._muggins.VecCore(*args),
            lambda: muggins._muggins.VecCore("block", None, args[0], [None, None], {"seed": args[1]}),
            lambda: muggins._muggins.VecCore("all-fives", {"seats": args[2]}, 2, [None] * 2, {"threads": args[3]}),
        ):
            calls += 1
            try:
                make()
            except Exception:
                pass
    env = muggins.VecEnv("block", 2, seed=1)
    env.reset()
    core = env._core
    for _ in range(400):
        a, b = junk[rng.integers(len(junk))], junk[rng.integers(len(junk))]
        for call in (lambda: core.step(a, b), lambda: core.reset(a, b), lambda: core.state(a),
                     lambda: core.step(a, env._arrays), lambda: env.step(a), lambda: env.reset(seed=a)):
            calls += 1
            try:
                call()
            except Exception:
                pass
    assert calls > 3000
    env.reset(seed=1)
    env.step(env.action_masks().argmax(1))  # still works after all that


def test_engines_named_alone_play_with_defaults_and_refusals_come_first():
    env = gymnasium.make("muggins/Block-v0", opponent="ismcts", seat=1)
    obs, info = env.reset(seed=0)
    obs, reward, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    vec = muggins.VecEnv("team", 4, opponents="ismcts", seed=1)
    _, info = vec.reset()
    vec.step(info["legal"][:, 0].astype(np.int64))
    with pytest.raises(ValueError, match="cannot play block"):
        gymnasium.make("muggins/Block-v0", opponent="defender")
    with pytest.raises(ValueError, match="cannot play team"):
        muggins.VecEnv("team", 2, opponents=muggins.Bot("mstar", belief="model"))
