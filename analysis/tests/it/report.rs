//! A whole report on hand-made datasets: every number of a small grid,
//! which partitions a directory's report reads, and the classifier's part.

use crate::{close, row};

/// The hand-made grid: the oracle and classifier cells, M* and Expectimax
/// on four deals.
fn hand_made_rows() -> Vec<jobs::GameRow> {
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
    rows
}

#[test]
fn a_report_on_a_hand_made_dataset_has_every_number_right() {
    let rows = hand_made_rows();
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
    oracle_cell_has_every_number_right(&cells[0]);
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
    the_files_carry_the_numbers(&out);
    the_report_reads_back(&exp);
    assert!(
        analysis::write_report(dir.path()).is_err(),
        "a directory without partitions is refused"
    );
}

/// The oracle cell of report.json: pairs (M*, EM) per state (5 W, -3 L),
/// (2 W, 2 W), (-1 L, 4 W), (0 W, -2 L).
fn oracle_cell_has_every_number_right(o: &serde_json::Value) {
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
}

/// report.md and the CSV files of the hand-made report (in `out`).
fn the_files_carry_the_numbers(out: &std::path::Path) {
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
}

/// The written report of `exp` reads back as the one built from its partitions.
fn the_report_reads_back(exp: &std::path::Path) {
    // report.json reads back as the report it was written from (to serde_json's
    // float parsing), and the summary `muggins run` prints comes from it.
    let back = analysis::read_report(exp).unwrap();
    let built = analysis::build(exp).unwrap();
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
