//! Single-observer information-set Monte Carlo tree search (SO-ISMCTS,
//! Cowling, Powley and Whitehouse 2012) for All Fives, from what a seat has
//! seen of the others ([`Seen`](crate::Seen), `seen.rs`).
//!
//! One tree of the searching seat's information sets: an edge is a play
//! (tile, location), whoever makes it. Each iteration draws a world (the
//! other seats' hands and the boneyard) from the seat's belief
//! ([`WorldSampler`]), descends the
//! tree through the plays legal in that world, choosing by UCB1 with
//! availability counts, adds one node, and finishes the hand with every seat
//! playing the `scorer` strategy (draws uniform from the world's boneyard).
//! The hand's gain for the searching side is backed up, negated at the
//! opponents' edges. Draws are not edges: they are part of the world.
//!
//! The budget is in nodes (positions stepped through, in the tree and in
//! the playouts); the play chosen is the root's most visited, ties to the
//! first in canonical order. A pure function of the position, the seat's
//! view and the random stream.

use rand_core::RngCore;

use engine::Loc;
use engine::TargetKind;
use engine::{Action, ActionList};

use super::fives::FivesPosition;
use super::rules::FullRules;
use super::search::FullDecision;
use super::targets::{FullTarget, fixed_choice};
use super::worlds::WorldSampler;
use engine::seed::below_u32;

/// The exploration constant of UCB1, in points (a hand's gains are tens of points).
pub const ISMCTS_EXPLORATION: f64 = 15.0;

const ROOT: u16 = u16::MAX;

#[derive(Clone, Copy, Debug)]
struct TreeNode {
    /// The edge into this node: tile << 2 | location ([`ROOT`] at the root).
    edge: u16,
    /// Whether the seat that took the edge is on the searching side.
    ours: bool,
    first_child: u32,
    next_sibling: u32,
    visits: u32,
    available: u32,
    total: f64,
}

const NONE: u32 = u32::MAX;

/// The tree's storage, kept between decisions to save allocations.
#[derive(Debug, Default)]
pub struct IsmctsTree {
    nodes: Vec<TreeNode>,
    /// The nodes an iteration passed through (its room kept too).
    path: Vec<u32>,
}

fn edge_of(a: Action) -> u16 {
    (a.tile as u16) << 2 | a.loc as u16
}

fn action_of(edge: u16) -> Action {
    Action {
        tile: (edge >> 2) as u8,
        loc: Loc::ALL[(edge & 3) as usize],
    }
}

/// The side's points minus the mean of the others'.
fn util(rules: &FullRules, pos: &FivesPosition, side: u8) -> f64 {
    let sides = rules.sides() as usize;
    let mut others = 0;
    for s in 0..sides {
        if s != side as usize {
            others += pos.scores[s];
        }
    }
    pos.scores[side as usize] as f64 - others as f64 / (sides - 1) as f64
}

/// Steps a world past draws (uniform from its boneyard) and passes until
/// someone has a play or the hand ends; counts the steps.
fn settle(rules: &FullRules, pos: &mut FivesPosition, rng: &mut impl RngCore, steps: &mut u64) {
    while pos.end.is_none() && !pos.can_play(rules, pos.mover) {
        *steps += 1;
        pos.draw_or_pass(rules, rng);
    }
}

impl IsmctsTree {
    /// Empties the tree down to its root.
    pub(crate) fn reset(&mut self) {
        self.nodes.clear();
        self.nodes.push(TreeNode {
            edge: ROOT,
            ours: false,
            first_child: NONE,
            next_sibling: NONE,
            visits: 0,
            available: 0,
            total: 0.0,
        });
    }

    fn add(&mut self, parent: u32, edge: u16, ours: bool) -> u32 {
        let id = self.nodes.len() as u32;
        let p = &mut self.nodes[parent as usize];
        let sibling = p.first_child;
        p.first_child = id;
        self.nodes.push(TreeNode {
            edge,
            ours,
            first_child: NONE,
            next_sibling: sibling,
            visits: 0,
            available: 0,
            total: 0.0,
        });
        id
    }

    fn child(&self, parent: u32, edge: u16) -> Option<u32> {
        let mut c = self.nodes[parent as usize].first_child;
        while c != NONE {
            if self.nodes[c as usize].edge == edge {
                return Some(c);
            }
            c = self.nodes[c as usize].next_sibling;
        }
        None
    }

    /// The edge into `node`.
    pub(crate) fn edge(&self, node: u32) -> u16 {
        self.nodes[node as usize].edge
    }

