//! Paired deals as one statistic, and the sequential probability ratio
//! test (`[stop] sprt`) that ends an A-versus-B experiment once it decides.
//!
//! A pair is a deal (and repeat) played twice with the sides swapped: game
//! indices `2k` and `2k + 1` of an agents grid with `paired = true`. Its
//! score is the agent's points over the two games (win 1, tie 1/2, loss 0),
//! one of 0, 1/2, 1, 3/2, 2: the pentanomial counts (fishtest, cutechess
//! `-repeat`). The test uses the normal approximation of the log-likelihood
//! ratio on the pairs' means (Van den Bergh's GSPRT, as fishtest does):
//! `LLR = N (mu1 - mu0) (2 m - mu0 - mu1) / (2 v)` with `m`, `v` the pairs'
//! mean and variance, `mu0`, `mu1` the hypotheses in the statistic's units
//! (a pair's score over 2 for Elo, `1 / (1 + 10^(-elo / 400))`; the pair's
//! mean score difference for `diff`). It stops at `ln(beta / (1 - alpha))`
//! (H0 accepted) or `ln((1 - beta) / alpha)` (H1 accepted).
//!
//! Determinism: the coordinator and the report evaluate the LLR only at
//! shard boundaries in shard order, over the shards before the first one
//! not yet done, so the shard where the test stops (and so every row the
//! experiment keeps) is a function of the spec, whatever order workers
//! finish in.

use serde::{Deserialize, Serialize};

use crate::exec::GameRow;
use crate::spec::{Sprt, SprtOn};

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
        let pts = |d: i32| match d.signum() {
            1 => 2,
            0 => 1,
            _ => 0,
        };
        self.penta[(pts(d1) + pts(d2)) as usize] += 1;
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

    /// Mean and (population) variance of the statistic the test is on:
    /// pair score / 2, or the pair's mean score difference.
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
    /// the pentanomial variance: a pair is one observation).
    pub fn elo(&self) -> (f64, f64, f64) {
        let n = self.pairs() as f64;
        let (m, v) = self.moments(SprtOn::Elo);
        let half = 1.959_964 * (v / n).sqrt();
        (logistic_elo(m), logistic_elo(m - half), logistic_elo(m + half))
    }
}

/// Logistic Elo of a score `s` (0 to 1): `-400 log10(1 / s - 1)`, clamped
/// to +-1000 at the ends.
pub fn logistic_elo(s: f64) -> f64 {
    let s = s.clamp(1e-6, 1.0 - 1e-6);
    (-400.0 * (1.0 / s - 1.0).log10()).clamp(-1000.0, 1000.0)
}

/// The score an Elo difference expects: `1 / (1 + 10^(-elo / 400))`.
pub fn elo_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The pairs of a shard's rows (an agents grid with `paired = true`: games
/// `2k` and `2k + 1` are one deal's two seatings). A row without its
/// partner in `rows` is not counted.
pub fn shard_stats<'a>(rows: impl IntoIterator<Item = &'a GameRow>) -> PairStats {
    let mut s = PairStats::default();
    let mut sorted: Vec<(u64, i32)> = rows.into_iter().map(|r| (r.game_index, r.score_diff)).collect();
    sorted.sort_unstable();
    for w in sorted.windows(2) {
        if w[0].0.is_multiple_of(2) && w[1].0 == w[0].0 + 1 {
            s.add_pair(w[0].1, w[1].1);
        }
    }
    s
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

    /// The log-likelihood ratio of H1 over H0 after the pairs `s` (0 with
    /// fewer than two pairs or no variance yet).
    pub fn llr(&self, s: &PairStats) -> f64 {
        let n = s.pairs();
        if n < 2 {
            return 0.0;
        }
        let (m, v) = s.moments(self.on);
        if v <= 0.0 {
            return 0.0;
        }
        let (mu0, mu1) = self.hypotheses();
        n as f64 * (mu1 - mu0) * (2.0 * m - mu0 - mu1) / (2.0 * v)
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

/// One point of the LLR's trace: after `shard`, `pairs` pairs in all.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// The shard just counted.
    pub shard: u64,
    /// Pairs counted up to it.
    pub pairs: u64,
    /// The LLR then.
    pub llr: f64,
}

/// The test walked shard by shard, in order: the coordinator, the worker's
/// report stage and the report all step through one of these, so they stop
/// at the same shard.
#[derive(Clone, Debug)]
pub struct Walk {
    sprt: Sprt,
    /// The pairs counted so far.
    pub total: PairStats,
    /// The LLR after each shard counted.
    pub trace: Vec<TracePoint>,
    /// The verdict after the last shard counted.
    pub verdict: Verdict,
}

impl Walk {
    /// A walk that has counted nothing.
    pub fn new(sprt: Sprt) -> Walk {
        Walk {
            sprt,
            total: PairStats::default(),
            trace: Vec::new(),
            verdict: Verdict::Undecided,
        }
    }

    /// Counts the next shard's pairs; the verdict after it.
    pub fn step(&mut self, shard: &PairStats) -> Verdict {
        self.total.merge(shard);
        let llr = self.sprt.llr(&self.total);
        self.trace.push(TracePoint {
            shard: self.trace.len() as u64,
            pairs: self.total.pairs(),
            llr,
        });
        self.verdict = self.sprt.verdict(llr);
        self.verdict
    }
}

/// Walks shards in order (each one's pair statistics) and stops at the
/// first whose cumulative LLR crosses a bound: the trace, the pairs so far
/// and the verdict.
pub fn walk(sprt: &Sprt, shards: impl IntoIterator<Item = PairStats>) -> (Vec<TracePoint>, PairStats, Verdict) {
    let mut w = Walk::new(*sprt);
    for s in shards {
        if w.step(&s) != Verdict::Undecided {
            break;
        }
    }
    (w.trace, w.total, w.verdict)
}
