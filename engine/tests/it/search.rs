use engine::{
    ActionList, Blocked, DepthLimit, EngineKind, Lead, LocalTable, PlayerView, Position, Rules, RulesConfig,
    SearchConfig, Searcher, Seat, SharedTable, TargetKind, target_choice,
};
use rand_core::SeedableRng;

use crate::{deal, thesis};

fn searcher(rules: &Rules) -> Searcher<LocalTable> {
    Searcher::new(rules.clone(), SearchConfig::default(), LocalTable::new())
}

/// docs/rules.md section 8: exact values under full observation, defaults.
#[test]
fn exact_values_table() {
    let r = thesis();
    let table: [(u64, [f64; 4]); 3] = [
        (0, [4.666667, 4.666667, 4.666667, 4.666667]),
        (3, [3.583333, 3.895833, 3.583333, 4.000000]),
        (3333, [1.500000, 2.818287, 1.875000, 1.833333]),
    ];
    let mut s = searcher(&r);
    for (state, values) in table {
        let pos = Position::start(&r, &deal(&r, state));
        for (kind, want) in EngineKind::ALL.into_iter().zip(values) {
            let got = s.value_of(&pos, kind);
            assert!((got - want).abs() < 5e-7, "state {state} {kind}: {got} != {want}");
        }
    }
}

#[test]
fn expectimax_is_antisymmetric_over_all_states() {
    let r = thesis();
    let mut s = searcher(&r);
    let mut sum = 0.0;
    for state in 0..r.starting_states() {
        let d = deal(&r, state);
        let v = s.value_of(&Position::start(&r, &d), EngineKind::Expectimax);
        let w = s.value_of(&Position::start(&r, &d.swapped()), EngineKind::Expectimax);
        assert!((v + w).abs() < 1e-9, "state {state}: {v} and swapped {w}");
        sum += v;
    }
    assert!((sum / 4200.0).abs() < 1e-9, "mean {}", sum / 4200.0);
}

#[test]
fn mstar_never_values_a_state_below_expectimax() {
    // Expectimax assumes the worst reply, so any fixed model can only do better.
    let r = thesis();
    let mut s = searcher(&r);
    for state in (0..r.starting_states()).step_by(7) {
        let pos = Position::start(&r, &deal(&r, state));
        let em = s.value_of(&pos, EngineKind::Expectimax);
        for t in TargetKind::ALL {
            let m = s.value_of(&pos, EngineKind::MStar(t));
            assert!(m >= em - 1e-9, "state {state} mstar:{t} {m} < expectimax {em}");
        }
    }
}

/// A plain recursive search with no table, written independently of the
/// searcher: the reference its table must agree with.
fn plain(r: &Rules, pos: &Position, kind: EngineKind, depth: Option<u8>) -> f64 {
    if depth == Some(0) {
        return 0.0;
    }
    let next = depth.map(|d| d - 1);
    let mut list = ActionList::default();
    pos.actions(r, &mut list);
    if list.is_empty() {
        if pos.boneyard != 0 {
            let tiles: Vec<u8> = (0..r.tile_count()).filter(|t| pos.boneyard >> t & 1 == 1).collect();
            let total: f64 = tiles
                .iter()
                .map(|&t| {
                    let mut c = *pos;
                    c.draw(t);
                    plain(r, &c, kind, depth)
                })
                .sum();
            return total / tiles.len() as f64;
        }
        let mut c = *pos;
        let step = c.pass(r);
        return step.reward as f64 + if step.terminal { 0.0 } else { plain(r, &c, kind, next) };
    }
    let values: Vec<f64> = list
        .as_slice()
        .iter()
        .map(|&a| {
            let mut c = *pos;
            let step = c.play(r, a);
            step.reward as f64 + if step.terminal { 0.0 } else { plain(r, &c, kind, next) }
        })
        .collect();
    match (pos.mover, kind) {
        (Seat::Player, _) => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        (Seat::Target, EngineKind::Expectimax) => values.iter().copied().fold(f64::INFINITY, f64::min),
        (Seat::Target, EngineKind::MStar(TargetKind::Random)) => values.iter().sum::<f64>() / values.len() as f64,
        (Seat::Target, EngineKind::MStar(t)) => values[target_choice(r, t, pos, list.as_slice()).unwrap()],
    }
}

