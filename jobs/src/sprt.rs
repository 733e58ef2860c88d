//! Paired deals as one statistic, and the sequential probability ratio
//! test (`[stop] sprt`) that ends an A-versus-B experiment once it decides.
//!
//! A pair is a deal (and repeat) played twice with the sides swapped: game
//! indices `2k` and `2k + 1` of an agents grid with `paired = true`. Its
//! score is the agent's points over the two games (win 1, tie 1/2, loss 0),
//! one of 0, 1/2, 1, 3/2, 2: the pentanomial counts (fishtest, cutechess
//! `-repeat`).
//!
//! The test is the generalized SPRT fishtest uses now (Michel Van den
//! Bergh's `LLR_alt2`): the log-likelihood ratio of the maximum-likelihood
//! distributions of the pair statistic whose means are the two hypotheses,
//! each fitted to the pairs' empirical distribution (docs/analysis.md,
//! "Agents, Elo and SPRT"). On Elo the statistic is a pair's score over 2
//! (values 0, 1/4, 1/2, 3/4, 1) and the hypotheses `1 / (1 + 10^(-elo /
//! 400))`; an empty pentanomial category counts as 0.001 pairs, as
//! fishtest's `regularize` does, so pairs that are all draws (two identical
//! agents) accept H0 instead of dividing by a zero variance. On the score
//! difference the statistic is a pair's mean score difference, with the
//! same small weight at two points outside both the pairs and the
//! hypotheses. The test stops at `ln(beta / (1 - alpha))` (H0 accepted) or
//! `ln((1 - beta) / alpha)` (H1 accepted).
//!
//! Determinism: the test is evaluated after every pair, in game order,
//! over the shards before the first one not yet done; the shard holding
//! the pair where it decides is the experiment's last. So the pair where
//! the test stops (and so every row the experiment keeps) is a function of
//! the spec, whatever order workers finish in. With `[stop]` a shard holds
//! at most [`MAX_STOP_SHARD_GAMES`] games, so what is played past the
//! decision is small.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::rows::GameRow;
use crate::spec::{Sprt, SprtOn};

pub use crate::spec::MAX_STOP_SHARD_GAMES;

/// How the coordinator's refusal of a completion begins when the SPRT
/// stopped the experiment before the task's shard (the worker says so
/// instead of warning of a stale lease).
pub const STOPPED: &str = "stopped by the SPRT";

/// What an empty category of the empirical distribution counts as, in
/// pairs (fishtest's `regularize`).
const REGULARIZE: f64 = 1e-3;

/// The paired outcomes of some shards: pentanomial counts and the moments
/// of the per-pair statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PairStats {
    /// Pairs whose agent scored 0, 1/2, 1, 3/2 and 2 points.
    pub penta: [u64; 5],
    /// Sum of the pairs' mean score differences (`(d1 + d2) / 2`, points
    /// per game).
    pub diff_sum: f64,
    /// Sum of their squares.
    pub diff_sumsq: f64,
}

/// A pair's points (0 to 4 half points) from its two score differences.
fn pair_points(d1: i32, d2: i32) -> usize {
    let pts = |d: i32| match d.signum() {
        1 => 2,
        0 => 1,
        _ => 0,
    };
    pts(d1) + pts(d2)
}

