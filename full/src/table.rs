//! The full game's transposition table: a fixed array of slots keyed by a
//! 64-bit hash of the position, holding the value of a search to a given
//! depth (exact, or a bound from a cut-off) and the best move found.
//!
//! Memory is fixed when the table is made (`--table-mb`, `[search]
//! table_mb`). The table is emptied (in O(1), by a generation stamp) before
//! every search of one world of one decision, and is never shared between
//! threads: what a search finds in it depends only on that search.
//!
//! Open addressing with linear probing: a probe stops at the key or at an
//! empty slot. Nothing is ever evicted while the table is at most 3/4 full;
//! beyond that a new entry replaces the shallowest of the (at most 8) slots
//! its probe passed (depth-preferred replacement). A search under a node
//! budget inserts at most one entry per node, and [`FivesTable::for_budget`]
//! makes a table of at least 4/3 of the budget, so such a search never replaces
//! anything: its results are the same for any table size it is allowed.
//!
//! Such a table also starts small and doubles as it fills (in place, the
//! entries rehashed into the larger part): a world of a budgeted search
//! holds a few percent of its budget in entries (1,190 on average, 2,394
//! at most, in the bench's double-6 hands' worlds of 20,000 nodes, a
//! throwaway count), so its probes stay in 96 KiB of cache instead of
//! missing all over a table sized for the worst case (768 KiB there). A table
//! that never replaces holds the same entries whatever its size, so it
//! finds the same; where a growing table would replace (at 3/4 of all
//! its slots), which entries it replaces may differ from a fixed table's,
//! which is why only budget-sized tables grow.

use super::fives::FivesPosition;

/// What an entry's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The value itself.
    Exact,
    /// The value is at least this (a cut-off above the window).
    Lower,
    /// The value is at most this (every move fell below the window).
    Upper,
}

/// A slot: the key, the value's bits, and generation (bits 0-31), depth
/// (32-39), bound (40-47) and best move (48-55). All zeros is empty
/// (generations start at 1), so a new table is zeroed memory from the
/// allocator and costs nothing until used.
type Slot = [u64; 3];

/// Bytes one slot takes.
pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

#[inline]
fn generation(s: &Slot) -> u32 {
    s[2] as u32
}

#[inline]
fn depth(s: &Slot) -> u8 {
    (s[2] >> 32) as u8
}

/// A hit: the stored value, its bound, its depth and the best move's index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    /// The value (relative to the position's score so far).
    pub value: f64,
    /// What the value is.
    pub bound: Bound,
    /// The depth it was searched to.
    pub depth: u8,
    /// The best move's index in canonical order (`u8::MAX`: none).
    pub best: u8,
}

/// A bounded transposition table (see the module's documentation).
#[derive(Debug)]
pub struct FivesTable {
    slots: Vec<Slot>,
    /// The slots in use, less one (a power of two less one).
    mask: usize,
    /// The slots in use after a [`Self::clear`]: all of them, or for a
    /// growing table [`GROW_FROM`] (or all, if fewer).
    first: usize,
    generation: u32,
    len: usize,
    /// A growing table's entries while they move to the larger part
    /// (its capacity reserved when made, so growing never allocates).
    moving: Vec<Slot>,
}

const PROBE_REPLACE: usize = 8;

/// The slots a growing table starts from (96 KiB).
const GROW_FROM: usize = 4096;

/// A growing table doubles when 1 in `GROW_AT` of its slots in use is full
/// (linear probing's probes lengthen fast as it fills: the expected probe
/// that misses passes about 8 slots at 3/4 full, 2.5 at 1/2, 1.4 at 1/4;
/// a world of the bench's hands, 1,190 entries on average, then never
/// grows, one of its largest grows once).
const GROW_AT: usize = 2;

impl FivesTable {
    /// A table of at most `mb` megabytes (2^20 bytes; at least 1,024 slots).
    pub fn with_mb(mb: u32) -> FivesTable {
        FivesTable::with_slots(Self::slots_for_mb(mb))
    }

