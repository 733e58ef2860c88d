//! A hand of the full game in play: hands, open ends, whose turn; the legal
//! plays, playing one, and the returns when the hand is over.
//!
//! Block and team follow OpenSpiel's games exactly: the open ends are a
//! multiset of pips, an action names the tile and the pip it covers, a seat
//! with no play is skipped (there is no pass action), and the hand ends when
//! a hand empties or nobody can play.

use engine::{TileSet, bit, bits};

use super::rules::{FullRules, MAX_SEATS};

/// Covered pip of the opening play (the board was empty).
pub const OPENING: u8 = u8::MAX;

/// One play: a tile and the pip of the open end it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FullAction {
    /// The tile's index in the set's canonical order.
    pub tile: u8,
    /// The pip of the end it covers, or [`OPENING`] on an empty board.
    pub cover: u8,
}

/// The legal plays of one position, in ascending OpenSpiel id order.
#[derive(Clone, Copy, Debug)]
pub struct FullActions {
    len: u8,
    items: [FullAction; 128],
}

impl Default for FullActions {
    fn default() -> Self {
        FullActions {
            len: 0,
            items: [FullAction { tile: 0, cover: 0 }; 128],
        }
    }
}

impl FullActions {
    /// The plays.
    pub fn as_slice(&self) -> &[FullAction] {
        &self.items[..self.len as usize]
    }
    /// How many.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    fn push(&mut self, a: FullAction) {
        self.items[self.len as usize] = a;
        self.len += 1;
    }
}

/// Why a hand ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HandEnd {
    /// This seat played its last tile.
    Domino(u8),
    /// No seat could play.
    Blocked,
}

/// A position of one hand. `Copy`, fixed size, no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FullPosition {
    /// Each seat's tiles (seats beyond the table's are empty).
    pub hands: [TileSet; MAX_SEATS],
    /// Tiles dealt to nobody.
    pub boneyard: TileSet,
    /// The pips of the open ends, `ends[..open]` (none before the opening).
    pub ends: [u8; 4],
    /// How many ends are open.
    pub open: u8,
    /// The seat to play.
    pub mover: u8,
    /// Plays made so far.
    pub plays: u8,
    /// Set once the hand is over.
    pub end: Option<HandEnd>,
}

impl FullPosition {
    /// The position after a deal: `hands[s]` is seat `s`'s hand; seat 0 opens.
    pub fn deal(rules: &FullRules, hands: [TileSet; MAX_SEATS]) -> FullPosition {
        let dealt = hands.iter().fold(0, |a, h| a | h);
        FullPosition {
            hands,
            boneyard: rules.all_tiles() & !dealt,
            ends: [0; 4],
            open: 0,
            mover: 0,
            plays: 0,
            end: None,
        }
    }

    /// The tiles that would match an open end (every tile before the opening).
    #[inline]
    fn playable(&self, rules: &FullRules) -> TileSet {
        if self.open == 0 {
            return u64::MAX;
        }
        let mut m = 0;
        for &e in &self.ends[..self.open as usize] {
            m |= rules.pip_mask(e);
        }
        m
    }

    /// Whether seat `seat` has a legal play.
    #[inline]
    pub fn can_play(&self, rules: &FullRules, seat: u8) -> bool {
        self.hands[seat as usize] & self.playable(rules) != 0
    }

    #[inline]
    fn is_open(&self, pip: u8) -> bool {
        self.ends[..self.open as usize].contains(&pip)
    }

    /// The mover's legal plays, in ascending OpenSpiel id order (tile, then
    /// the low pip before the high pip). Empty once the hand is over.
    pub fn actions(&self, rules: &FullRules, out: &mut FullActions) {
        out.len = 0;
        if self.end.is_some() {
            return;
        }
        let hand = self.hands[self.mover as usize] & self.playable(rules);
        for t in bits(hand) {
            if self.open == 0 {
                out.push(FullAction {
                    tile: t,
                    cover: OPENING,
                });
                continue;
            }
            let (a, b) = rules.pips(t);
            if self.is_open(a) {
                out.push(FullAction { tile: t, cover: a });
            }
            if a != b && self.is_open(b) {
                out.push(FullAction { tile: t, cover: b });
            }
        }
    }

    /// How many legal plays the mover has (what [`actions`](Self::actions)
    /// would list), without listing them.
    #[inline]
    pub fn action_count(&self, rules: &FullRules) -> u32 {
        if self.end.is_some() {
            return 0;
        }
        let hand = self.hands[self.mover as usize];
        if self.open == 0 {
            return hand.count_ones();
        }
        let mut n = 0;
        for &e in distinct(&self.ends[..self.open as usize]).as_slice() {
            n += (hand & rules.pip_mask(e)).count_ones();
        }
        // A non-double tile matching two distinct open pips is two plays and
        // was counted once per pip, as it should be; a double was counted once.
        n
    }

