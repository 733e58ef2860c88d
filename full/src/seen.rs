//! What the table has seen of a hand: every seat's plays, draws and
//! passes, and the voids they prove. Beliefs and searches under partial
//! observation read it; nothing here looks at a hidden tile.

use engine::{Action, TileSet};

use super::fives::FivesPosition;
use super::rules::FullRules;

/// What every seat has shown about its hand: each time a seat could not
/// play (it drew or passed), it held no tile matching an open end; its
/// voids ([`Seen::voids`]) are what still holds now.
///
/// It also keeps every play of the hand, for the `model` belief, which
/// weighs a world by how likely the plays were in it
/// ([`super::worlds::model_weight`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    draws: [u8; super::rules::MAX_SEATS],
    plays: Vec<SeenPlay>,
    /// Per seat, the tiles it cannot hold now, and their pips.
    void: [TileSet; super::rules::MAX_SEATS],
    void_pips: [u16; super::rules::MAX_SEATS],
    /// Per seat, what matched the open ends when it was last stuck.
    last_stuck: [(TileSet, u16); super::rules::MAX_SEATS],
}

/// A play as every seat saw it: the position before it (the mover's hand
/// being its own business), the play, and the mover's draws before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SeenPlay {
    before: FivesPosition,
    action: Action,
    draws_before: u8,
}

impl Default for Seen {
    fn default() -> Self {
        Seen {
            draws: [0; super::rules::MAX_SEATS],
            plays: Vec::new(),
            void: [0; super::rules::MAX_SEATS],
            void_pips: [0; super::rules::MAX_SEATS],
            last_stuck: [(0, 0); super::rules::MAX_SEATS],
        }
    }
}

impl Seen {
    /// Nothing seen, keeping the list's room.
    pub fn clear(&mut self) {
        let mut plays = std::mem::take(&mut self.plays);
        plays.clear();
        *self = Seen {
            plays,
            ..Seen::default()
        };
    }

    /// The mover of `pos` cannot play: it is about to draw or pass.
    pub fn stuck(&mut self, rules: &FullRules, pos: &FivesPosition) {
        let seat = pos.mover as usize;
        let (matching, pips) = super::belief::matching(rules, pos);
        // A seat that cannot play holds none of these tiles; it keeps none
        // of them after drawing either (its draws stop at the first tile
        // that plays, which is then its only play), until it draws again.
        self.void[seat] |= matching;
        self.void_pips[seat] |= pips;
        self.last_stuck[seat] = (matching, pips);
    }

    /// `seat` drew a tile.
    pub fn drew(&mut self, seat: u8) {
        let s = seat as usize;
        self.draws[s] = self.draws[s].saturating_add(1);
        // Tiles drawn now may match what the seat lacked before: only the
        // current ends' void still holds.
        (self.void[s], self.void_pips[s]) = self.last_stuck[s];
    }

    /// Per seat, the tiles it cannot hold now: those matching the ends at
    /// every time it was stuck since it last drew (drawn tiles that did not
    /// play match none of the ends it drew at).
    pub fn voids(&self) -> ([TileSet; super::rules::MAX_SEATS], [u16; super::rules::MAX_SEATS]) {
        (self.void, self.void_pips)
    }

    /// The plays of the hand so far, in order: the position before each
    /// (as every seat saw it, hands included) and the play.
    pub fn plays(&self) -> impl DoubleEndedIterator<Item = (&FivesPosition, Action, bool)> + '_ {
        self.plays.iter().map(|p| {
            (
                &p.before,
                p.action,
                self.draws[p.before.mover as usize] == p.draws_before,
            )
        })
    }

    /// The mover of `pos` makes `action` (called before it is made).
    pub fn played(&mut self, pos: &FivesPosition, action: Action) {
        self.plays.push(SeenPlay {
            before: *pos,
            action,
            draws_before: self.draws[pos.mover as usize],
        });
    }
}
