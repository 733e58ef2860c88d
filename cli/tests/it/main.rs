//! Tests of the `muggins` binary, run as a real process.

mod agents;
mod chunks;
mod cluster;
mod docs;
mod external;
mod faults;
mod full;
mod full_run;
mod messages;
mod openspiel;
mod outputs;
mod pipes;
mod play_nets;
mod report;
mod train;
mod train_cluster;
mod util;
mod walls;

use util::{Dir, TestCommand};

#[test]
fn solve_prints_the_exact_values_as_csv() {
    let want = [
        ("expectimax", ["4.666667", "3.583333", "1.500000"]),
        ("mstar:random", ["4.666667", "3.895833", "2.818287"]),
        ("mstar:scorer", ["4.666667", "3.583333", "1.875000"]),
        ("mstar:defender", ["4.666667", "4.000000", "1.833333"]),
    ];
    for (engine, values) in want {
        let text = TestCommand::new(&["solve", "--engine", engine, "--states", "0,3,3333"]).stdout();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "state,value");
        assert_eq!(lines.len(), 4);
        for (line, (state, v)) in lines[1..].iter().zip([0, 3, 3333].iter().zip(values)) {
            let (s, got) = line.split_once(',').unwrap();
            assert_eq!(s, state.to_string());
            let decimals = got.split('.').nth(1).unwrap().len();
            assert!(decimals >= 6, "{line}");
            let got: f64 = got.parse().unwrap();
            let want: f64 = v.parse().unwrap();
            assert!((got - want).abs() < 5e-7, "{engine} {line} != {v}");
        }
    }
}

#[test]
fn solve_prune_prints_the_same_values() {
    for engine in ["expectimax", "mstar:random", "mstar:scorer", "mstar:defender"] {
        let plain = TestCommand::new(&["solve", "--engine", engine]).stdout();
        let pruned = TestCommand::new(&["solve", "--engine", engine, "--prune"]).stdout();
        assert_eq!(plain.lines().count(), 4_201);
        assert_eq!(plain, pruned, "{engine}");
    }
    let args = [
        "solve",
        "--set",
        "4",
        "--hand",
        "5",
        "--boneyard",
        "5",
        "--states",
        "0-40",
    ];
    let plain = TestCommand::new(&args).stdout();
    assert_eq!(plain, TestCommand::new(&[&args[..], &["--prune"]].concat()).stdout());
}

#[test]
fn solve_all_states_has_mean_zero_under_expectimax() {
    let text = TestCommand::new(&["solve", "--threads", "2"]).stdout();
    let values: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(values.len(), 4200);
    let mean = values.iter().sum::<f64>() / 4200.0;
    assert!(mean.abs() < 1e-6, "mean {mean}");
    // One thread gives the same numbers.
    let one = TestCommand::new(&["solve", "--threads", "1"]).stdout();
    assert_eq!(one, text);
}

#[test]
fn solve_other_rules_and_depth() {
    let text = TestCommand::new(&[
        "solve",
        "--set",
        "2",
        "--hand",
        "2",
        "--boneyard",
        "2",
        "--lead",
        "player",
    ])
    .stdout();
    // C(6,2) * C(4,2) = 90 states.
    assert_eq!(text.lines().count(), 91);
    let text = TestCommand::new(&["solve", "--states", "0-9", "--depth", "2"]).stdout();
    assert_eq!(text.lines().count(), 11);
}

