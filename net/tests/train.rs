//! Training: the gradient against finite differences of the loss, the same
//! bits on any thread count, every refused batch, and Adam learning a
//! small task (a test that fails when learning breaks).

mod common;

use common::{random_mlp, uniform};
use net::{Adam, BLOCK_ROWS, Batch, BatchError, Dense, Mlp, NO_HOLDER, loss_and_grads, sgd_step};

/// A batch of `rows` rows for `mlp`: random observations, a random legal
/// set (never empty), a target spread over the legal actions, outcomes in
/// [-1, 1].
struct Rows {
    rows: usize,
    obs: Vec<f32>,
    legal: Vec<u8>,
    policy: Vec<f32>,
    outcome: Vec<f32>,
    /// Each tile's holder (`rows x tiles`) when the network has a belief
    /// head: some seen ([`NO_HOLDER`]), the rest at random holders.
    holders: Vec<u8>,
    /// Each tile's prior over its holders (`rows x tiles x holders`), or
    /// empty: none.
    prior: Vec<f32>,
}

impl Rows {
    fn new(mlp: &Mlp, rows: usize, seed: u64) -> Rows {
        let (d, a) = (mlp.inputs(), mlp.actions());
        let mut s = seed;
        let obs = uniform(&mut s, rows * d, 1.0);
        let coin = uniform(&mut s, rows * a, 1.0);
        let mut legal: Vec<u8> = coin.iter().map(|&c| (c > -0.2) as u8).collect();
        for r in 0..rows {
            legal[r * a + r % a] = 1;
        }
        let weight = uniform(&mut s, rows * a, 1.0);
        let mut policy = vec![0.0f32; rows * a];
        for r in 0..rows {
            let row = r * a..(r + 1) * a;
            let sum: f32 = row
                .clone()
                .filter(|&k| legal[k] == 1)
                .map(|k| weight[k].abs() + 0.1)
                .sum();
            for k in row.filter(|&k| legal[k] == 1) {
                policy[k] = (weight[k].abs() + 0.1) / sum;
            }
        }
        let outcome = uniform(&mut s, rows, 1.0);
        let holders = match mlp.belief() {
            None => Vec::new(),
            Some(head) => uniform(&mut s, rows * head.tiles(), 1.0)
                .iter()
                .map(|&u| {
                    let k = ((u + 1.0) * 0.5 * (head.holders + 1) as f32) as usize;
                    if k >= head.holders { NO_HOLDER } else { k as u8 }
                })
                .collect(),
        };
        Rows {
            rows,
            obs,
            legal,
            policy,
            outcome,
            holders,
            prior: Vec::new(),
        }
    }

    fn batch(&self) -> Batch<'_> {
        Batch {
            rows: self.rows,
            obs: &self.obs,
            legal: &self.legal,
            policy: &self.policy,
            outcome: &self.outcome,
            holders: &self.holders,
            prior: &self.prior,
            belief_weight: 0.7,
        }
    }
}

/// `mlp` with a random belief head of `tiles x holders`.
fn with_belief(mlp: Mlp, tiles: usize, holders: usize, seed: u64) -> Mlp {
    let width = mlp.policy().inputs();
    let mut s = seed;
    let head = Dense::new(
        width,
        uniform(&mut s, width * tiles * holders, 0.5),
        uniform(&mut s, tiles * holders, 0.2),
    );
    mlp.with_belief(head, holders)
}

/// The loss of `mlp` with parameter `(layer, index)` moved by `delta`
/// (`index` past the weights: a bias).
fn loss_moved(mlp: &Mlp, rows: &Rows, layer: usize, index: usize, delta: f32) -> f64 {
    let mut grads_shape = loss_and_grads(mlp, &rows.batch(), 0.5, 1).1;
    for (w, b) in &mut grads_shape.layers {
        w.iter_mut().chain(b.iter_mut()).for_each(|x| *x = 0.0);
    }
    let (w, b) = &mut grads_shape.layers[layer];
    if index < w.len() {
        w[index] = 1.0;
    } else {
        b[index - w.len()] = 1.0;
    }
    // Plain SGD by -delta along the unit gradient moves exactly that one
    // parameter by delta.
    let mut moved = mlp.clone();
    sgd_step(&mut moved, &grads_shape, -delta);
    loss_and_grads(&moved, &rows.batch(), 0.5, 1).0.total
}

