//! Multi-class linear discriminant analysis: class means, one pooled
//! covariance, class priors. Class k scores
//! d_k(x) = x' S^-1 m_k - m_k' S^-1 m_k / 2 + ln p_k; the highest score wins.

use serde::{Deserialize, Serialize};

use crate::data::{CLASSES, FEATURES, FitError, Sample, check};

type Vector = [f64; FEATURES];
type Matrix = [[f64; FEATURES]; FEATURES];

/// A fitted MDA classifier: one linear score per class present in training.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mda {
    /// Per class: (class, weights S^-1 m_k, intercept).
    pub scores: Vec<(u8, Vector, f64)>,
}

impl Mda {
    pub fn fit(samples: &[Sample]) -> Result<Mda, FitError> {
        check(samples, CLASSES + 2)?;
        let mut n = [0usize; CLASSES];
        let mut means = [[0.0; FEATURES]; CLASSES];
        for s in samples {
            n[s.label as usize] += 1;
            for j in 0..FEATURES {
                means[s.label as usize][j] += s.x[j];
            }
        }
        let present: Vec<usize> = (0..CLASSES).filter(|&k| n[k] > 0).collect();
        for &k in &present {
            for j in 0..FEATURES {
                means[k][j] /= n[k] as f64;
            }
        }
        // Pooled within-class covariance, divided by n - K as the textbook (and scikit-learn) do.
        let mut cov = [[0.0; FEATURES]; FEATURES];
        for s in samples {
            let m = &means[s.label as usize];
            for a in 0..FEATURES {
                let da = s.x[a] - m[a];
                for b in 0..FEATURES {
                    cov[a][b] += da * (s.x[b] - m[b]);
                }
            }
        }
        let dof = (samples.len() - present.len()).max(1) as f64;
        for row in cov.iter_mut() {
            for v in row.iter_mut() {
                *v /= dof;
            }
        }
        let total = samples.len() as f64;
        let scores = present
            .iter()
            .map(|&k| {
                let w = solve(&cov, &means[k]);
                let intercept = -0.5 * dot(&w, &means[k]) + (n[k] as f64 / total).ln();
                (k as u8, w, intercept)
            })
            .collect();
        Ok(Mda { scores })
    }

    /// The predicted class.
    pub fn predict(&self, x: &Vector) -> u8 {
        let mut best = (f64::NEG_INFINITY, 0u8);
        for (k, w, b) in &self.scores {
            let d = dot(w, x) + b;
            if d > best.0 {
                best = (d, *k);
            }
        }
        best.1
    }
}

fn dot(a: &Vector, b: &Vector) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solves S w = m by Cholesky. A singular S (a feature constant within every
/// class) gets a ridge of 1e-9 of its mean diagonal, which leaves the
/// discriminants of the other features unchanged in effect.
fn solve(s: &Matrix, m: &Vector) -> Vector {
    let scale = (0..FEATURES).map(|i| s[i][i]).sum::<f64>() / FEATURES as f64;
    let mut ridge = 0.0;
    loop {
        let mut a = *s;
        for (i, row) in a.iter_mut().enumerate() {
            row[i] += ridge;
        }
        if let Some(l) = cholesky(&a) {
            // Forward then back substitution.
            let mut y = [0.0; FEATURES];
            for i in 0..FEATURES {
                y[i] = (m[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
            }
            let mut x = [0.0; FEATURES];
            for i in (0..FEATURES).rev() {
                x[i] = (y[i] - (i + 1..FEATURES).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
            }
            return x;
        }
        ridge = if ridge == 0.0 {
            1e-9 * scale.max(1e-12)
        } else {
            ridge * 10.0
        };
    }
}

fn cholesky(a: &Matrix) -> Option<Matrix> {
    let mut l = [[0.0; FEATURES]; FEATURES];
    for i in 0..FEATURES {
        for j in 0..=i {
            let sum: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = a[i][i] - sum;
                if d <= 1e-300 || !d.is_finite() {
                    return None;
                }
                l[i][j] = d.sqrt();
            } else {
                l[i][j] = (a[i][j] - sum) / l[j][j];
            }
        }
    }
    Some(l)
}
