//! Seed 003's dynamic Bayesian network: a hidden strategy variable S_t
//! persisting over a seat's plays in a hand (one time slice per play,
//! S_t depending on S_{t-1} through a transition matrix), and in each slice
//! the public features of the play made ([`super::PUBLIC_FEATURES`], each a
//! 0/1 node depending on S_t only). Fitted by EM (Baum-Welch) with
//! Dirichlet(2) / Beta(2, 2) priors, so each iteration cannot lower the
//! log posterior (the log likelihood plus the log prior), which the
//! artifact records iteration by iteration.
//!
//! Prediction, as the seed's "P(e)" of each sibling: the seat's past plays
//! in the hand are the evidence of the earlier slices; each legal play is
//! the evidence of the next one; a play's probability is P(evidence with
//! that play) over the siblings' sum.
//!
//! [`DBN_STATES`] = 5 hidden states: the training hands are played by five
//! strategies (random, scorer, defender, heaviest and the searcher) whose
//! seats the hidden variable should tell apart, as the seed's latent
//! "opponent strategy" node does.

use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use super::features::{PUBLIC_FEATURE_COUNT, PublicFeatures};

/// Hidden states of the strategy variable.
pub const DBN_STATES: usize = 5;

/// EM iterations at most.
pub const DBN_MAX_ITERATIONS: usize = 200;

/// A fitted DBN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dbn {
    /// P(S_1 = k).
    pub initial: Vec<f64>,
    /// P(S_t = l | S_{t-1} = k), row k.
    pub transition: Vec<Vec<f64>>,
    /// P(feature j = 1 | S = k), row k.
    pub emission: Vec<Vec<f64>>,
    /// The log posterior after each EM iteration (non-decreasing).
    pub trace: Vec<f64>,
}

/// A belief over the hidden state before a slice (sums to 1).
pub type StateBelief = [f64; DBN_STATES];

impl Dbn {
    /// Hidden states.
    pub fn states(&self) -> usize {
        self.initial.len()
    }

    /// P(x | S = k) for a slice's features `x`.
    #[inline]
    pub fn emit(&self, k: usize, x: PublicFeatures) -> f64 {
        let mut p = 1.0;
        for (j, &q) in self.emission[k].iter().enumerate() {
            p *= if x >> j & 1 == 1 { q } else { 1.0 - q };
        }
        p
    }

    /// The belief over the hidden state of the next slice after the
    /// evidence `past` (a seat's earlier plays in the hand, in order).
    pub fn predictive(&self, past: impl Iterator<Item = PublicFeatures>) -> StateBelief {
        let k = self.states().min(DBN_STATES);
        let mut b = [0.0; DBN_STATES];
        b[..k].copy_from_slice(&self.initial[..k]);
        for x in past {
            // Condition on x, then step through the transition.
            let mut post = [0.0; DBN_STATES];
            let mut sum = 0.0;
            for s in 0..k {
                post[s] = b[s] * self.emit(s, x);
                sum += post[s];
            }
            if sum <= 0.0 {
                continue;
            }
            let mut next = [0.0; DBN_STATES];
            for s in 0..k {
                for (t, n) in next[..k].iter_mut().enumerate() {
                    *n += post[s] / sum * self.transition[s][t];
                }
            }
            b = next;
        }
        b
    }

    /// The probability of each candidate play (public features `plays`)
    /// being the next slice's, given the belief `b` (summing to 1).
    pub fn probs(&self, b: &StateBelief, plays: impl ExactSizeIterator<Item = PublicFeatures>, out: &mut [f64]) {
        let n = plays.len();
        let mut sum = 0.0;
        for (o, x) in out.iter_mut().zip(plays) {
            *o = (0..self.states().min(DBN_STATES))
                .map(|s| b[s] * self.emit(s, x))
                .sum::<f64>()
                .max(1e-300);
            sum += *o;
        }
        for o in &mut out[..n] {
            *o /= sum;
        }
    }

    /// The log likelihood of `seqs` (scaled forward pass).
    pub fn log_likelihood(&self, seqs: &[Vec<PublicFeatures>]) -> f64 {
        let k = self.states();
        let mut ll = 0.0;
        for seq in seqs {
            let mut alpha = vec![0.0; k];
            for (t, &x) in seq.iter().enumerate() {
                let mut next = vec![0.0; k];
                for s in 0..k {
                    let prior = if t == 0 {
                        self.initial[s]
                    } else {
                        (0..k).map(|r| alpha[r] * self.transition[r][s]).sum()
                    };
                    next[s] = prior * self.emit(s, x);
                }
                let c: f64 = next.iter().sum();
                ll += c.ln();
                alpha = next.iter().map(|v| v / c).collect();
            }
        }
        ll
    }

