//! Networks as named agents (`engine = "net"`): rows that name the engine
//! and the agent, games that are a function of the coordinates, the spec
//! and the model's bytes (its hash is in the spec's id), and every refusal
//! naming the key and the problem.

use jobs::{AgentPlay, Spec};

use crate::run_all;

/// The rows without their timings (a measurement, not a result).
pub(crate) fn untimed(rows: Vec<jobs::GameRow>) -> Vec<jobs::GameRow> {
    rows.into_iter().map(|r| jobs::GameRow { elapsed_us: 0, ..r }).collect()
}

const MODEL: &str = "../models/ppo-block.safetensors";

fn spec(extra: &str) -> String {
    pool_spec("nets", "block", MODEL, extra)
}

/// A spec of `preset` whose agent `policy` is the network at `model`,
/// against random and heaviest.
fn pool_spec(name: &str, preset: &str, model: &str, extra: &str) -> String {
    format!(
        r#"
name = "{name}"
seed = 5
[rules]
preset = "{preset}"
[grid]
observability = ["partial"]
information_source = ["oracle"]
starting_states = "spread:6"
repeats = 1
agents = ["policy"]
opponents = ["random", "heaviest"]
[search]
depth = 2
worlds = 2
[agents.policy]
engine = "net"
net = "{model}"
{extra}
[shards]
games = 8
"#
    )
}

#[test]
fn a_network_plays_its_pairings_and_its_rows_name_it() {
    let s = Spec::from_toml(&spec("")).unwrap();
    let AgentPlay::Net(n) = &s.pool.as_ref().unwrap().agents[0].play else {
        panic!("a net agent")
    };
    assert_eq!(n.sha256.len(), 64);
    assert!(
        s.canonical_json()
            .contains(&format!("\"model_sha256\":\"{}\"", n.sha256))
    );
    let rows = untimed(run_all(&s));
    assert_eq!(rows.len() as u64, s.games());
    assert!(rows.iter().all(|r| r.engine == engine::PlayerEngine::Net));
    assert!(rows.iter().all(|r| r.agent.as_deref() == Some("policy")));
    // The same games again, on one thread: a pure function of the
    // coordinates.
    assert_eq!(rows, untimed(crate::run_all_on(&s, 1)));
    // It wins more than it loses against random (docs/rl.md: +141 Elo).
    let wins = rows
        .iter()
        .filter(|r| r.opponent.as_deref() == Some("random") && r.score_diff > 0)
        .count();
    let losses = rows
        .iter()
        .filter(|r| r.opponent.as_deref() == Some("random") && r.score_diff < 0)
        .count();
    assert!(wins > losses, "{wins} wins, {losses} losses");
}

#[test]
fn a_temperature_draws_from_a_stream_of_the_game_and_changes_the_id() {
    let greedy = Spec::from_toml(&spec("")).unwrap();
    let warm = Spec::from_toml(&spec("temperature = 1.5")).unwrap();
    assert_ne!(greedy.id(), warm.id());
    let rows = untimed(run_all(&warm));
    assert_eq!(rows, untimed(crate::run_all_on(&warm, 1)));
    assert_ne!(
        rows.iter().map(|r| r.score_diff).collect::<Vec<_>>(),
        run_all(&greedy).iter().map(|r| r.score_diff).collect::<Vec<_>>(),
        "a temperature changes some play"
    );
}

