//! Writing the report: report.md, report.json, one CSV per table, plots.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::build::{CellReport, Report};
use crate::svg::{self, Bar};
use crate::{ReportError, THESIS_JSON, build};

const TARGETS: [&str; 3] = ["random", "scorer", "defender"];

fn thesis() -> Value {
    serde_json::from_str(THESIS_JSON).expect("the shipped thesis data is valid JSON")
}

fn thesis_cell<'a>(t: &'a Value, c: &CellReport) -> Option<&'a Value> {
    t["cells"].as_array()?.iter().find(|x| {
        x["source"] == c.information_source.as_str()
            && x["observability"] == c.observability.as_str()
            && x["target"] == c.target.as_str()
    })
}

/// Quadrants in Table 6 order, then any others (bayes).
fn quadrants(r: &Report) -> Vec<(String, String)> {
    let mut q: Vec<(String, String)> = Vec::new();
    for c in &r.cells {
        let k = (c.observability.clone(), c.information_source.clone());
        if !q.contains(&k) {
            q.push(k);
        }
    }
    let rank = |(o, s): &(String, String)| {
        let s = match s.as_str() {
            "oracle" => 0,
            "classifier" => 1,
            _ => 2,
        };
        (s / 2, o == "partial", s)
    };
    q.sort_by_key(rank);
    q
}

fn quadrant_title(o: &str, s: &str) -> String {
    let (n, tables) = match (o, s) {
        ("full", "oracle") => ("Quadrant 1: expected value gain upper bound", "Tables 19 and 20"),
        ("full", "classifier") => ("Quadrant 2: actual value", "Tables 21 and 22"),
        ("partial", "oracle") => ("Quadrant 3: expected value gain", "Tables 23 and 24"),
        ("partial", "classifier") => ("Quadrant 4: actual value, real world", "Tables 25 and 26"),
        _ => ("Beyond the thesis", "no thesis table"),
    };
    format!("{n} — {o} observation, {s} source ({tables})")
}

fn f3(x: f64) -> String {
    if x.is_nan() { "n/a".into() } else { format!("{x:.3}") }
}

fn p(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else if x < 1e-4 {
        format!("{x:.1e}")
    } else {
        format!("{x:.4}")
    }
}

/// A mark for values whose test is not significant at 95% (the thesis shades them grey).
fn mark(significant: bool) -> &'static str {
    if significant { "" } else { " †" }
}

fn acc(c: &CellReport) -> String {
    c.mstar.accuracy.map_or("-".into(), |a| format!("{a:.3}"))
}

