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
        let (thresholds, binned) = bin(samples, params.max_bins.max(2));
        let labels: Vec<u8> = samples.iter().map(|s| s.label).collect();
        let (distinct, row_of) = distinct_rows(&binned, &labels);
        let data = Data {
            distinct: &distinct,
            row_of: &row_of,
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
            votes[leaf_class(tree, x) as usize] += 1;
        }
        vote(&votes)
    }

    /// [`Self::predict`] of each of `xs`: tree by tree, so that a tree is
    /// read from memory once for all of them, not once for each.
    pub fn predict_many(&self, xs: &[[f64; FEATURES]]) -> Vec<u8> {
        let mut votes = vec![[0u32; CLASSES]; xs.len()];
        for tree in &self.trees {
            for (v, x) in votes.iter_mut().zip(xs) {
                v[leaf_class(tree, x) as usize] += 1;
            }
        }
        votes.iter().map(vote).collect()
    }
}

/// The class of the leaf `x` falls in.
#[inline]
fn leaf_class(tree: &[Node], x: &[f64; FEATURES]) -> u8 {
    let mut i = 0usize;
    loop {
        let node = &tree[i];
        if node.feature == LEAF {
            return node.class;
        }
        i = if x[node.feature as usize] <= node.threshold {
            node.left
        } else {
            node.right
        } as usize;
    }
}

/// The class with the most votes (ties: the lowest class number).
fn vote(votes: &[u32; CLASSES]) -> u8 {
    (0..CLASSES)
        .max_by_key(|&k| (votes[k], std::cmp::Reverse(k)))
        .unwrap_or(0) as u8
}

