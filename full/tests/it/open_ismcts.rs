//! ISMCTS on block and team (`full/src/open_ismcts.rs`).

use engine::PlayerEngine;
use engine::TargetKind;
use engine::seed::keyed_rng;
use full::{FullAgent, FullRules, FullTarget, Preset, SearchSettings, play_open_hand, random_deal};

fn ismcts(budget: u64, worlds: u16) -> FullAgent {
    FullAgent::Search(SearchSettings {
        worlds,
        budget,
        belief: engine::Belief::Constraints,
        ..SearchSettings::fixed(PlayerEngine::Ismcts, full::DEEPEST)
    })
}

/// From the true position (no worlds) and from 8 worlds a decision of the
/// constraints belief, ISMCTS beats random play at block and team; a hand
/// replays the same from the same streams; a decision spends its budget
/// (budget x worlds nodes) and at most a playout more.
#[test]
fn ismcts_beats_random_play_at_block_and_team_reproducibly_within_its_budget() {
    for preset in [Preset::Block, Preset::Team] {
        let rules = FullRules::preset(preset);
        for worlds in [0u16, 8] {
            let other = FullAgent::Fixed(FullTarget::Thesis(TargetKind::Random));
            let budget = 2_000;
            let me = ismcts(budget, worlds);
            let agents = if preset == Preset::Team {
                [me, other, me, other]
            } else {
                [me, other, other, other]
            };
            let (mut won, mut lost) = (0, 0);
            for d in 0..40u64 {
                let hands = random_deal(&rules, &mut keyed_rng(2, d, 0, b"testismc", 9));
                let rngs = || std::array::from_fn(|s| keyed_rng(1, d, 0, b"testismc", s as u64));
                let h = play_open_hand(&rules, hands, &agents, &mut rngs());
                assert_eq!(
                    h,
                    play_open_hand(&rules, hands, &agents, &mut rngs()),
                    "{preset} deal {d}"
                );
                let spent = budget * worlds.max(1) as u64;
                for (_, dec) in &h.decisions {
                    assert!(dec.nodes >= spent && dec.nodes <= spent + 28, "{preset}: {dec:?}");
                }
                won += (h.returns[0] > 0) as u32;
                lost += (h.returns[0] < 0) as u32;
            }
            eprintln!("{preset} ismcts ({worlds} worlds) vs random: won {won}, lost {lost}");
            assert!(
                won >= 2 * lost + 10,
                "{preset}, {worlds} worlds: won {won}, lost {lost}"
            );
        }
    }
}
