use std::sync::atomic::{AtomicBool, AtomicU64};

use jobs::{Executor, GameRow, Shard, Spec, checksum, read_partition, shards, write_partition};

fn spec(shard_games: u64) -> Spec {
    Spec::from_toml(&format!(
        r#"
name = "exec"
seed = 11
[grid]
information_source = ["oracle"]
observability = ["full", "partial"]
target = ["random", "scorer", "defender"]
starting_states = "100-139"
engine = ["mstar", "expectimax"]
repeats = 2
[shards]
games = {shard_games}
"#
    ))
    .unwrap()
}

fn run_all(spec: &Spec, threads: usize) -> Vec<GameRow> {
    let ex = Executor::new(threads);
    let progress = AtomicU64::new(0);
    let cancel = AtomicBool::new(false);
    let mut rows = Vec::new();
    for shard in shards(spec) {
        rows.extend(ex.run(spec, shard, &progress, &cancel).unwrap());
    }
    assert_eq!(progress.into_inner(), spec.games());
    rows
}

fn without_timing(rows: &[GameRow]) -> Vec<GameRow> {
    rows.iter().cloned().map(|r| GameRow { elapsed_us: 0, ..r }).collect()
}

#[test]
fn rows_do_not_depend_on_shard_size_or_threads() {
    let big = run_all(&spec(10_000), 2);
    assert_eq!(big.len(), 960);
    assert!(big.iter().enumerate().all(|(i, r)| r.game_index == i as u64));
    let small = run_all(&spec(1), 1);
    let odd = run_all(&spec(37), 3);
    assert_eq!(without_timing(&big), without_timing(&small));
    assert_eq!(without_timing(&big), without_timing(&odd));
    assert_eq!(checksum(&big), checksum(&small));
}

#[test]
fn a_cancelled_shard_stops() {
    let s = spec(10_000);
    let ex = Executor::new(2);
    let cancel = AtomicBool::new(true);
    let shard = Shard {
        index: 0,
        first_game: 0,
        games: 960,
    };
    assert_eq!(
        ex.run(&s, shard, &AtomicU64::new(0), &cancel),
        Err(jobs::ExecError::Cancelled)
    );
}

#[test]
fn partitions_round_trip_through_parquet() {
    let s = spec(10_000);
    let rows = run_all(&s, 2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("part-00000.parquet");
    write_partition(&path, "exec", &rows).unwrap();
    let back = read_partition(&path).unwrap();
    assert_eq!(back.len(), rows.len());
    assert!(back.iter().all(|(e, _)| e == "exec"));
    let back: Vec<GameRow> = back.into_iter().map(|(_, r)| r).collect();
    assert_eq!(back, rows);
    assert_eq!(checksum(&back), checksum(&rows));
    // Every cell (source, observability, target, engine) of the grid has its games.
    let mut cells = std::collections::HashMap::new();
    for r in &back {
        *cells
            .entry((r.information_source, r.observability, r.target, r.engine))
            .or_insert(0u64) += 1;
    }
    assert_eq!(cells.len(), 12);
    assert!(cells.values().all(|&games| games == 80));
}

/// An all-fives spec: partnerships when `seats` is 4, matches with `to`.
fn all_fives(shard_games: u64, seats: u8, to: Option<u32>) -> Spec {
    let m = to.map_or(String::new(), |t| format!("[match]\nto = {t}\n"));
    Spec::from_toml(&format!(
        r#"
name = "af"
seed = 5
[rules]
preset = "all-fives"
seats = {seats}
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["random", "defender"]
starting_states = "1000-1011"
engine = ["mstar", "expectimax"]
repeats = 2
[search]
depth = 2
[shards]
games = {shard_games}
{m}"#
    ))
    .unwrap()
}

#[test]
fn all_fives_rows_are_a_function_of_their_coordinates() {
    for (seats, to) in [(2, None), (4, None), (2, Some(60))] {
        let big = run_all(&all_fives(1000, seats, to), 2);
        assert_eq!(big.len(), 96);
        let small = run_all(&all_fives(7, seats, to), 1);
        assert_eq!(without_timing(&big), without_timing(&small), "{seats} seats, to {to:?}");
        for r in &big {
            assert_eq!(r.score_diff, r.player_score as i32 - r.target_score as i32);
            assert_eq!(r.player_score % 5, 0);
            assert_eq!(r.target_score % 5, 0);
            assert!(r.nodes > 0, "the agent searched");
            assert!(r.moves.starts_with("h1 "), "{}", r.moves);
            match to {
                Some(t) => assert!(r.player_score.max(r.target_score) >= t, "a match ends at {t}: {r:?}"),
                None => assert!(!r.moves.contains(" h2 "), "one hand a game"),
            }
        }
    }
}
