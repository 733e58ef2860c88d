//! The worlds of a guided decision drawn from a weighted pool instead of
//! one `constraints` world a simulation ([`GuidedBelief`]): the pool is
//! `constraints` worlds (each agrees with every void the seat saw), each
//! weighted by what the network says of it, and a simulation draws from
//! it by weight.
//!
//! - `head`: the product over the hidden tiles of the belief head's
//!   probability that the tile is where that world puts it (every world
//!   gives each holder as many tiles, so this is the head's marginals over
//!   the proposal's, up to a constant).
//! - `policy`: the likelihood of every other seat's plays so far in that
//!   world under the network's own policy (a softmax of its logits over the
//!   plays legal there): the `model` belief (docs/beliefs.md) with the
//!   network as every seat's model. Each world's past is replayed from its
//!   history and its other seats' decisions evaluated in one batch.
//!
//! The pool's effective sample size is kept. Its draws come from the
//! decision's stream in a fixed order, so a decision stays a pure function
//! of the model, the state, the seat and the stream.

use rand_core::RngCore;

use super::{Encoding, SpielError, SpielState};

/// Worlds in a pool: the simulations, within these bounds (`head`).
pub const BELIEF_POOL: (u32, u32) = (32, 512);

/// Worlds in a `policy` pool (each replays its past through the network):
/// the simulations, within these bounds.
pub const POLICY_POOL: (u32, u32) = (32, 128);

/// Where a guided search's worlds come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GuidedBelief {
    /// A `constraints` world a simulation (`"constraints"`).
    #[default]
    Constraints,
    /// A pool weighted by the model's belief head (`"head"`).
    Head,
    /// A pool weighted by the likelihood of the other seats' plays under
    /// the model's policy (`"policy"`).
    Policy,
}

impl GuidedBelief {
    pub const ALL: [GuidedBelief; 3] = [GuidedBelief::Constraints, GuidedBelief::Head, GuidedBelief::Policy];

    /// Its name in specs and in Python.
    pub fn name(self) -> &'static str {
        match self {
            GuidedBelief::Constraints => "constraints",
            GuidedBelief::Head => "head",
            GuidedBelief::Policy => "policy",
        }
    }
}

impl std::str::FromStr for GuidedBelief {
    type Err = String;
    fn from_str(s: &str) -> Result<GuidedBelief, String> {
        GuidedBelief::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("{s:?}: expected \"constraints\", \"head\" or \"policy\""))
    }
}

/// A decision's weighted pool of worlds, its buffers kept between
/// decisions.
#[derive(Debug, Default)]
pub(super) struct BeliefPool {
    log_p: Vec<f32>,
    pub(super) worlds: Vec<SpielState>,
    cumulative: Vec<f64>,
    holders: Vec<u8>,
    pub(super) ess: f64,
    /// `policy`: the replayed decisions' observations, and per row its
    /// world, the action played and where its legal ids start in `legal`.
    obs: Vec<f32>,
    one: Vec<f32>,
    rows: Vec<(u32, u32, u32, u32)>,
    legal: Vec<u32>,
    logits: Vec<f32>,
    values: Vec<f32>,
    scratch: net::Scratch,
}

impl BeliefPool {
    /// Draws `size` worlds for `player`'s decision at `state`.
    fn draw_worlds(
        &mut self,
        state: &SpielState,
        player: u8,
        size: u32,
        rng: &mut impl RngCore,
    ) -> Result<(), SpielError> {
        self.worlds.clear();
        for _ in 0..size {
            self.worlds.push(state.resample(player, rng)?);
        }
        Ok(())
    }

    /// Sets the cumulative weights from each world's log-weight.
    fn weigh(&mut self, logs: &[f64]) {
        let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        self.cumulative.clear();
        let (mut sum, mut sum2) = (0.0, 0.0);
        for &l in logs {
            let w = (l - top).exp();
            sum += w;
            sum2 += w * w;
            self.cumulative.push(sum);
        }
        self.ess = if sum2 > 0.0 { sum * sum / sum2 } else { 0.0 };
    }

    /// A `head` pool for `player`'s decision at `state`; the head's logits
    /// for `player`'s observation are in `logits`.
    pub(super) fn prepare_head(
        &mut self,
        state: &SpielState,
        player: u8,
        logits: &[f32],
        holders: usize,
        size: u32,
        rng: &mut impl RngCore,
    ) -> Result<(), SpielError> {
        // Log-softmax over each tile's holders.
        self.log_p.clear();
        for z in logits.chunks_exact(holders) {
            let log_sum = net::log_sum_exp(z.iter().map(|&x| x as f64));
            self.log_p.extend(z.iter().map(|&x| (x as f64 - log_sum) as f32));
        }
        self.draw_worlds(state, player, size, rng)?;
        let mut logs = Vec::with_capacity(self.worlds.len());
        for w in &self.worlds {
            w.holders(player, &mut self.holders);
            let mut log_w = 0.0f64;
            for (t, &h) in self.holders.iter().enumerate() {
                if h != net::NO_HOLDER && (h as usize) < holders {
                    log_w += self.log_p.get(t * holders + h as usize).copied().unwrap_or(0.0) as f64;
                }
            }
            logs.push(log_w);
        }
        self.weigh(&logs);
        Ok(())
    }

