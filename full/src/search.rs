//! Depth-limited Expectimax and M* for All Fives with 2 to 4 seats, under
//! full observation: the agent's side maximises (a partner is the same
//! agent), each opponent minimises (Expectimax, "paranoid") or follows its
//! model (M*: a deterministic strategy's play, or the uniform average over
//! plays for `random`); draws are chance nodes, uniform over the boneyard.
//!
//! Depth counts plays and draws (a pass is free: at most one per seat before
//! the hand is blocked); at depth 0 or the hand's end a position is worth the
//! agent side's points in the hand minus the mean of the other sides'.
//! Ties within 1e-9 go to the first play in canonical order. The search is a
//! pure function of the position, the rules and these settings. The same
//! searcher serves block and team (`block_search.rs`).

use engine::bits;
use engine::{ActionList, PlayerEngine};

use super::fives::FivesPosition;
use super::rules::{FullRules, MAX_SEATS};
use super::targets::{FullTarget, fixed_choice};

/// Values closer than this are equal.
pub const FULL_TIE_EPSILON: f64 = 1e-9;

/// One searched decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FullDecision {
    /// The chosen play's index in canonical order.
    pub index: usize,
    /// Its value.
    pub value: f64,
    /// The best value among the other plays (`None` with a single play).
    pub best_other: Option<f64>,
    /// Positions valued for this decision.
    pub nodes: u64,
}

/// The best of `n` plays (at most 128) valued by `value_of`: ties within
/// [`FULL_TIE_EPSILON`] go to the first; `nodes` is left to the caller.
pub(crate) fn best_of(n: usize, mut value_of: impl FnMut(usize) -> f64) -> FullDecision {
    let mut values = [0.0; 128];
    let mut best = 0;
    for i in 0..n {
        values[i] = value_of(i);
        if values[i] > values[best] + FULL_TIE_EPSILON {
            best = i;
        }
    }
    FullDecision {
        index: best,
        value: values[best],
        best_other: (0..n).filter(|&i| i != best).map(|i| values[i]).reduce(f64::max),
        nodes: 0,
    }
}

/// A search from one seat's point of view.
#[derive(Debug)]
pub struct FullSearcher<'a> {
    pub(super) rules: &'a FullRules,
    pub(super) side: u8,
    engine: PlayerEngine,
    pub(super) depth: u8,
    /// Each seat's strategy, as M* models it (the agent's own seats unused).
    models: [FullTarget; MAX_SEATS],
    pub(super) nodes: u64,
    /// A budgeted search's node count at which it gives up its iteration
    /// (`u64::MAX`: none), whether it did, and whether a line of the
    /// iteration stopped at the depth limit (`block_search.rs`).
    pub(super) limit: u64,
    pub(super) aborted: bool,
    pub(super) cut: bool,
}

/// How a node of a mover combines its children's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NodeKind {
    /// The agent's side: the best.
    Max,
    /// An opponent that minimises.
    Min,
    /// An opponent following its M* model: the model's play, or (`random`,
    /// and any model with no play here) the uniform average.
    Model(FullTarget),
}

impl<'a> FullSearcher<'a> {
    /// A search for the side of `seat`, with the others' models.
    pub fn new(
        rules: &'a FullRules,
        seat: u8,
        engine: PlayerEngine,
        depth: u8,
        models: [FullTarget; MAX_SEATS],
    ) -> FullSearcher<'a> {
        FullSearcher {
            rules,
            side: rules.side(seat),
            engine,
            depth: depth.max(1),
            models,
            nodes: 0,
            limit: u64::MAX,
            aborted: false,
            cut: false,
        }
    }

    /// How a node of `mover` combines its children.
    pub(super) fn node_kind(&self, mover: u8) -> NodeKind {
        if self.rules.side(mover) == self.side {
            return NodeKind::Max;
        }
        match (self.engine, self.models[mover as usize]) {
            (PlayerEngine::MStar, FullTarget::Searcher) => NodeKind::Min,
            (PlayerEngine::MStar, model) => NodeKind::Model(model),
            // Expectimax minimises; only M* follows models (other engines
            // never run this search).
            _ => NodeKind::Min,
        }
    }

    /// Positions valued so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The mover's play among its canonical legal plays (two or more), with
    /// its value and the best value of the others.
    pub fn choose(&mut self, pos: &FivesPosition) -> FullDecision {
        let mut list = ActionList::default();
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

    /// The agent side's points minus the mean of the other sides'.
    fn utility(&self, pos: &FivesPosition) -> f64 {
        let sides = self.rules.sides() as usize;
        let mine = pos.scores[self.side as usize] as f64;
        let others: u32 = (0..sides)
            .filter(|&s| s != self.side as usize)
            .map(|s| pos.scores[s])
            .sum();
        mine - others as f64 / (sides - 1) as f64
    }

    /// A decision node of `mover` with `n` plays valued by `child`: the
    /// agent's side takes the best; an opponent the worst (Expectimax), or
    /// under M* the play its model makes (`model_play`; `None`: the uniform
    /// average, as for `random`).
    pub(super) fn decision(
        &mut self,
        mover: u8,
        n: usize,
        model_play: impl FnOnce(FullTarget) -> Option<usize>,
        mut child: impl FnMut(&mut Self, usize) -> f64,
    ) -> f64 {
        match self.node_kind(mover) {
            NodeKind::Max => (0..n).map(|i| child(self, i)).fold(f64::NEG_INFINITY, f64::max),
            NodeKind::Min => (0..n).map(|i| child(self, i)).fold(f64::INFINITY, f64::min),
            NodeKind::Model(model) => match model_play(model) {
                Some(i) => child(self, i),
                None => (0..n).map(|i| child(self, i)).sum::<f64>() / n as f64,
            },
        }
    }

    fn value(&mut self, pos: &FivesPosition, depth: u8) -> f64 {
        self.nodes += 1;
        if pos.end.is_some() || depth == 0 {
            return self.utility(pos);
        }
        let rules = self.rules;
        if !pos.can_play(rules, pos.mover) {
            if pos.must_pass(rules) {
                let mut next = *pos;
                next.pass(rules);
                return self.value(&next, depth);
            }
            let tiles = pos.boneyard;
            let n = tiles.count_ones() as f64;
            let mut sum = 0.0;
            for t in bits(tiles) {
                let mut next = *pos;
                next.draw(t);
                sum += self.value(&next, depth - 1);
            }
            return sum / n;
        }
        let mut list = ActionList::default();
        pos.actions(rules, &mut list);
        self.decision(
            pos.mover,
            list.len(),
            |model| fixed_choice(rules, model, pos, list.as_slice()),
            |s, i| {
                let mut next = *pos;
                next.play(rules, list.as_slice()[i]);
                s.value(&next, depth - 1)
            },
        )
    }
}
