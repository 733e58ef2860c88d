//! A network's seat in a hand of All Fives is told its view alone (its
//! tiles and the hand's public actions: `full::spiel::NetSeats`), and
//! builds the state it decides on from it (`FivesState::from_view`, the
//! hidden tiles and its own past drawn at random). The `rich` encoding of
//! that state is the true state's, at every decision of hands of two, three
//! and four seats, whatever the draw: so the network decides as it would on
//! the true state.

use full::spiel::{CHANCE, Encoding, Event, FivesState, SpielState, play_id};
use full::{FullConfig, FullRules, fives_draw_id, fives_pass_id};

/// The hand's player actions so far, in the ids a seat's view gives.
pub(crate) fn public_history(rules: &FullRules, s: &FivesState) -> Vec<u32> {
    s.events
        .iter()
        .filter(|&&(h, _)| h == s.hand_no)
        .filter_map(|&(_, e)| match e {
            Event::Play { tile, loc, .. } => Some(play_id(engine::Action { tile, loc })),
            Event::Stuck { .. } => Some(fives_draw_id(rules)),
            Event::Pass { .. } => Some(fives_pass_id(rules)),
            Event::Deal { .. } | Event::Drawn { .. } => None,
        })
        .collect()
}

#[test]
fn the_rich_encoding_of_a_seat_s_view_is_the_true_state_s() {
    let mut decisions = 0;
    for seats in [2u8, 3, 4] {
        let rules = FullRules::new(FullConfig::all_fives(seats)).expect("the preset's defaults");
        for game in 0..40u64 {
            let mut rng = engine::seed::keyed_rng(7, seats as u64, game, b"testview", 0);
            let mut past = engine::seed::keyed_rng(7, seats as u64, game, b"testview", 1);
            let mut state = SpielState::new(rules.clone(), 0);
            let (mut truth, mut built) = (Vec::new(), Vec::new());
            while !state.is_terminal() {
                if state.current_player() == CHANCE {
                    state.apply_chance(&mut rng).unwrap();
                    continue;
                }
                let seat = state.current_player() as u8;
                let legal = state.legal_actions();
                if legal.len() >= 2 {
                    let SpielState::Fives(f) = &state else {
                        unreachable!("an All-Fives state")
                    };
                    let history = public_history(&rules, f);
                    let view = FivesState::from_view(&rules, seat, f.hand_of(seat), &history, None, &mut past)
                        .unwrap_or_else(|e| panic!("{seats} seats, game {game}: {e}"));
                    state.encode(seat, Encoding::Rich, &mut truth);
                    SpielState::Fives(view).encode(seat, Encoding::Rich, &mut built);
                    assert_eq!(
                        built, truth,
                        "{seats} seats, game {game}, seat {seat}, history {history:?}"
                    );
                    decisions += 1;
                }
                let a = legal[engine::seed::below_u32(&mut rng, legal.len() as u32) as usize];
                state.apply(a).unwrap();
            }
        }
    }
    assert!(decisions > 500, "{decisions} decisions compared");
}
