//! The pruned search (`Searcher::set_pruning`): alpha-beta at the decisions,
//! Ballard's Star1 at uniform averages, giving the very values of the
//! unpruned search with far fewer nodes. [`PruneState`] is what it keeps
//! between searches; [`Pruned`] is one search under one engine kind.

use rustc_hash::FxHashMap;

use crate::position::{ActionList, Position, Seat};
use crate::rules::Rules;
use crate::table::{DEFAULT_TABLE_CAP, Key, ValueStore};
use crate::targets::{EngineKind, TargetKind, target_choice};
use crate::tiles::bits;

use super::bounds::Bounds;
use super::config::next_depth;
use super::kids::{Kid, Node, fill, ordered, shift_down, shift_up, widest};

/// What the pruned search keeps between searches of one searcher.
#[derive(Debug)]
pub(super) struct PruneState {
    /// The tile tables of the formula bounds.
    bounds: Bounds,
    /// Bounds (lower, upper) proven by pruned searches that failed low or
    /// high, by key: never values, so they stay out of the store.
    proven: FxHashMap<Key, (f64, f64)>,
    /// Scratch lists of children, one per level of the pruned search.
    kids: Vec<Vec<Kid>>,
}

impl PruneState {
    /// An empty state for `rules`.
    pub(super) fn new(rules: &Rules) -> PruneState {
        PruneState {
            bounds: Bounds::new(rules),
            proven: FxHashMap::default(),
            kids: Vec::new(),
        }
    }
}

/// One pruned search under one engine kind: the searcher's rules, value
/// store, node count and pruning state, borrowed for its duration.
pub(super) struct Pruned<'a, S> {
    rules: &'a Rules,
    store: &'a mut S,
    /// The searcher's count of positions expanded.
    nodes: &'a mut u64,
    state: &'a mut PruneState,
    /// The engine kind every value of this search is under.
    kind: EngineKind,
}

