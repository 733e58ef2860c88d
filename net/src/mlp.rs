//! The network: tanh hidden layers, then a policy head (one logit per
//! action id) and a value head (the acting seat's expected return), both
//! on the last hidden layer, and optionally a belief head (for each tile,
//! one logit per holder it may be with: where the seat's hidden tiles
//! are). Inference is batched: `rows` observations in, `rows` logit rows
//! and values out, every row's numbers the same whatever the batch, the
//! thread count or the processor (kernel.rs).

use crate::kernel::{dense, pack, tanh_in_place};

/// Rows a forward pass takes through the layers at once (a multiple of the
/// kernel's 6-row blocks): 192 rows of 256 floats are 192 KB, which stay in
/// the L2 cache between layers.
pub const BATCH_CHUNK: usize = 192;

/// One fully connected layer: `inputs x outputs` weights (row-major) and
/// `outputs` biases.
#[derive(Clone, Debug)]
pub struct Dense {
    inputs: usize,
    weights: Vec<f32>,
    /// The weights repacked for the kernel (`kernel::pack`).
    packed: Vec<f32>,
    bias: Vec<f32>,
}

impl Dense {
    /// A layer from its weights (`inputs x outputs`, row-major) and biases.
    ///
    /// # Panics
    /// If the lengths disagree.
    pub fn new(inputs: usize, weights: Vec<f32>, bias: Vec<f32>) -> Dense {
        assert_eq!(weights.len(), inputs * bias.len(), "weights are inputs x outputs");
        let packed = pack(&weights, inputs, bias.len());
        Dense {
            inputs,
            weights,
            packed,
            bias,
        }
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.bias.len()
    }

    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    pub fn bias(&self) -> &[f32] {
        &self.bias
    }

    fn apply(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        dense(x, rows, &self.weights, &self.packed, &self.bias, y);
    }

    /// `y = b + x W` for `rows` rows (the inference kernel: training's
    /// forward pass is bit for bit the model's).
    pub(crate) fn apply_rows(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        self.apply(x, rows, y);
    }

    /// Changes the weights and biases in place with `f`, then repacks.
    fn update(&mut self, f: impl FnOnce(&mut [f32], &mut [f32])) {
        f(&mut self.weights, &mut self.bias);
        self.packed = pack(&self.weights, self.inputs, self.bias.len());
    }
}

/// A multilayer perceptron with policy and value heads (and optionally a
/// belief head).
#[derive(Clone, Debug)]
pub struct Mlp {
    inputs: usize,
    layers: Vec<Dense>,
    policy: Dense,
    value: Dense,
    belief: Option<BeliefHead>,
}

/// The belief head: `tiles x holders` logits (tile-major), a softmax over
/// the holders of each tile; over the network's last hidden layer, or
/// over a hidden layer of its own that reads the observation.
#[derive(Clone, Debug)]
pub struct BeliefHead {
    /// The holders a tile may be with.
    pub holders: usize,
    /// The layer (`outputs = tiles x holders`).
    pub dense: Dense,
    /// Its own hidden layer (tanh) over the observation, if it has one:
    /// then the policy's layers do not feed it, nor learn from it.
    pub trunk: Option<Dense>,
}

impl BeliefHead {
    /// The tiles it places.
    pub fn tiles(&self) -> usize {
        self.dense.outputs() / self.holders
    }
}

/// Buffers a thread reuses between evaluations (no allocation once grown).
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
}

impl Mlp {
    /// # Panics
    /// If the layers' widths do not chain or the value head is not one wide.
    pub fn new(inputs: usize, layers: Vec<Dense>, policy: Dense, value: Dense) -> Mlp {
        let mut width = inputs;
        for l in &layers {
            assert_eq!(l.inputs, width, "layers chain");
            width = l.outputs();
        }
        assert!(policy.inputs == width && value.inputs == width && value.outputs() == 1);
        Mlp {
            inputs,
            layers,
            policy,
            value,
            belief: None,
        }
    }