impl PairStats {
    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.penta.iter().sum()
    }

    /// Adds another's counts.
    pub fn merge(&mut self, o: &PairStats) {
        for (a, b) in self.penta.iter_mut().zip(o.penta) {
            *a += b;
        }
        self.diff_sum += o.diff_sum;
        self.diff_sumsq += o.diff_sumsq;
    }

    /// Adds one pair: the two games' score differences (agent minus
    /// opponent).
    pub fn add_pair(&mut self, d1: i32, d2: i32) {
        self.penta[pair_points(d1, d2)] += 1;
        let m = (d1 as f64 + d2 as f64) / 2.0;
        self.diff_sum += m;
        self.diff_sumsq += m * m;
    }

    /// The agent's mean score per game, 0 to 1 (ties a half).
    pub fn score(&self) -> f64 {
        let n = self.pairs() as f64;
        self.penta
            .iter()
            .enumerate()
            .map(|(k, &c)| k as f64 / 4.0 * c as f64)
            .sum::<f64>()
            / n
    }

    /// Mean and (population) variance of a statistic: pair score / 2, or
    /// the pair's mean score difference.
    pub fn moments(&self, on: SprtOn) -> (f64, f64) {
        let n = self.pairs() as f64;
        match on {
            SprtOn::Elo => {
                let m = self.score();
                let m2 = self
                    .penta
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| (k as f64 / 4.0).powi(2) * c as f64)
                    .sum::<f64>()
                    / n;
                (m, (m2 - m * m).max(0.0))
            }
            SprtOn::ScoreDiff => {
                let m = self.diff_sum / n;
                (m, (self.diff_sumsq / n - m * m).max(0.0))
            }
        }
    }

    /// The logistic Elo of the pairs' score, with its 95% interval (from
    /// the pentanomial variance: a pair is one observation). See
    /// [`logistic_elo`] for the clamp at +-1000.
    pub fn elo(&self) -> (f64, f64, f64) {
        let n = self.pairs() as f64;
        let (m, v) = self.moments(SprtOn::Elo);
        let half = 1.959_964 * (v / n).sqrt();
        (logistic_elo(m), logistic_elo(m - half), logistic_elo(m + half))
    }
}

/// The most Elo [`logistic_elo`] reports either way: a score of 0 or 1 has
/// no finite Elo, and the report says so where a value sits at it.
pub const ELO_CLAMP: f64 = 1000.0;

/// Logistic Elo of a score `s` (0 to 1): `-400 log10(1 / s - 1)`, clamped
/// to +-[`ELO_CLAMP`] at the ends.
pub fn logistic_elo(s: f64) -> f64 {
    let s = s.clamp(1e-6, 1.0 - 1e-6);
    (-400.0 * (1.0 / s - 1.0).log10()).clamp(-ELO_CLAMP, ELO_CLAMP)
}

/// The score an Elo difference expects: `1 / (1 + 10^(-elo / 400))`.
pub fn elo_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// A shard's complete pairs in game order: each pair's two score
/// differences (agent minus opponent), the first game's seating first.
/// This is what the coordinator keeps with a done games task of an SPRT
/// experiment (as JSON), and what the test walks pair by pair.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardPairs {
    /// Each pair's two score differences, in game order.
    pub pairs: Vec<[i32; 2]>,
}

impl ShardPairs {
    /// The pairs of a shard's rows (an agents grid with `paired = true`:
    /// games `2k` and `2k + 1` are one deal's two seatings), in game
    /// order. A row without its partner in `rows` is not counted.
    pub fn of_rows<'a>(rows: impl IntoIterator<Item = &'a GameRow>) -> ShardPairs {
        let mut sorted: Vec<(u64, i32)> = rows.into_iter().map(|r| (r.game_index, r.score_diff)).collect();
        sorted.sort_unstable();
        let pairs = sorted
            .windows(2)
            .filter(|w| w[0].0.is_multiple_of(2) && w[1].0 == w[0].0 + 1)
            .map(|w| [w[0].1, w[1].1])
            .collect();
        ShardPairs { pairs }
    }

    /// Their pentanomial counts and moments.
    pub fn stats(&self) -> PairStats {
        let mut s = PairStats::default();
        for [a, b] in &self.pairs {
            s.add_pair(*a, *b);
        }
        s
    }
}

/// The pairs of some rows, summed (see [`ShardPairs::of_rows`]).
pub fn shard_stats<'a>(rows: impl IntoIterator<Item = &'a GameRow>) -> PairStats {
    ShardPairs::of_rows(rows).stats()
}

/// What the test has counted: the pentanomial counts and moments, and the
/// pairs' mean score differences as a histogram (in half points, since a
/// pair's mean of two whole differences is a multiple of 1/2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// The pentanomial counts and moments.
    pub stats: PairStats,
    half_diffs: BTreeMap<i64, u64>,
}

