//! The search of [`AlphaBeta`] (see the module `alphabeta`): iterative
//! deepening at the root, the decision over worlds, and the fail-soft
//! search with its max, min and chance nodes, the shaped opponents' nodes
//! included.

use engine::ActionList;

use crate::eval::Evaluation;
use crate::fives::FivesPosition;
use crate::predict::Predictor;
use crate::rules::{FullRules, MAX_SEATS};
use crate::search::FullDecision;
use crate::table::{Bound, Entry, FivesTable, position_key};
use crate::targets::{FullTarget, fixed_choice};
use engine::PlayerEngine;

use super::limits::{Limits, Progress};
use super::ordering::History;
use super::race::{Adaptive, Race};
use super::shaping::{ShapedKids, Shaper, Shaping};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Node {
    Max,
    Min,
    One(usize),
    Average,
}

/// A search from one seat's side (see the module's documentation).
#[derive(Debug)]
pub struct AlphaBeta<'a> {
    pub(super) rules: &'a FullRules,
    pub(super) side: u8,
    pub(super) engine: PlayerEngine,
    pub(super) models: [FullTarget; MAX_SEATS],
    pub(super) eval: Evaluation<'a>,
    pub(super) table: &'a mut FivesTable,
    /// Whether the search prunes, with the table and move ordering (off:
    /// plain Expectimax / M*).
    pub(super) prune: bool,
    /// The move-ordering history, cleared for every world.
    pub(super) history: History,
    /// How opponents' nodes are shaped by a prediction of their play.
    pub(super) shaper: Shaper<'a>,
    /// The node count and budget, and what iterative deepening did.
    pub(super) progress: Progress,
    /// The largest count a play can score.
    pub(super) max_count: f64,
    /// The largest hand-end bonus.
    pub(super) end_max: f64,
}

