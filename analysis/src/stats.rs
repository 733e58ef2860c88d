//! The significance tests of the report: the thesis's own (Eq. 10, Eq. 11)
//! and their paired counterparts. Large-sample normal tests throughout, as
//! the thesis uses; p-values from the normal and chi-square tails, which
//! statrs computes.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::nan_from_null;

/// z of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;
/// z of a one-sided 95% test.
pub const Z95_ONE: f64 = 1.644_853_626_951_472_2;

/// P(X > x) for X chi-square with `df` degrees of freedom (NaN for a
/// `df` that is not positive): statrs's, from the regularized upper
/// incomplete gamma function, good to about 1e-14 relative.
pub fn chi_square_sf(df: f64, x: f64) -> f64 {
    ChiSquared::new(df).map_or(f64::NAN, |d| d.sf(x))
}

/// P(Z > z) for a standard normal Z. z^2 is chi-square with one degree of
/// freedom, so the two-sided tail P(|Z| > |z|) is [`chi_square_sf`]`(1,
/// z^2)`: half of it above a positive z, its complement below a negative
/// one. Through the chi-square rather than statrs's `Normal::sf`: that one
/// goes through statrs's `erfc`, which the 0.19 release computes with
/// interval constants cut to 10 digits, off by up to 1e-10 relative (fixed
/// upstream, statrs-dev/statrs#412, not released); the gamma function is
/// good to about 1e-14, as SciPy's values in the tests check.
pub fn normal_sf(z: f64) -> f64 {
    let two_sided = chi_square_sf(1.0, z * z);
    if z >= 0.0 {
        0.5 * two_sided
    } else {
        1.0 - 0.5 * two_sided
    }
}

/// Running moments of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Moments {
    pub n: u64,
    pub sum: f64,
    pub sum_sq: f64,
}

impl Moments {
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        self.sum_sq += x * x;
    }
    pub fn mean(&self) -> f64 {
        self.sum / self.n.max(1) as f64
    }
    /// Population variance (divides by n), as Eq. 10 uses.
    pub fn var_pop(&self) -> f64 {
        let m = self.mean();
        (self.sum_sq / self.n.max(1) as f64 - m * m).max(0.0)
    }
    /// Sample variance (divides by n - 1).
    pub fn var_sample(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        self.var_pop() * self.n as f64 / (self.n - 1) as f64
    }
}

/// Eq. 10: one-tailed difference of means, H1: mean(M*) - mean(EM) > 0.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffOfMeans {
    #[serde(deserialize_with = "nan_from_null")]
    pub diff: f64,
    /// sqrt(var_mstar / n + var_em / n), population variances.
    #[serde(deserialize_with = "nan_from_null")]
    pub sigma: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub z: f64,
    /// One-tailed p-value, P(Z > z).
    #[serde(deserialize_with = "nan_from_null")]
    pub p: f64,
    pub significant: bool,
}

pub fn diff_of_means(mstar: &Moments, em: &Moments) -> DiffOfMeans {
    let diff = mstar.mean() - em.mean();
    let sigma = (mstar.var_pop() / mstar.n.max(1) as f64 + em.var_pop() / em.n.max(1) as f64).sqrt();
    let z = if sigma > 0.0 { diff / sigma } else { f64::NAN };
    let p = if z.is_nan() { f64::NAN } else { normal_sf(z) };
    DiffOfMeans {
        diff,
        sigma,
        z,
        p,
        significant: z > Z95_ONE,
    }
}

/// Eq. 11: two-tailed binomial test of M*'s win/tie rate against EM's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BinomialTest {
    /// M* wins/ties minus EM wins/ties.
    pub diff: i64,
    /// EM's win/tie rate (the thesis's p).
    #[serde(deserialize_with = "nan_from_null")]
    pub p0: f64,
    /// M*'s win/tie rate (X / n).
    #[serde(deserialize_with = "nan_from_null")]
    pub rate: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub z: f64,
    /// Two-tailed p-value.
    #[serde(deserialize_with = "nan_from_null")]
    pub p: f64,
    pub significant: bool,
}

pub fn binomial_test(mstar_wins: u64, em_wins: u64, n: u64) -> BinomialTest {
    let n_f = n.max(1) as f64;
    let p0 = em_wins as f64 / n_f;
    let rate = mstar_wins as f64 / n_f;
    let se = (p0 * (1.0 - p0) / n_f).sqrt();
    let z = if se > 0.0 { (rate - p0) / se } else { f64::NAN };
    let p = if z.is_nan() { f64::NAN } else { 2.0 * normal_sf(z.abs()) };
    BinomialTest {
        diff: mstar_wins as i64 - em_wins as i64,
        p0,
        rate,
        z,
        p,
        significant: z.abs() > Z95,
    }
}

/// The paired test of score differences: d = M* - EM on the same (starting
/// state, repeat), which faced the same deal and draws.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairedTest {
    pub n: u64,
    #[serde(deserialize_with = "nan_from_null")]
    pub mean: f64,
    /// Sample standard deviation of d.
    #[serde(deserialize_with = "nan_from_null")]
    pub sd: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_high: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub z: f64,
    /// Two-sided p-value of mean(d) = 0.
    #[serde(deserialize_with = "nan_from_null")]
    pub p: f64,
    pub significant: bool,
}

impl PairedTest {
    /// Whether every pair came out the same (no difference at all).
    pub fn all_equal(&self) -> bool {
        self.sd == 0.0 && self.mean == 0.0
    }
}

pub fn paired_test(d: &Moments) -> PairedTest {
    let mean = d.mean();
    let sd = d.var_sample().sqrt();
    let se = sd / (d.n.max(1) as f64).sqrt();
    let z = if se > 0.0 { mean / se } else { f64::NAN };
    let p = if z.is_nan() { f64::NAN } else { 2.0 * normal_sf(z.abs()) };
    PairedTest {
        n: d.n,
        mean,
        sd,
        ci_low: mean - Z95 * se,
        ci_high: mean + Z95 * se,
        z,
        p,
        significant: z.abs() > Z95,
    }
}

/// McNemar's test on paired win/tie outcomes (no continuity correction).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct McNemar {
    /// Pairs where M* won or tied and EM did not.
    pub b: u64,
    /// Pairs where EM won or tied and M* did not.
    pub c: u64,
    /// (b - c)^2 / (b + c), chi-square with one degree of freedom.
    #[serde(deserialize_with = "nan_from_null")]
    pub chi2: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub p: f64,
    pub significant: bool,
}

pub fn mcnemar(b: u64, c: u64) -> McNemar {
    let (bf, cf) = (b as f64, c as f64);
    let chi2 = if b + c > 0 { (bf - cf).powi(2) / (bf + cf) } else { 0.0 };
    let p = if b + c > 0 { chi_square_sf(1.0, chi2) } else { 1.0 };
    McNemar {
        b,
        c,
        chi2,
        p,
        significant: p < 0.05,
    }
}
