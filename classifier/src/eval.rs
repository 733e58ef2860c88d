//! Seeded splits, k-fold cross validation and confusion matrices.

use serde::{Deserialize, Serialize};

use crate::data::CLASSES;

fn shuffled(n: usize, seed: u64, salt: u64) -> Vec<usize> {
    let mut rng = engine::seed::keyed_rng(seed, salt, 0, engine::seed::CLASSIFIER_SPLITS, 0);
    let mut idx: Vec<usize> = (0..n).collect();
    engine::seed::shuffle(&mut rng, &mut idx);
    idx
}

/// Splits indices 0..n into (train, holdout) with round(holdout * n) held out,
/// by a seeded shuffle. Both lists are sorted.
pub fn holdout_split(n: usize, holdout: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let idx = shuffled(n, seed, 1);
    let h = ((holdout * n as f64).round() as usize).min(n);
    let mut test = idx[..h].to_vec();
    let mut train = idx[h..].to_vec();
    test.sort_unstable();
    train.sort_unstable();
    (train, test)
}

/// `k` disjoint folds covering 0..n (sizes differ by at most one), by a seeded
/// shuffle. Each fold is sorted.
pub fn folds(n: usize, k: usize, seed: u64) -> Vec<Vec<usize>> {
    let idx = shuffled(n, seed, 2);
    let k = k.max(1);
    let mut out: Vec<Vec<usize>> = (0..k)
        .map(|f| {
            let (lo, hi) = (f * n / k, (f + 1) * n / k);
            idx[lo..hi].to_vec()
        })
        .collect();
    for f in &mut out {
        f.sort_unstable();
    }
    out
}

/// A confusion matrix: rows are the actual class, columns the predicted one
/// (Table 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    pub counts: [[u64; CLASSES]; CLASSES],
}

impl Confusion {
    pub fn add(&mut self, actual: u8, predicted: u8) {
        self.counts[actual as usize][predicted as usize] += 1;
    }
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }
    /// (A + E + I) / total (Eq. 5 / 9).
    pub fn accuracy(&self) -> f64 {
        let right: u64 = (0..CLASSES).map(|k| self.counts[k][k]).sum();
        right as f64 / self.total().max(1) as f64
    }
}
