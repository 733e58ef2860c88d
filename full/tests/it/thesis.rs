//! The thesis's game as All-Fives knobs (the Python package's `thesis`
//! preset, docs/python.md): double-3, two seats of 3, the rest the
//! boneyard, the highest double leading, a domino's pips not rounded, a
//! blocked game scoring the difference. Played side by side with the
//! thesis's own engine from every starting state, random move for random
//! move: the same legal plays, draws, passes, ends and score difference.

use engine::seed::{below, keyed_rng};
use engine::{ActionList, Deal, Position, Rules};
use full::{FivesPosition, FullConfig, FullRules, MAX_SEATS, Opening};

fn thesis_as_fives() -> FullRules {
    FullRules::new(FullConfig::thesis()).unwrap()
}

#[test]
fn the_thesis_preset_plays_as_the_thesis_engine_from_every_starting_state() {
    let rules = Rules::thesis();
    let full = thesis_as_fives();
    let mut rng = keyed_rng(7, 0, 0, engine::seed::GAMES, 99);
    let (mut a, mut b) = (ActionList::default(), ActionList::default());
    let (mut games, mut draws, mut passes) = (0, 0, 0);
    for state in 0..rules.starting_states() {
        let deal = Deal::from_index(&rules, state).unwrap();
        let mut thesis = Position::start(&rules, &deal);
        let mut hands = [0; MAX_SEATS];
        hands[0] = deal.player;
        hands[1] = deal.target;
        let mut fives = FivesPosition::deal(&full, hands, Opening::of(&full, &hands, None));
        let mut diff = 0i32;
        loop {
            assert_eq!(thesis.mover as u8, fives.mover, "state {state}");
            thesis.actions(&rules, &mut a);
            fives.actions(&full, &mut b);
            assert_eq!(a.as_slice(), b.as_slice(), "state {state}");
            let step = if a.is_empty() {
                if thesis.boneyard != 0 {
                    // Both draw the same tile.
                    let tiles: Vec<u8> = engine::bits(thesis.boneyard).collect();
                    let t = tiles[below(&mut rng, tiles.len() as u64) as usize];
                    thesis.draw(t);
                    fives.draw(t);
                    draws += 1;
                    continue;
                }
                fives.pass(&full);
                passes += 1;
                thesis.pass(&rules)
            } else {
                let pick = a.as_slice()[below(&mut rng, a.len() as u64) as usize];
                fives.play(&full, pick);
                thesis.play(&rules, pick)
            };
            diff += step.reward;
            assert_eq!(step.terminal, fives.end.is_some(), "state {state}");
            if step.terminal {
                break;
            }
        }
        assert_eq!(diff, fives.scores[0] as i32 - fives.scores[1] as i32, "state {state}");
        games += 1;
    }
    // Every starting state, with draws and passes among them.
    assert_eq!(games, 4200);
    assert!(draws > 1000 && passes > 100, "{draws} draws, {passes} passes");
}
