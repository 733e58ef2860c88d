//! Named agents in the report (docs/analysis.md, "Agents, Elo and SPRT"):
//! per pairing the games, wins/ties/losses, the mean score difference with
//! its 95% interval, and over paired deals (the same deal with the sides
//! swapped) the pentanomial counts and the pairing's logistic Elo with its
//! interval; over the pool a Bradley-Terry fit (Elo, 95% intervals, the
//! likelihood of superiority of each agent over the next); and the SPRT's
//! verdict and LLR trace when the spec has `[stop]`.
//!
//! Memory: a game waits only for its pair's other game (the next index),
//! so at most one row per pairing is pending; the cells are one per
//! (agent, opponent, observability).

use std::collections::{BTreeMap, HashMap};

use engine::Observability;
use jobs::sprt::{PairStats, TracePoint, Verdict};
use serde::{Deserialize, Serialize};

use crate::nan_from_null;
use crate::stats::{self, Moments};

/// One pairing's games (the agent's point of view).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingSummary {
    pub agent: String,
    pub opponent: String,
    pub observability: Observability,
    pub games: u64,
    pub wins: u64,
    pub ties: u64,
    pub losses: u64,
    #[serde(deserialize_with = "nan_from_null")]
    pub mean_score_diff: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_high: f64,
    /// Pairs (both seatings of a deal) whose agent scored 0, 1/2, 1, 3/2, 2.
    pub penta: [u64; 5],
    /// Logistic Elo from the pairs' score, with its 95% interval (a pair
    /// one observation); absent without pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elo: Option<[f64; 3]>,
}

/// One agent's Bradley-Terry rating over the pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub name: String,
    /// Elo, the pool's mean at 0.
    #[serde(deserialize_with = "nan_from_null")]
    pub elo: f64,
    /// The 95% interval (NaN when the pool's games do not connect it).
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_high: f64,
    pub games: u64,
    /// Its points (wins and half the ties) over its games.
    #[serde(deserialize_with = "nan_from_null")]
    pub score: f64,
    /// The likelihood that it is stronger than the next agent down the
    /// table (absent for the last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub los_next: Option<f64>,
}

/// The SPRT's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtReport {
    /// `elo` or `diff`.
    pub on: String,
    pub h0: f64,
    pub h1: f64,
    pub alpha: f64,
    pub beta: f64,
    /// The LLR's bounds: accept H0 at or below `lower`, H1 at or above `upper`.
    pub lower: f64,
    pub upper: f64,
    pub verdict: Verdict,
    #[serde(deserialize_with = "nan_from_null")]
    pub llr: f64,
    pub pairs: u64,
    /// Games the test used (two a pair, up to the deciding one), games the
    /// experiment kept (every shard up to the one holding the deciding
    /// pair) and games the full grid holds.
    pub games: u64,
    #[serde(default)]
    pub kept_games: u64,
    pub grid_games: u64,
    pub penta: [u64; 5],
    /// Elo of the agent over the opponent with its 95% interval.
    pub elo: [f64; 3],
    /// The LLR after every pair, in game order.
    pub trace: Vec<TracePoint>,
}

impl SprtReport {
    /// One line: `LLR 6.29 (bounds -2.94, +2.94): H1 accepted after 18
    /// pairs (36 games)`.
    pub fn line(&self) -> String {
        format!(
            "LLR {:.2} (bounds {:+.2}, {:+.2}): {} after {} pairs ({} games)",
            self.llr,
            self.lower,
            self.upper,
            self.verdict.words(),
            self.pairs,
            self.games
        )
    }
}

/// Two agents against one opponent on the same deals and seatings: the
/// paired difference of their score differences (`a` minus `b`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentComparison {
    pub a: String,
    pub b: String,
    pub opponent: String,
    pub observability: Observability,
    pub test: stats::PairedTest,
}

/// The tournament part of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentReport {
    /// `cross`, `round-robin` or `gauntlet`.
    pub format: String,
    pub pairings: Vec<PairingSummary>,
    /// Every two agents that faced one opponent on the same deals.
    #[serde(default)]
    pub comparisons: Vec<AgentComparison>,
    /// Best first.
    pub ratings: Vec<Rating>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtReport>,
}

type Cell = (String, String, Observability);

#[derive(Debug, Default)]
struct Acc {
    diff: Moments,
    wins: u64,
    ties: u64,
    losses: u64,
    pairs: PairStats,
}