#[test]
fn guided_simulations_search_repeatably_change_the_id_and_are_checked() {
    let greedy = Spec::from_toml(&spec("")).unwrap();
    let guided = Spec::from_toml(&spec("simulations = 64")).unwrap();
    assert_ne!(greedy.id(), guided.id());
    assert!(guided.canonical_json().contains("\"simulations\":64"));
    // Without the key the canonical form has none: older specs keep their ids.
    assert!(!greedy.canonical_json().contains("simulations"));
    let AgentPlay::Net(n) = &guided.pool.as_ref().unwrap().agents[0].play else {
        panic!("a net agent")
    };
    assert_eq!((n.simulations, n.policy.simulations()), (64, 64));
    let rows = untimed(run_all(&guided));
    assert_eq!(rows.len() as u64, guided.games());
    assert_eq!(rows, untimed(crate::run_all_on(&guided, 1)));
    let err = |toml: String| Spec::from_toml(&toml).unwrap_err().to_string();
    for bad in [
        "simulations = -1",
        "simulations = 2000000",
        "simulations = 1.5",
        "simulations = \"many\"",
    ] {
        let e = err(spec(bad));
        assert!(
            e.contains("agents.policy.simulations") && e.contains("guided simulations"),
            "{bad}: {e}"
        );
    }
    // `adaptive`: in the id only when set; the same games' count, checked.
    let early = Spec::from_toml(&spec("simulations = 64\nadaptive = true")).unwrap();
    assert!(early.canonical_json().contains("\"adaptive\":true"));
    assert!(!guided.canonical_json().contains("adaptive"));
    assert_ne!(early.id(), guided.id());
    let AgentPlay::Net(n) = &early.pool.as_ref().unwrap().agents[0].play else {
        panic!("a net agent")
    };
    assert!(n.adaptive && n.policy.adaptive());
    let rows = untimed(run_all(&early));
    assert_eq!(rows, untimed(crate::run_all_on(&early, 1)));
    for bad in ["adaptive = true", "simulations = 64\nadaptive = 1"] {
        let e = err(spec(bad));
        assert!(
            e.contains("agents.policy.adaptive") && e.contains("simulations > 0"),
            "{bad}: {e}"
        );
    }
    // `belief`: where the guided search's worlds come from; in the id only
    // when set, repeatable, and checked.
    let policy = Spec::from_toml(&spec("simulations = 64\nbelief = \"policy\"")).unwrap();
    assert!(policy.canonical_json().contains("\"belief\":\"policy\""));
    assert!(!guided.canonical_json().contains("\"belief\":\"policy\""));
    assert_ne!(policy.id(), guided.id());
    let plain = Spec::from_toml(&spec("simulations = 64\nbelief = \"constraints\"")).unwrap();
    assert_eq!(plain.id(), guided.id());
    let rows = untimed(run_all(&policy));
    assert_eq!(rows, untimed(crate::run_all_on(&policy, 1)));
    for bad in ["belief = \"policy\"", "simulations = 64\nbelief = \"model\""] {
        let e = err(spec(bad));
        assert!(
            e.contains("agents.policy.belief") && e.contains("\"head\"") && e.contains("simulations > 0"),
            "{bad}: {e}"
        );
    }
    let e = err(spec("simulations = 64\nbelief = \"head\""));
    assert!(
        e.contains("agents.policy.net") && e.contains("it has no belief head"),
        "{e}"
    );
}

/// `spec(extra)` with the agent's engine `engine` instead of `net`.
fn engine_spec(engine: &str, extra: &str) -> String {
    spec(extra).replace("engine = \"net\"", &format!("engine = \"{engine}\""))
}

