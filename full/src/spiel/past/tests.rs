//! The second phase of `resample`: what its tightened constraints take
//! from a seat's hand.

use super::*;
use crate::rules::FullConfig;
use crate::spiel::{CHANCE, SpielState};

/// What the second phase of [`FivesState::resample`] takes from a
/// seat's hand is never a tile that seat holds in a state with a past:
/// the true state, or a world the resampling found. So the tightened
/// constraints keep every placement with a past, and a world of the
/// second phase is as uniform over them as one of the first.
#[test]
fn the_tightened_constraints_keep_every_placement_with_a_past() {
    let (mut tightened, mut seats_checked) = (0u32, 0u32);
    for seats in [2u8, 3, 4] {
        let rules = FullRules::new(FullConfig::all_fives(seats)).expect("the preset's rules");
        for hand in 0..200u64 {
            let mut rng = engine::seed::keyed_rng(31, hand, seats as u64, b"tighten_", 0);
            let mut state = SpielState::new(rules.clone(), 0);
            while !state.is_terminal() {
                if state.current_player() == CHANCE {
                    state.apply_chance(&mut rng).expect("a chance outcome");
                    continue;
                }
                let SpielState::Fives(c) = &state else {
                    unreachable!("All Fives")
                };
                let player = c.current_player() as u8;
                let pos = c.pos.expect("a player node has a position");
                let (void, void_pips) = c.seen.voids();
                let plain = Observation::new(&rules, &pos, player, &void, &void_pips);
                let tight = c.tightened(plain);
                let SpielState::Fives(world) = state.resample(player, &mut rng).expect("a world") else {
                    unreachable!("All Fives")
                };
                let there = world.pos.expect("a player node has a position");
                for s in (0..seats).filter(|&s| s != player) {
                    let (s, v) = (s as usize, tight.void[s as usize]);
                    assert_eq!(
                        pos.hands[s] & v,
                        0,
                        "{seats} seats, hand {hand}: seat {s} holds a tile taken"
                    );
                    assert_eq!(
                        there.hands[s] & v,
                        0,
                        "{seats} seats, hand {hand}: a world's seat {s} too"
                    );
                    seats_checked += 1;
                    tightened += (v != plain.void[s]) as u32;
                }
                let legal = state.legal_actions();
                let a = legal[engine::seed::below_u32(&mut rng, legal.len() as u32) as usize];
                state.apply(a).expect("a legal action");
            }
        }
    }
    // Not vacuous: the tightening took tiles from many seats' hands.
    assert!(tightened > 1_000, "{tightened} of {seats_checked} seats tightened");
}