fn markdown(r: &Report) -> String {
    let t = thesis();
    let mut s = String::new();
    let _ = writeln!(s, "# Report: {}\n", r.experiment);
    let _ = writeln!(
        s,
        "{} games. Built from the Parquet partitions under `games/` and, if present, `classifier/report.json`.\n",
        r.games
    );
    let _ = writeln!(
        s,
        "Tests at 95%: score gains use the thesis's one-tailed difference of means (Eq. 10), win/tie gains its two-tailed binomial test (Eq. 11); \
         **†** marks a value whose test is not significant (the thesis shades those cells grey). Because both engines face the same deals and draws \
         for each (starting state, repeat), the paired tests follow: the mean per-pair difference with its 95% interval, and McNemar's test on win/tie.\n"
    );
    let c = &r.consistency;
    if c.compared == 0 {
        let _ = writeln!(
            s,
            "Consistency: this experiment has one information source, so Expectimax games cannot be compared across sources.\n"
        );
    } else if c.mismatches == 0 {
        let _ = writeln!(
            s,
            "Consistency: Expectimax ignores the information source, and its {} games compared across sources are identical. ✔\n",
            c.compared
        );
    } else {
        let _ = writeln!(
            s,
            "**Consistency warning:** {} of {} Expectimax games differ across information sources, which should never happen.\n",
            c.mismatches, c.compared
        );
    }
    for (o, src) in quadrants(r) {
        let cells: Vec<&CellReport> = TARGETS
            .iter()
            .filter_map(|tg| {
                r.cells
                    .iter()
                    .find(|c| c.observability == o && c.information_source == src && c.target == *tg)
            })
            .collect();
        if cells.is_empty() {
            continue;
        }
        let _ = writeln!(s, "## {}\n", quadrant_title(&o, &src));
        let label = if src == "oracle" { "EVG" } else { "actual value" };
        let mut head = String::from("| Targets |");
        let mut sep = String::from("|---|");
        for c in &cells {
            let _ = write!(head, " {0} M* ({src}) | {0} Expectimax |", c.target);
            sep.push_str("---|---|");
        }
        let _ = writeln!(s, "Mean per-game score difference:\n\n{head}\n{sep}");
        let mut row = String::from("| mean score_diff |");
        let mut gain = format!("| {label} (score) |");
        let mut paired = String::from("| paired mean [95% CI], p |");
        let mut accuracy = String::from("| prediction accuracy |");
        let mut th = String::from("| thesis |");
        for c in &cells {
            let _ = write!(
                row,
                " {} | {} |",
                f3(c.mstar.mean_score_diff),
                f3(c.expectimax.mean_score_diff)
            );
            let _ = write!(
                gain,
                " {}{} (p = {}) ||",
                f3(c.score_test.diff),
                mark(c.score_test.significant),
                p(c.score_test.p)
            );
            let _ = write!(
                paired,
                " {} [{}, {}]{}, p = {} ||",
                f3(c.paired.mean),
                f3(c.paired.ci_low),
                f3(c.paired.ci_high),
                mark(c.paired.significant),
                p(c.paired.p)
            );
            let _ = write!(accuracy, " {} ||", acc(c));
            match thesis_cell(&t, c) {
                Some(x) => {
                    let _ = write!(th, " {} | {} |", x["mstar"], x["expectimax"]);
                }
                None => th.push_str(" - | - |"),
            }
        }
        let _ = writeln!(s, "{row}\n{gain}\n{paired}\n{accuracy}\n{th}\n");
        let _ = writeln!(s, "Win/tie totals:\n\n{head}\n{sep}");
        let mut row = String::from("| wins + ties |");
        let mut gain = format!("| {label} (wins/ties) |");
        let mut mcn = String::from("| McNemar b / c, p |");
        let mut th = String::from("| thesis |");
        for c in &cells {
            let _ = write!(
                row,
                " {} of {} | {} of {} |",
                c.mstar.wins_or_ties, c.mstar.games, c.expectimax.wins_or_ties, c.expectimax.games
            );
            let _ = write!(
                gain,
                " {}{} (p = {}) ||",
                c.win_test.diff,
                mark(c.win_test.significant),
                p(c.win_test.p)
            );
            let _ = write!(
                mcn,
                " {} / {}{}, p = {} ||",
                c.mcnemar.b,
                c.mcnemar.c,
                mark(c.mcnemar.significant),
                p(c.mcnemar.p)
            );
            match thesis_cell(&t, c) {
                Some(x) => {
                    let _ = write!(
                        th,
                        " {} of 50400 | {} of 50400 |",
                        x["mstar_wins"], x["expectimax_wins"]
                    );
                }
                None => th.push_str(" - | - |"),
            }
        }
        let _ = writeln!(s, "{row}\n{gain}\n{mcn}\n{th}\n");
    }
    let cmp = comparison(r);
    if !cmp.is_empty() {
        let _ = writeln!(s, "## Side by side with the thesis\n");
        let _ = writeln!(
            s,
            "Win/tie figures are shares of games (the thesis's totals over its 50,400 games per cell).\n"
        );
        let _ = writeln!(
            s,
            "| table | source | observability | target | quantity | thesis | ours | ours - thesis |\n|---|---|---|---|---|---|---|---|"
        );
        for row in &cmp {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7]
            );
        }
        s.push('\n');
    }
    if let Some(cl) = &r.classifier {
        let _ = writeln!(s, "## The classifier (Tables 13-18)\n");
        let _ = writeln!(
            s,
            "Chosen: **{}** on {} samples (prior: {}), model `{}`.\n",
            cl["chosen_kind"].as_str().unwrap_or("?"),
            cl["chosen"]["samples"],
            cl["prior"].as_str().unwrap_or("?"),
            cl["model_file"].as_str().unwrap_or("?")
        );
        let _ = writeln!(
            s,
            "| kind | samples | held out | CV accuracy | holdout accuracy | thesis accuracy (table) | fit ms | predict ms | confusion (rows actual R/S/D) |\n|---|---|---|---|---|---|---|---|---|"
        );
        for e in classifier_evaluations(cl) {
            let th = thesis_classifier(&t, &e);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.3} | {:.3} | {} | {:.1} | {:.1} | {} |",
                e["kind"].as_str().unwrap_or("?"),
                e["samples"],
                e["holdout"],
                e["cv_accuracy"].as_f64().unwrap_or(f64::NAN),
                e["accuracy"].as_f64().unwrap_or(f64::NAN),
                th.map_or("-".into(), |x| format!("{} (Table {})", x["accuracy"], x["table"])),
                e["fit_ms"].as_f64().unwrap_or(f64::NAN),
                e["predict_ms"].as_f64().unwrap_or(f64::NAN),
                e["confusion"]
            );
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "## Plots\n\n![value gain](value_gain.svg)\n\n![win/tie gain](win_gain.svg)\n\n![score differences](score_diff.svg)\n"
    );
    if r.classifier.is_some() {
        let _ = writeln!(s, "![confusion matrices](confusion.svg)\n");
    }
    s
}

