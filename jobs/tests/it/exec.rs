use std::sync::atomic::{AtomicBool, AtomicU64};

use crate::run_all_on;
use jobs::{Executor, GameRow, Shard, Spec, checksum, read_partition, write_partition};

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

fn without_timing(rows: &[GameRow]) -> Vec<GameRow> {
    rows.iter().cloned().map(|r| GameRow { elapsed_us: 0, ..r }).collect()
}

#[test]
fn rows_do_not_depend_on_shard_size_or_threads() {
    let big = run_all_on(&spec(10_000), 2);
    assert_eq!(big.len(), 960);
    assert!(big.iter().enumerate().all(|(i, r)| r.game_index == i as u64));
    let small = run_all_on(&spec(1), 1);
    let odd = run_all_on(&spec(37), 3);
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
    let rows = run_all_on(&s, 2);
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
    for (seats, to) in [(2, None), (4, None), (2, Some(60)), (3, Some(40))] {
        let big = run_all_on(&all_fives(1000, seats, to), 2);
        assert_eq!(big.len(), 96);
        let small = run_all_on(&all_fives(7, seats, to), 1);
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

#[test]
fn the_moves_table_has_a_row_per_play_with_the_searches_values() {
    for spec_text in [
        // The thesis's rules, every source but the classifier, both observabilities.
        r#"
name = "mv"
seed = 9
[grid]
information_source = ["oracle", "bayes"]
observability = ["full", "partial"]
target = ["random", "defender"]
starting_states = "300-309"
engine = ["mstar", "expectimax"]
repeats = 1
[output]
moves = true
"#
        .to_string(),
        // All Fives in partnerships, matches to 50.
        r#"
name = "mv-af"
seed = 9
[rules]
preset = "all-fives"
seats = 4
[match]
to = 50
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["heaviest", "scorer"]
starting_states = "77-81"
engine = ["mstar", "expectimax"]
repeats = 1
[search]
depth = 2
[output]
dir = "deep/mv-af"
moves = true
"#
        .to_string(),
    ] {
        let spec = Spec::from_toml(&spec_text).unwrap();
        assert!(spec.output_moves);
        let ex = Executor::new(2);
        let (progress, cancel) = (AtomicU64::new(0), AtomicBool::new(false));
        let shard = Shard {
            index: 0,
            first_game: 0,
            games: spec.games(),
        };
        let (rows, moves) = ex.run_with_moves(&spec, shard, None, &progress, &cancel).unwrap();
        // Without [output] moves the same games have the same rows and no moves.
        let plain = Spec::from_toml(&spec_text.replace("moves = true", "moves = false")).unwrap();
        let (rows2, none) = Executor::new(1)
            .run_with_moves(&plain, shard, None, &progress, &cancel)
            .unwrap();
        assert!(none.is_empty());
        assert_eq!(without_timing(&rows), without_timing(&rows2));
        for r in &rows {
            let mine: Vec<_> = moves.iter().filter(|m| m.game_index == r.game_index).collect();
            // Move tokens: plays, and `h1` hand marks, draws (`d`) and passes
            // (thesis `T-`, full game `3:-` or `0:-*25`).
            let is_play =
                |t: &&str| !t.starts_with('h') && !t.contains('d') && !t.contains(":-") && t.get(1..2) != Some("-");
            let plays = r.moves.split(' ').filter(is_play).count();
            assert_eq!(mine.len(), plays, "{}: one row per play ({})", r.game_index, r.moves);
            assert!(
                mine.iter().enumerate().all(|(i, m)| m.turn == i as u32),
                "plies in order"
            );
            assert_eq!(
                mine.iter().map(|m| m.nodes).sum::<u64>(),
                r.nodes,
                "the searches' positions add up"
            );
            for m in &mine {
                assert!(m.legal_actions >= 1);
                // A value exactly when the agent's side searched a real choice.
                assert_eq!(m.value.is_some(), m.nodes > 0, "{m:?}");
                assert_eq!(m.best_alternative.is_some(), m.value.is_some(), "{m:?}");
                if let (Some(value), Some(other)) = (m.value, m.best_alternative) {
                    assert!(m.legal_actions > 1 && m.seat % 2 == 0, "{m:?}");
                    assert!(value >= other - 1e-9, "the chosen play is the best: {m:?}");
                }
            }
            let last = mine.last().expect("a game has plays");
            if spec.full.is_none() {
                assert_eq!((last.player_score, last.target_score), (r.player_score, r.target_score));
            }
        }
        // Written and read back.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part-00000.parquet");
        std::fs::write(&path, jobs::moves_parquet(&spec.name, &moves)).unwrap();
        let back: Vec<_> = jobs::read_moves(&path)
            .unwrap()
            .into_iter()
            .map(|(e, m)| {
                assert_eq!(e, spec.name);
                m
            })
            .collect();
        assert_eq!(back, moves);
    }
}

#[test]
fn block_and_team_rows_carry_openspiel_returns() {
    for (preset, seats) in [("block", 2), ("team", 4)] {
        let text = format!(
            r#"
name = "{preset}"
seed = 8
[rules]
preset = "{preset}"
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["random", "heaviest"]
starting_states = [5, 500, 50000, 5000000]
engine = ["mstar", "expectimax"]
repeats = 2
[search]
depth = 3
[output]
moves = true
"#
        );
        let spec = Spec::from_toml(&text).unwrap();
        assert_eq!(spec.full.unwrap().config.seats, seats);
        let ex = Executor::new(2);
        let (progress, cancel) = (AtomicU64::new(0), AtomicBool::new(false));
        let shard = Shard {
            index: 0,
            first_game: 0,
            games: spec.games(),
        };
        let (rows, moves) = ex.run_with_moves(&spec, shard, None, &progress, &cancel).unwrap();
        let (again, _) = Executor::new(1)
            .run_with_moves(&spec, shard, None, &progress, &cancel)
            .unwrap();
        assert_eq!(without_timing(&rows), without_timing(&again));
        let mut searched = 0;
        for r in &rows {
            assert_eq!(r.score_diff, r.player_score as i32 - r.target_score as i32);
            assert!(
                r.player_score == 0 || r.target_score == 0,
                "one side gains what the other loses"
            );
            assert_eq!(r.player_draws + r.target_draws, 0, "{preset} has no drawing");
            let mine: Vec<_> = moves.iter().filter(|m| m.game_index == r.game_index).collect();
            assert_eq!(mine.len() as u32, r.turns);
            let last = mine.last().unwrap();
            assert_eq!(last.player_score as i32 - last.target_score as i32, r.score_diff);
            assert_eq!(mine.iter().map(|m| m.nodes).sum::<u64>(), r.nodes);
            searched += mine.iter().filter(|m| m.value.is_some()).count();
        }
        assert!(searched > 0, "the agent searched");
    }
}

#[test]
fn a_named_partner_plays_its_strategy_beside_the_searching_agent() {
    let base = all_fives(1000, 4, None);
    let text = |partner: &str| {
        format!(
            "name = \"af\"\nseed = 5\n[rules]\npreset = \"all-fives\"\nseats = 4\n[grid]\ninformation_source = [\"oracle\"]\n\
             observability = [\"full\"]\ntarget = [\"random\", \"defender\"]\nstarting_states = \"1000-1011\"\n\
             engine = [\"mstar\", \"expectimax\"]\nrepeats = 2\n[search]\ndepth = 2\npartner = \"{partner}\"\n[shards]\ngames = 1000\n"
        )
    };
    let same = Spec::from_toml(&text("agent")).unwrap();
    assert_eq!(same.id(), base.id());
    let heavy = Spec::from_toml(&text("heaviest")).unwrap();
    let (a, b) = (run_all_on(&same, 2), run_all_on(&heavy, 2));
    // Seat 2 plays heaviest: fewer positions searched, other games.
    let nodes = |rows: &[GameRow]| rows.iter().map(|r| r.nodes).sum::<u64>();
    assert!(nodes(&b) < nodes(&a), "{} vs {}", nodes(&b), nodes(&a));
    assert_ne!(without_timing(&a), without_timing(&b));
}

#[test]
fn budgeted_partial_observation_rows_do_not_depend_on_threads_or_the_table() {
    // Every engine of the full game's search, under a node budget and
    // sampled worlds from three beliefs, with 1 and 4 threads and a small
    // and a large table.
    let spec = |shard_games: u64, table_mb: u32| {
        Spec::from_toml(&format!(
            r#"
name = "af-budget"
seed = 8
[rules]
preset = "all-fives"
[match]
to = 40
[grid]
information_source = ["oracle"]
observability = ["full", "partial"]
target = ["scorer", "searcher"]
starting_states = "300-301"
engine = ["mstar", "expectimax", "ismcts"]
repeats = 1
[search]
budget = 1500
worlds = 3
belief = ["uniform", "constraints", "model"]
table_mb = {table_mb}
evaluation = "learned"
target_depth = 1
[shards]
games = {shard_games}
"#
        ))
        .unwrap()
    };
    let one = run_all_on(&spec(100, 1), 1);
    assert_eq!(one.len(), 72);
    let four = run_all_on(&spec(5, 1), 4);
    let large = run_all_on(&spec(100, 512), 2);
    assert_eq!(without_timing(&one), without_timing(&four));
    for (a, b) in one.iter().zip(&large) {
        assert_eq!(
            (
                a.game_index,
                a.player_score,
                a.target_score,
                &a.moves,
                a.nodes,
                a.belief_log_loss
            ),
            (
                b.game_index,
                b.player_score,
                b.target_score,
                &b.moves,
                b.nodes,
                b.belief_log_loss
            ),
            "table_mb 1 and 512 differ"
        );
    }
    assert!(one.iter().all(|r| r.nodes > 0));
}

#[test]
fn shaped_rows_do_not_depend_on_threads_or_the_table_and_plain_levels_equal_none() {
    // Every shaping and predictor under a budget, Expectimax and M* against
    // the scorer and random play, full and partial observation; 1 and 4
    // threads, a small and a large table.
    let spec = |shard_games: u64, table_mb: u32, shaping: &str| {
        Spec::from_toml(&format!(
            r#"
name = "af-shaping"
seed = 8
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full", "partial"]
target = ["scorer", "random"]
starting_states = "300-301"
engine = ["mstar", "expectimax"]
repeats = 1
[search]
budget = 1500
worlds = 3
table_mb = {table_mb}
shaping = {shaping}
predictor = ["naive-bayes", "dbn", "logit"]
[shards]
games = {shard_games}
"#
        ))
        .unwrap()
    };
    let all = r#"["none", "prune", "asymmetric", "expect"]"#;
    let one = run_all_on(&spec(200, 1, all), 1);
    assert_eq!(one.len(), 2 * 2 * 2 * 2 * 10);
    let four = run_all_on(&spec(7, 1, all), 4);
    let large = run_all_on(&spec(200, 512, all), 2);
    assert_eq!(without_timing(&one), without_timing(&four));
    assert_eq!(without_timing(&one), without_timing(&large));
    // The shaping changed games, except M* against the scorer (it knows the
    // deterministic strategy's play: no opponent node to shape).
    let key = |r: &GameRow| (r.observability, r.target, r.engine, r.starting_state);
    let plain: std::collections::HashMap<_, _> = one
        .iter()
        .filter(|r| r.shaping == jobs::ShapingLevel::NONE)
        .map(|r| (key(r), (r.moves.clone(), r.nodes)))
        .collect();
    let mut changed = 0;
    for r in one.iter().filter(|r| r.shaping != jobs::ShapingLevel::NONE) {
        let p = &plain[&key(r)];
        if r.engine == engine::PlayerEngine::MStar && r.target.name() == "scorer" {
            assert_eq!((&r.moves, r.nodes), (&p.0, p.1), "{}", r.shaping.name());
        } else if (&r.moves, r.nodes) != (&p.0, p.1) {
            changed += 1;
        }
    }
    assert!(changed > 20, "only {changed} shaped games differ from plain search");
    // Prune keeping every play (top 64, no epsilon) plays exactly as none.
    let wide = run_all_on(&spec(200, 1, "\"prune\"\ntop_n = 64"), 1);
    assert_eq!(wide.len(), 2 * 2 * 2 * 2 * 3);
    for r in &wide {
        let p = &plain[&key(r)];
        assert_eq!((&r.moves, r.nodes), (&p.0, p.1), "{}", r.shaping.name());
    }
}

/// A belief applies only where worlds are sampled: full-observation rows
/// name none (null in Parquet), partial ones the grid's, and the
/// checksums of the thesis's rows (uniform either way) are unchanged.
#[test]
fn full_observation_rows_name_no_belief() {
    let text = r#"
name = "b"
seed = 5
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full", "partial"]
target = ["scorer"]
starting_states = "spread:3"
engine = ["expectimax"]
repeats = 1
[search]
depth = 2
worlds = 2
belief = "constraints"
"#;
    let s = Spec::from_toml(text).unwrap();
    let rows = crate::run_all(&s);
    assert!(rows.iter().any(|r| r.observability == engine::Observability::Full));
    for r in &rows {
        match r.observability {
            engine::Observability::Full => assert_eq!(r.belief, None, "{r:?}"),
            engine::Observability::Partial => assert_eq!(r.belief, Some(engine::Belief::Constraints), "{r:?}"),
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("part-00000.parquet");
    write_partition(&path, "b", &rows).unwrap();
    let back: Vec<GameRow> = read_partition(&path).unwrap().into_iter().map(|(_, r)| r).collect();
    assert_eq!(back, rows);
    // The thesis: uniform, whose rows never named their belief in the
    // checksum, so a full-observation row's checksum line is as before.
    let thesis = spec(100);
    for r in run_all_on(&thesis, 1)
        .iter()
        .filter(|r| r.observability == engine::Observability::Full)
    {
        assert_eq!(r.belief, None);
        assert!(!r.canonical_line().contains("uniform"));
    }
}
