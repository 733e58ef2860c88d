//! The first network and each generation's fit: PPO's clipped surrogate
//! with the value as its baseline (Schulman et al. 2017), by Adam, on the
//! rows the generation's self-play wrote.
//!
//! A row's advantage is its outcome (in units of the game's value scale,
//! `SpielState::value_scale`) less the value the network gave when it played, normalised over its
//! minibatch; its policy target is that advantage times the ratio of the
//! played action's probability now to the one it was drawn with, unless
//! the ratio is past the clip (`net::train`: a target `t` on the action
//! gives the logits the gradient `t (p - onehot)`, the surrogate's); the
//! entropy bonus is folded into the targets too. A searched row
//! (`train.searched`) learns its search's visits instead (cross-entropy, as
//! AlphaZero's policy). The value learns the scaled outcome. The rows are
//! read one partition at a time (the partitions in a drawn order each
//! epoch, the rows of each in a drawn order), so memory is a partition's,
//! not a generation's. The result is a function of the spec, the
//! generation and the rows: the gradient is the same bits on any thread
//! count.

use std::path::PathBuf;

use net::{Adam, Batch, Dense, Loss, Mlp};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use super::rows::{TrainRow, read_train};
use super::spec::{Fit, TrainSpec};
use super::stages::is_zero;
use crate::files::IoError;

/// The first network: Glorot-uniform weights from the spec's seed (the
/// policy head's a hundredth of that, so the first policy is near
/// uniform), zero biases; with [`TrainSpec::belief`], a belief head drawn
/// after the rest ([`with_belief_head`]).
pub fn first_network(spec: &TrainSpec, inputs: usize, actions: usize) -> Mlp {
    let mut rng = engine::seed::keyed_rng(spec.seed, 0, 0, engine::seed::TRAIN_FIT, 0);
    let mut layer = |n_in: usize, n_out: usize, scale: f64| {
        Dense::new(n_in, glorot(&mut rng, n_in, n_out, scale), vec![0.0; n_out])
    };
    let mut width = inputs;
    let mut layers = Vec::new();
    for &h in &spec.train.hidden {
        layers.push(layer(width, h, 1.0));
        width = h;
    }
    let policy = layer(width, actions, 0.01);
    let value = layer(width, 1, 1.0);
    with_belief_head(spec, Mlp::new(inputs, layers, policy, value))
}

/// Glorot-uniform weights of an `inputs x outputs` layer from `rng`,
/// times `scale`.
fn glorot(rng: &mut impl rand_chacha::rand_core::RngCore, inputs: usize, outputs: usize, scale: f64) -> Vec<f32> {
    let limit = (6.0 / (inputs + outputs) as f64).sqrt() * scale;
    (0..inputs * outputs)
        .map(|_| ((engine::seed::unit(rng) * 2.0 - 1.0) * limit) as f32)
        .collect()
}

/// `mlp` with a belief head when the spec teaches one and it has none:
/// Glorot-uniform weights from the spec's own stream for it, zero biases
/// (a network started from a file without a head gets this one); with a
/// prior, zero weights too, so the new head is the prior itself; with
/// `belief_hidden`, a Glorot-uniform layer of its own under it.
pub fn with_belief_head(spec: &TrainSpec, mlp: Mlp) -> Mlp {
    if !spec.belief() || mlp.belief().is_some() {
        return mlp;
    }
    let state = spec.state();
    let (tiles, holders) = (spec.rules().tile_count() as usize, state.belief_holders());
    let width = mlp.policy().inputs();
    let n_out = tiles * holders;
    if let Some(h) = spec.belief_hidden() {
        // Its own layer over the observation, drawn from the spec's stream;
        // the head over it as below.
        let inputs = mlp.inputs();
        let mut rng = engine::seed::keyed_rng(spec.seed, 0, 0, engine::seed::TRAIN_FIT, 3);
        let trunk = Dense::new(inputs, glorot(&mut rng, inputs, h, 1.0), vec![0.0; h]);
        let head = if spec.belief_prior().is_some() {
            vec![0.0; h * n_out]
        } else {
            glorot(&mut rng, h, n_out, 1.0)
        };
        return mlp.with_belief_trunk(trunk, Dense::new(h, head, vec![0.0; n_out]), holders);
    }
    if spec.belief_prior().is_some() {
        return mlp.with_belief(Dense::new(width, vec![0.0; width * n_out], vec![0.0; n_out]), holders);
    }
    let mut rng = engine::seed::keyed_rng(spec.seed, 0, 0, engine::seed::TRAIN_FIT, 2);
    mlp.with_belief(
        Dense::new(width, glorot(&mut rng, width, n_out, 1.0), vec![0.0; n_out]),
        holders,
    )
}