impl<'a> AlphaBeta<'a> {
    /// A search for the side of `seat` against `models` (M*'s), valuing
    /// leaves with `eval`, keeping values in `table`.
    pub fn new(
        rules: &'a FullRules,
        seat: u8,
        engine: PlayerEngine,
        models: [FullTarget; MAX_SEATS],
        eval: Evaluation<'a>,
        table: &'a mut FivesTable,
    ) -> AlphaBeta<'a> {
        // A count is at most four ends, each at most a double: 8 x the set;
        // only multiples of 5 score.
        let max_count = (8 * rules.set() as u32) / 5 * 5;
        // A hand's end scores at most every pip dealt, rounded up by 2 at most.
        let end_max = rules.pip_total(rules.all_tiles()) + 2;
        AlphaBeta {
            rules,
            side: rules.side(seat),
            engine,
            models,
            eval,
            table,
            prune: true,
            history: History::new(),
            shaper: Shaper::plain(),
            progress: Progress::default(),
            max_count: max_count as f64,
            end_max: end_max as f64,
        }
    }

    /// The same search without pruning, table or move ordering: plain
    /// Expectimax / M* (the reference pruning is checked against).
    pub fn plain(mut self) -> AlphaBeta<'a> {
        self.prune = false;
        self
    }

    /// The same search shaped by `shaping` with the opponents' plays
    /// predicted by `predictor`. M* against deterministic strategies only
    /// has no node to shape: its search stays plain (so that its bounds do
    /// not widen for extensions that never come).
    pub fn shaped(mut self, shaping: Shaping, predictor: &'a Predictor<'a>) -> AlphaBeta<'a> {
        let rules = self.rules;
        let branching = (0..rules.seats()).any(|s| {
            rules.side(s) != self.side
                && (self.engine != PlayerEngine::MStar
                    || matches!(
                        self.models[s as usize],
                        FullTarget::Thesis(engine::TargetKind::Random) | FullTarget::Searcher
                    ))
        });
        if !shaping.is_plain() && branching {
            self.shaper = Shaper::new(shaping, predictor);
        }
        self
    }

    /// Nodes searched so far.
    pub fn nodes(&self) -> u64 {
        self.progress.nodes
    }

    /// The depth the last world's iterative deepening completed.
    pub fn reached(&self) -> u8 {
        self.progress.reached
    }

    /// The agent side's points minus the mean of the other sides'.
    #[inline(always)]
    fn util(&self, pos: &FivesPosition) -> f64 {
        let sides = self.rules.sides() as usize;
        let mine = pos.scores[self.side as usize];
        if sides == 2 {
            // The same value without dividing by 1.
            return mine as f64 - pos.scores[1 - self.side as usize] as f64;
        }
        let mut others = 0;
        for s in 0..sides {
            if s != self.side as usize {
                others += pos.scores[s];
            }
        }
        mine as f64 - others as f64 / (sides - 1) as f64
    }

    /// A bound on |gain| from a position with `depth` plays and draws left.
    #[inline]
    pub(super) fn bound(&self, depth: u8) -> f64 {
        // An asymmetric tree may search deeper than `depth` below: the
        // hand's own length bounds it then (a tile is drawn and played at most
        // once each).
        let depth = match self.shaper.shaping {
            Shaping::Asymmetric { extend, .. } if extend > 0 => 2 * self.rules.tile_count(),
            _ => depth,
        };
        depth as f64 * self.max_count + self.end_max + self.eval.limit()
    }

    /// The values of the mover's canonical plays at `pos` (two or more; the
    /// mover is on the agent's side), by iterative deepening within `limits`;
    /// `out` gets one value per play.
    pub fn root(&mut self, pos: &FivesPosition, limits: Limits, out: &mut [f64]) {
        let rules = self.rules;
        let mut list = ActionList::default();
        pos.actions(rules, &mut list);
        let n = list.len();
        let start = self.progress.nodes;
        let mut values = [0.0f64; 64];
        // Iterative deepening serves a budget; without one, one search to the depth.
        let first = if self.prune && limits.budget > 0 {
            1
        } else {
            limits.depth.max(1)
        };
        self.progress.reached = 0;
        for d in first..=limits.depth.max(1) {
            self.progress.stop_at = if limits.budget > 0 && d > first {
                start + limits.budget
            } else {
                u64::MAX
            };
            self.progress.horizon = false;
            let base = self.util(pos);
            for (i, v) in values[..n].iter_mut().enumerate() {
                let mut child = *pos;
                child.play(rules, list.as_slice()[i]);
                let r = self.util(&child) - base;
                *v = r + self.search(&child, d - 1, f64::NEG_INFINITY, f64::INFINITY);
                if self.progress.aborted {
                    break;
                }
            }
            if self.progress.aborted {
                self.progress.aborted = false;
                break;
            }
            out[..n].copy_from_slice(&values[..n]);
            self.progress.reached = d;
            // No leaf was cut by the depth: the values are the hand's own.
            if !self.progress.horizon || (limits.budget > 0 && self.progress.nodes - start >= limits.budget) {
                break;
            }
        }
        self.progress.stop_at = u64::MAX;
    }

    /// The decision of the mover (on the agent's side, two or more plays)
    /// over `worlds` (the true position under full observation, or sampled
    /// ones): each world searched afresh (empty table) within `limits`, the
    /// values averaged; ties within 1e-9 to the first play.
    pub fn decide(&mut self, worlds: &[FivesPosition], limits: Limits) -> FullDecision {
        self.decide_with(worlds, limits, None)
    }

    /// [`decide`](Self::decide), and with `adaptive` the worlds stop once
    /// the best play is decided: after at least [`ADAPTIVE_MIN_WORLDS`]
    /// worlds, when for every other play the paired difference of the
    /// per-world root values (the leader's minus its) has a one-sided lower
    /// bound above 0 at the stated confidence (a normal approximation: the
    /// mean less z standard errors, z = 2.326 at the default 99%), or is 0
    /// in every world so far (an equivalent play). The worlds are taken in
    /// order, so the decision is a pure function of them; its `nodes`
    /// counts what was searched.
    pub fn decide_with(
        &mut self,
        worlds: &[FivesPosition],
        limits: Limits,
        adaptive: Option<Adaptive>,
    ) -> FullDecision {
        let mut list = ActionList::default();
        worlds[0].actions(self.rules, &mut list);
        let n = list.len();
        let start = self.progress.nodes;
        let mut race = Race::new(n, adaptive);
        let mut values = [0.0f64; 64];
        for w in worlds {
            self.world(w, limits, &mut values);
            race.add(&values[..n]);
            if adaptive.is_some() && race.decided() {
                break;
            }
        }
        race.decision(self.progress.nodes - start)
    }

    /// The root values of one world, searched afresh (empty table, no
    /// history) within `limits`: what a decision averages. Returns the
    /// nodes it searched and the depth it reached.
    pub(super) fn world(&mut self, w: &FivesPosition, limits: Limits, values: &mut [f64]) -> (u64, u8) {
        let before = self.progress.nodes;
        self.table.clear();
        self.history.clear();
        self.root(w, limits, values);
        (self.progress.nodes - before, self.progress.reached)
    }

    /// The gain from `pos` with `depth` plays and draws left, within
    /// (`alpha`, `beta`) (fail-soft: a value at or below `alpha` is an upper
    /// bound, at or above `beta` a lower bound, else exact).
    pub(super) fn search(&mut self, pos: &FivesPosition, depth: u8, mut alpha: f64, mut beta: f64) -> f64 {
        if depth == 0 {
            return self.horizon(pos);
        }
        if let Some(v) = self.enter(pos.end.is_some()) {
            return v;
        }
        let rules = self.rules;
        // The plays, listed first: none is the test of whether the mover can play.
        let mut list = ActionList::default();
        pos.actions(rules, &mut list);
        if list.is_empty() {
            if pos.must_pass(rules) {
                let mut next = *pos;
                next.pass(rules);
                let r = self.util(&next) - self.util(pos);
                return r + self.search(&next, depth, alpha - r, beta - r);
            }
            return self.draws(pos, depth, alpha, beta);
        }
        let acts = list.as_slice();
        let n = acts.len();
        let mover = pos.mover;
        let node = if n == 1 {
            Node::One(0)
        } else if rules.side(mover) == self.side {
            Node::Max
        } else {
            match (self.engine, self.models[mover as usize]) {
                (PlayerEngine::MStar, FullTarget::Searcher) => Node::Min,
                (PlayerEngine::MStar, model) => match fixed_choice(rules, model, pos, acts) {
                    Some(i) => Node::One(i),
                    None => Node::Average,
                },
                // Expectimax minimises (other engines never run this search).
                _ => Node::Min,
            }
        };
        let base = self.util(pos);
        if let Node::One(i) = node {
            let mut child = *pos;
            child.play(rules, acts[i]);
            let r = self.util(&child) - base;
            return r + self.child(&child, depth - 1, alpha - r, beta - r);
        }
        // Without pruning there is no table: no key to hash.
        let key = if self.prune { position_key(pos) } else { 0 };
        let mut tt_best = u8::MAX;
        if self.prune
            && let Some(e) = self.table.get(key)
        {
            tt_best = e.best;
            if e.depth == depth {
                match e.bound {
                    Bound::Exact => return e.value,
                    Bound::Lower if e.value >= beta => return e.value,
                    Bound::Upper if e.value <= alpha => return e.value,
                    _ => {}
                }
            }
        }
        let (alpha0, beta0) = (alpha, beta);
        if self.shaper.predictor.is_some()
            && matches!(node, Node::Min | Node::Average)
            && let Some(v) = self.shaped_node(pos, acts, node, depth, alpha, beta)
        {
            if !self.progress.aborted {
                self.store(key, v, alpha0, beta0, depth, u8::MAX);
            }
            return v;
        }
        if node == Node::Average {
            let v = self.average(pos, acts, depth, alpha, beta);
            if !self.progress.aborted {
                self.store(key, v, alpha0, beta0, depth, u8::MAX);
            }
            return v;
        }
        // Move ordering: the table's move, scoring plays, history.
        let order = self.history.order(rules, pos, acts, tt_best, self.prune);
        let max = node == Node::Max;
        let mut best = if max { f64::NEG_INFINITY } else { f64::INFINITY };
        let mut best_i = order[0];
        for &i in &order[..n] {
            let a = acts[i as usize];
            let mut child = *pos;
            child.play(rules, a);
            let r = self.util(&child) - base;
            let v = r + self.child(&child, depth - 1, alpha - r, beta - r);
            if self.progress.aborted {
                return 0.0;
            }
            if max {
                if v > best {
                    best = v;
                    best_i = i;
                }
                alpha = alpha.max(v);
            } else {
                if v < best {
                    best = v;
                    best_i = i;
                }
                beta = beta.min(v);
            }
            if alpha >= beta {
                self.history.cut(a, depth);
                break;
            }
        }
        self.store(key, best, alpha0, beta0, depth, best_i);
        best
    }

    /// [`Self::search`] of a child `depth` plays and draws from the
    /// horizon: at 0 the leaf itself, without a call.
    #[inline(always)]
    fn child(&mut self, pos: &FivesPosition, depth: u8, alpha: f64, beta: f64) -> f64 {
        if depth == 0 {
            self.horizon(pos)
        } else {
            self.search(pos, depth, alpha, beta)
        }
    }

    /// Counts a node of [`Self::search`]: its value, 0, when the budget is
    /// spent (the search aborted) or the hand is over (`ended`); `None` to
    /// search it.
    #[inline(always)]
    fn enter(&mut self, ended: bool) -> Option<f64> {
        self.progress.nodes += 1;
        if self.progress.nodes > self.progress.stop_at {
            self.progress.aborted = true;
            return Some(0.0);
        }
        ended.then_some(0.0)
    }

    /// [`Self::search`] at the horizon: a node counted, worth the leaf's
    /// value unless [`Self::enter`] says otherwise.
    #[inline(always)]
    fn horizon(&mut self, pos: &FivesPosition) -> f64 {
        self.at_horizon(pos.end.is_some(), |s| s.eval.leaf(s.rules, pos, s.side))
    }

    /// A leaf at the horizon (its hand over if `ended`), counted as
    /// [`Self::enter`] counts a node: worth `leaf` unless that says
    /// otherwise.
    #[inline(always)]
    pub(super) fn at_horizon(&mut self, ended: bool, leaf: impl FnOnce(&Self) -> f64) -> f64 {
        if let Some(v) = self.enter(ended) {
            return v;
        }
        self.progress.horizon = true;
        leaf(self)
    }

    /// A node whose mover plays each of `acts` with equal probability
    /// (a model of random play): Star1 over the plays. Kept out of
    /// [`Self::search`], so that its arrays are not in every node's frame.
    #[inline(never)]
    fn average(&mut self, pos: &FivesPosition, acts: &[engine::Action], depth: u8, alpha: f64, beta: f64) -> f64 {
        let rules = self.rules;
        let base = self.util(pos);
        let n = acts.len();
        let mut rs = [0.0f64; 64];
        for (i, r) in rs[..n].iter_mut().enumerate() {
            let mut child = *pos;
            child.play(rules, acts[i]);
            *r = self.util(&child) - base;
        }
        self.star1(&rs[..n], depth - 1, alpha, beta, |s, i, ca, cb| {
            let mut child = *pos;
            child.play(rules, acts[i]);
            s.search(&child, depth - 1, ca, cb)
        })
    }

    pub(super) fn store(&mut self, key: u64, value: f64, alpha: f64, beta: f64, depth: u8, best: u8) {
        if !self.prune {
            return;
        }
        let bound = if value <= alpha {
            Bound::Upper
        } else if value >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.table.put(
            key,
            Entry {
                value,
                bound,
                depth,
                best,
            },
        );
    }

    /// An opponent's node under the shaping (`None`: the shaping keeps every
    /// play at the plain depth here, so the plain node serves). Fail-soft
    /// like [`Self::search`].
    fn shaped_node(
        &mut self,
        pos: &FivesPosition,
        acts: &[engine::Action],
        node: Node,
        depth: u8,
        alpha: f64,
        beta: f64,
    ) -> Option<f64> {
        let rules = self.rules;
        let ShapedKids {
            kids,
            depths,
            weights,
            m,
        } = self.shaper.plan(rules, pos, acts, depth)?;
        let base = self.util(pos);
        let mut rs = [0.0f64; 64];
        for j in 0..m {
            let mut child = *pos;
            child.play(rules, acts[kids[j] as usize]);
            rs[j] = self.util(&child) - base;
        }
        let make = |j: usize| {
            let mut child = *pos;
            child.play(rules, acts[kids[j] as usize]);
            child
        };
        if node == Node::Min && !matches!(self.shaper.shaping, Shaping::Expect) {
            // The opponent still minimises, over the plays kept, each to its depth.
            let mut best = f64::INFINITY;
            let mut beta = beta;
            for j in 0..m {
                let r = rs[j];
                let v = r + self.search(&make(j), depths[j], alpha - r, beta - r);
                if self.progress.aborted {
                    return Some(0.0);
                }
                best = best.min(v);
                beta = beta.min(v);
                if alpha >= beta {
                    break;
                }
            }
            return Some(best);
        }
        Some(self.weighted_star1(&rs[..m], &weights[..m], &depths[..m], alpha, beta, make))
    }
}
