//! M* and Expectimax with a network's value at the leaves
//! (`full::spiel::leaf_decide`, `engine = "mstar"` with `net`): on the
//! shipped block, team and All-Fives networks every decision is legal and a
//! function of the model, the state, the seat's view and the stream; at
//! depth 1 it takes the play whose worlds' mean value is best; a search
//! that reaches the end on every line plays exact minimax on its worlds;
//! every setting out of range is refused.

use std::sync::Arc;

use engine::PlayerEngine;
use full::spiel::{
    CHANCE, Encoding, LeafBuffers, LeafError, LeafSearch, NetPolicy, PolicyError, SpielState, leaf_decide,
};
use full::{FullRules, Preset};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::shipped::model;

fn shipped() -> Vec<(Preset, FullRules, Arc<net::Model>, Encoding)> {
    crate::shipped::models(&[
        (Preset::Block, "train-block.safetensors"),
        (Preset::Team, "train-team.safetensors"),
        (Preset::AllFives, "train-all-fives.safetensors"),
    ])
}

/// A hand dealt from `seed`, then `plays` random actions (draws too).
fn state(rules: &FullRules, seed: u64, plays: usize) -> SpielState {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut s = SpielState::new(rules.clone(), 0);
    let mut done = 0;
    while !s.is_terminal() && done < plays {
        if s.current_player() == CHANCE {
            s.apply_chance(&mut rng).unwrap();
            continue;
        }
        let legal = s.legal_actions();
        s.apply(legal[engine::seed::below_u32(&mut rng, legal.len() as u32) as usize])
            .unwrap();
        done += 1;
    }
    while s.current_player() == CHANCE {
        s.apply_chance(&mut rng).unwrap();
    }
    s
}

#[test]
fn value_leaf_decisions_are_legal_and_repeatable() {
    for (preset, rules, m, encoding) in shipped() {
        let mut buffers = LeafBuffers::default();
        for (k, plays) in [0usize, 3, 7].into_iter().enumerate() {
            let s = state(&rules, 60 + k as u64, plays);
            if s.is_terminal() {
                continue;
            }
            let p = s.current_player() as u8;
            let legal = s.legal_actions();
            for engine in [PlayerEngine::MStar, PlayerEngine::Expectimax] {
                for depth in [1, 3] {
                    let how = LeafSearch::new(engine, depth, 4).unwrap();
                    let mut decide = |seed: u64| {
                        let mut rng = ChaCha20Rng::seed_from_u64(seed);
                        leaf_decide(&mut buffers, &m, encoding, &s, p, how, &mut rng).unwrap()
                    };
                    let a = decide(3);
                    assert!(legal.contains(&a), "{preset:?} {how:?}: {a} is not among {legal:?}");
                    let _ = decide(4);
                    assert_eq!(decide(3), a, "{preset:?} {how:?}: the same stream, the same play");
                }
            }
        }
    }
}

/// The network's value of `world` for `player`'s side: its mover's own
/// view, negated for the other side; an ended game's return.
fn leaf_value(m: &net::Model, encoding: Encoding, world: &SpielState, player: u8) -> f64 {
    let scale = world.value_scale();
    if world.is_terminal() {
        return world.returns()[player as usize] / scale;
    }
    let mover = world.current_player() as u8;
    let mut obs = Vec::new();
    world.encode(mover, encoding, &mut obs);
    let (mut logits, mut value) = (vec![0.0; m.meta.actions], [0.0f32]);
    m.mlp
        .forward(&obs, 1, &mut logits, &mut value, &mut net::Scratch::default());
    let v = value[0] as f64;
    if world.rules().side(mover) == world.rules().side(player) {
        v
    } else {
        -v
    }
}

/// The sum over `worlds` worlds drawn from `seed`'s stream (as a decision
/// draws them) of each legal play's value by `value` of the state after
/// it; `None` if one is `None`.
fn world_sums(
    s: &SpielState,
    p: u8,
    worlds: usize,
    seed: u64,
    mut value: impl FnMut(&SpielState) -> Option<f64>,
) -> Option<Vec<f64>> {
    let legal = s.legal_actions();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut sums = vec![0.0; legal.len()];
    for _ in 0..worlds {
        let world = s.resample(p, &mut rng).unwrap();
        for (sum, &a) in sums.iter_mut().zip(&legal) {
            let mut child = world.clone();
            child.apply(a).unwrap();
            *sum += value(&child)?;
        }
    }
    Some(sums)
}

/// The first of the best sums (ties within 1e-9 to the first).
fn first_best(sums: &[f64]) -> usize {
    (0..sums.len()).fold(0, |b, i| if sums[i] > sums[b] + 1e-9 { i } else { b })
}

