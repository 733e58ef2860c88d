//! Writing the report: report.md, report.json, one CSV per table, plots.
//! One function per output (`markdown`, `csv`, `plots` and `report_json`
//! here); `report_files` lists them and `write_report` writes them.

mod csv;
mod markdown;
mod plots;
mod thesis;

use std::path::{Path, PathBuf};

use jobs::training::{Evaluation, Report as ClassifierReport};
use serde::Serialize;

use crate::build::Report;
use crate::{ReportError, build};

/// The classifier's evaluations: the comparisons, then the chosen model's
/// (flagged `true`).
fn evaluations(cl: &ClassifierReport) -> Vec<(bool, &Evaluation)> {
    cl.comparisons
        .iter()
        .map(|e| (false, e))
        .chain([(true, &cl.chosen)])
        .collect()
}

/// A confusion matrix as compact JSON, `[[a,b,c],[d,e,f],[g,h,i]]`.
fn confusion_json(m: &[[u64; 3]; 3]) -> String {
    serde_json::to_string(m).expect("a matrix serialises")
}

/// report.json: the report's numbers, then the side by side with the thesis.
fn report_json(r: &Report) -> String {
    #[derive(Serialize)]
    struct Json<'a> {
        #[serde(flatten)]
        report: &'a Report,
        thesis_comparison: Vec<thesis::Comparison>,
    }
    let json = Json {
        report: r,
        thesis_comparison: thesis::comparison(r),
    };
    serde_json::to_string_pretty(&json).expect("a report serialises") + "\n"
}

/// The files of a report, (name, contents), in the order `write_report`
/// writes them: report.json last, so that its presence means the rest is
/// written.
pub fn report_files(r: &Report) -> Vec<(&'static str, String)> {
    // A grid of named agents only has none of the thesis's cells: its
    // tables and plots would be empty, so they are left out.
    let cells = !(r.cells.is_empty() && r.tournament.is_some());
    let mut files = vec![(jobs::layout::REPORT_MD_FILE, markdown::report(r))];
    if cells {
        files.extend([
            ("scores.csv", csv::scores(r)),
            ("wins.csv", csv::wins(r)),
            ("paired.csv", csv::paired(r)),
        ]);
        // Only under the thesis's rules is there a thesis to compare with
        // (a full-game run would get a header alone).
        if !thesis::comparison(r).is_empty() {
            files.push(("thesis_comparison.csv", csv::thesis_comparison(r)));
        }
    }
    if let Some(cl) = &r.classifier {
        files.push(("classifier.csv", csv::classifier(cl)));
        files.push(("confusion.svg", plots::confusion(cl)));
    }
    if !r.beliefs.is_empty() {
        files.push(("beliefs.csv", crate::beliefs::csv(&r.beliefs)));
    }
    if let Some(p) = &r.prediction {
        files.push(("prediction.csv", crate::shaping::prediction_csv(p)));
        files.push(("prediction.svg", crate::shaping::prediction_plot(p)));
    }
    if !r.shaping.is_empty() {
        files.push(("shaping.csv", crate::shaping::csv(&r.shaping)));
        if let Some(svg) = crate::shaping::plot(&r.shaping) {
            files.push(("shaping.svg", svg));
        }
    }
    if let Some(t) = &r.tournament {
        files.push(("tournament.csv", crate::tournament::csv(t)));
        files.push(("elo.csv", crate::tournament::elo_csv(t)));
        files.push(("elo.svg", crate::tournament::elo_plot(t)));
        if let Some(sp) = &t.sprt {
            files.push(("sprt.svg", crate::tournament::sprt_plot(sp)));
        }
    }
    if let Some(w) = &r.workers {
        files.push(("workers.csv", crate::workers::csv(w)));
    }
    if !r.factors.is_empty() {
        files.push(("factors.csv", crate::factors::csv(&r.factors)));
    }
    if cells {
        files.push(("value_gain.svg", plots::value_gain(r)));
        files.push(("win_gain.svg", plots::win_gain(r)));
        files.push(("score_diff.svg", plots::score_diff(r)));
    }
    files.push((jobs::layout::REPORT_JSON_FILE, report_json(r)));
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
    for (name, body) in report_files(&report) {
        jobs::layout::write_atomic(&out.join(name), body.as_bytes())?;
    }
    Ok(out)
}

/// Reads back the report `write_report` wrote for an experiment directory
/// (`<dir>/report/report.json`), without reading the partitions again.
pub fn read_report(dir: &Path) -> Result<Report, ReportError> {
    let path = dir.join(jobs::layout::REPORT_JSON);
    let bytes = std::fs::read(&path).map_err(|e| ReportError::File {
        path: path.clone(),
        message: e.to_string(),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ReportError::File {
        path,
        message: e.to_string(),
    })
}
