//! A multinomial (conditional) logit over the features of the legal plays:
//! P(play i) = exp(w . x_i) / sum_j exp(w . x_j), the weights fitted by
//! Newton's method on the log likelihood with an L2 penalty
//! ([`LOGIT_L2`] / 2 x |w|^2; the deterministic strategies separate the
//! data, so without it the weights would grow without end).

use serde::{Deserialize, Serialize};

use super::super::eval::solve_symmetric;
use super::features::{Decision, PLAY_FEATURE_COUNT, PlayFeatures};

/// The L2 penalty on the logit's weights.
pub const LOGIT_L2: f64 = 1.0;

/// Newton steps at most.
const MAX_STEPS: usize = 100;

/// A fitted conditional logit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Logit {
    /// One weight per feature of [`super::PLAY_FEATURES`].
    pub weights: Vec<f64>,
    /// Newton steps taken.
    pub steps: u32,
    /// The penalised log likelihood reached.
    pub objective: f64,
}

/// Softmax of `w . x` over `plays`, into `out`.
fn softmax(w: &[f64], plays: &[PlayFeatures], out: &mut [f64]) {
    let mut max = f64::NEG_INFINITY;
    for (o, f) in out.iter_mut().zip(plays) {
        *o = w.iter().zip(&f.x).map(|(a, b)| a * b).sum();
        max = max.max(*o);
    }
    let mut sum = 0.0;
    for o in &mut out[..plays.len()] {
        *o = (*o - max).exp();
        sum += *o;
    }
    for o in &mut out[..plays.len()] {
        *o /= sum;
    }
}

/// The penalised log likelihood of `w` on the choices of `decisions`.
pub fn logit_objective(w: &[f64], decisions: &[&Decision]) -> f64 {
    let mut p = [0.0f64; 64];
    let mut ll = 0.0;
    for d in decisions {
        softmax(w, &d.plays, &mut p);
        ll += p[d.chosen as usize].max(1e-300).ln();
    }
    ll - LOGIT_L2 / 2.0 * w.iter().map(|v| v * v).sum::<f64>()
}

impl Logit {
    /// Fits on the choices among `decisions` (forced plays are skipped).
    pub fn fit<'a>(decisions: impl Iterator<Item = &'a Decision>) -> Logit {
        let ds: Vec<&Decision> = decisions.filter(|d| d.is_choice()).collect();
        let n = PLAY_FEATURE_COUNT;
        let mut w = vec![0.0f64; n];
        let mut p = [0.0f64; 64];
        let mut steps = 0;
        let mut objective = logit_objective(&w, &ds);
        for _ in 0..MAX_STEPS {
            steps += 1;
            // Gradient and (negated) Hessian of the penalised log likelihood.
            let mut g = vec![0.0f64; n];
            let mut h = vec![0.0f64; n * n];
            for d in &ds {
                softmax(&w, &d.plays, &mut p);
                let mut mean = [0.0f64; PLAY_FEATURE_COUNT];
                for (pi, f) in p.iter().zip(&d.plays) {
                    for k in 0..n {
                        mean[k] += pi * f.x[k];
                    }
                }
                let chosen = &d.plays[d.chosen as usize];
                for k in 0..n {
                    g[k] += chosen.x[k] - mean[k];
                }
                for (pi, f) in p.iter().zip(&d.plays) {
                    for a in 0..n {
                        let da = f.x[a] - mean[a];
                        if da == 0.0 {
                            continue;
                        }
                        for b in 0..n {
                            h[a * n + b] += pi * da * (f.x[b] - mean[b]);
                        }
                    }
                }
            }
            for k in 0..n {
                g[k] -= LOGIT_L2 * w[k];
                h[k * n + k] += LOGIT_L2;
            }
            let Some(step) = solve_symmetric(&mut h, &mut g, n) else {
                break;
            };
            // Halve the step until the objective does not fall.
            let mut scale = 1.0;
            let mut next = w.clone();
            let mut next_obj = objective;
            for _ in 0..30 {
                next = w.iter().zip(&step).map(|(a, s)| a + scale * s).collect();
                next_obj = logit_objective(&next, &ds);
                if next_obj >= objective - 1e-12 {
                    break;
                }
                scale /= 2.0;
            }
            let change = w.iter().zip(&next).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            w = next;
            objective = next_obj;
            if change < 1e-10 {
                break;
            }
        }
        Logit {
            weights: w,
            steps,
            objective,
        }
    }

    /// The probability of each play of `plays` being made (summing to 1).
    pub fn probs(&self, plays: &[PlayFeatures], out: &mut [f64]) {
        softmax(&self.weights, plays, out);
    }
}
