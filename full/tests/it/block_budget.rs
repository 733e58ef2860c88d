//! The budgeted block and team search (`FullSearcher::open_values_budget`):
//! the same values as the plain depth-limited search at the depth it
//! reached, fewer positions with alpha-beta, a pure function of its inputs.

use engine::PlayerEngine;
use full::{FullActions, FullPosition, FullRules, FullSearcher, FullTarget, MAX_SEATS, Preset};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// Positions of block and team hands after a few random plays.
fn positions(preset: Preset, count: usize, seed: u64) -> Vec<FullPosition> {
    let rules = FullRules::preset(preset);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut list = FullActions::default();
    let mut out = Vec::new();
    while out.len() < count {
        let mut pos = FullPosition::deal(&rules, full::random_deal(&rules, &mut rng));
        let plays = engine::seed::below_u32(&mut rng, 8);
        for _ in 0..plays {
            if pos.end.is_some() {
                break;
            }
            pos.actions(&rules, &mut list);
            pos.play(
                &rules,
                list.as_slice()[engine::seed::below_u32(&mut rng, list.len() as u32) as usize],
            );
        }
        pos.actions(&rules, &mut list);
        if pos.end.is_none() && list.len() >= 2 {
            out.push(pos);
        }
    }
    out
}

/// The engines and opponent models a block or team search may run with.
fn setups() -> Vec<(PlayerEngine, FullTarget)> {
    vec![
        (PlayerEngine::Expectimax, FullTarget::Searcher),
        (PlayerEngine::MStar, FullTarget::Searcher),
        (PlayerEngine::MStar, FullTarget::Heaviest),
        (PlayerEngine::MStar, FullTarget::ALL[0]),
    ]
}

fn plain(rules: &FullRules, pos: &FullPosition, engine: PlayerEngine, model: FullTarget, depth: u8) -> (Vec<f64>, u64) {
    let mut s = FullSearcher::new(rules, pos.mover, engine, depth, [model; MAX_SEATS]);
    let mut v = Vec::new();
    s.open_values(pos, &mut v);
    (v, s.nodes())
}

fn budgeted(
    rules: &FullRules,
    pos: &FullPosition,
    engine: PlayerEngine,
    model: FullTarget,
    depth: u8,
    budget: u64,
) -> (Vec<f64>, u64) {
    let mut s = FullSearcher::new(rules, pos.mover, engine, depth, [model; MAX_SEATS]);
    let mut v = Vec::new();
    s.open_values_budget(pos, budget, &mut v);
    (v, s.nodes())
}

fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-9)
}

#[test]
fn an_unspent_budget_gives_the_plain_searchs_values_with_fewer_positions() {
    for preset in [Preset::Block, Preset::Team] {
        let rules = FullRules::preset(preset);
        for (engine, model) in setups() {
            let (mut plain_nodes, mut pruned_nodes) = (0, 0);
            for pos in positions(preset, 40, 7) {
                for depth in [1, 3, 5, 7] {
                    let (want, n) = plain(&rules, &pos, engine, model, depth);
                    let (got, m) = budgeted(&rules, &pos, engine, model, depth, u64::MAX);
                    assert!(
                        same(&want, &got),
                        "{preset} {engine:?} vs {model:?} depth {depth}: {want:?} != {got:?}"
                    );
                    if depth == 7 {
                        plain_nodes += n;
                        pruned_nodes += m;
                    }
                }
            }
            if model == FullTarget::Searcher {
                // Iterative deepening revisits the shallow depths, and still
                // alpha-beta values fewer positions in all.
                assert!(
                    pruned_nodes < plain_nodes,
                    "{preset} {engine:?}: alpha-beta {pruned_nodes} positions, plain {plain_nodes}"
                );
            }
        }
    }
}

#[test]
fn a_spent_budget_gives_the_deepest_finished_iteration() {
    for preset in [Preset::Block, Preset::Team] {
        let rules = FullRules::preset(preset);
        for (engine, model) in setups() {
            let mut deeper = 0;
            for pos in positions(preset, 25, 9) {
                let budget = 3_000;
                let (got, nodes) = budgeted(&rules, &pos, engine, model, 30, budget);
                let again = budgeted(&rules, &pos, engine, model, 30, budget);
                assert_eq!((got.clone(), nodes), again, "a pure function of its inputs");
                // The first iteration always finishes; later ones within the budget.
                let first = plain(&rules, &pos, engine, model, 1).1;
                assert!(
                    nodes <= budget.max(first) + 1,
                    "{nodes} positions for a budget of {budget}"
                );
                let reached = (1..=30u8).find(|&d| same(&plain(&rules, &pos, engine, model, d).0, &got));
                let d = reached.unwrap_or_else(|| panic!("{preset} {engine:?}: {got:?} is no depth's values"));
                if d > 1 {
                    deeper += 1;
                }
            }
            assert!(
                deeper > 0,
                "{preset} {engine:?} vs {model:?}: the budget never went past depth 1"
            );
        }
    }
}
