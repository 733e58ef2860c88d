//! The job system as operators run it: real coordinator and worker processes
//! on loopback, killed and restarted.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use proto::coordinator_client::CoordinatorClient;
use proto::{ExperimentState, GetExperimentRequest};

use crate::util::{Dir, Proc, TestCommand};

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn coordinator(port: u16, dir: &Path, lease_secs: u64) -> Proc {
    coordinator_with(port, dir, lease_secs, &[])
}

/// A coordinator process on `port` with state and results under `dir`, and
/// `extra` arguments; returns once it accepts connections.
pub(crate) fn coordinator_with(port: u16, dir: &Path, lease_secs: u64, extra: &[&str]) -> Proc {
    let child = TestCommand::new(&[
        "coordinator",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--lease-secs",
        &lease_secs.to_string(),
    ])
    .args(extra)
    .arg("--state")
    .arg(dir.join("state.sqlite"))
    .arg("--results")
    .arg(dir.join("results"))
    .quiet()
    .spawn();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the coordinator did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// `muggins worker` for the coordinator on `port`, with `results` as its
/// results root and output to /dev/null.
pub(crate) fn worker_command(port: u16, results: &Path, threads: usize) -> TestCommand {
    let mut cmd = TestCommand::new(&[
        "worker",
        "--coordinator",
        &format!("http://127.0.0.1:{port}"),
        "--threads",
        &threads.to_string(),
    ]);
    cmd.arg("--results").arg(results).quiet();
    cmd
}

pub(crate) fn worker(port: u16, dir: &Path, threads: usize, exit_when_done: bool) -> Proc {
    let mut cmd = worker_command(port, &dir.join("results"), threads);
    if exit_when_done {
        cmd.arg("--exit-when-done");
    }
    cmd.spawn()
}

pub(crate) fn submit(port: u16, spec: &Path) -> String {
    TestCommand::new(&["submit", "--coordinator", &format!("http://127.0.0.1:{port}")])
        .arg(spec)
        .stdout()
        .trim()
        .to_string()
}

pub(crate) fn experiment(port: u16, id: &str) -> proto::Experiment {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = CoordinatorClient::connect(format!("http://127.0.0.1:{port}"))
            .await
            .unwrap();
        c.get_experiment(GetExperimentRequest { id: id.into() })
            .await
            .unwrap()
            .into_inner()
    })
}

/// A broken machine (`MUGGINS_FAILPOINT=corrupt-rows`, id `broken`)
/// started first, then, once `started` says (within `secs`) it has played
/// a share, two good workers (`good-a`, `good-b`); all exit when nothing
/// is left. Returns the broken one and the good ones.
pub(crate) fn broken_then_good(
    port: u16,
    results: &Path,
    secs: u64,
    started: impl FnMut() -> bool,
) -> (Proc, Vec<Proc>) {
    let broken = worker_command(port, results, 1)
        .args(["--id", "broken", "--exit-when-done"])
        .env("MUGGINS_FAILPOINT", "corrupt-rows")
        .spawn();
    wait_for("the broken worker's first completion", secs, started);
    let good = ["good-a", "good-b"]
        .iter()
        .map(|name| {
            worker_command(port, results, 1)
                .args(["--id", name, "--exit-when-done"])
                .spawn()
        })
        .collect();
    (broken, good)
}

/// Experiment `id` succeeded with the worker `broken` marked bad by its
/// cross-checks (some passed, some failed), as `muggins status` says too.
pub(crate) fn found_broken(port: u16, id: &str) -> proto::Experiment {
    let e = experiment(port, id);
    assert_eq!(e.state, ExperimentState::Succeeded as i32, "{}", e.error);
    assert_eq!(e.bad_workers, ["broken"], "{e:?}");
    assert!(e.checks_failed >= 1 && e.checks_passed >= 1, "{e:?}");
    let status = TestCommand::new(&["status", "--coordinator", &format!("http://127.0.0.1:{port}")])
        .arg(id)
        .stdout();
    assert!(status.contains("bad workers") && status.contains("broken"), "{status}");
    e
}