/// Folds the rows of an agents grid.
#[derive(Debug, Default)]
pub(crate) struct TournamentAcc {
    cells: BTreeMap<Cell, Acc>,
    /// A pair's first game, waiting for the second: index / 2 -> diff.
    pending: HashMap<u64, i32>,
    /// Whether the grid plays paired deals.
    pub(crate) paired: bool,
    /// The games of one (rule set, observability, deal, repeat): every pairing's
    /// (agent, opponent, seating, score difference). The grid puts them
    /// together, so only one group is held at a time.
    group: Option<(GroupKey, Vec<GroupGame>)>,
    compared: BTreeMap<(String, String, String, Observability), Moments>,
}

/// (rule set, observability, deal, repeat).
type GroupKey = (Option<String>, Observability, u64, u32);
/// (agent, opponent, seating, score difference).
type GroupGame = (String, String, Option<u32>, i32);

impl TournamentAcc {
    pub(crate) fn add(&mut self, r: &jobs::GameRow) {
        let (Some(a), Some(o)) = (&r.agent, &r.opponent) else {
            return;
        };
        let key = (r.rules.clone(), r.observability, r.starting_state, r.repeat);
        if self.group.as_ref().is_some_and(|(k, _)| *k != key) {
            self.flush();
        }
        self.group
            .get_or_insert_with(|| (key, Vec::new()))
            .1
            .push((a.clone(), o.clone(), r.agent_side, r.score_diff));
        let acc = self.cells.entry((a.clone(), o.clone(), r.observability)).or_default();
        acc.diff.add(r.score_diff as f64);
        match r.score_diff.signum() {
            1 => acc.wins += 1,
            0 => acc.ties += 1,
            _ => acc.losses += 1,
        }
        // A paired grid numbers a deal's two seatings 2k (side 0) and 2k + 1
        // (side 1), neighbours in one shard.
        if !self.paired || r.agent_side != Some((r.game_index % 2) as u32) {
            return;
        }
        let key = r.game_index / 2;
        match self.pending.remove(&key) {
            Some(first) => acc.pairs.add_pair(first, r.score_diff),
            None if r.game_index.is_multiple_of(2) => {
                self.pending.insert(key, r.score_diff);
            }
            None => {}
        }
    }

    /// Compares the agents of the group just completed that faced the same opponent.
    fn flush(&mut self) {
        let Some(((_, obs, ..), games)) = self.group.take() else {
            return;
        };
        for (i, (a, o, side, d)) in games.iter().enumerate() {
            for (b, o2, side2, e) in &games[i + 1..] {
                if o == o2 && side == side2 && a != b {
                    let (x, y, diff) = if a < b { (a, b, d - e) } else { (b, a, e - d) };
                    self.compared
                        .entry((x.clone(), y.clone(), o.clone(), obs))
                        .or_default()
                        .add(diff as f64);
                }
            }
        }
    }

    pub(crate) fn finish(&mut self, format: &str) -> Option<TournamentReport> {
        self.flush();
        if self.cells.is_empty() {
            return None;
        }
        let comparisons = self
            .compared
            .iter()
            .map(|((a, b, o, obs), m)| AgentComparison {
                a: a.clone(),
                b: b.clone(),
                opponent: o.clone(),
                observability: *obs,
                test: stats::paired_test(m),
            })
            .collect();
        let pairings: Vec<PairingSummary> = self
            .cells
            .iter()
            .map(|((a, o, obs), c)| {
                let t = stats::paired_test(&c.diff);
                PairingSummary {
                    agent: a.clone(),
                    opponent: o.clone(),
                    observability: *obs,
                    games: c.diff.n,
                    wins: c.wins,
                    ties: c.ties,
                    losses: c.losses,
                    mean_score_diff: c.diff.mean(),
                    ci_low: t.ci_low,
                    ci_high: t.ci_high,
                    penta: c.pairs.penta,
                    elo: (self.paired && c.pairs.pairs() > 0).then(|| {
                        let (e, lo, hi) = c.pairs.elo();
                        [e, lo, hi]
                    }),
                }
            })
            .collect();
        let mut games: Vec<Game> = Vec::new();
        for p in &pairings {
            games.push(Game {
                a: p.agent.clone(),
                b: p.opponent.clone(),
                score_a: p.wins as f64 + p.ties as f64 / 2.0,
                n: p.games as f64,
            });
        }
        Some(TournamentReport {
            format: format.to_string(),
            pairings,
            comparisons,
            ratings: bradley_terry(&games),
            sprt: None,
        })
    }
}