/// `engine = "ismcts"` with `net` is the network's guided search of budget
/// x worlds simulations (the same agent, id and games as `engine = "net"`
/// with that many); `mstar` and `expectimax` with `net` search on sampled
/// worlds with its value at the leaves, repeatably, in the id; every key
/// that belongs to another kind of agent is refused by name.
#[test]
fn a_search_engine_with_a_net_plays_the_network_inside_it() {
    let ismcts = Spec::from_toml(&engine_spec("ismcts", "budget = 16\nworlds = 3")).unwrap();
    let net = Spec::from_toml(&spec("simulations = 48")).unwrap();
    assert_eq!(ismcts.id(), net.id());
    let AgentPlay::Net(n) = &ismcts.pool.as_ref().unwrap().agents[0].play else {
        panic!("a net agent")
    };
    assert_eq!((n.simulations, n.leaves), (48, None));
    // [search]'s worlds (2) are the default.
    let by_default = Spec::from_toml(&engine_spec("ismcts", "budget = 24")).unwrap();
    assert_eq!(by_default.id(), net.id());

    let mstar = Spec::from_toml(&engine_spec("mstar", "worlds = 3")).unwrap();
    assert!(
        mstar
            .canonical_json()
            .contains("\"leaves\":{\"engine\":\"mstar\",\"depth\":2,\"worlds\":3}"),
        "{}",
        mstar.canonical_json()
    );
    let expectimax = Spec::from_toml(&engine_spec("expectimax", "worlds = 3")).unwrap();
    let greedy = Spec::from_toml(&spec("")).unwrap();
    assert!(!greedy.canonical_json().contains("leaves"));
    assert_ne!(mstar.id(), expectimax.id());
    assert_ne!(mstar.id(), greedy.id());
    let rows = untimed(run_all(&mstar));
    assert_eq!(rows.len() as u64, mstar.games());
    assert!(
        rows.iter()
            .all(|r| r.engine == engine::PlayerEngine::Net && r.forfeit.is_none())
    );
    assert_eq!(rows, untimed(crate::run_all_on(&mstar, 1)));
    assert_ne!(
        rows,
        untimed(run_all(&greedy)),
        "the search plays other games than the policy"
    );
    let rows = untimed(run_all(&expectimax));
    assert_eq!(rows, untimed(crate::run_all_on(&expectimax, 1)));

    let err = |toml: String| Spec::from_toml(&toml).unwrap_err().to_string();
    for (engine, extra, key, says) in [
        ("dominai", "", "net", "takes no network"),
        ("mstar", "budget = 100", "budget", "takes net, depth, worlds"),
        ("mstar", "temperature = 1", "temperature", "belongs to engine = \"net\""),
        ("ismcts", "simulations = 10", "simulations", "budget x worlds"),
        ("mstar", "depth = 9", "depth", "between 1 and 8"),
        ("expectimax", "worlds = 0", "worlds", "between 1 and 1024"),
        ("mstar", "belief = \"policy\"", "belief", "constraints"),
        ("ismcts", "budget = 100\nbelief = \"uniform\"", "belief", "\"head\""),
        ("ismcts", "budget = 1000000", "budget", "at most 1000000"),
    ] {
        let e = err(engine_spec(engine, extra));
        assert!(
            e.contains(&format!("agents.policy.{key}")) && e.contains(says),
            "{engine} {extra}: {e}"
        );
    }
    // An unlimited depth, or every world, is no value-leaf search.
    let e = err(engine_spec("mstar", "").replace("depth = 2", "depth = \"unlimited\""));
    assert!(e.contains("agents.policy.depth") && e.contains("give depth"), "{e}");
    let e = err(engine_spec("ismcts", "").replace("worlds = 2\n", ""));
    assert!(e.contains("agents.policy.budget") && e.contains("give budget"), "{e}");
    // A network's own knobs on a search without a net are refused, not ignored.
    let plain = |engine: &str, extra: &str| engine_spec(engine, extra).replace(&format!("net = \"{MODEL}\""), "");
    for (engine, extra) in [
        ("mstar", "temperature = 0.5"),
        ("ismcts", "budget = 50\nsimulations = 10"),
    ] {
        let e = err(plain(engine, extra));
        let k = extra.lines().last().unwrap().split(' ').next().unwrap();
        assert!(
            e.contains(&format!("agents.policy.{k}")) && e.contains("belongs to a network's agent"),
            "{engine} {extra}: {e}"
        );
    }
}

#[test]
fn a_network_that_cannot_play_is_refused_naming_the_key() {
    let err = |toml: String| Spec::from_toml(&toml).unwrap_err().to_string();
    let e = err(spec("").replace(&format!("net = \"{MODEL}\""), ""));
    assert!(e.contains("agents.policy.net") && e.contains("model file"), "{e}");
    let e = err(spec("").replace(MODEL, "../models/nothing.safetensors"));
    assert!(
        e.contains("agents.policy.net") && e.contains("nothing.safetensors"),
        "{e}"
    );
    let e = err(spec("temperature = 1000"));
    assert!(e.contains("agents.policy.temperature") && e.contains("1000"), "{e}");
    let e = err(spec("budget = 100"));
    assert!(
        e.contains("agents.policy.budget") && e.contains("no other search settings"),
        "{e}"
    );
    let e = err(spec("").replace("preset = \"block\"", "preset = \"team\""));
    assert!(
        e.contains("agents.policy.net") && e.contains("\"block\", not \"team\""),
        "{e}"
    );
    let e = err(spec("").replace("preset = \"block\"", "preset = \"all-fives\""));
    assert!(
        e.contains("agents.policy.net") && e.contains("\"block\", not \"all-fives\""),
        "{e}"
    );
    // A grid's engines are searches: a network is a named agent.
    let grid = spec("")
        .replace(
            "agents = [\"policy\"]\nopponents = [\"random\", \"heaviest\"]",
            "engine = [\"net\"]\ntarget = [\"random\"]",
        )
        .split("[agents.policy]")
        .next()
        .unwrap()
        .to_string();
    let e = err(grid);
    assert!(
        e.contains("grid.engine") && e.contains("[agents.NAME] engine = \"net\""),
        "{e}"
    );
    // A truncated file is refused naming the file.
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.safetensors");
    let bytes = std::fs::read(MODEL).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = err(spec("").replace(MODEL, &cut.display().to_string()));
    assert!(e.contains("agents.policy.net") && e.contains("cut.safetensors"), "{e}");
}