fn compare_with_plain(r: &Rules, states: impl Iterator<Item = u64>, depth: DepthLimit) -> usize {
    let config = SearchConfig {
        depth,
        ..SearchConfig::default()
    };
    let mut s = Searcher::new(r.clone(), config, LocalTable::new());
    let limit = match depth {
        DepthLimit::Unlimited => None,
        DepthLimit::Turns(n) => Some(n),
    };
    let mut checked = 0;
    for state in states {
        let pos = Position::start(r, &deal(r, state));
        for kind in EngineKind::ALL {
            let want = plain(r, &pos, kind, limit);
            let got = s.value_of(&pos, kind);
            assert!(
                (got - want).abs() < 1e-9,
                "{:?} state {state} {kind} depth {depth:?}: table {got} plain {want}",
                r.config()
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn table_agrees_with_plain_search_on_double_2() {
    for (hand, boneyard) in [(1, 4), (2, 2), (3, 0)] {
        for lead in [Lead::HighestDouble, Lead::Player, Lead::Target] {
            for blocked in [Blocked::Difference, Blocked::None] {
                let r = Rules::new(RulesConfig {
                    set: 2,
                    hand,
                    boneyard,
                    lead,
                    blocked,
                })
                .unwrap();
                let n = r.starting_states();
                assert_eq!(compare_with_plain(&r, 0..n, DepthLimit::Unlimited), 4 * n as usize);
            }
        }
    }
}

#[test]
fn table_agrees_with_plain_search_on_double_3() {
    let r = thesis();
    let checked = compare_with_plain(&r, (0..4200).step_by(97), DepthLimit::Unlimited);
    assert_eq!(checked, 44 * 4);
    let r = Rules::new(RulesConfig {
        lead: Lead::Player,
        ..RulesConfig::default()
    })
    .unwrap();
    compare_with_plain(&r, (5..4200).step_by(523), DepthLimit::Unlimited);
}

#[test]
fn depth_limited_search_agrees_with_plain_search() {
    let r = thesis();
    for d in [1, 2, 3, 5] {
        compare_with_plain(&r, (0..4200).step_by(211), DepthLimit::Turns(d));
    }
    // A deep enough limit is the exact search.
    let mut exact = searcher(&r);
    let config = SearchConfig {
        depth: DepthLimit::Turns(40),
        ..SearchConfig::default()
    };
    let mut deep = Searcher::new(r.clone(), config, LocalTable::new());
    for state in [0, 3, 3333] {
        let pos = Position::start(&r, &deal(&r, state));
        assert_eq!(
            deep.value_of(&pos, EngineKind::Expectimax),
            exact.value_of(&pos, EngineKind::Expectimax)
        );
    }
}

#[test]
fn a_shared_table_gives_the_same_values_from_several_threads() {
    let r = thesis();
    let shared = SharedTable::new(16);
    let mut local = searcher(&r);
    let want: Vec<f64> = (0..4200)
        .map(|s| {
            local.value_of(
                &Position::start(&r, &deal(&r, s)),
                EngineKind::MStar(TargetKind::Random),
            )
        })
        .collect();
    std::thread::scope(|scope| {
        for part in 0..2u64 {
            let (r, shared, want) = (&r, &shared, &want);
            scope.spawn(move || {
                let mut s = Searcher::new(r.clone(), SearchConfig::default(), shared);
                // The two threads walk the states in opposite directions to meet in the table.
                let order: Vec<u64> = if part == 0 {
                    (0..4200).collect()
                } else {
                    (0..4200).rev().collect()
                };
                for st in order {
                    let v = s.value_of(&Position::start(r, &deal(r, st)), EngineKind::MStar(TargetKind::Random));
                    assert_eq!(v, want[st as usize], "state {st}");
                }
            });
        }
    });
    assert!(engine::ValueStore::len(&&shared) > 100_000);
}

#[test]
fn partial_decisions_see_only_the_players_view() {
    // Two positions that differ only in how the unseen tiles split between the
    // target's hand and the boneyard must get the same decision and values.
    let r = thesis();
    let mut s = searcher(&r);
    let d = deal(&r, 0);
    let mut a = Position::start(&r, &d);
    let mut list = ActionList::default();
    a.actions(&r, &mut list);
    a.play(&r, list.as_slice()[0]);
    assert_eq!(a.mover, Seat::Player);
    let mut b = a;
    // Swap one target tile with one boneyard tile.
    let t = a.hands[1] & a.hands[1].wrapping_neg();
    let y = a.boneyard & a.boneyard.wrapping_neg();
    b.hands[1] = (a.hands[1] & !t) | y;
    b.boneyard = (a.boneyard & !y) | t;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(0);
    let da = s.decide_partial(&PlayerView::of(&a), EngineKind::Expectimax, &mut rng);
    let va = s.last_values().to_vec();
    let db = s.decide_partial(&PlayerView::of(&b), EngineKind::Expectimax, &mut rng);
    assert_eq!(da, db);
    assert_eq!(va, s.last_values());
    // The target holds 2 of the 6 unseen tiles: C(6, 2) = 15 worlds, 2 actions.
    assert_eq!(va.len(), 2);
    assert_eq!(da.evaluations, 15 * 2);
    // And the full-observation decision at `a` values the true world only.
    let full = s.decide_full(&a, EngineKind::Expectimax);
    assert_eq!(full.evaluations, va.len() as u64);
}

#[test]
fn ties_go_to_the_first_action_in_canonical_order() {
    // State 0: after the forced (3|3) lead, the player's (1|3) Left and (1|3)
    // Right are mirror images with equal values; Left must be chosen.
    let r = thesis();
    let mut s = searcher(&r);
    let mut pos = Position::start(&r, &deal(&r, 0));
    let mut list = ActionList::default();
    pos.actions(&r, &mut list);
    pos.play(&r, list.as_slice()[0]);
    let d = s.decide_full(&pos, EngineKind::Expectimax);
    let values = s.last_values().to_vec();
    assert_eq!(values.len(), 2);
    assert!((values[0] - values[1]).abs() < 1e-12);
    assert_eq!(d.index, 0);
    assert_eq!(d.action.loc, engine::Loc::Left);
}
