//! `muggins play --preset`: the full game from the command line, readable
//! and as JSON, its OpenSpiel history read back, and its refusals (`muggins
//! run` on full-game specs is in `full_run`).

use serde_json::Value;

use crate::util::TestCommand;

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&TestCommand::new(args).stdout()).expect("--json prints JSON")
}

#[test]
fn an_all_fives_match_for_four_seats_adds_up() {
    let m = json(&[
        "play",
        "--preset",
        "all-fives",
        "--seats",
        "4",
        "--state",
        "123456789",
        "--match",
        "100",
        "--json",
    ]);
    assert_eq!(
        (m["seats"].as_u64(), m["hand"].as_u64(), m["teams"].as_bool()),
        (Some(4), Some(5), Some(true))
    );
    assert_eq!(
        m["agents"],
        serde_json::json!(["heaviest", "scorer", "heaviest", "scorer"])
    );
    let hands = m["hands"].as_array().unwrap();
    let mut totals = [0u64; 2];
    for (i, h) in hands.iter().enumerate() {
        assert_eq!(h["hands"].as_array().unwrap().len(), 4);
        let scores: Vec<u64> = h["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert!(scores.iter().all(|s| s % 5 == 0), "hand {i}: {scores:?}");
        // The moves' points add up to the hand's scores.
        let mut from_moves = [0u64; 2];
        for mv in h["moves"].as_array().unwrap() {
            if let Some(p) = mv["count_points"].as_u64() {
                from_moves[(mv["seat"].as_u64().unwrap() % 2) as usize] += p;
            }
            if let Some(side) = mv["end_side"].as_u64() {
                from_moves[side as usize] += mv["end_points"].as_u64().unwrap();
            }
        }
        assert_eq!(from_moves.to_vec(), scores, "hand {i}");
        assert!(totals.iter().all(|&t| t < 100), "the match went on after 100");
        totals[0] += scores[0];
        totals[1] += scores[1];
    }
    assert_eq!(m["totals"], serde_json::json!(totals));
    assert!(totals.iter().any(|&t| t >= 100));
    // The readable form says who won.
    let text = TestCommand::new(&[
        "play",
        "--preset",
        "all-fives",
        "--seats",
        "4",
        "--state",
        "123456789",
        "--match",
        "100",
    ])
    .stdout();
    let winner = m["winner_side"].as_u64().unwrap();
    let line = format!("seats {}+{} win with {}", winner, winner + 2, totals[winner as usize]);
    assert!(text.contains(&line), "{text}");
}

#[test]
fn a_team_hand_is_an_openspiel_history_that_replays_to_its_returns() {
    for (preset, game) in [("team", "python_team_dominoes"), ("block", "python_block_dominoes")] {
        for state in ["0", "987654321"] {
            let h = json(&["play", "--preset", preset, "--state", state, "--json"]);
            assert_eq!(h["openspiel_game"], game);
            let history = h["openspiel_history"].to_string();
            let out = TestCommand::new(&["openspiel", "replay", "--game", game])
                .stdin(format!("{{\"history\": {history}}}\n"))
                .stdout();
            let back: Value = serde_json::from_str(out.trim()).unwrap();
            assert_eq!(back["returns"], h["returns"], "{preset} {state}: {out}");
            assert_eq!(
                back["legal"].as_array().unwrap().len(),
                h["plays"].as_array().unwrap().len()
            );
        }
    }
}

#[test]
fn play_refuses_what_a_preset_does_not_have() {
    TestCommand::new(&["play", "--preset", "block", "--state", "1", "--seats", "4"]).assert_err(&[
        "--preset block",
        "seats = 4",
        "seats = 2",
    ]);
    TestCommand::new(&[
        "play",
        "--preset",
        "all-fives",
        "--state",
        "1",
        "--seats",
        "3",
        "--teams",
        "true",
    ])
    .assert_err(&["teams", "seats = 3"]);
    TestCommand::new(&["play", "--preset", "team", "--state", "1", "--match", "100"])
        .assert_err(&["--match", "all-fives"]);
    TestCommand::new(&["play", "--preset", "block", "--state", "1", "--target", "scorer"])
        .assert_err(&["scorer", "random and heaviest"]);
    TestCommand::new(&["play", "--preset", "block", "--state", "137680171200"])
        .assert_err(&["--state 137680171200", "137680171200 deals"]);
    TestCommand::new(&[
        "play",
        "--preset",
        "all-fives",
        "--state",
        "1",
        "--engine",
        "expectimax",
    ])
    .assert_err(&["--preset", "--engine"]);
    TestCommand::new(&["play", "--preset", "all-fives", "--state", "1", "--set", "6"])
        .assert_err(&["--set", "--seats"]);
    TestCommand::new(&["play", "--state", "1", "--target", "heaviest"])
        .assert_err(&["heaviest", "random, scorer and defender"]);
    TestCommand::new(&["play", "--state", "1", "--seats", "3"]).assert_err(&["--preset"]);
    TestCommand::new(&["play", "--preset", "all-fives", "--state", "1", "--agent", "mstar"]).assert_err(&["--depth"]);
    TestCommand::new(&["play", "--preset", "all-fives", "--state", "1", "--depth", "3"])
        .assert_err(&["--depth", "heaviest"]);
    TestCommand::new(&["play", "--preset", "all-fives", "--state", "1", "--agent", "minimax"])
        .assert_err(&["minimax", "mstar, expectimax, ismcts, dominai or net"]);
    let fives = ["play", "--preset", "all-fives", "--state", "1"];
    let with = |extra: &[&str]| TestCommand::new(&[&fives[..], extra].concat());
    with(&["--agent", "ismcts"]).assert_err(&["--agent ismcts", "--budget"]);
    with(&["--agent", "mstar", "--depth", "3", "--observability", "partial"]).assert_err(&["--worlds", "--worlds 16"]);
    with(&["--agent", "mstar", "--depth", "3", "--worlds", "4"]).assert_err(&["--worlds 4", "--observability partial"]);
    with(&["--agent", "mstar", "--budget", "1000000", "--table-mb", "4"]).assert_err(&[
        "--table-mb 4",
        "--budget 1000000",
        "48 MB",
    ]);
    with(&["--agent", "mstar", "--depth", "3", "--eval", "deep"]).assert_err(&[
        "deep",
        "--eval",
        "\"score\" or \"learned\"",
    ]);
    with(&["--agent", "searcher"]).assert_err(&["searcher", "target"]);
    TestCommand::new(&[
        "play", "--preset", "block", "--state", "1", "--agent", "mstar", "--depth", "3", "--eval", "learned",
    ])
    .assert_err(&["--eval learned", "block"]);
    TestCommand::new(&["play", "--preset", "team", "--state", "1", "--agent", "ismcts"])
        .assert_err(&["--agent ismcts", "--budget"]);
    // Block and team take a node budget, and ISMCTS.
    for agent in ["mstar", "ismcts"] {
        let out = TestCommand::new(&[
            "play", "--preset", "team", "--state", "1", "--agent", agent, "--budget", "300",
        ])
        .stdout();
        assert!(out.contains("returns ["), "{agent}: {out}");
    }
    TestCommand::new(&["play", "--state", "1", "--engine", "ismcts"]).assert_err(&["ismcts", "--preset all-fives"]);
    // Block and team under partial observation, as `muggins run` plays
    // them: worlds from uniform or constraints; All Fives' beliefs refused.
    for (agent, budget) in [("ismcts", "300"), ("expectimax", "200")] {
        let line = format!(
            "play --preset team --state 1 --agent {agent} --budget {budget} --observability partial --worlds 4 \
             --belief constraints --json"
        );
        let out = TestCommand::new(&line.split_whitespace().collect::<Vec<_>>()).stdout();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["plays"].as_array().map(|p| p.len() > 4), Some(true), "{agent}: {out}");
    }
    let line =
        "play --preset block --state 1 --agent mstar --depth 3 --observability partial --worlds 4 --belief model";
    TestCommand::new(&line.split_whitespace().collect::<Vec<_>>()).assert_err(&[
        "--belief model",
        "block",
        "\"uniform\" or \"constraints\"",
    ]);
    with(&["--agent", "ismcts", "--budget", "300", "--eval", "learned"]).assert_err(&[
        "--eval learned",
        "ismcts has none",
        "--agent ismcts",
    ]);
    // Beliefs.
    let partial = [
        "--agent",
        "mstar",
        "--budget",
        "500",
        "--observability",
        "partial",
        "--worlds",
        "4",
    ];
    with(&[&partial[..], &["--belief", "bayes"]].concat()).assert_err(&[
        "'bayes'",
        "--belief",
        "uniform",
        "constraints",
        "dominai",
        "model",
    ]);
    with(&["--agent", "mstar", "--depth", "2", "--belief", "constraints"])
        .assert_err(&["--belief constraints", "--observability partial"]);
    TestCommand::new(&[
        "play",
        "--state",
        "1",
        "--observability",
        "partial",
        "--belief",
        "model",
    ])
    .assert_err(&["--belief model", "uniform or constraints"]);
    with(&["--agent", "dominai"]).assert_err(&["--agent dominai", "--observability full", "partial observation"]);
}

