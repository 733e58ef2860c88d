//! The thesis's published numbers (`data/thesis.json`) and our report's
//! numbers beside them.

use engine::{Observability, PlayerEngine};
use full::FullTarget;
use jobs::Source;
use jobs::training::Evaluation;
use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::Value;

use crate::THESIS_JSON;
use crate::build::{CellReport, Report};

/// The thesis's data, or nothing for a report on the full game (whose
/// numbers the thesis's do not describe).
pub(super) fn data(r: &Report) -> Value {
    if r.game.is_some() {
        return Value::Null;
    }
    published()
}

/// The thesis's data, whatever the report (the classifier's evaluations,
/// which only thesis-rule experiments have).
pub(super) fn published() -> Value {
    serde_json::from_str(THESIS_JSON).expect("the shipped thesis data is valid JSON")
}

/// The thesis's numbers for the same cell, if it has that cell.
pub(super) fn cell<'a>(t: &'a Value, c: &CellReport) -> Option<&'a Value> {
    t["cells"].as_array()?.iter().find(|x| {
        x["source"] == c.information_source.name()
            && x["observability"] == c.observability.to_string()
            && x["target"] == c.target.name()
    })
}

/// The thesis's evaluation of the same kind at the nearest sample size.
pub(super) fn classifier<'a>(t: &'a Value, e: &Evaluation) -> Option<&'a Value> {
    let n = e.samples as f64;
    t["classifier"]
        .as_array()?
        .iter()
        .filter(|x| x["kind"] == e.kind.as_str())
        .min_by(|a, b| {
            let da = (a["samples"].as_f64().unwrap_or(0.0) - n).abs();
            let db = (b["samples"].as_f64().unwrap_or(0.0) - n).abs();
            da.total_cmp(&db)
        })
}

/// One quantity of one cell: the thesis's value and ours.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Comparison {
    /// The thesis's table number.
    pub table: u64,
    pub information_source: Source,
    pub observability: Observability,
    pub target: FullTarget,
    pub quantity: &'static str,
    pub thesis: f64,
    pub ours: f64,
}

impl Comparison {
    /// Ours minus the thesis's.
    pub fn difference(&self) -> f64 {
        self.ours - self.thesis
    }

    /// The columns of the CSV and Markdown tables: table, source,
    /// observability, target, quantity, thesis, ours, difference.
    pub fn columns(&self) -> [String; 8] {
        [
            self.table.to_string(),
            self.information_source.name().to_string(),
            self.observability.to_string(),
            self.target.to_string(),
            self.quantity.to_string(),
            format!("{:.4}", self.thesis),
            format!("{:.4}", self.ours),
            format!("{:.4}", self.difference()),
        ]
    }
}

/// `x` as it is shown to four decimals (NaN stays NaN, written `null`).
fn round4(x: f64) -> f64 {
    format!("{x:.4}").parse().expect("a formatted f64 parses")
}

/// report.json's form: the table number as a string, the numbers to four decimals.
impl Serialize for Comparison {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Comparison", 8)?;
        m.serialize_field("table", &self.table.to_string())?;
        m.serialize_field("information_source", &self.information_source)?;
        m.serialize_field("observability", &self.observability)?;
        m.serialize_field("target", &self.target)?;
        m.serialize_field("quantity", self.quantity)?;
        m.serialize_field("thesis", &round4(self.thesis))?;
        m.serialize_field("ours", &round4(self.ours))?;
        m.serialize_field("difference", &round4(self.difference()))?;
        m.end()
    }
}

/// Every cell the thesis has, six quantities each.
pub(super) fn comparison(r: &Report) -> Vec<Comparison> {
    let t = data(r);
    let games = t["games_per_cell"].as_f64().unwrap_or(50400.0);
    let number = |x: &Value| x.as_f64().unwrap_or(f64::NAN);
    let share = |w: u64, n: u64| w as f64 / n.max(1) as f64;
    let mut out = Vec::new();
    for c in &r.cells {
        let Some(x) = cell(&t, c) else {
            continue;
        };
        let score_table = x["score_table"].as_u64().unwrap_or(0);
        let win_table = x["win_table"].as_u64().unwrap_or(0);
        let quantities = [
            (
                score_table,
                "M* mean score_diff",
                number(&x[PlayerEngine::MStar.name()]),
                c.mstar.mean_score_diff,
            ),
            (
                score_table,
                "Expectimax mean score_diff",
                number(&x[PlayerEngine::Expectimax.name()]),
                c.expectimax.mean_score_diff,
            ),
            (score_table, "score gain", number(&x["gain"]), c.score_test.diff),
            (
                win_table,
                "M* win/tie share",
                number(&x["mstar_wins"]) / games,
                share(c.mstar.wins_or_ties, c.mstar.games),
            ),
            (
                win_table,
                "Expectimax win/tie share",
                number(&x["expectimax_wins"]) / games,
                share(c.expectimax.wins_or_ties, c.expectimax.games),
            ),
            (
                score_table,
                "prediction accuracy",
                number(&x["accuracy"]),
                c.mstar.accuracy.unwrap_or(f64::NAN),
            ),
        ];
        for (table, quantity, thesis, ours) in quantities {
            out.push(Comparison {
                table,
                information_source: c.information_source,
                observability: c.observability,
                target: c.target,
                quantity,
                thesis,
                ours,
            });
        }
    }
    out
}
