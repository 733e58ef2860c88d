//! Single-observer information-set Monte Carlo tree search (SO-ISMCTS,
//! Cowling, Powley and Whitehouse 2012) for All Fives, and the sampling of
//! worlds consistent with what a seat has seen (shared with PIMC).
//!
//! One tree of the searching seat's information sets: an edge is a play
//! (tile, location), whoever makes it. Each iteration samples a
//! world (the other seats' hands and the boneyard, uniformly among the
//! splits of the unseen tiles that match every hand's size), descends the
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

use crate::board::Loc;
use crate::position::{Action, ActionList};
use crate::targets::TargetKind;
use crate::tiles::{TileSet, bits};

use super::deal::below;
use super::fives::FivesPosition;
use super::game::{FullTarget, fixed_choice};
use super::rules::FullRules;
use super::search::FullDecision;

/// The exploration constant of UCB1, in points (a hand's gains are tens of points).
pub const ISMCTS_EXPLORATION: f64 = 15.0;

/// What every seat has shown about its hand: each time a seat could not
/// play (it drew or passed), it held no tile matching an open end. The
/// tiles it drew afterwards are unknown, so the record is "at most (draws
/// since) of its tiles match those ends".
///
/// It also keeps every play of the hand, so that M* (which knows each
/// opponent's strategy) can keep only the worlds in which a deterministic
/// strategy would have made the plays it made ([`Seen::agrees`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Per seat: (tiles matching the open ends then, draws made before).
    events: [[(TileSet, u8); Seen::EVENTS]; super::rules::MAX_SEATS],
    len: [u8; super::rules::MAX_SEATS],
    draws: [u8; super::rules::MAX_SEATS],
    plays: Vec<SeenPlay>,
}

/// A play as every seat saw it: the position before it (the mover's hand
/// being its own business), the play, and the mover's draws before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SeenPlay {
    before: FivesPosition,
    action: Action,
    draws_before: u8,
}

impl Default for Seen {
    fn default() -> Self {
        Seen {
            events: [[(0, 0); Seen::EVENTS]; super::rules::MAX_SEATS],
            len: [0; super::rules::MAX_SEATS],
            draws: [0; super::rules::MAX_SEATS],
            plays: Vec::new(),
        }
    }
}

impl Seen {
    /// Events kept per seat (later ones are not recorded: a world is then
    /// merely less constrained).
    pub const EVENTS: usize = 16;

    /// The mover of `pos` cannot play: it is about to draw or pass.
    pub fn stuck(&mut self, rules: &FullRules, pos: &FivesPosition) {
        let seat = pos.mover as usize;
        let mut matching: TileSet = 0;
        for &loc in &Loc::ALL[..pos.board.open_locations()] {
            if let Some(p) = pos.board.exposed(loc) {
                matching |= rules.pip_mask(p);
            }
        }
        if matching == 0 || self.len[seat] as usize == Seen::EVENTS {
            return;
        }
        self.events[seat][self.len[seat] as usize] = (matching, self.draws[seat]);
        self.len[seat] += 1;
    }

    /// `seat` drew a tile.
    pub fn drew(&mut self, seat: u8) {
        self.draws[seat as usize] = self.draws[seat as usize].saturating_add(1);
    }

    /// The mover of `pos` makes `action` (called before it is made).
    pub fn played(&mut self, pos: &FivesPosition, action: Action) {
        self.plays.push(SeenPlay {
            before: *pos,
            action,
            draws_before: self.draws[pos.mover as usize],
        });
    }

    /// Whether, in `world`, every opponent of `side` whose model is
    /// deterministic would have made the plays it made. A play is checked
    /// when the seat has not drawn since (its hand then is its hand in the
    /// world plus the tiles it has played since); `random` is not checked.
    pub fn agrees(
        &self,
        rules: &FullRules,
        world: &FivesPosition,
        side: u8,
        models: &[FullTarget; super::rules::MAX_SEATS],
    ) -> bool {
        let mut list = ActionList::default();
        for (i, p) in self.plays.iter().enumerate() {
            let s = p.before.mover;
            if rules.side(s) == side || self.draws[s as usize] != p.draws_before {
                continue;
            }
            let mut hand = world.hands[s as usize];
            for q in &self.plays[i..] {
                if q.before.mover == s {
                    hand |= 1 << q.action.tile;
                }
            }
            let mut then = p.before;
            then.hands[s as usize] = hand;
            then.actions(rules, &mut list);
            if let Some(k) = fixed_choice(rules, models[s as usize], &then, list.as_slice())
                && list.as_slice()[k] != p.action
            {
                return false;
            }
        }
        true
    }

    /// Whether `seat` may hold `hand` given what it has shown.
    pub fn allows(&self, seat: u8, hand: TileSet) -> bool {
        let s = seat as usize;
        self.events[s][..self.len[s] as usize]
            .iter()
            .all(|&(m, before)| (hand & m).count_ones() <= (self.draws[s] - before) as u32)
    }
}

/// Worlds tried before a sample that breaks what a seat has shown is kept.
pub const WORLD_TRIES: u32 = 512;

