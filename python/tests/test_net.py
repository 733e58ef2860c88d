"""Model files and the "net" engine (docs/rl.md, "Model files"): files
written from numpy and read by the safetensors package, muggins' forward
pass against numpy's, the engine in a game and as a vector environment's
opponent, and every refusal naming the file and the problem."""
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file

import muggins
import muggins.net as mn

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "models" / "ppo-block.safetensors"


def random_params(rng, inputs, hidden, actions):
    p, width = {}, inputs
    for i, h in enumerate(hidden):
        p[f"w{i}"] = rng.normal(0, np.sqrt(2 / width), (width, h)).astype(np.float32)
        p[f"b{i}"] = rng.normal(0, 0.1, h).astype(np.float32)
        width = h
    p["w_pi"] = rng.normal(0, 0.3, (width, actions)).astype(np.float32)
    p["b_pi"] = np.zeros(actions, np.float32)
    p["w_v"] = rng.normal(0, 0.3, (width, 1)).astype(np.float32)
    p["b_v"] = np.zeros(1, np.float32)
    return p


def numpy_forward(p, x):
    h, i = x, 0
    while f"w{i}" in p:
        h = np.tanh(h @ p[f"w{i}"] + p[f"b{i}"])
        i += 1
    return h @ p["w_pi"] + p["b_pi"], (h @ p["w_v"] + p["b_v"])[:, 0]


def block_params(seed=0):
    inputs = mn.Net(SHIPPED).inputs  # block's rich encoding
    return random_params(np.random.default_rng(seed), inputs, [32, 16], 154)


def test_a_saved_model_reads_back_with_the_safetensors_package_and_evaluates_as_numpy(tmp_path):
    p = block_params()
    path = tmp_path / "m.safetensors"
    net = mn.save(path, p, game="block", encoding="rich", made_by="test", spec_id="s1", generation=2)
    assert net.meta["hidden"] == [32, 16] and net.meta["provenance"]["generation"] == 2
    back = load_file(str(path))
    assert set(back) == set(p) and all(np.array_equal(back[k], p[k]) for k in p)
    with safe_open(str(path), "np") as f:
        meta = json.loads(f.metadata()[mn.META_KEY])
    assert meta["game"] == "block" and meta["encoding"] == "rich" and meta["inputs"] == p["w0"].shape[0]
    x = (np.random.default_rng(1).random((37, net.inputs)) < 0.3).astype(np.float32)
    logits, values = net.forward(x)
    want_l, want_v = numpy_forward(p, x)
    assert np.abs(logits - want_l).max() < 1e-5 and np.abs(values - want_v).max() < 1e-5
    # The same bits on any thread count, and one row alone.
    l2, v2 = net.forward(x, threads=3)
    assert np.array_equal(l2, logits) and np.array_equal(v2, values)
    one_l, one_v = net.forward(x[5])
    assert np.array_equal(one_l, logits[5]) and one_v == values[5]
    # Another network, another hash.
    other = mn.save(tmp_path / "o.safetensors", block_params(1), game="block", encoding="rich", made_by="test")
    assert other.sha256 != net.sha256


