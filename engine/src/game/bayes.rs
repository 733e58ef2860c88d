//! The Bayes source: the likelihood of a target's action under each type.

use crate::position::{Action, ActionList, Position, Seat};
use crate::rules::Rules;
use crate::targets::{TargetKind, target_choice};
use crate::tiles::TileSet;
use crate::worlds::Unseen;

use super::record::Observability;

/// Likelihoods below this are raised to it, so that one surprising action
/// (a world sample that missed, say) cannot rule a type out for good.
pub const BAYES_FLOOR: f64 = 1e-3;

/// The most probable type (ties: the first of random, scorer, defender).
pub(super) fn most_probable(p: &[f64; 3]) -> TargetKind {
    let mut best = 0;
    for k in 1..3 {
        if p[k] > p[best] {
            best = k;
        }
    }
    TargetKind::ALL[best]
}

/// P(action | type) for random, scorer and defender, from the player's view of
/// the target's decision at `pos`: the belief-weighted share of worlds (the
/// true one under full observation) in which the type's policy picks `action`;
/// for random, the weighted average of 1/|legal actions| over the worlds where
/// `action` is legal (0 elsewhere). `void`: tiles the target has shown it
/// lacks (used by the `constraints` belief; empty when it drew this turn, as
/// the tile it drew may be among them).
pub fn likelihoods(
    rules: &Rules,
    pos: &Position,
    action: Action,
    observability: Observability,
    config: &crate::search::SearchConfig,
    void: TileSet,
    rng: &mut impl rand_core::RngCore,
) -> [f64; 3] {
    let mut worlds = crate::worlds::Worlds::default();
    let target_hand = pos.hands[Seat::Target as usize];
    match observability {
        Observability::Full => worlds.fill(
            rules,
            Unseen {
                tiles: target_hand,
                target_size: target_hand.count_ones(),
                void: 0,
            },
            crate::worlds::WorldCount::All,
            config.belief,
            rng,
        ),
        Observability::Partial => worlds.fill(
            rules,
            Unseen {
                tiles: target_hand | pos.boneyard,
                target_size: target_hand.count_ones(),
                void,
            },
            config.worlds,
            config.belief,
            rng,
        ),
    }
    let mut sums = [0.0f64; 3];
    let mut total = 0.0;
    let mut list = ActionList::default();
    for w in worlds.as_slice() {
        total += w.weight;
        let p = Position {
            hands: [pos.hands[0], w.target],
            boneyard: w.boneyard,
            ..*pos
        };
        p.actions(rules, &mut list);
        let acts = list.as_slice();
        let Some(i) = acts.iter().position(|&a| a == action) else {
            continue;
        };
        sums[0] += w.weight / acts.len() as f64;
        for (k, kind) in [(1, TargetKind::Scorer), (2, TargetKind::Defender)] {
            if target_choice(rules, kind, &p, acts) == Some(i) {
                sums[k] += w.weight;
            }
        }
    }
    sums.map(|s| s / total.max(f64::MIN_POSITIVE))
}
