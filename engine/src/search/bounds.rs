//! Bounds by formula on every value of a position, for the pruned search:
//! [`Bounds`] holds the per-tile tables they are computed from, and
//! [`Bounds::rough`] the bounds themselves, proven below.

use crate::board::Loc;
use crate::position::{Action, Position};
use crate::rules::{Blocked, MAX_SET, Rules};
use crate::tiles::{TileSet, bit, bits};

/// Per-tile tables of the rules that [`Bounds::rough`] reads.
#[derive(Debug)]
pub(super) struct Bounds {
    /// Per tile: the most it can add to the count as the outermost tile of an
    /// end once the board holds a tile (2p for the double (p|p), else its
    /// high pip).
    end_value: [u8; 64],
    /// Per tile: its pip sum (what it adds to the count as the lead, and to a
    /// hand's pips).
    lead_value: [u8; 64],
    /// Per tile: its two pips as a bit mask over pips.
    pip_mask: [u32; 64],
    /// Per set of pips (a bit mask): the tiles showing any of them.
    reach: Box<[TileSet]>,
    /// The double (p|p) of each pip, as a tile set of one.
    double_of: [TileSet; MAX_SET as usize + 1],
}

impl Bounds {
    /// The tables of `rules`.
    pub(super) fn new(rules: &Rules) -> Bounds {
        let mut end_value = [0u8; 64];
        let mut lead_value = [0u8; 64];
        let mut pip_mask = [0u32; 64];
        let mut double_of = [0; MAX_SET as usize + 1];
        for t in 0..rules.tile_count() {
            let (a, b) = rules.pips(t);
            end_value[t as usize] = if a == b { 2 * a } else { b };
            lead_value[t as usize] = a + b;
            pip_mask[t as usize] = 1 << a | 1 << b;
            if a == b {
                double_of[a as usize] = bit(t);
            }
        }
        let pips = rules.config().set as usize + 1;
        let reach = (0..1usize << pips)
            .map(|mask| {
                (0..pips as u8)
                    .filter(|&p| mask & 1 << p != 0)
                    .fold(0, |acc, p| acc | rules.with_pip(p))
            })
            .collect();
        Bounds {
            end_value,
            lead_value,
            pip_mask,
            reach,
            double_of,
        }
    }
}

