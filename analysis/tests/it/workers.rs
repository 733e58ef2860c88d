//! The per-worker residuals from the coordinator's record of who played what.

use crate::row;

/// Three workers play the same cells; one adds 4 points to every game's
/// score difference (a broken machine). Its residual is flagged, the
/// others' are not, and the chi-square test rejects.
#[test]
fn the_per_worker_residual_flags_a_worker_whose_games_differ() {
    use engine::PlayerEngine::MStar as MS;
    use jobs::Source::Oracle as OR;
    let dir = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    for i in 0..600u64 {
        // A spread of outcomes, the same in every worker's range.
        let base = (i % 7) as i32 - 3;
        let diff = if i >= 400 { base + 4 } else { base };
        let mut r = row(OR, MS, i, diff, diff >= 0, (0, 0), "m");
        r.game_index = i;
        rows.push(r);
    }
    let games = dir.path().join("games");
    std::fs::create_dir_all(&games).unwrap();
    jobs::write_partition(&games.join("part-00000.parquet"), "w", &rows).unwrap();
    std::fs::write(
        dir.path().join(jobs::layout::WORKERS_FILE),
        r#"{"chunks": [
            {"shard": 0, "first_game": 0, "games": 200, "worker": "a"},
            {"shard": 0, "first_game": 200, "games": 200, "worker": "b"},
            {"shard": 0, "first_game": 400, "games": 200, "worker": "broken"}]}"#,
    )
    .unwrap();
    let r = analysis::build(dir.path()).unwrap();
    let w = r.workers.clone().expect("a workers section");
    let by = |n: &str| w.workers.iter().find(|x| x.worker == n).unwrap().clone();
    assert!(by("broken").flagged && by("broken").z > 3.0, "{w:?}");
    assert!(!by("a").flagged && !by("b").flagged, "{w:?}");
    // Each range holds nearly the same spread, so the broken worker is
    // about 4 points above the median worker, the others about 0.
    assert!((by("broken").excess - 4.0).abs() < 0.1, "{w:?}");
    assert!(by("a").z.abs() < 1.0 && by("b").z.abs() < 1.0, "{w:?}");
    assert_eq!(w.df, 2);
    assert!(w.p < 1e-6, "{w:?}");
    let md = analysis::report_files(&r)
        .into_iter()
        .find(|(n, _)| *n == "report.md")
        .unwrap()
        .1;
    assert!(md.contains("## Workers") && md.contains("| broken | 200 |"), "{md}");
}
