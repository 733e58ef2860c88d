//! muggins' networks: a multilayer perceptron with policy and value heads
//! over a seat's information state (the observation encodings of
//! `full::spiel::Encoding`, which this crate does not need to know: a model
//! file names its game, encoding and widths, and its user checks them with
//! [`Model::load_for`]), its model files, and batched inference on the CPU.
//!
//! - `kernel`: the dense layer (AVX2/FMA tiles, a portable path that gives
//!   the same bits) and tanh.
//! - `mlp`: [`Mlp`], [`Dense`], [`Scratch`]: layers and batched forward
//!   passes, on one thread or several.
//! - `model`: [`Model`], [`Meta`]: safetensors files with their description
//!   in the header, every refusal naming the file and the problem.
//! - `train`: [`loss_and_grads`] (policy cross-entropy over the legal
//!   actions and the value's squared error, backpropagated) and [`Adam`].
//!
//! Determinism: an evaluation is a pure function of the file and the
//! observation: the same bits alone or in a batch, on any number of
//! threads, with or without AVX2 (kernel.rs says how).

mod kernel;
mod mlp;
mod model;
mod train;

pub use kernel::{fma_peak_flops, fma_peak_flops_on};
pub use mlp::{BATCH_CHUNK, BeliefHead, Dense, Mlp, Scratch};
pub use model::{
    BELIEF_PRIOR_CONSTRAINTS, BeliefShape, Expect, FORMAT_VERSION, META_KEY, Meta, Model, NetError, Provenance,
};
pub use train::{Adam, BLOCK_ROWS, Batch, BatchError, Grads, Loss, NO_HOLDER, loss_and_grads, sgd_step};

/// `ln(sum(exp(x)))` over `xs`, computed from their largest (so that no
/// term overflows): a softmax's normaliser, `-inf` for none.
pub fn log_sum_exp<I: Iterator<Item = f64> + Clone>(xs: I) -> f64 {
    let top = xs.clone().fold(f64::NEG_INFINITY, f64::max);
    if top == f64::NEG_INFINITY {
        return top;
    }
    top + xs.map(|x| (x - top).exp()).sum::<f64>().ln()
}
