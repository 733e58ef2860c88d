//! How the search spends its nodes at an opponent's node given a prediction
//! of the opponent's play ([`Shaping`], docs/prediction.md), and the
//! shaping state of a search ([`Shaper`]): which plays such a node
//! searches, how deep, and with what weight.

use engine::Action;

use crate::fives::FivesPosition;
use crate::predict::{PlayFeatures, Predictor, rank_of};
use crate::rules::FullRules;

/// How the search spends its nodes at an opponent's node that has more
/// than one play to search (a minimising opponent, or M*'s `random`),
/// given a prediction of the opponent's play (docs/prediction.md). M*'s
/// node of a deterministic strategy has one play already and is left alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Shaping {
    /// Every play, to the same depth.
    #[default]
    None,
    /// Seed 004: plays outside the `top_n` most probable, or less probable
    /// than `epsilon_ppm` millionths, are not searched (the most probable
    /// always is).
    Prune {
        /// Plays searched at most.
        top_n: u8,
        /// The least probability searched, in millionths.
        epsilon_ppm: u32,
    },
    /// Seed 003's asymmetric tree: the `likely` most probable plays are
    /// searched `extend` plies deeper, the others `reduce` plies shallower
    /// (never below a leaf); none is pruned.
    Asymmetric {
        /// How many plays count as likely.
        likely: u8,
        /// Extra plies under a likely play.
        extend: u8,
        /// Plies fewer under the others.
        reduce: u8,
    },
    /// The node becomes a chance node over the predicted distribution
    /// (probabilistic opponent-model search).
    Expect,
}

impl Shaping {
    /// The name in specs and rows.
    pub fn name(self) -> &'static str {
        match self {
            Shaping::None => "none",
            Shaping::Prune { .. } => "prune",
            Shaping::Asymmetric { .. } => "asymmetric",
            Shaping::Expect => "expect",
        }
    }

    /// Whether it changes nothing: `none`, and `asymmetric` with no
    /// extension nor reduction.
    pub fn is_plain(self) -> bool {
        matches!(
            self,
            Shaping::None
                | Shaping::Asymmetric {
                    extend: 0,
                    reduce: 0,
                    ..
                }
        )
    }
}

/// The shaping state of a search: the shaping, the predictor of the
/// opponents' plays, and the predictor's scratch.
#[derive(Debug)]
pub(super) struct Shaper<'a> {
    /// How opponents' nodes are shaped ([`Shaping::None`] unless set with
    /// a predictor).
    pub(super) shaping: Shaping,
    /// The predictor of the opponents' plays.
    pub(super) predictor: Option<&'a Predictor<'a>>,
    /// The predictor's scratch: one play's features per legal play.
    features: Vec<PlayFeatures>,
}

/// The plays a shaped node searches: the `m` first of `kids` (indices into
/// the node's plays), each to its depth left in `depths`, with its weight
/// in `weights` (for a chance node over them).
pub(super) struct ShapedKids {
    pub(super) kids: [u8; 64],
    pub(super) depths: [u8; 64],
    pub(super) weights: [f64; 64],
    pub(super) m: usize,
}

impl<'a> Shaper<'a> {
    /// No shaping.
    pub(super) fn plain() -> Shaper<'a> {
        Shaper {
            shaping: Shaping::None,
            predictor: None,
            features: Vec::new(),
        }
    }

    /// `shaping` with the opponents' plays predicted by `predictor`.
    pub(super) fn new(shaping: Shaping, predictor: &'a Predictor<'a>) -> Shaper<'a> {
        Shaper {
            shaping,
            predictor: Some(predictor),
            features: vec![PlayFeatures::default(); 64],
        }
    }

    /// The same shaping with scratch of its own (for another thread).
    pub(super) fn again(&self) -> Shaper<'a> {
        Shaper {
            shaping: self.shaping,
            predictor: self.predictor,
            features: self.features.clone(),
        }
    }

    /// The plays an opponent's node at `pos` (plays `acts`, `depth` left)
    /// searches under the shaping; `None` when the shaping keeps every play
    /// at the plain depth there (so the plain node serves), or there is no
    /// predictor.
    pub(super) fn plan(
        &mut self,
        rules: &FullRules,
        pos: &FivesPosition,
        acts: &[Action],
        depth: u8,
    ) -> Option<ShapedKids> {
        let predictor = self.predictor?;
        let n = acts.len();
        let mut probs = [0.0f64; 64];
        predictor.probs(rules, pos, acts, &mut self.features, &mut probs);
        let probs = &probs[..n];
        // The plays by probability, ties to canonical order.
        let mut by_rank = [0u8; 64];
        for i in 0..n {
            by_rank[rank_of(probs, i)] = i as u8;
        }
        let mut kids = [0u8; 64];
        let mut depths = [depth - 1; 64];
        let mut weights = [0.0f64; 64];
        let mut m = 0;
        match self.shaping {
            Shaping::None => return None,
            Shaping::Prune { top_n, epsilon_ppm } => {
                let eps = epsilon_ppm as f64 / 1e6;
                for (r, &i) in by_rank[..n].iter().enumerate() {
                    if r == 0 || (r < top_n as usize && probs[i as usize] >= eps) {
                        kids[m] = i;
                        m += 1;
                    }
                }
                if m == n {
                    return None;
                }
                weights[..m].fill(1.0 / m as f64);
            }
            Shaping::Asymmetric { likely, extend, reduce } => {
                for (r, &i) in by_rank[..n].iter().enumerate() {
                    kids[r] = i;
                    depths[r] = if r < likely as usize {
                        (depth - 1).saturating_add(extend)
                    } else {
                        (depth - 1).saturating_sub(reduce)
                    };
                }
                m = n;
                weights[..m].fill(1.0 / m as f64);
            }
            Shaping::Expect => {
                for (r, &i) in by_rank[..n].iter().enumerate() {
                    kids[r] = i;
                    weights[r] = probs[i as usize];
                }
                m = n;
            }
        }
        Some(ShapedKids {
            kids,
            depths,
            weights,
            m,
        })
    }
}