#[test]
fn the_gradient_is_the_loss_s_slope() {
    let mlp = random_mlp(3, 6, &[7, 5], 4);
    let rows = Rows::new(&mlp, 9, 11);
    check_slopes(&mlp, &rows);
}

/// With a belief head, its loss at the hidden tiles adds to the others
/// and its gradient reaches every layer below it.
#[test]
fn the_gradient_is_the_slope_with_a_belief_head() {
    let mlp = with_belief(random_mlp(3, 6, &[7, 5], 4), 5, 3, 21);
    let rows = Rows::new(&mlp, 9, 11);
    assert!(rows.holders.contains(&NO_HOLDER) && rows.holders.iter().any(|&h| h != NO_HOLDER));
    let (loss, grads) = loss_and_grads(&mlp, &rows.batch(), 0.5, 1);
    assert_eq!(grads.layers.len(), 5, "two layers, three heads");
    assert!(loss.belief > 0.3, "{loss:?}");
    assert!((loss.total - (loss.policy + 0.5 * loss.value + 0.7f32 as f64 * loss.belief)).abs() < 1e-9);
    check_slopes(&mlp, &rows);
    // Without targets, the head learns nothing and adds no loss.
    let plain = Batch {
        holders: &[],
        prior: &[],
        ..rows.batch()
    };
    let (l, g) = loss_and_grads(&mlp, &plain, 0.5, 1);
    assert_eq!(l.belief, 0.0);
    assert!(g.layers[4].0.iter().all(|&x| x == 0.0));
    let without = loss_and_grads(&mlp.clone().without_belief(), &plain, 0.5, 1);
    assert_eq!(without.0.total, l.total);
    assert_eq!(without.1.layers[..4], g.layers[..4]);
}

/// A prior (the constraints belief's marginals): zero logits are the
/// prior itself, a holder it rules out has no gradient, and the rest of
/// the gradient is still the loss's slope.
#[test]
fn the_gradient_is_the_slope_with_a_prior() {
    let (tiles, holders) = (5, 3);
    let mlp = with_belief(random_mlp(3, 6, &[7, 5], 4), tiles, holders, 21);
    let mut rows = Rows::new(&mlp, 9, 11);
    let mut s = 5u64;
    let u = uniform(&mut s, rows.rows * tiles * holders, 1.0);
    // Holder 2 of tile 3 is ruled out in every row (and never the truth).
    for h in rows.holders.iter_mut().skip(3).step_by(tiles) {
        if *h == 2 {
            *h = 0;
        }
    }
    rows.prior = (0..u.len())
        .map(|i| {
            if i % (tiles * holders) == 3 * holders + 2 {
                0.0
            } else {
                u[i].abs() + 0.05
            }
        })
        .collect();
    rows.batch().check(&mlp).unwrap();
    check_slopes(&mlp, &rows);
    let (_, grads) = loss_and_grads(&mlp, &rows.batch(), 0.5, 1);
    let (w, b) = &grads.layers[4];
    let ruled_out = 3 * holders + 2;
    assert_eq!(b[ruled_out], 0.0);
    assert!(w.iter().skip(ruled_out).step_by(tiles * holders).all(|&x| x == 0.0));
    assert!(b.iter().filter(|&&x| x != 0.0).count() > 8);
    // A head of zero weights is the prior: its loss is the prior's log
    // loss at the true holders (each row's mean over its hidden tiles).
    let zero = mlp.clone().without_belief().with_belief(
        Dense::new(5, vec![0.0; 5 * tiles * holders], vec![0.0; tiles * holders]),
        holders,
    );
    let (loss, _) = loss_and_grads(&zero, &rows.batch(), 0.5, 1);
    let mut want = 0.0;
    for r in 0..rows.rows {
        let hidden: Vec<usize> = (0..tiles)
            .filter(|&t| rows.holders[r * tiles + t] != NO_HOLDER)
            .collect();
        for &t in &hidden {
            let p = &rows.prior[(r * tiles + t) * holders..][..holders];
            let h = rows.holders[r * tiles + t] as usize;
            want -= (p[h] as f64 / p.iter().map(|&x| x as f64).sum::<f64>()).ln() / hidden.len() as f64;
        }
    }
    want /= rows.rows as f64;
    assert!((loss.belief - want).abs() < 1e-5, "{} against {want}", loss.belief);
    // Without the prior, the same head's loss differs.
    let plain = Batch {
        prior: &[],
        ..rows.batch()
    };
    assert!((loss_and_grads(&zero, &plain, 0.5, 1).0.belief - want).abs() > 1e-3);
}