/// Games between two players: `a`'s points (wins and half the ties) out of `n`.
#[derive(Clone, Debug)]
pub struct Game {
    pub a: String,
    pub b: String,
    pub score_a: f64,
    pub n: f64,
}

/// Elo per natural-log unit of strength.
const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// The Bradley-Terry fit of `games` (ties half a win each side): ratings
/// by the MM algorithm (Hunter 2004) to 1e-12, the pool's mean at 0; 95%
/// intervals from the inverse Fisher information under that constraint;
/// each rating's likelihood of superiority over the next, `Phi(diff / sd)`.
/// A player who won or lost every game has no finite rating: the fit then
/// adds one virtual draw to every pairing played (and says so nowhere
/// else: the docs do).
pub fn bradley_terry(games: &[Game]) -> Vec<Rating> {
    let mut names: Vec<String> = Vec::new();
    for g in games {
        for n in [&g.a, &g.b] {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let k = names.len();
    let at = |n: &str| names.iter().position(|x| x == n).expect("listed");
    // w[i][j]: i's points against j; n[i][j]: games between them.
    let mut w = vec![vec![0.0; k]; k];
    let mut n = vec![vec![0.0; k]; k];
    for g in games {
        let (i, j) = (at(&g.a), at(&g.b));
        w[i][j] += g.score_a;
        w[j][i] += g.n - g.score_a;
        n[i][j] += g.n;
        n[j][i] += g.n;
    }
    let (points, played): (Vec<f64>, Vec<f64>) = (0..k)
        .map(|i| (w[i].iter().sum::<f64>(), n[i].iter().sum::<f64>()))
        .unzip();
    if (0..k).any(|i| points[i] <= 0.0 || points[i] >= played[i]) {
        for i in 0..k {
            for j in 0..k {
                if n[i][j] > 0.0 {
                    w[i][j] += 0.5;
                    n[i][j] += 1.0;
                }
            }
        }
    }
    let wins: Vec<f64> = (0..k).map(|i| w[i].iter().sum()).collect();
    let mut gamma = vec![1.0; k];
    for _ in 0..100_000 {
        let mut next = vec![0.0; k];
        for i in 0..k {
            let denom: f64 = (0..k)
                .filter(|&j| n[i][j] > 0.0)
                .map(|j| n[i][j] / (gamma[i] + gamma[j]))
                .sum();
            next[i] = if denom > 0.0 { wins[i] / denom } else { gamma[i] };
        }
        // The scale is free: fix the geometric mean at 1.
        let mean_log = next.iter().map(|g: &f64| g.ln()).sum::<f64>() / k as f64;
        for g in &mut next {
            *g = (g.ln() - mean_log).exp();
        }
        let change = gamma
            .iter()
            .zip(&next)
            .map(|(a, b)| (a.ln() - b.ln()).abs())
            .fold(0.0, f64::max);
        gamma = next;
        if change < 1e-12 {
            break;
        }
    }
    let theta: Vec<f64> = gamma.iter().map(|g| g.ln()).collect();
    let cov = covariance(&theta, &n);
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| theta[b].total_cmp(&theta[a]).then(a.cmp(&b)));
    let mut out = Vec::with_capacity(k);
    for (r, &i) in order.iter().enumerate() {
        let sd = cov.as_ref().map_or(f64::NAN, |c| c[i][i].max(0.0).sqrt());
        let los_next = order.get(r + 1).and_then(|&j| {
            let c = cov.as_ref()?;
            let v = c[i][i] + c[j][j] - 2.0 * c[i][j];
            (v > 0.0).then(|| 1.0 - stats::normal_sf((theta[i] - theta[j]) / v.sqrt()))
        });
        let real: f64 = games
            .iter()
            .map(|g| if g.a == names[i] || g.b == names[i] { g.n } else { 0.0 })
            .sum();
        let pts: f64 = games
            .iter()
            .map(|g| {
                if g.a == names[i] {
                    g.score_a
                } else if g.b == names[i] {
                    g.n - g.score_a
                } else {
                    0.0
                }
            })
            .sum();
        out.push(Rating {
            name: names[i].clone(),
            elo: ELO_PER_NAT * theta[i],
            ci_low: ELO_PER_NAT * (theta[i] - 1.959_964 * sd),
            ci_high: ELO_PER_NAT * (theta[i] + 1.959_964 * sd),
            games: real as u64,
            score: pts / real,
            los_next,
        });
    }
    out
}

/// The covariance of the log-strengths under the constraint that they sum
/// to 0: the Fisher information with the last player fixed, inverted, then
/// centred. `None` when the games do not connect the players.
fn covariance(theta: &[f64], n: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let k = theta.len();
    if k < 2 {
        return Some(vec![vec![0.0; k]; k]);
    }
    let mut info = vec![vec![0.0; k]; k];
    for i in 0..k {
        for j in 0..k {
            if i != j && n[i][j] > 0.0 {
                let p = 1.0 / (1.0 + (theta[j] - theta[i]).exp());
                let x = n[i][j] * p * (1.0 - p);
                info[i][i] += x;
                info[i][j] -= x;
            }
        }
    }
    let m = k - 1;
    let sub: Vec<Vec<f64>> = info[..m].iter().map(|r| r[..m].to_vec()).collect();
    let inv = invert(sub)?;
    let mut c = vec![vec![0.0; k]; k];
    for i in 0..m {
        for j in 0..m {
            c[i][j] = inv[i][j];
        }
    }
    // Centre: A C A^T with A = I - 1/k.
    let row_mean: Vec<f64> = (0..k).map(|i| c[i].iter().sum::<f64>() / k as f64).collect();
    let all_mean = row_mean.iter().sum::<f64>() / k as f64;
    Some(
        (0..k)
            .map(|i| (0..k).map(|j| c[i][j] - row_mean[i] - row_mean[j] + all_mean).collect())
            .collect(),
    )
}

/// Gauss-Jordan inversion with partial pivoting; `None` when singular.
fn invert(mut a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut inv: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| (i == j) as u8 as f64).collect())
        .collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let p = a[col][col];
        for j in 0..n {
            a[col][j] /= p;
            inv[col][j] /= p;
        }
        for i in 0..n {
            if i != col {
                let f = a[i][col];
                if f != 0.0 {
                    for j in 0..n {
                        a[i][j] -= f * a[col][j];
                        inv[i][j] -= f * inv[col][j];
                    }
                }
            }
        }
    }
    Some(inv)
}

