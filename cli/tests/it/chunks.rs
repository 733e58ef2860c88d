//! Heavy tasks that lose no work, and workers that are checked: a games
//! task commits its games in chunks, a killed worker's successor plays only
//! the games after the last chunk; a seeded sample of committed ranges is
//! replayed by other workers, and a worker whose games are wrong is marked
//! bad and its work redone.

use std::time::Duration;

use proto::ExperimentState;

use crate::cluster::{
    broken_then_good, coordinator_with, expected, experiment, found_broken, free_port, rows, submit, wait_for,
    worker_command,
};
use crate::faults::scrape;
use crate::util::Dir;

/// One shard of 40 double-6 matches to 50 searched 10 plies deep: a few
/// tenths of a second a match on one thread, so chunks of 0.4 s hold a few
/// matches each (with their per-hand rows beside them).
const HEAVY: &str = r#"
name = "chunky"
seed = 2
[rules]
preset = "all-fives"
[match]
to = 50
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer"]
starting_states = "spread:40"
engine = ["expectimax"]
repeats = 1
[search]
depth = 10
[shards]
games = 40
"#;

#[test]
fn a_killed_worker_loses_at_most_its_last_chunk_and_only_unplayed_games_are_played_again() {
    let dir = Dir::new();
    let (port, metrics) = (free_port(), free_port());
    let metrics_at = format!("127.0.0.1:{metrics}");
    let _coord = coordinator_with(
        port,
        dir.path(),
        2,
        &["--metrics-listen", &metrics_at, "--check-fraction", "0"],
    );
    let id = submit(port, &dir.create_spec(HEAVY));
    let results = dir.join("results");
    let a = worker_command(port, &results, 1)
        .args(["--chunk-secs", "0.4", "--id", "first"])
        .spawn();
    wait_for("two committed chunks", 120, || {
        scrape(metrics, "muggins_chunks_committed_total") >= 2
    });
    a.signal("-KILL");
    drop(a);
    let chunks_before = scrape(metrics, "muggins_chunks_committed_total");
    let log = dir.join("second.log");
    let mut b = worker_command(port, &results, 1)
        .args(["--chunk-secs", "0.4", "--id", "second", "--exit-when-done"])
        .stderr_to(std::fs::File::create(&log).unwrap())
        .spawn();
    let status = b
        .wait_timeout(Duration::from_secs(180))
        .expect("the second worker finishes");
    assert!(status.success());
    let e = experiment(port, &id);
    assert_eq!(e.state, ExperimentState::Succeeded as i32, "{}", e.error);
    // The second worker read the first's chunks back and played the rest.
    let text = std::fs::read_to_string(&log).unwrap();
    let resumed: u64 = text
        .lines()
        .find(|l| l.contains("resuming"))
        .and_then(|l| l.split("resumed=").nth(1)?.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no resume line in the second worker's log:\n{text}"));
    assert!(resumed > 0 && resumed < 40, "resumed {resumed} of 40 matches");
    assert!(chunks_before >= 2);
    // Every game exactly once, each the row an undisturbed run gives.
    let exp = results.join("chunky");
    let got = rows(&exp);
    let mut keys: Vec<u64> = got.iter().map(|r| r.game_index).collect();
    keys.dedup();
    assert_eq!(keys, (0..40).collect::<Vec<_>>());
    assert_eq!(got, expected(HEAVY, &exp));
    // The per-hand table, put together from the chunks' and the rest's: the
    // hands an undisturbed run plays, each once.
    let hands: Vec<jobs::HandRow> = jobs::read_hands(&exp.join("hands/part-00000.parquet"))
        .unwrap()
        .into_iter()
        .map(|(_, h)| h)
        .collect();
    let spec = jobs::Spec::from_toml(HEAVY).unwrap();
    let want = jobs::Executor::new(2)
        .run_with_extras(
            &spec,
            jobs::shards(&spec)[0],
            None,
            &Default::default(),
            &Default::default(),
        )
        .unwrap()
        .hands;
    assert_eq!(hands, want);
    // Sealed: the chunk files are gone, the partitions are the experiment.
    assert!(!exp.join(jobs::layout::CHUNKS_DIR).exists());
    let workers = std::fs::read_to_string(exp.join(jobs::layout::WORKERS_FILE)).unwrap();
    assert!(
        workers.contains("\"first\"") && workers.contains("\"second\""),
        "{workers}"
    );
}

const FAST: &str = r#"
name = "checked"
seed = 9
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer", "defender"]
starting_states = "spread:24"
engine = ["expectimax"]
repeats = 1
[search]
depth = 3
[shards]
games = 6
"#;

#[test]
fn a_worker_whose_games_are_wrong_is_found_by_cross_checks_and_its_work_redone() {
    let dir = Dir::new();
    let (port, metrics) = (free_port(), free_port());
    let metrics_at = format!("127.0.0.1:{metrics}");
    let _coord = coordinator_with(
        port,
        dir.path(),
        2,
        &["--metrics-listen", &metrics_at, "--check-fraction", "1"],
    );
    let id = submit(port, &dir.create_spec(FAST));
    let results = dir.join("results");
    // The broken machine starts first, so it plays a share of the grid.
    let (_bad, mut good) = broken_then_good(port, &results, 60, || scrape(metrics, "muggins_completions_total") >= 1);
    for w in &mut good {
        let Some(status) = w.wait_timeout(Duration::from_secs(240)) else {
            panic!("a good worker did not finish: {:?}", experiment(port, &id));
        };
        assert!(status.success());
    }
    found_broken(port, &id);
    assert_eq!(scrape(metrics, "muggins_bad_workers"), 1);
    assert!(scrape(metrics, "muggins_checks_failed_total") >= 1);
    // The broken worker's games were all played again: the rows are right.
    let exp = results.join("checked");
    assert_eq!(rows(&exp), expected(FAST, &exp));
}

#[test]
fn a_lone_workers_cross_check_says_what_it_waits_for_and_until_when() {
    let dir = Dir::new();
    let port = free_port();
    let _coord = coordinator_with(port, dir.path(), 2, &["--check-fraction", "1"]);
    let id = submit(port, &dir.create_spec(FAST));
    let results = dir.join("results");
    let _lone = worker_command(port, &results, 1).args(["--id", "lone"]).spawn();
    wait_for("a check task waiting for another worker", 120, || {
        experiment(port, &id)
            .stages
            .iter()
            .any(|s| s.name == "check" && s.waiting_until_unix_ms > 0)
    });
    let url = format!("http://127.0.0.1:{port}");
    let out = crate::util::TestCommand::new(&["status", &id, "--coordinator", &url]).stdout();
    assert!(
        out.contains("check ") && out.contains("waiting for a worker other than the one that played its games"),
        "{out}"
    );
    assert!(out.contains("any worker takes it in "), "{out}");
}
