//! The fixed strategies of the full game (`random`, `scorer`, `defender`,
//! `heaviest`) and the name of the searching one: the plays every layer
//! above (beliefs, predictors, searches, agents, the game loop) asks for.

use rand_chacha::ChaCha20Rng;

use engine::seed::below;
use engine::{Action, TargetKind, myopic_choice};

use super::fives::FivesPosition;
use super::position::FullAction;
use super::rules::FullRules;

/// The `searcher` target's default depth.
pub const DEFAULT_TARGET_DEPTH: u8 = 2;

/// A fixed strategy of the full game (written and read by its name; ordered
/// as the thesis's targets, then `heaviest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FullTarget {
    /// One of the thesis's targets: `random` (uniform), `scorer` (most
    /// points, then highest count) or `defender` (most defense, then lowest
    /// count), ties to the first play in canonical order.
    Thesis(TargetKind),
    /// Plays its heaviest legal tile (pip total, then high pip) at the first
    /// location that takes it: DominAI's "beginner strategy", abw333's
    /// "bota gorda".
    Heaviest,
    /// A non-myopic opponent: Expectimax to a depth (`[search]
    /// target_depth`) under full observation. Not a fixed strategy: a seat
    /// with this target searches ([`FullAgent::target`]); M* models it as
    /// minimising.
    Searcher,
}

impl FullTarget {
    /// Every strategy.
    pub const ALL: [FullTarget; 4] = [
        FullTarget::Thesis(TargetKind::Random),
        FullTarget::Thesis(TargetKind::Scorer),
        FullTarget::Thesis(TargetKind::Defender),
        FullTarget::Heaviest,
    ];

    /// The name in specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FullTarget::Thesis(TargetKind::Random) => "random",
            FullTarget::Thesis(TargetKind::Scorer) => "scorer",
            FullTarget::Thesis(TargetKind::Defender) => "defender",
            FullTarget::Heaviest => "heaviest",
            FullTarget::Searcher => "searcher",
        }
    }
}

impl FullTarget {
    /// The thesis's target this is, if it is one.
    pub fn thesis(self) -> Option<TargetKind> {
        match self {
            FullTarget::Thesis(k) => Some(k),
            FullTarget::Heaviest | FullTarget::Searcher => None,
        }
    }
}

impl std::fmt::Display for FullTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for FullTarget {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for FullTarget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FullTarget, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for FullTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<FullTarget, String> {
        FullTarget::ALL
            .into_iter()
            .chain([FullTarget::Searcher])
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown target {s:?}: expected random, scorer, defender, heaviest or searcher"))
    }
}

/// The index (in `actions`, canonical order, non-empty) of the play
/// `target` makes; `rng` serves the random target.
pub fn full_choice(
    rules: &FullRules,
    target: FullTarget,
    pos: &FivesPosition,
    actions: &[Action],
    rng: &mut ChaCha20Rng,
) -> usize {
    fixed_choice(rules, target, pos, actions).unwrap_or_else(|| below(rng, actions.len() as u64) as usize)
}

/// The play of a deterministic strategy (index in `actions`, canonical
/// order, non-empty); `None` for `random`, whose play is a draw, and for
/// `searcher`, which is not a fixed strategy. The scorer and the defender
/// are the thesis's ([`engine::myopic_choice`]) on the full game's board.
pub fn fixed_choice(rules: &FullRules, target: FullTarget, pos: &FivesPosition, actions: &[Action]) -> Option<usize> {
    match target {
        FullTarget::Thesis(TargetKind::Random) | FullTarget::Searcher => None,
        FullTarget::Heaviest => Some(heaviest(rules, actions.iter().map(|a| a.tile))),
        FullTarget::Thesis(k) => myopic_choice(rules, k, &pos.board, actions),
    }
}

/// The heaviest play (pip total, then high pip; the first among equals).
pub fn heaviest_play(rules: &FullRules, actions: &[FullAction]) -> usize {
    heaviest(rules, actions.iter().map(|a| a.tile))
}

/// The index of the heaviest of `tiles` (pip total, then high pip; the first
/// among equals): the `heaviest` strategy of every preset.
pub fn heaviest(rules: &FullRules, tiles: impl IntoIterator<Item = u8>) -> usize {
    let key = |t: u8| {
        let (a, b) = rules.pips(t);
        (a + b, b)
    };
    let mut best = (0, (0, 0));
    for (i, t) in tiles.into_iter().enumerate() {
        if i == 0 || key(t) > best.1 {
            best = (i, key(t));
        }
    }
    best.0
}
