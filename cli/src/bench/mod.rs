//! `muggins bench`: a fixed suite of solves and games. It prints node counts
//! (behaviour checksums: a change that alters them changes behaviour) and
//! speeds, each the median of several runs.

mod beliefs;
mod coordinator;
mod double6;
mod sandbox;

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Args;
use engine::{
    EngineKind, GameConfig, InfoSource, LocalTable, Observability, PlayerEngine, Rules, SearchConfig, Searcher,
    TargetKind, play_game,
};

use crate::args::parse_states;
use crate::solve::solve;
use crate::text::plural;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The suite, as a word (`muggins bench coordinator`); the same as --suite.
    #[arg(value_enum, value_name = "SUITE")]
    pub which: Option<Suite>,
    /// Which part of the suite: all, thesis (solves, games, opponent
    /// modeling), playouts (random full-game hands, and a perft of All
    /// Fives), double6 (the full game's search: pruning, budgets, hands),
    /// beliefs (the hidden tiles' beliefs at double-6), coordinator (a
    /// coordinator under simulated workers; not part of all) or sandbox
    /// (what an external agent's walls cost; not part of all).
    #[arg(long, value_enum, default_value = "all")]
    pub suite: Suite,
    /// coordinator: simulated workers.
    #[arg(long, default_value_t = 1000)]
    pub workers: usize,
    /// coordinator: seconds the load runs.
    #[arg(long, default_value_t = 60)]
    pub duration: u64,
    /// coordinator: a worker's heartbeat period, seconds.
    #[arg(long, default_value_t = 10.0)]
    pub heartbeat: f64,
    /// coordinator: a task's mean length, seconds (each 0.5-1.5 times it).
    #[arg(long, default_value_t = 60.0)]
    pub task_secs: f64,
    /// coordinator: gRPC connections the workers share.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// coordinator: keep no web view open (by default a viewer fetches its
    /// pages while the load runs, and their latencies are printed).
    #[arg(long)]
    pub no_view: bool,
    /// Timed runs per measurement; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Starting states the games use (the solves always use all 4,200).
    #[arg(long, default_value = "0-4199")]
    pub states: String,
    /// double6: only the rows whose name contains this text (case-sensitive),
    /// e.g. `--rows "K=16, 20,000, learned"`; the others are left out.
    #[arg(long)]
    pub rows: Option<String>,
}

/// The parts of the benchmark suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Suite {
    /// Everything.
    All,
    /// The thesis rules: solves, searched games, opponent modeling.
    Thesis,
    /// Random playouts of the full game's presets, and a perft of All Fives.
    Playouts,
    /// The full game's search on double-6 All Fives.
    Double6,
    /// Beliefs over the hidden tiles at double-6: updates, marginals, sampling.
    Beliefs,
    /// The coordinator under simulated workers: RPC rates and latencies.
    Coordinator,
    /// What the external agents' sandbox costs a start and a decision.
    Sandbox,
}

pub(crate) fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

pub fn run(args: BenchArgs) -> Result<()> {
    if args.runs == 0 {
        bail!("--runs 0: at least one run is needed");
    }
    let suite = args.which.unwrap_or(args.suite);
    if suite == Suite::Coordinator {
        let secs = |name: &str, v: f64| {
            if v.is_finite() && (0.01..=3600.0).contains(&v) {
                Ok(Duration::from_secs_f64(v))
            } else {
                Err(anyhow::anyhow!("--{name} {v}: give 0.01 to 3,600 seconds"))
            }
        };
        return coordinator::run(coordinator::Load {
            workers: args.workers,
            duration: Duration::from_secs(args.duration),
            heartbeat: secs("heartbeat", args.heartbeat)?,
            task: secs("task-secs", args.task_secs)?,
            connections: args.connections.clamp(1, 1024),
            view: !args.no_view,
        });
    }
    let args = BenchArgs { suite, ..args };
    let rules = Rules::thesis();
    let states = parse_states(&args.states, &rules)?;
    if args.suite == Suite::Playouts {
        playouts_bench(args.runs)?;
        return perft_bench(args.runs);
    }
    if let Some(rows) = &args.rows
        && !matches!(args.suite, Suite::Double6)
    {
        anyhow::bail!("--rows {rows:?} filters the double6 suite's rows: give --suite double6 with it");
    }
    if args.suite == Suite::Double6 {
        return double6::run(args.runs, args.rows.as_deref());
    }
    if args.suite == Suite::Beliefs {
        return beliefs::run(args.runs);
    }
    if args.suite == Suite::Sandbox {
        return sandbox::run(args.runs);
    }
    solves_bench(&rules, args.runs)?;
    games_bench(&rules, &states, args.runs)?;
    classifier_bench(&rules, args.runs)?;
    if args.suite == Suite::All {
        playouts_bench(args.runs)?;
        perft_bench(args.runs)?;
        double6::run(args.runs, args.rows.as_deref())?;
        beliefs::run(args.runs)?;
    }
    Ok(())
}

