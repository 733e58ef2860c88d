//! `SpielState::belief_prior`, the constraints belief's marginals a belief
//! head with `belief_prior = "constraints"` corrects: at every decision of
//! random games of every preset, from every seat's side, each hidden tile's
//! holders sum to 1 and its true holder has a chance, a seen tile has
//! none; on block and team (whose `resample` draws from the same belief),
//! the marginals are the frequencies of resampled worlds, and a holder
//! they rule out is one no world uses.

use full::spiel::{CHANCE, SpielState};
use full::{FullConfig, FullRules, Preset};

fn presets() -> Vec<(&'static str, FullRules)> {
    [
        ("block", FullConfig::preset(Preset::Block)),
        ("team", FullConfig::preset(Preset::Team)),
        ("all fives, 2 seats", FullConfig::all_fives(2)),
        ("all fives, 4 seats", FullConfig::all_fives(4)),
    ]
    .into_iter()
    .map(|(name, config)| (name, FullRules::new(config).expect("a preset's rules")))
    .collect()
}

fn step(state: &mut SpielState, rng: &mut impl rand_core::RngCore) {
    if state.current_player() == CHANCE {
        state.apply_chance(rng).unwrap();
    } else {
        let legal = state.legal_actions();
        let a = legal[engine::seed::below_u32(rng, legal.len() as u32) as usize];
        state.apply(a).unwrap();
    }
}

#[test]
fn the_prior_is_a_distribution_that_gives_the_truth_a_chance() {
    let (mut prior, mut truth) = (Vec::new(), Vec::new());
    let mut checked = 0;
    for (name, rules) in presets() {
        let n = rules.seats() as usize;
        for game in 0..4u64 {
            let mut rng = engine::seed::keyed_rng(12, game, 0, b"testprio", 0);
            let mut state = SpielState::new(rules.clone(), 0);
            while !state.is_terminal() {
                if state.current_player() != CHANCE {
                    for seat in 0..rules.seats() {
                        state.belief_prior(seat, &mut prior);
                        state.holders(seat, &mut truth);
                        assert_eq!(prior.len(), truth.len() * n, "{name}");
                        for (t, &h) in truth.iter().enumerate() {
                            let p = &prior[t * n..(t + 1) * n];
                            if h == net::NO_HOLDER {
                                assert!(p.iter().all(|&x| x == 0.0), "{name}: seen tile {t}: {p:?}");
                                continue;
                            }
                            let sum: f32 = p.iter().sum();
                            assert!((sum - 1.0).abs() < 1e-5, "{name}: tile {t}: {p:?}");
                            assert!(p[h as usize] > 0.0, "{name}: tile {t} is with {h}: {p:?}");
                            checked += 1;
                        }
                    }
                }
                step(&mut state, &mut rng);
            }
        }
    }
    assert!(checked > 5_000, "{checked} hidden tiles");
}

#[test]
fn on_block_and_team_the_prior_is_where_resampled_worlds_put_the_tiles() {
    let (mut prior, mut holders) = (Vec::new(), Vec::new());
    let mut ruled_out = 0;
    for (name, rules) in presets().into_iter().take(2) {
        let n = rules.seats() as usize;
        for game in 0..3u64 {
            let mut rng = engine::seed::keyed_rng(13, game, 0, b"testprio", 0);
            let mut state = SpielState::new(rules.clone(), 0);
            // A position well into the hand, where seats have passed.
            for _ in 0..(12 + 2 * game) {
                if !state.is_terminal() {
                    step(&mut state, &mut rng);
                }
            }
            if state.is_terminal() || state.current_player() == CHANCE {
                continue;
            }
            let seat = state.current_player() as u8;
            state.belief_prior(seat, &mut prior);
            let draws = 4_000;
            let mut freq = vec![0u32; prior.len()];
            for _ in 0..draws {
                state.resample(seat, &mut rng).unwrap().holders(seat, &mut holders);
                for (t, &h) in holders.iter().enumerate() {
                    if h != net::NO_HOLDER {
                        freq[t * n + h as usize] += 1;
                    }
                }
            }
            for (i, (&p, &f)) in prior.iter().zip(&freq).enumerate() {
                let share = f as f64 / draws as f64;
                assert!(
                    (p as f64 - share).abs() < 0.035,
                    "{name}, game {game}: tile {} holder {}: prior {p}, worlds {share}",
                    i / n,
                    i % n
                );
                assert_eq!(p == 0.0, f == 0, "{name}: tile {} holder {}", i / n, i % n);
            }
            ruled_out += prior
                .chunks(n)
                .filter(|p| p.iter().any(|&x| x > 0.0) && p.contains(&0.0))
                .count();
        }
    }
    assert!(ruled_out > 0, "no position had a holder ruled out by a void");
}