    /// The same network with a belief head of `holders` holders a tile.
    ///
    /// # Panics
    /// If the head does not take the last hidden layer, or its width is
    /// not a multiple of `holders`.
    pub fn with_belief(mut self, belief: Dense, holders: usize) -> Mlp {
        assert!(holders >= 1 && belief.outputs().is_multiple_of(holders) && belief.outputs() > 0);
        assert_eq!(
            belief.inputs, self.policy.inputs,
            "the belief head takes the last hidden layer"
        );
        self.belief = Some(BeliefHead {
            holders,
            dense: belief,
            trunk: None,
        });
        self
    }

    /// The same network with a belief head of its own: the hidden layer
    /// `trunk` (tanh) over the observation, then `belief`.
    ///
    /// # Panics
    /// If `trunk` does not take the observation, `belief` does not take
    /// `trunk`, or its width is not a multiple of `holders`.
    pub fn with_belief_trunk(mut self, trunk: Dense, belief: Dense, holders: usize) -> Mlp {
        assert!(holders >= 1 && belief.outputs().is_multiple_of(holders) && belief.outputs() > 0);
        assert_eq!(trunk.inputs, self.inputs, "the belief trunk takes the observation");
        assert_eq!(belief.inputs, trunk.outputs(), "the belief head takes its trunk");
        self.belief = Some(BeliefHead {
            holders,
            dense: belief,
            trunk: Some(trunk),
        });
        self
    }

    /// The same network without its belief head.
    pub fn without_belief(mut self) -> Mlp {
        self.belief = None;
        self
    }

    /// Floats an observation has.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Logits a row has (the policy head's width).
    pub fn actions(&self) -> usize {
        self.policy.outputs()
    }

    pub fn layers(&self) -> &[Dense] {
        &self.layers
    }

    pub fn policy(&self) -> &Dense {
        &self.policy
    }

    pub fn value(&self) -> &Dense {
        &self.value
    }

    /// The belief head, if it has one.
    pub fn belief(&self) -> Option<&BeliefHead> {
        self.belief.as_ref()
    }

    /// Changes every layer in place (the hidden layers in order, then the
    /// policy head, the value head, the belief head if any and its trunk
    /// if it has one): `f(index, weights, biases)`.
    pub(crate) fn update_layers(&mut self, mut f: impl FnMut(usize, &mut [f32], &mut [f32])) {
        let n = self.layers.len();
        for (k, l) in self.layers.iter_mut().enumerate() {
            l.update(|w, b| f(k, w, b));
        }
        self.policy.update(|w, b| f(n, w, b));
        self.value.update(|w, b| f(n + 1, w, b));
        if let Some(b) = &mut self.belief {
            b.dense.update(|w, bias| f(n + 2, w, bias));
            if let Some(t) = &mut b.trunk {
                t.update(|w, bias| f(n + 3, w, bias));
            }
        }
    }

    /// The belief head's logits for one observation into `out` (`tiles x
    /// holders`, tile-major); `None` without a belief head.
    pub fn belief_logits(&self, obs: &[f32], out: &mut Vec<f32>, scratch: &mut Scratch) -> Option<()> {
        let head = self.belief.as_ref()?;
        assert!(obs.len() >= self.inputs, "an observation is inputs floats");
        out.clear();
        out.resize(head.dense.outputs(), 0.0);
        match &head.trunk {
            Some(t) => {
                let h = &mut scratch.a;
                h.clear();
                h.resize(t.outputs(), 0.0);
                t.apply(&obs[..self.inputs], 1, h);
                tanh_in_place(h);
                head.dense.apply(h, 1, out);
            }
            None => {
                let top = self.hidden(&obs[..self.inputs], 1, scratch);
                head.dense.apply(top, 1, out);
            }
        }
        Some(())
    }

    /// Multiply-adds one evaluation of the policy and the value takes (two
    /// flops each; the belief head, asked once a decision, is not counted).
    pub fn macs(&self) -> usize {
        self.layers
            .iter()
            .chain([&self.policy, &self.value])
            .map(|l| l.weights.len())
            .sum()
    }