    /// One step down from `node`, whose legal edges in this world are
    /// `edges` (at most 128, the mover's side `ours`): counts every tried
    /// edge as available, then adds an untried edge drawn uniformly (the
    /// node to return, `true`), or else takes the tried one with the best
    /// UCB1 (`exploration` in the gain's units; ties to the first).
    pub(crate) fn step(
        &mut self,
        node: u32,
        edges: impl IntoIterator<Item = u16>,
        ours: bool,
        exploration: f64,
        rng: &mut impl RngCore,
    ) -> (u32, bool) {
        let mut untried = [0u16; 128];
        let mut u = 0;
        let mut best: Option<(f64, u32)> = None;
        for e in edges {
            match self.child(node, e) {
                None => {
                    untried[u] = e;
                    u += 1;
                }
                Some(c) => {
                    let n = &mut self.nodes[c as usize];
                    n.available += 1;
                    let mean = n.total / n.visits.max(1) as f64;
                    let ucb = mean + exploration * ((n.available as f64).ln() / n.visits.max(1) as f64).sqrt();
                    if best.is_none_or(|(b, _)| ucb > b) {
                        best = Some((ucb, c));
                    }
                }
            }
        }
        if u > 0 {
            let e = untried[below_u32(rng, u as u32) as usize];
            let c = self.add(node, e, ours);
            self.nodes[c as usize].available += 1;
            return (c, true);
        }
        (best.expect("a play is legal").1, false)
    }

    /// The visits of the root's children along `edges` (0 for an edge
    /// never taken), in order: the search's policy at the root.
    pub(crate) fn root_visits(&self, edges: impl IntoIterator<Item = u16>, out: &mut Vec<u32>) {
        out.extend(
            edges
                .into_iter()
                .map(|e| self.child(0, e).map_or(0, |c| self.nodes[c as usize].visits)),
        );
    }

    /// Backs `gain` (the searching side's) up the nodes of `path`, negated
    /// at the other sides' edges.
    pub(crate) fn backup(&mut self, path: &[u32], gain: f64) {
        for &id in path {
            let n = &mut self.nodes[id as usize];
            n.visits += 1;
            n.total += if n.ours { gain } else { -gain };
        }
    }

    /// The root's most visited of its legal `edges` (ties to the first),
    /// its mean gain and the best mean of the other visited ones; `nodes`
    /// is left to the caller.
    pub(crate) fn root_choice(&self, edges: impl IntoIterator<Item = u16>) -> FullDecision {
        let mut best = 0;
        let mut stats = [(0u32, 0.0f64); 128];
        let mut len = 0;
        for (i, e) in edges.into_iter().enumerate() {
            if let Some(c) = self.child(0, e) {
                let n = &self.nodes[c as usize];
                stats[i] = (n.visits, n.total / n.visits.max(1) as f64);
            }
            if stats[i].0 > stats[best].0 {
                best = i;
            }
            len = i + 1;
        }
        let best_other = (0..len)
            .filter(|&i| i != best && stats[i].0 > 0)
            .map(|i| stats[i].1)
            .reduce(f64::max);
        FullDecision {
            index: best,
            value: stats[best].1,
            best_other,
            nodes: 0,
        }
    }

    /// The play of the mover at `pos` (two or more plays) after searching
    /// until `budget` nodes are spent; `rng` samples the worlds (under
    /// partial observation, from the belief `partial` was prepared with; else
    /// every iteration starts from `pos` itself) and the draws.
    pub fn decide(
        &mut self,
        rules: &FullRules,
        pos: &FivesPosition,
        budget: u64,
        mut partial: Option<&mut WorldSampler>,
        rng: &mut impl RngCore,
    ) -> FullDecision {
        let seat = pos.mover;
        let side = rules.side(seat);
        self.reset();
        let base = util(rules, pos, side);
        let mut steps = 0u64;
        let mut list = ActionList::default();
        let mut path = std::mem::take(&mut self.path);
        let scorer = FullTarget::Thesis(TargetKind::Scorer);
        while steps < budget.max(1) {
            let mut world = match partial.as_deref_mut() {
                Some(sampler) => sampler.draw(rng),
                None => *pos,
            };
            path.clear();
            path.push(0);
            let mut node = 0u32;
            // Selection and expansion.
            loop {
                settle(rules, &mut world, rng, &mut steps);
                if world.end.is_some() {
                    break;
                }
                steps += 1;
                world.actions(rules, &mut list);
                let ours = rules.side(world.mover) == side;
                let edges = list.as_slice().iter().map(|&a| edge_of(a));
                let (c, added) = self.step(node, edges, ours, ISMCTS_EXPLORATION, rng);
                world.play(rules, action_of(self.edge(c)));
                path.push(c);
                node = c;
                if added {
                    break;
                }
            }
            // Playout: every seat plays as the scorer.
            loop {
                settle(rules, &mut world, rng, &mut steps);
                if world.end.is_some() {
                    break;
                }
                steps += 1;
                world.actions(rules, &mut list);
                let i = fixed_choice(rules, scorer, &world, list.as_slice()).expect("deterministic");
                world.play(rules, list.as_slice()[i]);
            }
            self.backup(&path, util(rules, &world, side) - base);
        }
        self.path = path;
        pos.actions(rules, &mut list);
        FullDecision {
            nodes: steps,
            ..self.root_choice(list.as_slice().iter().map(|&a| edge_of(a)))
        }
    }
}