#[test]
fn bad_flags_name_the_flag_and_value() {
    TestCommand::new(&["solve", "--states", "4200"]).assert_err(&["--states", "4200", "out of range", "0-4199"]);
    TestCommand::new(&["solve", "--states", "9-3"]).assert_err(&["--states", "9-3", "backwards"]);
    TestCommand::new(&["solve", "--states", "x"]).assert_err(&["--states", "\"x\""]);
    TestCommand::new(&["solve", "--engine", "minimax"]).assert_err(&["minimax", "expectimax"]);
    TestCommand::new(&["solve", "--set", "12"]).assert_err(&["rules.set = 12", "double-1 to double-9"]);
    TestCommand::new(&["solve", "--boneyard", "5"]).assert_err(&["rules.boneyard = 5"]);
    TestCommand::new(&["solve", "--lead", "first"]).assert_err(&["rules.lead = first"]);
    TestCommand::new(&["solve", "--depth", "0"]).assert_err(&["--depth", "\"0\""]);
    TestCommand::new(&["play", "--state", "99999"]).assert_err(&["starting_state = 99999", "0-4199"]);
    TestCommand::new(&["play", "--state", "1", "--target", "bully"]).assert_err(&["bully", "scorer"]);
    TestCommand::new(&["play", "--state", "1", "--observability", "half"]).assert_err(&["half", "partial"]);
    TestCommand::new(&["play", "--state", "1", "--worlds", "0"]).assert_err(&["--worlds", "'0'", "1 to 1000000"]);
    TestCommand::new(&["play", "--state", "1", "--source", "classifier"]).assert_err(&[
        "--source classifier",
        "--model FILE",
        "model-<hash>.json",
    ]);
    TestCommand::new(&[
        "play",
        "--state",
        "1",
        "--source",
        "classifier",
        "--model",
        "/nonexistent/model.json",
    ])
    .assert_err(&["--model /nonexistent/model.json", "cannot read"]);
    TestCommand::new(&["play", "--state", "1", "--source", "bayes", "--model", "m.json"]).assert_err(&[
        "--model m.json",
        "--source bayes",
        "leave --model out",
    ]);
    TestCommand::new(&["play", "--state", "1", "--source", "psychic"])
        .assert_err(&["psychic", "oracle, classifier or bayes"]);
    TestCommand::new(&["bench", "--runs", "0"]).assert_err(&["--runs 0"]);
}

#[test]
fn play_shows_a_game_and_its_json_record() {
    let text = TestCommand::new(&["play", "--state", "3333", "--target", "scorer"]).stdout();
    assert!(
        text.contains("deal: boneyard {02,12,13,23} player {01,11,22} target {00,03,33}"),
        "{text}"
    );
    assert!(text.contains("target  plays 33 Left"), "{text}");
    assert!(
        text.contains("domino ending: player 0 - target 3, score_diff -3 (loss)"),
        "{text}"
    );

    let json = TestCommand::new(&["play", "--state", "3333", "--target", "scorer", "--json"]).stdout();
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["score_diff"], -3);
    assert_eq!(v["ending"], "domino");
    assert_eq!(
        v["moves"],
        serde_json::json!(["T33L", "Pd23", "P23L", "T03R", "P22L", "T00R"])
    );
    assert_eq!(v["predictions"], 2);
    assert_eq!(v["deal"]["target"], serde_json::json!(["00", "03", "33"]));

    let json = TestCommand::new(&[
        "play",
        "--state",
        "17",
        "--repeat",
        "4",
        "--observability",
        "partial",
        "--target",
        "random",
        "--engine",
        "expectimax",
        "--json",
    ])
    .stdout();
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["predictions"], 0);
    let diff = v["player_score"].as_i64().unwrap() - v["target_score"].as_i64().unwrap();
    assert_eq!(v["score_diff"].as_i64().unwrap(), diff);
}

