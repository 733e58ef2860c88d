//! Pruning (alpha-beta and Star1 under `Searcher::set_pruning`) never changes
//! a value or a decision, keeps the table exact, and expands fewer nodes.

use std::collections::HashMap;

use engine::{
    ActionList, Blocked, Decision, DepthLimit, EngineKind, Key, Lead, LocalTable, PlayerView, Position, Rules,
    RulesConfig, SearchConfig, Searcher, Seat, ValueStore,
};
use rand_core::{RngCore, SeedableRng};

use crate::{deal, thesis};

fn config(depth: DepthLimit) -> SearchConfig {
    SearchConfig {
        depth,
        ..SearchConfig::default()
    }
}

fn pair(r: &Rules, depth: DepthLimit) -> (Searcher<LocalTable>, Searcher<LocalTable>) {
    let plain = Searcher::new(r.clone(), config(depth), LocalTable::new());
    let pruned = Searcher::new(r.clone(), config(depth), LocalTable::new()).with_pruning(true);
    assert!(!plain.pruning() && pruned.pruning());
    (plain, pruned)
}

/// Values every state under every engine kind with and without pruning, each
/// kind with fresh tables, and checks that pruning expanded fewer nodes;
/// returns the nodes (unpruned, pruned) per kind.
fn compare(r: &Rules, states: &[u64], depth: DepthLimit) -> Vec<(u64, u64)> {
    EngineKind::ALL
        .into_iter()
        .map(|kind| {
            let (mut plain, mut pruned) = pair(r, depth);
            for &state in states {
                let pos = Position::start(r, &deal(r, state));
                let want = plain.value_of(&pos, kind);
                let got = pruned.value_of(&pos, kind);
                assert!(
                    (got - want).abs() < 1e-9,
                    "{:?} state {state} {kind} depth {depth:?}: pruned {got}, unpruned {want}",
                    r.config()
                );
            }
            let nodes = (plain.nodes(), pruned.nodes());
            assert!(
                nodes.1 < nodes.0,
                "{:?} {kind} depth {depth:?}: pruning expanded {} nodes, no pruning {}",
                r.config(),
                nodes.1,
                nodes.0
            );
            nodes
        })
        .collect()
}

#[test]
fn pruning_keeps_every_thesis_value_and_expands_fewer_nodes() {
    let r = thesis();
    let states: Vec<u64> = (0..r.starting_states()).collect();
    let nodes = compare(&r, &states, DepthLimit::Unlimited);
    for (kind, (plain, pruned)) in EngineKind::ALL.into_iter().zip(nodes) {
        println!(
            "{kind}: {plain} nodes unpruned, {pruned} pruned ({:.1}% fewer)",
            100.0 * (plain - pruned) as f64 / plain as f64
        );
    }
}

#[test]
fn pruning_keeps_depth_limited_values() {
    let r = thesis();
    let states: Vec<u64> = (0..r.starting_states()).step_by(13).collect();
    for d in [2, 4] {
        compare(&r, &states, DepthLimit::Turns(d));
    }
}

fn random_states(r: &Rules, n: usize, seed: u64) -> Vec<u64> {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.next_u64() % r.starting_states()).collect()
}

#[test]
fn pruning_keeps_values_on_double_4() {
    for (hand, boneyard, lead, blocked, n) in [
        (6, 3, Lead::HighestDouble, Blocked::Difference, 150),
        (5, 5, Lead::Player, Blocked::None, 25),
    ] {
        let r = Rules::new(RulesConfig {
            set: 4,
            hand,
            boneyard,
            lead,
            blocked,
        })
        .expect("valid rules");
        compare(&r, &random_states(&r, n, hand as u64), DepthLimit::Unlimited);
    }
}

/// Player-to-move positions along random playouts of some thesis states.
fn player_positions(r: &Rules, n: usize) -> Vec<Position> {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2014);
    let mut out = Vec::new();
    let mut list = ActionList::default();
    while out.len() < n {
        let mut pos = Position::start(r, &deal(r, rng.next_u64() % r.starting_states()));
        loop {
            pos.actions(r, &mut list);
            if list.is_empty() {
                if pos.boneyard != 0 {
                    let tiles: Vec<u8> = (0..64).filter(|t| pos.boneyard >> t & 1 == 1).collect();
                    pos.draw(tiles[rng.next_u64() as usize % tiles.len()]);
                    continue;
                }
                if pos.pass(r).terminal {
                    break;
                }
                continue;
            }
            if pos.mover == Seat::Player {
                out.push(pos);
            }
            let a = list.as_slice()[rng.next_u64() as usize % list.len()];
            if pos.play(r, a).terminal {
                break;
            }
        }
    }
    out.truncate(n);
    out
}

/// The same decision: index, action, evaluations, and the value and best
/// other value bit for bit (both within 1e-9 is what matters; equal is what
/// the pruned search delivers).
fn same_decision(what: &str, want: Decision, got: Decision) {
    assert!((want.value - got.value).abs() < 1e-9, "{what}: {want:?} {got:?}");
    assert_eq!(want, got, "{what}");
}

