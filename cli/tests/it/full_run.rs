//! `muggins run` on full-game specs: the shipped all-fives spec end to end,
//! the moves table, team experiments, bounded memory, beliefs compared on
//! the same deals, and the fit stage's predictors with the shaping report.

use serde_json::Value;

use crate::util::TestCommand;

#[test]
fn muggins_run_plays_the_shipped_all_fives_spec_end_to_end() {
    let dir = crate::util::Dir::new();
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../jobs/specs/all-fives.toml");
    let out = TestCommand::new(&["run", spec, "--out"])
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(300))
        .stdout();
    assert!(out.contains("1600 rows in"), "{out}");
    for target in ["random", "scorer", "defender", "heaviest"] {
        assert!(out.contains(&format!("oracle     full     {target}")), "{out}");
    }
    let report: Value = serde_json::from_str(&dir.read("all-fives/report/report.json")).unwrap();
    assert_eq!(report["games"], 1600);
    assert_eq!(
        report["game"],
        "all-fives: 2 seats of 7, a match to 150 a game, search depth 3"
    );
    // Every cell has both engines' 200 matches, and no thesis numbers.
    for c in report["cells"].as_array().unwrap() {
        assert_eq!(
            (c["mstar"]["games"].as_u64(), c["expectimax"]["games"].as_u64()),
            (Some(200), Some(200))
        );
    }
    // One row per match in games/, one per hand in hands/: each match's
    // hands add up to its row's totals, and end where the totals say.
    let exp = dir.join("all-fives");
    let mut games = std::collections::HashMap::new();
    for p in jobs::partitions(&exp).unwrap() {
        for (_, r) in jobs::read_partition(&p).unwrap() {
            games.insert(r.game_index, (r.player_score, r.target_score));
        }
    }
    let mut hands: Vec<jobs::HandRow> = Vec::new();
    for p in jobs::parts_in(&exp.join(jobs::layout::HANDS_DIR)).unwrap() {
        hands.extend(jobs::read_hands(&p).unwrap().into_iter().map(|(_, h)| h));
    }
    assert!(
        hands.len() > games.len(),
        "{} hands for {} matches",
        hands.len(),
        games.len()
    );
    let mut last: std::collections::HashMap<u64, &jobs::HandRow> = std::collections::HashMap::new();
    for h in &hands {
        let prev = last.insert(h.game_index, h);
        let (p0, t0) = prev.map_or((0, 0), |p| (p.player_total, p.target_total));
        assert_eq!(h.hand, prev.map_or(1, |p| p.hand + 1));
        assert_eq!(
            (h.player_total, h.target_total),
            (p0 + h.player_points, t0 + h.target_points)
        );
    }
    assert_eq!(last.len(), games.len());
    for (g, h) in last {
        assert_eq!((h.player_total, h.target_total), games[&g], "match {g}");
        assert!(h.player_total.max(h.target_total) >= 150, "a match ends at 150: {h:?}");
    }
    let md = dir.read("all-fives/report/report.md");
    assert!(md.contains("no thesis table") && !md.contains("| thesis |"), "{md}");
    assert!(
        !dir.join("all-fives/report/thesis_comparison.csv").exists(),
        "no header-only thesis comparison for the full game"
    );
    assert!(dir.join("all-fives/report/scores.csv").exists());
}

#[test]
fn muggins_run_writes_the_moves_table_when_asked() {
    let dir = crate::util::Dir::new();
    let spec = dir.create_spec(
        r#"
name = "mv"
seed = 4
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer", "heaviest"]
starting_states = "0-29"
engine = ["mstar", "expectimax"]
repeats = 1
[search]
depth = 2
[shards]
games = 40
[output]
moves = true
"#,
    );
    TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .stdout();
    let mut plays = 0;
    let mut files = 0;
    for entry in std::fs::read_dir(dir.join("mv/moves")).unwrap() {
        let path = entry.unwrap().path();
        files += 1;
        for (experiment, m) in jobs::read_moves(&path).unwrap() {
            assert_eq!(experiment, "mv");
            assert!(m.game_index < 120 && m.legal_actions >= 1);
            plays += 1;
        }
    }
    assert_eq!(files, 3, "one moves partition per games shard");
    // As many rows as plays in the games table's move lists.
    let mut want = 0;
    for entry in std::fs::read_dir(dir.join("mv/games")).unwrap() {
        for (_, g) in jobs::read_partition(&entry.unwrap().path()).unwrap() {
            want += g
                .moves
                .split(' ')
                .filter(|t| !t.starts_with('h') && !t.contains('d') && !t.contains(":-"))
                .count();
        }
    }
    assert_eq!(plays, want);
}

