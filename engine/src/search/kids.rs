//! The children of a node under the pruned search ([`Kid`]), what the node
//! does with them ([`Node`]), and the float arithmetic of its windows: the
//! search order, the average node's value under bounds, and windows shifted
//! by a reward or widened as far as rounding allows.

use crate::position::Position;
use crate::table::Key;

/// What a node of the pruned search does with its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Node {
    /// One child: a single play, a pass, or the deterministic target's choice.
    Single,
    /// The player's decision.
    Max,
    /// The Expectimax target's decision.
    Min,
    /// The uniform average of the children: the draws of a chance node, or
    /// the plays of the M*(random) target.
    Average,
}

/// A child under the pruned search.
#[derive(Clone, Copy, Debug)]
pub(super) struct Kid {
    /// The child position.
    pub(super) pos: Position,
    /// Its table key, once the table was asked.
    pub(super) key: Option<Key>,
    /// The reward of the play or pass leading to it; `None` for a draw,
    /// whose candidate is the child's value itself.
    pub(super) reward: Option<i32>,
    /// Whether the game ends there or the depth limit cuts in: its value is 0.
    pub(super) leaf: bool,
    /// The child's remaining depth.
    pub(super) depth: u8,
    /// Bounds on the child's value (not yet the candidate); equal when it is
    /// known exactly.
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// Whether `lo` and `hi` were computed (else they are infinite, or exact).
    pub(super) bounded: bool,
}

impl Kid {
    /// A child not yet asked of the table: known exactly (0) when a leaf,
    /// unbounded otherwise.
    pub(super) fn new(pos: Position, reward: Option<i32>, leaf: bool, depth: u8) -> Kid {
        let (lo, hi) = if leaf {
            (0.0, 0.0)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        };
        Kid {
            pos,
            key: None,
            reward,
            leaf,
            depth,
            lo,
            hi,
            bounded: false,
        }
    }
    /// Whether the child's value is known exactly.
    #[inline]
    pub(super) fn exact(&self) -> bool {
        self.lo == self.hi
    }
    /// The candidate for a value `v` of the child, computed as the unpruned
    /// search does: the value itself after a draw, else reward + value.
    #[inline]
    pub(super) fn candidate(&self, v: f64) -> f64 {
        match self.reward {
            None => v,
            Some(r) => r as f64 + v,
        }
    }
}

/// The order in which to search `kids`: those known exactly first (they cost
/// nothing), then by `rank`; stable, so ties keep canonical order.
pub(super) fn ordered(kids: &[Kid], rank: impl Fn(&Kid) -> i32) -> [u8; 64] {
    let mut order = [0u8; 64];
    let key = |k: &Kid| (!k.exact(), rank(k));
    for i in 0..kids.len() {
        let mut j = i;
        while j > 0 && key(&kids[order[j - 1] as usize]) > key(&kids[i]) {
            order[j] = order[j - 1];
            j -= 1;
        }
        order[j] = i as u8;
    }
    order
}

/// An average node's value, computed as the unpruned search does, if the
/// next child's candidate were `x` and each later one `bound(kid)`: monotone
/// in every argument.
#[inline]
pub(super) fn fill(sum: f64, x: f64, rest: &[Kid], bound: impl Fn(&Kid) -> f64, n: usize) -> f64 {
    let mut s = sum + x;
    for k in rest {
        s += bound(k);
    }
    s / n as f64
}

/// From `guess`, the first value moving towards `give_up` (an infinity,
/// which `ok` accepts) one float at a time that `ok` accepts: guesses off by
/// a few roundings are corrected, and a wild one gives up on pruning.
pub(super) fn widest(guess: f64, give_up: f64, ok: impl Fn(f64) -> bool) -> f64 {
    let mut x = guess;
    for _ in 0..64 {
        if ok(x) {
            return x;
        }
        x = if give_up < 0.0 { x.next_down() } else { x.next_up() };
    }
    give_up
}

/// A child window bound c with `r + c <= a` in floats, as large as rounding allows.
#[inline]
pub(super) fn shift_down(a: f64, r: f64) -> f64 {
    if a.is_infinite() {
        return a;
    }
    let mut c = a - r;
    while r + c > a {
        c = c.next_down();
    }
    c
}

/// A child window bound c with `r + c >= b` in floats, as small as rounding allows.
#[inline]
pub(super) fn shift_up(b: f64, r: f64) -> f64 {
    if b.is_infinite() {
        return b;
    }
    let mut c = b - r;
    while r + c < b {
        c = c.next_up();
    }
    c
}
