//! Depth-limited Expectimax and M* for OpenSpiel's block and team games
//! under full observation, and a hand of them played by agents.
//!
//! The agent's side maximises its return; each opponent minimises it
//! (Expectimax) or follows its model (M*: `heaviest` plays its heaviest
//! tile, `random` is the uniform average over its plays; a searching
//! opponent is modelled as `random`). Depth counts plays; at depth 0 a
//! position is worth the return the agent's side would get if the hand were
//! blocked there. Ties within 1e-9 go to the first play in OpenSpiel's id
//! order. There are no chance nodes after the deal.

use rand_chacha::ChaCha20Rng;

use crate::seed::below;
use crate::targets::TargetKind;
use crate::tiles::TileSet;

use super::game::FullTarget;
use super::position::{FullAction, FullActions, FullPosition, HandEnd};
use super::rules::{FullRules, MAX_SEATS};
use super::search::{FullAgent, FullDecision, FullEngine, best_of};

/// The heaviest play (pip total, then high pip; the first among equals).
pub fn heaviest_play(rules: &FullRules, actions: &[FullAction]) -> usize {
    let key = |t: u8| {
        let (a, b) = rules.pips(t);
        (a + b, b)
    };
    let mut best = 0;
    for (i, a) in actions.iter().enumerate() {
        if key(a.tile) > key(actions[best].tile) {
            best = i;
        }
    }
    best
}

/// A search of a block or team hand from one seat's side.
#[derive(Debug)]
pub struct BlockSearcher<'a> {
    rules: &'a FullRules,
    seat: u8,
    engine: FullEngine,
    depth: u8,
    models: [FullTarget; MAX_SEATS],
    nodes: u64,
}

impl<'a> BlockSearcher<'a> {
    /// A search for `seat`'s side with the others' models.
    pub fn new(
        rules: &'a FullRules,
        seat: u8,
        engine: FullEngine,
        depth: u8,
        models: [FullTarget; MAX_SEATS],
    ) -> BlockSearcher<'a> {
        BlockSearcher {
            rules,
            seat,
            engine,
            depth: depth.max(1),
            models,
            nodes: 0,
        }
    }

    /// Positions valued so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The mover's play among its legal plays (two or more).
    pub fn choose(&mut self, pos: &FullPosition) -> FullDecision {
        let mut list = FullActions::default();
        pos.actions(self.rules, &mut list);
        let start = self.nodes;
        let mut d = best_of(list.len(), |i| {
            let mut next = *pos;
            next.play(self.rules, list.as_slice()[i]);
            self.value(&next, self.depth - 1)
        });
        d.nodes = self.nodes - start;
        d
    }

    fn value(&mut self, pos: &FullPosition, depth: u8) -> f64 {
        self.nodes += 1;
        if pos.end.is_some() || depth == 0 {
            return pos.pip_returns(self.rules)[self.seat as usize] as f64;
        }
        let rules = self.rules;
        let mut list = FullActions::default();
        pos.actions(rules, &mut list);
        let child = |s: &mut Self, i: usize| {
            let mut next = *pos;
            next.play(rules, list.as_slice()[i]);
            s.value(&next, depth - 1)
        };
        let n = list.len();
        if rules.side(pos.mover) == rules.side(self.seat) {
            return (0..n).map(|i| child(self, i)).fold(f64::NEG_INFINITY, f64::max);
        }
        match (self.engine, self.models[pos.mover as usize]) {
            (FullEngine::Expectimax, _) => (0..n).map(|i| child(self, i)).fold(f64::INFINITY, f64::min),
            (FullEngine::MStar, FullTarget::Heaviest) => {
                let i = heaviest_play(rules, list.as_slice());
                child(self, i)
            }
            // Random, and any model block has no count for: the uniform average.
            (FullEngine::MStar, _) => (0..n).map(|i| child(self, i)).sum::<f64>() / n as f64,
        }
    }
}

/// A block or team hand played to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenHandRecord {
    /// The deal.
    pub hands: [TileSet; MAX_SEATS],
    /// Every play, in order.
    pub plays: Vec<(u8, FullAction)>,
    /// The legal plays the mover had before each play.
    pub legal: Vec<u32>,
    /// How the hand ended.
    pub end: HandEnd,
    /// Each seat's return (OpenSpiel's).
    pub returns: [i32; MAX_SEATS],
    /// Positions the searching seats valued.
    pub nodes: u64,
    /// The searching seats' decisions: the play's index in `plays`, and the decision.
    pub decisions: Vec<(usize, FullDecision)>,
}

/// Plays a block or team hand from `hands`, `agents[seat]` in each seat;
/// `seat_rngs` drive the random strategies (one draw per decision).
pub fn play_open_hand(
    rules: &FullRules,
    hands: [TileSet; MAX_SEATS],
    agents: &[FullAgent; MAX_SEATS],
    seat_rngs: &mut [ChaCha20Rng; MAX_SEATS],
) -> OpenHandRecord {
    let models: [FullTarget; MAX_SEATS] = std::array::from_fn(|s| match agents[s] {
        FullAgent::Fixed(t) => t,
        FullAgent::Search { .. } => FullTarget::Thesis(TargetKind::Random),
    });
    let mut pos = FullPosition::deal(rules, hands);
    let mut list = FullActions::default();
    let (mut plays, mut legal, mut decisions, mut nodes) = (Vec::new(), Vec::new(), Vec::new(), 0);
    while pos.end.is_none() {
        let seat = pos.mover;
        pos.actions(rules, &mut list);
        let n = list.len();
        let i = match agents[seat as usize] {
            FullAgent::Fixed(FullTarget::Heaviest) => heaviest_play(rules, list.as_slice()),
            // One draw per decision, however many plays (as the thesis's random target).
            FullAgent::Fixed(_) => below(&mut seat_rngs[seat as usize], n as u64) as usize,
            FullAgent::Search { .. } if n == 1 => 0,
            FullAgent::Search { engine, depth } => {
                let mut s = BlockSearcher::new(rules, seat, engine, depth, models);
                let d = s.choose(&pos);
                nodes += s.nodes();
                decisions.push((plays.len(), d));
                d.index
            }
        };
        let a = list.as_slice()[i];
        plays.push((seat, a));
        legal.push(n as u32);
        pos.play(rules, a);
    }
    OpenHandRecord {
        hands,
        plays,
        legal,
        end: pos.end.expect("the loop ends with the hand"),
        returns: pos.returns(rules),
        nodes,
        decisions,
    }
}