#[test]
fn muggins_run_plays_a_team_experiment() {
    let dir = crate::util::Dir::new();
    let spec = dir.create_spec(
        r#"
name = "team"
seed = 2
[rules]
preset = "team"
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["random", "heaviest"]
starting_states = "1000-1019"
engine = ["mstar", "expectimax"]
repeats = 1
[search]
depth = 3
"#,
    );
    let out = TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .stdout();
    assert!(out.contains("80 rows in"), "{out}");
    let report: Value = serde_json::from_str(&dir.read("team/report/report.json")).unwrap();
    assert_eq!(
        report["game"],
        "team: 4 seats of 7 in partnerships, one hand a game, search depth 3"
    );
    assert_eq!(report["cells"].as_array().unwrap().len(), 2);
    // Every row's moves are its OpenSpiel history: replayed, they give its returns.
    let mut input = String::new();
    let mut diffs = Vec::new();
    for entry in std::fs::read_dir(dir.join("team/games")).unwrap() {
        for (_, g) in jobs::read_partition(&entry.unwrap().path()).unwrap() {
            let ids: Vec<&str> = g.moves.split(' ').collect();
            input.push_str(&format!("{{\"history\": [{}]}}\n", ids.join(",")));
            diffs.push(g.score_diff as i64);
        }
    }
    let out = TestCommand::new(&["openspiel", "replay", "--game", "python_team_dominoes"])
        .stdin(input)
        .stdout();
    let got: Vec<i64> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["returns"][0]
                .as_i64()
                .expect("a finished game")
        })
        .collect();
    assert_eq!(got, diffs);
}

/// Peak resident memory (VmHWM, bytes) of `muggins run` on `spec`, read
/// from /proc while it runs.
fn peak_rss_of_run(dir: &crate::util::Dir, spec: &str) -> u64 {
    let path = dir.create("spec.toml", spec);
    let out = dir.join("out");
    let mut p = TestCommand::new(&["run"])
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .arg("--threads")
        .arg("2")
        .quiet()
        .spawn();
    let status = format!("/proc/{}/status", p.0.id());
    let mut peak = 0u64;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        if let Ok(text) = std::fs::read_to_string(&status)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb * 1024);
        }
        if let Some(s) = p.0.try_wait().unwrap() {
            assert!(s.success(), "muggins run failed: {s}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "muggins run took over 300 s");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(peak > 0, "no VmHWM read from {status}");
    peak
}

#[test]
fn a_double6_run_keeps_its_memory_bounded_whatever_the_number_of_games() {
    // Searching agents under partial observation with a budget, a table of
    // table_mb per thread: the peak must stay under the tables plus a fixed
    // margin, and not grow with the games.
    let spec = |games: u32| {
        format!(
            r#"name = "d6-memory"
seed = 7
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["partial"]
target = ["scorer", "searcher"]
starting_states = "0-{}"
engine = ["mstar", "ismcts"]
repeats = 1
[search]
budget = 300
worlds = 2
table_mb = 2
target_depth = 1
[shards]
games = 100
"#,
            games / 4 - 1
        )
    };
    let small = peak_rss_of_run(&crate::util::Dir::new(), &spec(200));
    let large = peak_rss_of_run(&crate::util::Dir::new(), &spec(2_000));
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "peak RSS: 200 games {:.1} MB, 2,000 games {:.1} MB",
        mb(small),
        mb(large)
    );
    // Two threads' tables (2 MB each) plus a fixed margin for the process.
    let cap = 2 * 2 * (1 << 20) + 200 * (1 << 20);
    assert!(large < cap, "2,000 games peaked at {:.1} MB", mb(large));
    assert!(
        large < small + 16 * (1 << 20),
        "memory grew with the games: {:.1} MB for 200, {:.1} MB for 2,000",
        mb(small),
        mb(large)
    );
}

