//! The worlds of a partial-observation decision, from the chosen belief
//! (docs/beliefs.md): PIMC takes K of them, ISMCTS one per iteration.
//!
//! - `uniform`: the unseen tiles dealt again uniformly, each hand keeping
//!   its size (what a seat shows when it draws or passes is ignored).
//! - `constraints`: exactly uniform among the deals that agree with every
//!   void ([`Constraints`]).
//! - `dominai`: tiles dealt one by one (in a random order) to a holder with
//!   room, chosen in proportion to seed 002's absolute probability (a
//!   holder with room, uniformly, where the matrix gives none).
//! - `model`: a pool of `constraints` worlds weighted by the likelihood of
//!   the other seats' observed plays under their strategies
//!   ([`model_weight`]); PIMC resamples K worlds from it (systematic
//!   resampling), ISMCTS draws from it by weight. The pool's effective
//!   sample size is reported.
//!
//! Every step draws only from the seat's own stream, in a fixed order: a
//! decision's worlds are a pure function of the position, what was seen,
//! the settings and the stream.

use rand_core::RngCore;

use engine::ActionList;
use engine::Belief;
use engine::{TileSet, bits};

use super::belief::{BONEYARD, Constraints, HOLDERS, Marginals, Observation, world_of};
use super::fives::FivesPosition;
use super::rules::{FullRules, MAX_SEATS};
use super::seen::Seen;
use super::targets::{FullTarget, fixed_choice};
use engine::seed::below_u32;

/// How well a belief placed the hidden tiles at one decision (against
/// where they truly were): averaged over the hidden tiles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BeliefScore {
    /// Mean of -ln P(the tile's true holder).
    pub log_loss: f64,
    /// Mean over tiles of the squared error summed over holders.
    pub brier: f64,
    /// The `model` pool's effective sample size (`None` for other beliefs).
    pub ess: Option<f64>,
}

/// The probability that a seat strays from its strategy's play, in the
/// `model` belief's likelihood (a deterministic strategy's play gets
/// `1 - MODEL_TREMBLE + MODEL_TREMBLE / n`, any other `MODEL_TREMBLE / n`,
/// `n` plays): a wrong model then lowers a world's weight instead of
/// ruling it out.
pub const MODEL_TREMBLE: f64 = 0.02;

/// The `model` belief's pool: this many `constraints` worlds per world
/// wanted (at least [`MODEL_POOL_MIN`], at most [`MODEL_POOL_MAX`]).
pub const MODEL_POOL_PER_WORLD: usize = 8;
/// The smallest `model` pool.
pub const MODEL_POOL_MIN: usize = 64;
/// The largest `model` pool.
pub const MODEL_POOL_MAX: usize = 4096;

/// Where the worlds of a decision come from: the belief, and what its
/// `model` variant needs besides.
#[derive(Clone, Copy, Debug)]
pub struct WorldSource<'a> {
    /// The belief.
    pub belief: Belief,
    /// Each seat's strategy, whose likelihood weighs `model`'s worlds.
    pub models: &'a [FullTarget; MAX_SEATS],
    /// The worlds wanted (sizes the `model` pool).
    pub worlds: usize,
}

/// The worlds of one decision; reusable (its buffers are kept).
#[derive(Clone, Debug, Default)]
pub struct WorldSampler {
    belief: Belief,
    pos: Option<FivesPosition>,
    obs: Option<Observation>,
    constraints: Constraints,
    dominai: Marginals_,
    pool: Vec<FivesPosition>,
    /// Cumulative weights of the pool.
    cumulative: Vec<f64>,
    ess: Option<f64>,
}

/// A boxed marginals table (512 floats would make the sampler large to move).
#[derive(Clone, Debug)]
struct Marginals_(Box<Marginals>);

impl Default for Marginals_ {
    fn default() -> Self {
        Marginals_(Box::new([[0.0; HOLDERS]; 64]))
    }
}

