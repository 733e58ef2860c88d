//! A random forest of CART trees (Gini impurity, bootstrap samples, a random
//! subset of features tried at each split), grown on binned features: each
//! feature's distinct training values (or, past `max_bins`, quantiles of them)
//! give the candidate thresholds, so a split is found with one counting pass.
//! Every tree has its own seeded stream, so a forest is the same whatever the
//! number of threads that grow it.

use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use crate::data::{CLASSES, FEATURES, FitError, Sample, check};

/// How a forest is grown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForestParams {
    pub trees: usize,
    pub max_depth: usize,
    pub min_leaf: usize,
    /// Features tried at each split.
    pub max_features: usize,
    pub max_bins: usize,
    pub seed: u64,
    /// Threads that grow trees (does not change the forest).
    pub threads: usize,
}

impl Default for ForestParams {
    fn default() -> Self {
        ForestParams {
            trees: 100,
            max_depth: 32,
            min_leaf: 1,
            // floor(sqrt(5)), as is usual for classification.
            max_features: 2,
            max_bins: 64,
            seed: 0,
            threads: 1,
        }
    }
}

const LEAF: u8 = u8::MAX;

/// A tree node: a split (`feature` < 255) or a leaf (`class`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub feature: u8,
    pub threshold: f64,
    pub left: u32,
    pub right: u32,
    pub class: u8,
}

/// A fitted forest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Forest {
    pub trees: Vec<Vec<Node>>,
}

impl Forest {
    pub fn fit(samples: &[Sample], params: &ForestParams) -> Result<Forest, FitError> {
        check(samples, 2)?;
        let thresholds: Vec<Vec<f64>> = (0..FEATURES)
            .map(|f| cut_points(samples, f, params.max_bins.max(2)))
            .collect();
        let binned: Vec<[u8; FEATURES]> = samples
            .iter()
            .map(|s| std::array::from_fn(|f| thresholds[f].partition_point(|&t| t < s.x[f]) as u8))
            .collect();
        let labels: Vec<u8> = samples.iter().map(|s| s.label).collect();
        let data = Data {
            binned: &binned,
            labels: &labels,
            thresholds: &thresholds,
            params,
        };
        let n = params.trees.max(1);
        let threads = params.threads.clamp(1, n);
        let mut trees: Vec<Vec<Node>> = vec![Vec::new(); n];
        std::thread::scope(|scope| {
            for (k, chunk) in trees.chunks_mut(n.div_ceil(threads)).enumerate() {
                let data = &data;
                let first = k * n.div_ceil(threads);
                scope.spawn(move || {
                    for (i, tree) in chunk.iter_mut().enumerate() {
                        *tree = grow(data, (first + i) as u64);
                    }
                });
            }
        });
        Ok(Forest { trees })
    }

    /// The class most trees vote for (ties: the lowest class number).
    pub fn predict(&self, x: &[f64; FEATURES]) -> u8 {
        let mut votes = [0u32; CLASSES];
        for tree in &self.trees {
            let mut i = 0usize;
            loop {
                let node = &tree[i];
                if node.feature == LEAF {
                    votes[node.class as usize] += 1;
                    break;
                }
                i = if x[node.feature as usize] <= node.threshold {
                    node.left
                } else {
                    node.right
                } as usize;
            }
        }
        (0..CLASSES)
            .max_by_key(|&k| (votes[k], std::cmp::Reverse(k)))
            .unwrap_or(0) as u8
    }
}

/// Candidate thresholds of one feature: midpoints between consecutive distinct
/// values, thinned to at most `max_bins - 1` by taking evenly spaced ones.
fn cut_points(samples: &[Sample], f: usize, max_bins: usize) -> Vec<f64> {
    let mut v: Vec<f64> = samples.iter().map(|s| s.x[f]).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let mids: Vec<f64> = v.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
    if mids.len() < max_bins {
        return mids;
    }
    let keep = max_bins - 1;
    (0..keep).map(|i| mids[(i * mids.len()) / keep]).collect()
}

struct Data<'a> {
    binned: &'a [[u8; FEATURES]],
    labels: &'a [u8],
    thresholds: &'a [Vec<f64>],
    params: &'a ForestParams,
}

