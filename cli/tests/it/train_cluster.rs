//! A training run on a coordinator's worker processes (docs/train.md, "On
//! a cluster"): submitted with `muggins submit`, its self-play partitions
//! and generations played by `muggins worker` processes (one worker and
//! the coordinator killed part-way), it writes the partitions, networks and records that `muggins
//! run` writes in one process, and the coordinator seals it with a
//! manifest of its partitions.

use std::time::Duration;

use serde_json::Value;

use crate::cluster::{
    broken_then_good, coordinator_with, experiment, found_broken, free_port, submit, wait_exit, wait_for, worker,
};
use crate::util::{Dir, TestCommand};

const SPEC: &str = r#"
name = "train-cluster"
seed = 11

[train]
game = "block"
generations = 3
games = 1200
shard_games = 100
hidden = [16]
population_share = 0.5
population = ["random", "past"]

[train.gate]
pairs = 60

[train.eval]
pairs = 40
anchors = ["random"]
"#;

/// `muggins run` of `spec` on two threads, into `dir`'s `local/`: what a
/// cluster's run is compared with.
fn run_in_one_process(dir: &Dir, spec: &std::path::Path) {
    TestCommand::new(&["run", "--threads", "2", "--no-web", "--out"])
        .arg(dir.join("local"))
        .arg(spec)
        .timeout(Duration::from_secs(300))
        .success();
}

/// The run's summary without its timings.
fn summary(dir: &std::path::Path) -> Value {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    for g in v["generations"].as_array_mut().unwrap() {
        g["self_play_seconds"] = Value::Null;
        g["fit"]["seconds"] = Value::Null;
    }
    v
}

