//! The leaves below a draw one ply above the horizon (see [`DrawLeaves`]):
//! their features from what each draw changes, and their values four at a
//! time, each summed in [`LinearEval::predict`]'s order.

use engine::TileSet;

use super::eval::{
    EVAL_LIMIT, Evaluation, FEATURE_COUNT, LinearEval, SeatCounts, assemble, end_tiles, seat_counts, theirs_divisor,
};
use super::fives::FivesPosition;
use super::rules::{FullRules, MAX_SEATS};

/// Leaves valued together by [`DrawLeaves::values`].
const LANES: usize = 4;

/// The leaves of a draw under an [`Evaluation`] (here, not in `eval.rs`, so
/// that the evaluation does not depend on its draws).
impl Evaluation<'_> {
    /// What [`Self::draw_leaf_values`] keeps of `pos`, whose mover draws,
    /// for `side` (`None` for score-so-far leaves, which need nothing kept).
    #[inline]
    pub fn draw_leaves(&self, rules: &FullRules, pos: &FivesPosition, side: u8) -> Option<DrawLeaves> {
        match self {
            Evaluation::Score => None,
            Evaluation::Learned(_) => Some(DrawLeaves::new(rules, pos, side)),
        }
    }

    /// What a leaf adds after the mover of `leaves` (from
    /// [`Self::draw_leaves`]) draws each of `tiles`, into `out` (as long):
    /// the same as [`Self::leaf`] of each position drawn into, for the
    /// side `leaves` was kept for, bit for bit.
    /// The values are summed four at a time, each in [`LinearEval::predict`]'s
    /// order: the sums are independent, so they overlap instead of each
    /// waiting on its own chain of additions.
    #[inline]
    pub fn draw_leaf_values(&self, rules: &FullRules, leaves: &Option<DrawLeaves>, tiles: &[u8], out: &mut [f64]) {
        match self {
            Evaluation::Score => out.fill(0.0),
            Evaluation::Learned(e) => {
                let l = leaves.as_ref().expect("kept by draw_leaves for a learned evaluation");
                l.values(e, rules, tiles, out);
            }
        }
    }
}

/// The leaves below a draw, from one side's point of view: what
/// [`features`](crate::features) reads of the position where the mover must
/// draw, kept once, so that each tile's draw is valued from what it changes
/// (the mover's counts and the boneyard's) instead of from the whole
/// position again. The board, and so the open ends, the count and the
/// scoring tiles, is the same in every child, and so are the other sides'
/// features: a child's features are those kept with the mover's side's six
/// counts written in, and its value's terms are those kept but six. The
/// values are `features`' and `predict`'s bit for bit (tested).
#[derive(Clone, Copy, Debug)]
pub struct DrawLeaves {
    /// The features of every child, the mover's side's counts aside.
    kept: [f64; FEATURE_COUNT],
    /// Where the mover's side's six counts stand among the features.
    at: [u8; 6],
    /// The counts of the mover's side's other seats.
    rest: [u32; 6],
    /// The mover's counts before the draw.
    before: [u32; 6],
    /// What the other sides' counts are divided by (per seat of ours),
    /// when the mover is on one of them and that divides.
    divide: Option<f64>,
    matching: TileSet,
    scoring: TileSet,
}

/// Where `assemble` puts `side`'s counts, and the other sides'.
const MINE_AT: [u8; 6] = [1, 3, 7, 9, 12, 14];
const THEIRS_AT: [u8; 6] = [2, 4, 8, 10, 13, 15];

impl SeatCounts for &[[u32; 6]; MAX_SEATS] {
    #[inline(always)]
    fn of(&self, s: u8) -> [u32; 6] {
        self[s as usize]
    }
}

impl DrawLeaves {
    /// The leaves below `pos`, whose mover draws, from `side`'s point of view.
    #[inline]
    pub fn new(rules: &FullRules, pos: &FivesPosition, side: u8) -> DrawLeaves {
        let (count, matching, scoring) = end_tiles(rules, &pos.board);
        let mut seats = [[0; 6]; MAX_SEATS];
        for s in 0..rules.seats() {
            seats[s as usize] = seat_counts(rules, pos.hands[s as usize], matching, scoring);
        }
        let boneyard = rules.tally(pos.boneyard).tiles;
        // Every child has one tile fewer in the boneyard.
        let kept = assemble(rules, count, pos.mover, boneyard - 1, side, &seats);
        let mover_mine = rules.side(pos.mover) == side;
        let (mut rest, mut mine_seats) = ([0u32; 6], 0);
        for s in 0..rules.seats() {
            let mine = rules.side(s) == side;
            mine_seats += mine as u32;
            if s != pos.mover && mine == mover_mine {
                for k in 0..6 {
                    rest[k] += seats[s as usize][k];
                }
            }
        }
        // As `assemble` divides the other sides' counts.
        let divide = theirs_divisor(rules.seats() as u32 - mine_seats, mine_seats).filter(|_| !mover_mine);
        DrawLeaves {
            kept,
            at: if mover_mine { MINE_AT } else { THEIRS_AT },
            rest,
            before: seats[pos.mover as usize],
            divide,
            matching,
            scoring,
        }
    }

