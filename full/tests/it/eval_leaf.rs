//! The learned leaf's cheaper arithmetic gives today's values bit for bit:
//! `Board::count_after` against playing the tile, and the features' pip
//! totals and scoring plays against their first (playing) definitions.
//! Double-6 at 2-4 seats and double-9 at 4.

use engine::{ActionList, Loc, TileSet, bits};
use full::{
    EVAL_LIMIT, Evaluation, FEATURE_COUNT, FEATURES, FivesPosition, FullConfig, FullRules, LinearEval, Opening,
    default_training, features,
};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// Every position of random hands of All Fives with `seats` seats.
fn walk(rules: &FullRules, hands: usize, seed: u64, mut visit: impl FnMut(&FivesPosition)) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut list = ActionList::default();
    for _ in 0..hands {
        let deal = full::random_deal(rules, &mut rng);
        let mut pos = FivesPosition::deal(rules, deal, Opening::of(rules, &deal, None));
        while pos.end.is_none() {
            visit(&pos);
            if !pos.can_play(rules, pos.mover) {
                pos.draw_or_pass(rules, &mut rng);
                continue;
            }
            pos.actions(rules, &mut list);
            let k = engine::seed::below_u32(&mut rng, list.len() as u32) as usize;
            pos.play(rules, list.as_slice()[k]);
        }
    }
}

/// Double-6 at 2, 3 and 4 seats, and double-9 (55 tiles: every byte of a
/// tile set in use) at 4.
fn rule_sets() -> Vec<FullRules> {
    let mut sets: Vec<FullRules> = [2, 3, 4]
        .into_iter()
        .map(|seats| FullRules::new(FullConfig::all_fives(seats)).expect("valid rules"))
        .collect();
    let nine = FullConfig {
        set: 9,
        hand: 13,
        ..FullConfig::all_fives(4)
    };
    sets.push(FullRules::new(nine).expect("valid rules"));
    sets
}

#[test]
fn count_after_is_the_count_the_play_leaves() {
    for rules in rule_sets() {
        let mut checked = 0;
        walk(&rules, 400, 3, |pos| {
            if pos.board.is_empty() {
                return;
            }
            for t in bits(rules.all_tiles()) {
                for &loc in &Loc::ALL {
                    if pos.board.accepts(&rules, t, loc) {
                        let mut b = pos.board;
                        b.play(&rules, t, loc);
                        assert_eq!(
                            pos.board.count_after(&rules, t, loc),
                            b.count(),
                            "{t} at {loc:?} on {:?}",
                            pos.board
                        );
                        checked += 1;
                    }
                }
            }
        });
        assert!(checked > 10_000, "{checked} plays checked");
    }
}

/// Pips of `set`, a pip value at a time (the first definition).
fn pips_by_value(rules: &FullRules, set: TileSet) -> u32 {
    (1..=rules.config().set)
        .map(|p| {
            let m = set & rules.pip_mask(p);
            p as u32 * (m.count_ones() + (m & rules.doubles()).count_ones())
        })
        .sum()
}

/// Tiles of `hand` that would score, each tried on a copy of the board.
fn scoring_by_playing(rules: &FullRules, pos: &FivesPosition, hand: TileSet) -> u32 {
    bits(hand)
        .filter(|&t| {
            Loc::ALL.iter().any(|&loc| {
                if !pos.board.accepts(rules, t, loc) {
                    return false;
                }
                let mut b = pos.board;
                b.play(rules, t, loc);
                b.count() > 0 && b.count().is_multiple_of(5)
            })
        })
        .count() as u32
}

/// Every feature by its first definition, summed over a side's seats in
/// seat order as f64 (the other sides' per seat of ours beyond one).
fn features_by_definition(rules: &FullRules, pos: &FivesPosition, side: u8) -> [f64; 16] {
    let exposed: Vec<u8> = Loc::ALL.iter().filter_map(|&l| pos.board.exposed(l)).collect();
    let matching: TileSet = bits(rules.all_tiles())
        .filter(|&t| {
            let (a, b) = rules.pips(t);
            exposed.contains(&a) || exposed.contains(&b)
        })
        .fold(0, |m, t| m | 1 << t);
    let (mut mine, mut theirs) = ([0.0f64; 6], [0.0f64; 6]);
    for s in 0..rules.seats() {
        let hand = pos.hands[s as usize];
        let acc = if rules.side(s) == side { &mut mine } else { &mut theirs };
        acc[0] += pips_by_value(rules, hand) as f64;
        acc[1] += hand.count_ones() as f64;
        acc[2] += scoring_by_playing(rules, pos, hand) as f64;
        acc[3] += (hand & matching).count_ones() as f64;
        acc[4] += (hand & rules.doubles()).count_ones() as f64;
        acc[5] += (!exposed.is_empty() && hand & matching == 0) as u8 as f64;
    }
    let my_seats = (0..rules.seats()).filter(|&s| rules.side(s) == side).count() as f64;
    let scale = ((rules.seats() as f64 - my_seats) / my_seats).max(1.0);
    let t = theirs.map(|x| x / scale);
    [
        1.0,
        mine[0],
        t[0],
        mine[1],
        t[1],
        pos.board.count() as f64,
        (rules.side(pos.mover) == side) as u8 as f64,
        mine[2],
        t[2],
        mine[3],
        t[3],
        pos.boneyard.count_ones() as f64,
        mine[4],
        t[4],
        mine[5],
        t[5],
    ]
}

