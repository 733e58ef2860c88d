//! The Bradley-Terry fit of a pool of agents: ratings by the MM algorithm,
//! their 95% intervals from the inverse Fisher information, and each
//! rating's likelihood of superiority over the next.

use super::Rating;
use crate::stats;

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
/// Written here rather than taken from a linear-algebra crate: the matrix
/// is the pool's size less one (a handful of agents), and nalgebra, the
/// one at hand, would bring a dozen crates to the build for these thirty
/// lines.
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