#[test]
fn every_full_game_engine_plays_under_partial_observation_reproducibly() {
    let base = [
        "play",
        "--preset",
        "all-fives",
        "--state",
        "77",
        "--observability",
        "partial",
        "--worlds",
        "4",
        "--json",
    ];
    for extra in [
        &["--agent", "mstar", "--budget", "2000"][..],
        &["--agent", "mstar", "--budget", "2000", "--eval", "learned"],
        &["--agent", "expectimax", "--depth", "3"],
        &["--agent", "ismcts", "--budget", "500"],
        &["--agent", "ismcts", "--budget", "500", "--belief", "model"],
        &["--agent", "mstar", "--budget", "2000", "--belief", "constraints"],
        &["--agent", "mstar", "--budget", "2000", "--belief", "dominai"],
        &["--agent", "expectimax", "--depth", "2", "--belief", "model"],
        &["--agent", "dominai"],
        &[
            "--agent",
            "mstar",
            "--budget",
            "2000",
            "--target",
            "searcher",
            "--target-depth",
            "1",
        ],
    ] {
        let args = [&base[..], extra].concat();
        let a = json(&args);
        assert_eq!(a, json(&args), "{args:?} is not reproducible");
        let hand = &a["hands"][0];
        assert!(a["nodes"].as_u64().unwrap() > 0, "{args:?}: {a}");
        let (p0, p1) = (hand["scores"][0].as_u64().unwrap(), hand["scores"][1].as_u64().unwrap());
        assert!(p0 + p1 > 0, "{args:?}: a hand scores");
    }
}

