//! `muggins bench --suite double6`: the full game's search on two-seat
//! double-6 All Fives. Node counts are behaviour checksums (a change that
//! alters them changes the search); times are medians of `--runs`.

use std::time::Instant;

use anyhow::{Result, bail};
use engine::{PlayerEngine, TargetKind};
use full::{
    Adaptive, AlphaBeta, Evaluation, FivesPosition, FivesTable, FullAgent, FullConfig, FullRules, FullTarget,
    IsmctsTree, Limits, LinearEval, MatchOptions, Opening, SearchSettings, Seen, deal_from_index, fixed_choice,
    play_match_with,
};

use super::{median, ms};

/// The fixed positions: the first hands of 32 deals, each advanced by 0-5
/// plays of the scorer strategy in every seat, where the mover has two or
/// more plays.
fn positions(rules: &FullRules) -> Vec<FivesPosition> {
    let mut out = Vec::new();
    let mut list = engine::ActionList::default();
    for d in 0u64.. {
        if out.len() == 32 {
            break;
        }
        let Some(pos) = scorer_line(rules, d).nth((d % 6) as usize) else {
            continue;
        };
        pos.actions(rules, &mut list);
        if list.len() >= 2 {
            out.push(pos);
        }
    }
    out
}

/// The positions of the bench's deal `d`, played by the scorer in every
/// seat, while the seat to move can play.
fn scorer_line(rules: &FullRules, d: u64) -> impl Iterator<Item = FivesPosition> + '_ {
    let playable = |p: &FivesPosition| p.end.is_none() && p.can_play(rules, p.mover);
    let hands = deal_from_index(rules, d * 2_151_252_675).expect("a deal index");
    let start = FivesPosition::deal(rules, hands, Opening::of(rules, &hands, None));
    std::iter::successors(Some(start).filter(playable), move |pos| {
        let mut list = engine::ActionList::default();
        pos.actions(rules, &mut list);
        let scorer = FullTarget::Thesis(TargetKind::Scorer);
        let i = fixed_choice(rules, scorer, pos, list.as_slice()).expect("deterministic");
        let mut next = *pos;
        next.play(rules, list.as_slice()[i]);
        Some(next).filter(playable)
    })
}

/// Fills `table` once (untimed), so that its pages are in memory.
fn warm(rules: &FullRules, starts: &[FivesPosition], table: &mut FivesTable) {
    let slots = table.capacity() as u64;
    let p = &starts[0];
    let mut ab = AlphaBeta::new(rules, p.mover, PlayerEngine::MStar, models(), Evaluation::Score, table);
    ab.decide(
        &[*p],
        Limits {
            depth: full::DEEPEST,
            budget: slots / 2,
        },
    );
}

fn models() -> [FullTarget; 4] {
    [FullTarget::Thesis(TargetKind::Scorer); 4]
}