/// The SPRT part of the report from the pairs of the shards it walked.
pub(crate) fn sprt_report(sprt: &jobs::Sprt, walk: jobs::sprt::Walk, kept_games: u64, grid_games: u64) -> SprtReport {
    let (lower, upper) = sprt.bounds();
    let total = *walk.total();
    let (e, lo, hi) = if total.pairs() > 0 {
        total.elo()
    } else {
        (f64::NAN, f64::NAN, f64::NAN)
    };
    SprtReport {
        on: match sprt.on {
            jobs::SprtOn::Elo => "elo".into(),
            jobs::SprtOn::ScoreDiff => "diff".into(),
        },
        h0: sprt.h0,
        h1: sprt.h1,
        alpha: sprt.alpha,
        beta: sprt.beta,
        lower,
        upper,
        verdict: walk.verdict,
        llr: walk.llr,
        pairs: total.pairs(),
        games: 2 * total.pairs(),
        kept_games,
        grid_games,
        penta: total.penta,
        elo: [e, lo, hi],
        trace: walk.trace,
    }
}

/// Pentanomial counts as `a / b / c / d / e`.
fn penta_text(p: &[u64; 5]) -> String {
    p.iter().map(u64::to_string).collect::<Vec<_>>().join(" / ")
}

/// `x` rounded to one decimal, signed, never `-0.0`; `-` when not finite.
pub(crate) fn f1(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.1}", no_negative_zero((x * 10.0).round() / 10.0))
    } else {
        "-".into()
    }
}

/// `x`, with `-0.0` (and anything that rounds to it) as `0.0`.
pub(crate) fn no_negative_zero(x: f64) -> f64 {
    if x == 0.0 { 0.0 } else { x }
}

/// A note for Elo values at the clamp (a score of 0 or 1 has no finite
/// Elo), or nothing.
pub(crate) fn clamp_note(values: &[f64]) -> &'static str {
    if values.iter().any(|v| v.abs() >= jobs::sprt::ELO_CLAMP) {
        " (clipped at +-1000: a score of 0 or 1 has no finite Elo)"
    } else {
        ""
    }
}