    /// A `policy` pool for `player`'s decision at `state`: each world
    /// weighted by the likelihood of the other seats' plays with a choice
    /// under `model`'s policy in that world.
    pub(super) fn prepare_policy(
        &mut self,
        model: &net::Model,
        encoding: Encoding,
        state: &SpielState,
        player: u8,
        size: u32,
        rng: &mut impl RngCore,
    ) -> Result<(), SpielError> {
        self.draw_worlds(state, player, size, rng)?;
        self.obs.clear();
        self.rows.clear();
        self.legal.clear();
        let mut ids = [0u32; 128];
        for (w, world) in self.worlds.iter().enumerate() {
            let mut s = world.restart();
            for &a in world.history() {
                let mover = s.current_player();
                if mover >= 0 && mover as u8 != player {
                    let n = s.legal_ids(&mut ids);
                    if n > 1 {
                        s.encode(mover as u8, encoding, &mut self.one);
                        self.obs.extend_from_slice(&self.one);
                        self.rows.push((w as u32, a, self.legal.len() as u32, n as u32));
                        self.legal.extend_from_slice(&ids[..n]);
                    }
                }
                s.apply(a)?;
            }
        }
        let (n, actions) = (self.rows.len(), model.meta.actions);
        self.logits.resize(n * actions, 0.0);
        self.values.resize(n, 0.0);
        model
            .mlp
            .forward(&self.obs, n, &mut self.logits, &mut self.values, &mut self.scratch);
        let mut logs = vec![0.0f64; self.worlds.len()];
        for (r, &(w, a, at, k)) in self.rows.iter().enumerate() {
            let z = &self.logits[r * actions..(r + 1) * actions];
            let legal = &self.legal[at as usize..(at + k) as usize];
            let log_sum = net::log_sum_exp(legal.iter().map(|&l| z[l as usize] as f64));
            logs[w as usize] += z[a as usize] as f64 - log_sum;
        }
        self.weigh(&logs);
        Ok(())
    }

    /// A world drawn by weight.
    pub(super) fn draw(&self, rng: &mut impl RngCore) -> SpielState {
        let total = *self.cumulative.last().expect("a prepared pool");
        let u = engine::seed::unit(rng) * total;
        let i = self.cumulative.partition_point(|&c| c <= u).min(self.worlds.len() - 1);
        self.worlds[i].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::SpielState;
    use crate::rules::{FullRules, Preset};

    /// A pool weighted by a head sure that one hidden tile is with the
    /// opponent draws (almost) only worlds that put it there, where the
    /// constraints belief alone puts it there about half the time; a head
    /// with no opinion weighs every world alike.
    #[test]
    fn a_belief_pool_draws_the_worlds_its_head_believes() {
        let mut state = SpielState::new(FullRules::preset(Preset::Block), 0);
        let mut rng = engine::seed::keyed_rng(7, 0, 0, b"pooltest", 0);
        state.apply_chance(&mut rng).unwrap();
        let me = state.current_player() as u8;
        let mut truth = Vec::new();
        state.holders(me, &mut truth);
        let tile = truth.iter().position(|&h| h == 1).expect("a tile in the boneyard");
        let (tiles, holders) = (truth.len(), state.belief_holders());
        let mut logits = vec![0.0f32; tiles * holders];
        let mut pool = super::BeliefPool::default();
        pool.prepare_head(&state, me, &logits, holders, 256, &mut rng).unwrap();
        assert!((pool.ess - 256.0).abs() < 1e-6, "no opinion: {}", pool.ess);
        logits[tile * holders] = 30.0;
        pool.prepare_head(&state, me, &logits, holders, 256, &mut rng).unwrap();
        assert!(pool.ess > 60.0 && pool.ess < 200.0, "about half the pool: {}", pool.ess);
        let mut h = Vec::new();
        let with_opponent = (0..400)
            .filter(|_| {
                pool.draw(&mut rng).holders(me, &mut h);
                h[tile] == 0
            })
            .count();
        assert!(with_opponent >= 399, "{with_opponent} of 400 draws");
    }
}
