//! `SpielState::resample` (OpenSpiel's `resample_from_infostate`, and the
//! worlds of the Python bot's searches and of the network's searches) and
//! `FivesState::from_view` (a network's seat in `muggins run`, and
//! `muggins.State.from_view`) in All Fives at every seat count: at every
//! decision of random hands, from the mover's side, each finds a state, and
//! the state is a true one the mover cannot tell from the real one (its
//! hand, the board, the hand sizes and the legal plays the same).

use full::spiel::{CHANCE, FivesState, SpielState, View};

/// The information state (OpenSpiel's `information_state_string`).
const INFO: View = View {
    perfect_recall: true,
    private: true,
    public: true,
};
use full::{FullConfig, FullRules};

#[test]
fn resample_finds_a_world_at_every_decision_at_every_seat_count() {
    let (mut report, mut bad) = (Vec::new(), false);
    // Hands whose resampling failed before the second phase were among
    // these (3 seats: 1 in 3,000; 4 seats: 2); two seats never failed.
    for (seats, hands) in [(2u8, 500u64), (3, 3_000), (4, 3_000)] {
        let rules = FullRules::new(FullConfig::all_fives(seats)).expect("the preset's rules");
        let (mut decisions, mut failed) = (0u32, Vec::new());
        for hand in 0..hands {
            let mut rng = engine::seed::keyed_rng(29, hand, seats as u64, b"resample", 0);
            let mut state = SpielState::new(rules.clone(), 0);
            while !state.is_terminal() {
                if state.current_player() == CHANCE {
                    state.apply_chance(&mut rng).unwrap();
                    continue;
                }
                let seat = state.current_player() as u8;
                decisions += 1;
                match state.resample(seat, &mut rng) {
                    Ok(world) => {
                        assert_eq!(world.current_player(), seat as i64);
                        assert_eq!(world.legal_actions(), state.legal_actions());
                        assert_eq!(world.hand_of(seat), state.hand_of(seat));
                        assert_eq!(
                            world.observation_string(seat, INFO),
                            state.observation_string(seat, INFO)
                        );
                    }
                    Err(e) => failed.push(format!("hand {hand}, decision {decisions}: resample: {e}")),
                }
                // A network's seat is asked at its choices (its forced
                // plays are made for it).
                let SpielState::Fives(f) = &state else {
                    unreachable!("an All-Fives state")
                };
                if state.legal_actions().len() >= 2 {
                    let history = super::fives_view::public_history(&rules, f);
                    match FivesState::from_view(&rules, seat, f.hand_of(seat), &history, None, &mut rng) {
                        Ok(view) => assert_eq!(SpielState::Fives(view).legal_actions(), state.legal_actions()),
                        Err(e) => failed.push(format!("hand {hand}, decision {decisions}: from_view: {e}")),
                    }
                }
                let legal = state.legal_actions();
                let a = legal[engine::seed::below_u32(&mut rng, legal.len() as u32) as usize];
                state.apply(a).unwrap();
            }
        }
        assert!(decisions > 2_000, "{seats} seats: {decisions} decisions");
        report.push(format!(
            "{seats} seats: {} of {decisions} failed: {:?}",
            failed.len(),
            &failed[..failed.len().min(3)]
        ));
        bad |= !failed.is_empty();
    }
    assert!(!bad, "{report:#?}");
}