def test_a_belief_head_reads_back_places_tiles_and_guides_the_search(tmp_path):
    p = block_params(3)
    rng = np.random.default_rng(4)
    p["w_b"] = rng.normal(0, 0.3, (16, 28 * 2)).astype(np.float32)
    p["b_b"] = rng.normal(0, 0.1, 28 * 2).astype(np.float32)
    path = tmp_path / "b.safetensors"
    net = mn.save(path, p, game="block", encoding="rich", made_by="test", belief_holders=2)
    assert net.meta["belief"] == {"tiles": 28, "holders": 2}
    x = (rng.random(net.inputs) < 0.3).astype(np.float32)
    h, i = x[None, :], 0
    while f"w{i}" in p:
        h = np.tanh(h @ p[f"w{i}"] + p[f"b{i}"])
        i += 1
    z = (h @ p["w_b"] + p["b_b"]).reshape(28, 2)
    want = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    got = net.belief(x)
    assert got.shape == (28, 2) and np.abs(got - want).max() < 1e-5
    with pytest.raises(ValueError, match=r"obs: shape \(5,\)"):
        net.belief(x[:5])
    with pytest.raises(ValueError, match="belief_holders"):
        mn.save(tmp_path / "c.safetensors", p, game="block", encoding="rich", made_by="test")
    # State.holders: the head's target, from the seat's side.
    state = muggins.State("block")
    while state.is_chance_node():
        ids, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(ids, p=probs)))
    hands = state.hands()
    for seat in (0, 1):
        h = state.holders(seat)
        assert [t for t in range(28) if h[t] == 255] == sorted(hands[seat])
        assert [t for t in range(28) if h[t] == 0] == sorted(hands[1 - seat])
        assert h.count(1) == 14
    with pytest.raises(ValueError, match="observer = 2: a seat, 0 to 1"):
        state.holders(2)
    # State.belief_prior: the constraints belief's marginals, which a head
    # with belief_prior="constraints" corrects (Net.belief then needs it).
    for seat in (0, 1):
        m = np.asarray(state.belief_prior(seat))
        h = state.holders(seat)
        assert m.shape == (28, 2)
        seen = np.array([x == 255 for x in h])
        assert np.all(m[seen] == 0) and np.allclose(m[~seen].sum(axis=1), 1.0)
        # Before any play: the opponent's 7 of the 21 hidden tiles.
        assert np.allclose(m[~seen, 0], 7 / 21)
    with pytest.raises(ValueError, match="observer = 2: a seat, 0 to 1"):
        state.belief_prior(2)
    with pytest.raises(ValueError, match="has no prior"):
        net.belief(x, prior=state.belief_prior(0))
    corrects = mn.save(tmp_path / "p.safetensors", p, game="block", encoding="rich", made_by="test",
                       belief_holders=2, belief_prior="constraints")
    assert corrects.meta["belief_prior"] == "constraints"
    with pytest.raises(ValueError, match="pass prior=state.belief_prior"):
        corrects.belief(x)
    m = np.asarray(state.belief_prior(0))
    got = corrects.belief(x, prior=m)
    w = m * np.exp(z)
    hidden = m.sum(axis=1) > 0
    assert np.abs(got[hidden] - w[hidden] / w[hidden].sum(axis=1, keepdims=True)).max() < 1e-5
    assert np.all(got[~hidden] == 0)
    with pytest.raises(ValueError, match="prior: shape"):
        corrects.belief(x, prior=m[:5])
    with pytest.raises(ValueError, match="belief_prior = 'oracle'"):
        mn.save(tmp_path / "q.safetensors", p, game="block", encoding="rich", made_by="test",
                belief_holders=2, belief_prior="oracle")
    # The guided search plays with it (belief="head"), or from worlds
    # weighted by its policy (belief="policy"); scripts/without-belief.py
    # removes the head.
    for belief in ["head", "policy"]:
        guided = muggins.Bot("net", model=str(path), simulations=50, seed=1, belief=belief)
        assert f"{belief} worlds" in guided.name()
        history, returns = play(guided)
        assert play(guided) == (history, returns) and len(history) > 14
        assert play(pickle.loads(pickle.dumps(guided))) == (history, returns)
    with pytest.raises(ValueError, match="belief = \"head\", and it has no belief head"):
        muggins.Bot("net", model=str(SHIPPED), simulations=50, belief="head")
    with pytest.raises(ValueError, match="belief = \"policy\": it weighs a guided search's worlds"):
        muggins.Bot("net", model=str(path), belief="policy")
    with pytest.raises(ValueError, match="belief = \"model\""):
        muggins.Bot("net", model=str(path), simulations=50, belief="model")
    plain = tmp_path / "plain.safetensors"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "without-belief.py"), str(path), str(plain)], check=True)
    stripped = mn.Net(plain)
    assert "belief" not in stripped.meta and stripped.belief(x) is None
    assert np.array_equal(stripped.forward(x)[0], net.forward(x)[0])