/// The tournament's Markdown: headline, Elo table, pairings, SPRT.
pub(crate) fn markdown(t: &TournamentReport) -> String {
    let mut s = String::from("## Agents\n\n");
    if let Some(best) = t.ratings.first() {
        s.push_str(&format!(
            "**Headline:** {} leads the pool at {} Elo [{}, {}]",
            best.name,
            f1(best.elo),
            f1(best.ci_low),
            f1(best.ci_high)
        ));
        match best.los_next {
            Some(los) => s.push_str(&format!(
                "; the likelihood that it is stronger than {} is {:.1}%.\n\n",
                t.ratings[1].name,
                100.0 * los
            )),
            None => s.push_str(".\n\n"),
        }
    }
    s.push_str(&format!(
        "Bradley-Terry ratings over every game of the {} (ties half a win; the pool's mean at 0; 95% intervals \
         from the Fisher information; LOS: the likelihood of superiority over the next agent down). `elo.svg` \
         plots them.\n\n| rank | agent | Elo | 95% interval | games | score | LOS over next |\n|---|---|---|---|---|---|---|\n",
        t.format
    ));
    for (i, r) in t.ratings.iter().enumerate() {
        s.push_str(&format!(
            "| {} | {} | {} | [{}, {}] | {} | {:.1}% | {} |\n",
            i + 1,
            r.name,
            f1(r.elo),
            f1(r.ci_low),
            f1(r.ci_high),
            r.games,
            100.0 * r.score,
            r.los_next.map_or("-".into(), |l| format!("{:.1}%", 100.0 * l))
        ));
    }
    s.push_str(
        "\n### Pairings\n\nThe agent's side against the opponent's, per game: wins, ties and losses, the mean score \
         difference with its 95% interval; over paired deals (each deal played with the sides swapped) the \
         pentanomial counts (pairs scoring 0, 1/2, 1, 3/2, 2 of 2 points) and the pairing's logistic Elo of the \
         agent over its opponent (a pair one observation; \"clipped\": a bound at +-1000, where a score of 0 or 1 \
         has no finite Elo).\n\n| agent | opponent | observe | games | W / T / L | mean diff [95%] | pairs 0 / .5 / 1 / 1.5 / 2 | Elo [95%] |\n|---|---|---|---|---|---|---|---|\n",
    );
    for p in &t.pairings {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} / {} / {} | {:+.2} [{:+.2}, {:+.2}] | {} | {} |\n",
            p.agent,
            p.opponent,
            p.observability,
            p.games,
            p.wins,
            p.ties,
            p.losses,
            p.mean_score_diff,
            p.ci_low,
            p.ci_high,
            penta_text(&p.penta),
            p.elo.map_or("-".into(), |e| format!(
                "{} [{}, {}]{}",
                f1(e[0]),
                f1(e[1]),
                f1(e[2]),
                if clamp_note(&e).is_empty() { "" } else { " (clipped)" }
            ))
        ));
    }
    if !t.comparisons.is_empty() {
        s.push_str(
            "\n### Agents against the same opponent on the same deals\n\nFor every two agents that faced one \
             opponent, the paired difference of their score differences (first minus second) over the same \
             deals, repeats and seatings, with its 95% interval and two-sided p.\n\n| first | second | opponent \
             | observe | deals | mean diff [95%] | p |\n|---|---|---|---|---|---|---|\n",
        );
        for c in &t.comparisons {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {:+.3} [{:+.3}, {:+.3}] | {:.4}{} |\n",
                c.a,
                c.b,
                c.opponent,
                c.observability,
                c.test.n,
                c.test.mean,
                c.test.ci_low,
                c.test.ci_high,
                c.test.p,
                if c.test.significant { "" } else { " †" }
            ));
        }
    }
    if let Some(sp) = &t.sprt {
        let what = if sp.on == "elo" {
            "Elo"
        } else {
            "score difference per game"
        };
        let verdict = match sp.verdict {
            Verdict::H1 => format!(
                "**H1 accepted**: the games favour {what} >= {} over {what} <= {} (the agent is the stronger)",
                sp.h1, sp.h0
            ),
            Verdict::H0 => format!(
                "**H0 accepted**: the games favour {what} <= {} over {what} >= {} (no gain of {} shown)",
                sp.h0, sp.h1, sp.h1
            ),
            Verdict::Undecided => "**undecided**: the grid ran out before either bound".into(),
        };
        s.push_str(&format!(
            "\n### Sequential test (SPRT)\n\n{verdict}. H0: {} = {}, H1: {} = {}, alpha = {}, beta = {}: {} \
             (the pentanomial GSPRT, evaluated after every pair in game order). The experiment kept {} of the \
             grid's {} games: every shard up to the one holding the deciding pair. Pentanomial counts {}; the \
             pairs' logistic Elo of the agent over its opponent {} [{}, {}]{}. `sprt.svg` plots the LLR over the \
             pairs.\n",
            what,
            sp.h0,
            what,
            sp.h1,
            sp.alpha,
            sp.beta,
            sp.line(),
            sp.kept_games,
            sp.grid_games,
            penta_text(&sp.penta),
            f1(sp.elo[0]),
            f1(sp.elo[1]),
            f1(sp.elo[2]),
            clamp_note(&sp.elo)
        ));
    }
    s.push('\n');
    s
}

