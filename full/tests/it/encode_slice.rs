//! A vector environment writes each observation in place over its row of
//! numpy's array (`SpielState::encode_slice`), whose old values it does not
//! clear first: every entry must be written. At every node of random games
//! of every preset, for every seat and both encodings, the tensor written
//! over a row of NaNs is the one appended to an empty vector.

use full::spiel::{CHANCE, Encoding, SpielState};
use full::{FullConfig, FullRules, Preset};

fn games() -> Vec<(String, FullRules, u32)> {
    let mut out = vec![
        ("block".to_string(), FullConfig::preset(Preset::Block), 0),
        ("team".to_string(), FullConfig::preset(Preset::Team), 0),
        ("thesis".to_string(), FullConfig::thesis(), 0),
    ];
    for seats in [2u8, 3, 4] {
        out.push((format!("all fives, {seats} seats"), FullConfig::all_fives(seats), 0));
        out.push((
            format!("all fives, {seats} seats, a match to 61"),
            FullConfig::all_fives(seats),
            61,
        ));
    }
    out.into_iter()
        .map(|(name, config, to)| (name, FullRules::new(config).expect("a preset's rules"), to))
        .collect()
}

#[test]
fn an_observation_written_in_place_is_the_appended_one() {
    let mut compared = 0;
    for (name, rules, to) in games() {
        for game in 0..6u64 {
            let mut rng = engine::seed::keyed_rng(11, game, to as u64, b"testslic", 0);
            let mut state = SpielState::new(rules.clone(), to);
            let mut appended = Vec::new();
            loop {
                for encoding in Encoding::ALL {
                    let size = state.encoding_size(encoding);
                    for seat in 0..rules.seats() {
                        state.encode(seat, encoding, &mut appended);
                        let mut row = vec![f32::NAN; size];
                        state.encode_slice(seat, encoding, &mut row);
                        assert_eq!(appended.len(), size, "{name}: {encoding:?}");
                        assert!(
                            row.iter().zip(&appended).all(|(a, b)| a.to_bits() == b.to_bits()),
                            "{name}, game {game}, seat {seat}, {encoding:?}: in place {row:?}, appended {appended:?}"
                        );
                        compared += 1;
                    }
                }
                if state.is_terminal() {
                    break;
                }
                if state.current_player() == CHANCE {
                    state.apply_chance(&mut rng).unwrap();
                    continue;
                }
                let legal = state.legal_actions();
                let a = legal[engine::seed::below_u32(&mut rng, legal.len() as u32) as usize];
                state.apply(a).unwrap();
            }
        }
    }
    assert!(compared > 10_000, "{compared} tensors compared");
}

#[test]
#[should_panic(expected = "a tensor of")]
fn a_row_of_another_length_is_a_bug_that_panics() {
    let rules = FullRules::new(FullConfig::preset(Preset::Team)).expect("the preset");
    let state = SpielState::new(rules, 0);
    let size = state.encoding_size(Encoding::InfoState);
    let mut row = vec![0.0; size + 1];
    state.encode_slice(0, Encoding::InfoState, &mut row);
}