impl WorldSampler {
    /// Prepares the worlds of the decision of `pos`'s mover (`pos` is the
    /// true position: only what the mover may know of it is used) from
    /// `source`, given what the mover has seen.
    pub fn prepare(
        &mut self,
        rules: &FullRules,
        pos: &FivesPosition,
        seen: &Seen,
        source: WorldSource,
        rng: &mut impl RngCore,
    ) {
        let WorldSource { belief, models, worlds } = source;
        let seat = pos.mover;
        let (void, void_pips) = seen.voids();
        let mut obs = Observation::new(rules, pos, seat, &void, &void_pips);
        if belief == Belief::Uniform {
            obs = obs.without_voids();
        }
        self.belief = belief;
        self.pos = Some(*pos);
        self.obs = Some(obs);
        self.ess = None;
        match belief {
            Belief::Uniform | Belief::Constraints => self.constraints.update(&obs),
            Belief::Dominai => {
                super::dominai::DominaiMatrices::new(rules, &obs).marginals(&mut self.dominai.0);
            }
            Belief::Model => {
                self.constraints.update(&obs);
                let n = (worlds * MODEL_POOL_PER_WORLD).clamp(MODEL_POOL_MIN, MODEL_POOL_MAX);
                self.pool.clear();
                self.cumulative.clear();
                let (mut sum, mut sum2) = (0.0, 0.0);
                for _ in 0..n {
                    let w = self.constraints.sample_world(pos, rng).unwrap_or(*pos);
                    let weight = model_weight(rules, seen, &w, seat, models);
                    sum += weight;
                    sum2 += weight * weight;
                    self.pool.push(w);
                    self.cumulative.push(sum);
                }
                self.ess = Some(if sum2 > 0.0 { sum * sum / sum2 } else { 0.0 });
            }
        }
    }

    /// The effective sample size of the `model` pool, `(sum w)^2 / sum w^2`
    /// (`None` for the other beliefs).
    pub fn ess(&self) -> Option<f64> {
        self.ess
    }

    /// One world drawn from the belief.
    pub fn draw(&mut self, rng: &mut impl RngCore) -> FivesPosition {
        let pos = self.pos.expect("prepared");
        match self.belief {
            Belief::Uniform | Belief::Constraints => self.constraints.sample_world(&pos, rng).unwrap_or(pos),
            Belief::Dominai => self.dominai_world(&pos, rng),
            Belief::Model => {
                let total = *self.cumulative.last().expect("a pool");
                if total <= 0.0 {
                    return self.pool[below_u32(rng, self.pool.len() as u32) as usize];
                }
                let u = engine::seed::unit(rng) * total;
                let i = self.cumulative.partition_point(|&c| c <= u).min(self.pool.len() - 1);
                self.pool[i]
            }
        }
    }

    /// `k` worlds for PIMC: `k` draws, or for `model` a systematic
    /// resampling of the pool (one uniform offset, `k` evenly spaced
    /// pointers into the cumulative weights).
    pub fn worlds(&mut self, k: usize, rng: &mut impl RngCore, out: &mut Vec<FivesPosition>) {
        out.clear();
        if self.belief != Belief::Model {
            for _ in 0..k {
                let w = self.draw(rng);
                out.push(w);
            }
            return;
        }
        let total = *self.cumulative.last().expect("a pool");
        if total <= 0.0 {
            // No world explains the plays: the pool's first k, unweighted.
            out.extend(self.pool.iter().cycle().take(k));
            return;
        }
        let step = total / k as f64;
        let mut u = engine::seed::unit(rng) * step;
        let mut i = 0;
        for _ in 0..k {
            while i + 1 < self.pool.len() && self.cumulative[i] <= u {
                i += 1;
            }
            out.push(self.pool[i]);
            u += step;
        }
    }

    /// The belief's marginals: exact for `uniform` and `constraints`, seed
    /// 002's (renormalised) for `dominai`, the pool's weighted frequencies
    /// for `model`.
    pub fn marginals(&mut self, out: &mut Marginals) {
        match self.belief {
            Belief::Uniform | Belief::Constraints => self.constraints.marginals(out),
            Belief::Dominai => *out = *self.dominai.0,
            Belief::Model => {
                let obs = self.obs.expect("prepared");
                for row in out.iter_mut() {
                    *row = [0.0; HOLDERS];
                }
                let total = *self.cumulative.last().expect("a pool");
                let n = self.pool.len() as f64;
                for (i, w) in self.pool.iter().enumerate() {
                    let weight = if total > 0.0 {
                        (self.cumulative[i] - if i == 0 { 0.0 } else { self.cumulative[i - 1] }) / total
                    } else {
                        1.0 / n
                    };
                    let at = obs.holders_in(w);
                    for t in bits(obs.hidden) {
                        out[t as usize][at[t as usize] as usize] += weight;
                    }
                }
            }
        }
    }

    /// The observation of the last [`Self::prepare`].
    pub fn observation(&self) -> &Observation {
        self.obs.as_ref().expect("prepared")
    }