def test_bad_files_are_refused_naming_the_file_and_the_problem(tmp_path):
    p = block_params()
    good = tmp_path / "good.safetensors"
    mn.save(good, p, game="block", encoding="rich", made_by="test")
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(good.read_bytes()[:-10])
    with pytest.raises(ValueError, match="cut.safetensors.*not a safetensors file"):
        mn.Net(cut)
    nan = dict(p)
    nan["w1"] = p["w1"].copy()
    nan["w1"][3, 4] = np.nan
    with pytest.raises(ValueError, match="nan.safetensors.*\"w1\" holds NaN"):
        mn.save(tmp_path / "nan.safetensors", nan, game="block", encoding="rich", made_by="test")
    with pytest.raises(ValueError, match="missing.safetensors.*cannot read it"):
        mn.Net(tmp_path / "missing.safetensors")
    net = mn.Net(good)
    with pytest.raises(ValueError, match=r"obs: shape \(3, 5\)"):
        net.forward(np.zeros((3, 5), np.float32))


def play(bot, game="block", seed=0):
    state, rng = muggins.State(game), np.random.default_rng(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            ids, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(ids, p=probs)))
        else:
            state.apply_action(bot.step(state))
    return state.history(), state.returns()


def test_the_net_engine_plays_checks_its_game_and_refuses_bad_settings(tmp_path):
    path = tmp_path / "block.safetensors"
    mn.save(path, block_params(), game="block", encoding="rich", made_by="test")
    greedy = muggins.Bot("net", model=str(path))
    assert play(greedy) == play(greedy)
    assert "net (block.safetensors" in greedy.name() and "greedy" in greedy.name()
    hot = muggins.Bot("net", model=str(path), temperature=1.5, seed=4)
    assert play(hot) == play(pickle.loads(pickle.dumps(hot)))
    # The greedy engine plays the legal id with the highest logit.
    state = muggins.State("block")
    rng = np.random.default_rng(2)
    while state.is_chance_node():
        ids, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(ids, p=probs)))
    logits, _ = mn.Net(path).forward(state.encode(state.current_player(), "rich"))
    legal = state.legal_actions()
    assert greedy.step(state) == legal[int(np.argmax(logits[legal]))]
    with pytest.raises(ValueError, match=r"block.safetensors: it is for game \"block\", not \"team\""):
        play(greedy, "team")
    # A forced move is refused too (it used to be played without a look at the model).
    forced = muggins.State("all-fives")
    while forced.is_chance_node() or len(forced.legal_actions()) != 1:
        forced.apply_action(forced.legal_actions()[0])
    with pytest.raises(ValueError, match=r"block.safetensors: it is for game \"block\", not \"all-fives\""):
        greedy.step(forced)
    with pytest.raises(ValueError, match="needs model"):
        muggins.Bot("net")
    with pytest.raises(ValueError, match="budget: engine \"net\" takes model, temperature, simulations, adaptive, belief and seed"):
        muggins.Bot("net", model=str(path), budget=100)
    with pytest.raises(ValueError, match="simulations = 2000000"):
        muggins.Bot("net", model=str(path), simulations=2_000_000)
    with pytest.raises(ValueError, match="only engine \"net\" takes a model, a temperature, simulations and adaptive"):
        muggins.Bot("ismcts", simulations=10)
    # A search guided by the network: a legal play, the same for a seed
    # and after pickling.
    guided = muggins.Bot("net", model=str(path), simulations=50, seed=3)
    assert "50 guided simulations" in guided.name()
    assert play(guided) == play(pickle.loads(pickle.dumps(guided)))
    # Adaptive: the search stops once its play is decided; a Bot's stream
    # is keyed by the decision, so it makes the whole budget's plays.
    early = muggins.Bot("net", model=str(path), simulations=50, seed=3, adaptive=True)
    assert "adaptive" in early.name() and "adaptive=True" in repr(early)
    assert play(early) == play(guided) == play(pickle.loads(pickle.dumps(early)))
    with pytest.raises(ValueError, match="adaptive = true"):
        muggins.Bot("net", model=str(path), adaptive=True)
    with pytest.raises(TypeError, match="adaptive = 1: True or False"):
        muggins.Bot("net", model=str(path), simulations=50, adaptive=1)
    with pytest.raises(ValueError, match="only engine \"net\" takes"):
        muggins.Bot("ismcts", adaptive=True)
    with pytest.raises(ValueError, match="temperature = -1"):
        muggins.Bot("net", model=str(path), temperature=-1.0)
    with pytest.raises(ValueError, match="only engine \"net\" takes a model"):
        muggins.Bot("random", model=str(path))
    # Search engines with a model: ISMCTS is the network's guided search of
    # budget x worlds simulations; M* and Expectimax value their leaves
    # with it.
    as_ismcts = muggins.Bot("ismcts", model=str(path), budget=25, worlds=2, seed=3)
    assert as_ismcts.name() == guided.name()
    assert play(as_ismcts) == play(guided)
    for engine in ["mstar", "expectimax"]:
        leaves = muggins.Bot(engine, model=str(path), depth=2, worlds=4, seed=5)
        assert f"{engine} depth 2 x 4 worlds, value leaves" in leaves.name()
        assert play(leaves) == play(pickle.loads(pickle.dumps(leaves)))
    with pytest.raises(ValueError, match="engine \"dominai\" takes no network"):
        muggins.Bot("dominai", model=str(path))
    with pytest.raises(ValueError, match="budget: engine \"mstar\" with a model takes model, depth, worlds, belief, evaluation, seed"):
        muggins.Bot("mstar", model=str(path), budget=100)
    with pytest.raises(ValueError, match="depth = 9: 1 to 8 plays"):
        muggins.Bot("expectimax", model=str(path), depth=9)
    with pytest.raises(ValueError, match="give budget=N"):
        muggins.Bot("ismcts", model=str(path))
    with pytest.raises(ValueError, match="nowhere.safetensors"):
        muggins.Bot("net", model=str(tmp_path / "nowhere.safetensors"))