/// Fisher-Yates with `below_u32` (`engine::seed::shuffle` draws with
/// `below`: another order, and the shipped networks were fitted in this one).
fn shuffle<T>(xs: &mut [T], rng: &mut ChaCha20Rng) {
    for i in (1..xs.len()).rev() {
        let j = engine::seed::below_u32(rng, i as u32 + 1) as usize;
        xs.swap(i, j);
    }
}

/// What a fit did: rows, steps and its losses.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// Rows in the generation.
    pub rows: u64,
    /// Adam steps taken.
    pub steps: u64,
    /// The value's loss (half the squared error on the scaled outcome),
    /// the mean over the first epoch's minibatches, before each step.
    pub value_loss_first: f64,
    /// The same over the last epoch.
    pub value_loss_last: f64,
    /// The policy's entropy (nats), the mean over the first epoch's rows.
    pub entropy_first: f64,
    /// The same over the last epoch.
    pub entropy_last: f64,
    /// The belief head's loss (nats a hidden tile), the mean over the
    /// first epoch's minibatches (0 without a belief head).
    #[serde(default)]
    pub belief_loss_first: f64,
    /// The same over the last epoch.
    #[serde(default)]
    pub belief_loss_last: f64,
    /// With a prior (`belief_prior`), the prior's own loss on the same
    /// minibatches of the first epoch, the figure the head improves on
    /// (0 without one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub belief_prior_loss: f64,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// Fits the generation's rows (the partitions `parts`) from `start`;
/// `stop` is asked between minibatches (`None` when it said stop).
pub fn fit(
    spec: &TrainSpec,
    generation: u32,
    start: &Mlp,
    parts: &[PathBuf],
    threads: usize,
    stop: &dyn Fn() -> bool,
) -> Result<Option<(Mlp, FitReport)>, IoError> {
    let t0 = std::time::Instant::now();
    let f = &spec.train.fit;
    let scale = spec.state().value_scale() as f32;
    let mut mlp = start.clone();
    let mut adam = Adam::new(&mlp, f.learning_rate as f32);
    let mut report = FitReport::default();
    let mut mb = Minibatch::default();
    for epoch in 0..f.epochs {
        let mut rng = engine::seed::keyed_rng(spec.seed, generation as u64, epoch as u64, engine::seed::TRAIN_FIT, 1);
        let mut order: Vec<usize> = (0..parts.len()).collect();
        shuffle(&mut order, &mut rng);
        let (mut value_sum, mut belief_sum, mut entropy_sum, mut batches, mut rows_seen) = (0.0, 0.0, 0.0, 0u64, 0u64);
        let mut prior_sum = 0.0;
        for &k in &order {
            let mut rows = read_train(&parts[k])?;
            shuffle(&mut rows, &mut rng);
            for chunk in rows.chunks(f.batch) {
                if stop() {
                    return Ok(None);
                }
                mb.fill(&mlp, chunk, scale, f);
                let batch = mb.batch(chunk.len(), f.belief_weight as f32);
                if let Err(e) = batch.check(&mlp) {
                    return Err(crate::files::format(
                        &parts[k],
                        format!("a training row that cannot be learned from: {e}"),
                    ));
                }
                let (loss, grads): (Loss, _) = net::loss_and_grads(&mlp, &batch, f.value_weight as f32, threads);
                adam.step(&mut mlp, &grads);
                value_sum += loss.value;
                belief_sum += loss.belief;
                if epoch == 0 {
                    prior_sum += mb.prior_loss(chunk.len());
                }
                entropy_sum += mb.entropy;
                batches += 1;
                rows_seen += chunk.len() as u64;
            }
        }
        let value = value_sum / batches.max(1) as f64;
        let belief = belief_sum / batches.max(1) as f64;
        let entropy = entropy_sum / rows_seen.max(1) as f64;
        if epoch == 0 {
            report.rows = rows_seen;
            report.value_loss_first = value;
            report.belief_loss_first = belief;
            report.belief_prior_loss = prior_sum / batches.max(1) as f64;
            report.entropy_first = entropy;
        }
        report.value_loss_last = value;
        report.belief_loss_last = belief;
        report.entropy_last = entropy;
    }
    report.steps = adam.steps() as u64;
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(Some((mlp, report)))
}