    /// Whether `a` is one of the mover's legal plays.
    pub fn is_legal(&self, rules: &FullRules, a: FullAction) -> bool {
        if self.end.is_some() || a.tile >= rules.tile_count() {
            return false;
        }
        if self.hands[self.mover as usize] & bit(a.tile) == 0 {
            return false;
        }
        let (p, q) = rules.pips(a.tile);
        if self.open == 0 {
            return a.cover == OPENING;
        }
        (a.cover == p || a.cover == q) && self.is_open(a.cover)
    }

    /// Makes a legal play (checked only in debug builds) and passes the turn
    /// to the next seat that can play, ending the hand when the mover
    /// emptied its hand or nobody can play.
    pub fn play(&mut self, rules: &FullRules, a: FullAction) {
        debug_assert!(self.is_legal(rules, a), "{a:?} is not legal in {self:?}");
        let me = self.mover;
        self.hands[me as usize] &= !bit(a.tile);
        let (p, q) = rules.pips(a.tile);
        if self.open == 0 {
            self.ends[0] = p;
            self.ends[1] = q;
            self.open = 2;
        } else {
            let i = self.ends[..self.open as usize]
                .iter()
                .position(|&e| e == a.cover)
                .expect("the covered pip is open");
            self.ends[i] = if p == a.cover { q } else { p };
        }
        self.plays += 1;
        if self.hands[me as usize] == 0 {
            self.end = Some(HandEnd::Domino(me));
            return;
        }
        let seats = rules.seats();
        for i in 1..=seats {
            let next = (me + i) % seats;
            if self.can_play(rules, next) {
                self.mover = next;
                return;
            }
        }
        self.end = Some(HandEnd::Blocked);
    }

    /// Pips left in each side's hands.
    pub fn side_pips(&self, rules: &FullRules) -> [u32; MAX_SEATS] {
        let mut out = [0; MAX_SEATS];
        for s in 0..rules.seats() {
            out[rules.side(s) as usize] += rules.pip_total(self.hands[s as usize]);
        }
        out
    }

    /// Each seat's return once the hand is over (zeros before), as OpenSpiel
    /// scores block and team: with two sides, the side with fewer pips left
    /// gets the other side's total and the other side loses it; equal
    /// totals give 0. (A seat that dominoes can lose in `team`: its
    /// partner's pips count for it.) With 3 or 4 sides, the side with fewest
    /// pips alone gets the others' total, each of which loses its own.
    pub fn returns(&self, rules: &FullRules) -> [i32; MAX_SEATS] {
        if self.end.is_none() {
            return [0; MAX_SEATS];
        }
        self.pip_returns(rules)
    }

    /// The returns [`returns`](Self::returns) would give if the hand ended
    /// now (the search's evaluation at its horizon).
    pub fn pip_returns(&self, rules: &FullRules) -> [i32; MAX_SEATS] {
        let mut out = [0; MAX_SEATS];
        let pips = self.side_pips(rules);
        let sides = rules.sides() as usize;
        let low = *pips[..sides].iter().min().expect("two sides at least");
        let mut lows = 0;
        let mut w = 0;
        for (s, &p) in pips[..sides].iter().enumerate() {
            if p == low {
                lows += 1;
                w = s;
            }
        }
        if lows != 1 {
            return out;
        }
        let mut side_return = [0i32; MAX_SEATS];
        for s in 0..sides {
            if s != w {
                side_return[s] = -(pips[s] as i32);
                side_return[w] += pips[s] as i32;
            }
        }
        for seat in 0..rules.seats() {
            out[seat as usize] = side_return[rules.side(seat) as usize];
        }
        out
    }
}

/// The distinct values of a few pips, in first-seen order.
#[inline]
fn distinct(pips: &[u8]) -> Distinct {
    let mut d = Distinct { len: 0, items: [0; 4] };
    for &p in pips {
        if !d.items[..d.len].contains(&p) {
            d.items[d.len] = p;
            d.len += 1;
        }
    }
    d
}

struct Distinct {
    len: usize,
    items: [u8; 4],
}

impl Distinct {
    fn as_slice(&self) -> &[u8] {
        &self.items[..self.len]
    }
}

/// Tiles of `set` in ascending order (for callers outside the crate).
pub fn tiles_of(set: TileSet) -> impl Iterator<Item = u8> {
    bits(set)
}
