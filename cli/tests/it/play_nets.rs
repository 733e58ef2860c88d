//! `muggins play --net FILE`: a model file's network as seat 0's player,
//! alone and inside the searches, in block, team and All Fives.

use serde_json::Value;

use crate::util::TestCommand;

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&TestCommand::new(args).stdout()).expect("--json prints JSON")
}

/// The tiles played in a hand of `muggins play --json` (not the passes).
fn plays(hand: &Value) -> usize {
    hand["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["play"].is_string())
        .count()
}

/// Plays `args` twice (`--json`): the same game, and seat 0's player the
/// network of `models/{file}.safetensors`, its name containing `name`.
fn seat0_plays_the_network(args: &[&str], file: &str, name: &str) {
    let a = json(args);
    assert_eq!(a, json(args), "{args:?} is not reproducible");
    let seat0 = a["agents"][0].as_str().unwrap();
    assert!(
        seat0.starts_with(&format!("net ({file}.safetensors")) && seat0.contains(name),
        "{seat0}"
    );
}

/// `--agent mstar|expectimax|ismcts --net FILE`: the network inside the
/// search (value leaves; ismcts its guided search of budget x worlds
/// simulations), named in the game, reproducible; and the flags that do
/// not go with it refused.
#[test]
fn a_search_with_a_network_plays_block_and_team_hands() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (preset, file) in [("block", "train-block"), ("team", "train-team")] {
        let model = root.join(format!("models/{file}.safetensors"));
        let model = model.to_str().unwrap();
        let base = [
            "play",
            "--preset",
            preset,
            "--state",
            "5",
            "--observability",
            "partial",
            "--worlds",
            "3",
            "--net",
            model,
            "--json",
        ];
        for (extra, name) in [
            (
                &["--agent", "mstar", "--depth", "2"][..],
                "mstar depth 2 x 3 worlds, value leaves",
            ),
            (
                &["--agent", "expectimax", "--depth", "3"],
                "expectimax depth 3 x 3 worlds, value leaves",
            ),
            (&["--agent", "ismcts", "--budget", "40"], "120 guided simulations"),
        ] {
            seat0_plays_the_network(&[&base[..], extra].concat(), file, name);
        }
        let refused = |extra: &[&str], says: &[&str]| {
            TestCommand::new(&[&base[..base.len() - 1], extra].concat()).assert_err(says);
        };
        refused(&["--agent", "dominai"], &["--net", "ismcts, mstar and expectimax"]);
        refused(
            &["--agent", "mstar", "--depth", "2", "--budget", "100"],
            &["--budget", "--depth"],
        );
        refused(&["--agent", "mstar", "--depth", "9"], &["depth = 9"]);
    }
    let model = root.join("models/train-block.safetensors");
    TestCommand::new(&[
        "play", "--preset", "block", "--state", "5", "--agent", "mstar", "--depth", "2", "--net",
    ])
    .arg(&model)
    .assert_err(&["--observability partial --worlds K"]);
}