#[test]
fn muggins_run_compares_beliefs_on_the_same_deals() {
    let dir = crate::util::Dir::new();
    let spec = dir.create_spec(
        r#"
name = "beliefs"
seed = 5
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["partial"]
target = ["scorer"]
starting_states = "0-5"
engine = ["mstar"]
repeats = 1
[search]
budget = 500
worlds = 4
belief = ["uniform", "constraints", "dominai", "model"]
"#,
    );
    let out = TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(300))
        .stdout();
    assert!(out.contains("24 rows in"), "{out}");
    for belief in ["uniform", "constraints", "dominai", "model"] {
        assert!(
            out.lines().any(|l| l.starts_with("partial") && l.contains(belief)),
            "{belief}: {out}"
        );
    }
    let mut rows = Vec::new();
    for p in jobs::partitions(&dir.join("beliefs")).unwrap() {
        rows.extend(jobs::read_partition(&p).unwrap().into_iter().map(|(_, r)| r));
    }
    assert_eq!(rows.len(), 24);
    for r in &rows {
        let ll = r.belief_log_loss.expect("partial rows score their belief");
        assert!(ll > 0.0 && ll.is_finite(), "{r:?}");
        assert!(r.belief_brier.unwrap() > 0.0);
        assert_eq!(r.belief_ess.is_some(), r.belief == Some(engine::Belief::Model));
    }
    // Paired: every belief plays the same six deals.
    for b in engine::Belief::ALL {
        let mut states: Vec<u64> = rows
            .iter()
            .filter(|r| r.belief == Some(b))
            .map(|r| r.starting_state)
            .collect();
        states.sort();
        assert_eq!(states, (0..6).collect::<Vec<_>>());
    }
    let csv = dir.read("beliefs/report/beliefs.csv");
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(dir.read("beliefs/report/report.md").contains("## Beliefs"));
}

#[test]
fn muggins_run_fits_the_predictors_in_its_fit_stage_and_reports_the_shaping() {
    let dir = crate::util::Dir::new();
    let text = r#"
name = "shaping"
seed = 5
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer"]
starting_states = "spread:6"
engine = ["expectimax"]
repeats = 1
[search]
budget = [300, 1200]
shaping = ["none", "prune", "expect"]
predictor = "logit"
[prediction]
hands = 60
"#;
    let spec = dir.create_spec(text);
    let out = TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(300))
        .stdout();
    assert!(out.contains("36 rows in"), "{out}");
    assert!(out.contains("expect/logit") && out.contains("gain vs none"), "{out}");
    let exp = dir.join("shaping");
    // The fit stage's artifact, named by its hash in the manifest, is what
    // the spec's training fits; the rows are what playing with it gives.
    let m: jobs::Manifest = serde_json::from_slice(&std::fs::read(exp.join("_manifest.json")).unwrap()).unwrap();
    let p = m.predictors.expect("a predictors entry");
    assert!(m.classifier.is_none());
    let spec_parsed = jobs::Spec::from_toml(text).unwrap();
    let (_, json) = jobs::predictors::fit_for(&spec_parsed).unwrap().unwrap();
    assert_eq!(std::fs::read_to_string(exp.join(&p.model_file)).unwrap(), json);
    assert_eq!(p.model_hash, jobs::evals::eval_hash(&json));
    let mut rows = Vec::new();
    for part in jobs::partitions(&exp).unwrap() {
        rows.extend(jobs::read_partition(&part).unwrap().into_iter().map(|(_, r)| r));
    }
    let got: Vec<_> = rows.into_iter().map(|r| jobs::GameRow { elapsed_us: 0, ..r }).collect();
    assert_eq!(got, crate::cluster::expected(text, &exp));
    assert!(got.iter().any(|r| r.budget == Some(300)) && got.iter().any(|r| r.budget == Some(1200)));
    // The report: the predictors' held-out scores and the shaping's gains, with plots.
    let md = dir.read("shaping/report/report.md");
    assert!(md.contains("## Prediction") && md.contains("## Shaping"), "{md}");
    assert!(
        md.contains("| logit | scorer |") && md.contains("Confidence contours"),
        "{md}"
    );
    let csv = dir.read("shaping/report/shaping.csv");
    assert_eq!(csv.lines().count(), 7, "{csv}");
    for f in ["prediction.csv", "prediction.svg", "shaping.svg"] {
        assert!(exp.join("report").join(f).exists(), "{f}");
    }
    // `muggins report` rebuilds the same report.
    let before = dir.read("shaping/report/report.json");
    TestCommand::new(&["report"]).arg(&exp).stdout();
    assert_eq!(dir.read("shaping/report/report.json"), before);
}