#[test]
fn the_features_are_their_first_definitions_bit_for_bit() {
    let eval = long_mantissas();
    let weights = eval.weights.clone();
    for rules in rule_sets() {
        let mut positions = 0;
        walk(&rules, 300, 8, |pos| {
            positions += 1;
            for side in 0..rules.sides() {
                let got = features(&rules, pos, side);
                let want = features_by_definition(&rules, pos, side);
                assert_eq!(
                    want.map(f64::to_bits),
                    got.map(f64::to_bits),
                    "side {side}: {want:?} != {got:?} on {:?}",
                    pos.board
                );
                // The prediction is the plain sum in the features' order.
                let mut v = 0.0;
                for (w, x) in weights.iter().zip(&want) {
                    v += w * x;
                }
                let v = v.clamp(-EVAL_LIMIT, EVAL_LIMIT);
                assert_eq!(eval.predict(&got).to_bits(), v.to_bits(), "prediction on {want:?}");
            }
        });
        assert!(positions > 5_000, "{positions} positions");
    }
}

#[test]
fn two_sets_are_counted_as_one_at_a_time() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for i in 0..100_000u32 {
        // Sets inside and beyond the first 32 tiles.
        let bits_in = [28, 32, 55][i as usize % 3];
        let mask = (1u64 << bits_in) - 1;
        let a = rand_core::RngCore::next_u64(&mut rng) & mask;
        let b = rand_core::RngCore::next_u64(&mut rng) & mask;
        assert_eq!(
            engine::count_two(a, b),
            (a.count_ones(), b.count_ones()),
            "{a:#x} {b:#x}"
        );
    }
}

/// An evaluation with long mantissas, so that a changed order of a sum
/// would show in the last bits.
fn long_mantissas() -> LinearEval {
    LinearEval {
        features: FEATURES.iter().map(|s| s.to_string()).collect(),
        weights: (0..FEATURE_COUNT).map(|k| (k as f64 + 0.1) / 3.0 - 2.7).collect(),
        training: default_training(),
        samples: 0,
        holdout_mse: 0.0,
        holdout_mse_score: 0.0,
    }
}

#[test]
fn a_draws_leaves_are_the_features_of_the_position_drawn_into() {
    let eval = long_mantissas();
    let learned = Evaluation::Learned(&eval);
    for rules in rule_sets() {
        let mut draws = 0;
        walk(&rules, 600, 11, |pos| {
            if pos.can_play(&rules, pos.mover) || !pos.must_draw(&rules) {
                return;
            }
            let tiles: Vec<u8> = bits(pos.boneyard).collect();
            for side in 0..rules.sides() {
                let leaves = full::DrawLeaves::new(&rules, pos, side);
                // Every draw's value at once, as the search takes them.
                let mut values = vec![f64::NAN; tiles.len()];
                learned.draw_leaf_values(&rules, &learned.draw_leaves(&rules, pos, side), &tiles, &mut values);
                let mut zeros = vec![f64::NAN; tiles.len()];
                let none = Evaluation::Score.draw_leaves(&rules, pos, side);
                Evaluation::Score.draw_leaf_values(&rules, &none, &tiles, &mut zeros);
                assert!(zeros.iter().all(|&z| z == 0.0), "score so far adds nothing: {zeros:?}");
                for (&t, &value) in tiles.iter().zip(&values) {
                    let mut drawn = *pos;
                    drawn.draw(t);
                    let want = features(&rules, &drawn, side);
                    let got = leaves.features(&rules, t);
                    assert_eq!(
                        want.map(f64::to_bits),
                        got.map(f64::to_bits),
                        "side {side}, tile {t} drawn: {want:?} != {got:?} on {:?}",
                        pos.board
                    );
                    let leaf = learned.leaf(&rules, &drawn, side);
                    assert_eq!(
                        value.to_bits(),
                        leaf.to_bits(),
                        "side {side}, tile {t} of {} drawn: {value} != {leaf}",
                        tiles.len()
                    );
                    draws += 1;
                }
            }
        });
        assert!(draws > 2_000, "{draws} draws checked");
    }
}