    /// Evaluates `rows` observations (`obs`: `rows x inputs`) into `logits`
    /// (`rows x actions`) and `values` (`rows`). A large batch goes through
    /// the layers [`BATCH_CHUNK`] rows at a time, so the hidden layers'
    /// outputs stay in the cache and the scratch stays small.
    pub fn forward(&self, obs: &[f32], rows: usize, logits: &mut [f32], values: &mut [f32], scratch: &mut Scratch) {
        let (d, a) = (self.inputs, self.actions());
        assert!(obs.len() >= rows * d, "observations are rows x inputs");
        assert!(logits.len() >= rows * a && values.len() >= rows);
        let mut start = 0;
        while start < rows {
            let n = (rows - start).min(BATCH_CHUNK);
            self.forward_chunk(
                &obs[start * d..(start + n) * d],
                n,
                &mut logits[start * a..(start + n) * a],
                &mut values[start..start + n],
                scratch,
            );
            start += n;
        }
    }

    fn forward_chunk(&self, obs: &[f32], rows: usize, logits: &mut [f32], values: &mut [f32], scratch: &mut Scratch) {
        let input = self.hidden(obs, rows, scratch);
        self.policy.apply(input, rows, &mut logits[..rows * self.actions()]);
        self.value.apply(input, rows, &mut values[..rows]);
    }

    /// The last hidden layer's outputs for `rows` observations (in one of
    /// the scratch's buffers).
    fn hidden<'s>(&self, obs: &'s [f32], rows: usize, scratch: &'s mut Scratch) -> &'s [f32] {
        let widest = self.layers.iter().map(Dense::outputs).max().unwrap_or(0);
        for buf in [&mut scratch.a, &mut scratch.b] {
            if buf.len() < rows * widest {
                buf.resize(rows * widest, 0.0);
            }
        }
        // Layer k reads buffer a or b (the observations for k = 0) and
        // writes the other.
        let mut in_a = false;
        let mut width = self.inputs;
        for (k, l) in self.layers.iter().enumerate() {
            let (src, dst) = if in_a {
                (&scratch.a[..], &mut scratch.b[..rows * l.outputs()])
            } else {
                (&scratch.b[..], &mut scratch.a[..rows * l.outputs()])
            };
            l.apply(if k == 0 { obs } else { &src[..rows * width] }, rows, dst);
            tanh_in_place(dst);
            in_a = !in_a;
            width = l.outputs();
        }
        match (self.layers.is_empty(), in_a) {
            (true, _) => obs,
            (false, true) => &scratch.a[..rows * width],
            (false, false) => &scratch.b[..rows * width],
        }
    }

    /// [`Self::forward`] with the rows split over `threads` threads (in
    /// blocks of 4 rows, the calling thread one of them): the same numbers
    /// as one thread.
    pub fn forward_threads(&self, obs: &[f32], rows: usize, logits: &mut [f32], values: &mut [f32], threads: usize) {
        let threads = threads.clamp(1, rows.div_ceil(4).max(1));
        if threads == 1 {
            self.forward(obs, rows, logits, values, &mut Scratch::default());
            return;
        }
        let per = rows.div_ceil(threads).div_ceil(4) * 4;
        let (d, a) = (self.inputs, self.actions());
        std::thread::scope(|s| {
            let chunks = obs[..rows * d]
                .chunks(per * d)
                .zip(logits[..rows * a].chunks_mut(per * a))
                .zip(values[..rows].chunks_mut(per));
            let mut chunks = chunks.map(|((o, l), v)| (o, l, v));
            let own = chunks.next();
            for (o, l, v) in chunks {
                s.spawn(move || self.forward(o, v.len(), l, v, &mut Scratch::default()));
            }
            // The calling thread takes the first share (one thread fewer to
            // start and wake).
            if let Some((o, l, v)) = own {
                self.forward(o, v.len(), l, v, &mut Scratch::default());
            }
        });
    }
}