/// The thesis's starting states solved by each engine, plain and pruned,
/// on one thread and on every core, cold tables (medians).
fn solves_bench(rules: &Rules, runs: usize) -> Result<()> {
    let all: Vec<u64> = (0..rules.starting_states()).collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "muggins bench: thesis rules (double-3, hands 3, boneyard 4), {} each, median, {}",
        plural(runs as u64, "run"),
        plural(cores as u64, "core")
    );
    println!();
    println!(
        "{:<26} {:>10} {:>12} {:>12} {:>14}",
        "solve (cold table)",
        "states",
        "1 thread",
        plural(cores as u64, "thread"),
        "nodes"
    );
    // Median times on one thread and on every core, cold tables, and the
    // nodes the one-thread solve expanded.
    let solve_bench = |engine: EngineKind, prune: bool| {
        let mut one = Vec::new();
        let mut many = Vec::new();
        let mut nodes = 0;
        for _ in 0..runs {
            let t = Instant::now();
            let mut searcher =
                Searcher::new(rules.clone(), SearchConfig::default(), LocalTable::new()).with_pruning(prune);
            let mut sum = 0.0;
            for &s in &all {
                let deal = engine::Deal::from_index(rules, s).expect("valid state");
                sum += searcher.value_of(&engine::Position::start(rules, &deal), engine);
            }
            one.push(t.elapsed());
            nodes = searcher.nodes();
            std::hint::black_box(sum);
            let t = Instant::now();
            let values = solve(rules, SearchConfig::default(), engine, &all, cores, prune);
            many.push(t.elapsed());
            std::hint::black_box(values);
        }
        (median(one), median(many), nodes)
    };
    let mut unpruned = Vec::new();
    for engine in EngineKind::ALL {
        let (one, many, nodes) = solve_bench(engine, false);
        unpruned.push(nodes);
        println!(
            "{:<26} {:>10} {:>10.1}ms {:>10.1}ms {:>14}",
            engine.to_string(),
            all.len(),
            ms(one),
            ms(many),
            nodes
        );
    }
    // The same solves with pruning: the same values from fewer nodes.
    println!();
    println!(
        "{:<26} {:>10} {:>12} {:>12} {:>14} {:>10}",
        "solve, pruned (cold table)",
        "states",
        "1 thread",
        plural(cores as u64, "thread"),
        "nodes",
        "fewer"
    );
    for (engine, plain) in EngineKind::ALL.into_iter().zip(unpruned) {
        let (one, many, nodes) = solve_bench(engine, true);
        println!(
            "{:<26} {:>10} {:>10.1}ms {:>10.1}ms {:>14} {:>9.1}%",
            engine.to_string(),
            all.len(),
            ms(one),
            ms(many),
            nodes,
            100.0 * (plain as f64 - nodes as f64) / plain as f64
        );
    }
    Ok(())
}

