//! Tests of the analysis: statistics and a report on a hand-made dataset.

use std::process::Command;

use analysis::stats::{self, Moments};

fn moments(xs: &[f64]) -> Moments {
    let mut m = Moments::default();
    for &x in xs {
        m.add(x);
    }
    m
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-300) || (a - b).abs() < 1e-15
}

#[test]
fn statistics_against_values_worked_by_hand() {
    assert_eq!(stats::erfc(0.0), 1.0);
    assert!(close(stats::erfc(1.0), 0.157_299_207_050_285_13, 1e-12));
    assert!(close(stats::erfc(2.0), 0.004_677_734_981_047_266, 1e-12));
    assert!(close(stats::erfc(-1.0), 1.842_700_792_949_714_8, 1e-12));
    assert!(close(stats::normal_sf(stats::Z95), 0.025, 1e-9));

    // Eq. 10: M* 1,2,3,4 (mean 2.5, population variance 1.25), EM 0,0,2,2 (1, 1):
    // sigma = sqrt(1.25/4 + 1/4) = 0.75, z = 1.5 / 0.75 = 2.
    let t = stats::diff_of_means(&moments(&[1.0, 2.0, 3.0, 4.0]), &moments(&[0.0, 0.0, 2.0, 2.0]));
    assert!(close(t.diff, 1.5, 1e-12) && close(t.sigma, 0.75, 1e-12) && close(t.z, 2.0, 1e-12));
    assert!(close(t.p, 0.022_750_131_948_179_2, 1e-9));
    assert!(t.significant);

    // Eq. 11: 60 vs 50 wins of 100: p0 = 0.5, se = 0.05, z = 2, two-tailed p = 0.0455.
    let b = stats::binomial_test(60, 50, 100);
    assert_eq!(b.diff, 10);
    assert!(close(b.z, 2.0, 1e-12) && close(b.p, 0.045_500_263_896_358_4, 1e-9));
    assert!(b.significant);
    assert!(!stats::binomial_test(52, 50, 100).significant);

    // Paired: d = 1..5, mean 3, sample sd sqrt(2.5), se sqrt(0.5).
    let p = stats::paired_test(&moments(&[1.0, 2.0, 3.0, 4.0, 5.0]));
    assert!(close(p.mean, 3.0, 1e-12) && close(p.sd, 2.5f64.sqrt(), 1e-12));
    assert!(close(p.ci_low, 3.0 - stats::Z95 * 0.5f64.sqrt(), 1e-12));
    assert!(close(p.z, 3.0 / 0.5f64.sqrt(), 1e-12));

    // McNemar: b = 10, c = 2: chi2 = 64 / 12.
    let m = stats::mcnemar(10, 2);
    assert!(close(m.chi2, 64.0 / 12.0, 1e-12));
    assert!(close(m.p, 0.020_921_335_337_794_2, 1e-9));
    assert!(m.significant);
    assert_eq!(stats::mcnemar(0, 0).p, 1.0);
}