#[test]
fn pruning_keeps_full_and_partial_decisions() {
    let r = thesis();
    let positions = player_positions(&r, 300);
    for depth in [DepthLimit::Unlimited, DepthLimit::Turns(3)] {
        for kind in EngineKind::ALL {
            let (mut plain, mut pruned) = pair(&r, depth);
            for (i, pos) in positions.iter().enumerate() {
                let what = format!("position {i} {kind} depth {depth:?}");
                let want = plain.decide_full(pos, kind);
                let want_values = plain.last_values().to_vec();
                let got = pruned.decide_full(pos, kind);
                same_decision(&what, want, got);
                assert_eq!(want_values, pruned.last_values(), "{what}");
                let mut rng_a = rand_chacha::ChaCha20Rng::seed_from_u64(i as u64);
                let mut rng_b = rand_chacha::ChaCha20Rng::seed_from_u64(i as u64);
                let view = PlayerView::of(pos);
                let want = plain.decide_partial(&view, kind, &mut rng_a);
                let got = pruned.decide_partial(&view, kind, &mut rng_b);
                same_decision(&format!("{what} partial"), want, got);
            }
            assert!(pruned.nodes() < plain.nodes(), "{kind} {depth:?}");
        }
    }
}

#[test]
fn pruned_and_unpruned_searches_share_one_table() {
    let r = thesis();
    let states: Vec<u64> = (0..r.starting_states()).step_by(3).collect();
    for kind in EngineKind::ALL {
        let mut reference = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
        let want: Vec<f64> = states
            .iter()
            .map(|&s| reference.value_of(&Position::start(&r, &deal(&r, s)), kind))
            .collect();
        // Pruned first, on every other state, then unpruned on all, on one table.
        let mut s = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new()).with_pruning(true);
        for (&state, &w) in states.iter().zip(&want).step_by(2) {
            let v = s.value_of(&Position::start(&r, &deal(&r, state)), kind);
            assert!((v - w).abs() < 1e-9, "{kind} state {state}: pruned {v}, want {w}");
        }
        s.set_pruning(false);
        for (&state, &w) in states.iter().zip(&want) {
            let v = s.value_of(&Position::start(&r, &deal(&r, state)), kind);
            assert!(
                (v - w).abs() < 1e-9,
                "{kind} state {state}: unpruned on a shared table {v}, want {w}"
            );
        }
        // And back: pruned on a table the unpruned search filled.
        s.set_pruning(true);
        for (&state, &w) in states.iter().zip(&want).skip(1).step_by(2) {
            let v = s.value_of(&Position::start(&r, &deal(&r, state)), kind);
            assert!((v - w).abs() < 1e-9, "{kind} state {state}: pruned again {v}, want {w}");
        }
        // Every value the pruned search left in the table is exact: a fresh
        // unpruned search over the shared table's store agrees everywhere.
        let table = s.into_store();
        let mut check = Searcher::new(r.clone(), SearchConfig::default(), table);
        for (&state, &w) in states.iter().zip(&want) {
            let v = check.value_of(&Position::start(&r, &deal(&r, state)), kind);
            assert!((v - w).abs() < 1e-9, "{kind} state {state}: {v}, want {w}");
        }
    }
}

/// A store that keeps every value it receives, to check them one by one.
#[derive(Debug, Default)]
struct Recording {
    map: HashMap<Key, f64>,
    inserts: u64,
}

impl ValueStore for Recording {
    fn get(&self, key: &Key) -> Option<f64> {
        self.map.get(key).copied()
    }
    fn insert(&mut self, key: Key, value: f64) {
        self.inserts += 1;
        if let Some(old) = self.map.insert(key, value) {
            panic!("{key:?} stored twice: {old} then {value}");
        }
    }
    fn len(&self) -> usize {
        self.map.len()
    }
}

#[test]
fn pruning_stores_only_exact_values() {
    // Every value the pruned search puts in its table is, bit for bit, the
    // value the unpruned search stores for the same key.
    let r = thesis();
    for depth in [DepthLimit::Unlimited, DepthLimit::Turns(4)] {
        for kind in EngineKind::ALL {
            let states: Vec<u64> = (0..r.starting_states()).step_by(5).collect();
            let mut plain = Searcher::new(r.clone(), config(depth), Recording::default());
            let mut pruned = Searcher::new(r.clone(), config(depth), Recording::default()).with_pruning(true);
            for &s in &states {
                let pos = Position::start(&r, &deal(&r, s));
                let want = plain.value_of(&pos, kind);
                let got = pruned.value_of(&pos, kind);
                assert_eq!(want.to_bits(), got.to_bits(), "state {s} {kind} {depth:?}");
            }
            let (plain, pruned) = (plain.into_store(), pruned.into_store());
            assert!(pruned.inserts > 0 && pruned.map.len() < plain.map.len());
            for (key, v) in &pruned.map {
                let want = plain
                    .map
                    .get(key)
                    .unwrap_or_else(|| panic!("{key:?} not reached unpruned"));
                assert_eq!(want.to_bits(), v.to_bits(), "{key:?} {kind} {depth:?}");
            }
        }
    }
}
