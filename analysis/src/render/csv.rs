//! The CSVs: one per table of the report.

use jobs::training::Report as ClassifierReport;

use super::{confusion_json, evaluations, thesis};
use crate::build::{CellReport, Report};

/// A CSV: the header, then one line per row.
fn table(header: &str, rows: impl IntoIterator<Item = String>) -> String {
    let mut s = String::from(header);
    s.push('\n');
    for r in rows {
        s.push_str(&r);
        s.push('\n');
    }
    s
}

/// A cell's key columns: information_source, observability, target (with
/// a rules factor, the rule set first).
fn key(c: &CellReport) -> String {
    let rules = c.rules.as_ref().map_or(String::new(), |n| format!("{n},"));
    format!(
        "{rules}{},{},{}",
        c.information_source.name(),
        c.observability,
        c.target
    )
}

/// A per-cell table's header, with a `rules` column first when the cells
/// have a rule set.
fn cell_header(r: &Report, header: &str) -> String {
    match r.cells.iter().any(|c| c.rules.is_some()) {
        true => format!("rules,{header}"),
        false => header.to_string(),
    }
}

/// A number as JSON writes it (shortest round-trip form; NaN as `null`).
fn json_number(x: f64) -> String {
    serde_json::Value::from(x).to_string()
}

/// scores.csv: Eq. 10 per cell.
pub(super) fn scores(r: &Report) -> String {
    table(
        &cell_header(
            r,
            "information_source,observability,target,mstar_games,mstar_mean,expectimax_games,expectimax_mean,gain,z,p_one_tailed,significant,accuracy",
        ),
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
    )
}

/// wins.csv: Eq. 11 per cell.
pub(super) fn wins(r: &Report) -> String {
    table(
        &cell_header(
            r,
            "information_source,observability,target,mstar_wins_or_ties,expectimax_wins_or_ties,games,gain,z,p_two_tailed,significant",
        ),
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
    )
}

/// paired.csv: the paired test and McNemar's per cell.
pub(super) fn paired(r: &Report) -> String {
    table(
        &cell_header(
            r,
            "information_source,observability,target,pairs,mean_diff,sd,ci_low,ci_high,p,significant,mcnemar_b,mcnemar_c,mcnemar_chi2,mcnemar_p,mcnemar_significant",
        ),
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
    )
}

/// thesis_comparison.csv: the side by side with the thesis.
pub(super) fn thesis_comparison(r: &Report) -> String {
    table(
        "table,information_source,observability,target,quantity,thesis,ours,difference",
        thesis::comparison(r).iter().map(|c| c.columns().join(",")),
    )
}

/// classifier.csv: every evaluation beside the thesis's nearest.
pub(super) fn classifier(cl: &ClassifierReport) -> String {
    let t = thesis::published();
    table(
        "kind,samples,holdout,cv_accuracy,accuracy,thesis_accuracy,thesis_table,fit_ms,predict_ms,confusion",
        evaluations(cl).into_iter().map(|(_, e)| {
            let th = thesis::classifier(&t, e);
            format!(
                "{},{},{},{},{},{},{},{},{},\"{}\"",
                e.kind,
                e.samples,
                e.holdout,
                json_number(e.cv_accuracy),
                json_number(e.accuracy),
                th.map_or(String::new(), |x| x["accuracy"].to_string()),
                th.map_or(String::new(), |x| x["table"].to_string()),
                json_number(e.fit_ms),
                json_number(e.predict_ms),
                confusion_json(&e.confusion)
            )
        }),
    )
}