fn classifier_evaluations(cl: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = cl["comparisons"].as_array().cloned().unwrap_or_default();
    let mut chosen = cl["chosen"].clone();
    chosen["chosen"] = json!(true);
    out.push(chosen);
    out
}

/// The thesis's evaluation of the same kind at the nearest sample size.
fn thesis_classifier<'a>(t: &'a Value, e: &Value) -> Option<&'a Value> {
    let n = e["samples"].as_f64()?;
    t["classifier"]
        .as_array()?
        .iter()
        .filter(|x| x["kind"] == e["kind"])
        .min_by(|a, b| {
            let da = (a["samples"].as_f64().unwrap_or(0.0) - n).abs();
            let db = (b["samples"].as_f64().unwrap_or(0.0) - n).abs();
            da.total_cmp(&db)
        })
}

/// Rows: table, source, observability, target, quantity, thesis, ours, difference.
fn comparison(r: &Report) -> Vec<[String; 8]> {
    let t = thesis();
    let games = t["games_per_cell"].as_f64().unwrap_or(50400.0);
    let mut out = Vec::new();
    for c in &r.cells {
        let Some(x) = thesis_cell(&t, c) else {
            continue;
        };
        let ours_wr = |w: u64, n: u64| w as f64 / n.max(1) as f64;
        let quantities: Vec<(u64, &str, f64, f64)> = vec![
            (
                x["score_table"].as_u64().unwrap_or(0),
                "M* mean score_diff",
                x["mstar"].as_f64().unwrap_or(f64::NAN),
                c.mstar.mean_score_diff,
            ),
            (
                x["score_table"].as_u64().unwrap_or(0),
                "Expectimax mean score_diff",
                x["expectimax"].as_f64().unwrap_or(f64::NAN),
                c.expectimax.mean_score_diff,
            ),
            (
                x["score_table"].as_u64().unwrap_or(0),
                "score gain",
                x["gain"].as_f64().unwrap_or(f64::NAN),
                c.score_test.diff,
            ),
            (
                x["win_table"].as_u64().unwrap_or(0),
                "M* win/tie share",
                x["mstar_wins"].as_f64().unwrap_or(f64::NAN) / games,
                ours_wr(c.mstar.wins_or_ties, c.mstar.games),
            ),
            (
                x["win_table"].as_u64().unwrap_or(0),
                "Expectimax win/tie share",
                x["expectimax_wins"].as_f64().unwrap_or(f64::NAN) / games,
                ours_wr(c.expectimax.wins_or_ties, c.expectimax.games),
            ),
            (
                x["score_table"].as_u64().unwrap_or(0),
                "prediction accuracy",
                x["accuracy"].as_f64().unwrap_or(f64::NAN),
                c.mstar.accuracy.unwrap_or(f64::NAN),
            ),
        ];
        for (table, q, th, ours) in quantities {
            out.push([
                table.to_string(),
                c.information_source.clone(),
                c.observability.clone(),
                c.target.clone(),
                q.to_string(),
                format!("{th:.4}"),
                format!("{ours:.4}"),
                format!("{:.4}", ours - th),
            ]);
        }
    }
    out
}