/// `--agent net` on All Fives: the shipped two- and four-seat networks
/// play seat 0's side of one hand from their seats' views, named in the
/// game, reproducible, every one of their plays legal (the hand adds up),
/// alone and inside a search; a network for other seats, and a match,
/// refused naming them.
#[test]
fn an_all_fives_network_plays_a_hand_at_two_and_four_seats() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let model = |file: &str| {
        root.join(format!("models/{file}.safetensors"))
            .to_str()
            .unwrap()
            .to_string()
    };
    for (seats, file) in [("2", "train-all-fives"), ("4", "train-all-fives-4")] {
        let path = model(file);
        let args = [
            "play",
            "--preset",
            "all-fives",
            "--seats",
            seats,
            "--state",
            "4242",
            "--agent",
            "net",
            "--net",
            &path,
            "--json",
        ];
        let a = json(&args);
        assert_eq!(a, json(&args), "{args:?} is not reproducible");
        // It decides from its seat's view whatever the observability.
        let partial = json(&[&args[..], &["--observability", "partial"]].concat());
        assert_eq!(a, partial, "--observability partial plays another hand");
        let agents = a["agents"].as_array().unwrap();
        assert_eq!(agents.len().to_string(), seats);
        for (s, name) in agents.iter().enumerate() {
            let name = name.as_str().unwrap();
            assert_eq!(
                name.starts_with(&format!("net ({file}.safetensors")),
                s % 2 == 0,
                "seat {s}: {name}"
            );
        }
        let hand = &a["hands"][0];
        assert!(plays(hand) >= 5, "{hand}");
        // The network for the other seat count is refused at these seats.
        let other = model(if seats == "2" {
            "train-all-fives-4"
        } else {
            "train-all-fives"
        });
        let mut wrong = args;
        wrong[10] = other.as_str();
        TestCommand::new(&wrong).assert_err(&["--net", "observations of"]);
        TestCommand::new(&[&args[..args.len() - 1], &["--match", "61"]].concat())
            .assert_err(&["--match 61", "one hand"]);
        // Inside a search: the guided search and value leaves, as in specs.
        let searched = ["--observability", "partial", "--worlds", "3"];
        for (agent, name) in [
            (&["--agent", "ismcts", "--budget", "20"][..], "60 guided simulations"),
            (
                &["--agent", "mstar", "--depth", "2"],
                "mstar depth 2 x 3 worlds, value leaves",
            ),
        ] {
            seat0_plays_the_network(&[&args[..7], &args[9..], &searched[..], agent].concat(), file, name);
        }
    }
}

/// `--agent mstar|expectimax --net FILE --eval learned --budget N`: M*'s
/// own search with the learned leaves on the worlds the All-Fives network
/// draws (`--net-belief constraints|policy`), as a spec's `engine =
/// "mstar"` with `net` and `evaluation = "learned"`: named in the game,
/// reproducible, the hand adding up; and each flag that does not go with
/// it refused naming it.
#[test]
fn mstar_with_the_learned_leaves_plays_on_an_all_fives_networks_worlds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let model = root.join("models/train-all-fives-mstar.safetensors");
    let model = model.to_str().unwrap();
    let base = [
        "play",
        "--preset",
        "all-fives",
        "--state",
        "31",
        "--observability",
        "partial",
        "--worlds",
        "3",
        "--net",
        model,
        "--eval",
        "learned",
    ];
    for (extra, name) in [
        (
            &["--agent", "mstar", "--budget", "500"][..],
            "mstar 500 nodes x 3 worlds, learned leaves",
        ),
        (
            &["--agent", "expectimax", "--budget", "400", "--net-belief", "policy"],
            "expectimax 400 nodes x 3 worlds (policy), learned leaves",
        ),
    ] {
        let args = [&base[..], extra, &["--json"]].concat();
        seat0_plays_the_network(&args, "train-all-fives-mstar", name);
        let game = json(&args);
        let hand = &game["hands"][0];
        assert!(plays(hand) >= 7, "{hand}");
        assert_eq!(game["totals"], hand["scores"], "one hand: its scores are the totals");
    }
    let refused = |extra: &[&str], says: &[&str]| {
        TestCommand::new(&[&base[..], extra].concat()).assert_err(says);
    };
    refused(
        &["--agent", "mstar", "--budget", "500", "--depth", "3"],
        &["--depth 3", "--budget N"],
    );
    refused(
        &["--agent", "mstar", "--budget", "500", "--net-belief", "head"],
        &["belief = \"head\"", "\"constraints\" or \"policy\""],
    );
    refused(
        &["--agent", "ismcts", "--budget", "500"],
        &["--eval learned", "ismcts has none"],
    );
    let block = root.join("models/train-block.safetensors");
    TestCommand::new(&[
        "play",
        "--preset",
        "block",
        "--state",
        "5",
        "--observability",
        "partial",
        "--worlds",
        "3",
        "--agent",
        "mstar",
        "--budget",
        "500",
        "--eval",
        "learned",
        "--net",
    ])
    .arg(&block)
    .assert_err(&["--eval learned", "all-fives"]);
}