/// At depth 1 both engines value each play by the network's value after it,
/// averaged over the worlds drawn, in order, from the stream.
#[test]
fn at_depth_one_the_play_with_the_best_mean_value_is_taken() {
    let mut differ = 0;
    for (preset, rules, m, encoding) in shipped().into_iter().filter(|(p, ..)| *p != Preset::AllFives) {
        for seed in 0..6u64 {
            let s = state(&rules, 80 + seed, 2 + seed as usize);
            if s.is_terminal() || s.legal_actions().len() < 2 {
                continue;
            }
            let p = s.current_player() as u8;
            let legal = s.legal_actions();
            let sums = world_sums(&s, p, 5, seed, |child| Some(leaf_value(&m, encoding, child, p))).unwrap();
            let best = first_best(&sums);
            differ += usize::from(sums.iter().any(|&x| (x - sums[0]).abs() > 1e-6));
            for engine in [PlayerEngine::MStar, PlayerEngine::Expectimax] {
                let how = LeafSearch::new(engine, 1, 5).unwrap();
                let mut rng = ChaCha20Rng::seed_from_u64(seed);
                let a = leaf_decide(&mut LeafBuffers::default(), &m, encoding, &s, p, how, &mut rng).unwrap();
                assert_eq!(a, legal[best], "{preset:?} seed {seed} {engine:?}: values {sums:?}");
            }
        }
    }
    assert!(differ >= 4, "the plays' values differ in {differ} states only");
}

/// Exact minimax of `world` for `player`'s side to the end (no depth):
/// `None` if a line is longer than `depth`.
fn minimax(world: &SpielState, player: u8, depth: u8) -> Option<f64> {
    if world.is_terminal() {
        return Some(world.returns()[player as usize] / world.value_scale());
    }
    if depth == 0 {
        return None;
    }
    let mover = world.current_player() as u8;
    let ours = world.rules().side(mover) == world.rules().side(player);
    let mut best: Option<f64> = None;
    for a in world.legal_actions() {
        let mut child = world.clone();
        child.apply(a).unwrap();
        let v = minimax(&child, player, depth - 1)?;
        best = Some(match best {
            None => v,
            Some(b) if ours => b.max(v),
            Some(b) => b.min(v),
        });
    }
    best
}

/// Late in a block hand, depth 8 reaches the end on every line: Expectimax
/// reads no leaf and plays exact minimax on its worlds.
#[test]
fn a_search_to_the_end_plays_exact_minimax_on_its_worlds() {
    let rules = FullRules::preset(Preset::Block);
    let m = model("train-block.safetensors");
    let encoding = m.meta.encoding.parse().unwrap();
    let mut checked = 0;
    for seed in 0..30u64 {
        let s = state(&rules, 200 + seed, 8);
        if s.is_terminal() || s.legal_actions().len() < 2 {
            continue;
        }
        let p = s.current_player() as u8;
        let legal = s.legal_actions();
        let Some(sums) = world_sums(&s, p, 3, seed, |child| minimax(child, p, 7)) else {
            continue;
        };
        checked += 1;
        let best = first_best(&sums);
        let how = LeafSearch::new(PlayerEngine::Expectimax, 8, 3).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let a = leaf_decide(&mut LeafBuffers::default(), &m, encoding, &s, p, how, &mut rng).unwrap();
        assert_eq!(a, legal[best], "seed {seed}: exact values {sums:?}");
    }
    assert!(checked >= 5, "only {checked} states end within 8 plays on every line");
}

#[test]
fn value_leaf_settings_out_of_range_are_refused() {
    assert_eq!(
        LeafSearch::new(PlayerEngine::Ismcts, 2, 4).unwrap_err(),
        LeafError::Engine("ismcts")
    );
    assert_eq!(
        LeafSearch::new(PlayerEngine::MStar, 0, 4).unwrap_err(),
        LeafError::Depth(0)
    );
    assert_eq!(
        LeafSearch::new(PlayerEngine::MStar, 9, 4).unwrap_err(),
        LeafError::Depth(9)
    );
    assert_eq!(
        LeafSearch::new(PlayerEngine::MStar, 2, 0).unwrap_err(),
        LeafError::Worlds(0)
    );
    assert_eq!(
        LeafSearch::new(PlayerEngine::Expectimax, 2, 1025).unwrap_err(),
        LeafError::Worlds(1025)
    );
    let m = model("train-block.safetensors");
    let plain = NetPolicy::new(m, "train-block.safetensors", 0.0).unwrap();
    let how = LeafSearch::new(PlayerEngine::MStar, 2, 4).unwrap();
    let guided = plain.clone().with_simulations(100).unwrap();
    assert!(matches!(guided.with_leaves(how), Err(PolicyError::Leaves(_))));
    let leaves = plain.with_leaves(how).unwrap();
    assert!(matches!(
        leaves.clone().with_simulations(100),
        Err(PolicyError::Leaves(_))
    ));
    assert!(
        leaves.name().contains("mstar depth 2 x 4 worlds, value leaves"),
        "{}",
        leaves.name()
    );
    // As a player: a legal play, the same for the same stream.
    let s = state(&FullRules::preset(Preset::Block), 9, 1);
    let p = s.current_player() as u8;
    let first = leaves.decide(&s, p, &mut ChaCha20Rng::seed_from_u64(2)).unwrap();
    assert!(s.legal_actions().contains(&first));
    assert_eq!(leaves.decide(&s, p, &mut ChaCha20Rng::seed_from_u64(2)).unwrap(), first);
}