    /// The log of the prior density of the parameters (Dirichlet(2) rows,
    /// Beta(2, 2) emissions), up to a constant.
    pub fn log_prior(&self) -> f64 {
        let mut s: f64 = self.initial.iter().map(|p| p.ln()).sum();
        for row in &self.transition {
            s += row.iter().map(|p| p.ln()).sum::<f64>();
        }
        for row in &self.emission {
            s += row.iter().map(|q| q.ln() + (1.0 - q).ln()).sum::<f64>();
        }
        s
    }

    /// Fits `states` hidden states to `seqs` (each a seat's plays in a
    /// hand, in order) by EM from a start drawn from `rng`.
    pub fn fit(seqs: &[Vec<PublicFeatures>], states: usize, rng: &mut impl RngCore) -> Dbn {
        let k = states;
        let f = PUBLIC_FEATURE_COUNT;
        let unit = |rng: &mut dyn RngCore| engine::seed::unit(rng);
        let mut dbn = Dbn {
            initial: vec![1.0 / k as f64; k],
            transition: (0..k)
                .map(|r| {
                    (0..k)
                        .map(|c| if r == c { 0.9 } else { 0.1 / (k - 1).max(1) as f64 })
                        .collect()
                })
                .collect(),
            emission: (0..k)
                .map(|_| (0..f).map(|_| 0.2 + 0.6 * unit(rng)).collect())
                .collect(),
            trace: Vec::new(),
        };
        let mut last = f64::NEG_INFINITY;
        for _ in 0..DBN_MAX_ITERATIONS {
            dbn = dbn.em_step(seqs);
            let obj = dbn.log_likelihood(seqs) + dbn.log_prior();
            dbn.trace.push(obj);
            if (obj - last).abs() <= 1e-7 * obj.abs().max(1.0) {
                break;
            }
            last = obj;
        }
        dbn
    }

    /// One EM (MAP) step: expected counts by forward-backward, then the
    /// posterior mode of the parameters.
    fn em_step(&self, seqs: &[Vec<PublicFeatures>]) -> Dbn {
        let k = self.states();
        let f = PUBLIC_FEATURE_COUNT;
        let mut init = vec![0.0; k];
        let mut trans = vec![vec![0.0; k]; k];
        let mut occ = vec![0.0; k];
        let mut ones = vec![vec![0.0; f]; k];
        for seq in seqs {
            let t_len = seq.len();
            if t_len == 0 {
                continue;
            }
            let emit: Vec<Vec<f64>> = seq.iter().map(|&x| (0..k).map(|s| self.emit(s, x)).collect()).collect();
            // Scaled forward.
            let mut alpha = vec![vec![0.0; k]; t_len];
            let mut scale = vec![0.0; t_len];
            for t in 0..t_len {
                for s in 0..k {
                    let prior = if t == 0 {
                        self.initial[s]
                    } else {
                        (0..k).map(|r| alpha[t - 1][r] * self.transition[r][s]).sum()
                    };
                    alpha[t][s] = prior * emit[t][s];
                }
                scale[t] = alpha[t].iter().sum::<f64>().max(1e-300);
                for s in 0..k {
                    alpha[t][s] /= scale[t];
                }
            }
            // Scaled backward.
            let mut beta = vec![vec![1.0; k]; t_len];
            for t in (0..t_len - 1).rev() {
                for s in 0..k {
                    beta[t][s] = (0..k)
                        .map(|r| self.transition[s][r] * emit[t + 1][r] * beta[t + 1][r])
                        .sum::<f64>()
                        / scale[t + 1];
                }
            }
            for t in 0..t_len {
                let gamma: Vec<f64> = (0..k).map(|s| alpha[t][s] * beta[t][s]).collect();
                let g_sum: f64 = gamma.iter().sum::<f64>().max(1e-300);
                for s in 0..k {
                    let g = gamma[s] / g_sum;
                    if t == 0 {
                        init[s] += g;
                    }
                    occ[s] += g;
                    for (j, o) in ones[s].iter_mut().enumerate() {
                        if seq[t] >> j & 1 == 1 {
                            *o += g;
                        }
                    }
                }
                if t + 1 < t_len {
                    for s in 0..k {
                        for r in 0..k {
                            trans[s][r] +=
                                alpha[t][s] * self.transition[s][r] * emit[t + 1][r] * beta[t + 1][r] / scale[t + 1];
                        }
                    }
                }
            }
        }
        // Posterior modes: Dirichlet(2) adds one to each count, Beta(2, 2)
        // one success and one failure.
        let init_sum: f64 = init.iter().sum::<f64>() + k as f64;
        Dbn {
            initial: init.iter().map(|v| (v + 1.0) / init_sum).collect(),
            transition: trans
                .iter()
                .map(|row| {
                    let s: f64 = row.iter().sum::<f64>() + k as f64;
                    row.iter().map(|v| (v + 1.0) / s).collect()
                })
                .collect(),
            emission: (0..k)
                .map(|s| ones[s].iter().map(|o| (o + 1.0) / (occ[s] + 2.0)).collect())
                .collect(),
            trace: self.trace.clone(),
        }
    }
}
