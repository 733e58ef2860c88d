//! Training the network in Rust: the loss of a batch and its gradients
//! (backpropagation through the tanh layers and both heads), and Adam.
//! The start of the `fit` stage of self-play training (issue 45); tested
//! against finite differences (`tests/train.rs`).
//!
//! The loss of a row is the policy's cross-entropy against a target over
//! the legal actions (the softmax taken over the legal ones only) plus
//! `value_weight` x half the squared error of the value against the row's
//! outcome; a batch's loss is the mean over its rows. A target is usually
//! a distribution (a search's visits); it may be any finite weights on the
//! legal actions: all zeros (a row that teaches the value alone) or an
//! advantage on the action played (the policy gradient: `-A log p(a)`).
//! The gradient at the logits is `p * sum(t) - t`, which is `p - t` for
//! a distribution. With a belief head and the rows' true holders, a row
//! adds `belief_weight` x the mean over its hidden tiles of the
//! cross-entropy of the tile's holder (a softmax over the holders): the
//! gradient at a hidden tile's logits is `(p - onehot) / hidden tiles`.
//! With a prior (the constraints belief's marginals, `Batch::prior`) the
//! softmax is over `logit + ln prior` at the holders the prior allows, so
//! the head learns a correction of the prior: zero logits are the prior,
//! and an impossible holder has neither probability nor gradient.
//!
//! Determinism: a batch is cut into blocks of [`BLOCK_ROWS`] rows, each
//! block's gradient is computed on its own (the forward pass is the
//! inference kernel's, the same bits as a model's evaluation) and the
//! blocks are summed in order, so the gradient's bits are the same on any
//! number of threads.

use crate::mlp::{Dense, Mlp};

/// Rows of a batch whose gradient is computed together (the unit of work
/// a thread takes; the sum over blocks is in block order).
pub const BLOCK_ROWS: usize = 64;

/// A batch of training rows: `rows` observations (`rows x inputs`), the
/// legal actions (`rows x actions`, nonzero where legal), the target
/// policy (`rows x actions`, finite weights on the legal actions: see the
/// module's page) and
/// the outcome the value learns (`rows`); for a belief head, each row's
/// holder of each tile (`rows x tiles`: an index below the head's holders,
/// or [`NO_HOLDER`] for a tile the seat sees; empty: no belief targets),
/// optionally each row's prior of each tile's holders (`rows x tiles x
/// holders`, finite and at least 0, the true holder's above 0; empty: no
/// prior) and the belief loss's weight.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    pub rows: usize,
    pub obs: &'a [f32],
    pub legal: &'a [u8],
    pub policy: &'a [f32],
    pub outcome: &'a [f32],
    pub holders: &'a [u8],
    pub prior: &'a [f32],
    pub belief_weight: f32,
}

/// A tile the seat sees (its own, or played): no belief target.
pub const NO_HOLDER: u8 = u8::MAX;

/// A batch's mean losses.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Loss {
    /// Cross-entropy of the policy against its targets (nats a row).
    pub policy: f64,
    /// Half the squared error of the value (a row).
    pub value: f64,
    /// Cross-entropy of the belief head at the hidden tiles (nats a tile,
    /// averaged over rows; 0 without belief targets).
    pub belief: f64,
    /// `policy + value_weight * value + belief_weight * belief`, what the
    /// gradient descends.
    pub total: f64,
}

/// The gradient of the loss: one `(weights, biases)` pair a layer, then the
/// policy head's, the value head's and the belief head's if any (the
/// shapes of [`Mlp`]'s layers).
#[derive(Clone, Debug, PartialEq)]
pub struct Grads {
    pub layers: Vec<(Vec<f32>, Vec<f32>)>,
}

impl Grads {
    fn zeros(mlp: &Mlp) -> Grads {
        Grads {
            layers: all_layers(mlp)
                .map(|l| (vec![0.0; l.weights().len()], vec![0.0; l.outputs()]))
                .collect(),
        }
    }

    fn add(&mut self, other: &Grads) {
        for ((w, b), (ow, ob)) in self.layers.iter_mut().zip(&other.layers) {
            w.iter_mut().zip(ow).for_each(|(x, y)| *x += y);
            b.iter_mut().zip(ob).for_each(|(x, y)| *x += y);
        }
    }
}

fn all_layers(mlp: &Mlp) -> impl Iterator<Item = &Dense> {
    mlp.layers()
        .iter()
        .chain([mlp.policy(), mlp.value()])
        .chain(mlp.belief().map(|b| &b.dense))
        .chain(mlp.belief().and_then(|b| b.trunk.as_ref()))
}

