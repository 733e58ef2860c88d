//! `muggins solve`: exact values of starting states under full observation.

use std::io::Write;

use anyhow::{Context, Result};
use clap::Args;
use engine::{Deal, EngineKind, LocalTable, Position, Rules, SearchConfig, Searcher};

use crate::args::{RulesArgs, parse_depth, parse_states};

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// expectimax, mstar:random, mstar:scorer or mstar:defender.
    #[arg(long, default_value_t = EngineKind::Expectimax)]
    pub engine: EngineKind,
    /// Starting states: all, an index, a range like 0-99, or a comma-separated list.
    #[arg(long, default_value = "all")]
    pub states: String,
    /// Look-ahead in turns: unlimited (exact), or 1-254.
    #[arg(long, default_value = "unlimited")]
    pub depth: String,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Prune the search (alpha-beta, and Star1 at chance nodes): the same
    /// values, fewer positions expanded.
    #[arg(long)]
    pub prune: bool,
    #[command(flatten)]
    pub rules: RulesArgs,
}

pub fn run(args: SolveArgs) -> Result<()> {
    let rules = args.rules.rules()?;
    let states = parse_states(&args.states, &rules)?;
    let config = SearchConfig {
        depth: parse_depth(&args.depth)?,
        ..SearchConfig::default()
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let values = solve(&rules, config, args.engine, &states, threads, args.prune);
    let mut out = crate::out::stdout();
    writeln!(out, "state,value")?;
    for (s, v) in states.iter().zip(values) {
        // Adding 0.0 turns -0.0 into 0.0.
        writeln!(out, "{s},{:.9}", v + 0.0)?;
    }
    out.flush().context("writing the values to standard output")?;
    Ok(())
}

/// Values of `states` in order. Each thread takes a contiguous run of states
/// (neighbours share a boneyard, so their searches overlap) with its own
/// table; `prune` turns pruning on (the values are the same).
pub fn solve(
    rules: &Rules,
    config: SearchConfig,
    engine: EngineKind,
    states: &[u64],
    threads: usize,
    prune: bool,
) -> Vec<f64> {
    let mut values = vec![0.0; states.len()];
    let chunk = states.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (ids, out) in states.chunks(chunk).zip(values.chunks_mut(chunk)) {
            scope.spawn(move || {
                let mut searcher = Searcher::new(rules.clone(), config, LocalTable::new()).with_pruning(prune);
                for (&s, v) in ids.iter().zip(out.iter_mut()) {
                    let deal = Deal::from_index(rules, s).expect("states were checked against the rules");
                    *v = searcher.value_of(&Position::start(rules, &deal), engine);
                }
            });
        }
    });
    values
}