fn csv(header: &str, rows: impl IntoIterator<Item = String>) -> String {
    let mut s = String::from(header);
    s.push('\n');
    for r in rows {
        s.push_str(&r);
        s.push('\n');
    }
    s
}

fn key(c: &CellReport) -> String {
    format!("{},{},{}", c.information_source, c.observability, c.target)
}

/// The files of a report: (name, contents).
pub fn write_report_files(r: &Report) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut json = serde_json::to_value(r).expect("a report serialises");
    json["thesis_comparison"] = json!(comparison(r)
        .iter()
        .map(|c| json!({"table": c[0], "information_source": c[1], "observability": c[2], "target": c[3], "quantity": c[4], "thesis": c[5].parse::<f64>().ok(), "ours": c[6].parse::<f64>().ok(), "difference": c[7].parse::<f64>().ok()}))
        .collect::<Vec<_>>());
    files.push((
        "report.json".into(),
        serde_json::to_string_pretty(&json).expect("serialises") + "\n",
    ));
    files.push(("report.md".into(), markdown(r)));
    files.push((
        "scores.csv".into(),
        csv(
            "information_source,observability,target,mstar_games,mstar_mean,expectimax_games,expectimax_mean,gain,z,p_one_tailed,significant,accuracy",
            r.cells.iter().map(|c| {
                format!(
                    "{},{},{:.6},{},{:.6},{:.6},{:.4},{:.6},{},{}",
                    key(c),
                    c.mstar.games,
                    c.mstar.mean_score_diff,
                    c.expectimax.games,
                    c.expectimax.mean_score_diff,
                    c.score_test.diff,
                    c.score_test.z,
                    c.score_test.p,
                    c.score_test.significant,
                    c.mstar.accuracy.map_or(String::new(), |a| format!("{a:.6}"))
                )
            }),
        ),
    ));
    files.push((
        "wins.csv".into(),
        csv(
            "information_source,observability,target,mstar_wins_or_ties,expectimax_wins_or_ties,games,gain,z,p_two_tailed,significant",
            r.cells.iter().map(|c| {
                format!(
                    "{},{},{},{},{},{:.4},{:.6},{}",
                    key(c),
                    c.mstar.wins_or_ties,
                    c.expectimax.wins_or_ties,
                    c.mstar.games.min(c.expectimax.games),
                    c.win_test.diff,
                    c.win_test.z,
                    c.win_test.p,
                    c.win_test.significant
                )
            }),
        ),
    ));
    files.push((
        "paired.csv".into(),
        csv(
            "information_source,observability,target,pairs,mean_diff,sd,ci_low,ci_high,p,significant,mcnemar_b,mcnemar_c,mcnemar_chi2,mcnemar_p,mcnemar_significant",
            r.cells.iter().map(|c| {
                format!(
                    "{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{},{},{},{:.4},{:.6},{}",
                    key(c),
                    c.paired.n,
                    c.paired.mean,
                    c.paired.sd,
                    c.paired.ci_low,
                    c.paired.ci_high,
                    c.paired.p,
                    c.paired.significant,
                    c.mcnemar.b,
                    c.mcnemar.c,
                    c.mcnemar.chi2,
                    c.mcnemar.p,
                    c.mcnemar.significant
                )
            }),
        ),
    ));
    files.push((
        "thesis_comparison.csv".into(),
        csv(
            "table,information_source,observability,target,quantity,thesis,ours,difference",
            comparison(r).into_iter().map(|c| c.join(",")),
        ),
    ));
    if let Some(cl) = &r.classifier {
        let t = thesis();
        files.push((
            "classifier.csv".into(),
            csv(
                "kind,samples,holdout,cv_accuracy,accuracy,thesis_accuracy,thesis_table,fit_ms,predict_ms,confusion",
                classifier_evaluations(cl).iter().map(|e| {
                    let th = thesis_classifier(&t, e);
                    format!(
                        "{},{},{},{},{},{},{},{},{},\"{}\"",
                        e["kind"].as_str().unwrap_or(""),
                        e["samples"],
                        e["holdout"],
                        e["cv_accuracy"],
                        e["accuracy"],
                        th.map_or(String::new(), |x| x["accuracy"].to_string()),
                        th.map_or(String::new(), |x| x["table"].to_string()),
                        e["fit_ms"],
                        e["predict_ms"],
                        e["confusion"]
                    )
                }),
            ),
        ));
        let mut mats: Vec<(String, [[u64; 3]; 3])> = Vec::new();
        for e in classifier_evaluations(cl) {
            if let Ok(m) = serde_json::from_value::<[[u64; 3]; 3]>(e["confusion"].clone()) {
                let tag = if e["chosen"] == true { "chosen: " } else { "" };
                mats.push((
                    format!("{tag}{} {}", e["kind"].as_str().unwrap_or("?"), e["samples"]),
                    m,
                ));
            }
        }
        files.push((
            "confusion.svg".into(),
            svg::confusions("Classifier confusion matrices (held-out samples)", &mats),
        ));
    }
    files.push((
        "value_gain.svg".into(),
        svg::bars(
            "M* minus Expectimax: mean paired score difference, 95% interval",
            "score difference gain",
            &r.cells
                .iter()
                .map(|c| Bar {
                    group: format!("{} {}", c.observability, c.information_source),
                    series: c.target.clone(),
                    value: c.paired.mean,
                    interval: Some((c.paired.ci_low, c.paired.ci_high)),
                })
                .collect::<Vec<_>>(),
        ),
    ));
    files.push((
        "win_gain.svg".into(),
        svg::bars(
            "M* minus Expectimax: wins and ties",
            "games",
            &r.cells
                .iter()
                .map(|c| Bar {
                    group: format!("{} {}", c.observability, c.information_source),
                    series: c.target.clone(),
                    value: c.win_test.diff as f64,
                    interval: None,
                })
                .collect::<Vec<_>>(),
        ),
    ));
    // One distribution per observability and engine, over every source and target.
    let mut hists: Vec<(String, std::collections::BTreeMap<i32, u64>)> = Vec::new();
    for o in ["full", "partial"] {
        for (name, pick) in [("M*", true), ("Expectimax", false)] {
            let mut h = std::collections::BTreeMap::new();
            for c in r.cells.iter().filter(|c| c.observability == o) {
                let e = if pick { &c.mstar } else { &c.expectimax };
                for (&k, &v) in &e.histogram {
                    *h.entry(k).or_insert(0) += v;
                }
            }
            if !h.is_empty() {
                hists.push((format!("{o} observation, {name}"), h));
            }
        }
    }
    files.push((
        "score_diff.svg".into(),
        svg::histograms("Distribution of score differences", &hists),
    ));
    files
}

/// Builds the report of an experiment directory and writes it to `<dir>/report/`.
/// Returns the report directory.
pub fn write_report(dir: &Path) -> Result<PathBuf, ReportError> {
    let report = build(dir)?;
    let out = dir.join(jobs::layout::REPORT_DIR);
    std::fs::create_dir_all(&out).map_err(|e| ReportError::File {
        path: out.clone(),
        message: e.to_string(),
    })?;
    // report.json last: its presence means the rest is written.
    let mut files = write_report_files(&report);
    files.sort_by_key(|(name, _)| name == "report.json");
    for (name, body) in files {
        jobs::layout::write_atomic(&out.join(&name), body.as_bytes())?;
    }
    Ok(out)
}
