//! M* and Expectimax with a network's value at the leaves, on sampled
//! worlds (PIMC): `[agents.X] engine = "mstar"` or `"expectimax"` with
//! `net = FILE` (docs/train.md, "Value leaves").
//!
//! A decision draws `worlds` worlds from the deciding seat's constraints
//! belief ([`SpielState::resample`], the seat's stream) and, in each,
//! values every legal play by a search to `depth` plays: the deciding
//! side's seats take their best play; each opponent its worst for the side
//! (Expectimax, "paranoid") or the network's own greedy play from that
//! seat's view (M*: the network is the model of the others). A position at
//! the depth is worth the network's value for its mover from the mover's
//! own view of the world (the mover's scaled return, as training taught
//! it: [`SpielState::value_scale`]), turned to the deciding side's; an
//! ended game its true return over the same scale. All Fives' draws inside
//! the search are drawn once, where the line meets them, from the same
//! stream. The play with the best mean over the worlds is chosen, ties to
//! the lowest id.
//!
//! A decision is a pure function of the state, the seat's view, the model
//! and the stream: the worlds and draws come from the stream in a fixed
//! order, and the forward pass has the same bits on any machine.

use rand_core::RngCore;

use engine::PlayerEngine;

use super::{CHANCE, Encoding, SpielError, SpielState};

/// The deepest a value-leaf search may look, in plays.
pub const MAX_LEAF_DEPTH: u8 = 8;

/// The most worlds a value-leaf decision may draw.
pub const MAX_LEAF_WORLDS: u16 = 1024;

/// How a network-valued search decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafSearch {
    /// `MStar` (the others follow the network's greedy play) or
    /// `Expectimax` (the others minimise).
    pub engine: PlayerEngine,
    /// Plays searched before a leaf (1 to [`MAX_LEAF_DEPTH`]).
    pub depth: u8,
    /// Worlds drawn a decision (1 to [`MAX_LEAF_WORLDS`]).
    pub worlds: u16,
}

/// Why a [`LeafSearch`] was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LeafError {
    /// An engine that values no leaves this way.
    #[error("engine {0:?}: a network's value leaves are searched by \"mstar\" or \"expectimax\"")]
    Engine(&'static str),
    /// A depth out of range.
    #[error("depth = {0}: 1 to {MAX_LEAF_DEPTH} plays")]
    Depth(u32),
    /// A world count out of range.
    #[error("worlds = {0}: 1 to {MAX_LEAF_WORLDS}")]
    Worlds(u32),
}

impl LeafSearch {
    /// Checked construction: each field in range.
    pub fn new(engine: PlayerEngine, depth: u32, worlds: u32) -> Result<LeafSearch, LeafError> {
        if !matches!(engine, PlayerEngine::MStar | PlayerEngine::Expectimax) {
            return Err(LeafError::Engine(engine.name()));
        }
        if !(1..=MAX_LEAF_DEPTH as u32).contains(&depth) {
            return Err(LeafError::Depth(depth));
        }
        if !(1..=MAX_LEAF_WORLDS as u32).contains(&worlds) {
            return Err(LeafError::Worlds(worlds));
        }
        Ok(LeafSearch {
            engine,
            depth: depth as u8,
            worlds: worlds as u16,
        })
    }
}

/// The buffers a value-leaf search reuses between decisions.
#[derive(Debug, Default)]
pub struct LeafBuffers {
    obs: Vec<f32>,
    logits: Vec<f32>,
    scratch: net::Scratch,
    /// Each root play's values summed over the worlds so far.
    sums: Vec<f64>,
}

struct Search<'a, R> {
    model: &'a net::Model,
    encoding: Encoding,
    how: LeafSearch,
    /// The deciding seat, its side, and the scale of the returns.
    side: u8,
    player: u8,
    scale: f64,
    buffers: &'a mut LeafBuffers,
    rng: &'a mut R,
}

/// The action id `player` (the seat to act in `state`) plays by `how`,
/// its worlds and leaves read through `model` with `encoding` (checked
/// against the game by the caller).
pub fn leaf_decide(
    buffers: &mut LeafBuffers,
    model: &net::Model,
    encoding: Encoding,
    state: &SpielState,
    player: u8,
    how: LeafSearch,
    rng: &mut impl RngCore,
) -> Result<u32, SpielError> {
    let mut ids = [0u32; 128];
    let n = state.legal_ids(&mut ids);
    let mut sums = std::mem::take(&mut buffers.sums);
    sums.clear();
    sums.resize(n, 0.0);
    let mut search = Search {
        model,
        encoding,
        how,
        side: state.rules().side(player),
        player,
        scale: state.value_scale().max(f64::MIN_POSITIVE),
        buffers,
        rng,
    };
    for _ in 0..how.worlds {
        let world = state.resample(player, search.rng)?;
        for (sum, &a) in sums.iter_mut().zip(&ids[..n]) {
            let mut child = world.clone();
            child.apply(a)?;
            *sum += search.value(child, how.depth - 1)?;
        }
    }
    let best = (0..n).fold(0, |b, i| if sums[i] > sums[b] + 1e-9 { i } else { b });
    search.buffers.sums = sums;
    Ok(ids[best])
}

impl<R: RngCore> Search<'_, R> {
    /// The network's logits and value for `mover` from its view of `world`.
    fn forward(&mut self, world: &SpielState, mover: u8) -> f64 {
        let b = &mut *self.buffers;
        world.encode(mover, self.encoding, &mut b.obs);
        b.logits.resize(self.model.meta.actions, 0.0);
        let mut value = [0.0f32];
        self.model
            .mlp
            .forward(&b.obs, 1, &mut b.logits, &mut value, &mut b.scratch);
        value[0] as f64
    }

    /// `mover`'s value (on the returns' scale over [`SpielState::value_scale`])
    /// as the deciding side's.
    fn for_side(&self, ours: bool, v: f64) -> f64 {
        if ours { v } else { -v }
    }

    fn value(&mut self, mut world: SpielState, depth: u8) -> Result<f64, SpielError> {
        while world.current_player() == CHANCE {
            world.apply_chance(self.rng)?;
        }
        if world.is_terminal() {
            return Ok(world.returns()[self.player as usize] / self.scale);
        }
        let mover = world.current_player() as u8;
        let ours = world.rules().side(mover) == self.side;
        if depth == 0 {
            let v = self.forward(&world, mover);
            return Ok(self.for_side(ours, v));
        }
        let mut ids = [0u32; 128];
        let n = world.legal_ids(&mut ids);
        if !ours && self.how.engine == PlayerEngine::MStar {
            // The network's greedy play models the opponent.
            self.forward(&world, mover);
            let logits = &self.buffers.logits;
            let a = ids[..n].iter().copied().fold(
                ids[0],
                |b, a| if logits[a as usize] > logits[b as usize] { a } else { b },
            );
            world.apply(a)?;
            return self.value(world, depth - 1);
        }
        let mut best = if ours { f64::NEG_INFINITY } else { f64::INFINITY };
        for &a in &ids[..n] {
            let mut child = world.clone();
            child.apply(a)?;
            let v = self.value(child, depth - 1)?;
            best = if ours { best.max(v) } else { best.min(v) };
        }
        Ok(best)
    }
}