/// A belief head with a hidden layer of its own over the observations:
/// the gradient is the loss's slope through it, the same on any thread
/// count, and the policy's layers get nothing from the belief.
#[test]
fn the_gradient_is_the_slope_with_a_belief_trunk() {
    let (tiles, holders) = (5, 3);
    let base = random_mlp(3, 6, &[7, 5], 4);
    let mut s = 8u64;
    let trunk = Dense::new(6, uniform(&mut s, 6 * 4, 0.6), uniform(&mut s, 4, 0.2));
    let head = Dense::new(
        4,
        uniform(&mut s, 4 * tiles * holders, 0.6),
        uniform(&mut s, tiles * holders, 0.2),
    );
    let mlp = base.clone().with_belief_trunk(trunk, head, holders);
    let mut rows = Rows::new(&mlp, 9, 11);
    let u = uniform(&mut s, rows.rows * tiles * holders, 1.0);
    rows.prior = u.iter().map(|x| x.abs() + 0.05).collect();
    rows.batch().check(&mlp).unwrap();
    check_slopes(&mlp, &rows);
    let (loss, grads) = loss_and_grads(&mlp, &rows.batch(), 0.5, 1);
    assert_eq!(grads.layers.len(), 6, "two layers, three heads, the belief's own layer");
    assert!(
        loss.belief > 0.3 && grads.layers[5].0.iter().any(|&x| x != 0.0),
        "{loss:?}"
    );
    let plain = loss_and_grads(
        &base,
        &Batch {
            holders: &[],
            prior: &[],
            ..rows.batch()
        },
        0.5,
        1,
    );
    assert_eq!(
        plain.1.layers[..4],
        grads.layers[..4],
        "the policy's layers learn nothing from the belief"
    );
    let many = Rows::new(&mlp, 3 * BLOCK_ROWS + 5, 3);
    let one = loss_and_grads(&mlp, &many.batch(), 0.5, 1);
    assert_eq!(loss_and_grads(&mlp, &many.batch(), 0.5, 3), one);
}

/// Targets that are not distributions (the policy gradient's advantage on
/// the action played, negative or zero, plus an entropy term) have the
/// loss's slope for gradient too.
#[test]
fn the_gradient_is_the_slope_for_weighted_targets() {
    let mlp = random_mlp(3, 6, &[7, 5], 4);
    let mut rows = Rows::new(&mlp, 9, 11);
    let a = mlp.actions();
    for r in 0..9 {
        let target = &mut rows.policy[r * a..(r + 1) * a];
        let legal: Vec<usize> = (0..a).filter(|&k| target[k] > 0.0).collect();
        let weights = [-1.3f32, 0.0, 0.7, 2.1];
        for (j, &k) in legal.iter().enumerate() {
            target[k] = if j == 0 {
                weights[r % 4]
            } else {
                0.05 * (j as f32 - 1.0)
            };
        }
    }
    rows.batch().check(&mlp).unwrap();
    check_slopes(&mlp, &rows);
}

