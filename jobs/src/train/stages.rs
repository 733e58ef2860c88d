//! The stages' sections of a training spec: `[train.fit]`, `[train.gate]`
//! (and which network it keeps) and `[train.eval]`, with their defaults;
//! `spec.rs` checks their values.

use serde::{Deserialize, Serialize};

/// `[train.fit]`: the policy gradient with a value baseline, by Adam.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Fit {
    /// Passes over the generation's rows.
    pub epochs: u32,
    /// Rows a minibatch.
    pub batch: usize,
    /// Adam's step size.
    pub learning_rate: f64,
    /// The value loss's weight beside the policy's.
    pub value_weight: f64,
    /// The weight of the policy's entropy, added to what the fit maximises
    /// (keeps self-play exploring).
    #[serde(default = "default_entropy")]
    pub entropy_bonus: f64,
    /// PPO's clip: a row stops pulling its action once the network's
    /// probability of it is this share above (or below, for a bad one)
    /// the probability it was drawn with.
    #[serde(default = "default_clip")]
    pub clip: f64,
    /// The belief head's loss weight: above 0, the network has a belief
    /// head (where each hidden tile is) and the rows carry each tile's
    /// true holder; 0 (the default), no belief head.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub belief_weight: f64,
    /// What the belief head corrects: `"constraints"` (its logits added to
    /// the log of the constraints belief's marginals, which the rows then
    /// carry) or absent (a softmax of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub belief_prior: Option<BeliefPrior>,
    /// Above 0, the belief head gets a hidden layer of its own this wide
    /// over the observation (the policy's layers then neither feed it nor
    /// learn from it); 0 (the default), it reads the last hidden layer.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub belief_hidden: usize,
}

fn is_zero_usize(x: &usize) -> bool {
    *x == 0
}

/// `[train.fit] belief_prior`: what a belief head corrects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BeliefPrior {
    /// The constraints belief's marginals (`SpielState::belief_prior`).
    Constraints,
}

fn default_clip() -> f64 {
    0.2
}

fn default_entropy() -> f64 {
    0.01
}

impl Default for Fit {
    fn default() -> Fit {
        Fit {
            epochs: 1,
            batch: 512,
            learning_rate: 0.001,
            value_weight: 0.5,
            entropy_bonus: default_entropy(),
            clip: default_clip(),
            belief_weight: 0.0,
            belief_prior: None,
            belief_hidden: 0,
        }
    }
}

/// `[train.gate]`: the new network against the best so far, greedy, in
/// pairs of games (each deal from both seatings), under an SPRT on Elo.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Gate {
    /// The most pairs; undecided there, the one with the higher score is kept (ties keep the best).
    pub pairs: u64,
    /// H0's Elo of the new network over the best.
    pub elo0: f64,
    /// H1's Elo.
    pub elo1: f64,
    /// The chance of accepting H1 when H0 holds.
    pub alpha: f64,
    /// The chance of accepting H0 when H1 holds.
    pub beta: f64,
    /// Which network the next generation starts from.
    #[serde(default, skip_serializing_if = "Keep::is_better")]
    pub keep: Keep,
}

/// Which network a gate keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// The better by the SPRT (undecided: the higher score; AlphaGo
    /// Zero's way).
    #[default]
    Better,
    /// The candidate always, the gate's match a record only (AlphaZero's
    /// way): for what the greedy match cannot see, such as a belief head.
    Latest,
}

impl Keep {
    fn is_better(&self) -> bool {
        *self == Keep::Better
    }
}

impl Default for Gate {
    fn default() -> Gate {
        Gate {
            pairs: 2_000,
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
            keep: Keep::Better,
        }
    }
}

/// `[train.eval]`: each generation's best network against fixed anchors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Eval {
    /// Pairs against each anchor.
    pub pairs: u64,
    /// The anchors ([`Fixed`]'s names).
    pub anchors: Vec<String>,
}

impl Default for Eval {
    fn default() -> Eval {
        Eval {
            pairs: 500,
            anchors: default_anchors(),
        }
    }
}

pub(super) fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

pub(super) fn default_anchors() -> Vec<String> {
    vec!["random".into(), "heaviest".into()]
}