/// Why a batch cannot be trained on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    /// An array's length is not the batch's rows times its width.
    #[error("{what} has {have} numbers, not {rows} rows x {width}")]
    Shape {
        what: &'static str,
        have: usize,
        rows: usize,
        width: usize,
    },
    /// A row with no legal action.
    #[error("row {0} has no legal action")]
    NoLegal(usize),
    /// A row whose target puts weight on an illegal action.
    #[error("row {row}: the target policy puts {mass} on illegal action {action}")]
    IllegalTarget { row: usize, action: usize, mass: String },
    /// A number that is not finite (an observation, a target, an outcome).
    #[error("row {row}: {what} is not finite")]
    NotFinite { row: usize, what: &'static str },
    /// A prior that is negative or not finite, or that gives a tile's true
    /// holder no chance.
    #[error("row {row}: tile {tile}'s prior {what}")]
    Prior { row: usize, tile: usize, what: String },
    /// Belief targets for a network without a belief head.
    #[error("the batch has belief targets and the network no belief head")]
    NoBeliefHead,
    /// A holder index the belief head does not have.
    #[error("row {row}: tile {tile}'s holder is {holder}, and the belief head has {holders} holders")]
    Holder {
        row: usize,
        tile: usize,
        holder: u8,
        holders: usize,
    },
}