#[test]
fn a_searching_agent_plays_all_fives() {
    for agent in ["mstar", "expectimax"] {
        let m = json(&[
            "play",
            "--preset",
            "all-fives",
            "--state",
            "42",
            "--agent",
            agent,
            "--depth",
            "2",
            "--json",
        ]);
        assert_eq!(m["agents"][0], format!("{agent}/2"));
        assert!(m["nodes"].as_u64().unwrap() > 0, "{agent}: no positions searched");
        assert_eq!(m["hands"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn dominai_plays_team_from_its_own_hand_in_play_and_in_run() {
    let args = [
        "play",
        "--preset",
        "team",
        "--state",
        "12345",
        "--agent",
        "dominai",
        "--target",
        "heaviest",
        "--observability",
        "partial",
        "--json",
    ];
    let a = json(&args);
    assert_eq!(a, json(&args));
    assert_eq!(a["agents"][0], "dominai");
    assert!(a["nodes"].as_u64().unwrap() > 0, "{a}");
    TestCommand::new(&[
        "play",
        "--preset",
        "team",
        "--state",
        "1",
        "--agent",
        "mstar",
        "--depth",
        "2",
        "--observability",
        "partial",
    ])
    .assert_err(&["--worlds all", "--worlds 16"]);
    let dir = crate::util::Dir::new();
    let spec = dir.create_spec(
        r#"
name = "dteam"
seed = 3
[rules]
preset = "team"
[grid]
information_source = ["oracle"]
observability = ["partial"]
target = ["heaviest", "random"]
starting_states = "0-9"
engine = ["dominai"]
repeats = 1
"#,
    );
    let out = TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(300))
        .stdout();
    assert!(out.contains("20 rows in"), "{out}");
    assert!(
        out.lines().any(|l| l.contains("dominai") && l.contains("heaviest")),
        "{out}"
    );
    let csv = dir.read("dteam/report/beliefs.csv");
    assert!(csv.contains("partial,heaviest,dominai,dominai,10,"), "{csv}");
    for r in jobs::read_partition(&dir.join("dteam/games/part-00000.parquet")).unwrap() {
        assert_eq!(r.1.belief, Some(engine::Belief::Dominai));
        assert!(r.1.belief_log_loss.unwrap() > 0.0);
    }
}

#[test]
fn a_block_hand_shows_each_pass_so_the_seats_take_turns() {
    let mut passes = 0;
    for state in ["7", "11", "23", "99"] {
        let out = TestCommand::new(&["play", "--preset", "block", "--state", state]).stdout();
        let seats: Vec<u64> = out
            .lines()
            .filter(|l| l.starts_with("  seat ") && !l.contains("): "))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(seats.len() > 4, "{out}");
        for w in seats.windows(2) {
            assert_eq!(w[1], (w[0] + 1) % 2, "a seat plays twice in a row:\n{out}");
        }
        passes += out.matches("passes (no tile fits)").count();
    }
    assert!(passes > 0, "some hand has a pass");
}