    /// [`crate::Evaluation::leaf`] under `eval` of the position drawn into
    /// once the mover draws each of `tiles`, into `out` (as long).
    #[inline(always)]
    pub(super) fn values(&self, eval: &LinearEval, rules: &FullRules, tiles: &[u8], out: &mut [f64]) {
        // One loop for each way of making a count a feature, so that no
        // division is made where none is due.
        match self.divide {
            None => self.values_as(eval, rules, tiles, out, |x| x as f64),
            Some(n) => self.values_as(eval, rules, tiles, out, |x| x as f64 / n),
        }
    }

    /// [`Self::values`], the mover's side's counts made features by `feature`.
    #[inline(always)]
    fn values_as(
        &self,
        eval: &LinearEval,
        rules: &FullRules,
        tiles: &[u8],
        out: &mut [f64],
        feature: impl Fn(u32) -> f64,
    ) {
        let w: &[f64; FEATURE_COUNT] = eval.weights[..FEATURE_COUNT].try_into().expect("checked when loaded");
        // The terms of the sum the children share, each rounded as
        // `predict` rounds it (no fused multiply-add in Rust).
        let kept: [f64; FEATURE_COUNT] = std::array::from_fn(|k| w[k] * self.kept[k]);
        for (ts, vs) in tiles.chunks(LANES).zip(out.chunks_mut(LANES)) {
            // Lanes beyond the tiles sum the kept terms, unread.
            let mut terms = [kept; LANES];
            for (lane, &t) in terms.iter_mut().zip(ts) {
                let x = self.counts(rules, t);
                for j in 0..6 {
                    let k = self.at[j] as usize;
                    lane[k] = w[k] * feature(x[j]);
                }
            }
            let v = sum_lanes(&terms);
            vs.copy_from_slice(&v[..vs.len()]);
        }
    }

    /// The features once the mover has drawn `tile` (a boneyard tile):
    /// [`features`](crate::features) of that position.
    pub fn features(&self, rules: &FullRules, tile: u8) -> [f64; FEATURE_COUNT] {
        let mut f = self.kept;
        for (&k, x) in self.at.iter().zip(self.counts(rules, tile)) {
            // As `assemble` makes the other sides' counts features.
            f[k as usize] = match self.divide {
                Some(n) => x as f64 / n,
                None => x as f64,
            };
        }
        f
    }

    /// The mover's side's six counts once the mover has drawn `tile`
    /// (the features at [`Self::features`]'s places `at`, before they are
    /// made floats): the integer sums, as `assemble` sums a side's seats.
    #[inline(always)]
    fn counts(&self, rules: &FullRules, tile: u8) -> [u32; 6] {
        let t = engine::bit(tile);
        let one = rules.tally(t);
        let before = self.before;
        let drawn = [
            before[0] + one.pips,
            before[1] + one.tiles,
            before[2] + (self.scoring & t != 0) as u32,
            before[3] + (self.matching & t != 0) as u32,
            before[4] + one.doubles,
            before[5] & (self.matching & t == 0) as u32,
        ];
        std::array::from_fn(|k| self.rest[k] + drawn[k])
    }
}

/// [`LinearEval::predict`] of each row of products `terms` (a weight times
/// its feature each): the same additions in the same order for each row,
/// so the same bits, the rows' chains of additions side by side.
#[inline(always)]
fn sum_lanes(terms: &[[f64; FEATURE_COUNT]; LANES]) -> [f64; LANES] {
    let mut v = [0.0; LANES];
    for k in 0..FEATURE_COUNT {
        for l in 0..LANES {
            v[l] += terms[l][k];
        }
    }
    v.map(|x| x.clamp(-EVAL_LIMIT, EVAL_LIMIT))
}
