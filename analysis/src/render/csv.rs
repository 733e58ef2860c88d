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
/// a rules factor, the rule set first; with a budget factor, the budget
/// after the rule set).
fn key(c: &CellReport) -> String {
    let rules = c.rules.as_ref().map_or(String::new(), |n| format!("{n},"));
    let budget = c.budget.map_or(String::new(), |b| format!("{b},"));
    format!(
        "{rules}{budget}{},{},{}",
        c.information_source.name(),
        c.observability,
        c.target
    )
}

/// A per-cell table's header, with a `rules` column first when the cells
/// have a rule set, and a `budget` column when they have budgets.
fn cell_header(r: &Report, header: &str) -> String {
    let budget = if r.cells.iter().any(|c| c.budget.is_some()) {
        "budget,"
    } else {
        ""
    };
    match r.cells.iter().any(|c| c.rules.is_some()) {
        true => format!("rules,{budget}{header}"),
        false => format!("{budget}{header}"),
    }
}

/// A number as JSON writes it (shortest round-trip form; NaN as `null`).
/// A share (an accuracy) to 6 decimals, trailing zeros dropped: a count
/// over a count, without float noise like `0.3675000000000001`.
fn fraction(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s.to_string()
    }
}

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
        "kind,samples,holdout,cv_accuracy,accuracy,thesis_accuracy,thesis_table,fit_ms,predict_ms,confusion,role",
        evaluations(cl).into_iter().map(|(chosen, e)| {
            let th = thesis::classifier(&t, e);
            format!(
                "{},{},{},{},{},{},{},{},{},\"{}\",{}",
                e.kind,
                e.samples,
                e.holdout,
                fraction(e.cv_accuracy),
                fraction(e.accuracy),
                th.map_or(String::new(), |x| x["accuracy"].to_string()),
                th.map_or(String::new(), |x| x["table"].to_string()),
                json_number(e.fit_ms),
                json_number(e.predict_ms),
                confusion_json(&e.confusion),
                if chosen { "model" } else { "comparison" }
            )
        }),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn shares_have_no_float_noise() {
        assert_eq!(super::fraction(0.3675000000000001), "0.3675");
        assert_eq!(super::fraction(0.7), "0.7");
        assert_eq!(super::fraction(1.0), "1");
        assert_eq!(super::fraction(0.0), "0");
    }
}
