//! `muggins`: the command-line front end of the search core.

// Standard output goes through `out`: these two shadow the standard
// `println!` and `print!` in every module of this crate (defined before
// them), so a closed pipe (`muggins play ... | head -3`) ends the process
// quietly instead of panicking.

/// `println!` through [`out::print`]: see `out.rs`.
macro_rules! println {
    () => {
        $crate::out::print(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::out::print(format_args!($($arg)*), true)
    };
}

/// `print!` through [`out::print`]: see `out.rs`.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::out::print(format_args!($($arg)*), false)
    };
}

mod args;
mod bench;
mod cluster;
mod fit_eval;
mod fit_predict;
mod openspiel;
mod out;
mod play;
mod play_full;
mod play_full_args;
mod report;
mod solve;
mod text;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Reproducible experiments on dominoes: the thesis (Myers, 2014), All Fives for 2-4 seats, and OpenSpiel's block and team games.
#[derive(Debug, Parser)]
#[command(name = "muggins", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the exact expected final score difference of starting states under
    /// full observation, as CSV `state,value`.
    Solve(solve::SolveArgs),
    /// Play one game and show it move by move.
    Play(play::PlayArgs),
    /// Run the fixed benchmark suite: solves and games per engine/observability.
    Bench(bench::BenchArgs),
    /// Run an experiment here: a coordinator and workers in this process.
    Run(cluster::RunArgs),
    /// Serve the coordinator (gRPC) with durable state.
    Coordinator(cluster::CoordinatorArgs),
    /// Lease and play shards from a coordinator.
    Worker(cluster::WorkerArgs),
    /// Submit an experiment spec to a coordinator; prints its id.
    Submit(cluster::SubmitArgs),
    /// Show experiments, or one experiment (--watch follows it).
    Status(cluster::StatusArgs),
    /// Cancel an experiment.
    Cancel(cluster::CancelArgs),
    /// Rebuild an experiment's report from its Parquet partitions.
    Report(ReportArgs),
    /// Fit the full game's learned leaf evaluation and write it as an artifact.
    FitEval(fit_eval::FitEvalArgs),
    /// Fit the opponent-move predictors of the search's shaping, print their held-out scores, write the artifact.
    FitPredict(fit_predict::FitPredictArgs),
    /// Interoperate with OpenSpiel's dominoes games (block and team).
    #[command(subcommand, name = "openspiel")]
    OpenSpiel(openspiel::OpenSpielCommand),
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// The experiment directory, <results>/<experiment>.
    dir: std::path::PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Solve(a) => solve::run(a),
        Command::Play(a) => play::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Run(a) => cluster::run(a),
        Command::Coordinator(a) => cluster::coordinator(a),
        Command::Worker(a) => cluster::worker(a),
        Command::Submit(a) => cluster::submit(a),
        Command::Status(a) => cluster::status(a),
        Command::Cancel(a) => cluster::cancel(a),
        Command::Report(a) => report::run(&a.dir),
        Command::FitEval(a) => fit_eval::run(a),
        Command::FitPredict(a) => fit_predict::run(a),
        Command::OpenSpiel(c) => openspiel::run(c),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<cluster::Interrupted>().is_some() => {
            eprintln!("{e}");
            ExitCode::from(cluster::Interrupted::EXIT as u8)
        }
        Err(e) => {
            eprintln!("error: {}", error_text(&e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, leaving out a cause whose text the
/// line already holds (an error that prints its source would else repeat
/// the path and the OS error).
fn error_text(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
