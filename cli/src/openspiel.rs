//! `muggins openspiel`: interoperability with OpenSpiel's Python dominoes
//! games. `replay` reads OpenSpiel histories (JSON lines) and prints, for
//! each, the legal action ids along it and the returns, checking our rules
//! against OpenSpiel's move for move.

use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use full::{FullRules, Preset, openspiel};
use serde_json::{Value, json};

/// What `muggins openspiel` does.
#[derive(Debug, Subcommand)]
pub enum OpenSpielCommand {
    /// Replay OpenSpiel histories read as JSON lines `{"history": [a0, a1, ...]}`
    /// on stdin; print one JSON line each: `{"legal": [[...], ...], "returns":
    /// [...] | null}`, or `{"error": "..."}` naming the step and action id of
    /// an illegal history.
    Replay(ReplayArgs),
}

/// `muggins openspiel replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The OpenSpiel game the histories come from.
    #[arg(long)]
    game: Game,
}

/// OpenSpiel's games that muggins plays exactly.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Game {
    /// `python_block_dominoes`: muggins's `block` preset.
    #[value(name = "python_block_dominoes")]
    Block,
    /// `python_team_dominoes`: muggins's `team` preset.
    #[value(name = "python_team_dominoes")]
    Team,
}

/// Runs `muggins openspiel ...`.
pub fn run(command: OpenSpielCommand) -> Result<()> {
    match command {
        OpenSpielCommand::Replay(a) => replay(a),
    }
}

fn replay(args: ReplayArgs) -> Result<()> {
    let rules = FullRules::preset(match args.game {
        Game::Block => Preset::Block,
        Game::Team => Preset::Team,
    });
    let stdin = std::io::stdin().lock();
    let mut out = crate::out::stdout();
    for (n, line) in stdin.lines().enumerate() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match history(&line) {
            Ok(h) => match openspiel::replay_history(&rules, &h) {
                Ok(r) => json!({ "legal": r.legal, "returns": r.returns }),
                Err(e) => json!({ "error": format!("line {}: {e}", n + 1) }),
            },
            Err(why) => json!({ "error": format!("line {}: {why}", n + 1) }),
        };
        writeln!(out, "{answer}").context("writing stdout")?;
        out.flush().context("writing stdout")?;
    }
    Ok(())
}

/// The history of one input line.
fn history(line: &str) -> Result<Vec<u64>, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Some(items) = v.get("history").and_then(Value::as_array) else {
        return Err(r#"expected an object {"history": [a0, a1, ...]}"#.into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, a)| {
            a.as_u64()
                .ok_or_else(|| format!("step {i}: action {a} is not a non-negative integer"))
        })
        .collect()
}
