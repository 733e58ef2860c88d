//! The analysis report: the thesis's tables (13-26) from an experiment's
//! Parquet partitions and classifier report, with its significance tests,
//! the paired tests that common random numbers allow, a consistency check, a
//! side-by-side with the thesis, and plots.

mod beliefs;
mod build;
mod factors;
mod pairing;
mod render;
mod shaping;
pub mod stats;
mod summary;
mod svg;
mod table;
mod tournament;
pub mod train_report;
mod workers;

pub use beliefs::BeliefSummary;
pub use build::{Accumulator, CellReport, Consistency, EngineSummary, Report, build, build_from_rows, build_live};
pub use factors::FactorLevel;
pub use render::{read_report, report_files, write_report};
pub use shaping::ShapingSummary;
pub use summary::summary_table;
pub use svg::nice_ticks;
pub use tournament::{Game, PairingSummary, Rating, SprtReport, TournamentReport, bradley_terry};
pub use workers::{WorkerResidual, WorkersReport};

/// The thesis's published numbers (Tables 13-26).
pub const THESIS_JSON: &str = include_str!("../data/thesis.json");

/// Why a report could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Io(#[from] jobs::IoError),
    #[error("{path}: {message}")]
    File { path: std::path::PathBuf, message: String },
    #[error("no game partitions under {0}")]
    Empty(std::path::PathBuf),
}

/// JSON has no NaN (nor infinities): serde_json writes them as `null`, and
/// this reads a `null` back as NaN, so a written report can be read again.
fn nan_from_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