fn check_slopes(mlp: &Mlp, rows: &Rows) {
    let (_, grads) = loss_and_grads(mlp, &rows.batch(), 0.5, 1);
    let mut checked = 0;
    let mut worst = 0.0f64;
    for (layer, (w, b)) in grads.layers.iter().enumerate() {
        for index in (0..w.len() + b.len()).step_by(3) {
            let g = if index < w.len() { w[index] } else { b[index - w.len()] } as f64;
            let h = 1e-2f32;
            let slope =
                (loss_moved(mlp, rows, layer, index, h) - loss_moved(mlp, rows, layer, index, -h)) / (2.0 * h as f64);
            let err = (slope - g).abs();
            worst = worst.max(err);
            assert!(
                err <= 2e-3 + 2e-2 * g.abs(),
                "layer {layer} parameter {index}: gradient {g}, finite difference {slope}"
            );
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked} parameters");
    // The check has teeth: a gradient off by a sign fails it.
    let (w, _) = &grads.layers[0];
    let i = (0..w.len()).max_by(|&i, &j| w[i].abs().total_cmp(&w[j].abs())).unwrap();
    let slope = (loss_moved(mlp, rows, 0, i, 1e-2) - loss_moved(mlp, rows, 0, i, -1e-2)) / 2e-2;
    assert!(
        (slope + w[i] as f64).abs() > 2e-3 + 2e-2 * w[i].abs() as f64,
        "worst {worst}"
    );
}

#[test]
fn the_gradient_is_the_same_on_any_thread_count() {
    let mlp = with_belief(random_mlp(5, 20, &[16, 16], 9), 7, 2, 4);
    let rows = Rows::new(&mlp, 3 * BLOCK_ROWS + 17, 2);
    let one = loss_and_grads(&mlp, &rows.batch(), 1.0, 1);
    for threads in [2, 3, 8] {
        assert_eq!(
            loss_and_grads(&mlp, &rows.batch(), 1.0, threads),
            one,
            "{threads} threads"
        );
    }
}

#[test]
fn a_bad_batch_is_refused_naming_what_is_wrong() {
    let mlp = random_mlp(1, 6, &[5], 4);
    let rows = Rows::new(&mlp, 3, 1);
    let mut b = rows.batch();
    b.rows = 4;
    assert!(matches!(b.check(&mlp), Err(BatchError::Shape { what: "obs", .. })));
    let mut legal = rows.legal.clone();
    legal[4..8].fill(0);
    let b = Batch {
        legal: &legal,
        ..rows.batch()
    };
    let e = b.check(&mlp).unwrap_err();
    // Row 1 lost its legal actions: the target's mass on them is named
    // first if any, else the row.
    assert!(matches!(e, BatchError::NoLegal(1)), "{e}");
    let mut legal = rows.legal.clone();
    let k = (0..4).find(|&k| rows.policy[k] > 0.0).unwrap();
    legal[k] = 0;
    legal[(k + 1) % 4] = 1;
    let b = Batch {
        legal: &legal,
        ..rows.batch()
    };
    let e = b.check(&mlp).unwrap_err();
    assert!(
        matches!(e, BatchError::IllegalTarget { row: 0, action, .. } if action == k),
        "{e}"
    );
    assert!(e.to_string().contains(&format!("illegal action {k}")), "{e}");
    // Belief targets: for a network without the head, or a holder it lacks.
    let holders = vec![0u8; 3 * 5];
    let b = Batch {
        holders: &holders,
        prior: &[],
        ..rows.batch()
    };
    assert_eq!(b.check(&mlp), Err(BatchError::NoBeliefHead));
    let mlp = with_belief(mlp, 5, 2, 1);
    b.check(&mlp).unwrap();
    let mut holders = holders;
    holders[7] = 2;
    let b = Batch {
        holders: &holders,
        prior: &[],
        ..rows.batch()
    };
    let e = b.check(&mlp).unwrap_err();
    assert!(
        e.to_string().contains("row 1: tile 2's holder is 2") && e.to_string().contains("has 2 holders"),
        "{e}"
    );
    // A prior: of the holders' shape, finite, at least 0, and giving the
    // true holder a chance.
    holders[7] = 1;
    let prior = vec![0.5f32; 3 * 5 * 2];
    let b = Batch {
        holders: &holders,
        prior: &prior,
        ..rows.batch()
    };
    b.check(&mlp).unwrap();
    let short = Batch {
        prior: &prior[..29],
        ..b
    };
    assert!(matches!(short.check(&mlp), Err(BatchError::Shape { what, .. }) if what.contains("prior")));
    for (at, x, says) in [
        (3, -0.1f32, "has -0.1, not a number at least 0"),
        (3, f32::NAN, "has NaN"),
        (
            7 * 2 + 1,
            0.0,
            "row 1: tile 2's prior gives its true holder 1 no chance",
        ),
    ] {
        let mut bad = prior.clone();
        bad[at] = x;
        let e = Batch { prior: &bad, ..b }.check(&mlp).unwrap_err();
        assert!(
            matches!(e, BatchError::Prior { .. }) && e.to_string().contains(says),
            "{e}"
        );
    }
    let b = Batch {
        holders: &holders[..14],
        prior: &[],
        ..rows.batch()
    };
    assert!(matches!(b.check(&mlp), Err(BatchError::Shape { what: "holders", .. })));
}

#[test]
fn adam_learns_a_policy_and_a_value() {
    // The targets are functions of the observation: the best action is
    // the largest of the first four inputs; the value is the fifth; tile
    // 0 is with holder 1 when the sixth is positive, tile 1 likewise with
    // the seventh, and seen when the eighth is above one half.
    let mut mlp = with_belief(random_mlp(7, 8, &[32], 4), 2, 2, 8);
    let rows = 256;
    let mut s = 99u64;
    let obs = uniform(&mut s, rows * 8, 1.0);
    let legal = vec![1u8; rows * 4];
    let mut policy = vec![0.0f32; rows * 4];
    let mut outcome = vec![0.0f32; rows];
    let mut holders = vec![0u8; rows * 2];
    for r in 0..rows {
        let x = &obs[r * 8..r * 8 + 8];
        let best = (0..4).max_by(|&i, &j| x[i].total_cmp(&x[j])).unwrap();
        policy[r * 4 + best] = 1.0;
        outcome[r] = x[4];
        holders[r * 2] = (x[5] > 0.0) as u8;
        holders[r * 2 + 1] = if x[7] > 0.5 { NO_HOLDER } else { (x[6] > 0.0) as u8 };
    }
    let batch = Batch {
        rows,
        obs: &obs,
        legal: &legal,
        policy: &policy,
        outcome: &outcome,
        holders: &holders,
        prior: &[],
        belief_weight: 1.0,
    };
    let mut adam = Adam::new(&mlp, 0.01);
    let (first, _) = loss_and_grads(&mlp, &batch, 1.0, 2);
    for _ in 0..300 {
        let (_, g) = loss_and_grads(&mlp, &batch, 1.0, 2);
        adam.step(&mut mlp, &g);
    }
    let (last, _) = loss_and_grads(&mlp, &batch, 1.0, 2);
    assert_eq!(adam.steps(), 300);
    assert!(
        last.policy < 0.3 * first.policy,
        "policy {} -> {}",
        first.policy,
        last.policy
    );
    assert!(
        last.value < 0.2 * first.value,
        "value {} -> {}",
        first.value,
        last.value
    );
    assert!(
        last.belief < 0.3 * first.belief,
        "belief {} -> {}",
        first.belief,
        last.belief
    );
    // The trained belief head places tile 0 with its holder.
    let mut z = Vec::new();
    let placed = (0..rows)
        .filter(|&r| {
            mlp.belief_logits(&obs[r * 8..r * 8 + 8], &mut z, &mut net::Scratch::default())
                .unwrap();
            ((z[1] > z[0]) as u8) == holders[r * 2]
        })
        .count();
    assert!(placed > rows * 9 / 10, "{placed} of {rows}");
    // The trained network's own forward pass picks the target's action.
    let mut logits = vec![0.0f32; rows * 4];
    let mut values = vec![0.0f32; rows];
    mlp.forward(&obs, rows, &mut logits, &mut values, &mut net::Scratch::default());
    let right = (0..rows)
        .filter(|&r| {
            let z = &logits[r * 4..r * 4 + 4];
            let pick = (0..4).max_by(|&i, &j| z[i].total_cmp(&z[j])).unwrap();
            policy[r * 4 + pick] == 1.0
        })
        .count();
    assert!(right * 10 >= rows * 9, "{right} of {rows} right");
}
