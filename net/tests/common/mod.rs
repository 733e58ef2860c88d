//! What the net crate's test binaries share: test numbers and random
//! networks.

#![allow(dead_code)]

use net::{Dense, Mlp};

/// Test values in [-scale, scale): splitmix64 (a fixed sequence, not a
/// stream of the experiments').
pub fn uniform(state: &mut u64, n: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (((z ^ (z >> 31)) >> 40) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// A network of `hidden` tanh layers with weights from [`uniform`].
pub fn random_mlp(seed: u64, inputs: usize, hidden: &[usize], actions: usize) -> Mlp {
    let mut rng = seed;
    let mut layers = Vec::new();
    let mut width = inputs;
    for &h in hidden {
        let scale = (2.0 / width as f32).sqrt();
        layers.push(Dense::new(
            width,
            uniform(&mut rng, width * h, scale),
            uniform(&mut rng, h, 0.1),
        ));
        width = h;
    }
    let policy = Dense::new(
        width,
        uniform(&mut rng, width * actions, 0.3),
        uniform(&mut rng, actions, 0.1),
    );
    let value = Dense::new(width, uniform(&mut rng, width, 0.3), uniform(&mut rng, 1, 0.1));
    Mlp::new(inputs, layers, policy, value)
}