pub(crate) fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn wait_exit(p: &mut Proc, secs: u64) {
    let status = p
        .wait_timeout(Duration::from_secs(secs))
        .expect("the worker did not exit");
    assert!(status.success(), "worker exited with {status}");
}

/// Runs a two-thread worker until nothing is left (at most `secs`), checks
/// the experiment succeeded, and returns its directory.
fn finish_with_a_worker(port: u16, dir: &Path, id: &str, secs: u64) -> PathBuf {
    let mut w = worker(port, dir, 2, true);
    wait_exit(&mut w, secs);
    let e = experiment(port, id);
    assert_eq!(e.state, ExperimentState::Succeeded as i32, "{}", e.error);
    dir.join("results/faults")
}

pub(crate) fn rows(dir: &Path) -> Vec<jobs::GameRow> {
    let mut out = Vec::new();
    for p in jobs::partitions(dir).unwrap() {
        out.extend(
            jobs::read_partition(&p)
                .unwrap()
                .into_iter()
                .map(|(_, r)| jobs::GameRow { elapsed_us: 0, ..r }),
        );
    }
    out
}

/// What an undisturbed run gives: every shard played directly (with the
/// experiment's own model artifact, checked against its hash, if it has one).
pub(crate) fn expected(spec_text: &str, experiment_dir: &Path) -> Vec<jobs::GameRow> {
    let spec = jobs::Spec::from_toml(spec_text).unwrap();
    let manifest = || -> jobs::Manifest {
        serde_json::from_slice(&std::fs::read(experiment_dir.join("_manifest.json")).unwrap()).unwrap()
    };
    let model = if spec.needs_classifier() {
        let c = manifest().classifier.expect("a classifier entry in the manifest");
        let bytes = std::fs::read(experiment_dir.join(&c.model_file)).unwrap();
        Some(jobs::predictors::Trained::Classifier(
            classifier::Artifact::from_bytes(&bytes, &c.model_hash).unwrap(),
        ))
    } else if spec.needs_predictors() {
        let p = manifest().predictors.expect("a predictors entry in the manifest");
        let bytes = std::fs::read(experiment_dir.join(&p.model_file)).unwrap();
        Some(jobs::predictors::Trained::Predictors(
            jobs::predictors::from_bytes(&bytes, &p.model_hash).unwrap(),
        ))
    } else {
        None
    };
    let ex = jobs::Executor::new(2);
    let mut out = Vec::new();
    for shard in jobs::shards(&spec) {
        let rows = ex
            .run_with(&spec, shard, model.as_ref(), &Default::default(), &Default::default())
            .unwrap();
        out.extend(rows.into_iter().map(|r| jobs::GameRow { elapsed_us: 0, ..r }));
    }
    out
}

/// Predictions add up: correct <= made, the oracle is always right, expectimax
/// makes none and plays the same games whatever the source.
fn check_predictions(rows: &[jobs::GameRow]) {
    use std::collections::HashMap;
    let mut em: HashMap<(String, String, u64, u32), (i32, String)> = HashMap::new();
    for r in rows {
        assert!(r.predictions_correct <= r.predictions, "{r:?}");
        match (r.engine, r.information_source) {
            (engine::PlayerEngine::Expectimax, _) => {
                assert_eq!(r.predictions, 0);
                let key = (
                    r.observability.to_string(),
                    r.target.to_string(),
                    r.starting_state,
                    r.repeat,
                );
                if let Some(p) = em.insert(key, (r.score_diff, r.moves.clone())) {
                    assert_eq!(p, (r.score_diff, r.moves.clone()), "expectimax differs across sources");
                }
            }
            (_, jobs::Source::Oracle) => assert_eq!(r.predictions, r.predictions_correct),
            _ => {}
        }
    }
}