impl Batch<'_> {
    /// Checks the shapes and the targets against `mlp`.
    pub fn check(&self, mlp: &Mlp) -> Result<(), BatchError> {
        let (d, a, n) = (mlp.inputs(), mlp.actions(), self.rows);
        for (what, have, width) in [
            ("obs", self.obs.len(), d),
            ("legal", self.legal.len(), a),
            ("policy", self.policy.len(), a),
            ("outcome", self.outcome.len(), 1),
        ] {
            if have != n * width {
                return Err(BatchError::Shape {
                    what,
                    have,
                    rows: n,
                    width,
                });
            }
        }
        if !self.holders.is_empty() {
            let head = mlp.belief().ok_or(BatchError::NoBeliefHead)?;
            let t = head.tiles();
            if self.holders.len() != n * t {
                return Err(BatchError::Shape {
                    what: "holders",
                    have: self.holders.len(),
                    rows: n,
                    width: t,
                });
            }
            for (i, &h) in self.holders.iter().enumerate() {
                if h != NO_HOLDER && h as usize >= head.holders {
                    return Err(BatchError::Holder {
                        row: i / t,
                        tile: i % t,
                        holder: h,
                        holders: head.holders,
                    });
                }
            }
        }
        if !self.prior.is_empty() {
            self.check_prior(mlp)?;
        }
        if !self.belief_weight.is_finite() {
            return Err(BatchError::NotFinite {
                row: 0,
                what: "the belief weight",
            });
        }
        for r in 0..n {
            for (what, xs) in [
                ("an observation", &self.obs[r * d..(r + 1) * d]),
                ("a target", &self.policy[r * a..(r + 1) * a]),
                ("the outcome", &self.outcome[r..r + 1]),
            ] {
                if !xs.iter().all(|x| x.is_finite()) {
                    return Err(BatchError::NotFinite { row: r, what });
                }
            }
            let legal = &self.legal[r * a..(r + 1) * a];
            if legal.iter().all(|&l| l == 0) {
                return Err(BatchError::NoLegal(r));
            }
            for (k, (&l, &p)) in legal.iter().zip(&self.policy[r * a..(r + 1) * a]).enumerate() {
                if l == 0 && p != 0.0 {
                    return Err(BatchError::IllegalTarget {
                        row: r,
                        action: k,
                        mass: p.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The prior's shape and values (see [`Batch`]).
    fn check_prior(&self, mlp: &Mlp) -> Result<(), BatchError> {
        let n = self.rows;
        let head = mlp.belief().ok_or(BatchError::NoBeliefHead)?;
        let (t, h) = (head.tiles(), head.holders);
        if self.holders.len() != n * t || self.prior.len() != n * t * h {
            return Err(BatchError::Shape {
                what: "the prior (with the holders)",
                have: self.prior.len(),
                rows: n,
                width: t * h,
            });
        }
        for (i, p) in self.prior.chunks_exact(h).enumerate() {
            let (row, tile) = (i / t, i % t);
            if let Some(x) = p.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
                let what = format!("has {x}, not a number at least 0");
                return Err(BatchError::Prior { row, tile, what });
            }
            let holder = self.holders[i];
            if holder != NO_HOLDER && p[holder as usize] <= 0.0 {
                let what = format!("gives its true holder {holder} no chance");
                return Err(BatchError::Prior { row, tile, what });
            }
        }
        Ok(())
    }

    fn block(&self, start: usize, end: usize, d: usize, a: usize) -> Batch<'_> {
        let t = self.holders.len() / self.rows.max(1);
        let th = self.prior.len() / self.rows.max(1);
        Batch {
            rows: end - start,
            obs: &self.obs[start * d..end * d],
            legal: &self.legal[start * a..end * a],
            policy: &self.policy[start * a..end * a],
            outcome: &self.outcome[start..end],
            holders: &self.holders[start * t..end * t],
            prior: &self.prior[start * th..end * th],
            belief_weight: self.belief_weight,
        }
    }
}

/// The batch's mean loss and its gradient with respect to every weight
/// and bias, on `threads` threads (the same bits on any count).
///
/// # Panics
/// If the batch fails [`Batch::check`] (check it first).
pub fn loss_and_grads(mlp: &Mlp, batch: &Batch<'_>, value_weight: f32, threads: usize) -> (Loss, Grads) {
    batch.check(mlp).expect("a checked batch");
    let (d, a) = (mlp.inputs(), mlp.actions());
    let blocks: Vec<(usize, usize)> = (0..batch.rows)
        .step_by(BLOCK_ROWS)
        .map(|s| (s, (s + BLOCK_ROWS).min(batch.rows)))
        .collect();
    let backs = Backs::of(mlp);
    let backs = &backs;
    let run = |&(s, e): &(usize, usize)| block_grads(mlp, backs, &batch.block(s, e, d, a), value_weight);
    let parts: Vec<(Loss, Grads)> = if threads <= 1 || blocks.len() <= 1 {
        blocks.iter().map(run).collect()
    } else {
        let per = blocks.len().div_ceil(threads.min(blocks.len()));
        std::thread::scope(|s| {
            let handles: Vec<_> = blocks
                .chunks(per)
                .map(|chunk| s.spawn(move || chunk.iter().map(run).collect::<Vec<_>>()))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    };
    let mut grads = Grads::zeros(mlp);
    let mut loss = Loss::default();
    let scale = 1.0 / batch.rows.max(1) as f32;
    for (l, g) in &parts {
        loss.policy += l.policy;
        loss.value += l.value;
        loss.belief += l.belief;
        grads.add(g);
    }
    for (w, b) in &mut grads.layers {
        w.iter_mut().chain(b.iter_mut()).for_each(|x| *x *= scale);
    }
    let n = batch.rows.max(1) as f64;
    loss.policy /= n;
    loss.value /= n;
    loss.belief /= n;
    loss.total = loss.policy + value_weight as f64 * loss.value + batch.belief_weight as f64 * loss.belief;
    (loss, grads)
}

/// Each layer's weights transposed (`outputs x inputs`, no bias), so that
/// the gradient at a layer's input, `dy W^T`, is the inference kernel's
/// dense layer: every element a fused multiply-add chain in order, the
/// same bits however the rows are cut.
struct Backs {
    layers: Vec<Dense>,
}

impl Backs {
    fn of(mlp: &Mlp) -> Backs {
        Backs {
            layers: all_layers(mlp)
                .map(|l| {
                    let w = transpose(l.weights(), l.inputs(), l.outputs());
                    Dense::new(l.outputs(), w, vec![0.0; l.inputs()])
                })
                .collect(),
        }
    }
}

/// One block's summed losses and summed (not averaged) gradient.
fn block_grads(mlp: &Mlp, backs: &Backs, b: &Batch<'_>, value_weight: f32) -> (Loss, Grads) {
    let (rows, a) = (b.rows, mlp.actions());
    // Forward, keeping every hidden layer's output (after tanh); layer i's
    // input is the observations or layer i - 1's output.
    let mut hidden: Vec<Vec<f32>> = Vec::with_capacity(mlp.layers().len());
    for l in mlp.layers() {
        let mut out = vec![0.0; rows * l.outputs()];
        l.apply_rows(hidden.last().map_or(b.obs, Vec::as_slice), rows, &mut out);
        crate::kernel::tanh_in_place(&mut out);
        hidden.push(out);
    }
    let input_of = |i: usize| if i == 0 { b.obs } else { hidden[i - 1].as_slice() };
    let top = input_of(mlp.layers().len());
    let mut logits = vec![0.0; rows * a];
    mlp.policy().apply_rows(top, rows, &mut logits);
    let mut values = vec![0.0; rows];
    mlp.value().apply_rows(top, rows, &mut values);
    // The heads' losses and their gradients at the logits and the value.
    let mut loss = Loss::default();
    let mut d_logits = vec![0.0f32; rows * a];
    let mut d_values = vec![0.0f32; rows];
    for r in 0..rows {
        let (z, legal, target) = (
            &logits[r * a..(r + 1) * a],
            &b.legal[r * a..(r + 1) * a],
            &b.policy[r * a..(r + 1) * a],
        );
        let max = (0..a)
            .filter(|&k| legal[k] != 0)
            .map(|k| z[k] as f64)
            .fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = (0..a)
            .filter(|&k| legal[k] != 0)
            .map(|k| (z[k] as f64 - max).exp())
            .sum();
        let log_sum = max + sum.ln();
        let mass: f64 = (0..a).filter(|&k| legal[k] != 0).map(|k| target[k] as f64).sum();
        for k in (0..a).filter(|&k| legal[k] != 0) {
            let log_p = z[k] as f64 - log_sum;
            loss.policy -= target[k] as f64 * log_p;
            d_logits[r * a + k] = (log_p.exp() * mass - target[k] as f64) as f32;
        }
        let err = values[r] - b.outcome[r];
        loss.value += 0.5 * (err as f64) * (err as f64);
        d_values[r] = value_weight * err;
    }
    // Backward: the heads, then the layers from the top.
    let mut grads = Grads::zeros(mlp);
    let depth = mlp.layers().len();
    let width = top_width(mlp);
    let mut d_top = vec![0.0f32; rows * width];
    let mut d_from_value = vec![0.0f32; rows * width];
    backward_dense(mlp.policy(), top, &d_logits, rows, &mut grads.layers[depth]);
    backs.layers[depth].apply_rows(&d_logits, rows, &mut d_top);
    backward_dense(mlp.value(), top, &d_values, rows, &mut grads.layers[depth + 1]);
    backs.layers[depth + 1].apply_rows(&d_values, rows, &mut d_from_value);
    d_top.iter_mut().zip(&d_from_value).for_each(|(x, y)| *x += y);
    if let Some(head) = mlp.belief() {
        match &head.trunk {
            None => {
                let d_belief = belief_loss(head, top, b, &mut loss);
                backward_dense(&head.dense, top, &d_belief, rows, &mut grads.layers[depth + 2]);
                backs.layers[depth + 2].apply_rows(&d_belief, rows, &mut d_from_value);
                d_top.iter_mut().zip(&d_from_value).for_each(|(x, y)| *x += y);
            }
            Some(trunk) => {
                // Its own layer over the observations: its gradient stays
                // in the head and its trunk.
                let mut h = vec![0.0f32; rows * trunk.outputs()];
                trunk.apply_rows(b.obs, rows, &mut h);
                crate::kernel::tanh_in_place(&mut h);
                let d_belief = belief_loss(head, &h, b, &mut loss);
                backward_dense(&head.dense, &h, &d_belief, rows, &mut grads.layers[depth + 2]);
                let mut d_h = vec![0.0f32; rows * trunk.outputs()];
                backs.layers[depth + 2].apply_rows(&d_belief, rows, &mut d_h);
                for (g, y) in d_h.iter_mut().zip(&h) {
                    *g *= 1.0 - y * y;
                }
                backward_dense(trunk, b.obs, &d_h, rows, &mut grads.layers[depth + 3]);
            }
        }
    }
    let mut d_out = d_top;
    for i in (0..depth).rev() {
        // Through tanh: d z = d h (1 - h^2).
        for (g, h) in d_out.iter_mut().zip(&hidden[i]) {
            *g *= 1.0 - h * h;
        }
        let l = &mlp.layers()[i];
        backward_dense(l, input_of(i), &d_out, rows, &mut grads.layers[i]);
        if i > 0 {
            let mut d_in = vec![0.0f32; rows * l.inputs()];
            backs.layers[i].apply_rows(&d_out, rows, &mut d_in);
            d_out = d_in;
        }
    }
    (loss, grads)
}

/// The belief head's loss over a block (summed over rows into `loss`) and
/// its gradient at the head's logits (zero without targets).
fn belief_loss(head: &crate::mlp::BeliefHead, top: &[f32], b: &Batch<'_>, loss: &mut Loss) -> Vec<f32> {
    let (rows, h, t) = (b.rows, head.holders, head.tiles());
    let mut d = vec![0.0f32; rows * t * h];
    if b.holders.is_empty() {
        return d;
    }
    let mut z = vec![0.0f32; rows * t * h];
    head.dense.apply_rows(top, rows, &mut z);
    for r in 0..rows {
        let targets = &b.holders[r * t..(r + 1) * t];
        let hidden = targets.iter().filter(|&&x| x != NO_HOLDER).count();
        if hidden == 0 {
            continue;
        }
        let share = 1.0 / hidden as f64;
        for (tile, &holder) in targets.iter().enumerate() {
            if holder == NO_HOLDER {
                continue;
            }
            let at = (r * t + tile) * h;
            let zs = &mut z[at..at + h];
            if !b.prior.is_empty() {
                // The prior's log added; a holder it rules out drops out.
                for (x, &p) in zs.iter_mut().zip(&b.prior[at..at + h]) {
                    *x = if p > 0.0 { *x + p.ln() } else { f32::NEG_INFINITY };
                }
            }
            let zs = &*zs;
            let log_sum = crate::log_sum_exp(zs.iter().map(|&x| x as f64));
            loss.belief -= share * (zs[holder as usize] as f64 - log_sum);
            for k in 0..h {
                let p = (zs[k] as f64 - log_sum).exp();
                let y = if k == holder as usize { 1.0 } else { 0.0 };
                d[at + k] = (b.belief_weight as f64 * share * (p - y)) as f32;
            }
        }
    }
    d
}

fn top_width(mlp: &Mlp) -> usize {
    mlp.layers().last().map_or(mlp.inputs(), Dense::outputs)
}

/// `y = b + x W`'s gradients for `dy` into `g` (weights, biases; zero
/// before): the weights' `x^T dy` as the inference kernel's dense layer
/// (`x^T` as its rows, `dy` as its weights), each element a fused
/// multiply-add chain over the block's rows in order.
fn backward_dense(l: &Dense, x: &[f32], dy: &[f32], rows: usize, g: &mut (Vec<f32>, Vec<f32>)) {
    let (n_in, n_out) = (l.inputs(), l.outputs());
    for r in 0..rows {
        for (gb, &d) in g.1.iter_mut().zip(&dy[r * n_out..(r + 1) * n_out]) {
            *gb += d;
        }
    }
    let xt = transpose(&x[..rows * n_in], rows, n_in);
    let outer = Dense::new(rows, dy[..rows * n_out].to_vec(), vec![0.0; n_out]);
    outer.apply_rows(&xt, n_in, &mut g.0);
}

/// `m` (`rows x cols`, row-major) transposed.
fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0f32; m.len()];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = m[r * cols + c];
        }
    }
    t
}

/// Plain gradient descent: every parameter moves by `-learning_rate` x its
/// gradient.
pub fn sgd_step(mlp: &mut Mlp, grads: &Grads, learning_rate: f32) {
    mlp.update_layers(|k, w, b| {
        let (gw, gb) = &grads.layers[k];
        w.iter_mut().zip(gw).for_each(|(p, g)| *p -= learning_rate * g);
        b.iter_mut().zip(gb).for_each(|(p, g)| *p -= learning_rate * g);
    });
}

/// Adam (Kingma and Ba, 2015) over every weight and bias of a network.
#[derive(Clone, Debug)]
pub struct Adam {
    pub learning_rate: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub epsilon: f32,
    steps: i32,
    m: Grads,
    v: Grads,
}

impl Adam {
    /// Adam for `mlp`'s shapes, at `learning_rate` with the usual betas
    /// (0.9, 0.999) and epsilon (1e-8).
    pub fn new(mlp: &Mlp, learning_rate: f32) -> Adam {
        Adam {
            learning_rate,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            steps: 0,
            m: Grads::zeros(mlp),
            v: Grads::zeros(mlp),
        }
    }

    /// Steps taken.
    pub fn steps(&self) -> i32 {
        self.steps
    }

    /// One step down `grads` (of `mlp`'s shapes).
    pub fn step(&mut self, mlp: &mut Mlp, grads: &Grads) {
        self.steps += 1;
        let (b1, b2) = (self.beta1, self.beta2);
        let c1 = 1.0 - b1.powi(self.steps);
        let c2 = 1.0 - b2.powi(self.steps);
        let (lr, eps) = (self.learning_rate, self.epsilon);
        let update = |p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]| {
            for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
                *m = b1 * *m + (1.0 - b1) * g;
                *v = b2 * *v + (1.0 - b2) * g * g;
                *p -= lr * (*m / c1) / ((*v / c2).sqrt() + eps);
            }
        };
        let (m, v) = (&mut self.m.layers, &mut self.v.layers);
        mlp.update_layers(|k, w, b| {
            update(w, &grads.layers[k].0, &mut m[k].0, &mut v[k].0);
            update(b, &grads.layers[k].1, &mut m[k].1, &mut v[k].1);
        });
    }
}