#[test]
fn bench_prints_checksums_and_speeds() {
    let text = TestCommand::new(&["bench", "--runs", "1", "--states", "0-59"]).stdout();
    let first = text.lines().next().unwrap();
    assert!(first.contains(", 1 run each, median, "), "{first}");
    assert!(!text.contains(" 1 runs") && !text.contains(" 1 threads") && !text.contains(" 1 cores"));
    // Solving all 4,200 states cold expands the same number of nodes every time.
    let line = text
        .lines()
        .find(|l| l.starts_with("expectimax "))
        .expect("expectimax solve line");
    assert!(line.trim_end().ends_with(" 207978"), "{line}");
    for pair in ["mstar/full", "expectimax/full", "mstar/partial", "expectimax/partial"] {
        assert!(text.lines().any(|l| l.starts_with(pair)), "{pair} missing in {text}");
    }
    // The full game's suite: the plain search of its fixed positions expands
    // a fixed number of nodes; pruning expands fewer.
    let nodes = |prefix: &str, depth: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(prefix) && l.split_whitespace().any(|w| w == depth))
            .unwrap_or_else(|| panic!("{prefix} at depth {depth} missing in {text}"));
        line.split_whitespace().last().unwrap().parse().unwrap()
    };
    let plain = nodes("plain (no pruning)", "5");
    assert_eq!(plain, 43_903);
    assert!(nodes("pruned + table", "5") < plain);
    for row in [
        "M*, score so far",
        "M*, learned",
        "ISMCTS, partial observation",
        "M*, K=16, 20,000, score",
    ] {
        assert!(text.lines().any(|l| l.starts_with(row)), "{row} missing in {text}");
    }
    // Perft's leaves and every node it visits; the learned leaf's values.
    let row = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} missing in {text}"))
    };
    assert!(row("depth 8 ").trim_end().ends_with(" 20767865"));
    assert!(row("  every node visited").trim_end().ends_with(" 24134568"));
    assert!(row("features and prediction").trim_end().ends_with(" abe289cd86fa7b16"));
    // A decision's worlds on two threads: the same hands, node for node.
    let last = |l: &str| l.split_whitespace().last().unwrap().to_string();
    for leaves in ["score", "learned"] {
        let one = format!("M*, K=16, 20,000, {leaves} ");
        let two = format!("M*, K=16, 20,000, {leaves}, 2 threads");
        assert_eq!(last(row(&one)), last(row(&two)), "{leaves}: {text}");
    }
}

/// A spec of the games `play_replays_the_experiments_games_of_every_source` replays.
const PLAY_SPEC: &str = r#"
name = "replay"
seed = 11
[grid]
information_source = ["oracle", "classifier", "bayes"]
observability = ["full", "partial"]
target = ["scorer", "defender"]
starting_states = [17, 3333]
engine = ["mstar"]
repeats = 2
[classifier]
kind = "mda"
samples = 600
compare_samples = [600]
folds = 5
holdout = 0.2
"#;

/// Fits the spec's classifier as the fit stage does; writes the artifact as
/// the stage names it, `model-<hash>.json`, in `dir`.
fn fit_model(spec: &jobs::Spec, dir: &Dir) -> (classifier::Artifact, std::path::PathBuf) {
    let mut samples = Vec::new();
    for shard in jobs::training::sample_shards(spec) {
        samples.extend(
            jobs::training::run_samples(spec, shard)
                .into_iter()
                .map(|r| (r.x, classifier::class_of(r.target_type))),
        );
    }
    let out = jobs::training::fit(spec, &samples, 1).unwrap();
    let path = dir.create(format!("model-{}.json", out.hash), &out.artifact);
    (
        classifier::Artifact::from_bytes(&out.artifact, &out.hash).unwrap(),
        path,
    )
}

