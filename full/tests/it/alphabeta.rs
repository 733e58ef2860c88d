//! The full game's search: pruning keeps every value, the table never
//! changes a result, budgets are deterministic, worlds are consistent.

use engine::PlayerEngine;
use engine::seed::{below, keyed_rng};
use engine::{ActionList, Belief, TargetKind};
use full::{
    AlphaBeta, Bound, Entry, Evaluation, FivesPosition, FivesTable, FullAgent, FullConfig, FullRules, FullSearcher,
    FullTarget, IsmctsTree, Limits, MatchOptions, Opening, SearchSettings, Seen, WorldSampler, WorldSource,
    fit_linear_eval, play_match_with, random_deal,
};

pub(crate) fn rules(set: u8, seats: u8, teams: bool) -> FullRules {
    let mut c = FullConfig::all_fives(seats);
    c.set = set;
    c.teams = teams;
    c.hand = match (set, seats) {
        (4, 2) => 5,
        (4, _) => 3,
        (_, 2) => 7,
        _ => 5,
    };
    FullRules::new(c).expect("valid rules")
}

/// A position `plies` random moves into a random hand, with the mover to
/// play two or more plays; `None` if the hand ends first or the mover has
/// fewer than two plays.
pub(crate) fn position(rules: &FullRules, seed: u64, plies: u64) -> Option<FivesPosition> {
    let mut rng = keyed_rng(seed, plies, 0, b"testpos1", 0);
    let hands = random_deal(rules, &mut rng);
    let mut pos = FivesPosition::deal(rules, hands, Opening::of(rules, &hands, None));
    let mut list = ActionList::default();
    for _ in 0..plies {
        if pos.end.is_some() {
            return None;
        }
        if !pos.can_play(rules, pos.mover) {
            if pos.must_pass(rules) {
                pos.pass(rules);
            } else {
                let tiles: Vec<u8> = (0..64).filter(|t| pos.boneyard >> t & 1 == 1).collect();
                pos.draw(tiles[below(&mut rng, tiles.len() as u64) as usize]);
            }
            continue;
        }
        pos.actions(rules, &mut list);
        let i = below(&mut rng, list.len() as u64) as usize;
        pos.play(rules, list.as_slice()[i]);
    }
    pos.actions(rules, &mut list);
    (pos.end.is_none() && list.len() >= 2).then_some(pos)
}

const MODELS: [FullTarget; 5] = [
    FullTarget::Thesis(TargetKind::Random),
    FullTarget::Thesis(TargetKind::Scorer),
    FullTarget::Thesis(TargetKind::Defender),
    FullTarget::Heaviest,
    FullTarget::Searcher,
];

/// Pruned and plain values of every root play, and their node counts.
fn compare(rules: &FullRules, pos: &FivesPosition, engine: PlayerEngine, model: FullTarget, depth: u8) -> (u64, u64) {
    let models = [model; 4];
    let mut list = ActionList::default();
    pos.actions(rules, &mut list);
    let n = list.len();
    let limits = Limits { depth, budget: 0 };
    let mut t1 = FivesTable::with_mb(4);
    let mut t2 = FivesTable::with_slots(1024);
    let mut pruned = AlphaBeta::new(rules, pos.mover, engine, models, Evaluation::Score, &mut t1);
    let mut a = [0.0; 64];
    pruned.root(pos, limits, &mut a);
    let mut plain = AlphaBeta::new(rules, pos.mover, engine, models, Evaluation::Score, &mut t2).plain();
    let mut b = [0.0; 64];
    plain.root(pos, limits, &mut b);
    for i in 0..n {
        assert!(
            (a[i] - b[i]).abs() < 1e-9,
            "{} seats, {engine:?} against {model}, depth {depth}: play {i} pruned {} plain {}",
            rules.seats(),
            a[i],
            b[i]
        );
    }
    // The plain search agrees with the first full-game searcher (absolute
    // utilities, a separate implementation).
    let mut reference = FullSearcher::new(rules, pos.mover, engine, depth, models);
    let d = reference.choose(pos);
    let best = (0..n).map(|i| b[i]).fold(f64::NEG_INFINITY, f64::max);
    let base = {
        let sides = rules.sides() as usize;
        let side = rules.side(pos.mover) as usize;
        let others: u32 = (0..sides).filter(|&s| s != side).map(|s| pos.scores[s]).sum();
        pos.scores[side] as f64 - others as f64 / (sides - 1) as f64
    };
    assert!(
        (d.value - (best + base)).abs() < 1e-9,
        "reference {} vs plain {}",
        d.value,
        best + base
    );
    (pruned.nodes(), plain.nodes())
}

