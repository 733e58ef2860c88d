//! Tests of the `muggins` binary, run as a real process.

mod cluster;
mod faults;
mod messages;
mod report;

use std::process::{Command, Output};

fn muggins(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_muggins"))
        .args(args)
        .output()
        .expect("run muggins")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs a command that must fail, and checks its message names what is wrong.
fn check_error(args: &[&str], parts: &[&str]) {
    let o = muggins(args);
    assert!(!o.status.success(), "{args:?} should fail");
    let err = stderr(&o);
    for p in parts {
        assert!(err.contains(p), "{args:?}: {err:?} lacks {p:?}");
    }
}

#[test]
fn solve_prints_the_exact_values_as_csv() {
    let want = [
        ("expectimax", ["4.666667", "3.583333", "1.500000"]),
        ("mstar:random", ["4.666667", "3.895833", "2.818287"]),
        ("mstar:scorer", ["4.666667", "3.583333", "1.875000"]),
        ("mstar:defender", ["4.666667", "4.000000", "1.833333"]),
    ];
    for (engine, values) in want {
        let o = muggins(&["solve", "--engine", engine, "--states", "0,3,3333"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
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
fn solve_all_states_has_mean_zero_under_expectimax() {
    let o = muggins(&["solve", "--threads", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let values: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(values.len(), 4200);
    let mean = values.iter().sum::<f64>() / 4200.0;
    assert!(mean.abs() < 1e-6, "mean {mean}");
    // One thread gives the same numbers.
    let one = muggins(&["solve", "--threads", "1"]);
    assert_eq!(stdout(&one), text);
}

#[test]
fn solve_other_rules_and_depth() {
    let o = muggins(&[
        "solve",
        "--set",
        "2",
        "--hand",
        "2",
        "--boneyard",
        "2",
        "--lead",
        "player",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // C(6,2) * C(4,2) = 90 states.
    assert_eq!(stdout(&o).lines().count(), 91);
    let o = muggins(&["solve", "--states", "0-9", "--depth", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 11);
}

#[test]
fn bad_flags_name_the_flag_and_value() {
    check_error(
        &["solve", "--states", "4200"],
        &["--states", "4200", "out of range", "0-4199"],
    );
    check_error(&["solve", "--states", "9-3"], &["--states", "9-3", "backwards"]);
    check_error(&["solve", "--states", "x"], &["--states", "\"x\""]);
    check_error(&["solve", "--engine", "minimax"], &["minimax", "expectimax"]);
    check_error(&["solve", "--set", "12"], &["rules.set = 12", "double-1 to double-9"]);
    check_error(&["solve", "--boneyard", "5"], &["rules.boneyard = 5"]);
    check_error(&["solve", "--lead", "first"], &["rules.lead = first"]);
    check_error(&["solve", "--depth", "0"], &["--depth", "\"0\""]);
    check_error(&["play", "--state", "99999"], &["starting_state = 99999", "0-4199"]);
    check_error(&["play", "--state", "1", "--target", "bully"], &["bully", "scorer"]);
    check_error(
        &["play", "--state", "1", "--observability", "half"],
        &["half", "partial"],
    );
    check_error(&["play", "--state", "1", "--worlds", "0"], &["--worlds", "\"0\""]);
    check_error(
        &["play", "--state", "1", "--source", "classifier"],
        &["--source classifier", "--model FILE", "model-<hash>.json"],
    );
    check_error(
        &[
            "play",
            "--state",
            "1",
            "--source",
            "classifier",
            "--model",
            "/nonexistent/model.json",
        ],
        &["--model /nonexistent/model.json", "cannot read"],
    );
    check_error(
        &["play", "--state", "1", "--source", "bayes", "--model", "m.json"],
        &["--model m.json", "--source bayes", "leave --model out"],
    );
    check_error(
        &["play", "--state", "1", "--source", "psychic"],
        &["psychic", "oracle, classifier or bayes"],
    );
    check_error(&["bench", "--runs", "0"], &["--runs 0"]);
}

#[test]
fn play_shows_a_game_and_its_json_record() {
    let o = muggins(&["play", "--state", "3333", "--target", "scorer"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("deal: boneyard {02,12,13,23} player {01,11,22} target {00,03,33}"),
        "{text}"
    );
    assert!(text.contains("target  plays 33 Left"), "{text}");
    assert!(
        text.contains("domino ending: player 0 - target 3, score_diff -3 (loss)"),
        "{text}"
    );

    let o = muggins(&["play", "--state", "3333", "--target", "scorer", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["score_diff"], -3);
    assert_eq!(v["ending"], "domino");
    assert_eq!(
        v["moves"],
        serde_json::json!(["T33L", "Pd23", "P23L", "T03R", "P22L", "T00R"])
    );
    assert_eq!(v["predictions"], 2);
    assert_eq!(v["deal"]["target"], serde_json::json!(["00", "03", "33"]));

    let o = muggins(&[
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
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["predictions"], 0);
    let diff = v["player_score"].as_i64().unwrap() - v["target_score"].as_i64().unwrap();
    assert_eq!(v["score_diff"].as_i64().unwrap(), diff);
}

#[test]
fn bench_prints_checksums_and_speeds() {
    let o = muggins(&["bench", "--runs", "1", "--states", "0-59"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
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
fn fit_model(spec: &jobs::Spec, dir: &std::path::Path) -> (classifier::Artifact, std::path::PathBuf) {
    let mut samples = Vec::new();
    for shard in jobs::training::sample_shards(spec) {
        samples.extend(
            jobs::training::run_samples(spec, shard)
                .into_iter()
                .map(|r| (r.x, classifier::class_of(r.target_type))),
        );
    }
    let out = jobs::training::fit(spec, &samples, 1).unwrap();
    let path = dir.join(format!("model-{}.json", out.hash));
    std::fs::write(&path, &out.artifact).unwrap();
    (
        classifier::Artifact::from_bytes(&out.artifact, &out.hash).unwrap(),
        path,
    )
}

#[test]
fn play_replays_the_experiments_games_of_every_source() {
    let dir = tempfile::tempdir().unwrap();
    let spec = jobs::Spec::from_toml(PLAY_SPEC).unwrap();
    let (model, model_path) = fit_model(&spec, dir.path());
    let model_arg = model_path.to_str().unwrap();
    let rows = jobs::Executor::new(1)
        .run_with(
            &spec,
            jobs::shards(&spec)[0],
            Some(&model),
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
        let o = muggins(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
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
    let o = muggins(&["play", "--state", "17", "--source", "bayes"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("mstar (bayes) against scorer"), "{}", stdout(&o));
    // A model file whose content is not the hash it is named by is refused.
    std::fs::create_dir(dir.path().join("tampered")).unwrap();
    let tampered = dir.path().join("tampered").join(model_path.file_name().unwrap());
    let mut bytes = std::fs::read(&model_path).unwrap();
    bytes.push(b' ');
    std::fs::write(&tampered, bytes).unwrap();
    // Any file is not a model.
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{}").unwrap();
    for (model, parts) in [
        (&tampered, ["--model", "not a usable model artifact", "content hash"]),
        (&junk, ["--model", "junk.json", "not a model artifact"]),
    ] {
        let model = model.to_str().unwrap();
        check_error(
            &["play", "--state", "17", "--source", "classifier", "--model", model],
            &parts,
        );
    }
}

/// The CLI and the spec parse search settings with the engine's own `FromStr`,
/// so they accept the same values.
#[test]
fn flags_and_specs_share_the_search_limits() {
    check_error(
        &[
            "play",
            "--state",
            "3",
            "--observability",
            "partial",
            "--worlds",
            "2000000",
        ],
        &["--worlds", "2000000", "from 1 to 1000000"],
    );
    check_error(
        &["play", "--state", "3", "--depth", "255"],
        &["--depth", "255", "from 1 to 254"],
    );
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