def test_the_shipped_network_is_an_opponent_in_a_vector_environment_and_beats_a_naive_player():
    """The learner's seat 0 plays the first legal id; seat 1 is the shipped
    network: it wins most of 200 games (a broken forward pass, encoding or
    file would play at random and win about half)."""
    games = 200
    env = muggins.VecEnv("block", games, opponents=muggins.Bot("net", model=str(SHIPPED)), seat=0, seed=9)
    obs, info = env.reset(seed=9)
    outcome = np.zeros(games)
    done = np.zeros(games, bool)
    while not done.all():
        obs, reward, term, trunc, info = env.step(info["legal"][:, 0].astype(np.int64))
        for i in np.flatnonzero(term & ~done):
            outcome[i] = np.sign(info["returns"][i][1])
            done[i] = True
    assert (outcome > 0).mean() > 0.6, (outcome > 0).mean()


def test_muggins_play_agent_net_decides_as_the_bot_does():
    """`muggins play --agent net --net FILE` (the engine inside the game
    loop, reading the OpenSpiel state it keeps beside the deal) chooses every
    seat-0 play the Python Bot("net") chooses on the same history."""
    import os
    import subprocess

    binary = os.environ.get("MUGGINS_BIN")
    assert binary and os.path.exists(binary), "set MUGGINS_BIN to the muggins binary (scripts/python-test.sh does)"
    bot = muggins.Bot("net", model=str(SHIPPED))
    checked = 0
    for deal in range(6):
        out = subprocess.run(
            [binary, "play", "--preset", "block", "--state", str(deal), "--agent", "net", "--net", str(SHIPPED),
             "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
        game = json.loads(out)
        assert game["agents"][0].startswith("net (ppo-block.safetensors")
        state = muggins.State("block")
        for action in game["openspiel_history"]:
            if not state.is_chance_node() and state.current_player() == 0:
                assert bot.step(state) == action, (deal, state.history())
                checked += 1
            state.apply_action(action)
        assert state.is_terminal()
        assert [int(r) for r in state.returns()] == [int(r) for r in game["returns"]]
    assert checked > 20


def test_an_all_fives_network_plays_as_bot_guided_and_as_an_opponent(tmp_path):
    """A network for All Fives (two seats, the rich encoding: what
    `train.game = "all-fives"` trains) plays whole hands as `Bot("net")`,
    greedy and guided, the same twice, and is a vector environment's
    opponent; a block network is refused on an All-Fives state."""
    state = muggins.State("all-fives")
    inputs = len(state.encode(0, "rich"))
    path = tmp_path / "fives.safetensors"
    params = random_params(np.random.default_rng(5), inputs, [32], state.num_distinct_actions())
    mn.save(path, params, game="all-fives", encoding="rich", made_by="test")
    greedy = muggins.Bot("net", model=str(path))
    history, returns = play(greedy, "all-fives")
    assert (history, returns) == play(greedy, "all-fives")
    assert sum(returns) == 0 and len(history) > 14
    guided = muggins.Bot("net", model=str(path), simulations=30, seed=2)
    assert play(guided, "all-fives") == play(pickle.loads(pickle.dumps(guided)), "all-fives")
    env = muggins.VecEnv("all-fives", 4, opponents=greedy, seat=0, seed=1)
    obs, info = env.reset(seed=1)
    for _ in range(40):
        obs, reward, term, trunc, info = env.step(info["legal"][:, 0].astype(np.int64))
    assert obs.shape == (4, env.observation_space.shape[1])
    block = tmp_path / "block.safetensors"
    mn.save(block, block_params(), game="block", encoding="rich", made_by="test")
    with pytest.raises(ValueError, match=r"block.safetensors: it is for game \"block\", not \"all-fives\""):
        play(muggins.Bot("net", model=str(block)), "all-fives")
    # A two-seat network at three seats, at a forced move as at a choice.
    three = muggins.State("all-fives", seats=3)
    while three.is_chance_node() or len(three.legal_actions()) != 1:
        three.apply_action(three.legal_actions()[0])
    with pytest.raises(ValueError, match=r"fives.safetensors: it is for observations of \d+ floats, not \d+"):
        greedy.step(three)


def test_mstar_with_the_learned_leaves_on_a_networks_worlds_plays_all_fives_as_a_bot():
    """`Bot("mstar", model=..., evaluation="learned", budget=N, worlds=K,
    belief="constraints"|"policy")`: M*'s own search with the learned
    leaves on the worlds the shipped All-Fives network draws (a spec's
    `engine = "mstar"` with `net` and `evaluation = "learned"`): named as
    `muggins run` names it, the same hands twice and after pickling, far
    better than `random` over both seatings of 12 deals (a search that
    read its worlds or leaves wrong would be near level), and each bad
    setting refused naming it."""
    model = str(ROOT / "models" / "train-all-fives-mstar.safetensors")
    bots = {}
    for belief in ["constraints", "policy"]:
        bot = muggins.Bot("mstar", model=model, evaluation="learned", budget=300, worlds=4, belief=belief, seed=7)
        suffix = " (policy)" if belief == "policy" else ""
        assert f"mstar 300 nodes x 4 worlds{suffix}, learned leaves" in bot.name(), bot.name()
        assert play(bot, "all-fives", seed=3) == play(pickle.loads(pickle.dumps(bot)), "all-fives", seed=3)
        bots[belief] = bot
    # adaptive=True stops the worlds once the play is decided (named so).
    stopped = muggins.Bot("mstar", model=model, evaluation="learned", budget=300, worlds=12, belief="policy",
                          adaptive=True, seed=7)
    assert "mstar 300 nodes x 12 worlds (policy), adaptive, learned leaves" in stopped.name(), stopped.name()
    assert play(stopped, "all-fives", seed=3) == play(pickle.loads(pickle.dumps(stopped)), "all-fives", seed=3)
    rand = muggins.Bot("random", seed=1)
    margin = []
    for deal in range(12):
        for seat in [0, 1]:
            state, rng = muggins.State("all-fives"), np.random.default_rng(100 + deal)
            while not state.is_terminal():
                if state.is_chance_node():
                    ids, probs = zip(*state.chance_outcomes())
                    state.apply_action(int(rng.choice(ids, p=probs)))
                else:
                    mover = bots["policy"] if state.current_player() == seat else rand
                    state.apply_action(mover.step(state))
            margin.append(state.returns()[seat])
    assert np.mean(np.array(margin) > 0) >= 2 / 3 and np.mean(margin) >= 10, margin
    # A vector environment's opponent: the same rewards twice from one seed,
    # and the learner's first legal play loses to it over the games that end.
    def run_env():
        env = muggins.VecEnv("all-fives", 2, opponents=bots["constraints"], seat=0, seed=4)
        obs, info = env.reset(seed=4)
        rewards = []
        for _ in range(60):
            obs, reward, term, trunc, info = env.step(info["legal"][:, 0].astype(np.int64))
            rewards.append(reward.copy())
        return np.array(rewards)
    rewards = run_env()
    assert np.array_equal(rewards, run_env())
    assert rewards.sum() < 0, rewards.sum()
    with pytest.raises(ValueError, match="budget: engine \"mstar\" with a model and evaluation=\"learned\" spends"):
        muggins.Bot("mstar", model=model, evaluation="learned", worlds=4)
    with pytest.raises(ValueError, match="depth: engine \"mstar\" with a model and evaluation=\"learned\" takes"):
        muggins.Bot("mstar", model=model, evaluation="learned", budget=300, depth=3)
    with pytest.raises(ValueError, match="belief = \"head\""):
        muggins.Bot("expectimax", model=model, evaluation="learned", budget=300, belief="head")
    with pytest.raises(ValueError, match="budget = 20000000"):
        muggins.Bot("mstar", model=model, evaluation="learned", budget=20_000_000)
    with pytest.raises(ValueError, match="evaluation"):
        muggins.Bot("mstar", model=model, evaluation="deep", budget=300)
    with pytest.raises(ValueError, match="evaluation: engine \"ismcts\" with a model takes model, budget, worlds, adaptive, belief, seed"):
        muggins.Bot("ismcts", model=model, evaluation="learned", budget=300)
    block = muggins.Bot("mstar", model=str(ROOT / "models" / "train-block.safetensors"), evaluation="learned", budget=300)
    with pytest.raises(ValueError, match="the learned leaves .* value All-Fives positions, and this game is block"):
        play(block, "block")


def test_a_rich_network_widened_to_rich_history_gives_the_same_outputs(tmp_path):
    # scripts/widen-encoding.py: zero weights for the inputs rich_history
    # adds, so the widened network plays as the one it came from; the
    # history pieces count what each seat's plays showed.
    # A belief head with a layer of its own over the observation (w_bt),
    # widened too.
    p = block_params(5)
    rng = np.random.default_rng(5)
    p["w_bt"] = rng.normal(0, 0.2, (p["w0"].shape[0], 12)).astype(np.float32)
    p["b_bt"] = rng.normal(0, 0.1, 12).astype(np.float32)
    p["w_b"] = rng.normal(0, 0.3, (12, 28 * 2)).astype(np.float32)
    p["b_b"] = rng.normal(0, 0.1, 28 * 2).astype(np.float32)
    src, out = tmp_path / "rich.safetensors", tmp_path / "wide.safetensors"
    rich = mn.save(src, p, game="block", encoding="rich", made_by="test", belief_holders=2, belief_prior="constraints")
    assert rich.meta["belief_hidden"] == 12
    subprocess.run([sys.executable, str(ROOT / "scripts" / "widen-encoding.py"), str(src), str(out)], check=True)
    wide = mn.Net(out)
    assert wide.meta["encoding"] == "rich_history" and wide.inputs == rich.inputs + 42
    assert wide.meta["belief_prior"] == "constraints" and "widened" in wide.meta["provenance"]["made_by"]
    state, compared, counted = muggins.State("block"), 0, 0
    while not state.is_terminal():
        if state.is_chance_node():
            ids, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(ids, p=probs)))
            continue
        seat = state.current_player()
        x, xh = state.encode(seat, "rich"), state.encode(seat, "rich_history")
        assert xh[:len(x)] == x
        counted = max(counted, int(sum(xh[len(x):])))
        for a, b in zip(rich.forward(x), wide.forward(xh)):
            assert np.array_equal(a, b)
        prior = state.belief_prior(seat)
        assert np.array_equal(rich.belief(x, prior=prior), wide.belief(xh, prior=prior))
        z = (np.tanh(np.asarray(x, np.float64) @ p["w_bt"] + p["b_bt"]) @ p["w_b"] + p["b_b"]).reshape(28, 2)
        m = np.asarray(prior)
        w = m * np.exp(z)
        hidden = m.sum(axis=1) > 0
        got = rich.belief(x, prior=prior)
        assert np.abs(got[hidden] - w[hidden] / w[hidden].sum(axis=1, keepdims=True)).max() < 1e-4
        compared += 1
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert compared > 5 and counted > 0
    # Only a rich network widens.
    again = subprocess.run([sys.executable, str(ROOT / "scripts" / "widen-encoding.py"), str(out), str(tmp_path / "x")],
                           capture_output=True, text=True)
    assert again.returncode != 0 and "not \"rich\"" in again.stderr