#[test]
fn pruned_values_equal_plain_values_on_double_4_and_double_6() {
    let mut totals = (0u64, 0u64);
    let mut cases = 0;
    for (set, seats, teams) in [(4, 2, false), (4, 3, false), (4, 4, true), (6, 2, false), (6, 4, true)] {
        let r = rules(set, seats, teams);
        let depth = if set == 4 { 8 } else { 5 };
        for seed in 0..40u64 {
            let Some(pos) = position(&r, seed, 2 + seed % 7) else {
                continue;
            };
            for engine in [PlayerEngine::Expectimax, PlayerEngine::MStar] {
                let models: &[FullTarget] = if engine == PlayerEngine::MStar {
                    &MODELS
                } else {
                    &MODELS[..1]
                };
                for &m in models {
                    let (p, q) = compare(&r, &pos, engine, m, depth);
                    totals.0 += p;
                    totals.1 += q;
                    cases += 1;
                }
            }
        }
    }
    eprintln!(
        "{cases} cases: pruned {} nodes, plain {} ({:.1}% fewer)",
        totals.0,
        totals.1,
        100.0 * (1.0 - totals.0 as f64 / totals.1 as f64)
    );
    assert!(cases > 300, "{cases} cases");
    assert!(totals.0 < totals.1, "pruning saved nothing: {totals:?}");
}

#[test]
fn the_learned_evaluation_keeps_pruning_exact() {
    let eval = fit_linear_eval(&full::EvalTraining {
        seed: 1,
        hands: 300,
        seats: 2,
        ridge_millis: 1,
    })
    .unwrap();
    let r = rules(6, 2, false);
    for seed in 0..30u64 {
        let Some(pos) = position(&r, seed, 3 + seed % 5) else {
            continue;
        };
        let models = [FullTarget::Thesis(TargetKind::Random); 4];
        let limits = Limits { depth: 3, budget: 0 };
        let (mut t1, mut t2) = (FivesTable::with_mb(2), FivesTable::with_mb(2));
        let (mut a, mut b) = ([0.0; 64], [0.0; 64]);
        AlphaBeta::new(
            &r,
            pos.mover,
            PlayerEngine::MStar,
            models,
            Evaluation::Learned(&eval),
            &mut t1,
        )
        .root(&pos, limits, &mut a);
        AlphaBeta::new(
            &r,
            pos.mover,
            PlayerEngine::MStar,
            models,
            Evaluation::Learned(&eval),
            &mut t2,
        )
        .plain()
        .root(&pos, limits, &mut b);
        for i in 0..64 {
            assert!((a[i] - b[i]).abs() < 1e-9, "play {i}: {} vs {}", a[i], b[i]);
        }
    }
}

