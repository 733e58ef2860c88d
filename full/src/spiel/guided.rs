//! A network guiding a search: single-observer ISMCTS (as `ismcts.rs`)
//! whose tree is steered by the network's policy (PUCT, AlphaZero's rule)
//! and whose leaves are the network's value instead of a playout.
//!
//! Each simulation draws a world the deciding seat cannot tell from the
//! true one (`SpielState::resample`: the constraints belief; or, by
//! [`Guided::belief`], from a pool of such worlds weighted by the model's
//! belief head or by its policy's likelihood of the other seats' plays:
//! `pool.rs`), descends the
//! seat's tree of information sets through the plays legal in that world
//! (an edge is an action id, whoever plays it; chance is part of the world),
//! and at the first node not yet expanded asks the network for the mover's
//! policy and value in that world: the logits are kept at the node, its
//! value (the mover's scaled outcome, as training taught it) backed up from
//! the deciding side's point of view. An end of the game backs up its
//! returns over the game's largest. At a node, a play's prior is the
//! softmax of the kept logits over the plays legal in the current world;
//! the score is Q + c * P * sqrt(N) / (1 + n), Q the mean backed-up value
//! from the mover's side (0 before its first visit), N the visits of the
//! node's plays legal now. The play chosen is the root's most visited, ties
//! to the lowest id. With [`RootNoise`] (self-play's exploration,
//! AlphaZero's), the root's priors are mixed with a draw from a symmetric
//! Dirichlet. A pure function of the model, the state, the seat's view and
//! the stream (the forward pass has the same bits everywhere).

use rand_core::RngCore;

use super::pool::{BELIEF_POOL, BeliefPool, GuidedBelief, POLICY_POOL};
use super::{CHANCE, Encoding, SpielState};

/// AlphaZero's exploration constant, on values in [-1, 1].
pub const PUCT: f64 = 1.5;

/// Dirichlet noise at the root: the priors become (1 - share) P + share
/// eta, eta drawn from Dir(alpha, ..., alpha) over the root's plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootNoise {
    /// The Dirichlet's concentration (AlphaZero: 0.3 in chess).
    pub alpha: f64,
    /// The noise's share of the prior (AlphaZero: 0.25).
    pub share: f64,
}

/// AlphaZero's root noise for chess: Dir(0.3), a quarter of the prior.
pub const ALPHAZERO_NOISE: RootNoise = RootNoise {
    alpha: 0.3,
    share: 0.25,
};

/// How a guided decision searches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Guided {
    /// Where its worlds come from (`head` needs a model with a belief
    /// head; without one it is `constraints`).
    pub belief: GuidedBelief,
    /// Simulations a decision (at least 1).
    pub simulations: u32,
    /// Noise at the root, for self-play; `None` when playing to win.
    pub noise: Option<RootNoise>,
    /// Stop once no remaining simulation could change the most visited
    /// play (its lead over the next is more than the simulations left):
    /// the same play as the whole budget from the same stream, in fewer
    /// simulations. The stream is then drawn from less, so later
    /// decisions differ from a search without it; not for self-play,
    /// whose targets are the root's visits.
    pub adaptive: bool,
}

