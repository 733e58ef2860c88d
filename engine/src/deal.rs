//! Starting states: the numbering of deals of docs/rules.md section 1, both ways.

use serde::{Deserialize, Serialize};

use crate::rules::Rules;
use crate::tiles::{TileSet, bit, bits};

/// A deal: the two hands and the boneyard, which together hold every tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Deal {
    /// The player's hand (the seat under test): `hand` tiles.
    pub player: TileSet,
    /// The target's hand: `hand` tiles.
    pub target: TileSet,
    /// The tiles left to draw: `boneyard` tiles, as a set; the order they are
    /// drawn in comes from the game's boneyard stream.
    pub boneyard: TileSet,
}

/// The members of a tile set in ascending order, without allocating.
#[inline]
pub(crate) fn elements(set: TileSet) -> ([u8; 64], u32) {
    let mut out = [0u8; 64];
    let mut n = 0;
    for t in bits(set) {
        out[n] = t;
        n += 1;
    }
    (out, n as u32)
}

/// The `rank`-th `k`-subset (lexicographic order) of the elements of `pool`,
/// taken in ascending order. `rank` must be below C(|pool|, k).
pub(crate) fn unrank_subset(rules: &Rules, pool: TileSet, k: u32, mut rank: u64) -> TileSet {
    let (elems, n) = elements(pool);
    let mut out = 0;
    let mut need = k;
    let mut i = 0u32;
    while need > 0 {
        // Subsets whose next element is elems[i]: choose the rest from after it.
        let with = rules.binom(n - i - 1, need - 1);
        if rank < with {
            out |= bit(elems[i as usize]);
            need -= 1;
        } else {
            rank -= with;
        }
        i += 1;
    }
    out
}

/// The lexicographic rank of `subset` among the |subset|-subsets of `pool`.
pub(crate) fn rank_subset(rules: &Rules, pool: TileSet, subset: TileSet) -> u64 {
    let (elems, n) = elements(pool);
    let mut need = subset.count_ones();
    let mut rank = 0;
    for (i, &e) in elems[..n as usize].iter().enumerate() {
        if need == 0 {
            break;
        }
        if subset & bit(e) != 0 {
            need -= 1;
        } else {
            rank += rules.binom(n - i as u32 - 1, need - 1);
        }
    }
    rank
}

impl Deal {
    /// The deal of starting state `index` (docs/rules.md section 1), or `None` when
    /// the index is not below [`Rules::starting_states`].
    pub fn from_index(rules: &Rules, index: u64) -> Option<Deal> {
        if index >= rules.starting_states() {
            return None;
        }
        let c = rules.config();
        let l = rules.tile_count() as u32;
        let per_boneyard = rules.binom(l - c.boneyard as u32, c.hand as u32);
        let boneyard = unrank_subset(rules, rules.all_tiles(), c.boneyard as u32, index / per_boneyard);
        let rest = rules.all_tiles() & !boneyard;
        let player = unrank_subset(rules, rest, c.hand as u32, index % per_boneyard);
        Some(Deal {
            player,
            target: rest & !player,
            boneyard,
        })
    }

    /// The starting-state index of a deal, or `None` if it is not a deal of
    /// these rules (sizes wrong, overlapping or missing tiles).
    pub fn index(&self, rules: &Rules) -> Option<u64> {
        let c = rules.config();
        let sizes_ok = self.player.count_ones() == c.hand as u32
            && self.target.count_ones() == c.hand as u32
            && self.boneyard.count_ones() == c.boneyard as u32;
        let disjoint =
            self.player & self.target == 0 && self.player & self.boneyard == 0 && self.target & self.boneyard == 0;
        let whole = self.player | self.target | self.boneyard == rules.all_tiles();
        if !(sizes_ok && disjoint && whole) {
            return None;
        }
        let l = rules.tile_count() as u32;
        let per_boneyard = rules.binom(l - c.boneyard as u32, c.hand as u32);
        let b = rank_subset(rules, rules.all_tiles(), self.boneyard);
        let p = rank_subset(rules, rules.all_tiles() & !self.boneyard, self.player);
        Some(b * per_boneyard + p)
    }

    /// The same deal with the two hands swapped.
    pub fn swapped(&self) -> Deal {
        Deal {
            player: self.target,
            target: self.player,
            boneyard: self.boneyard,
        }
    }

    /// A readable form: "boneyard {00,01,02,03} player {11,12,13} target {22,23,33}".
    pub fn describe(&self, rules: &Rules) -> String {
        let names = |s: TileSet| bits(s).map(|t| rules.tile_name(t)).collect::<Vec<_>>().join(",");
        format!(
            "boneyard {{{}}} player {{{}}} target {{{}}}",
            names(self.boneyard),
            names(self.player),
            names(self.target)
        )
    }
}