#[test]
fn a_budgeted_decision_is_the_same_with_any_table_it_is_allowed() {
    let r = rules(6, 2, false);
    let mut checked = 0;
    let mut grew = 0;
    for seed in 0..20u64 {
        let Some(pos) = position(&r, seed, 1 + seed % 6) else {
            continue;
        };
        let models = [FullTarget::Thesis(TargetKind::Scorer); 4];
        // The smallest budget's table does not grow, the others' may.
        for budget in [3_000, 20_000, 100_000] {
            let limits = Limits { depth: 60, budget };
            let mut small = FivesTable::for_budget(limits.budget, 16);
            let mut large = FivesTable::with_mb(64);
            assert!(small.capacity() < large.capacity());
            assert_eq!(small.grows(), budget > 3_000, "budget {budget}");
            assert!(!large.grows());
            let decide = |table: &mut FivesTable| {
                AlphaBeta::new(&r, pos.mover, PlayerEngine::MStar, models, Evaluation::Score, table)
                    .decide(&[pos], limits)
            };
            let a = decide(&mut small);
            let b = decide(&mut large);
            assert_eq!(a, b, "seed {seed}, budget {budget}");
            assert!(a.nodes >= limits.budget / 4, "the budget was used: {}", a.nodes);
            grew += (small.in_use() > 4096) as u32;
            checked += 1;
        }
    }
    assert!(checked >= 30);
    assert!(grew >= 5, "{grew} searches grew their table");
}

#[test]
fn fixed_depth_values_do_not_depend_on_the_table_even_when_it_overflows() {
    let r = rules(6, 2, false);
    for seed in 0..10u64 {
        let Some(pos) = position(&r, seed, 4) else { continue };
        let models = [FullTarget::Thesis(TargetKind::Random); 4];
        let limits = Limits { depth: 4, budget: 0 };
        let mut tiny = FivesTable::with_slots(1024);
        let mut large = FivesTable::with_mb(32);
        let a = AlphaBeta::new(&r, pos.mover, PlayerEngine::MStar, models, Evaluation::Score, &mut tiny)
            .decide(&[pos], limits);
        let b = AlphaBeta::new(
            &r,
            pos.mover,
            PlayerEngine::MStar,
            models,
            Evaluation::Score,
            &mut large,
        )
        .decide(&[pos], limits);
        assert_eq!((a.index, a.value, a.best_other), (b.index, b.value, b.best_other));
    }
}

#[test]
fn the_table_keeps_what_it_is_given_and_forgets_on_clear() {
    let mut t = FivesTable::with_slots(1024);
    let e = Entry {
        value: -12.5,
        bound: Bound::Lower,
        depth: 3,
        best: 2,
    };
    let key = |k: u64| k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for k in 0..700u64 {
        t.put(
            key(k),
            Entry {
                depth: (k % 7) as u8,
                ..e
            },
        );
    }
    assert_eq!(t.len(), 700);
    for k in 0..700u64 {
        assert_eq!(
            t.get(key(k)),
            Some(Entry {
                depth: (k % 7) as u8,
                ..e
            })
        );
    }
    // Three quarters of 1,024 slots fill; later keys replace shallower ones.
    for k in 700..1000u64 {
        t.put(
            key(k),
            Entry {
                depth: (k % 7) as u8,
                ..e
            },
        );
    }
    assert_eq!(t.len(), 768);
    let k = key(5);
    assert!(t.get(k).is_none_or(|x| x == Entry { depth: 5, ..e }));
    t.clear();
    assert_eq!(t.get(k), None);
    assert!(t.is_empty());
}