/// A minibatch's arrays, kept between minibatches.
#[derive(Default)]
struct Minibatch {
    obs: Vec<f32>,
    legal: Vec<u8>,
    policy: Vec<f32>,
    outcome: Vec<f32>,
    /// Each row's holder of each tile, with a belief head.
    holders: Vec<u8>,
    /// Each row's prior of each tile's holders, with a head that has one.
    prior: Vec<f32>,
    /// The summed entropy of the rows' policies (as the network gives
    /// them now, over the legal actions).
    entropy: f64,
    /// The network's outputs on the minibatch, and its forward pass's room.
    logits: Vec<f32>,
    values: Vec<f32>,
    scratch: net::Scratch,
    legal_ids: Vec<u32>,
}

impl Minibatch {
    /// The arrays of `rows`, with each row's policy target: PPO's clipped
    /// surrogate's gradient at the network as it is now (see the module's
    /// page), plus the entropy bonus's.
    fn fill(&mut self, mlp: &Mlp, rows: &[TrainRow], scale: f32, f: &Fit) {
        let (d, a, n) = (mlp.inputs(), mlp.actions(), rows.len());
        self.obs.clear();
        self.legal.clear();
        self.legal.resize(n * a, 0);
        self.policy.clear();
        self.policy.resize(n * a, 0.0);
        self.outcome.clear();
        self.holders.clear();
        self.prior.clear();
        let tiles = mlp.belief().map_or(0, |b| b.tiles());
        let cells = mlp.belief().map_or(0, |b| b.tiles() * b.holders);
        for (i, r) in rows.iter().enumerate() {
            if tiles > 0 {
                // A row without holders (or of another game) has the check
                // name it: a shape that does not fit.
                self.holders.extend_from_slice(&r.holders[..r.holders.len().min(tiles)]);
            }
            if f.belief_prior.is_some() {
                self.prior.extend_from_slice(&r.prior[..r.prior.len().min(cells)]);
            }
            if r.observation.len() == d {
                self.obs.extend_from_slice(&r.observation);
            } else {
                // The check names the row: a width the network does not take.
                self.obs.resize(self.obs.len() + d, f32::NAN);
            }
            for &l in &r.legal {
                if let Some(x) = self.legal.get_mut(i * a + l as usize) {
                    *x = 1;
                }
            }
            self.outcome.push(r.outcome / scale);
        }
        let adv: Vec<f64> = rows.iter().map(|r| (r.outcome / scale - r.value) as f64).collect();
        let mean = adv.iter().sum::<f64>() / n as f64;
        let var = adv.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        let sd = var.sqrt().max(1e-6);
        self.logits.resize(n * a, 0.0);
        self.values.resize(n, 0.0);
        mlp.forward(&self.obs, n, &mut self.logits, &mut self.values, &mut self.scratch);
        self.entropy = 0.0;
        let legal = &mut self.legal_ids;
        for (i, r) in rows.iter().enumerate() {
            let z = &self.logits[i * a..(i + 1) * a];
            legal.clear();
            legal.extend(r.legal.iter().copied().filter(|&l| (l as usize) < a));
            if legal.is_empty() || r.action as usize >= a {
                continue;
            }
            let log_sum = net::log_sum_exp(legal.iter().map(|&k| z[k as usize] as f64));
            let log_p = |k: u32| z[k as usize] as f64 - log_sum;
            let h = -legal.iter().map(|&k| log_p(k).exp() * log_p(k)).sum::<f64>();
            self.entropy += h;
            let targets = &mut self.policy[i * a..(i + 1) * a];
            // The surrogate `min(r A, clip(r, 1 - e, 1 + e) A)` with `r` the
            // played action's probability now over when it was drawn: its
            // gradient at the logits is `A r (p - onehot)` unless clipped,
            // which is target `A r` on the action (mass `A r`).
            let behaviour = r
                .legal
                .iter()
                .position(|&l| l == r.action)
                .and_then(|k| r.policy.get(k))
                .map_or(1.0, |&p| (p as f64).max(1e-9));
            let ratio = log_p(r.action).exp() / behaviour;
            let advantage = (adv[i] - mean) / sd;
            let clipped = (advantage > 0.0 && ratio > 1.0 + f.clip) || (advantage < 0.0 && ratio < 1.0 - f.clip);
            if r.searched {
                // A searched decision: the search's visits are the target
                // (cross-entropy to them, AlphaZero's policy loss).
                for (&l, &p) in r.legal.iter().zip(&r.policy) {
                    if let Some(t) = targets.get_mut(l as usize) {
                        *t = p;
                    }
                }
            } else if !clipped {
                targets[r.action as usize] = (advantage * ratio) as f32;
            }
            // The entropy bonus: `-c p_k (log p_k + H)` added to target k
            // (their sum is 0) adds `c p_k (log p_k + H)` to the logits'
            // gradient, that of `-c H`.
            if f.entropy_bonus > 0.0 {
                for &k in legal.iter() {
                    let lp = log_p(k);
                    targets[k as usize] -= (f.entropy_bonus * lp.exp() * (lp + h)) as f32;
                }
            }
        }
    }