/// The same statistics from scipy (installed by scripts/ci.sh) on fixed inputs.
#[test]
fn statistics_agree_with_scipy() {
    let zs = [-3.5, -1.0, 0.0, 0.3, 1.2, 1.644_853_6, 2.5, 4.0, 6.0, 8.5];
    let chis = [0.1, 1.0, 3.841_458_820_694_124, 5.333_333_333_333_333, 12.0, 40.0];
    let d: Vec<f64> = (0..2000)
        .map(|i| ((i * 7919 % 23) as f64 - 10.0) * 0.5 + (i % 3) as f64)
        .collect();
    let script = format!(
        "import numpy as np\nfrom scipy import stats\nzs = {zs:?}\nchis = {chis:?}\nd = np.array({d:?})\n\
         print(' '.join(repr(float(stats.norm.sf(z))) for z in zs))\n\
         print(' '.join(repr(float(stats.chi2.sf(c, 1))) for c in chis))\n\
         se = d.std(ddof=1) / np.sqrt(len(d))\n\
         print(repr(float(d.mean())), repr(float(d.std(ddof=1))), repr(float(2 * stats.norm.sf(abs(d.mean()) / se))))\n"
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("python3 is needed for this test");
    assert!(
        out.status.success(),
        "scipy failed (python3 -m pip install scipy): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<f64>> = text
        .lines()
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    for (z, want) in zs.iter().zip(&lines[0]) {
        let got = stats::normal_sf(*z);
        assert!(close(got, *want, 1e-9), "sf({z}): {got} vs scipy {want}");
    }
    for (c, want) in chis.iter().zip(&lines[1]) {
        // McNemar's p-value is the chi-square(1) tail: erfc(sqrt(chi2 / 2)).
        let c: f64 = *c;
        let got = stats::erfc((c / 2.0).sqrt());
        assert!(close(got, *want, 1e-9), "chi2 sf({c}): {got} vs scipy {want}");
    }
    let p = stats::paired_test(&moments(&d));
    assert!(close(p.mean, lines[2][0], 1e-12));
    assert!(close(p.sd, lines[2][1], 1e-12));
    assert!(close(p.p, lines[2][2], 1e-9), "{} vs {}", p.p, lines[2][2]);
    let m = stats::mcnemar(30, 12);
    let out = Command::new("python3")
        .arg("-c")
        .arg("from scipy import stats; print(repr(float(stats.chi2.sf((30-12)**2/42, 1))))")
        .output()
        .unwrap();
    let want: f64 = String::from_utf8(out.stdout).unwrap().trim().parse().unwrap();
    assert!(close(m.p, want, 1e-9));
}

fn row(
    source: jobs::Source,
    engine: engine::PlayerEngine,
    state: u64,
    diff: i32,
    win: bool,
    pred: (u32, u32),
    moves: &str,
) -> jobs::GameRow {
    jobs::GameRow {
        game_index: state * 10 + engine as u64 + 100 * source as u64,
        information_source: source,
        observability: engine::Observability::Full,
        target: full::FullTarget::Thesis(engine::TargetKind::Scorer),
        starting_state: state,
        engine,
        repeat: 1,
        leader: engine::Seat::Target,
        player_score: diff.max(0) as u32,
        target_score: (-diff).max(0) as u32,
        score_diff: diff,
        win_or_tie: win,
        ending: engine::Ending::Domino,
        turns: 5,
        player_draws: 0,
        target_draws: 0,
        predictions: pred.0,
        predictions_correct: pred.1,
        nodes: 4,
        moves: moves.into(),
        elapsed_us: 1,
        belief: None,
        belief_log_loss: None,
        belief_brier: None,
        belief_ess: None,
        shaping: jobs::ShapingLevel::NONE,
        budget: None,
        agent: None,
        opponent: None,
        agent_side: None,
        rules: None,
    }
}

#[test]
fn a_report_on_a_hand_made_dataset_has_every_number_right() {
    use engine::PlayerEngine::{Expectimax as EM, MStar as MS};
    use jobs::Source::{Classifier as CL, Oracle as OR};
    // Oracle cell: pairs (M*, EM) per state: (5 W, -3 L), (2 W, 2 W), (-1 L, 4 W), (0 W, -2 L).
    let mut rows = vec![
        row(OR, MS, 0, 5, true, (2, 2), "a"),
        row(OR, EM, 0, -3, false, (0, 0), "e0"),
        row(OR, MS, 1, 2, true, (2, 2), "a"),
        row(OR, EM, 1, 2, true, (0, 0), "e1"),
        row(OR, MS, 2, -1, false, (1, 1), "a"),
        row(OR, EM, 2, 4, true, (0, 0), "e2"),
        row(OR, MS, 3, 0, true, (1, 1), "a"),
        row(OR, EM, 3, -2, false, (0, 0), "e3"),
    ];
    // Classifier cell: M* 1, 1, 1, 1 (all wins), half its predictions right;
    // Expectimax identical to the oracle cell's except one move list.
    for s in 0..4u64 {
        rows.push(row(CL, MS, s, 1, true, (2, 1), "c"));
        let em = rows[(2 * s + 1) as usize].clone();
        let moves = if s == 3 {
            "different".to_string()
        } else {
            em.moves.clone()
        };
        rows.push(jobs::GameRow {
            information_source: CL,
            game_index: em.game_index + 100,
            moves,
            ..em
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("hand");
    std::fs::create_dir_all(exp.join("games")).unwrap();
    jobs::write_partition(&exp.join("games/part-00000.parquet"), "hand", &rows[..8]).unwrap();
    jobs::write_partition(&exp.join("games/part-00001.parquet"), "hand", &rows[8..]).unwrap();
    let out = analysis::write_report(&exp).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["experiment"], "hand");
    assert_eq!(json["games"], 16);
    assert_eq!(json["consistency"]["compared"], 4);
    assert_eq!(json["consistency"]["mismatches"], 1);
    let cells = json["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let o = &cells[0];
    assert_eq!(
        (o["information_source"].as_str(), o["target"].as_str()),
        (Some("oracle"), Some("scorer"))
    );
    assert_eq!(o["mstar"]["games"], 4);
    assert_eq!(o["mstar"]["mean_score_diff"], 1.5);
    assert_eq!(o["expectimax"]["mean_score_diff"], 0.25);
    assert_eq!(o["mstar"]["wins_or_ties"], 3);
    assert_eq!(o["expectimax"]["wins_or_ties"], 2);
    assert_eq!(o["mstar"]["accuracy"], 1.0);
    assert_eq!(o["expectimax"]["accuracy"], serde_json::Value::Null);
    assert_eq!(o["mstar"]["histogram"]["5"], 1);
    // Eq. 10: var_M* = (25+4+1+0)/4 - 1.5^2 = 5.25; var_EM = (9+4+16+4)/4 - 0.0625 = 8.1875.
    let sigma = (5.25f64 / 4.0 + 8.1875 / 4.0).sqrt();
    assert!((o["score_test"]["sigma"].as_f64().unwrap() - sigma).abs() < 1e-12);
    assert!((o["score_test"]["z"].as_f64().unwrap() - 1.25 / sigma).abs() < 1e-12);
    assert_eq!(o["score_test"]["significant"], false);
    // Eq. 11: 3 vs 2 of 4.
    assert_eq!(o["win_test"]["diff"], 1);
    assert_eq!(o["win_test"]["p0"], 0.5);
    assert_eq!(o["win_test"]["rate"], 0.75);
    // Paired d = 8, 0, -5, 2: mean 1.25; b = 2, c = 1.
    assert_eq!(o["paired"]["n"], 4);
    assert_eq!(o["paired"]["mean"], 1.25);
    let sd = ((8.0f64 - 1.25).powi(2) + 1.25f64.powi(2) + 6.25f64.powi(2) + 0.75f64.powi(2)) / 3.0;
    assert!((o["paired"]["sd"].as_f64().unwrap() - sd.sqrt()).abs() < 1e-12);
    assert_eq!(
        (o["mcnemar"]["b"].as_u64(), o["mcnemar"]["c"].as_u64()),
        (Some(2), Some(1))
    );
    assert!((o["mcnemar"]["chi2"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(o["unpaired"], 0);
    let c = &cells[1];
    assert_eq!(c["information_source"], "classifier");
    assert_eq!(c["mstar"]["mean_score_diff"], 1.0);
    assert_eq!(c["mstar"]["accuracy"], 0.5);
    assert_eq!(c["paired"]["mean"], 0.75);
    // Side by side with the thesis: Table 19's scorer cell.
    let cmp = json["thesis_comparison"].as_array().unwrap();
    let m = cmp
        .iter()
        .find(|x| x["table"] == "19" && x["quantity"] == "M* mean score_diff")
        .unwrap();
    assert_eq!(m["thesis"], 1.388);
    assert_eq!(m["ours"], 1.5);
    assert!((m["difference"].as_f64().unwrap() - 0.112).abs() < 1e-9);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Consistency warning:** 1 of 4"), "{md}");
    assert!(md.contains("Quadrant 1") && md.contains("Quadrant 2"));
    assert!(md.contains("| mean score_diff | 1.500 | 0.250 |"), "{md}");
    let scores = std::fs::read_to_string(out.join("scores.csv")).unwrap();
    assert!(
        scores
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("oracle,full,scorer,4,1.500000,4,0.250000,1.250000,")
    );
    let wins = std::fs::read_to_string(out.join("wins.csv")).unwrap();
    assert!(wins.lines().nth(1).unwrap().starts_with("oracle,full,scorer,3,2,4,1,"));
    for f in [
        "value_gain.svg",
        "win_gain.svg",
        "score_diff.svg",
        "paired.csv",
        "thesis_comparison.csv",
    ] {
        let body = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(body.len() > 50, "{f}");
    }
    assert!(
        !out.join("confusion.svg").exists(),
        "no classifier report, no confusion plot"
    );
    // report.json reads back as the report it was written from (to serde_json's
    // float parsing), and the summary `muggins run` prints comes from it.
    let back = analysis::read_report(&exp).unwrap();
    let built = analysis::build(&exp).unwrap();
    assert_eq!(back.cells.len(), built.cells.len());
    for (b, c) in back.cells.iter().zip(&built.cells) {
        assert_eq!(
            (
                b.information_source,
                b.observability,
                b.target,
                &b.mstar.histogram,
                b.mcnemar.b
            ),
            (
                c.information_source,
                c.observability,
                c.target,
                &c.mstar.histogram,
                c.mcnemar.b
            )
        );
        assert!(close(b.score_test.sigma, c.score_test.sigma, 1e-15));
    }
    let table = analysis::summary_table(&back);
    assert_eq!(table, analysis::summary_table(&built));
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 5, "{table}");
    assert!(lines[0].starts_with("source     observe  target    engine"), "{table}");
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["oracle", "full", "scorer", "expectimax", "4", "0.2500", "2", "-"]
    );
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["oracle", "full", "scorer", "mstar", "4", "1.5000", "3", "100.0%"]
    );
    assert_eq!(
        lines[4].split_whitespace().collect::<Vec<_>>(),
        ["classifier", "full", "scorer", "mstar", "4", "1.0000", "4", "50.0%"]
    );
    assert!(
        analysis::write_report(dir.path()).is_err(),
        "a directory without partitions is refused"
    );
}

/// A directory with an owner record is read by its spec: only its own
/// partitions count, and a partition holding another experiment's rows is
/// refused by name.
#[test]
fn a_report_reads_only_the_experiments_own_partitions() {
    let text = |seed: u64, name: &str| {
        format!(
            "name = \"{name}\"\nseed = {seed}\noutput = \"mixed\"\n[grid]\ninformation_source = [\"oracle\"]\n\
             observability = [\"full\"]\ntarget = [\"scorer\"]\nstarting_states = \"0-9\"\n\
             engine = [\"mstar\", \"expectimax\"]\nrepeats = 1\n[shards]\ngames = 10\n"
        )
    };
    let write = |dir: &std::path::Path, spec: &jobs::Spec, index: u64| {
        let shard = jobs::shards(spec)[index as usize];
        let rows = jobs::Executor::new(1)
            .run(spec, shard, &Default::default(), &Default::default())
            .unwrap();
        jobs::write_partition(&dir.join("games").join(jobs::part_file(index)), &spec.name, &rows).unwrap();
    };
    let dir = tempfile::tempdir().unwrap();
    let ours_text = text(1, "a");
    let ours = jobs::Spec::from_toml(&ours_text).unwrap();
    std::fs::create_dir_all(dir.path().join("games")).unwrap();
    jobs::layout::Owner {
        id: ours.id(),
        name: ours.name.clone(),
        spec_hash: ours.hash(),
        spec_toml: ours_text,
    }
    .write(dir.path())
    .unwrap();
    write(dir.path(), &ours, 0);
    write(dir.path(), &ours, 1);
    // A stray partition of a bigger experiment in the same directory.
    let theirs = jobs::Spec::from_toml(&text(2, "b").replace("\"0-9\"", "\"0-29\"")).unwrap();
    write(dir.path(), &theirs, 5);
    let r = analysis::build(dir.path()).unwrap();
    assert_eq!(r.games, 20, "part-00005 is not this experiment's");
    // One of its own partitions replaced by another experiment's rows.
    write(dir.path(), &theirs, 1);
    let e = analysis::build(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("part-00001.parquet") && e.contains("experiment \"b\""),
        "{e}"
    );
    // Without the owner record (a directory made by hand) every partition is read.
    std::fs::remove_file(dir.path().join(jobs::layout::OWNER_FILE)).unwrap();
    assert_eq!(analysis::build(dir.path()).unwrap().games, 30);
}

/// The classifier's report is read as its struct and shown in report.md,
/// classifier.csv and the confusion plot; report.json carries it unchanged.
#[test]
fn a_report_shows_the_classifier_report() {
    let text = "name = \"cl\"\nseed = 1\n[grid]\ninformation_source = [\"oracle\"]\nobservability = [\"full\"]\n\
                target = [\"scorer\"]\nstarting_states = \"0-9\"\nengine = [\"mstar\", \"expectimax\"]\nrepeats = 1\n\
                [shards]\ngames = 20\n";
    let spec = jobs::Spec::from_toml(text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("games")).unwrap();
    let rows = jobs::Executor::new(1)
        .run(&spec, jobs::shards(&spec)[0], &Default::default(), &Default::default())
        .unwrap();
    jobs::write_partition(&dir.path().join("games/part-00000.parquet"), "cl", &rows).unwrap();
    let evaluation = |kind: &str, samples: u64, fit_ms: f64| jobs::training::Evaluation {
        kind: kind.into(),
        samples,
        train: samples * 4 / 5,
        holdout: samples / 5,
        cv_folds: vec![0.5, 0.75],
        cv_accuracy: 0.625,
        confusion: [[3, 1, 0], [0, 2, 2], [1, 0, 3]],
        accuracy: 0.7,
        fit_ms,
        predict_ms: 0.25,
    };
    let classifier = jobs::training::Report {
        samples_available: 10_000,
        kind_asked: "best".into(),
        chosen_kind: "mda".into(),
        model_hash: "abc".into(),
        model_file: "classifier/model-abc.bin".into(),
        prior: "scorer".into(),
        chosen: evaluation("mda", 8000, 1.5),
        comparisons: vec![evaluation("mda", 8000, 1.5), evaluation("random-forest", 8000, 120.0)],
    };
    std::fs::create_dir_all(dir.path().join("classifier")).unwrap();
    std::fs::write(
        dir.path().join(jobs::layout::CLASSIFIER_REPORT),
        serde_json::to_vec_pretty(&classifier).unwrap(),
    )
    .unwrap();
    let out = analysis::write_report(dir.path()).unwrap();
    let back = analysis::read_report(dir.path()).unwrap();
    assert_eq!(back.classifier.as_ref(), Some(&classifier));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["classifier"], serde_json::to_value(&classifier).unwrap());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("Chosen: **mda** on 8000 samples (prior: scorer), model `classifier/model-abc.bin`."),
        "{md}"
    );
    assert!(
        md.contains("| random-forest | 8000 | 1600 | 0.625 | 0.700 | ")
            && md.contains(" | 120.0 | 0.2 | [[3,1,0],[0,2,2],[1,0,3]] |"),
        "{md}"
    );
    let csv = std::fs::read_to_string(out.join("classifier.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[1].starts_with("mda,8000,1600,0.625,0.7,"), "{csv}");
    assert!(
        lines[2].ends_with(",120.0,0.25,\"[[3,1,0],[0,2,2],[1,0,3]]\",comparison"),
        "{csv}"
    );
    assert!(lines[0].ends_with(",role") && lines[3].ends_with(",model"), "{csv}");
    assert_eq!(csv.matches(",model").count(), 1, "one row is the grid's model: {csv}");
    assert!(md.contains(" (the grid's model) |"), "{md}");
    let svg = std::fs::read_to_string(out.join("confusion.svg")).unwrap();
    assert!(svg.contains("chosen: mda 8000"), "{svg}");
}

#[test]
fn the_beliefs_table_pairs_each_belief_with_uniform_on_the_same_deals() {
    use engine::Belief;
    let b = |belief: Belief, state: u64, diff: i32, ll: f64| {
        let mut r = row(
            jobs::Source::Oracle,
            engine::PlayerEngine::MStar,
            state,
            diff,
            diff >= 0,
            (0, 0),
            "m",
        );
        r.observability = engine::Observability::Partial;
        r.belief = Some(belief);
        r.belief_log_loss = Some(ll);
        r.belief_brier = Some(ll / 2.0);
        r.belief_ess = (belief == Belief::Model).then_some(10.0 + state as f64);
        r.game_index = state * 4 + belief as u64;
        r
    };
    // Three deals; constraints gains +2, +4, -1 over uniform, model +5, +5, +2.
    let rows = vec![
        b(Belief::Uniform, 0, -1, 0.9),
        b(Belief::Constraints, 0, 1, 0.7),
        b(Belief::Model, 0, 4, 0.5),
        b(Belief::Uniform, 1, 3, 0.8),
        b(Belief::Constraints, 1, 7, 0.6),
        b(Belief::Model, 1, 8, 0.4),
        b(Belief::Uniform, 2, 0, 0.7),
        b(Belief::Constraints, 2, -1, 0.5),
        b(Belief::Model, 2, 2, 0.3),
    ];
    let r = analysis::build_from_rows("b", &rows, None);
    assert_eq!(r.beliefs.len(), 3);
    let get = |belief| r.beliefs.iter().find(|s| s.belief == belief).unwrap();
    let u = get(Belief::Uniform);
    assert_eq!((u.games, u.wins_or_ties), (3, 2));
    assert!(close(u.log_loss.unwrap(), 0.8, 1e-12));
    assert!(u.score_gain.is_none() && u.ess.is_none());
    let c = get(Belief::Constraints);
    let g = c.score_gain.as_ref().unwrap();
    assert_eq!(g.n, 3);
    assert!(close(g.mean, 5.0 / 3.0, 1e-12));
    // sd of (2, 4, -1): sqrt(((1/3)^2 + (7/3)^2 + (8/3)^2) / 2).
    assert!(close(g.sd, (114.0f64 / 18.0).sqrt(), 1e-12));
    // Wins/ties: deal 0 only constraints, deal 2 only uniform.
    let w = c.win_gain.as_ref().unwrap();
    assert_eq!((w.b, w.c), (1, 1));
    let m = get(Belief::Model);
    assert!(close(m.score_gain.as_ref().unwrap().mean, 4.0, 1e-12));
    assert!(close(m.ess.unwrap(), 11.0, 1e-12));
    assert!(close(m.brier.unwrap(), 0.2, 1e-12));
    // Only uniform rows enter the M*-versus-Expectimax cells.
    assert_eq!(r.cells.iter().map(|c| c.mstar.games).sum::<u64>(), 3);
    // The report's files carry the table.
    let files = analysis::report_files(&r);
    let csv = &files.iter().find(|(n, _)| *n == "beliefs.csv").unwrap().1;
    assert_eq!(csv.lines().count(), 4);
    assert!(csv.contains("partial,scorer,mstar,model,3,"));
    let md = &files.iter().find(|(n, _)| *n == "report.md").unwrap().1;
    assert!(md.contains("## Beliefs") && md.contains("| partial | scorer | mstar | constraints | 3 |"));
    assert!(analysis::summary_table(&r).contains("constraints"));
    // A uniform hand with no decision to score still counts and pairs in a
    // grid of several beliefs.
    let mut acc = analysis::Accumulator::default();
    acc.set_belief_levels(3);
    for mut r in rows {
        if r.belief == Some(Belief::Uniform) && r.starting_state == 2 {
            r.belief_log_loss = None;
            r.belief_brier = None;
        }
        acc.add("b", &r);
    }
    let r = acc.finish(None);
    let u = r.beliefs.iter().find(|s| s.belief == Belief::Uniform).unwrap();
    assert_eq!(u.games, 3);
    assert!(close(u.log_loss.unwrap(), 0.85, 1e-12));
    let c = r.beliefs.iter().find(|s| s.belief == Belief::Constraints).unwrap();
    assert_eq!(c.score_gain.as_ref().unwrap().n, 3);
}

#[test]
fn the_shaping_table_pairs_each_shaping_with_plain_search_at_its_budget_and_plots_them() {
    use full::Shaping;
    use full::predict::PredictModel;
    let level = |shaping: Shaping| jobs::ShapingLevel {
        shaping,
        predictor: PredictModel::Logit,
    };
    let prune = level(Shaping::Prune {
        top_n: 2,
        epsilon_ppm: 0,
    });
    let s = |shaping: jobs::ShapingLevel, budget: u64, state: u64, diff: i32, nodes: u64| {
        let mut r = row(
            jobs::Source::Oracle,
            engine::PlayerEngine::Expectimax,
            state,
            diff,
            diff >= 0,
            (0, 0),
            "m",
        );
        r.shaping = shaping;
        r.budget = Some(budget);
        r.nodes = nodes;
        r.game_index = state * 4 + (shaping != jobs::ShapingLevel::NONE) as u64 * 2 + (budget > 100) as u64;
        r
    };
    // Two budgets, three deals; at 100 nodes prune gains +2, +4, -1 over
    // plain search; at 1,000, +1 on every deal.
    let rows = vec![
        s(jobs::ShapingLevel::NONE, 100, 0, -1, 500),
        s(prune, 100, 0, 1, 480),
        s(jobs::ShapingLevel::NONE, 100, 1, 3, 500),
        s(prune, 100, 1, 7, 490),
        s(jobs::ShapingLevel::NONE, 100, 2, 0, 500),
        s(prune, 100, 2, -1, 470),
        s(jobs::ShapingLevel::NONE, 1000, 0, 2, 5000),
        s(prune, 1000, 0, 3, 5000),
        s(jobs::ShapingLevel::NONE, 1000, 1, 4, 5000),
        s(prune, 1000, 1, 5, 5000),
        s(jobs::ShapingLevel::NONE, 1000, 2, -2, 5000),
        s(prune, 1000, 2, -1, 5000),
    ];
    let r = analysis::build_from_rows("s", &rows, None);
    assert_eq!(r.shaping.len(), 4);
    let get = |name: &str, budget: u64| {
        r.shaping
            .iter()
            .find(|x| x.shaping == name && x.budget == Some(budget))
            .unwrap()
    };
    let p = get("prune/logit", 100);
    let g = p.score_gain.as_ref().unwrap();
    assert_eq!(g.n, 3);
    assert!(close(g.mean, 5.0 / 3.0, 1e-12));
    assert!(close(p.mean_nodes, 480.0, 1e-12));
    let w = p.win_gain.as_ref().unwrap();
    assert_eq!((w.b, w.c), (1, 1));
    let q = get("prune/logit", 1000).score_gain.as_ref().unwrap();
    assert!(close(q.mean, 1.0, 1e-12) && q.sd == 0.0);
    assert!(get("none", 1000).score_gain.is_none());
    // Shaped rows stay out of the M*-versus-Expectimax cells.
    assert_eq!(r.cells.iter().map(|c| c.expectimax.games).sum::<u64>(), 6);
    let files = analysis::report_files(&r);
    let csv = &files.iter().find(|(n, _)| *n == "shaping.csv").unwrap().1;
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.contains("full,scorer,expectimax,100,prune/logit,3,"), "{csv}");
    let md = &files.iter().find(|(n, _)| *n == "report.md").unwrap().1;
    assert!(md.contains("## Shaping") && md.contains("| full | scorer | expectimax | 1000 | prune/logit | 3 |"));
    // The plot: one panel, plain search and prune as lines over the budgets,
    // round ticks with zero marked, on a log scale of nodes.
    let svg = &files.iter().find(|(n, _)| *n == "shaping.svg").unwrap().1;
    assert!(svg.contains("scorer, expectimax (full)") && svg.contains("nodes per game (log scale)"));
    assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
    assert!(svg.contains(">1k<") && svg.contains(">0<"), "{svg}");
    assert!(analysis::summary_table(&r).contains("prune/logit"));
}

#[test]
fn plot_ticks_are_round_and_mark_zero() {
    assert_eq!(analysis::nice_ticks(-0.055, 0.069, 5), vec![-0.05, 0.0, 0.05]);
    assert_eq!(
        analysis::nice_ticks(0.0, 443.9, 5),
        vec![0.0, 100.0, 200.0, 300.0, 400.0]
    );
    assert_eq!(analysis::nice_ticks(-3.0, 12.0, 4), vec![0.0, 5.0, 10.0]);
}

#[test]
fn the_bar_plots_have_round_ticks_with_zero() {
    use engine::PlayerEngine::{Expectimax, MStar};
    let mut rows = Vec::new();
    for (state, (m, e)) in [(0u64, (3, -1)), (1, (-2, 2)), (2, (7, 1)), (3, (1, 1))] {
        rows.push(row(jobs::Source::Oracle, MStar, state, m, m >= 0, (1, 1), "m"));
        rows.push(row(jobs::Source::Oracle, Expectimax, state, e, e >= 0, (0, 0), "m"));
    }
    let r = analysis::build_from_rows("t", &rows, None);
    let files = analysis::report_files(&r);
    for name in ["value_gain.svg", "win_gain.svg", "score_diff.svg"] {
        let svg = &files.iter().find(|(n, _)| *n == name).unwrap().1;
        let labels: Vec<&str> = svg
            .split("text-anchor=\"end\">")
            .skip(1)
            .map(|t| t.split('<').next().unwrap().trim_end_matches('%'))
            .collect();
        assert!(labels.len() >= 3, "{name}: {labels:?}");
        assert!(labels.contains(&"0"), "{name}: zero is not a tick: {labels:?}");
        let values: Vec<f64> = labels.iter().map(|l| l.parse().unwrap()).collect();
        let step = values[1] - values[0];
        let mag = 10f64.powf(step.abs().log10().floor());
        assert!(
            [1.0, 2.0, 5.0, 10.0]
                .iter()
                .any(|m| (step.abs() / mag - m).abs() < 1e-9),
            "{name}: step {step} in {labels:?}"
        );
        assert!(
            values.iter().all(|v| (v / step - (v / step).round()).abs() < 1e-9),
            "{name}: {labels:?}"
        );
    }
}

/// Bradley-Terry on a synthetic pool whose results are exactly the model's
/// expectations for strengths 4 : 2 : 1 (p(a over b) = 4 / 6, a over c
/// 4 / 5, b over c 2 / 3, 30 games a pairing): the maximum-likelihood fit
/// is those strengths, so the ratings are 400 log10 of them, centred:
/// a - b = b - c = 400 log10 2 = 120.41 Elo.
#[test]
fn bradley_terry_recovers_a_pool_fitted_by_hand() {
    use analysis::{Game, bradley_terry};
    let g = |a: &str, b: &str, score_a: f64| Game {
        a: a.into(),
        b: b.into(),
        score_a,
        n: 30.0,
    };
    let r = bradley_terry(&[g("a", "b", 20.0), g("a", "c", 24.0), g("c", "b", 10.0)]);
    let step = 400.0 * 2f64.log10();
    let names: Vec<&str> = r.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert!((r[0].elo - step).abs() < 1e-6, "{r:?}");
    assert!(r[1].elo.abs() < 1e-6, "{r:?}");
    assert!((r[2].elo + step).abs() < 1e-6, "{r:?}");
    assert_eq!(r[0].games, 60);
    assert!((r[0].score - 44.0 / 60.0).abs() < 1e-12);
    // Two players: the closed form. Elo = 400 log10(w / (n - w)), split
    // about 0; the variance of the log-strength gap is 1 / (n p (1 - p)).
    let two = bradley_terry(&[Game {
        a: "x".into(),
        b: "y".into(),
        score_a: 75.0,
        n: 100.0,
    }]);
    let gap = 400.0 * 3f64.log10();
    assert!((two[0].elo - two[1].elo - gap).abs() < 1e-6, "{two:?}");
    let sd_gap = (1.0 / (100.0 * 0.75 * 0.25f64)).sqrt() * 400.0 / std::f64::consts::LN_10;
    // Centred, each rating carries half the gap's standard deviation.
    let half = (two[0].ci_high - two[0].ci_low) / 2.0 / 1.959964;
    assert!((half - sd_gap / 2.0).abs() < 1e-6, "{half} vs {}", sd_gap / 2.0);
    // LOS of x over y: Phi(gap / sd_gap).
    let los = two[0].los_next.unwrap();
    let z = gap / sd_gap;
    assert!(los > 0.999 && los < 1.0, "{los} at z = {z}");
    // A player who won everything still gets a finite rating (one virtual
    // draw a pairing), above the rest.
    let sweep = bradley_terry(&[g("p", "q", 30.0), g("q", "r", 15.0)]);
    assert_eq!(sweep[0].name, "p");
    assert!(sweep.iter().all(|x| x.elo.is_finite() && x.ci_low.is_finite()));
}

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

/// The by-factor table: a factor with two levels gives each level's games,
/// mean and win/tie share; a factor with one level is left out.
#[test]
fn the_report_tables_every_factor_that_varies() {
    use engine::PlayerEngine::{Expectimax as EM, MStar as MS};
    use jobs::Source::Oracle as OR;
    let rows = [
        row(OR, MS, 0, 4, true, (0, 0), "a"),
        row(OR, MS, 1, -2, false, (0, 0), "b"),
        row(OR, EM, 0, 1, true, (0, 0), "c"),
        row(OR, EM, 1, 1, true, (0, 0), "d"),
    ];
    let r = analysis::build_from_rows("f", &rows, None);
    let engines: Vec<_> = r.factors.iter().filter(|l| l.factor == "engine").collect();
    assert_eq!(engines.len(), 2);
    let ms = engines.iter().find(|l| l.level == "mstar").unwrap();
    assert_eq!((ms.games, ms.mean_score_diff, ms.win_or_tie), (2, 1.0, 0.5));
    assert!(ms.ci_low < 1.0 && ms.ci_high > 1.0);
    assert!(
        r.factors.iter().all(|l| l.factor == "engine"),
        "the other factors have one level: {:?}",
        r.factors
    );
    let md = analysis::report_files(&r)
        .into_iter()
        .find(|(n, _)| *n == "report.md")
        .unwrap()
        .1;
    assert!(
        md.contains("## By factor") && md.contains("| engine | mstar | 2 |"),
        "{md}"
    );
    assert!(md.contains("**Headline:** M* scores more than Expectimax"), "{md}");
}

#[test]
fn a_grid_of_one_belief_gets_its_m_star_versus_expectimax_cells_whatever_the_belief() {
    use engine::{Belief, PlayerEngine};
    let rows: Vec<jobs::GameRow> = (0..4u64)
        .flat_map(|s| {
            [PlayerEngine::MStar, PlayerEngine::Expectimax].map(|e| {
                let d = if e == PlayerEngine::MStar { 5 } else { 2 } + s as i32;
                jobs::GameRow {
                    observability: engine::Observability::Partial,
                    belief: Some(Belief::Model),
                    ..row(jobs::Source::Oracle, e, s, d, true, (0, 0), "")
                }
            })
        })
        .collect();
    // The grid's one belief is `model` (double6.toml's): the cells are its games.
    let mut acc = analysis::Accumulator::default();
    acc.set_belief_levels(1);
    rows.iter().for_each(|r| acc.add("d6", r));
    let r = acc.finish(None);
    assert_eq!(r.cells.len(), 1);
    assert_eq!((r.cells[0].mstar.games, r.cells[0].expectimax.games), (4, 4));
    assert!(close(r.cells[0].paired.mean, 3.0, 1e-12));
    // A grid that varies the belief compares engines on `uniform` only (the
    // beliefs' section has the rest): no uniform rows, no cells.
    let mut acc = analysis::Accumulator::default();
    acc.set_belief_levels(2);
    rows.iter().for_each(|r| acc.add("d6", r));
    assert!(acc.finish(None).cells.is_empty());
}

#[test]
fn by_factor_keeps_the_rows_order_and_an_agents_grid_lists_only_its_own_factors() {
    use engine::{PlayerEngine::MStar as MS, TargetKind};
    use full::FullTarget::Thesis;
    use jobs::Source::Oracle as OR;
    // The spec listed target = ["scorer", "random"]: scorer's games first.
    let mut rows = Vec::new();
    for (i, t) in [TargetKind::Scorer, TargetKind::Random].into_iter().enumerate() {
        for s in 0..3 {
            let mut r = row(OR, MS, s, s as i32 - 1, s > 0, (0, 0), "m");
            r.game_index = (i * 3) as u64 + s;
            r.target = Thesis(t);
            rows.push(r);
        }
    }
    let r = analysis::build_from_rows("x", &rows, None);
    let levels: Vec<&str> = r
        .factors
        .iter()
        .filter(|l| l.factor == "target")
        .map(|l| l.level.as_str())
        .collect();
    assert_eq!(levels, ["scorer", "random"]);
    // The cells (scores.csv, the run summary) keep that order too.
    let cells: Vec<String> = r.cells.iter().map(|c| c.target.to_string()).collect();
    assert_eq!(cells, ["scorer", "random"]);
    // Named agents: the opponent's kind and each agent's settings are not
    // factors of the grid.
    for (k, r) in rows.iter_mut().enumerate() {
        r.agent = Some(if k % 2 == 0 { "a" } else { "b" }.into());
        r.opponent = Some("random".into());
        r.budget = Some(100 * (k as u64 % 3));
    }
    let r = analysis::build_from_rows("x", &rows, None);
    let factors: std::collections::BTreeSet<&str> = r.factors.iter().map(|l| l.factor.as_str()).collect();
    assert_eq!(factors.into_iter().collect::<Vec<_>>(), ["agent"]);
}

#[test]
fn a_budget_factor_splits_the_cells_instead_of_pooling_them() {
    use engine::PlayerEngine::{Expectimax as EM, MStar as MS};
    use jobs::Source::Oracle as OR;
    let mut rows = Vec::new();
    for (k, budget) in [500u64, 1000].into_iter().enumerate() {
        for s in 0..4u64 {
            for e in [MS, EM] {
                let mut r = row(OR, e, s, if e == MS { 2 } else { k as i32 }, true, (0, 0), "m");
                r.game_index = 100 * k as u64 + 10 * s + e as u64;
                r.budget = Some(budget);
                rows.push(r);
            }
        }
    }
    let r = analysis::build_from_rows("x", &rows, None);
    let budgets: Vec<Option<u64>> = r.cells.iter().map(|c| c.budget).collect();
    assert_eq!(budgets, [Some(500), Some(1000)]);
    assert!(
        r.cells.iter().all(|c| c.paired.n == 4),
        "4 deals a budget, not 8 pooled"
    );
    let files = analysis::report_files(&r);
    let get = |n: &str| &files.iter().find(|(f, _)| *f == n).unwrap().1;
    assert!(
        get("scores.csv").starts_with("budget,information_source,"),
        "{}",
        get("scores.csv")
    );
    assert!(
        get("paired.csv")
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("500,oracle,full,scorer,")
    );
    let md = get("report.md");
    assert!(
        md.contains("budget 500 nodes") && md.contains("budget 1000 nodes"),
        "{md}"
    );
    let table = analysis::summary_table(&r);
    assert!(table.lines().next().unwrap().contains("budget"), "{table}");
    assert!(table.contains("     500 ") && table.contains("    1000 "), "{table}");
}

#[test]
fn one_belief_gets_no_beliefs_table_and_full_observation_never_enters_it() {
    use engine::{Belief, Observability, PlayerEngine::MStar as MS};
    let mut rows = Vec::new();
    for (k, obs) in [Observability::Full, Observability::Partial].into_iter().enumerate() {
        for s in 0..3u64 {
            let mut r = row(jobs::Source::Oracle, MS, s, 1, true, (0, 0), "m");
            r.game_index = 10 * k as u64 + s;
            r.observability = obs;
            r.belief = (obs == Observability::Partial).then_some(Belief::Model);
            r.belief_log_loss = (obs == Observability::Partial).then_some(1.5);
            rows.push(r);
        }
    }
    let r = analysis::build_from_rows("x", &rows, None);
    assert!(r.beliefs.is_empty(), "one belief compares nothing: {:?}", r.beliefs);
    assert!(!analysis::summary_table(&r).contains("belief"));
    // Two beliefs: the table, of partial-observation rows only.
    let mut two = rows.clone();
    for mut r in rows {
        r.game_index += 100;
        r.belief = r.belief.map(|_| Belief::Uniform);
        two.push(r);
    }
    let r = analysis::build_from_rows("x", &two, None);
    assert!(!r.beliefs.is_empty());
    assert!(
        r.beliefs.iter().all(|b| b.observability == Observability::Partial),
        "{:?}",
        r.beliefs
    );
}
