//! The learned leaf's cheaper arithmetic gives today's values bit for bit:
//! `Board::count_after` against playing the tile, and the features' pip
//! totals and scoring plays against their first (playing) definitions.
//! Double-6 at 2-4 seats and double-9 at 4.

use engine::{ActionList, Loc, TileSet, bits};
use full::{FivesPosition, FullConfig, FullRules, Opening, features};
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

#[test]
fn the_features_are_their_first_definitions_bit_for_bit() {
    for rules in rule_sets() {
        let mut positions = 0;
        walk(&rules, 300, 8, |pos| {
            positions += 1;
            for side in 0..rules.sides() {
                let f = features(&rules, pos, side);
                let (mut mine, mut theirs) = ([0.0f64; 2], [0.0f64; 2]);
                for s in 0..rules.seats() {
                    let hand = pos.hands[s as usize];
                    let acc = if rules.side(s) == side { &mut mine } else { &mut theirs };
                    acc[0] += pips_by_value(&rules, hand) as f64;
                    acc[1] += scoring_by_playing(&rules, pos, hand) as f64;
                }
                let my_seats = (0..rules.seats()).filter(|&s| rules.side(s) == side).count() as f64;
                let scale = ((rules.seats() as f64 - my_seats) / my_seats).max(1.0);
                let want = [mine[0], theirs[0] / scale, mine[1], theirs[1] / scale];
                let got = [f[1], f[2], f[7], f[8]];
                assert_eq!(
                    want.map(f64::to_bits),
                    got.map(f64::to_bits),
                    "side {side}: {want:?} != {got:?}"
                );
            }
        });
        assert!(positions > 5_000, "{positions} positions");
    }
}