    /// The slots of a table of at most `mb` megabytes (a power of two, at
    /// least 1,024).
    pub fn slots_for_mb(mb: u32) -> usize {
        let slots = (mb as usize * (1 << 20) / SLOT_BYTES).max(1024);
        1 << (usize::BITS - 1 - slots.leading_zeros())
    }

    /// A table of `slots` slots (rounded down to a power of two).
    pub fn with_slots(slots: usize) -> FivesTable {
        let n = (1usize << (usize::BITS - 1 - slots.max(2).leading_zeros())).max(2);
        FivesTable {
            slots: vec![[0u64; 3]; n],
            mask: n - 1,
            first: n,
            generation: 1,
            len: 0,
            moving: Vec::new(),
        }
    }

    /// A table of `slots` slots (rounded down to a power of two) that
    /// starts with [`GROW_FROM`] of them in use and doubles them whenever
    /// 1 in [`GROW_AT`] is full (see the module's documentation): for searches
    /// that never fill 3/4 of `slots`, as a budgeted search never fills
    /// [`Self::slots_for_budget`].
    pub fn growing(slots: usize) -> FivesTable {
        let mut t = FivesTable::with_slots(slots);
        t.first = t.slots.len().min(GROW_FROM);
        t.mask = t.first - 1;
        // The most that moves: what fills half the slots to the growth.
        t.moving = Vec::with_capacity(t.slots.len() / 2 / GROW_AT + 1);
        t
    }

    /// An empty table like this one: its capacity, growing or not.
    pub fn like(&self) -> FivesTable {
        if self.grows() {
            FivesTable::growing(self.slots.len())
        } else {
            FivesTable::with_slots(self.slots.len())
        }
    }

    /// The slots a search under a node budget of `budget` needs so that it
    /// never replaces an entry: a power of two at least 4/3 of the budget
    /// (and 16 more), so that a world's entries, one a node at most, stay
    /// below the 3/4 load at which [`put`](Self::put) starts replacing. The
    /// smallest such table keeps the probes in cache; what a search finds
    /// does not depend on the size (tested).
    pub fn slots_for_budget(budget: u64) -> usize {
        (budget as usize / 3 * 4 + 20).next_power_of_two()
    }

    /// The megabytes [`Self::slots_for_budget`] takes (rounded up).
    pub fn mb_for_budget(budget: u64) -> u32 {
        (Self::slots_for_budget(budget) * SLOT_BYTES).div_ceil(1 << 20) as u32
    }

    /// A table for searches under `budget` nodes within `mb` megabytes:
    /// the smaller of the two (a budget's table when it fits in `mb`, and
    /// then [`Self::growing`]).
    pub fn for_budget(budget: u64, mb: u32) -> FivesTable {
        let slots = Self::slots_for(budget, mb);
        if Self::grows_for(budget, mb) {
            FivesTable::growing(slots)
        } else {
            FivesTable::with_slots(slots)
        }
    }

    /// Whether [`Self::for_budget`] grows ([`Self::grows`]): when it is a
    /// budget's table of more than [`GROW_FROM`] slots.
    pub fn grows_for(budget: u64, mb: u32) -> bool {
        budget > 0
            && Self::slots_for_budget(budget) <= Self::slots_for_mb(mb)
            && Self::slots_for_budget(budget) > GROW_FROM
    }

    /// Whether this table grows (made by [`Self::growing`], with more than
    /// [`GROW_FROM`] slots).
    pub fn grows(&self) -> bool {
        self.first < self.slots.len()
    }

    /// The slots of [`Self::for_budget`] (budget 0: no budget, all of `mb`).
    pub fn slots_for(budget: u64, mb: u32) -> usize {
        let cap = Self::slots_for_mb(mb);
        if budget == 0 {
            cap
        } else {
            Self::slots_for_budget(budget).min(cap)
        }
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The slots in use now (all of them, unless the table grows).
    pub fn in_use(&self) -> usize {
        self.mask + 1
    }

    /// Entries held since the last [`Self::clear`].
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empties the table (O(1): a new generation).
    pub fn clear(&mut self) {
        self.len = 0;
        self.mask = self.first - 1;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Once every 4 billion searches: forget the old stamps for real.
            self.slots.fill([0; 3]);
            self.generation = 1;
        }
    }