impl Tally {
    /// Counts one pair.
    pub fn add(&mut self, d1: i32, d2: i32) {
        self.stats.add_pair(d1, d2);
        *self.half_diffs.entry(d1 as i64 + d2 as i64).or_default() += 1;
    }

    /// A tally of pentanomial counts alone (the Elo test needs no more).
    pub fn of_penta(penta: [u64; 5]) -> Tally {
        Tally {
            stats: PairStats {
                penta,
                ..PairStats::default()
            },
            half_diffs: BTreeMap::new(),
        }
    }
}

/// The generalized log-likelihood ratio of `N` observations whose
/// empirical distribution is `pdf` (value, weight; weights need not sum to
/// 1, their sum is `N`): `N * sum p_i ln(p1_i / p0_i)`, with `pk` the
/// maximum-likelihood distribution on the same values whose mean is `sk`.
/// Both means must lie strictly inside the values' range.
pub fn gsprt_llr(pdf: &[(f64, f64)], s0: f64, s1: f64) -> f64 {
    let n: f64 = pdf.iter().map(|(_, w)| w).sum();
    if n <= 0.0 {
        return 0.0;
    }
    // p_mle_i = p_i / (1 + x (a_i - s)) with x solving the secular
    // equation, so ln(p1_i / p0_i) = ln(1 + x0 (a_i - s0)) - ln(1 + x1 (a_i - s1)).
    let (x0, x1) = (secular(pdf, n, s0), secular(pdf, n, s1));
    pdf.iter()
        .map(|&(a, w)| w * ((1.0 + x0 * (a - s0)).ln() - (1.0 + x1 * (a - s1)).ln()))
        .sum()
}

/// The root `x` of `sum p_i (a_i - s) / (1 + x (a_i - s)) = 0` on the
/// interval where every `1 + x (a_i - s)` is positive (the function
/// decreases there), by bisection.
fn secular(pdf: &[(f64, f64)], n: f64, s: f64) -> f64 {
    let (lo_a, hi_a) = pdf.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &(a, _)| {
        (l.min(a), h.max(a))
    });
    if !(lo_a < s && s < hi_a) {
        return 0.0;
    }
    let f = |x: f64| -> f64 { pdf.iter().map(|&(a, w)| w / n * (a - s) / (1.0 + x * (a - s))).sum() };
    // 1 + x (a - s) > 0 for every a: x in (-1 / (hi - s), 1 / (s - lo)).
    let (mut lo, mut hi) = (-1.0 / (hi_a - s), 1.0 / (s - lo_a));
    let shrink = 1e-12;
    lo += (hi - lo) * shrink;
    hi -= (hi - lo) * shrink;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-15 * (1.0 + mid.abs()) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// What the test says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// H1 accepted: the agent is better by at least H1.
    H1,
    /// H0 accepted.
    H0,
    /// Neither bound reached (yet).
    Undecided,
}

impl Verdict {
    /// In words: `H1 accepted`, `H0 accepted`, `undecided`.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::H1 => "H1 accepted",
            Verdict::H0 => "H0 accepted",
            Verdict::Undecided => "undecided",
        }
    }
}

impl Sprt {
    /// The statistic's values under H0 and H1.
    pub fn hypotheses(&self) -> (f64, f64) {
        match self.on {
            SprtOn::Elo => (elo_score(self.h0), elo_score(self.h1)),
            SprtOn::ScoreDiff => (self.h0, self.h1),
        }
    }