fn tree_rng(seed: u64, tree: u64) -> ChaCha20Rng {
    engine::seed::keyed_rng(seed, tree, 0, engine::seed::FOREST, 0)
}

fn below(rng: &mut ChaCha20Rng, n: usize) -> usize {
    engine::seed::below(rng, n as u64) as usize
}

fn majority(counts: &[usize; CLASSES]) -> u8 {
    (0..CLASSES)
        .max_by_key(|&k| (counts[k], std::cmp::Reverse(k)))
        .unwrap_or(0) as u8
}

fn grow(d: &Data<'_>, tree: u64) -> Vec<Node> {
    let p = d.params;
    let mut rng = tree_rng(p.seed, tree);
    let n = d.labels.len();
    let mut idx: Vec<u32> = (0..n).map(|_| below(&mut rng, n) as u32).collect();
    let mut nodes = vec![Node {
        feature: LEAF,
        threshold: 0.0,
        left: 0,
        right: 0,
        class: 0,
    }];
    let mut stack = vec![(0usize, 0usize, n, 0usize)];
    let mut hist = vec![[0usize; CLASSES]; p.max_bins.max(2) + 1];
    while let Some((id, lo, hi, depth)) = stack.pop() {
        let mut counts = [0usize; CLASSES];
        for &i in &idx[lo..hi] {
            counts[d.labels[i as usize] as usize] += 1;
        }
        nodes[id].class = majority(&counts);
        let size = hi - lo;
        if depth >= p.max_depth || size < 2 * p.min_leaf.max(1) || counts.iter().filter(|&&c| c > 0).count() < 2 {
            continue;
        }
        // Try max_features random features; if none splits, the rest too.
        let mut order: [usize; FEATURES] = std::array::from_fn(|i| i);
        for i in 0..FEATURES - 1 {
            let j = i + below(&mut rng, FEATURES - i);
            order.swap(i, j);
        }
        let mut best: Option<(f64, usize, usize)> = None;
        for (tried, &f) in order.iter().enumerate() {
            if tried >= p.max_features.max(1) && best.is_some() {
                break;
            }
            let bins = d.thresholds[f].len() + 1;
            if bins < 2 {
                continue;
            }
            for h in hist[..bins].iter_mut() {
                *h = [0; CLASSES];
            }
            for &i in &idx[lo..hi] {
                hist[d.binned[i as usize][f] as usize][d.labels[i as usize] as usize] += 1;
            }
            let mut left = [0usize; CLASSES];
            let mut n_left = 0usize;
            for b in 0..bins - 1 {
                for c in 0..CLASSES {
                    left[c] += hist[b][c];
                }
                n_left += hist[b].iter().sum::<usize>();
                let n_right = size - n_left;
                if n_left < p.min_leaf.max(1) || n_right < p.min_leaf.max(1) {
                    continue;
                }
                // Maximising sum(l^2)/n_l + sum(r^2)/n_r minimises the weighted Gini impurity.
                let score: f64 = (0..CLASSES).map(|c| (left[c] * left[c]) as f64).sum::<f64>() / n_left as f64
                    + (0..CLASSES)
                        .map(|c| ((counts[c] - left[c]) * (counts[c] - left[c])) as f64)
                        .sum::<f64>()
                        / n_right as f64;
                if best.is_none_or(|(s, _, _)| score > s + 1e-12) {
                    best = Some((score, f, b));
                }
            }
        }
        let Some((_, f, b)) = best else { continue };
        // Partition idx[lo..hi]: bins <= b go left.
        let mut i = lo;
        let mut j = hi;
        while i < j {
            if d.binned[idx[i] as usize][f] as usize <= b {
                i += 1;
            } else {
                j -= 1;
                idx.swap(i, j);
            }
        }
        let (l, r) = (nodes.len(), nodes.len() + 1);
        let leaf = Node {
            feature: LEAF,
            threshold: 0.0,
            left: 0,
            right: 0,
            class: 0,
        };
        nodes.push(leaf);
        nodes.push(leaf);
        nodes[id] = Node {
            feature: f as u8,
            threshold: d.thresholds[f][b],
            left: l as u32,
            right: r as u32,
            class: nodes[id].class,
        };
        stack.push((r, i, hi, depth + 1));
        stack.push((l, lo, i, depth + 1));
    }
    nodes
}