// Contract. `search_ab(pos, depth, alpha, beta)` (alpha < beta) under the
// search's engine kind returns (v, exact), where t is the value the unpruned
// search computes for the same key, bit for bit:
//   (a) v <= alpha: v is an upper bound, t <= v;
//   (b) v >= beta: v is a lower bound, t >= v;
//   (c) alpha < v < beta: v == t;
// and `exact` says v == t whatever the window: a table hit, a value pinned by
// its bounds, or one computed without cutting anything off (every child
// exact), which is the very computation the full window makes. With the full
// window the result is always t. Only exact values enter the table (those
// strictly inside their window, and those computed as with the full window),
// so a hit is exact under any window, pruned and unpruned searches can share
// a table, and results never depend on what it held. A failed search's
// bound goes to `proven`, never to the table. A child's candidate (`search_kid`:
// the reward of a play or pass plus the child's value, or a drawn child's
// value) keeps the same contract for the window its parent gives it.
//
// Correctness. At the player's decision searched with (alpha, beta), child i
// is searched with (max(alpha, best so far), beta). Take j, the first child
// reaching the returned maximum v. If alpha < v < beta, child j was strictly
// inside its window, hence exact, and every other child is at most v, either
// exactly or as an upper bound at most its window's low end, itself at most
// v: so v == t. If v <= alpha, every child is bounded above by its result,
// at most v. If v >= beta, child j is a lower bound. The Expectimax target's
// decision mirrors this. At a node worth the uniform average of its children
// (a draw, or the M*(random) target's plays: Ballard's Star1), the children
// are summed in canonical order, as the unpruned search sums them; with every
// child known to lie in [lo_i, hi_i], child j's window (a_j, b_j) is such that
// the node's value with child j at a_j and every later child at its hi is at
// most alpha (and with child j at b_j and the later ones at their lo, at
// least beta). A child failing low (high) thus proves the node at most (at
// least) the value it gives with the later children at their hi (lo), which
// is returned; an exact child joins the sum. A single child (one legal play,
// a pass, or the deterministic M* target's pick) passes the window through,
// shifted by its reward.
//
// Floating point. Rounding is monotone: `x + y` and `x / n` (n > 0) never
// decrease when x or y grows. So a bound on a child bounds every value the
// unpruned code computes from it, in its own order of operations, which is
// kept. Windows shifted by a reward r (`shift_down`, `shift_up`) and Star1's
// windows (`widest`) are rounded outward until `r + bound`, or the node's
// value with the child at its bound, lands on the right side of the parent's
// bound, so no comparison is decided by a rounding error. Maxima, minima and
// picks are exact in any order, so decisions may reorder their children.
//
// Bounds. `hull` bounds a position's values from its children, `rough` (in
// `bounds`, with its proof) by formula. Both give integers L <= U (never
// -0.0) such that every value of the position, under any engine kind and any
// depth limit of at least one turn, lies in [L, U]. `hull` takes, over the
// children a node's value is made of, the range of reward + `rough` of the
// child (the reward alone when the play or pass ends the game or the depth
// limit cuts in), and `rough` of the position itself at a chance node; the
// bounds proven by failed searches narrow it further.
impl<'a, S: ValueStore> Pruned<'a, S> {
    /// A search under `kind` over a searcher's parts.
    pub(super) fn new(
        rules: &'a Rules,
        store: &'a mut S,
        nodes: &'a mut u64,
        state: &'a mut PruneState,
        kind: EngineKind,
    ) -> Pruned<'a, S> {
        Pruned {
            rules,
            store,
            nodes,
            state,
            kind,
        }
    }

    /// The value of `pos` with the full window: the value the unpruned search
    /// computes, bit for bit.
    pub(super) fn value(&mut self, pos: &Position, depth: u8) -> f64 {
        self.search_ab(pos, depth, f64::NEG_INFINITY, f64::INFINITY).0
    }

    /// The value under the window (the contract above), and whether it is exact.
    fn search_ab(&mut self, pos: &Position, depth: u8, alpha: f64, beta: f64) -> (f64, bool) {
        let key = Key::new(pos, self.kind, depth);
        match self.store.get(&key) {
            Some(v) => (v, true),
            None => self.search_miss(pos, key, depth, alpha, beta, None),
        }
    }

    /// [`Self::search_ab`] of a position the table does not hold, whose
    /// bounds may be known already.
    fn search_miss(
        &mut self,
        pos: &Position,
        key: Key,
        depth: u8,
        alpha: f64,
        beta: f64,
        known: Option<(f64, f64)>,
    ) -> (f64, bool) {
        let mut kids = self.state.kids.pop().unwrap_or_default();
        let node = self.children(pos, depth, &mut kids);
        let (lo, hi) = match known {
            Some(b) => b,
            None => {
                let (mut lo, mut hi) = self.hull(pos, node, &kids);
                if let Some(&(l, h)) = self.state.proven.get(&key) {
                    lo = lo.max(l);
                    hi = hi.min(h);
                }
                (lo, hi)
            }
        };
        let result = if lo == hi {
            // Pinned: t is this very float (bounds are never -0.0).
            (lo, true)
        } else if hi <= alpha {
            (hi, false)
        } else if lo >= beta {
            (lo, false)
        } else {
            *self.nodes += 1;
            let (v, exact) = self.expand_ab(node, &mut kids, alpha, beta);
            let exact = exact || (alpha < v && v < beta);
            debug_assert!(
                !exact || (lo <= v && v <= hi),
                "{pos:?}: {v} outside its bounds [{lo}, {hi}]"
            );
            if exact {
                self.store.insert(key, v);
            } else {
                if self.state.proven.len() >= DEFAULT_TABLE_CAP {
                    self.state.proven.clear();
                }
                let e = self
                    .state
                    .proven
                    .entry(key)
                    .or_insert((f64::NEG_INFINITY, f64::INFINITY));
                if v <= alpha {
                    e.1 = e.1.min(v);
                } else {
                    e.0 = e.0.max(v);
                }
            }
            (v, exact)
        };
        self.state.kids.push(kids);
        result
    }

    /// The children of `pos` into `kids` (positions and rewards only), and
    /// what kind of node it is.
    fn children(&self, pos: &Position, depth: u8, kids: &mut Vec<Kid>) -> Node {
        kids.clear();
        let mut list = ActionList::default();
        pos.actions(self.rules, &mut list);
        let acts = list.as_slice();
        if acts.is_empty() {
            if pos.boneyard != 0 {
                for t in bits(pos.boneyard) {
                    let mut c = *pos;
                    c.draw(t);
                    kids.push(Kid::new(c, None, false, depth));
                }
                return Node::Average;
            }
            let mut c = *pos;
            let step = c.pass(self.rules);
            kids.push(Kid::new(
                c,
                Some(step.reward),
                step.terminal || depth == 1,
                next_depth(depth),
            ));
            return Node::Single;
        }
        let choice = match (pos.mover, self.kind) {
            (Seat::Target, EngineKind::MStar(model)) if model != TargetKind::Random && acts.len() > 1 => {
                target_choice(self.rules, model, pos, acts)
            }
            _ => None,
        };
        for (i, &a) in acts.iter().enumerate() {
            if choice.is_some_and(|c| c != i) {
                continue;
            }
            let mut c = *pos;
            let step = c.play(self.rules, a);
            kids.push(Kid::new(
                c,
                Some(step.reward),
                step.terminal || depth == 1,
                next_depth(depth),
            ));
        }
        match (kids.len(), pos.mover, self.kind) {
            (1, _, _) => Node::Single,
            (_, Seat::Player, _) => Node::Max,
            (_, Seat::Target, EngineKind::Expectimax) => Node::Min,
            // The M*(random) target: the uniform average of its plays.
            _ => Node::Average,
        }
    }

    /// Bounds on the value of `pos` (see above) from its children: the hull
    /// of their candidates' bounds by [`Self::rough`], and `rough` of `pos`
    /// itself at a chance node.
    fn hull(&self, pos: &Position, node: Node, kids: &[Kid]) -> (f64, f64) {
        if node == Node::Average && kids[0].reward.is_none() {
            return self.state.bounds.rough(self.rules, pos);
        }
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for k in kids {
            let (l, h) = if k.leaf {
                (0.0, 0.0)
            } else {
                self.state.bounds.rough(self.rules, &k.pos)
            };
            lo = lo.min(k.candidate(l));
            hi = hi.max(k.candidate(h));
        }
        (lo, hi)
    }

    /// Bounds on the value of a child not in the table (its `hull` and proven bounds).
    fn known(&mut self, kid: &Kid) -> (f64, f64) {
        let mut grandkids = self.state.kids.pop().unwrap_or_default();
        let node = self.children(&kid.pos, kid.depth, &mut grandkids);
        let (mut lo, mut hi) = self.hull(&kid.pos, node, &grandkids);
        self.state.kids.push(grandkids);
        if let Some(&(l, h)) = kid.key.and_then(|key| self.state.proven.get(&key)) {
            lo = lo.max(l);
            hi = hi.min(h);
        }
        (lo, hi)
    }

    /// Searches a node whose children `children` listed.
    fn expand_ab(&mut self, node: Node, kids: &mut [Kid], alpha: f64, beta: f64) -> (f64, bool) {
        if node == Node::Single {
            return self.search_kid(&kids[0], alpha, beta);
        }
        let bound = node == Node::Average && (alpha > f64::NEG_INFINITY || beta < f64::INFINITY);
        for k in kids.iter_mut() {
            if k.leaf {
                continue;
            }
            let key = Key::new(&k.pos, self.kind, k.depth);
            k.key = Some(key);
            if let Some(v) = self.store.get(&key) {
                (k.lo, k.hi) = (v, v);
            } else if bound {
                let (lo, hi) = self.known(k);
                (k.lo, k.hi, k.bounded) = (lo, hi, true);
            }
        }
        match node {
            Node::Max => self.max_ab(kids, alpha, beta),
            Node::Min => self.min_ab(kids, alpha, beta),
            _ => self.star_ab(kids, alpha, beta),
        }
    }

    /// Searches a child not known exactly: its candidate under the window.
    fn search_kid(&mut self, kid: &Kid, alpha: f64, beta: f64) -> (f64, bool) {
        if kid.leaf {
            return (kid.candidate(0.0), true);
        }
        let (a, b) = match kid.reward {
            None => (alpha, beta),
            Some(r) => (shift_down(alpha, r as f64), shift_up(beta, r as f64)),
        };
        let (v, exact) = match kid.key {
            _ if kid.exact() => (kid.lo, true),
            // The table was asked already.
            Some(key) => self.search_miss(&kid.pos, key, kid.depth, a, b, kid.bounded.then_some((kid.lo, kid.hi))),
            None => self.search_ab(&kid.pos, kid.depth, a, b),
        };
        (kid.candidate(v), exact)
    }

    /// Alpha-beta at the player's decision: children known exactly first,
    /// then the rest by immediate reward, highest first.
    fn max_ab(&mut self, kids: &[Kid], alpha: f64, beta: f64) -> (f64, bool) {
        let order = ordered(kids, |k| -k.reward.unwrap_or(0));
        let mut best = f64::NEG_INFINITY;
        let mut exact = true;
        for (n, &i) in (1..).zip(&order[..kids.len()]) {
            let k = &kids[i as usize];
            let (x, e) = if k.exact() {
                (k.candidate(k.lo), true)
            } else {
                self.search_kid(k, alpha.max(best), beta)
            };
            exact &= e;
            best = best.max(x);
            if best >= beta {
                return (best, exact && n == kids.len());
            }
        }
        (best, exact)
    }

    /// Alpha-beta at the Expectimax target's decision (lowest reward first).
    fn min_ab(&mut self, kids: &[Kid], alpha: f64, beta: f64) -> (f64, bool) {
        let order = ordered(kids, |k| k.reward.unwrap_or(0));
        let mut best = f64::INFINITY;
        let mut exact = true;
        for (n, &i) in (1..).zip(&order[..kids.len()]) {
            let k = &kids[i as usize];
            let (x, e) = if k.exact() {
                (k.candidate(k.lo), true)
            } else {
                self.search_kid(k, alpha, beta.min(best))
            };
            exact &= e;
            best = best.min(x);
            if best <= alpha {
                return (best, exact && n == kids.len());
            }
        }
        (best, exact)
    }

    /// Star1 at a node worth the uniform average of its children.
    fn star_ab(&mut self, kids: &[Kid], alpha: f64, beta: f64) -> (f64, bool) {
        let n = kids.len();
        let hi = |k: &Kid| k.candidate(k.hi);
        let lo = |k: &Kid| k.candidate(k.lo);
        let mut sum = 0.0;
        let mut exact = true;
        for j in 0..n {
            let k = &kids[j];
            if k.exact() {
                sum += k.candidate(k.lo);
                continue;
            }
            let rest = &kids[j + 1..];
            let a = if alpha == f64::NEG_INFINITY {
                alpha
            } else {
                let top = fill(sum, hi(k), rest, hi, n);
                if top <= alpha {
                    return (top, false);
                }
                let guess = alpha * n as f64 - sum - rest.iter().map(hi).sum::<f64>();
                widest(guess, f64::NEG_INFINITY, |a| fill(sum, a, rest, hi, n) <= alpha)
            };
            let b = if beta == f64::INFINITY {
                beta
            } else {
                let bottom = fill(sum, lo(k), rest, lo, n);
                if bottom >= beta {
                    return (bottom, false);
                }
                let guess = beta * n as f64 - sum - rest.iter().map(lo).sum::<f64>();
                widest(guess, f64::INFINITY, |b| fill(sum, b, rest, lo, n) >= beta)
            };
            let (x, e) = self.search_kid(k, a, b);
            exact &= e;
            if !e && x <= a {
                // The child is at most x: the node at most fill(x) <= fill(a) <= alpha.
                return (fill(sum, x, rest, hi, n), false);
            }
            if !e && x >= b {
                return (fill(sum, x, rest, lo, n), false);
            }
            sum += x;
        }
        (sum / n as f64, exact)
    }
}
