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

use super::position::{FullAction, FullActions, FullPosition};
use super::search::{FullDecision, FullSearcher, NodeKind, best_of};
use super::targets::{FullTarget, heaviest_play};

/// [`FullSearcher`] on block and team hands.
impl FullSearcher<'_> {
    /// The mover's play among its legal plays (two or more) in a block or
    /// team hand, searched to the depth or, with a `budget`, as
    /// [`open_values_budget`](Self::open_values_budget) does.
    pub fn choose_open(&mut self, pos: &FullPosition, budget: u64) -> FullDecision {
        let start = self.nodes;
        let mut values = Vec::new();
        self.open_values_budget(pos, budget, &mut values);
        let mut d = best_of(values.len(), |i| values[i]);
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

    /// [`open_values`](Self::open_values) to a node budget: iterative
    /// deepening from depth 1 to the searcher's depth, each iteration
    /// valuing every play exactly at its depth with alpha-beta inside
    /// (minimising and maximising nodes prune; an average node, M*'s model
    /// of `random`, does not). The values are the deepest iteration that
    /// finished within `budget` nodes (the first always finishes), or the
    /// exact values once an iteration reached the hand's end on every line.
    /// A pure function of the position, the settings and the budget.
    /// Budget 0: no budget, [`open_values`](Self::open_values).
    pub fn open_values_budget(&mut self, pos: &FullPosition, budget: u64, out: &mut Vec<f64>) {
        if budget == 0 {
            return self.open_values(pos, out);
        }
        let mut list = FullActions::default();
        pos.actions(self.rules, &mut list);
        let start = self.nodes;
        let mut values = Vec::with_capacity(list.len());
        out.clear();
        for depth in 1..=self.depth {
            self.limit = if depth == 1 {
                u64::MAX
            } else {
                start.saturating_add(budget)
            };
            self.cut = false;
            values.clear();
            for &a in list.as_slice() {
                let mut next = *pos;
                next.play(self.rules, a);
                let v = self.bounded(&next, depth - 1, f64::NEG_INFINITY, f64::INFINITY);
                if self.aborted {
                    break;
                }
                values.push(v);
            }
            if self.aborted {
                break;
            }
            out.clone_from(&values);
            if !self.cut {
                break;
            }
        }
        self.limit = u64::MAX;
        self.aborted = false;
    }

    /// The value of `pos` to `depth` within (`alpha`, `beta`), fail-soft:
    /// exact inside the window, a bound outside it.
    fn bounded(&mut self, pos: &FullPosition, depth: u8, alpha: f64, beta: f64) -> f64 {
        self.nodes += 1;
        if self.nodes > self.limit {
            self.aborted = true;
            return 0.0;
        }
        let rules = self.rules;
        if pos.end.is_some() || depth == 0 {
            self.cut |= pos.end.is_none();
            return pos.pip_returns(rules)[self.side as usize] as f64;
        }
        let mut list = FullActions::default();
        pos.actions(rules, &mut list);
        let plays = list.as_slice();
        let kind = self.node_kind(pos.mover);
        let NodeKind::Model(model) = kind else {
            return self.minimax(kind == NodeKind::Max, pos, plays, depth, alpha, beta);
        };
        if model == FullTarget::Heaviest {
            let mut next = *pos;
            next.play(rules, plays[heaviest_play(rules, plays)]);
            return self.bounded(&next, depth - 1, alpha, beta);
        }
        // Random, and any model block has no play for: the uniform average,
        // each play valued exactly.
        let mut sum = 0.0;
        for &a in plays {
            let mut next = *pos;
            next.play(rules, a);
            sum += self.bounded(&next, depth - 1, f64::NEG_INFINITY, f64::INFINITY);
            if self.aborted {
                return 0.0;
            }
        }
        sum / plays.len() as f64
    }

    /// A maximising (`max`) or minimising node of [`bounded`](Self::bounded)
    /// over `plays`, heaviest tiles first: shedding pips is what a blocked
    /// hand pays for, so these cut off soonest.
    fn minimax(
        &mut self,
        max: bool,
        pos: &FullPosition,
        plays: &[FullAction],
        depth: u8,
        mut alpha: f64,
        mut beta: f64,
    ) -> f64 {
        let rules = self.rules;
        let weight = |a: &FullAction| {
            let (x, y) = rules.pips(a.tile);
            x + y
        };
        let mut order = [0u8; 128];
        for i in 0..plays.len() {
            let mut j = i;
            while j > 0 && weight(&plays[order[j - 1] as usize]) < weight(&plays[i]) {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = i as u8;
        }
        let mut best = if max { f64::NEG_INFINITY } else { f64::INFINITY };
        for &i in &order[..plays.len()] {
            let mut next = *pos;
            next.play(rules, plays[i as usize]);
            let v = self.bounded(&next, depth - 1, alpha, beta);
            if self.aborted {
                return 0.0;
            }
            if max {
                best = best.max(v);
                alpha = alpha.max(v);
            } else {
                best = best.min(v);
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }
}