#[test]
fn a_coordinator_and_two_worker_processes_run_the_smoke_spec() {
    let dir = Dir::new();
    let port = free_port();
    let _coord = coordinator(port, dir.path(), 30);
    let spec = dir.create_spec(jobs::SMOKE_SPEC);
    let id = submit(port, &spec);
    let mut a = worker(port, dir.path(), 1, true);
    let mut b = worker(port, dir.path(), 1, true);
    wait_exit(&mut a, 120);
    wait_exit(&mut b, 120);
    let e = experiment(port, &id);
    assert_eq!(e.state, ExperimentState::Succeeded as i32, "{}", e.error);
    let out = dir.join("results/smoke");
    assert!(out.join("_SUCCESS").exists());
    let got = rows(&out);
    let n = jobs::Spec::from_toml(jobs::SMOKE_SPEC).unwrap().games();
    assert_eq!(got.len() as u64, n);
    let keys: std::collections::HashSet<u64> = got.iter().map(|r| r.game_index).collect();
    assert_eq!(keys.len() as u64, n);
    assert_eq!(got, expected(jobs::SMOKE_SPEC, &out));
    check_predictions(&got);
    assert!(out.join("classifier/report.json").exists());
    let manifest: jobs::Manifest = serde_json::from_slice(&std::fs::read(out.join("_manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest.id, id);
    assert_eq!(manifest.shards.len(), 24);
    for s in &manifest.shards {
        let part: Vec<jobs::GameRow> = jobs::read_partition(&out.join(&s.file))
            .unwrap()
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        assert_eq!(jobs::checksum(&part), s.checksum, "{}", s.file);
    }
}

pub(crate) const SLOW_SPEC: &str = r#"
name = "faults"
seed = 21
[rules]
set = 4
hand = 4
boneyard = 7
[grid]
information_source = ["oracle"]
observability = ["partial"]
target = ["random", "scorer"]
starting_states = "0-399"
engine = ["mstar"]
repeats = 1
[search]
depth = 4
[shards]
games = 100
"#;

#[test]
fn a_killed_worker_and_a_restarted_coordinator_lose_nothing() {
    let dir = Dir::new();
    let port = free_port();
    let mut coord = coordinator(port, dir.path(), 1);
    let spec = dir.create_spec(SLOW_SPEC);
    let id = submit(port, &spec);
    let mut a = worker(port, dir.path(), 1, false);
    // Kill the worker while it holds a shard, after it has finished at least one.
    wait_for("a finished shard and a running one", 120, || {
        let e = experiment(port, &id);
        let s = &e.stages[0];
        s.tasks_done >= 1 && s.tasks_running >= 1
    });
    let before = experiment(port, &id);
    assert!(before.stages[0].tasks_running >= 1, "the kill must land mid-shard");
    a.0.kill().unwrap();
    a.0.wait().unwrap();
    // Then kill the coordinator too, and start it again on the same state.
    coord.0.kill().unwrap();
    coord.0.wait().unwrap();
    let _coord = coordinator(port, dir.path(), 1);
    let e = experiment(port, &id);
    assert_eq!(e.state, ExperimentState::Running as i32);
    assert!(
        e.stages[0].tasks_done >= before.stages[0].tasks_done,
        "finished shards stay finished"
    );
    let out = finish_with_a_worker(port, dir.path(), &id, 180);
    let got = rows(&out);
    assert_eq!(got.len(), 800);
    assert_eq!(got, expected(SLOW_SPEC, &out), "content equals an undisturbed run");
    let leftovers = std::fs::read_dir(out.join("games"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .count();
    assert_eq!(leftovers, 0);
}

#[test]
fn muggins_run_writes_the_dataset_and_a_summary() {
    let dir = Dir::new();
    let text = jobs::SMOKE_SPEC
        .replace("name = \"smoke\"", "name = \"local\"")
        .replace("\"0-299\"", "\"0-49\"")
        .replace(r#"["oracle", "classifier", "bayes"]"#, r#"["oracle"]"#);
    let text = without_classifier(&text);
    let spec = dir.create_spec(&text);
    let out = dir.join("res");
    let o = TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .args(["--workers", "2"])
        .success();
    let stdout = o.stdout;
    assert!(stdout.contains("oracle     partial  defender  mstar"), "{stdout}");
    assert!(stdout.contains("600 rows in"), "{stdout}");
    let stderr = o.stderr;
    assert!(stderr.contains("succeeded: 600 games"), "{stderr}");
    assert!(out.join("local/_SUCCESS").exists());
    assert_eq!(rows(&out.join("local")), expected(&text, &out.join("local")));
    // Running it again finds the finished experiment and changes nothing.
    let again = TestCommand::new(&["run"]).arg(&spec).arg("--out").arg(&out).success();
    assert!(again.stderr.contains("resuming experiment"));
    // Off a terminal the progress is plain lines naming the stage, and the
    // in-process coordinator's address is printed for `muggins status`.
    assert!(stderr.contains("coordinator at http://127.0.0.1:"), "{stderr}");
    assert!(
        stderr.contains("] games: ") && stderr.contains("] report: "),
        "{stderr}"
    );
    assert!(!stderr.contains('\x1b'), "no escape codes off a terminal: {stderr}");
    // A re-run checks the files: a deleted partition is played again.
    let part = out.join("local/games/part-00001.parquet");
    std::fs::remove_file(&part).unwrap();
    let rerun = |what: &str| {
        let o = TestCommand::new(&["run"]).arg(&spec).arg("--out").arg(&out).output();
        assert!(o.status.success(), "{what}: {}", o.stderr);
        o.stdout
    };
    let stdout = rerun("after deleting a partition");
    assert!(part.is_file() && stdout.contains("600 rows in"), "{stdout}");
    assert_eq!(rows(&out.join("local")), expected(&text, &out.join("local")));
    // Deleting the output directory is enough to start over.
    std::fs::remove_dir_all(out.join("local")).unwrap();
    let stdout = rerun("after deleting the output directory");
    assert!(
        stdout.contains("600 rows in") && out.join("local/_SUCCESS").is_file(),
        "{stdout}"
    );
    assert_eq!(rows(&out.join("local")), expected(&text, &out.join("local")));
    // A bad spec is refused before anything runs.
    let bad = dir.create_spec(&text.replace("repeats = 1", "repeats = -1"));
    TestCommand::new(&["run"])
        .arg(&bad)
        .arg("--out")
        .arg(dir.join("other"))
        .assert_err(&["grid.repeats = -1"]);
    assert!(!dir.join("other").exists());
}

#[test]
fn a_worker_finishes_its_task_on_sigterm_and_leases_nothing_more() {
    let dir = Dir::new();
    let port = free_port();
    let _coord = coordinator(port, dir.path(), 30);
    let spec = dir.create_spec(SLOW_SPEC);
    let id = submit(port, &spec);
    let mut w = worker(port, dir.path(), 1, false);
    wait_for("a running shard", 120, || {
        experiment(port, &id).stages[0].tasks_running >= 1
    });
    w.signal("-TERM");
    wait_exit(&mut w, 60);
    let e = experiment(port, &id);
    let s = &e.stages[0];
    assert_eq!(s.tasks_running, 0, "the task was finished, not left leased");
    assert!(s.tasks_done >= 1);
    assert!(s.tasks_done < s.tasks_total, "nothing more was leased after SIGTERM");
    assert_eq!(e.state, ExperimentState::Running as i32);
}

#[test]
fn muggins_run_threads_are_the_total_and_two_runs_never_share_a_directory() {
    let dir = Dir::new();
    TestCommand::new(&["run", "--workers", "3", "--threads", "2", "--out"])
        .arg(dir.path())
        .assert_err(&["--threads 2", "--workers 3"]);
    // While another run holds the directory, a second one is refused.
    let lock = std::fs::File::create(dir.join(".muggins-run.lock")).unwrap();
    lock.lock().unwrap();
    let text = jobs::SMOKE_SPEC
        .replace("\"0-299\"", "\"0-9\"")
        .replace(r#"["oracle", "classifier", "bayes"]"#, r#"["oracle"]"#);
    let text = without_classifier(&text);
    let spec = dir.create_spec(&text);
    TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .assert_err(&["another `muggins run`"]);
    drop(lock);
    let err = TestCommand::new(&["run", "--workers", "1", "--threads", "1", "--out"])
        .arg(dir.path())
        .arg(&spec)
        .success()
        .stderr;
    assert!(err.contains("1 worker, 1 thread,"), "{err}");
}

#[test]
fn a_worker_killed_between_completion_and_rename_loses_nothing() {
    let dir = Dir::new();
    let port = free_port();
    let _coord = coordinator(port, dir.path(), 30);
    let text = SLOW_SPEC.replace("\"0-399\"", "\"0-99\"");
    let spec = dir.create_spec(&text);
    let id = submit(port, &spec);
    // This worker dies right after its first completion is accepted.
    let mut dying = worker_command(port, &dir.join("results"), 1)
        .env("MUGGINS_FAILPOINT", "exit-after-complete")
        .spawn();
    let status = dying.0.wait().unwrap();
    assert_eq!(status.code(), Some(86), "the failpoint fired");
    let left: Vec<_> = std::fs::read_dir(dir.join("results/faults/games"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.iter().any(|n| n.starts_with(".part-")) || left.iter().any(|n| n.starts_with("part-")),
        "{left:?}"
    );
    let out = finish_with_a_worker(port, dir.path(), &id, 300);
    assert_eq!(rows(&out), expected(&text, &out));
    assert!(out.join("report/report.json").is_file());
}

#[test]
fn a_worker_with_another_results_directory_stops_naming_both() {
    let dir = Dir::new();
    let port = free_port();
    let _coord = coordinator(port, dir.path(), 30);
    let wrong = dir.create_dir("elsewhere");
    let mut w = worker_command(port, &wrong, 1).stderr_to(Stdio::piped()).spawn();
    let status = w
        .wait_timeout(Duration::from_secs(30))
        .expect("the worker kept running");
    assert!(!status.success());
    let mut err = String::new();
    std::io::Read::read_to_string(w.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    let ours = dir.join("results").canonicalize().unwrap();
    let theirs = wrong.canonicalize().unwrap();
    for part in [ours.to_str().unwrap(), theirs.to_str().unwrap(), "--results"] {
        assert!(err.contains(part), "{err} lacks {part}");
    }
}

#[test]
fn status_shows_no_rate_while_no_game_finishes() {
    let dir = Dir::new();
    let port = free_port();
    let _coord = coordinator(port, dir.path(), 30);
    let spec = dir.create_spec(SLOW_SPEC);
    let id = submit(port, &spec);
    let url = format!("http://127.0.0.1:{port}");
    // No worker: nothing finishes, so there is no rate to show (not `0
    // games/s`, and never a number made of games that went back).
    std::thread::sleep(Duration::from_millis(600));
    for args in [
        vec!["status", &id, "--coordinator", &url],
        vec!["status", "--coordinator", &url],
    ] {
        let text = TestCommand::new(&args).stdout();
        assert!(text.contains(", - games/s"), "{text}");
        assert!(!text.contains(" 0 games/s"), "{text}");
    }
}

/// A spec's text without its `[classifier]` table (a grid without the
/// classifier source refuses one).
fn without_classifier(text: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for l in text.lines() {
        if l.starts_with('[') {
            skipping = l.trim() == "[classifier]";
        }
        if !skipping {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[test]
fn running_again_says_already_complete_and_a_deleted_directory_starts_over_quietly() {
    let dir = Dir::new();
    let text = without_classifier(
        &jobs::SMOKE_SPEC
            .replace("\"0-299\"", "\"0-19\"")
            .replace(r#"["oracle", "classifier", "bayes"]"#, r#"["oracle"]"#),
    );
    let spec = dir.create_spec(&text);
    let run = || {
        TestCommand::new(&["run"])
            .arg(&spec)
            .arg("--out")
            .arg(dir.path())
            .env_remove("MUGGINS_LOG")
            .success()
    };
    run();
    let again = run().stderr;
    assert!(
        again.contains("already complete, 240 games (files checked; nothing to play)"),
        "{again}"
    );
    assert!(!again.contains("0 games/s"), "{again}");
    std::fs::remove_dir_all(dir.join("smoke")).unwrap();
    let over = run().stderr;
    assert!(
        over.contains("starting experiment smoke-") && over.contains(" over "),
        "{over}"
    );
    assert!(!over.contains("WARN"), "{over}");
}