/// Games against every target from `states`, per engine and observation,
/// warm table (medians); a second pass must give the same results.
fn games_bench(rules: &Rules, states: &[u64], runs: usize) -> Result<()> {
    println!();
    println!(
        "{:<26} {:>10} {:>12} {:>12} {:>14} {:>14}",
        "games (oracle, warm table)", "games", "per game", "games/s/core", "root nodes", "sum score_diff"
    );
    let mut table = LocalTable::new();
    for observability in [Observability::Full, Observability::Partial] {
        for engine in [PlayerEngine::MStar, PlayerEngine::Expectimax] {
            let games: Vec<GameConfig> = TargetKind::ALL
                .iter()
                .flat_map(|&target| {
                    states.iter().map(move |&s| GameConfig {
                        seed: 2014,
                        starting_state: s,
                        repeat: 1,
                        engine,
                        target,
                        observability,
                    })
                })
                .collect();
            let mut searcher = Searcher::new(rules.clone(), SearchConfig::default(), std::mem::take(&mut table));
            // One untimed pass warms the table.
            let (nodes, diff) = play_all(&mut searcher, &games)?;
            let mut times = Vec::new();
            for _ in 0..runs {
                let t = Instant::now();
                let again = play_all(&mut searcher, &games)?;
                times.push(t.elapsed());
                if again != (nodes, diff) {
                    bail!(
                        "{engine}/{observability}: a second pass gave different results: the search is not deterministic"
                    );
                }
            }
            let t = median(times);
            println!(
                "{:<26} {:>10} {:>10.2}us {:>12.0} {:>14} {:>14}",
                format!("{engine}/{observability}"),
                games.len(),
                t.as_secs_f64() * 1e6 / games.len() as f64,
                games.len() as f64 / t.as_secs_f64(),
                nodes,
                diff
            );
            table = searcher_into_table(searcher);
        }
    }
    Ok(())
}

/// Hands of the full game played by uniformly random legal plays, one
/// thread, from a fixed seed (`scripts/openspiel-bench.py` sets these beside
/// OpenSpiel's Python games).
fn playouts_bench(runs: usize) -> Result<()> {
    use full::{FullConfig, FullRules, Preset, fives_playouts, playouts};
    const GAMES: u64 = 1_000_000;
    println!();
    println!(
        "{:<26} {:>10} {:>12} {:>12} {:>14}",
        "random playouts (double-6)", "games", "median", "games/s/core", "checksum"
    );
    let block = FullRules::preset(Preset::Block);
    let team = FullRules::preset(Preset::Team);
    let fives = |seats| FullRules::new(FullConfig::all_fives(seats)).expect("the preset's defaults are valid");
    let (two, four) = (fives(2), fives(4));
    let rows: [(&str, &dyn Fn() -> i64); 4] = [
        ("block", &|| playouts(&block, 2014, GAMES)),
        ("team", &|| playouts(&team, 2014, GAMES)),
        ("all-fives, 2 seats (hand)", &|| fives_playouts(&two, 2014, GAMES)),
        ("all-fives, 2x2 teams (hand)", &|| fives_playouts(&four, 2014, GAMES)),
    ];
    for (name, run) in rows {
        let mut times = Vec::new();
        let mut check = None;
        for _ in 0..runs {
            let t = Instant::now();
            let sum = run();
            times.push(t.elapsed());
            if check.is_some_and(|c| c != sum) {
                bail!("{name}: a second pass gave a different sum: the playouts are not deterministic");
            }
            check = Some(sum);
        }
        let t = median(times);
        println!(
            "{:<26} {:>10} {:>10.1}ms {:>12.0} {:>14}",
            name,
            GAMES,
            ms(t),
            GAMES as f64 / t.as_secs_f64(),
            check.unwrap_or_default()
        );
    }
    Ok(())
}

