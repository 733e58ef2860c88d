//! The plots, as SVG.

use std::collections::BTreeMap;

use engine::Observability;
use jobs::training::Report as ClassifierReport;

use super::evaluations;
use crate::build::{CellReport, Report};
use crate::svg::{self, Bar};

/// A cell's bar: grouped by quadrant, one series per target.
fn bar(c: &CellReport, value: f64, interval: Option<(f64, f64)>) -> Bar {
    Bar {
        group: match &c.rules {
            Some(n) => format!("{n} {} {}", c.observability, c.information_source.name()),
            None => format!("{} {}", c.observability, c.information_source.name()),
        },
        series: c.target.to_string(),
        value,
        interval,
    }
}

/// value_gain.svg: the mean paired score difference per cell, with its interval.
pub(super) fn value_gain(r: &Report) -> String {
    svg::bars(
        "M* minus Expectimax: mean paired score difference, 95% interval",
        "score difference gain",
        &r.cells
            .iter()
            .map(|c| bar(c, c.paired.mean, Some((c.paired.ci_low, c.paired.ci_high))))
            .collect::<Vec<_>>(),
    )
}

/// win_gain.svg: the win/tie gain per cell.
pub(super) fn win_gain(r: &Report) -> String {
    svg::bars(
        "M* minus Expectimax: wins and ties",
        "games",
        &r.cells
            .iter()
            .map(|c| bar(c, c.win_test.diff as f64, None))
            .collect::<Vec<_>>(),
    )
}

/// score_diff.svg: one distribution per observability and engine, over
/// every source and target.
pub(super) fn score_diff(r: &Report) -> String {
    let mut hists: Vec<(String, BTreeMap<i32, u64>)> = Vec::new();
    for o in [Observability::Full, Observability::Partial] {
        for (name, pick) in [("M*", true), ("Expectimax", false)] {
            let mut h = BTreeMap::new();
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
    svg::histograms("Distribution of score differences", &hists)
}

/// confusion.svg: the classifier's confusion matrices.
pub(super) fn confusion(cl: &ClassifierReport) -> String {
    let mats: Vec<(String, [[u64; 3]; 3])> = evaluations(cl)
        .into_iter()
        .map(|(chosen, e)| {
            let tag = if chosen { "chosen: " } else { "" };
            (format!("{tag}{} {}", e.kind, e.samples), e.confusion)
        })
        .collect();
    svg::confusions("Classifier confusion matrices (held-out samples)", &mats)
}
