//! Adaptive effort's race (docs/search.md, "Adaptive effort"): the plays'
//! per-world root values of a decision so far, and whether its best play is
//! decided.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::search::{FullDecision, best_of};

/// Worlds the adaptive stop always searches.
pub const ADAPTIVE_MIN_WORLDS: usize = 4;

/// Adaptive effort and the confidence it states: a decision stops adding
/// worlds once its best play leads every other with this one-sided
/// confidence (docs/search.md, "Adaptive effort"). A level in thousandths,
/// above 0.5 and below 1, made only by [`Adaptive::with_confidence`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Adaptive {
    permille: u16,
}

/// A confidence that is not a level adaptive effort takes (the value given).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("a confidence above 0.5 and below 1, in thousandths (0.95, 0.99, 0.999)")]
pub struct ConfidenceError(pub f64);

impl Adaptive {
    /// The default level: 99% (`adaptive = true`).
    pub const DEFAULT: Adaptive = Adaptive { permille: 990 };

    /// Adaptive effort at `confidence`, a whole number of thousandths
    /// strictly between 0.5 and 1 (0.95, 0.99, 0.999).
    pub fn with_confidence(confidence: f64) -> Result<Adaptive, ConfidenceError> {
        let permille = (confidence * 1000.0).round();
        if !(confidence > 0.5 && confidence < 1.0) || (permille - confidence * 1000.0).abs() > 1e-6 {
            return Err(ConfidenceError(confidence));
        }
        Ok(Adaptive {
            permille: permille as u16,
        })
    }

    /// The stated confidence (0.99 for [`Adaptive::DEFAULT`]).
    pub fn confidence(self) -> f64 {
        self.permille as f64 / 1000.0
    }

    /// The one-sided standard normal quantile of the confidence, rounded to
    /// three decimals: 2.326 at 99%, 1.645 at 95%.
    pub fn z(self) -> f64 {
        let q = Normal::standard().inverse_cdf(self.confidence());
        (q * 1000.0).round() / 1000.0
    }
}

impl std::fmt::Display for Adaptive {
    /// The confidence in percent: `99%`, `99.9%`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.permille % 10 {
            0 => write!(f, "{}%", self.permille / 10),
            d => write!(f, "{}.{d}%", self.permille / 10),
        }
    }
}

/// The per-world root values of a decision so far: their sums and cross
/// products (for paired differences), on the stack.
pub(super) struct Race {
    n: usize,
    /// The adaptive stop's quantile (0 without one).
    z: f64,
    /// Whether the cross products are kept (only the adaptive stop needs them).
    paired: bool,
    /// Worlds added.
    pub(super) m: usize,
    /// Each play's sum of values over the worlds.
    pub(super) sum: [f64; 64],
    /// `cross[i][j]`: the sum over worlds of `v_i * v_j`.
    cross: [[f64; 64]; 64],
    /// Whether plays `i` and `j` had different values in some world.
    differ: [[bool; 64]; 64],
}

impl Race {
    /// A race over `n` plays; the cross products are kept only for an
    /// adaptive stop.
    pub(super) fn new(n: usize, adaptive: Option<Adaptive>) -> Race {
        Race {
            n,
            z: adaptive.map_or(0.0, Adaptive::z),
            paired: adaptive.is_some(),
            m: 0,
            sum: [0.0; 64],
            cross: [[0.0; 64]; 64],
            differ: [[false; 64]; 64],
        }
    }

    /// The decision over the worlds added: each play's mean value (ties to
    /// the first), with `nodes` searched for it.
    pub(super) fn decision(&self, nodes: u64) -> FullDecision {
        let k = self.m as f64;
        let mut d = best_of(self.n, |i| self.sum[i] / k);
        d.nodes = nodes;
        d
    }

    pub(super) fn add(&mut self, v: &[f64]) {
        self.m += 1;
        for i in 0..self.n {
            self.sum[i] += v[i];
            if !self.paired {
                continue;
            }
            for j in 0..self.n {
                self.cross[i][j] += v[i] * v[j];
                self.differ[i][j] |= (v[i] - v[j]).abs() > 1e-9;
            }
        }
    }

    /// Whether the leader (the best mean, ties to the first) is ahead of
    /// every other play with the stated confidence, or tied with it in every
    /// world.
    pub(super) fn decided(&self) -> bool {
        if self.m < ADAPTIVE_MIN_WORLDS {
            return false;
        }
        let m = self.m as f64;
        let lead = (0..self.n).fold(0, |b, i| if self.sum[i] > self.sum[b] + 1e-9 { i } else { b });
        (0..self.n).filter(|&j| j != lead).all(|j| {
            if !self.differ[lead][j] {
                return true;
            }
            let mean = (self.sum[lead] - self.sum[j]) / m;
            let square = (self.cross[lead][lead] + self.cross[j][j] - 2.0 * self.cross[lead][j]) / m;
            let var = (square - mean * mean).max(0.0) * m / (m - 1.0);
            mean - self.z * (var / m).sqrt() > 0.0
        })
    }
}