#[test]
fn play_replays_the_experiments_games_of_every_source() {
    let dir = Dir::new();
    let spec = jobs::Spec::from_toml(PLAY_SPEC).unwrap();
    let (model, model_path) = fit_model(&spec, &dir);
    let model_arg = model_path.to_str().unwrap();
    let trained = jobs::predictors::Trained::Classifier(model.clone());
    let rows = jobs::Executor::new(1)
        .run_with(
            &spec,
            jobs::shards(&spec)[0],
            Some(&trained),
            &Default::default(),
            &Default::default(),
        )
        .unwrap();
    assert_eq!(rows.len() as u64, spec.games());
    let mut predictions = std::collections::HashMap::new();
    for r in &rows {
        let (state, repeat) = (r.starting_state.to_string(), r.repeat.to_string());
        let (source, obs, target) = (
            r.information_source.name(),
            r.observability.to_string(),
            r.target.to_string(),
        );
        let mut args = vec![
            "play",
            "--json",
            "--seed",
            "11",
            "--state",
            &state,
            "--repeat",
            &repeat,
            "--source",
            source,
            "--observability",
            &obs,
            "--target",
            &target,
        ];
        if source == "classifier" {
            args.extend(["--model", model_arg]);
        }
        let json = TestCommand::new(&args).stdout();
        let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        let what = format!("{args:?}");
        assert_eq!(v["information_source"], source, "{what}");
        assert_eq!(v["score_diff"], r.score_diff, "{what}");
        assert_eq!(
            v["moves"].as_array().unwrap().len(),
            r.moves.split(' ').count(),
            "{what}"
        );
        let moves: Vec<&str> = v["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert_eq!(moves.join(" "), r.moves, "{what}");
        assert_eq!(v["predictions"], r.predictions, "{what}");
        assert_eq!(v["predictions_correct"], r.predictions_correct, "{what}");
        assert_eq!(v["nodes"], r.nodes, "{what}");
        let hash = if source == "classifier" {
            serde_json::json!(
                model_path
                    .file_stem()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .strip_prefix("model-")
                    .unwrap()
            )
        } else {
            serde_json::Value::Null
        };
        assert_eq!(v["model_hash"], hash, "{what}");
        *predictions.entry(source).or_insert(0) += r.predictions;
    }
    for source in ["oracle", "classifier", "bayes"] {
        assert!(predictions[source] > 0, "M* with {source} made no predictions");
    }
    // The readable form names the source.
    let text = TestCommand::new(&["play", "--state", "17", "--source", "bayes"]).stdout();
    assert!(text.contains("mstar (bayes) against scorer"), "{text}");
    // A model file whose content is not the hash it is named by is refused.
    let mut bytes = std::fs::read(&model_path).unwrap();
    bytes.push(b' ');
    let tampered = dir.create(
        std::path::Path::new("tampered").join(model_path.file_name().unwrap()),
        bytes,
    );
    // Any file is not a model.
    let junk = dir.create("junk.json", "{}");
    for (model, parts) in [
        (&tampered, ["--model", "not a usable model artifact", "content hash"]),
        (&junk, ["--model", "junk.json", "not a model artifact"]),
    ] {
        let model = model.to_str().unwrap();
        TestCommand::new(&["play", "--state", "17", "--source", "classifier", "--model", model]).assert_err(&parts);
    }
}

/// The CLI and the spec parse search settings with the engine's own `FromStr`,
/// so they accept the same values.
#[test]
fn flags_and_specs_share_the_search_limits() {
    TestCommand::new(&[
        "play",
        "--state",
        "3",
        "--observability",
        "partial",
        "--worlds",
        "2000000",
    ])
    .assert_err(&["--worlds", "2000000", "from 1 to 1000000"]);
    TestCommand::new(&["play", "--state", "3", "--depth", "255"]).assert_err(&["--depth", "255", "from 1 to 254"]);
    let spec = |line: &str| {
        format!(
            "name = \"t\"\nseed = 1\n[grid]\ninformation_source = [\"oracle\"]\nobservability = [\"partial\"]\n\
             target = [\"scorer\"]\nstarting_states = \"0-9\"\nengine = [\"mstar\"]\nrepeats = 1\n[search]\n{line}\n"
        )
    };
    let e = jobs::Spec::from_toml(&spec("worlds = 2000000"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("search.worlds") && e.contains("from 1 to 1000000"), "{e}");
    let e = jobs::Spec::from_toml(&spec("depth = 255")).unwrap_err().to_string();
    assert!(e.contains("search.depth") && e.contains("from 1 to 254"), "{e}");
    assert!(jobs::Spec::from_toml(&spec("worlds = 1000000\ndepth = 254")).is_ok());
}

#[test]
fn bench_coordinator_loads_a_real_coordinator_and_loses_nothing() {
    let text = TestCommand::new(&[
        "bench",
        "coordinator",
        "--workers",
        "40",
        "--duration",
        "3",
        "--heartbeat",
        "0.3",
        "--task-secs",
        "0.6",
    ])
    .timeout(std::time::Duration::from_secs(120))
    .stdout();
    assert!(text.contains("40 simulated workers"), "{text}");
    for rpc in ["lease ", "heartbeat ", "complete "] {
        let line = text
            .lines()
            .find(|l| l.starts_with(rpc))
            .unwrap_or_else(|| panic!("{rpc}: {text}"));
        let calls: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(calls > 0, "{line}");
    }
    assert!(text.contains("leased by two workers at once: 0"), "{text}");
    assert!(text.contains("nothing lost or doubled"), "{text}");
    TestCommand::new(&["bench", "coordinator", "--workers", "0"]).assert_err(&["--workers 0", "1 to 100,000"]);
}
