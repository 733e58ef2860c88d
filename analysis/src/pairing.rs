//! Paired gains of levels over a baseline played on the same deals (common
//! random numbers): the beliefs over `uniform`, the shapings over plain
//! search. Rows of one pairing key (a cell, a deal, a repeat) wait until
//! the baseline's is in; a key leaves memory once every level of the grid
//! has been seen there (`levels`; 0: unknown, kept to the end).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use crate::stats::{self, McNemar, Moments, PairedTest};

#[derive(Debug, Default)]
struct Pair {
    d: Moments,
    /// This level won or tied and the baseline did not; the reverse.
    b: u64,
    c: u64,
}

/// Rows of one key waiting for the others.
#[derive(Debug)]
struct Pending<L> {
    baseline: Option<(i32, bool)>,
    others: Vec<(L, i32, bool)>,
    seen: usize,
}

/// Pairs rows keyed `K` (what makes two rows comparable) of levels `L`.
#[derive(Debug)]
pub(crate) struct Pairing<K, L> {
    /// Levels in the grid, the baseline included (0: unknown).
    pub(crate) levels: usize,
    pairs: BTreeMap<L, Pair>,
    pending: HashMap<K, Pending<L>>,
}

impl<K, L> Default for Pairing<K, L> {
    fn default() -> Self {
        Pairing {
            levels: 0,
            pairs: BTreeMap::new(),
            pending: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq + Clone, L: Ord> Pairing<K, L> {
    /// A row at `key`: the baseline's (`level` `None`) or a level's, with
    /// its score difference and whether it won or tied.
    pub(crate) fn add(&mut self, key: K, level: Option<L>, diff: i32, win: bool) {
        let p = self.pending.entry(key.clone()).or_insert_with(|| Pending {
            baseline: None,
            others: Vec::new(),
            seen: 0,
        });
        p.seen += 1;
        match level {
            None => p.baseline = Some((diff, win)),
            Some(l) => p.others.push((l, diff, win)),
        }
        if let Some((u, uw)) = p.baseline {
            for (l, s, w) in p.others.drain(..) {
                let pair = self.pairs.entry(l).or_default();
                pair.d.add((s - u) as f64);
                pair.b += (w && !uw) as u64;
                pair.c += (uw && !w) as u64;
            }
        }
        if self.levels > 0 && p.seen >= self.levels {
            self.pending.remove(&key);
        }
    }

    /// The paired score test and McNemar's test of `level` against the
    /// baseline (`None` without paired rows).
    pub(crate) fn tests(&self, level: &L) -> (Option<PairedTest>, Option<McNemar>) {
        let pair = self.pairs.get(level);
        (
            pair.map(|p| stats::paired_test(&p.d)),
            pair.map(|p| stats::mcnemar(p.b, p.c)),
        )
    }
}