/// Every file of the run that is a function of the spec, with its bytes
/// (`generations` of `parts` partitions).
fn deterministic_files(dir: &std::path::Path, generations: u32, parts: u32) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut add = |rel: String| out.push((rel.clone(), std::fs::read(dir.join(&rel)).unwrap()));
    add("best.safetensors".into());
    add("first.json".into());
    for g in 1..=generations {
        for k in 0..parts {
            add(format!("gen-{g:03}/selfplay/part-{k:05}.parquet"));
        }
    }
    let mut nets: Vec<String> = std::fs::read_dir(dir.join("nets"))
        .unwrap()
        .map(|e| format!("nets/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    nets.sort();
    for n in nets {
        add(n);
    }
    out
}

#[test]
fn a_training_run_on_worker_processes_writes_the_networks_of_one_process() {
    let dir = Dir::new();
    let spec = dir.create_spec(SPEC);
    run_in_one_process(&dir, &spec);
    let port = free_port();
    let mut coordinator = coordinator_with(port, dir.path(), 2, &[]);
    let id = submit(port, &spec);
    let stage = |name: &str| {
        let e = experiment(port, &id);
        let s = e.stages.iter().find(|s| s.name == name).unwrap();
        (s.tasks_done, s.tasks_running)
    };
    // A first worker is killed once it has done part of the self-play: a
    // task it held waits out its lease (2 s) and another worker plays it.
    let mut first = worker(port, dir.path(), 1, false);
    wait_for("two self-play partitions", 120, || stage("selfplay").0 >= 2);
    first.signal("-KILL");
    let _ = first.wait_timeout(Duration::from_secs(10));
    // Then the coordinator is killed once a generation (fit, gate,
    // anchors) is under way or done, and started again on its state file:
    // the worker goes on, and a task whose lease lapsed runs again.
    let mut a = worker(port, dir.path(), 1, true);
    wait_for("the first generation", 120, || {
        let (done, running) = stage("generation");
        done + running >= 1
    });
    coordinator.signal("-KILL");
    let _ = coordinator.wait_timeout(Duration::from_secs(10));
    let _coordinator = coordinator_with(port, dir.path(), 2, &[]);
    let mut b = worker(port, dir.path(), 2, true);
    wait_exit(&mut a, 300);
    wait_exit(&mut b, 300);
    let e = experiment(port, &id);
    assert_eq!(e.state, proto::ExperimentState::Succeeded as i32, "{}", e.error);
    assert_eq!((e.games_done, e.games_total), (3600, 3600));
    let names: Vec<&str> = e.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["selfplay", "generation"]);

    let (local, cluster) = (dir.join("local/train-cluster"), dir.join("results/train-cluster"));
    assert_eq!(summary(&cluster), summary(&local));
    same_files(
        &deterministic_files(&cluster, 3, 12),
        &deterministic_files(&local, 3, 12),
    );
    // Sealed: the manifest lists every partition with its file's SHA-256,
    // and the report is written.
    let manifest: Value = serde_json::from_str(&dir.read("results/train-cluster/_manifest.json")).unwrap();
    let shards = manifest["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 36);
    let s = &shards[13];
    assert_eq!(s["file"], "gen-002/selfplay/part-00001.parquet");
    let (_, sha) = jobs::layout::file_digest(&cluster.join("gen-002/selfplay/part-00001.parquet")).unwrap();
    assert_eq!(s["checksum"], sha.as_str());
    assert!(cluster.join("_SUCCESS").is_file() && cluster.join("report.md").is_file());
    let report = std::fs::read_to_string(cluster.join("report.md")).unwrap();
    assert!(report.contains("| 3 |"), "{report}");
}

/// The workers' files are the one-process run's, name for name, byte for byte.
fn same_files(got: &[(String, Vec<u8>)], want: &[(String, Vec<u8>)]) {
    assert_eq!(
        got.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        want.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for ((name, g), (_, w)) in got.iter().zip(want) {
        assert!(
            g == w,
            "{name} differs between the workers' run and the one-process run"
        );
    }
}

/// A training run's self-play partitions are cross-checked as a grid's
/// games are: a broken machine (`MUGGINS_FAILPOINT=corrupt-rows`: every
/// outcome off by a point) beside two good workers is found, every
/// generation from the first it touched is redone, and the run ends with
/// the networks and partitions of an undisturbed one-process run.
#[test]
fn a_broken_worker_in_a_training_run_is_found_by_cross_checks_and_its_generations_redone() {
    let dir = Dir::new();
    let text = SPEC
        .replace("name = \"train-cluster\"", "name = \"train-checked\"")
        .replace("generations = 3", "generations = 2")
        .replace("games = 1200", "games = 400");
    let spec = dir.create_spec(&text);
    run_in_one_process(&dir, &spec);
    let port = free_port();
    let _coordinator = coordinator_with(port, dir.path(), 2, &["--check-fraction", "1"]);
    let id = submit(port, &spec);
    let results = dir.join("results");
    // The broken machine starts first, so it plays a share of the self-play.
    let (_broken, mut good) = broken_then_good(port, &results, 120, || {
        let e = experiment(port, &id);
        e.stages.iter().any(|s| s.name == "selfplay" && s.tasks_done >= 1)
    });
    for w in &mut good {
        wait_exit(w, 300);
    }
    found_broken(port, &id);
    let (local, cluster) = (dir.join("local/train-checked"), dir.join("results/train-checked"));
    assert_eq!(summary(&cluster), summary(&local));
    same_files(&deterministic_files(&cluster, 2, 4), &deterministic_files(&local, 2, 4));
}

/// `train.start` on a cluster: `muggins submit` sends the file, the
/// coordinator keeps a copy in the run's directory, and the workers start
/// from that copy (the file itself is moved away before they start): the
/// run writes the networks of `muggins run` of the same spec. A
/// submission that carries no file (an older client) is refused naming
/// the field.
#[test]
fn a_training_run_that_starts_from_a_file_runs_on_workers_from_the_file_submitted() {
    let dir = Dir::new();
    let seedling = SPEC
        .replace("name = \"train-cluster\"", "name = \"seedling\"")
        .replace("generations = 3", "generations = 1")
        .replace("games = 1200", "games = 200");
    let run_local = |text: &str| run_in_one_process(&dir, &dir.create_spec(text));
    run_local(&seedling);
    let start = dir.join("start.safetensors");
    std::fs::copy(dir.join("local/seedling/best.safetensors"), &start).unwrap();
    let text = SPEC
        .replace("name = \"train-cluster\"", "name = \"started\"")
        .replace("generations = 3", "generations = 2")
        .replace("games = 1200", "games = 400")
        .replace(
            "hidden = [16]",
            &format!("hidden = [16]\nstart = {:?}", start.display().to_string()),
        );
    run_local(&text);
    let port = free_port();
    let _coordinator = coordinator_with(port, dir.path(), 2, &["--check-fraction", "0"]);
    let id = submit(port, &dir.create_spec(&text));
    let bytes = std::fs::read(&start).unwrap();
    std::fs::rename(&start, dir.join("moved.safetensors")).unwrap();
    let mut w = worker(port, dir.path(), 2, true);
    wait_exit(&mut w, 300);
    let e = experiment(port, &id);
    assert_eq!(e.state, proto::ExperimentState::Succeeded as i32, "{}", e.error);
    let (local, cluster) = (dir.join("local/started"), dir.join("results/started"));
    assert_eq!(std::fs::read(cluster.join("start.safetensors")).unwrap(), bytes);
    assert_eq!(summary(&cluster), summary(&local));
    same_files(&deterministic_files(&cluster, 2, 4), &deterministic_files(&local, 2, 4));
    // Without the file's bytes: refused, naming train.start.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let refused = rt.block_on(async {
        let mut c = proto::coordinator_client::CoordinatorClient::connect(format!("http://127.0.0.1:{port}"))
            .await
            .unwrap();
        c.submit_experiment(proto::SubmitExperimentRequest {
            spec_toml: text.replace("seed = 11", "seed = 12"),
            start_model: Vec::new(),
        })
        .await
        .unwrap_err()
    });
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(
        refused.message().contains("train.start") && refused.message().contains("no copy of the file"),
        "{}",
        refused.message()
    );
}
