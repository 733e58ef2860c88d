//! The chance nodes of [`AlphaBeta`]'s search: a draw (each boneyard tile
//! equally likely; one ply above the horizon its children are valued from
//! what the draw changes, `draw_leaves.rs`'s `DrawLeaves`) and Ballard's Star1,
//! over equally likely children and over weighted ones (the shaped
//! opponents' nodes).

use engine::bits;

use crate::fives::FivesPosition;
use crate::table::{Bound, position_key};

use super::search::AlphaBeta;

impl AlphaBeta<'_> {
    /// Star1 over children of probabilities `weights` (summing to 1): child
    /// `j` (made by `make`) is worth `rs[j]` plus its gain with `depths[j]`
    /// left. Fail-soft like [`Self::search`].
    pub(super) fn weighted_star1(
        &mut self,
        rs: &[f64],
        weights: &[f64],
        depths: &[u8],
        alpha: f64,
        beta: f64,
        make: impl Fn(usize) -> FivesPosition,
    ) -> f64 {
        let b = self.bound(depths.iter().copied().max().unwrap_or(0));
        let mut hi_rest: f64 = rs.iter().zip(weights).map(|(r, w)| w * (r + b)).sum();
        let mut lo_rest: f64 = rs.iter().zip(weights).map(|(r, w)| w * (r - b)).sum();
        let mut sum = 0.0;
        for (j, (&r, &w)) in rs.iter().zip(weights).enumerate() {
            hi_rest -= w * (r + b);
            lo_rest -= w * (r - b);
            if w <= 0.0 {
                continue;
            }
            // Child j must beat these for the expectation to stay inside the window.
            let (a_j, b_j) = if self.prune {
                ((alpha - sum - hi_rest) / w, (beta - sum - lo_rest) / w)
            } else {
                (f64::NEG_INFINITY, f64::INFINITY)
            };
            let (ca, cb) = if self.prune {
                (a_j.max(r - b), b_j.min(r + b))
            } else {
                (f64::NEG_INFINITY, f64::INFINITY)
            };
            let v = r + self.search(&make(j), depths[j], ca - r, cb - r);
            if self.progress.aborted {
                return 0.0;
            }
            if v <= a_j {
                return sum + w * v + hi_rest;
            }
            if v >= b_j {
                return sum + w * v + lo_rest;
            }
            sum += w * v;
        }
        sum
    }

    /// A draw: each boneyard tile equally likely. Kept out of
    /// [`Self::search`], so that its arrays are not in every node's frame.
    #[inline(never)]
    pub(super) fn draws(&mut self, pos: &FivesPosition, depth: u8, alpha: f64, beta: f64) -> f64 {
        let key = position_key(pos);
        if self.prune
            && let Some(e) = self.table.get(key)
            && e.depth == depth
        {
            match e.bound {
                Bound::Exact => return e.value,
                Bound::Lower if e.value >= beta => return e.value,
                Bound::Upper if e.value <= alpha => return e.value,
                _ => {}
            }
        }
        let mut tiles = [0u8; 64];
        let mut n = 0;
        for t in bits(pos.boneyard) {
            tiles[n] = t;
            n += 1;
        }
        // A draw scores nothing (a constant: no array filled a draw node).
        const NO_POINTS: [f64; 64] = [0.0; 64];
        let rs = &NO_POINTS;
        let v = if depth == 1 {
            // Every child is a leaf: valued from what its draw changes, all
            // of them before Star1 reads any (it reads 99% of them in the
            // bench's hands, a throwaway count), so that the sums overlap;
            // each counted as `search` would count it when read (a draw
            // never ends a hand).
            let leaves = self.eval.draw_leaves(self.rules, pos, self.side);
            let mut values = [0.0f64; 64];
            self.eval
                .draw_leaf_values(self.rules, &leaves, &tiles[..n], &mut values[..n]);
            self.star1(&rs[..n], 0, alpha, beta, |s, i, _, _| {
                s.at_horizon(false, |_| values[i])
            })
        } else {
            self.star1(&rs[..n], depth - 1, alpha, beta, |s, i, ca, cb| {
                let mut child = *pos;
                child.draw(tiles[i]);
                s.search(&child, depth - 1, ca, cb)
            })
        };
        if !self.progress.aborted {
            self.store(key, v, alpha, beta, depth, u8::MAX);
        }
        v
    }

    /// Star1 over equally likely children: child `i` is worth `rs[i]` plus
    /// its gain with `depth` left, which `gain(self, i, alpha, beta)`
    /// searches within the window given. Fail-soft like [`Self::search`].
    pub(super) fn star1(
        &mut self,
        rs: &[f64],
        depth: u8,
        alpha: f64,
        beta: f64,
        mut gain: impl FnMut(&mut Self, usize, f64, f64) -> f64,
    ) -> f64 {
        let n = rs.len() as f64;
        let b = self.bound(depth);
        let r_sum: f64 = rs.iter().sum();
        // Upper and lower bounds of the children not yet searched.
        let mut hi_rest = r_sum + n * b;
        let mut lo_rest = r_sum - n * b;
        let mut sum = 0.0;
        for (i, &r) in rs.iter().enumerate() {
            hi_rest -= r + b;
            lo_rest -= r - b;
            // Child i must beat these for the average to stay inside the window.
            let (a_i, b_i) = if self.prune {
                (n * alpha - sum - hi_rest, n * beta - sum - lo_rest)
            } else {
                (f64::NEG_INFINITY, f64::INFINITY)
            };
            let (ca, cb) = if self.prune {
                (a_i.max(r - b), b_i.min(r + b))
            } else {
                (f64::NEG_INFINITY, f64::INFINITY)
            };
            let v = r + gain(self, i, ca - r, cb - r);
            if self.progress.aborted {
                return 0.0;
            }
            if v <= a_i {
                return (sum + v + hi_rest) / n;
            }
            if v >= b_i {
                return (sum + v + lo_rest) / n;
            }
            sum += v;
        }
        sum / n
    }
}
