//! Adaptive effort's race (docs/search.md, "Adaptive effort"): the plays'
//! per-world root values of a decision so far, and whether its best play is
//! decided.

/// Worlds the adaptive stop always searches.
pub const ADAPTIVE_MIN_WORLDS: usize = 4;
/// The adaptive stop's one-sided normal quantile (99%).
const ADAPTIVE_Z: f64 = 2.326;

/// The per-world root values of a decision so far: their sums and cross
/// products (for paired differences), on the stack.
pub(super) struct Race {
    n: usize,
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
    pub(super) fn new(n: usize, paired: bool) -> Race {
        Race {
            n,
            paired,
            m: 0,
            sum: [0.0; 64],
            cross: [[0.0; 64]; 64],
            differ: [[false; 64]; 64],
        }
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
    /// every other play with 99% confidence, or tied with it in every world.
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
            mean - ADAPTIVE_Z * (var / m).sqrt() > 0.0
        })
    }
}
