//! Seed 004's multivariate (Bernoulli) naive Bayes with chi-squared feature
//! selection, ranking a seat's legal plays.
//!
//! Every legal play of a training decision is a sample: its 0/1 features
//! ([`BINARY_FEATURES`] of [`super::PLAY_FEATURES`]) and a class, 1 if it
//! was the play made, else 0. The `keep` features with the largest
//! chi-squared statistic against the class are kept (ties to the lower
//! index); the classifier is scikit-learn's `BernoulliNB` (Laplace
//! smoothing `alpha` = 1, empirical class priors) over them. A play's
//! probability of being made is P(class 1 | its features), renormalised
//! over the legal plays of the decision.

use serde::{Deserialize, Serialize};

use super::features::{BINARY_FEATURES, Decision, PlayFeatures};

/// How many features the chi-squared selection keeps.
pub const NB_KEEP: usize = 8;

/// A fitted naive Bayes model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NaiveBayes {
    /// The chi-squared statistic of each binary feature against the class.
    pub chi2: Vec<f64>,
    /// The kept features' indices, ascending.
    pub kept: Vec<usize>,
    /// log P(class) for classes 0 (not made) and 1 (made).
    pub log_prior: [f64; 2],
    /// P(feature = 1 | class) per class, per kept feature.
    pub prob: [Vec<f64>; 2],
}

/// The chi-squared statistic of each 0/1 feature of `samples` against the
/// 0/1 class (scikit-learn's `chi2`: the class x feature-present counts
/// against their expectation under independence); 0 where a feature never
/// occurs.
pub fn chi2(samples: &[(&PlayFeatures, bool)]) -> Vec<f64> {
    let n = samples.len() as f64;
    let mut class_n = [0.0f64; 2];
    let mut obs = [[0.0f64; BINARY_FEATURES]; 2];
    let mut feat = [0.0f64; BINARY_FEATURES];
    for (f, y) in samples {
        let c = *y as usize;
        class_n[c] += 1.0;
        for j in 0..BINARY_FEATURES {
            obs[c][j] += f.x[j];
            feat[j] += f.x[j];
        }
    }
    (0..BINARY_FEATURES)
        .map(|j| {
            let mut s = 0.0;
            for c in 0..2 {
                let expected = class_n[c] / n * feat[j];
                if expected > 0.0 {
                    s += (obs[c][j] - expected).powi(2) / expected;
                }
            }
            s
        })
        .collect()
}

impl NaiveBayes {
    /// Fits on the choices among `decisions` (forced plays are skipped).
    pub fn fit<'a>(decisions: impl Iterator<Item = &'a Decision>) -> NaiveBayes {
        let mut samples: Vec<(&PlayFeatures, bool)> = Vec::new();
        for d in decisions.filter(|d| d.is_choice()) {
            for (i, p) in d.plays.iter().enumerate() {
                samples.push((p, i == d.chosen as usize));
            }
        }
        let chi2 = chi2(&samples);
        let mut order: Vec<usize> = (0..BINARY_FEATURES).collect();
        // Largest statistic first; ties to the lower index (a stable sort).
        order.sort_by(|&a, &b| chi2[b].total_cmp(&chi2[a]));
        let mut kept: Vec<usize> = order[..NB_KEEP].to_vec();
        kept.sort_unstable();
        let mut class_n = [0.0f64; 2];
        let mut ones = [vec![0.0f64; kept.len()], vec![0.0f64; kept.len()]];
        for (f, y) in &samples {
            let c = *y as usize;
            class_n[c] += 1.0;
            for (k, &j) in kept.iter().enumerate() {
                ones[c][k] += f.x[j];
            }
        }
        let n = (class_n[0] + class_n[1]).max(1.0);
        let prob = [0, 1].map(|c| ones[c].iter().map(|&o| (o + 1.0) / (class_n[c] + 2.0)).collect());
        NaiveBayes {
            chi2,
            kept,
            log_prior: [0, 1].map(|c| (class_n[c].max(1e-300) / n).ln()),
            prob,
        }
    }

    /// log P(class 0, x) and log P(class 1, x) (scikit-learn's joint log
    /// likelihood).
    pub fn joint_log_likelihood(&self, f: &PlayFeatures) -> [f64; 2] {
        [0, 1].map(|c| {
            let mut s = self.log_prior[c];
            for (k, &j) in self.kept.iter().enumerate() {
                let p = self.prob[c][k];
                s += if f.x[j] > 0.5 { p.ln() } else { (1.0 - p).ln() };
            }
            s
        })
    }

    /// P(class 1 | x): the probability the play is the one made.
    pub fn prob_made(&self, f: &PlayFeatures) -> f64 {
        let [a, b] = self.joint_log_likelihood(f);
        // 1 / (1 + e^(a - b)), stable either way.
        if b >= a {
            1.0 / (1.0 + (a - b).exp())
        } else {
            let e = (b - a).exp();
            e / (1.0 + e)
        }
    }

    /// The probability of each play of `plays` being made (summing to 1).
    pub fn probs(&self, plays: &[PlayFeatures], out: &mut [f64]) {
        let mut sum = 0.0;
        for (o, f) in out.iter_mut().zip(plays) {
            *o = self.prob_made(f).max(1e-300);
            sum += *o;
        }
        for o in &mut out[..plays.len()] {
            *o /= sum;
        }
    }
}
