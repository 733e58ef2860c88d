//! Depth-limited Expectimax and M* for OpenSpiel's block and team games
//! under full observation ([`FullSearcher::choose_open`]); `open_hand.rs`
//! plays their hands.
//!
//! The agent's side maximises its return; each opponent minimises it
//! (Expectimax) or follows its model (M*: `heaviest` plays its heaviest
//! tile, `random` is the uniform average over its plays; a searching
//! opponent is modelled as `random`). Depth counts plays; at depth 0 a
//! position is worth the return the agent's side would get if the hand were
//! blocked there. Ties within 1e-9 go to the first play in OpenSpiel's id
//! order. There are no chance nodes after the deal.

use super::position::{FullActions, FullPosition};
use super::search::{FullDecision, FullSearcher, best_of};
use super::targets::{FullTarget, heaviest_play};

/// [`FullSearcher`] on block and team hands.
impl FullSearcher<'_> {
    /// The mover's play among its legal plays (two or more) in a block or
    /// team hand.
    pub fn choose_open(&mut self, pos: &FullPosition) -> FullDecision {
        let mut list = FullActions::default();
        pos.actions(self.rules, &mut list);
        let start = self.nodes;
        let mut d = best_of(list.len(), |i| {
            let mut next = *pos;
            next.play(self.rules, list.as_slice()[i]);
            self.open_value(&next, self.depth - 1)
        });
        d.nodes = self.nodes - start;
        d
    }

    /// The value of each of the mover's legal plays (in `pos.actions`
    /// order) for the searching side, written to `out` (one world of a
    /// PIMC decision over several).
    pub fn open_values(&mut self, pos: &FullPosition, out: &mut Vec<f64>) {
        let mut list = FullActions::default();
        pos.actions(self.rules, &mut list);
        out.clear();
        for &a in list.as_slice() {
            let mut next = *pos;
            next.play(self.rules, a);
            let v = self.open_value(&next, self.depth - 1);
            out.push(v);
        }
    }

    fn open_value(&mut self, pos: &FullPosition, depth: u8) -> f64 {
        self.nodes += 1;
        let rules = self.rules;
        if pos.end.is_some() || depth == 0 {
            // Partners share a return: the side's index is one of its seats.
            return pos.pip_returns(rules)[self.side as usize] as f64;
        }
        let mut list = FullActions::default();
        pos.actions(rules, &mut list);
        // Heaviest plays its play; random, and any model block has no count
        // for, is the uniform average.
        let model_play = |model| (model == FullTarget::Heaviest).then(|| heaviest_play(rules, list.as_slice()));
        self.decision(pos.mover, list.len(), model_play, |s, i| {
            let mut next = *pos;
            next.play(rules, list.as_slice()[i]);
            s.open_value(&next, depth - 1)
        })
    }
}
