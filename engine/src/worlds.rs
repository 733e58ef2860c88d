//! Hidden-information worlds (docs/rules.md section 5): the splits of the tiles the
//! player cannot see into a target hand of known size and a boneyard.

use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use crate::deal::{elements, unrank_subset};
use crate::rules::Rules;
use crate::seed::below;
use crate::tiles::{TileSet, bit};

/// How many worlds a partial-observation decision values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WorldCount {
    /// Every split (35 at most for the thesis deal).
    All,
    /// A seeded uniform sample of this many distinct splits (all of them when
    /// there are no more than this).
    Sample(u32),
}

impl WorldCount {
    /// The largest sample a spec or flag may ask for.
    pub const MAX_SAMPLE: u32 = 1_000_000;
}

/// `all`, or a sample size from 1 to [`WorldCount::MAX_SAMPLE`]; the error
/// says what is expected (the caller names the key or flag).
impl std::str::FromStr for WorldCount {
    type Err = String;
    fn from_str(s: &str) -> Result<WorldCount, String> {
        if s == "all" {
            return Ok(WorldCount::All);
        }
        match s.parse::<u32>() {
            Ok(k) if (1..=WorldCount::MAX_SAMPLE).contains(&k) => Ok(WorldCount::Sample(k)),
            _ => Err(format!(
                "expected \"all\" or a number of worlds from 1 to {}",
                WorldCount::MAX_SAMPLE
            )),
        }
    }
}

/// `all`, or the sample size: what [`WorldCount::from_str`] reads.
impl std::fmt::Display for WorldCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorldCount::All => f.write_str("all"),
            WorldCount::Sample(k) => write!(f, "{k}"),
        }
    }
}

/// Where a partial-observation decision's worlds come from (docs/beliefs.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Belief {
    /// Every split of the unseen tiles that keeps the hand sizes, each
    /// weighing 1 (the thesis).
    #[default]
    Uniform,
    /// The uniform distribution over the splits that agree with every
    /// observation: hand sizes and the tiles each seat showed it lacks when
    /// it drew or passed (exact).
    Constraints,
    /// Seed 002's probability matrices (binary, relative, absolute), as
    /// written: an approximation, the DominAI baseline (full game only).
    Dominai,
    /// The `constraints` worlds weighted by how likely the opponents'
    /// observed plays were under the opponent model (full game only).
    Model,
}

impl Belief {
    /// Whether the belief weighs what only All Fives has: seed 002's
    /// matrices (`dominai`) and the opponent models' plays (`model`); the
    /// thesis's rules and block and team draw their worlds from `uniform`
    /// or `constraints`.
    pub fn all_fives_only(self) -> bool {
        matches!(self, Belief::Dominai | Belief::Model)
    }

    /// Every belief, in the order of the docs.
    pub const ALL: [Belief; 4] = [Belief::Uniform, Belief::Constraints, Belief::Dominai, Belief::Model];

    /// The name in specs, on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Belief::Uniform => "uniform",
            Belief::Constraints => "constraints",
            Belief::Dominai => "dominai",
            Belief::Model => "model",
        }
    }
}

/// `uniform`, `constraints`, `dominai` or `model`.
impl std::str::FromStr for Belief {
    type Err = String;
    fn from_str(s: &str) -> Result<Belief, String> {
        Belief::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| "expected \"uniform\", \"constraints\", \"dominai\" or \"model\"".to_string())
    }
}

/// One world: the target's hand and the boneyard's contents, with its weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct World {
    /// The target's hand in this world: `target_size` of the unseen tiles.
    pub target: TileSet,
    /// The boneyard in this world: the unseen tiles not in `target`.
    pub boneyard: TileSet,
    /// The world's weight under the belief (1 for [`Belief::Uniform`]); a
    /// decision averages action values over worlds with these weights.
    pub weight: f64,
}

/// What the player knows of the tiles it cannot see: which they are, how
/// many of them the target holds (the rest are the boneyard), and which of
/// them the target has shown it lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unseen {
    /// The tiles the player cannot see: the target's hand and the boneyard.
    pub tiles: TileSet,
    /// Number of them in the target's hand.
    pub target_size: u32,
    /// Tiles the target has shown it cannot hold (used by
    /// [`Belief::Constraints`]; empty for none).
    pub void: TileSet,
}

/// A reusable list of worlds.
#[derive(Clone, Debug, Default)]
pub struct Worlds {
    list: Vec<World>,
}

impl Worlds {
    /// The worlds of the last [`Self::fill`], in lexicographic order of the
    /// target hand.
    pub fn as_slice(&self) -> &[World] {
        &self.list
    }

    /// Fills the list with the worlds for the `unseen.tiles` of which the
    /// target holds `unseen.target_size`, in lexicographic order of the
    /// target hand. Under [`Belief::Constraints`] (and the full game's other
    /// beliefs, which the thesis's specs refuse) the target's hand avoids
    /// `unseen.void`, the tiles it has shown it lacks: the worlds are the
    /// splits of the other unseen tiles, each equally likely, exactly as
    /// `uniform` when the void is empty. `rng` is used only when sampling.
    pub fn fill(&mut self, rules: &Rules, unseen: Unseen, count: WorldCount, belief: Belief, rng: &mut impl RngCore) {
        let Unseen {
            tiles: unseen,
            target_size,
            void,
        } = unseen;
        self.list.clear();
        let everything = unseen;
        // The tiles the target may hold (all unseen ones if the void would
        // leave too few: an observation no deal explains is ignored).
        let unseen = match belief {
            Belief::Uniform => unseen,
            _ if (unseen & !void).count_ones() < target_size => unseen,
            _ => unseen & !void,
        };
        let n = unseen.count_ones();
        let k = target_size;
        let total = rules.binom(n, k);
        let weight = 1.0;
        let mut push = |target: TileSet| {
            self.list.push(World {
                target,
                boneyard: everything & !target,
                weight,
            })
        };
        match count {
            WorldCount::Sample(want) if (want as u64) < total => {
                // Floyd's algorithm: `want` distinct ranks, each equally likely.
                let mut ranks: Vec<u64> = Vec::with_capacity(want as usize);
                for j in total - want as u64..total {
                    let r = below(rng, j + 1);
                    let pick = if ranks.contains(&r) { j } else { r };
                    ranks.push(pick);
                }
                ranks.sort_unstable();
                for r in ranks {
                    push(unrank_subset(rules, unseen, k, r));
                }
            }
            _ => {
                let (elems, n) = elements(unseen);
                let (n, k) = (n as usize, k as usize);
                let mut idx: [usize; 64] = std::array::from_fn(|i| i);
                loop {
                    push(idx[..k].iter().fold(0, |m, &i| m | bit(elems[i])));
                    // Next combination in lexicographic order.
                    let Some(i) = (0..k).rev().find(|&i| idx[i] < n - k + i) else {
                        break;
                    };
                    idx[i] += 1;
                    for j in i + 1..k {
                        idx[j] = idx[j - 1] + 1;
                    }
                }
            }
        }
    }
}