// Bounds by formula. `rough` gives integers L <= U (never -0.0) such that
// every value of the position, under any engine kind and any depth limit of
// at least one turn, lies in [L, U]: it bounds the reward sum of every
// prefix of every continuation (a depth-limited leaf is worth 0, so 0 is
// inside); a value is a max, min, pick or average of such sums, and so lies
// inside as a float too: adding an integer reward to a value in [L', U']
// stays in [r + L', r + U'] (exact integers, monotone rounding), maxima,
// minima and picks stay inside, and an average of k floats in [L, U] stays
// inside (its partial sums are bounded by the exact integers j * L and
// j * U). Rewards:
// - Count points, to the mover of a play: 0, or the count after the play
//   when it is a positive multiple of 5. A tile is live when it may still be
//   played: it shows a pip exposed now, or a pip of another live tile (a
//   closure from the exposed pips; every tile, on an empty board). Dead tiles
//   stay in a hand, or are drawn into one, to the end. At most n plays are
//   left, n the number of live tiles, and a seat makes at most as many as
//   the live tiles of its hand and of the boneyard. The count is the sum of
//   at most four ends (Left, Right, and Up and Down once played on). At any
//   later time, an end is either unchanged since now, worth what it is worth
//   now (2p if its outermost tile is the double (p|p), else p; so at most p
//   while (p|p) is still in a hand or the boneyard, at most 2p otherwise), or
//   its outermost tile is a live tile played since, worth at most 2p for
//   (p|p) and its high pip otherwise (on an empty board, its pip sum: the
//   lead counts both halves alone, then its two sides, worth that together).
//   Distinct ends have distinct outermost tiles, so the count never exceeds
//   C, the sum of the four largest of these items. Besides, after k more
//   plays at most min(k, 4) ends have changed, each from at least its least
//   value now (Left and Right: their exposed pip, or 2p each for the sides
//   of a lone double, whose count is then taken as 4p since each side counts
//   2p once the other is covered; Up and Down: 0) to at most the value of a
//   distinct live tile: the count after the k-th play is at most the count
//   now plus the best sum over j <= min(k, 4) of (j-th largest live tile
//   value - j-th least end value). The cap of the k-th play is the lesser of
//   the two, rounded down to a multiple of 5. Caps grow with k, so a seat
//   with m plays left scores at most the caps of plays n - m + 1 ..= n.
// - The end of the game, at most once. A domino by the player adds the pips
//   of the target's last hand, at most those of the target's hand and the
//   boneyard, and is impossible while the player holds a dead tile; a domino
//   by the target mirrors this. A blocked game under `difference` gives the
//   target's pips minus the player's, at most pips(target hand + boneyard)
//   minus the player's dead pips (it keeps its dead tiles) and at least the
//   target's dead pips minus pips(player hand + boneyard); under `none`, 0.
//   A game cut off by the depth limit gives 0.
// So U = (the player's most count points) + max(0, its best ending), L =
// -(the target's most count points) + min(0, its worst ending). When the
// mover holds a single tile it can play, it must play it and the game ends
// there: [L, U] is the range of that play's rewards instead.
impl Bounds {
    /// Bounds on every value of `pos`, any depth, by formula (see above).
    pub(super) fn rough(&self, rules: &Rules, pos: &Position) -> (f64, f64) {
        let [player, target] = pos.hands;
        let rest = player | target | pos.boneyard;
        let board = &pos.board;
        let mover = pos.hands[pos.mover as usize];
        if mover.count_ones() == 1 && !board.is_empty() {
            // A single tile the mover can play ends the game now.
            let tile = mover.trailing_zeros() as u8;
            let (a, b) = rules.pips(tile);
            let (mut lo, mut hi) = (i32::MAX, i32::MIN);
            for &loc in &Loc::ALL[..board.open_locations()] {
                let p = board.exposed(loc).unwrap_or(0);
                if p == a || p == b {
                    let mut c = *pos;
                    let r = c.play(rules, Action { tile, loc }).reward;
                    lo = lo.min(r);
                    hi = hi.max(r);
                }
            }
            if lo <= hi {
                return (lo as f64, hi as f64);
            }
        }
        let live = if board.is_empty() {
            rest
        } else {
            let mut pips = 0u32;
            for &loc in &Loc::ALL[..board.open_locations()] {
                pips |= 1 << board.exposed(loc).unwrap_or(0);
            }
            let mut live = 0;
            loop {
                let reach = self.reach[pips as usize] & rest;
                if reach == live {
                    break live;
                }
                for t in bits(reach & !live) {
                    pips |= self.pip_mask[t as usize];
                }
                live = reach;
            }
        };
        // The four largest items, and the four largest live tile values.
        let mut items = [0u32; 4];
        let mut tiles = [0u32; 4];
        if board.is_empty() {
            for t in bits(live) {
                push_top(&mut items, self.lead_value[t as usize] as u32);
            }
        } else {
            for t in bits(live) {
                let v = self.end_value[t as usize] as u32;
                push_top(&mut items, v);
                push_top(&mut tiles, v);
            }
            for &loc in &Loc::ALL[..board.open_locations()] {
                let p = board.exposed(loc).unwrap_or(0) as u32;
                let double_played = self.double_of[p as usize] & rest == 0;
                push_top(&mut items, if double_played { 2 * p } else { p });
            }
        }
        let items: u32 = items.iter().sum();
        // cap[k]: the count after the (k + 1)-th play from now is at most this.
        let mut cap = [items; 4];
        if !board.is_empty() {
            let l = board.exposed(Loc::Left).unwrap_or(0) as i32;
            let r = board.exposed(Loc::Right).unwrap_or(0) as i32;
            let (now, least_l, least_r) = match board.tile_count() {
                1 if l == r => (4 * l, 2 * l, 2 * l),
                1 => (l + r, l, r),
                _ => (board.count() as i32, l, r),
            };
            let least = [0, 0, least_l.min(least_r), least_l.max(least_r)];
            let (mut sum, mut best) = (now, now);
            for k in 0..4 {
                sum += tiles[k] as i32 - least[k];
                best = best.max(sum);
                cap[k] = cap[k].min(best as u32);
            }
        }
        let cap = cap.map(|c| (c / 5 * 5) as i32);
        let n = live.count_ones();
        let points = |seat: TileSet| -> i32 {
            let plays = ((seat | pos.boneyard) & live).count_ones();
            // The caps of plays n - plays + 1 ..= n; from the fourth on, cap[3].
            let first = n + 1 - plays;
            let early: i32 = (first..=n.min(3)).map(|k| cap[k as usize - 1]).sum();
            early + (n + 1).saturating_sub(first.max(4)) as i32 * cap[3]
        };
        let pips = |set: TileSet| -> i32 { bits(set).map(|t| self.lead_value[t as usize] as i32).sum() };
        let (pp, pt, pb) = (pips(player), pips(target), pips(pos.boneyard));
        let dead = rest & !live;
        let mut best_end = 0;
        let mut worst_end = 0;
        if player & dead == 0 {
            best_end = pt + pb;
        }
        if target & dead == 0 {
            worst_end = -(pp + pb);
        }
        if rules.config().blocked == Blocked::Difference {
            best_end = best_end.max(pt + pb - pips(player & dead));
            worst_end = worst_end.min(pips(target & dead) - (pp + pb));
        }
        let up = points(player) + best_end;
        let down = points(target) - worst_end;
        // 0.0 - down, not -down: never -0.0.
        (0.0 - down as f64, up as f64)
    }
}

/// Keeps the four largest values seen in `top`, largest first.
#[inline]
fn push_top(top: &mut [u32; 4], v: u32) {
    if v > top[3] {
        let mut i = 3;
        while i > 0 && top[i - 1] < v {
            top[i] = top[i - 1];
            i -= 1;
        }
        top[i] = v;
    }
}