/// tournament.csv: the pairings.
pub(crate) fn csv(t: &TournamentReport) -> String {
    let mut s = String::from(
        "agent,opponent,observability,games,wins,ties,losses,mean_score_diff,ci_low,ci_high,penta0,penta1,penta2,penta3,penta4,elo,elo_low,elo_high\n",
    );
    for p in &t.pairings {
        let e = p.elo.unwrap_or([f64::NAN; 3]).map(no_negative_zero);
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            p.agent,
            p.opponent,
            p.observability,
            p.games,
            p.wins,
            p.ties,
            p.losses,
            p.mean_score_diff,
            p.ci_low,
            p.ci_high,
            p.penta[0],
            p.penta[1],
            p.penta[2],
            p.penta[3],
            p.penta[4],
            e[0],
            e[1],
            e[2]
        ));
    }
    s
}

/// elo.csv: the ratings.
pub(crate) fn elo_csv(t: &TournamentReport) -> String {
    let mut s = String::from("rank,agent,elo,ci_low,ci_high,games,score,los_next\n");
    for (i, r) in t.ratings.iter().enumerate() {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            i + 1,
            r.name,
            no_negative_zero(r.elo),
            no_negative_zero(r.ci_low),
            no_negative_zero(r.ci_high),
            r.games,
            r.score,
            r.los_next.map_or(String::new(), |l| l.to_string())
        ));
    }
    s
}

/// elo.svg: the ratings as bars with their 95% intervals, best first.
pub(crate) fn elo_plot(t: &TournamentReport) -> String {
    let bars: Vec<crate::svg::Bar> = t
        .ratings
        .iter()
        .map(|r| crate::svg::Bar {
            group: r.name.clone(),
            series: "Elo".into(),
            value: r.elo,
            interval: (r.ci_low.is_finite() && r.ci_high.is_finite()).then_some((r.ci_low, r.ci_high)),
        })
        .collect();
    crate::svg::bars("Bradley-Terry Elo (pool mean 0, 95% intervals)", "Elo", &bars)
}

/// sprt.svg: the LLR after every pair as a line over the pairs played,
/// the two bounds as horizontal lines.
pub(crate) fn sprt_plot(sp: &SprtReport) -> String {
    let line: Vec<(f64, f64)> = std::iter::once((0.0, 0.0))
        .chain(sp.trace.iter().map(|p| (p.pairs as f64, p.llr)))
        .collect();
    crate::svg::line_chart(
        &format!("SPRT: LLR after every pair ({})", sp.verdict.words()),
        "pairs played",
        "LLR",
        &line,
        &[
            (format!("accept H1 ({:+.2})", sp.upper), sp.upper),
            (format!("accept H0 ({:+.2})", sp.lower), sp.lower),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_text_has_no_negative_zero_and_marks_the_clamp() {
        assert_eq!(f1(-0.0), "+0.0");
        assert_eq!(f1(-0.04), "+0.0");
        assert_eq!(f1(-0.06), "-0.1");
        assert_eq!(f1(f64::NAN), "-");
        assert_eq!(format!("{}", no_negative_zero(-0.0)), "0");
        assert!(clamp_note(&[12.0, 1000.0]).contains("clipped"));
        assert_eq!(clamp_note(&[12.0, -999.0]), "");
    }
}