    /// The prior's own loss on the minibatch: the mean over its rows of
    /// the mean over each row's hidden tiles of `-ln prior(true holder)`,
    /// as the belief loss is averaged (0 without a prior).
    fn prior_loss(&self, rows: usize) -> f64 {
        if self.prior.is_empty() || rows == 0 {
            return 0.0;
        }
        let (t, cells) = (self.holders.len() / rows, self.prior.len() / rows);
        let h = cells / t.max(1);
        let mut sum = 0.0;
        for r in 0..rows {
            let (mut loss, mut hidden) = (0.0, 0usize);
            for (tile, &k) in self.holders[r * t..(r + 1) * t].iter().enumerate() {
                if k != net::NO_HOLDER {
                    loss -= (self.prior[r * cells + tile * h + k as usize] as f64).ln();
                    hidden += 1;
                }
            }
            if hidden > 0 {
                sum += loss / hidden as f64;
            }
        }
        sum / rows as f64
    }

    fn batch(&self, rows: usize, belief_weight: f32) -> Batch<'_> {
        Batch {
            rows,
            obs: &self.obs,
            legal: &self.legal,
            policy: &self.policy,
            outcome: &self.outcome,
            holders: if belief_weight > 0.0 { &self.holders } else { &[] },
            prior: if belief_weight > 0.0 { &self.prior } else { &[] },
            belief_weight,
        }
    }
}