/// Whether the row `name` is run: every row without a filter, else those
/// whose name contains `only`.
fn wanted(only: Option<&str>, name: &str) -> bool {
    let yes = only.is_none_or(|o| name.contains(o));
    if yes {
        RAN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    yes
}

/// Rows run so far (a filter that matched none is an error).
static RAN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs the suite, `runs` timed passes a row; with `only`, just the rows
/// whose name contains it (the headers stay).
pub fn run(runs: usize, only: Option<&str>) -> Result<()> {
    let rules = FullRules::new(FullConfig::all_fives(2)).expect("the preset's defaults are valid");
    let starts = positions(&rules);
    let eval = jobs::evals::shipped_eval();
    println!();
    println!("muggins bench: double-6 All Fives, 2 seats; M* against the scorer; median of {runs}");
    println!();
    println!(
        "{:<30} {:>9} {:>12} {:>12} {:>14}",
        "fixed depth (32 positions)", "depth", "median", "nodes/s", "nodes"
    );
    fixed_depth(&rules, &starts, runs, only)?;
    leaf(&rules, eval, runs, only)?;
    budgeted(&rules, &starts, eval, runs, only)?;
    hands(&rules, eval, runs, only)?;
    if let Some(o) = only
        && RAN.load(std::sync::atomic::Ordering::Relaxed) == 0
    {
        bail!(
            "--rows {o:?} matches no row of the double6 suite; rows are named e.g. \"pruned + table\", \
             \"M*, learned\", \"ISMCTS, partial observation\", \"K=16, 20,000, learned\""
        );
    }
    Ok(())
}

/// M* to a fixed depth from 32 positions: plain, pruned with a table.
fn fixed_depth(rules: &FullRules, starts: &[FivesPosition], runs: usize, only: Option<&str>) -> Result<()> {
    for (name, depth, prune) in [
        ("plain (no pruning)", 5u8, false),
        ("pruned + table", 5, true),
        ("pruned + table", 7, true),
    ] {
        if !wanted(only, name) {
            continue;
        }
        let mut times = Vec::new();
        let mut check = None;
        // One table, its pages touched before the clock starts.
        let mut table = FivesTable::with_mb(16);
        warm(rules, starts, &mut table);
        for _ in 0..runs {
            let t = Instant::now();
            let mut nodes = 0;
            let mut values = [0.0; 64];
            for p in starts {
                table.clear();
                let mut ab = AlphaBeta::new(
                    rules,
                    p.mover,
                    PlayerEngine::MStar,
                    models(),
                    Evaluation::Score,
                    &mut table,
                );
                if !prune {
                    ab = ab.plain();
                }
                ab.root(p, Limits { depth, budget: 0 }, &mut values);
                nodes += ab.nodes();
            }
            times.push(t.elapsed());
            if check.is_some_and(|c| c != nodes) {
                bail!("{name}: a second pass gave another node count: the search is not deterministic");
            }
            check = Some(nodes);
        }
        let t = median(times);
        let nodes = check.unwrap_or_default();
        println!(
            "{:<30} {:>9} {:>10.1}ms {:>12.0} {:>14}",
            name,
            depth,
            ms(t),
            nodes as f64 / t.as_secs_f64(),
            nodes
        );
    }
    Ok(())
}

/// The learned leaf alone (features and prediction), from both sides, over
/// the positions of 64 deals that the scorer plays in both seats until a
/// seat must draw; the checksum (the values' bits summed over one pass) is
/// a behaviour check like the node counts.
fn leaf(rules: &FullRules, eval: &LinearEval, runs: usize, only: Option<&str>) -> Result<()> {
    if !wanted(only, "features and prediction") {
        return Ok(());
    }
    let positions: Vec<FivesPosition> = (0..64).flat_map(|d| scorer_line(rules, d)).collect();
    let ev = Evaluation::Learned(eval);
    let pass = |sum: u64| {
        positions.iter().fold(sum, |sum, p| {
            (0..2).fold(sum, |sum, side| {
                sum.wrapping_add(ev.leaf(rules, std::hint::black_box(p), side).to_bits())
            })
        })
    };
    let check = pass(0);
    const REPEAT: usize = 1_000;
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut sum = 0;
        for _ in 0..REPEAT {
            sum = pass(sum);
        }
        times.push(t.elapsed());
        if sum != check.wrapping_mul(REPEAT as u64) {
            bail!("the learned leaf: a pass gave other values: it is not deterministic");
        }
    }
    let t = median(times);
    let calls = (REPEAT * positions.len() * 2) as f64;
    println!();
    println!(
        "{:<30} {:>9} {:>12} {:>12} {:>14}",
        "learned leaf", "positions", "per call", "calls/s", "checksum"
    );
    println!(
        "{:<30} {:>9} {:>10.1}ns {:>12.0} {:>14x}",
        "features and prediction",
        positions.len(),
        t.as_secs_f64() * 1e9 / calls,
        calls / t.as_secs_f64(),
        check
    );
    Ok(())
}

/// One decision under a node budget: M* (score so far, learned) and ISMCTS.
fn budgeted(
    rules: &FullRules,
    starts: &[FivesPosition],
    eval: &LinearEval,
    runs: usize,
    only: Option<&str>,
) -> Result<()> {
    println!();
    println!(
        "{:<30} {:>9} {:>12} {:>12} {:>14}",
        "decision under a budget", "budget", "per decision", "nodes/s", "nodes"
    );
    for (budget, n) in [(10_000u64, 32usize), (100_000, 32), (1_000_000, 8)] {
        for (name, learned) in [("M*, score so far", false), ("M*, learned", true)] {
            if !wanted(only, name) {
                continue;
            }
            let mut times = Vec::new();
            let mut check = None;
            let mut table = FivesTable::for_budget(budget, 1024);
            warm(rules, starts, &mut table);
            for _ in 0..runs {
                let t = Instant::now();
                let mut sum = 0;
                for p in &starts[..n] {
                    let ev = if learned {
                        Evaluation::Learned(eval)
                    } else {
                        Evaluation::Score
                    };
                    let mut ab = AlphaBeta::new(rules, p.mover, PlayerEngine::MStar, models(), ev, &mut table);
                    let d = ab.decide(
                        &[*p],
                        Limits {
                            depth: full::DEEPEST,
                            budget,
                        },
                    );
                    sum += d.nodes + d.index as u64;
                }
                times.push(t.elapsed());
                if check.is_some_and(|c| c != sum) {
                    bail!("budget {budget}: a second pass differed: the search is not deterministic");
                }
                check = Some(sum);
            }
            let t = median(times);
            let nodes = check.unwrap_or_default();
            println!(
                "{:<30} {:>9} {:>10.2}ms {:>12.0} {:>14}",
                name,
                budget,
                ms(t) / n as f64,
                nodes as f64 / t.as_secs_f64(),
                nodes
            );
        }
        if !wanted(only, "ISMCTS, partial observation") {
            continue;
        }
        let mut times = Vec::new();
        let mut tree = IsmctsTree::default();
        let mut nodes = 0;
        for _ in 0..runs {
            let t = Instant::now();
            nodes = 0;
            for (i, p) in starts[..n].iter().enumerate() {
                let mut rng = engine::seed::keyed_rng(2026, i as u64, 0, b"benchmct", 0);
                let mut sampler = full::WorldSampler::default();
                let models = [full::FullTarget::Searcher; 4];
                let seen = Seen::default();
                sampler.prepare(
                    rules,
                    p,
                    &seen,
                    full::WorldSource {
                        belief: engine::Belief::Uniform,
                        models: &models,
                        worlds: 1,
                    },
                    &mut rng,
                );
                nodes += tree.decide(rules, p, budget, Some(&mut sampler), &mut rng).nodes;
            }
            times.push(t.elapsed());
        }
        let t = median(times);
        println!(
            "{:<30} {:>9} {:>10.2}ms {:>12.0} {:>14}",
            "ISMCTS, partial observation",
            budget,
            ms(t) / n as f64,
            nodes as f64 / t.as_secs_f64(),
            nodes
        );
    }
    Ok(())
}