    fn dominai_world(&mut self, pos: &FivesPosition, rng: &mut impl RngCore) -> FivesPosition {
        let obs = self.obs.expect("prepared");
        let mut tiles = [0u8; 64];
        let mut n = 0;
        for t in bits(obs.hidden) {
            tiles[n] = t;
            n += 1;
        }
        for i in (1..n).rev() {
            let j = below_u32(rng, i as u32 + 1) as usize;
            tiles.swap(i, j);
        }
        let mut room = obs.size;
        let mut at = [u8::MAX; 64];
        for &t in &tiles[..n] {
            let p = &self.dominai.0[t as usize];
            let mass: f64 = (0..HOLDERS).filter(|&h| room[h] > 0).map(|h| p[h]).sum();
            let h = if mass > 0.0 {
                let mut u = engine::seed::unit(rng) * mass;
                let mut pick = BONEYARD;
                for h in (0..HOLDERS).filter(|&h| room[h] > 0) {
                    pick = h;
                    if u < p[h] {
                        break;
                    }
                    u -= p[h];
                }
                pick
            } else {
                let open: u32 = (0..HOLDERS).filter(|&h| room[h] > 0).count() as u32;
                let k = below_u32(rng, open) as usize;
                (0..HOLDERS)
                    .filter(|&h| room[h] > 0)
                    .nth(k)
                    .expect("a holder with room")
            };
            room[h] -= 1;
            at[t as usize] = h as u8;
        }
        world_of(&obs, pos, &at)
    }
}

/// The likelihood, in `world`, of the plays the seats other than `seat`
/// made so far, under their strategies `models`: the product over their
/// plays of P(play | the hand they held then in `world`, their strategy).
/// The hand then is the world's hand plus the tiles played since, known
/// only if the seat has not drawn since (plays before a draw are not
/// counted). `random`: 1/n of its n plays then; a deterministic strategy:
/// its play, trembling with [`MODEL_TREMBLE`]; a searching seat: not
/// counted.
pub fn model_weight(
    rules: &FullRules,
    seen: &Seen,
    world: &FivesPosition,
    seat: u8,
    models: &[FullTarget; MAX_SEATS],
) -> f64 {
    let mut list = ActionList::default();
    let mut weight = 1.0;
    let mut later: [TileSet; MAX_SEATS] = [0; MAX_SEATS];
    // Backwards, so that the tiles played since are known at each play.
    for (before, action, undrawn) in seen.plays().rev() {
        let s = before.mover;
        later[s as usize] |= 1 << action.tile;
        let model = models[s as usize];
        if s == seat || !undrawn || model == FullTarget::Searcher {
            continue;
        }
        let mut then = *before;
        then.hands[s as usize] = world.hands[s as usize] | later[s as usize];
        then.actions(rules, &mut list);
        let n = list.len();
        if n <= 1 {
            continue;
        }
        let p = match fixed_choice(rules, model, &then, list.as_slice()) {
            None => {
                if list.as_slice().contains(&action) {
                    1.0 / n as f64
                } else {
                    0.0
                }
            }
            Some(k) => {
                let legal = list.as_slice().contains(&action);
                let chosen = list.as_slice()[k] == action;
                (1.0 - MODEL_TREMBLE) * chosen as u8 as f64 + if legal { MODEL_TREMBLE / n as f64 } else { 0.0 }
            }
        };
        weight *= p;
        if weight == 0.0 {
            break;
        }
    }
    weight
}

/// Every decision (a mover with a play) of one hand dealt as `hands` in
/// which every seat plays `strategy`, drawing from `rng` (which also
/// serves a random strategy): the position and what the seats had seen
/// then. Positions to measure beliefs on (benchmarks, tests).
pub fn hand_decisions(
    rules: &FullRules,
    hands: [TileSet; MAX_SEATS],
    strategy: FullTarget,
    rng: &mut rand_chacha::ChaCha20Rng,
) -> Vec<(FivesPosition, Seen)> {
    let mut pos = FivesPosition::deal(rules, hands, super::fives::Opening::of(rules, &hands, None));
    let mut seen = Seen::default();
    let mut list = ActionList::default();
    let mut out = Vec::new();
    while pos.end.is_none() {
        if !pos.can_play(rules, pos.mover) {
            seen.stuck(rules, &pos);
            let seat = pos.mover;
            if pos.must_pass(rules) {
                pos.pass(rules);
            } else {
                let tiles: Vec<u8> = bits(pos.boneyard).collect();
                pos.draw(tiles[below_u32(rng, tiles.len() as u32) as usize]);
                seen.drew(seat);
            }
            continue;
        }
        out.push((pos, seen.clone()));
        pos.actions(rules, &mut list);
        let i = super::targets::full_choice(rules, strategy, &pos, list.as_slice(), rng);
        seen.played(&pos, list.as_slice()[i]);
        pos.play(rules, list.as_slice()[i]);
    }
    out
}
