//! Features of a candidate play, and the training decisions they are read
//! from.
//!
//! Two views of a play:
//! - [`PLAY_FEATURES`]: the mover's own view (its legal plays and its hand,
//!   the board; never another seat's hidden tiles). Read by the naive Bayes
//!   classifier and the logit. Under search, the mover's hand is the
//!   world's.
//! - [`PUBLIC_FEATURES`]: what anyone at the table sees of a play (the
//!   board after it, the tile), seed 003's "abstract features" of the board
//!   after a move. Read by the DBN, whose evidence is the seat's past plays,
//!   seen from outside.

use serde::{Deserialize, Serialize};

use engine::bit;
use engine::{Action, ActionList};
use engine::{Board, Loc};

use super::super::fives::FivesPosition;
use super::super::rules::FullRules;

/// The names of the mover's-view features of a play, in order: the first
/// [`BINARY_FEATURES`] are 0/1, the rest numbers.
pub const PLAY_FEATURES: [&str; 16] = [
    "scores",
    "scores_most",
    "count_highest",
    "count_lowest",
    "defense_most",
    "heaviest",
    "lightest",
    "double",
    "first",
    "first_spot",
    "keeps_suit",
    "opens_arm",
    "big_score",
    "points",
    "count",
    "pips",
];

/// Number of mover's-view features.
pub const PLAY_FEATURE_COUNT: usize = PLAY_FEATURES.len();

/// The 0/1 features lead [`PLAY_FEATURES`].
pub const BINARY_FEATURES: usize = 13;

/// The names of the public features of a play (each 0/1), bit `i` of a
/// [`PublicFeatures`] mask.
pub const PUBLIC_FEATURES: [&str; 9] = [
    "scores",
    "big_score",
    "double",
    "opens_arm",
    "count_10",
    "count_20",
    "defense_1",
    "defense_2",
    "heavy",
];

/// Number of public features.
pub const PUBLIC_FEATURE_COUNT: usize = PUBLIC_FEATURES.len();

/// A play's public features as a bit mask (bit `i`: [`PUBLIC_FEATURES`]`[i]`).
pub type PublicFeatures = u16;

/// The features of one candidate play.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlayFeatures {
    /// The mover's-view features ([`PLAY_FEATURES`]).
    pub x: [f64; PLAY_FEATURE_COUNT],
    /// The public features ([`PUBLIC_FEATURES`]).
    pub public: PublicFeatures,
}

/// Points a count scores: itself when a positive multiple of 5.
#[inline]
fn points(count: u32) -> u32 {
    if count > 0 && count.is_multiple_of(5) { count } else { 0 }
}

/// The public features of `action` played on `board` (before the play).
pub fn public_features(rules: &FullRules, board: &Board, action: Action) -> PublicFeatures {
    let mut after = *board;
    after.play(rules, action.tile, action.loc);
    public_after(rules, &after, action)
}

/// The public features of `action`, given the board `after` it.
fn public_after(rules: &FullRules, after: &Board, action: Action) -> PublicFeatures {
    let count = after.count();
    let p = points(count);
    let (a, b) = rules.pips(action.tile);
    let defense = after.defense();
    let bits = [
        p > 0,
        p >= 10,
        a == b,
        matches!(action.loc, Loc::Up | Loc::Down),
        count >= 10,
        count >= 20,
        defense >= 1,
        defense >= 2,
        (a + b) as u32 >= rules.set() as u32,
    ];
    bits.iter()
        .enumerate()
        .fold(0, |m, (i, &on)| if on { m | 1 << i } else { m })
}

/// The features of each of the mover's legal plays `acts` (canonical order)
/// at `pos`, into `out` (one per play).
pub fn play_features(rules: &FullRules, pos: &FivesPosition, acts: &[Action], out: &mut [PlayFeatures]) {
    let n = acts.len();
    let hand = pos.hands[pos.mover as usize];
    let set = rules.set().max(1) as f64;
    let mut counts = [0u32; 64];
    let mut pts = [0u32; 64];
    let mut defs = [0u32; 64];
    let mut pips = [0u32; 64];
    let mut keeps = [false; 64];
    let mut public = [0; 64];
    for (i, a) in acts.iter().enumerate() {
        let mut after = pos.board;
        after.play(rules, a.tile, a.loc);
        counts[i] = after.count();
        pts[i] = points(counts[i]);
        defs[i] = after.defense();
        let (x, y) = rules.pips(a.tile);
        pips[i] = (x + y) as u32;
        // The pip the play leaves at its location, and whether the mover
        // holds another tile of that suit.
        keeps[i] = after
            .exposed(a.loc)
            .is_some_and(|p| rules.pip_mask(p) & hand & !bit(a.tile) != 0);
        public[i] = public_after(rules, &after, *a);
    }
    let max_pts = pts[..n].iter().copied().max().unwrap_or(0);
    let max_count = counts[..n].iter().copied().max().unwrap_or(0);
    let min_count = counts[..n].iter().copied().min().unwrap_or(0);
    let max_def = defs[..n].iter().copied().max().unwrap_or(0);
    let max_pips = pips[..n].iter().copied().max().unwrap_or(0);
    let min_pips = pips[..n].iter().copied().min().unwrap_or(0);
    for (i, a) in acts.iter().enumerate() {
        let (x, y) = rules.pips(a.tile);
        let first_spot = i == 0 || acts[i - 1].tile != a.tile;
        let b = |v: bool| if v { 1.0 } else { 0.0 };
        out[i] = PlayFeatures {
            x: [
                b(pts[i] > 0),
                b(pts[i] > 0 && pts[i] == max_pts),
                b(counts[i] == max_count),
                b(counts[i] == min_count),
                b(defs[i] == max_def),
                b(pips[i] == max_pips),
                b(pips[i] == min_pips),
                b(x == y),
                b(i == 0),
                b(first_spot),
                b(keeps[i]),
                b(matches!(a.loc, Loc::Up | Loc::Down)),
                b(pts[i] >= 10),
                pts[i] as f64 / 5.0,
                counts[i] as f64 / 10.0,
                pips[i] as f64 / set,
            ],
            public: public[i],
        };
    }
}

/// One decision of a seat in a training or held-out hand.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The strategy index of the seat that decided (see `super::TYPES`).
    pub kind: u8,
    /// The hand it belongs to (decisions of one hand and seat are in order).
    pub hand: u32,
    /// The index of the play made, in canonical order.
    pub chosen: u8,
    /// Every legal play's features (one when the play was forced).
    pub plays: Vec<PlayFeatures>,
}

impl Decision {
    /// Whether the seat had a choice.
    pub fn is_choice(&self) -> bool {
        self.plays.len() >= 2
    }

    /// The public features of the play made.
    pub fn chosen_public(&self) -> PublicFeatures {
        self.plays[self.chosen as usize].public
    }
}

/// Reads the decision at `pos` (the mover playing `chosen` among its plays).
pub fn read_decision(rules: &FullRules, pos: &FivesPosition, kind: u8, hand: u32, chosen: usize) -> Decision {
    let mut list = ActionList::default();
    pos.actions(rules, &mut list);
    let acts = list.as_slice();
    let mut feats = vec![PlayFeatures::default(); acts.len()];
    play_features(rules, pos, acts, &mut feats);
    Decision {
        kind,
        hand,
        chosen: chosen as u8,
        plays: feats,
    }
}
