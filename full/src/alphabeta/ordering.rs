//! Move ordering at the search's max and min nodes: the table's best move
//! first, then plays that score by the points they make, then the history
//! heuristic (cut-offs by tile and location), then canonical order.

use engine::{Action, Loc};

use crate::fives::FivesPosition;
use crate::rules::FullRules;

/// The history heuristic: per tile and location, the cut-offs its plays
/// caused, each weighing its depth squared.
#[derive(Clone, Debug)]
pub(super) struct History([u32; 256]);

impl History {
    /// No cut-offs yet.
    pub(super) fn new() -> History {
        History([0; 256])
    }

    /// Forgets every cut-off.
    pub(super) fn clear(&mut self) {
        self.0 = [0; 256];
    }

    /// Credits `a` with a cut-off at a node with `depth` left.
    pub(super) fn cut(&mut self, a: Action, depth: u8) {
        let h = &mut self.0[history_index(a.tile, a.loc)];
        *h = h.saturating_add(depth as u32 * depth as u32);
    }

    /// The order in which to search the plays `acts` at `pos`: with
    /// `prune`, the table's move `tt_best` first, then by points scored,
    /// then by history; ties (and every play without `prune`) in canonical
    /// order.
    pub(super) fn order(
        &self,
        rules: &FullRules,
        pos: &FivesPosition,
        acts: &[Action],
        tt_best: u8,
        prune: bool,
    ) -> [u8; 64] {
        let n = acts.len();
        let mut order = [0u8; 64];
        for (i, o) in order[..n].iter_mut().enumerate() {
            *o = i as u8;
        }
        if !prune {
            return order;
        }
        let mut keys = [0u64; 64];
        for i in 0..n {
            keys[i] = if i as u8 == tt_best {
                u64::MAX
            } else {
                let a = acts[i];
                // The count the play leaves, without playing it on a copy.
                let c = if pos.board.is_empty() {
                    let (p, q) = rules.pips(a.tile);
                    (p + q) as u64
                } else {
                    pos.board.count_after(rules, a.tile, a.loc) as u64
                };
                let points = if c > 0 && c.is_multiple_of(5) { c } else { 0 };
                points << 32 | self.0[history_index(a.tile, a.loc)] as u64
            };
        }
        // Insertion sort, stable: equal keys keep canonical order.
        for i in 1..n {
            let mut j = i;
            while j > 0 && keys[order[j - 1] as usize] < keys[order[j] as usize] {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
        order
    }
}

#[inline]
fn history_index(tile: u8, loc: Loc) -> usize {
    (tile as usize * 4 + loc as usize) & 255
}
