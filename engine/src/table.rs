//! Transposition tables of full-information values.
//!
//! A value depends only on the position, the engine kind and the remaining
//! depth, never on how the position was reached, so one table serves every
//! decision and every game of a process. [`LocalTable`] belongs to one thread;
//! [`SharedTable`] is sharded behind read-write locks so several threads can
//! fill and read one table.

use std::hash::BuildHasher;
use std::sync::RwLock;

use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::position::Position;
use crate::targets::EngineKind;

/// A position, engine kind and remaining depth, packed for hashing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    hands: [u64; 2],
    boneyard: u64,
    /// Board code (bits 0-30), mover (31), passes (32), engine (33-35), depth (36-43).
    meta: u64,
}

impl Key {
    #[inline]
    pub(crate) fn new(pos: &Position, engine: EngineKind, depth: u8) -> Key {
        Key {
            hands: pos.hands,
            boneyard: pos.boneyard,
            meta: pos.board.code()
                | (pos.mover as u64) << 31
                | (pos.passes as u64) << 32
                | engine.code() << 33
                | (depth as u64) << 36,
        }
    }
}

/// Somewhere to keep values between searches.
pub trait ValueStore {
    /// The value held for `key`, if any.
    fn get(&self, key: &Key) -> Option<f64>;
    /// Keeps `value` for `key`. A value is a pure function of its key, so a
    /// store must only ever receive values of one rule set.
    fn insert(&mut self, key: Key, value: f64);
    /// Number of values held.
    fn len(&self) -> usize;
    /// Whether no value is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Values a [`LocalTable`] holds at most by default: what 2^21 buckets hold
/// (about 86 MB). The thesis's whole grid needs under 0.9 million per
/// thread, so it never reaches the cap; a double-6 search does, and then the
/// table starts afresh instead of growing without bound.
pub const DEFAULT_TABLE_CAP: usize = 1_835_008;

/// A table owned by one thread, holding at most `cap` values: when it is full
/// the next insert empties it first (keeping the allocation). A value is a
/// pure function of its key, so emptying costs only time: results never
/// depend on what the table held.
#[derive(Debug, Clone)]
pub struct LocalTable {
    map: FxHashMap<Key, f64>,
    cap: usize,
}

impl Default for LocalTable {
    fn default() -> Self {
        LocalTable::with_cap(DEFAULT_TABLE_CAP)
    }
}

impl LocalTable {
    /// An empty table with the default cap.
    pub fn new() -> LocalTable {
        LocalTable::default()
    }
    /// An empty table with room for at least `n` values before it
    /// reallocates, and the default cap.
    pub fn with_capacity(n: usize) -> LocalTable {
        LocalTable {
            map: FxHashMap::with_capacity_and_hasher(n, FxBuildHasher),
            cap: DEFAULT_TABLE_CAP,
        }
    }
    /// An empty table holding at most `cap` values (at least one).
    pub fn with_cap(cap: usize) -> LocalTable {
        LocalTable {
            map: FxHashMap::default(),
            cap: cap.max(1),
        }
    }
    /// Drops every value and keeps the allocation.
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

impl ValueStore for LocalTable {
    #[inline]
    fn get(&self, key: &Key) -> Option<f64> {
        self.map.get(key).copied()
    }
    #[inline]
    fn insert(&mut self, key: Key, value: f64) {
        if self.map.len() >= self.cap {
            self.map.clear();
        }
        self.map.insert(key, value);
    }
    fn len(&self) -> usize {
        self.map.len()
    }
}

/// A table shared by several threads, in shards so that they rarely wait on each other.
#[derive(Debug)]
pub struct SharedTable {
    shards: Box<[RwLock<FxHashMap<Key, f64>>]>,
}

impl SharedTable {
    /// A table of `shards` shards (rounded up to a power of two).
    pub fn new(shards: usize) -> SharedTable {
        let n = shards.max(1).next_power_of_two();
        SharedTable {
            shards: (0..n).map(|_| RwLock::new(FxHashMap::default())).collect(),
        }
    }

    #[inline]
    fn shard(&self, key: &Key) -> &RwLock<FxHashMap<Key, f64>> {
        let h = FxBuildHasher.hash_one(key);
        // High bits: the map itself uses the low ones.
        &self.shards[(h >> 40) as usize & (self.shards.len() - 1)]
    }
}

impl Default for SharedTable {
    fn default() -> Self {
        SharedTable::new(64)
    }
}

impl ValueStore for &SharedTable {
    #[inline]
    fn get(&self, key: &Key) -> Option<f64> {
        let shard = self.shard(key).read().unwrap_or_else(|e| e.into_inner());
        shard.get(key).copied()
    }
    #[inline]
    fn insert(&mut self, key: Key, value: f64) {
        let mut shard = self.shard(&key).write().unwrap_or_else(|e| e.into_inner());
        shard.insert(key, value);
    }
    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.read().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
    }
}