/// A one-generation All-Fives training run's network (two seats, `rich`),
/// and its spec.
fn all_fives_network(dir: &std::path::Path) -> (std::path::PathBuf, jobs::train::TrainSpec) {
    let spec = jobs::train::TrainSpec::from_toml(
        r#"
name = "fives"
seed = 3
[train]
game = "all-fives"
generations = 1
games = 200
shard_games = 100
hidden = [16]
[train.fit]
epochs = 1
batch = 64
[train.gate]
pairs = 20
[train.eval]
pairs = 10
"#,
    )
    .unwrap();
    crate::train::train(&spec, dir, 2, None).expect("not stopped");
    (dir.join(jobs::layout::BEST_NET), spec)
}

fn fives_spec(model: &std::path::Path, extra: &str) -> String {
    pool_spec("fives-net", "all-fives", &model.display().to_string(), extra)
}

#[test]
fn an_all_fives_network_plays_one_hand_games_from_its_seat_s_view() {
    let dir = tempfile::tempdir().unwrap();
    let (model, train) = all_fives_network(dir.path());
    let s = Spec::from_toml(&fives_spec(&model, "")).unwrap();
    let rows = untimed(run_all(&s));
    assert_eq!(rows.len() as u64, s.games());
    assert!(rows.iter().all(|r| r.engine == engine::PlayerEngine::Net));
    assert!(rows.iter().all(|r| r.agent.as_deref() == Some("policy")));
    // Every seat's view made a state (a failure would be a forfeit).
    assert!(rows.iter().all(|r| r.forfeit.is_none()), "{rows:?}");
    assert_eq!(rows, untimed(crate::run_all_on(&s, 1)));
    // A temperature and guided simulations play too, repeatably.
    let warm = Spec::from_toml(&fives_spec(&model, "temperature = 1.0\nsimulations = 20")).unwrap();
    assert_eq!(untimed(run_all(&warm)), untimed(crate::run_all_on(&warm, 1)));
    // A match, and the info_state encoding (which shows the seat's drawn
    // tiles, which its view does not tell), are refused naming the key.
    let err = |toml: String| Spec::from_toml(&toml).unwrap_err().to_string();
    let e = err(fives_spec(&model, "").replace("[shards]", "[match]\nto = 100\n[shards]"));
    assert!(e.contains("match.to") && e.contains("one hand at a time"), "{e}");
    let info = dir.path().join("info.safetensors");
    let m = net::Model::load(&model).unwrap();
    let meta = net::Meta {
        encoding: "info_state".into(),
        inputs: full::spiel::SpielState::new(full::FullRules::preset(full::Preset::AllFives), 0)
            .encoding_size(full::spiel::Encoding::InfoState),
        ..m.meta.clone()
    };
    let mlp = jobs::train::first_network(&train, meta.inputs, meta.actions);
    std::fs::write(&info, net::Model::to_bytes(&meta, &mlp)).unwrap();
    let e = err(fives_spec(&info, ""));
    assert!(
        e.contains("agents.policy.net") && e.contains("\"rich\" encoding"),
        "{e}"
    );
    // Value leaves play All Fives' hand (draws inside the search drawn from
    // the game's stream), repeatably.
    let leaves = fives_spec(&model, "").replace("engine = \"net\"", "engine = \"expectimax\"");
    let leaves = Spec::from_toml(&leaves).unwrap();
    let rows = untimed(run_all(&leaves));
    assert!(rows.iter().all(|r| r.forfeit.is_none()), "{rows:?}");
    assert_eq!(rows, untimed(crate::run_all_on(&leaves, 1)));
    // At three seats (Python's bots, a VecEnv's opponents; named agents
    // play two sides) a seat's value is not its side's against one other:
    // value leaves are refused there, naming the file.
    let three = dir.path().join("three.safetensors");
    let rules = full::FullRules::new(full::FullConfig::all_fives(3)).unwrap();
    let state = full::spiel::SpielState::new(rules, 0);
    let meta = net::Meta {
        inputs: state.encoding_size(full::spiel::Encoding::Rich),
        ..m.meta.clone()
    };
    let mlp = jobs::train::first_network(&train, meta.inputs, meta.actions);
    std::fs::write(&three, net::Model::to_bytes(&meta, &mlp)).unwrap();
    let agent = jobs::nets::read(&three.display().to_string(), 0.0).unwrap();
    agent.policy.check(&state).expect("its policy plays three seats");
    let how = full::spiel::LeafSearch::new(engine::PlayerEngine::MStar, 2, 4).unwrap();
    let e = agent
        .with_leaves(how)
        .unwrap()
        .policy
        .check(&state)
        .unwrap_err()
        .to_string();
    assert!(e.contains("three.safetensors") && e.contains("3 sides"), "{e}");
}