/// Whole hands against the scorer, searched under partial observation.
fn hands(rules: &FullRules, eval: &LinearEval, runs: usize, only: Option<&str>) -> Result<()> {
    println!();
    println!(
        "{:<38} {:>9} {:>12} {:>12} {:>14}",
        "hands against the scorer", "hands", "per hand", "hands/s", "nodes"
    );
    let searcher = |engine, learned, adaptive| {
        FullAgent::Search(SearchSettings {
            engine,
            depth: full::DEEPEST,
            budget: 20_000,
            worlds: 16,
            learned,
            belief: engine::Belief::Uniform,
            shaping: full::Shaping::None,
            predictor: full::predict::PredictModel::Logit,
            adaptive,
        })
    };
    let at = |c: f64| Some(Adaptive::with_confidence(c).expect("a valid confidence"));
    // (name, agent, threads a decision's worlds are shared among: the
    // same games and node counts, a decision's wall time).
    let rows = [
        ("M*, K=16, 20,000, score", searcher(PlayerEngine::MStar, false, None), 1),
        (
            "M*, K=16, 20,000, learned",
            searcher(PlayerEngine::MStar, true, None),
            1,
        ),
        (
            "M*, K=16, 20,000, score, 2 threads",
            searcher(PlayerEngine::MStar, false, None),
            2,
        ),
        (
            "M*, K=16, 20,000, learned, 2 threads",
            searcher(PlayerEngine::MStar, true, None),
            2,
        ),
        (
            "M*, K<=16 adaptive, learned",
            searcher(PlayerEngine::MStar, true, Some(Adaptive::DEFAULT)),
            1,
        ),
        (
            "M*, K<=16 adaptive 95%, learned",
            searcher(PlayerEngine::MStar, true, at(0.95)),
            1,
        ),
        ("ISMCTS, 16 x 20,000", searcher(PlayerEngine::Ismcts, false, None), 1),
    ];
    const HANDS: u64 = 8;
    for (name, agent, threads) in rows {
        if !wanted(only, name) {
            continue;
        }
        let target = FullAgent::Fixed(FullTarget::Thesis(TargetKind::Scorer));
        let agents = [agent, target, agent, target];
        let opts = MatchOptions {
            eval: Some(eval),
            decision_threads: threads,
            ..MatchOptions::default()
        };
        let mut times = Vec::new();
        let mut check = None;
        for _ in 0..runs {
            let t = Instant::now();
            let mut nodes = 0;
            for g in 0..HANDS {
                let m = play_match_with(rules, 2026, g * 2_151_252_675, 1, &agents, 0, &opts).expect("a deal index");
                nodes += m.hands.iter().map(|h| h.nodes).sum::<u64>();
            }
            times.push(t.elapsed());
            if check.is_some_and(|c| c != nodes) {
                bail!("{name}: a second pass differed: the games are not deterministic");
            }
            check = Some(nodes);
        }
        let t = median(times);
        println!(
            "{:<38} {:>9} {:>10.1}ms {:>12.2} {:>14}",
            name,
            HANDS,
            ms(t) / HANDS as f64,
            HANDS as f64 / t.as_secs_f64(),
            check.unwrap_or_default()
        );
    }
    Ok(())
}
