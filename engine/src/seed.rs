//! Seed derivation (docs/rules.md section 7).
//!
//! Every game draws from ChaCha20 streams keyed by the experiment seed and the
//! game's starting state and repeat only. The 256-bit ChaCha key is the
//! concatenation of `experiment_seed`, `starting_state` and `repeat` (each a
//! little-endian u64) and the 8 ASCII bytes `muggins1`; the stream number picks
//! what the draws are for ([`Stream`]). Engine, information source,
//! observability and target never enter the key, so every engine faces the same
//! deals, boneyard orders and random-target draws (common random numbers).
//!
//! Every stream of a result comes from [`keyed_rng`], with the tag of its
//! use (the constants below). Integers below `n` are taken here, never from
//! `rand`'s sampling code: [`below`] as `(x * n) >> 64` on one `next_u64`
//! (the thesis, the full game's shuffles), [`below_u32`] by Lemire's
//! rejection on `next_u32` (the full game's worlds and ISMCTS), so results
//! do not depend on any version of `rand`.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

/// What a random stream of a game is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// The order of the boneyard (one Fisher-Yates shuffle).
    Boneyard = 0,
    /// The random target's choices (one draw per target decision).
    Target = 1,
    /// The player's sample of worlds under partial observation.
    Worlds = 2,
}

/// The thesis's games ([`game_rng`]).
pub const GAMES: &[u8; 8] = b"muggins1";
/// The classifier's training games ([`training_rng`]).
pub const TRAINING: &[u8; 8] = b"mugtrain";
/// The classifier's holdout and cross-validation splits.
pub const CLASSIFIER_SPLITS: &[u8; 8] = b"muggclf1";
/// The random forest's trees (bootstrap samples and feature draws).
pub const FOREST: &[u8; 8] = b"muggrf01";
/// The full game's matches: keyed by (seed, first deal, repeat), stream
/// `hand << 8 | purpose` (0 a later hand's deal, 1 the boneyard's order,
/// 2 + seat that seat's random choices and worlds).
pub const FULL_GAME: &[u8; 8] = b"mugfull1";
/// The learned evaluation's training positions.
pub const EVAL_TRAINING: &[u8; 8] = b"mugeval1";
/// The opponent-move predictors' training hands.
pub const PREDICT_TRAINING: &[u8; 8] = b"mugpred1";
/// A network's draws at a temperature in a game of `muggins run` or
/// `muggins play`: keyed by (seed, deal, repeat), stream the network's side.
pub const NET_SEATS: &[u8; 8] = b"mugnet01";
/// Self-play training (`jobs::train`): a generation's games, keyed by
/// (seed, generation, game), stream 0 the deal, 1 the plays' draws, 2 the
/// population's draw.
pub const TRAIN_SELF_PLAY: &[u8; 8] = b"mugtrsp1";
/// Training's gate: the new network against the best, keyed by (seed,
/// generation, pair).
pub const TRAIN_GATE: &[u8; 8] = b"mugtrgt1";
/// Training's evaluation against fixed anchors, keyed by (seed,
/// generation, pair): every anchor meets the same deals.
pub const TRAIN_EVAL: &[u8; 8] = b"mugtrev1";
/// Training's first network's weights (seed, 0, 0) and each fit's
/// minibatch order (seed, generation, epoch).
pub const TRAIN_FIT: &[u8; 8] = b"mugtrft1";
/// The Python package's streams: a bot's decisions and
/// `resample_from_infostate` (keyed by the seed the caller gives).
pub const PYTHON: &[u8; 8] = b"mugpyth1";

/// The one key derivation of every ChaCha20 stream of a result: the 256-bit
/// key is `a`, `b`, `c` (little-endian u64 each) and an 8-byte ASCII `tag`
/// naming the use (the constants above, the one place each is spelled), so
/// no two uses share draws. Benchmarks key their own streams with tags of
/// their own (`bench...`); the playout benchmarks (`full::playouts`) draw
/// from one ChaCha8 stream seeded from a u64, a timing, not a result.
pub fn keyed_rng(a: u64, b: u64, c: u64, tag: &[u8; 8], stream: u64) -> ChaCha20Rng {
    let mut key = [0u8; 32];
    key[0..8].copy_from_slice(&a.to_le_bytes());
    key[8..16].copy_from_slice(&b.to_le_bytes());
    key[16..24].copy_from_slice(&c.to_le_bytes());
    key[24..32].copy_from_slice(tag);
    let mut rng = ChaCha20Rng::from_seed(key);
    rng.set_stream(stream);
    rng
}

/// The random stream `stream` of the game at (`starting_state`, `repeat`).
pub fn game_rng(experiment_seed: u64, starting_state: u64, repeat: u64, stream: Stream) -> ChaCha20Rng {
    keyed_rng(experiment_seed, starting_state, repeat, GAMES, stream as u64)
}

/// A uniform integer in `0..n` (n > 0) from one 64-bit draw: the thesis's
/// draws and the full game's shuffles and random strategies.
#[inline]
pub fn below(rng: &mut impl RngCore, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

/// A uniform integer below `n` (n > 0) by Lemire's multiply-and-reject on
/// 32-bit draws (no bias): the full game's world sampling, ISMCTS and
/// random deals. A second rule beside [`below`], kept deliberately: each
/// is part of the results drawn with it, so neither may change.
#[inline]
pub fn below_u32(rng: &mut impl RngCore, n: u32) -> u32 {
    debug_assert!(n > 0);
    let threshold = n.wrapping_neg() % n;
    loop {
        let m = rng.next_u32() as u64 * n as u64;
        if (m as u32) >= threshold {
            return (m >> 32) as u32;
        }
    }
}

/// A uniform float in [0, 1) from the top 53 bits of one `next_u64`.
#[inline]
pub fn unit(rng: &mut (impl RngCore + ?Sized)) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Shuffles `items` in place (Fisher-Yates, from the last position down).
pub fn shuffle<T>(rng: &mut impl RngCore, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

/// What a random stream of a training game is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrainingStream {
    /// The starting state (one draw).
    Deal = 0,
    /// The order of the boneyard (one Fisher-Yates shuffle).
    Boneyard = 1,
    /// The target seat's random policy.
    Target = 2,
    /// The player seat's random policy.
    Player = 3,
}

/// The stream of training game `index`: the key is `experiment_seed` and
/// `index` (little-endian u64 each), 8 zero bytes and the ASCII bytes
/// `mugtrain`, so training draws never coincide with grid draws.
pub fn training_rng(experiment_seed: u64, index: u64, stream: TrainingStream) -> ChaCha20Rng {
    keyed_rng(experiment_seed, index, 0, TRAINING, stream as u64)
}