/// Perft of two-seat All Fives from the first 64 deals (each opened as the
/// first hand of a match), to a fixed depth: a node count that checks move
/// generation and making moves, and their speed on one core.
fn perft_bench(runs: usize) -> Result<()> {
    use full::{FivesPosition, FullConfig, FullRules, Opening, deal_from_index, fives_perft};
    const DEPTH: u8 = 8;
    let rules = FullRules::new(FullConfig::all_fives(2)).expect("the preset's defaults are valid");
    let starts: Vec<FivesPosition> = (0..64u64)
        .map(|d| {
            let hands = deal_from_index(&rules, d * 2_151_252_675).expect("a deal index");
            FivesPosition::deal(&rules, hands, Opening::of(&rules, &hands, None))
        })
        .collect();
    let mut times = Vec::new();
    let mut nodes = 0;
    for _ in 0..runs {
        let t = Instant::now();
        nodes = starts.iter().map(|p| fives_perft(&rules, p, DEPTH)).sum::<u64>();
        times.push(t.elapsed());
    }
    let t = median(times);
    println!();
    println!(
        "{:<26} {:>10} {:>12} {:>12} {:>14}",
        "perft (all-fives, 2 seats)", "positions", "median", "nodes/s", "nodes"
    );
    println!(
        "{:<26} {:>10} {:>10.1}ms {:>12.0} {:>14}",
        format!("depth {DEPTH}"),
        starts.len(),
        ms(t),
        nodes as f64 / t.as_secs_f64(),
        nodes
    );
    // The leaves above are perft's count; a search counts every node it
    // visits. The positions at every depth to DEPTH are what perft visits,
    // on the search's footing (a hand over before DEPTH counts at each
    // depth after, as perft counts it).
    let visited: u64 = (0..=DEPTH)
        .map(|d| starts.iter().map(|p| fives_perft(&rules, p, d)).sum::<u64>())
        .sum();
    println!(
        "{:<26} {:>10} {:>12} {:>12.0} {:>14}",
        "  every node visited",
        starts.len(),
        "",
        visited as f64 / t.as_secs_f64(),
        visited
    );
    Ok(())
}

/// Training games and classifier fits at the thesis's sample sizes.
fn classifier_bench(rules: &Rules, runs: usize) -> Result<()> {
    println!();
    println!(
        "{:<26} {:>10} {:>12} {:>14}",
        "opponent modeling", "size", "median", "check"
    );
    let mut times = Vec::new();
    let mut samples = Vec::new();
    let mut games = 0;
    for _ in 0..runs {
        samples.clear();
        games = 0;
        let t = Instant::now();
        while samples.len() < 130_000 {
            let g = engine::training_game(rules, 2014, games);
            samples.extend(g.samples.iter().map(|f| classifier::Sample {
                x: f.to_array(),
                label: classifier::class_of(g.target),
            }));
            games += 1;
        }
        times.push(t.elapsed());
    }
    samples.truncate(130_000);
    println!(
        "{:<26} {:>10} {:>10.1}ms {:>14}",
        "training games",
        games,
        ms(median(times)),
        plural(samples.len() as u64, "sample")
    );
    let mut times = Vec::new();
    let mut right = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let m = classifier::Mda::fit(&samples).map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(t.elapsed());
        right = samples.iter().filter(|s| m.predict(&s.x) == s.label).count();
    }
    println!(
        "{:<26} {:>10} {:>10.1}ms {:>13.3}",
        "mda fit",
        samples.len(),
        ms(median(times)),
        right as f64 / samples.len() as f64
    );
    let small = &samples[..8000];
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let f = classifier::Forest::fit(
            small,
            &classifier::ForestParams {
                seed: 2014,
                ..Default::default()
            },
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(t.elapsed());
        right = small.iter().filter(|s| f.predict(&s.x) == s.label).count();
    }
    println!(
        "{:<26} {:>10} {:>10.1}ms {:>13.3}",
        "random forest fit (100)",
        small.len(),
        ms(median(times)),
        right as f64 / small.len() as f64
    );
    Ok(())
}

fn play_all(searcher: &mut Searcher<LocalTable>, games: &[GameConfig]) -> Result<(u64, i64)> {
    let mut nodes = 0;
    let mut diff = 0;
    for g in games {
        let r = play_game(searcher, g, InfoSource::Oracle)?;
        nodes += r.nodes;
        diff += r.score_diff as i64;
    }
    Ok((nodes, diff))
}

fn searcher_into_table(searcher: Searcher<LocalTable>) -> LocalTable {
    searcher.into_store()
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