/// A world `seat` cannot tell from `pos`: the tiles it has not seen
/// (the others' hands and the boneyard) dealt again uniformly at random,
/// each hand keeping its size, among the deals that agree with `seen`
/// and, given `models` (M*'s), with the plays the opponents' deterministic
/// strategies made (rejection: up to [`WORLD_TRIES`] deals, then the last
/// one).
pub fn sample_world(
    rules: &FullRules,
    pos: &FivesPosition,
    seat: u8,
    seen: &Seen,
    models: Option<&[FullTarget; super::rules::MAX_SEATS]>,
    rng: &mut impl RngCore,
) -> FivesPosition {
    let mut world = deal_unseen(rules, pos, seat, rng);
    for _ in 1..WORLD_TRIES {
        if (0..rules.seats()).all(|s| s == seat || seen.allows(s, world.hands[s as usize]))
            && models.is_none_or(|m| seen.agrees(rules, &world, rules.side(seat), m))
        {
            break;
        }
        world = deal_unseen(rules, pos, seat, rng);
    }
    world
}

fn deal_unseen(rules: &FullRules, pos: &FivesPosition, seat: u8, rng: &mut impl RngCore) -> FivesPosition {
    let mut unseen: TileSet = pos.boneyard;
    for s in 0..rules.seats() {
        if s != seat {
            unseen |= pos.hands[s as usize];
        }
    }
    let mut tiles = [0u8; 64];
    let mut n = 0;
    for t in bits(unseen) {
        tiles[n] = t;
        n += 1;
    }
    // Fisher-Yates.
    for i in (1..n).rev() {
        let j = below(rng, i as u32 + 1) as usize;
        tiles.swap(i, j);
    }
    let mut world = *pos;
    let mut next = 0;
    for s in 0..rules.seats() {
        if s == seat {
            continue;
        }
        let size = pos.hands[s as usize].count_ones() as usize;
        world.hands[s as usize] = tiles[next..next + size].iter().fold(0, |h, &t| h | 1 << t);
        next += size;
    }
    world.boneyard = tiles[next..n].iter().fold(0, |h, &t| h | 1 << t);
    world
}

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

    /// The play of the mover at `pos` (two or more plays) after searching
    /// until `budget` nodes are spent; `rng` samples the worlds (under
    /// partial observation, agreeing with what the seats have shown; else
    /// every iteration starts from `pos` itself) and the draws.
    pub fn decide(
        &mut self,
        rules: &FullRules,
        pos: &FivesPosition,
        budget: u64,
        partial: Option<&Seen>,
        rng: &mut impl RngCore,
    ) -> FullDecision {
        let seat = pos.mover;
        let side = rules.side(seat);
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
        let base = util(rules, pos, side);
        let mut steps = 0u64;
        let mut list = ActionList::default();
        let mut path: Vec<u32> = Vec::with_capacity(64);
        let scorer = FullTarget::Thesis(TargetKind::Scorer);
        while steps < budget.max(1) {
            let mut world = match partial {
                Some(seen) => sample_world(rules, pos, seat, seen, None, rng),
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
                // Untried plays legal here, and availability of the tried ones.
                let mut untried = [0u16; 64];
                let mut u = 0;
                let mut best: Option<(f64, u32)> = None;
                for &a in list.as_slice() {
                    let e = edge_of(a);
                    match self.child(node, e) {
                        None => {
                            untried[u] = e;
                            u += 1;
                        }
                        Some(c) => {
                            let n = &mut self.nodes[c as usize];
                            n.available += 1;
                            let mean = n.total / n.visits.max(1) as f64;
                            let ucb =
                                mean + ISMCTS_EXPLORATION * ((n.available as f64).ln() / n.visits.max(1) as f64).sqrt();
                            if best.is_none_or(|(b, _)| ucb > b) {
                                best = Some((ucb, c));
                            }
                        }
                    }
                }
                if u > 0 {
                    let e = untried[below(rng, u as u32) as usize];
                    let c = self.add(node, e, ours);
                    self.nodes[c as usize].available += 1;
                    world.play(rules, action_of(e));
                    path.push(c);
                    break;
                }
                let (_, c) = best.expect("a play is legal");
                world.play(rules, action_of(self.nodes[c as usize].edge));
                path.push(c);
                node = c;
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
            let gain = util(rules, &world, side) - base;
            for &id in &path {
                let n = &mut self.nodes[id as usize];
                n.visits += 1;
                n.total += if n.ours { gain } else { -gain };
            }
        }
        // The most visited root play, ties to the first in canonical order.
        pos.actions(rules, &mut list);
        let mut best = 0;
        let mut stats = [(0u32, 0.0f64); 64];
        for (i, &a) in list.as_slice().iter().enumerate() {
            if let Some(c) = self.child(0, edge_of(a)) {
                let n = &self.nodes[c as usize];
                stats[i] = (n.visits, n.total / n.visits.max(1) as f64);
            }
            if stats[i].0 > stats[best].0 {
                best = i;
            }
        }
        let best_other = (0..list.len())
            .filter(|&i| i != best && stats[i].0 > 0)
            .map(|i| stats[i].1)
            .reduce(f64::max);
        FullDecision {
            index: best,
            value: stats[best].1,
            best_other,
            nodes: steps,
        }
    }
}
