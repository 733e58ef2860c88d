//! `cargo run -p checks -- ROOT`: the structural source checks over the
//! tree at ROOT (scripts/check-invariants.sh runs it). Prints one
//! violation a line and exits 1, or a summary and exits 0.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    match checks::check_tree(&root) {
        Err(e) => {
            eprintln!("checks: {e}");
            ExitCode::from(2)
        }
        Ok(found) if found.is_empty() => {
            println!(
                "syn checks: no function over {} lines; wire types only at the edges",
                checks::MAX_FN_LINES
            );
            ExitCode::SUCCESS
        }
        Ok(found) => {
            for v in &found {
                println!("{v}");
            }
            ExitCode::FAILURE
        }
    }
}