    /// The lower (accept H0) and upper (accept H1) bounds of the LLR.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of H1 over H0 after the pairs counted in
    /// `t` (0 before any pair): the GSPRT of the module's text.
    pub fn llr(&self, t: &Tally) -> f64 {
        if t.stats.pairs() == 0 {
            return 0.0;
        }
        let (mu0, mu1) = self.hypotheses();
        let pdf: Vec<(f64, f64)> = match self.on {
            SprtOn::Elo => t
                .stats
                .penta
                .iter()
                .enumerate()
                .map(|(k, &c)| (k as f64 / 4.0, if c == 0 { REGULARIZE } else { c as f64 }))
                .collect(),
            SprtOn::ScoreDiff => {
                let values = t.half_diffs.iter().map(|(&h, &c)| (h as f64 / 2.0, c as f64));
                let (obs_lo, obs_hi) = (
                    t.half_diffs.keys().next().map_or(0.0, |&h| h as f64 / 2.0),
                    t.half_diffs.keys().next_back().map_or(0.0, |&h| h as f64 / 2.0),
                );
                // Two regularizing points beyond both the pairs and the
                // hypotheses, by the wider of their spreads (at least 1).
                let w = (obs_hi - obs_lo).max(mu1 - mu0).max(1.0);
                let lo = obs_lo.min(mu0) - w;
                let hi = obs_hi.max(mu1) + w;
                std::iter::once((lo, REGULARIZE))
                    .chain(values)
                    .chain(std::iter::once((hi, REGULARIZE)))
                    .collect()
            }
        };
        gsprt_llr(&pdf, mu0, mu1)
    }

    /// The verdict at `llr`.
    pub fn verdict(&self, llr: f64) -> Verdict {
        let (lo, hi) = self.bounds();
        if llr >= hi {
            Verdict::H1
        } else if llr <= lo {
            Verdict::H0
        } else {
            Verdict::Undecided
        }
    }
}

/// One point of the LLR's trace: after `pairs` pairs in all, the last of
/// them in `shard`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// The shard holding the pair just counted.
    pub shard: u64,
    /// Pairs counted up to it.
    pub pairs: u64,
    /// The LLR then.
    pub llr: f64,
}

/// The test walked pair by pair in game order, shard after shard: the
/// coordinator, the worker's report stage and the report all step through
/// one of these, so they stop at the same pair (and so the same shard).
#[derive(Clone, Debug)]
pub struct Walk {
    sprt: Sprt,
    /// The pairs counted so far (up to the deciding one).
    pub tally: Tally,
    /// The LLR after each pair counted (empty for an untraced walk).
    pub trace: Vec<TracePoint>,
    traced: bool,
    /// Shards stepped through.
    pub shards: u64,
    /// The LLR after the last pair counted.
    pub llr: f64,
    /// The verdict after the last pair counted.
    pub verdict: Verdict,
}

impl Walk {
    /// A walk that has counted nothing and keeps the LLR after every pair
    /// (the report's trace).
    pub fn new(sprt: Sprt) -> Walk {
        Walk {
            sprt,
            tally: Tally::default(),
            trace: Vec::new(),
            traced: true,
            shards: 0,
            llr: 0.0,
            verdict: Verdict::Undecided,
        }
    }

    /// A walk that keeps no trace (the coordinator's: its memory does not
    /// grow with the pairs).
    pub fn untraced(sprt: Sprt) -> Walk {
        Walk {
            traced: false,
            ..Walk::new(sprt)
        }
    }

    /// The pairs counted so far.
    pub fn total(&self) -> &PairStats {
        &self.tally.stats
    }

    /// Counts the next shard's pairs one by one, in order, until the test
    /// decides (the pairs after that one are not counted); the verdict.
    /// Stepping a decided walk changes nothing.
    pub fn step(&mut self, shard: &ShardPairs) -> Verdict {
        if self.verdict != Verdict::Undecided {
            return self.verdict;
        }
        let index = self.shards;
        self.shards += 1;
        for &[a, b] in &shard.pairs {
            self.tally.add(a, b);
            self.llr = self.sprt.llr(&self.tally);
            if self.traced {
                self.trace.push(TracePoint {
                    shard: index,
                    pairs: self.tally.stats.pairs(),
                    llr: self.llr,
                });
            }
            self.verdict = self.sprt.verdict(self.llr);
            if self.verdict != Verdict::Undecided {
                break;
            }
        }
        self.verdict
    }

    /// The shard where the test decided (the experiment's last), if it did.
    pub fn decided_at(&self) -> Option<u64> {
        (self.verdict != Verdict::Undecided).then(|| self.shards - 1)
    }
}
