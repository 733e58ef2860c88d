//! ISMCTS on OpenSpiel's block and team: the single-observer tree of
//! `ismcts.rs` ([`IsmctsTree`]) over [`FullPosition`]s.
//!
//! Each iteration draws a world (the others' hands) from the seat's
//! `constraints` or `uniform` belief, or, under full observation, starts
//! from the position itself; descends the tree through the plays legal in
//! that world by UCB1 with availability counts (a partner's edges are the
//! searching side's), adds one node, and finishes the hand with every seat
//! playing its heaviest tile (the `heaviest` strategy). The gain backed up
//! is the searching seat's return, OpenSpiel's, in points.
//!
//! The budget is in nodes (positions stepped through, in the tree and in
//! the playouts), the settings' `budget` times its `worlds`, as ISMCTS on
//! All Fives; the play chosen is the root's most visited, ties to the first
//! in OpenSpiel's order. A pure function of the position, the seat's view
//! and the random stream.

use rand_core::RngCore;

use super::belief::{Constraints, Observation, open_world_of};
use super::ismcts::{ISMCTS_EXPLORATION, IsmctsTree};
use super::position::{FullAction, FullActions, FullPosition, OPENING};
use super::rules::FullRules;
use super::search::FullDecision;
use super::targets::heaviest_play;

/// The covered pip's code for the opening play in an edge.
const OPEN_CODE: u16 = 15;

fn edge_of(a: FullAction) -> u16 {
    let cover = if a.cover == OPENING { OPEN_CODE } else { a.cover as u16 };
    (a.tile as u16) << 4 | cover
}

fn action_of(edge: u16) -> FullAction {
    let cover = match edge & 15 {
        OPEN_CODE => OPENING,
        c => c as u8,
    };
    FullAction {
        tile: (edge >> 4) as u8,
        cover,
    }
}

/// The play of the mover of `pos` after ISMCTS spends `budget` nodes:
/// worlds from `belief` (the view `obs` of the mover) or, with `None`, the
/// position itself every iteration.
pub(crate) fn ismcts_open(
    tree: &mut IsmctsTree,
    rules: &FullRules,
    pos: &FullPosition,
    mut belief: Option<(&mut Constraints, &Observation)>,
    budget: u64,
    rng: &mut impl RngCore,
) -> FullDecision {
    let seat = pos.mover;
    let side = rules.side(seat);
    tree.reset();
    let mut steps = 0u64;
    let mut list = FullActions::default();
    let mut path: Vec<u32> = Vec::with_capacity(64);
    let mut at = [u8::MAX; 64];
    while steps < budget.max(1) {
        let mut world = match belief.as_mut() {
            Some((b, obs)) => {
                b.sample(rng, &mut at)
                    .expect("the true deal agrees with what the seat saw");
                open_world_of(rules, pos, obs, &at)
            }
            None => *pos,
        };
        path.clear();
        path.push(0);
        let mut node = 0u32;
        // Selection and expansion: the world's mover always has a play.
        while world.end.is_none() {
            steps += 1;
            world.actions(rules, &mut list);
            let ours = rules.side(world.mover) == side;
            let edges = list.as_slice().iter().map(|&a| edge_of(a));
            let (c, added) = tree.step(node, edges, ours, ISMCTS_EXPLORATION, rng);
            world.play(rules, action_of(tree.edge(c)));
            path.push(c);
            node = c;
            if added {
                break;
            }
        }
        // Playout: every seat plays its heaviest tile.
        while world.end.is_none() {
            steps += 1;
            world.actions(rules, &mut list);
            world.play(rules, list.as_slice()[heaviest_play(rules, list.as_slice())]);
        }
        tree.backup(&path, world.returns(rules)[seat as usize] as f64);
    }
    pos.actions(rules, &mut list);
    FullDecision {
        nodes: steps,
        ..tree.root_choice(list.as_slice().iter().map(|&a| edge_of(a)))
    }
}

/// The visits of each play of `pos` (in `FullPosition::actions` order) at
/// the root of `tree` after [`crate::decide_open`]'s ISMCTS decided there:
/// the search's policy, written over `out`.
pub fn open_root_visits(tree: &IsmctsTree, rules: &FullRules, pos: &FullPosition, out: &mut Vec<u32>) {
    let mut list = FullActions::default();
    pos.actions(rules, &mut list);
    out.clear();
    tree.root_visits(list.as_slice().iter().map(|&a| edge_of(a)), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_name_their_plays() {
        for tile in [0u8, 27, 54] {
            for cover in [0u8, 6, 9, OPENING] {
                let a = FullAction { tile, cover };
                assert_eq!(action_of(edge_of(a)), a);
            }
        }
    }
}