#[test]
fn a_growing_table_holds_what_a_fixed_one_holds() {
    let slots = 1 << 14;
    let mut grows = FivesTable::growing(slots);
    let mut fixed = FivesTable::with_slots(slots);
    assert!(grows.grows() && !fixed.grows());
    assert_eq!(grows.capacity(), fixed.capacity());
    assert_eq!(grows.like().capacity(), slots);
    assert!(grows.like().grows() && !fixed.like().grows());
    let key = |k: u64| k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k >> 7;
    let entry = |k: u64, round: u64| Entry {
        value: (k as f64) / 7.0 - round as f64,
        bound: [Bound::Exact, Bound::Lower, Bound::Upper][(k % 3) as usize],
        depth: ((k + round) % 11) as u8,
        best: (k % 60) as u8,
    };
    // Rounds of more and more entries (up to 3/4 of the slots less one,
    // where the fixed table would start replacing), each after a clear.
    for (round, n) in [(0u64, 100u64), (1, 3_000), (2, 12_287), (3, 700)] {
        grows.clear();
        fixed.clear();
        assert_eq!(grows.in_use(), 4096, "round {round}: a clear starts again small");
        for k in 0..n {
            // Some keys twice: the second replaces the first.
            let k = if k % 10 == 9 { k - 5 } else { k };
            for t in [&mut grows, &mut fixed] {
                t.put(key(k + round), entry(k, round));
            }
            assert_eq!(grows.len(), fixed.len());
        }
        for k in 0..n + 50 {
            assert_eq!(
                grows.get(key(k + round)),
                fixed.get(key(k + round)),
                "round {round}, key {k}"
            );
        }
        // A growing table doubles whenever half its slots in use are full.
        assert!(
            grows.in_use() >= 2 * grows.len() || grows.in_use() == slots,
            "round {round}"
        );
        assert!(
            grows.in_use() <= 4 * grows.len().max(1024),
            "round {round}: {}",
            grows.in_use()
        );
    }
    assert_eq!(grows.get(key(3_000)), None, "the last round's clear forgot the others");
    assert_eq!(fixed.in_use(), slots);
}

#[test]
fn ismcts_is_a_pure_function_of_its_stream_and_beats_random_play() {
    let r = rules(6, 2, false);
    let pos = (0..).find_map(|s| position(&r, s, 3)).unwrap();
    let mut tree = IsmctsTree::default();
    let mut sampler = WorldSampler::default();
    let models = [FullTarget::Searcher; 4];
    let mut decide = |tree: &mut IsmctsTree| {
        let mut rng = keyed_rng(1, 2, 3, b"testmcts", 0);
        let source = WorldSource {
            belief: Belief::Uniform,
            models: &models,
            worlds: 1,
        };
        sampler.prepare(&r, &pos, &Seen::default(), source, &mut rng);
        tree.decide(&r, &pos, 5_000, Some(&mut sampler), &mut rng)
    };
    let a = decide(&mut tree);
    let b = decide(&mut tree);
    assert_eq!(a, b);
    assert!(a.nodes >= 5_000);
    // Matches: ISMCTS against random play, both seats' partial observation.
    let agent = FullAgent::Search(SearchSettings {
        engine: PlayerEngine::Ismcts,
        depth: 1,
        budget: 300,
        worlds: 1,
        learned: false,
        belief: Belief::Uniform,
        shaping: full::Shaping::None,
        predictor: full::predict::PredictModel::Logit,
        adaptive: None,
    });
    let random = FullAgent::Fixed(FullTarget::Thesis(TargetKind::Random));
    let mut diff = 0i64;
    for g in 0..40u64 {
        let m = play_match_with(
            &r,
            5,
            g * 1_000_003,
            1,
            &[agent, random, agent, random],
            0,
            &MatchOptions::default(),
        )
        .unwrap();
        diff += m.totals[0] as i64 - m.totals[1] as i64;
    }
    assert!(diff > 0, "ISMCTS lost to random play by {diff} over 40 hands");
}

#[test]
fn a_match_is_the_same_whatever_the_table_size() {
    let r = rules(6, 2, false);
    let agent = FullAgent::Search(SearchSettings {
        engine: PlayerEngine::MStar,
        depth: 30,
        budget: 2_000,
        worlds: 4,
        learned: false,
        belief: Belief::Uniform,
        shaping: full::Shaping::None,
        predictor: full::predict::PredictModel::Logit,
        adaptive: None,
    });
    let target = FullAgent::Fixed(FullTarget::Thesis(TargetKind::Defender));
    let agents = [agent, target, agent, target];
    for table_mb in [1, 256] {
        let opts = MatchOptions {
            table_mb,
            ..MatchOptions::default()
        };
        let a = play_match_with(&r, 9, 123_456_789, 1, &agents, 60, &opts).unwrap();
        let b = play_match_with(&r, 9, 123_456_789, 1, &agents, 60, &MatchOptions::default()).unwrap();
        assert_eq!(a, b, "table_mb = {table_mb}");
    }
}