/// Each feature's candidate thresholds, and each sample's bins.
fn bin(samples: &[Sample], max_bins: usize) -> (Vec<Vec<f64>>, Vec<[u8; FEATURES]>) {
    let thresholds: Vec<Vec<f64>> = (0..FEATURES).map(|f| cut_points(samples, f, max_bins)).collect();
    let binned = samples
        .iter()
        .map(|s| std::array::from_fn(|f| thresholds[f].partition_point(|&t| t < s.x[f]) as u8))
        .collect();
    (thresholds, binned)
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
    /// The distinct (binned features, label) rows of the samples, and each
    /// sample's row among them (one per sample).
    distinct: &'a [Row],
    row_of: &'a [u32],
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

/// A sample's binned features and its label (at [`LABEL`]), packed.
type Row = [u8; 8];
const LABEL: usize = FEATURES;
const _: () = assert!(FEATURES < 8, "a row holds the features and the label");

fn row(binned: &[u8; FEATURES], label: u8) -> Row {
    let mut r = [0u8; 8];
    r[..FEATURES].copy_from_slice(binned);
    r[LABEL] = label;
    r
}

/// The distinct rows of the samples (sorted), and each sample's index among
/// them. Samples repeat (the features are small ratios), so a tree splits
/// far fewer rows than samples.
fn distinct_rows(binned: &[[u8; FEATURES]], labels: &[u8]) -> (Vec<Row>, Vec<u32>) {
    let rows: Vec<Row> = binned.iter().zip(labels).map(|(b, &l)| row(b, l)).collect();
    let mut distinct = rows.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let row_of = rows
        .iter()
        .map(|r| distinct.binary_search(r).expect("a sample's own row") as u32)
        .collect();
    (distinct, row_of)
}

fn grow(d: &Data<'_>, tree: u64) -> Vec<Node> {
    let p = d.params;
    let mut rng = tree_rng(p.seed, tree);
    let n = d.row_of.len();
    // The bootstrap: n draws with replacement. A node's split depends only
    // on the multiset of its draws, never their order, so the draws of
    // equal rows are one weighted row (the same trees as splitting the
    // draws one by one, the first definition in the tests below).
    let mut weight = vec![0u32; d.distinct.len()];
    for _ in 0..n {
        weight[d.row_of[below(&mut rng, n)] as usize] += 1;
    }
    let mut rows: Vec<(Row, u32)> = d
        .distinct
        .iter()
        .zip(&weight)
        .filter(|(_, w)| **w > 0)
        .map(|(r, &w)| (*r, w))
        .collect();
    drop(weight);
    let mut nodes = vec![Node {
        feature: LEAF,
        threshold: 0.0,
        left: 0,
        right: 0,
        class: 0,
    }];
    let mut stack = vec![(0usize, 0usize, rows.len(), 0usize)];
    let mut hist = vec![[0usize; CLASSES]; 256];
    while let Some((id, lo, hi, depth)) = stack.pop() {
        let mut counts = [0usize; CLASSES];
        for (r, w) in &rows[lo..hi] {
            counts[r[LABEL] as usize] += *w as usize;
        }
        nodes[id].class = majority(&counts);
        let size: usize = counts.iter().sum();
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
            // The bins this node's rows fall in: only those are read and
            // cleared (a small node deep in a tree costs its size, not the
            // bins). Skipping an empty bin skips a score equal to the one
            // before it, which could never be the strictly better split.
            let mut occupied = [0u64; 4];
            for (r, w) in &rows[lo..hi] {
                let b = r[f] as usize;
                hist[b][r[LABEL] as usize] += *w as usize;
                occupied[b >> 6] |= 1 << (b & 63);
            }
            let mut left = [0usize; CLASSES];
            let mut n_left = 0usize;
            let mut walk = occupied;
            let set_bins = std::iter::from_fn(|| {
                let w = walk.iter().position(|&m| m != 0)?;
                let b = w * 64 + walk[w].trailing_zeros() as usize;
                walk[w] &= walk[w] - 1;
                Some(b)
            });
            for b in set_bins.take_while(|&b| b < bins - 1) {
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
            for (w, &m) in occupied.iter().enumerate() {
                let mut m = m;
                while m != 0 {
                    hist[w * 64 + m.trailing_zeros() as usize] = [0; CLASSES];
                    m &= m - 1;
                }
            }
        }
        let Some((_, f, b)) = best else { continue };
        // Partition rows[lo..hi]: bins <= b go left.
        let mut i = lo;
        let mut j = hi;
        while i < j {
            if rows[i].0[f] as usize <= b {
                i += 1;
            } else {
                j -= 1;
                rows.swap(i, j);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The first definition of [`grow`] (before issue 41): the bootstrap
    /// read through its draws, in draw order. The weighted distinct rows
    /// must grow the very same trees (so a model's hash does not move).
    fn grow_by_index(d: &Data<'_>, binned: &[[u8; FEATURES]], labels: &[u8], tree: u64) -> Vec<Node> {
        let p = d.params;
        let mut rng = tree_rng(p.seed, tree);
        let n = labels.len();
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
                counts[labels[i as usize] as usize] += 1;
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
                    hist[binned[i as usize][f] as usize][labels[i as usize] as usize] += 1;
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
                if binned[idx[i] as usize][f] as usize <= b {
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

    #[test]
    fn sorted_packed_rows_grow_the_trees_of_the_first_definition() {
        let mut rng = engine::seed::keyed_rng(7, 0, 0, engine::seed::FOREST, 0);
        for (n, max_bins, min_leaf, max_depth) in [(500, 64, 1, 32), (3000, 8, 3, 6), (40, 2, 1, 32)] {
            let samples: Vec<Sample> = (0..n)
                .map(|_| {
                    let x = std::array::from_fn(|_| below(&mut rng, 6) as f64 / 4.0);
                    let label = ((x[0] + x[1] * 2.0) as usize + below(&mut rng, 2)) % CLASSES;
                    Sample { x, label: label as u8 }
                })
                .collect();
            let params = ForestParams {
                max_bins,
                min_leaf,
                max_depth,
                seed: n as u64,
                ..ForestParams::default()
            };
            let (thresholds, binned) = bin(&samples, max_bins);
            let labels: Vec<u8> = samples.iter().map(|s| s.label).collect();
            let (distinct, row_of) = distinct_rows(&binned, &labels);
            assert!(n < 3000 || distinct.len() < n, "rows repeat");
            let data = Data {
                distinct: &distinct,
                row_of: &row_of,
                thresholds: &thresholds,
                params: &params,
            };
            let mut trees = Vec::new();
            for tree in 0..8 {
                let (new, old) = (grow(&data, tree), grow_by_index(&data, &binned, &labels, tree));
                assert!(new.len() > 1, "a tree that splits");
                assert_eq!(new, old, "n {n}, tree {tree}");
                trees.push(new);
            }
            // Tree by tree over a batch: each sample's own prediction.
            let forest = Forest { trees };
            let xs: Vec<[f64; FEATURES]> = samples.iter().map(|s| s.x).collect();
            let one_by_one: Vec<u8> = xs.iter().map(|x| forest.predict(x)).collect();
            assert_eq!(forest.predict_many(&xs), one_by_one);
            assert!(
                one_by_one.iter().any(|&c| c != one_by_one[0]),
                "more than one class predicted"
            );
        }
    }
}