    /// The entry of `key`, if held.
    #[inline]
    pub fn get(&self, key: u64) -> Option<Entry> {
        let mut i = key as usize & self.mask;
        loop {
            let s = &self.slots[i];
            if generation(s) != self.generation {
                return None;
            }
            if s[0] == key {
                return Some(Entry {
                    value: f64::from_bits(s[1]),
                    bound: match (s[2] >> 40) as u8 {
                        0 => Bound::Exact,
                        1 => Bound::Lower,
                        _ => Bound::Upper,
                    },
                    depth: depth(s),
                    best: (s[2] >> 48) as u8,
                });
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Doubles the slots in use, the entries held moved to where a probe
    /// of the larger part finds them (the slots beyond the part in use
    /// hold only older generations: empty).
    #[cold]
    fn grow(&mut self) {
        let used = self.mask + 1;
        self.moving.clear();
        for s in &mut self.slots[..used] {
            if generation(s) == self.generation {
                self.moving.push(*s);
                // Generation 0 is never the table's: empty.
                s[2] = 0;
            }
        }
        self.mask = 2 * used - 1;
        for s in &self.moving {
            let mut i = s[0] as usize & self.mask;
            while generation(&self.slots[i]) == self.generation {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = *s;
        }
    }

    /// Keeps `entry` for `key` (replacing the key's own entry).
    #[inline]
    pub fn put(&mut self, key: u64, entry: Entry) {
        let bound: u64 = match entry.bound {
            Bound::Exact => 0,
            Bound::Lower => 1,
            Bound::Upper => 2,
        };
        let slot: Slot = [
            key,
            entry.value.to_bits(),
            self.generation as u64 | (entry.depth as u64) << 32 | bound << 40 | (entry.best as u64) << 48,
        ];
        let used = self.mask + 1;
        if used < self.slots.len() && self.len * GROW_AT >= used {
            self.grow();
        }
        let full = self.len * 4 >= (self.mask + 1) * 3;
        let mut i = key as usize & self.mask;
        let mut shallowest: Option<usize> = None;
        let mut step = 0;
        while !full || step < PROBE_REPLACE {
            let s = &self.slots[i];
            if generation(s) != self.generation {
                if full {
                    break;
                }
                self.slots[i] = slot;
                self.len += 1;
                return;
            }
            if s[0] == key {
                self.slots[i] = slot;
                return;
            }
            if shallowest.is_none_or(|j| depth(s) < depth(&self.slots[j])) {
                shallowest = Some(i);
            }
            step += 1;
            i = (i + 1) & self.mask;
        }
        // Full: replace the shallowest entry the probe passed, if this one
        // is at least as deep (no slot is ever emptied, so chains hold).
        if let Some(j) = shallowest
            && entry.depth >= depth(&self.slots[j])
        {
            self.slots[j] = slot;
        }
    }
}

/// The table key of a position: a 64-bit hash of the hands, the boneyard,
/// the board's code, the mover, the passes and the forced opening (not the
/// scores: values are gains from the position on).
#[inline]
pub fn position_key(pos: &FivesPosition) -> u64 {
    #[inline]
    fn mix(h: u64, x: u64) -> u64 {
        let v = (h ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        v ^ (v >> 29)
    }
    let mut h = 0x243F_6A88_85A3_08D3u64;
    for &hand in &pos.hands {
        h = mix(h, hand);
    }
    h = mix(h, pos.boneyard);
    let meta = pos.board.code()
        | (pos.mover as u64) << 32
        | (pos.passes as u64) << 36
        | (pos.forced.map_or(0xFF, |t| t as u64)) << 40;
    h = mix(h, meta);
    h.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ (h >> 32)
}