/// A draw from Gamma(`shape`, 1) (Marsaglia and Tsang 2000; below shape 1,
/// Gamma(shape + 1) times U^(1/shape)), the normals by Box-Muller; from
/// `engine::seed::unit` alone, so the draws are the same on any machine.
fn gamma(shape: f64, rng: &mut impl RngCore) -> f64 {
    if shape < 1.0 {
        let u = engine::seed::unit(rng).max(f64::MIN_POSITIVE);
        return gamma(shape + 1.0, rng) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let (u1, u2) = (engine::seed::unit(rng).max(f64::MIN_POSITIVE), engine::seed::unit(rng));
        let x = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = engine::seed::unit(rng).max(f64::MIN_POSITIVE);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    /// The action id into this node.
    action: u32,
    first_child: u32,
    next_sibling: u32,
    visits: u32,
    /// The values backed up through it, from the deciding side's view.
    total: f64,
    /// Where its logits start in the arena, once expanded.
    logits: u32,
}

/// A guided search's storage, kept between decisions (its room too).
#[derive(Debug, Default)]
pub struct GuidedTree {
    nodes: Vec<Node>,
    logits: Vec<f32>,
    path: Vec<u32>,
    obs: Vec<f32>,
    value: [f32; 1],
    scratch: net::Scratch,
    /// The root's noise (action id, eta) and its share, when drawn.
    noise: Vec<(u32, f64)>,
    share: f64,
    /// A decision's weighted worlds (`Guided::belief` other than
    /// `constraints`), and the belief head's logits at the root.
    pool: BeliefPool,
    belief_logits: Vec<f32>,
}

impl GuidedTree {
    fn reset(&mut self) {
        self.nodes.clear();
        self.logits.clear();
        self.nodes.push(Node {
            action: NONE,
            first_child: NONE,
            next_sibling: NONE,
            visits: 0,
            total: 0.0,
            logits: NONE,
        });
    }

    fn child(&self, node: u32, action: u32) -> Option<u32> {
        let mut c = self.nodes[node as usize].first_child;
        while c != NONE {
            if self.nodes[c as usize].action == action {
                return Some(c);
            }
            c = self.nodes[c as usize].next_sibling;
        }
        None
    }

    fn add(&mut self, parent: u32, action: u32) -> u32 {
        let id = self.nodes.len() as u32;
        let sibling = self.nodes[parent as usize].first_child;
        self.nodes[parent as usize].first_child = id;
        self.nodes.push(Node {
            action,
            first_child: NONE,
            next_sibling: sibling,
            visits: 0,
            total: 0.0,
            logits: NONE,
        });
        id
    }

    /// The network's logits and value for the mover of `world` (its own
    /// view of that world), the logits kept for `node`; returns the value.
    fn expand(&mut self, model: &net::Model, encoding: Encoding, world: &SpielState, mover: u8, node: u32) -> f32 {
        world.encode(mover, encoding, &mut self.obs);
        let a = model.meta.actions;
        let at = self.logits.len();
        self.logits.resize(at + a, 0.0);
        model
            .mlp
            .forward(&self.obs, 1, &mut self.logits[at..], &mut self.value, &mut self.scratch);
        self.nodes[node as usize].logits = at as u32;
        self.value[0]
    }

    /// PUCT's choice among the plays `legal` at the expanded `node`, whose
    /// mover is on the deciding side when `ours`.
    fn select(&mut self, node: u32, legal: &[u32], ours: bool) -> u32 {
        let at = self.nodes[node as usize].logits as usize;
        let logit = |a: u32| self.logits[at + a as usize] as f64;
        let top = legal.iter().map(|&a| logit(a)).fold(f64::NEG_INFINITY, f64::max);
        let mass: f64 = legal.iter().map(|&a| (logit(a) - top).exp()).sum();
        // Each play's child, looked up once (a walk of the siblings).
        let mut children = [NONE; 128];
        for (c, &a) in children.iter_mut().zip(legal) {
            *c = self.child(node, a).unwrap_or(NONE);
        }
        let children = &children[..legal.len()];
        let visits = |c: u32| if c == NONE { 0 } else { self.nodes[c as usize].visits };
        let n: u32 = children.iter().map(|&c| visits(c)).sum();
        let root_n = (n.max(1) as f64).sqrt();
        let mut best = (f64::NEG_INFINITY, 0);
        let noisy = node == 0 && !self.noise.is_empty();
        for (i, (&a, &c)) in legal.iter().zip(children).enumerate() {
            let mut prior = (logit(a) - top).exp() / mass;
            if noisy {
                let eta = self.noise.iter().find(|&&(b, _)| b == a).map_or(0.0, |&(_, e)| e);
                prior = (1.0 - self.share) * prior + self.share * eta;
            }
            let (q, k) = match visits(c) {
                0 => (0.0, 0),
                k => {
                    let q = self.nodes[c as usize].total / k as f64;
                    (if ours { q } else { -q }, k)
                }
            };
            let score = q + PUCT * prior * root_n / (1.0 + k as f64);
            if score > best.0 {
                best = (score, i);
            }
        }
        let i = best.1;
        match children[i] {
            NONE => self.add(node, legal[i]),
            c => c,
        }
    }

    /// The visits of the root's play `a` (0 before its first).
    fn root_visits_of(&self, a: u32) -> u32 {
        self.child(0, a).map_or(0, |c| self.nodes[c as usize].visits)
    }

    /// The root's most visited play among `legal`, ties to the lowest id.
    fn most_visited(&self, legal: &[u32]) -> u32 {
        let mut best = (0u32, legal[0]);
        for &a in legal {
            let v = self.root_visits_of(a);
            if v > best.0 || (v == best.0 && a < best.1 && v > 0) {
                best = (v, a);
            }
        }
        best.1
    }

    /// Whether the most visited play at the root can no longer be caught
    /// (nor tied) by another in `left` more simulations.
    fn decided(&self, legal: &[u32], left: u32) -> bool {
        let (mut first, mut second) = (0u32, 0u32);
        for &a in legal {
            let v = self.root_visits_of(a);
            if v > first {
                (first, second) = (v, first);
            } else if v > second {
                second = v;
            }
        }
        first - second > left
    }

    /// The effective sample size of the last decision's pool of worlds
    /// (`None` when it drew from the constraints belief alone).
    pub fn belief_ess(&self) -> Option<f64> {
        (!self.pool.worlds.is_empty()).then_some(self.pool.ess)
    }

    /// The root's visits of each play in `legal` (the search's policy).
    pub fn root_visits(&self, legal: &[u32], out: &mut Vec<u32>) {
        out.clear();
        out.extend(legal.iter().map(|&a| self.root_visits_of(a)));
    }
}

/// The action id `player` (the seat to act in `state`) plays after
/// `how.simulations` guided simulations of `model` (checked against the
/// game by the caller) read through `encoding`.
pub fn guided_decide(
    tree: &mut GuidedTree,
    model: &net::Model,
    encoding: Encoding,
    state: &SpielState,
    player: u8,
    how: Guided,
    rng: &mut impl RngCore,
) -> Result<u32, super::SpielError> {
    let rules = state.rules().clone();
    let side = rules.side(player);
    let scale = state.value_scale().max(f64::MIN_POSITIVE);
    let mut ids = [0u32; 128];
    let n = state.legal_ids(&mut ids);
    let root_legal: Vec<u32> = ids[..n].to_vec();
    tree.reset();
    // The root's policy is the seat's own view, the same in every world.
    tree.expand(model, encoding, state, player, 0);
    tree.noise.clear();
    if let Some(noise) = how.noise {
        tree.share = noise.share;
        tree.noise
            .extend(root_legal.iter().map(|&a| (a, gamma(noise.alpha, rng))));
        let total: f64 = tree.noise.iter().map(|&(_, g)| g).sum::<f64>().max(f64::MIN_POSITIVE);
        tree.noise.iter_mut().for_each(|(_, g)| *g /= total);
    }
    let total = how.simulations.max(1);
    tree.pool.worlds.clear();
    match (how.belief, model.mlp.belief()) {
        (GuidedBelief::Head, Some(head)) => {
            // The root's observation is still in `tree.obs`.
            model
                .mlp
                .belief_logits(&tree.obs, &mut tree.belief_logits, &mut tree.scratch);
            let size = total.clamp(BELIEF_POOL.0, BELIEF_POOL.1);
            tree.pool
                .prepare_head(state, player, &tree.belief_logits, head.holders, size, rng)?;
        }
        (GuidedBelief::Policy, _) => {
            let size = total.clamp(POLICY_POOL.0, POLICY_POOL.1);
            tree.pool.prepare_policy(model, encoding, state, player, size, rng)?;
        }
        _ => {}
    }
    for done in 1..=total {
        let mut world = if tree.pool.worlds.is_empty() {
            state.resample(player, rng)?
        } else {
            tree.pool.draw(rng)
        };
        tree.path.clear();
        tree.path.push(0);
        let mut node = 0u32;
        let value = loop {
            let mover = world.current_player();
            if mover == CHANCE {
                world.apply_chance(rng)?;
                continue;
            }
            if world.is_terminal() {
                break world.returns()[player as usize] / scale;
            }
            let mover = mover as u8;
            let ours = rules.side(mover) == side;
            if tree.nodes[node as usize].logits == NONE {
                let v = tree.expand(model, encoding, &world, mover, node) as f64;
                break if ours { v } else { -v };
            }
            let k = world.legal_ids(&mut ids);
            let child = tree.select(node, &ids[..k], ours);
            world.apply(tree.nodes[child as usize].action)?;
            tree.path.push(child);
            node = child;
        };
        for &p in &tree.path {
            let n = &mut tree.nodes[p as usize];
            n.visits += 1;
            n.total += value;
        }
        if how.adaptive && tree.decided(&root_legal, total - done) {
            break;
        }
    }
    Ok(tree.most_visited(&root_legal))
}

#[cfg(test)]
mod tests {
    /// Gamma(k, 1) has mean k and variance k: 40,000 draws within four
    /// standard errors of both, on either side of shape 1.
    #[test]
    fn gamma_draws_have_the_shapes_mean_and_variance() {
        let mut rng = engine::seed::keyed_rng(3, 0, 0, b"gammatst", 0);
        for k in [0.3, 1.0, 2.5] {
            let n = 40_000;
            let x: Vec<f64> = (0..n).map(|_| super::gamma(k, &mut rng)).collect();
            let mean = x.iter().sum::<f64>() / n as f64;
            let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            assert!(x.iter().all(|&v| v >= 0.0 && v.is_finite()));
            assert!((mean - k).abs() < 4.0 * (k / n as f64).sqrt(), "shape {k}: mean {mean}");
            // The variance's standard error: sqrt((m4 - k^2) / n), m4 = 3k^2 + 6k for Gamma(k).
            let se = ((3.0 * k * k + 6.0 * k - k * k) / n as f64).sqrt();
            assert!((var - k).abs() < 4.0 * se, "shape {k}: variance {var}");
        }
    }
}
