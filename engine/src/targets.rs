//! The three fixed targets (RULES.md section 4), the engine kinds that model
//! them, and the trait through which a classifier supplies the M* model.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::board::Board;
use crate::features::Features;
use crate::game::PlayerEngine;
use crate::position::{Action, Position};
use crate::rules::Rules;
use crate::tiles::PipTable;

/// A target type: a fixed opponent strategy, and the M* model of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// Uniform over legal actions.
    Random = 0,
    /// Myopic scoring: maximise (points of the play, count after the play).
    Scorer = 1,
    /// Myopic defense: maximise (defense after the play, -count after the play).
    Defender = 2,
}

impl TargetKind {
    /// The three types in discriminant order: random, scorer, defender (the
    /// order of [`likelihoods`](crate::likelihoods)' result).
    pub const ALL: [TargetKind; 3] = [TargetKind::Random, TargetKind::Scorer, TargetKind::Defender];

    /// The lowercase name of specs, flags and `Display`: `random`, `scorer`
    /// or `defender`; `FromStr` parses it back.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Random => "random",
            TargetKind::Scorer => "scorer",
            TargetKind::Defender => "defender",
        }
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TargetKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "random" => Ok(TargetKind::Random),
            "scorer" => Ok(TargetKind::Scorer),
            "defender" => Ok(TargetKind::Defender),
            _ => Err(format!("unknown target {s:?}: expected random, scorer or defender")),
        }
    }
}

/// What the search assumes the target does at its decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EngineKind {
    /// The target minimises the player's expected score difference.
    Expectimax,
    /// M* with a model of the target: its policy (scorer, defender) or its
    /// action distribution (random).
    MStar(TargetKind),
}

impl EngineKind {
    /// Every engine kind: Expectimax, then M* with each model in
    /// [`TargetKind::ALL`] order.
    pub const ALL: [EngineKind; 4] = [
        EngineKind::Expectimax,
        EngineKind::MStar(TargetKind::Random),
        EngineKind::MStar(TargetKind::Scorer),
        EngineKind::MStar(TargetKind::Defender),
    ];

    /// A small code used in transposition-table keys.
    #[inline]
    pub(crate) fn code(self) -> u64 {
        match self {
            EngineKind::Expectimax => 0,
            EngineKind::MStar(t) => 1 + t as u64,
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineKind::Expectimax => f.write_str(PlayerEngine::Expectimax.name()),
            EngineKind::MStar(t) => write!(f, "{}:{t}", PlayerEngine::MStar.name()),
        }
    }
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == PlayerEngine::Expectimax.name() {
            return Ok(EngineKind::Expectimax);
        }
        match s
            .strip_prefix(PlayerEngine::MStar.name())
            .and_then(|t| t.strip_prefix(':'))
        {
            Some(t) => Ok(EngineKind::MStar(t.parse()?)),
            None => Err(format!(
                "unknown engine {s:?}: expected expectimax, mstar:random, mstar:scorer or mstar:defender"
            )),
        }
    }
}

/// The choice of a deterministic target (scorer or defender) among `actions`
/// (non-empty, canonical order): the index of the first action with the best key.
/// For `Random` it returns `None`: the caller draws from the target's stream.
#[inline]
pub fn target_choice(rules: &Rules, kind: TargetKind, pos: &Position, actions: &[Action]) -> Option<usize> {
    myopic_choice(rules, kind, &pos.board, actions)
}

/// The myopic targets' play on any board (the thesis's and the full
/// game's): the scorer takes the most points, then the highest count; the
/// defender the most defense, then the lowest count; ties keep the first
/// action in canonical order. `None` for `Random`.
#[inline]
pub fn myopic_choice(rules: &impl PipTable, kind: TargetKind, board: &Board, actions: &[Action]) -> Option<usize> {
    if kind == TargetKind::Random {
        return None;
    }
    let mut best = 0usize;
    let mut best_key = (i64::MIN, i64::MIN);
    for (i, a) in actions.iter().enumerate() {
        let mut board = *board;
        board.play(rules, a.tile, a.loc);
        let count = board.count() as i64;
        let key = match kind {
            TargetKind::Scorer => {
                let points = if count > 0 && count % 5 == 0 { count } else { 0 };
                (points, count)
            }
            TargetKind::Defender => (board.defense() as i64, -count),
            TargetKind::Random => unreachable!(),
        };
        // Strictly greater: ties keep the earlier action in canonical order.
        if key > best_key {
            best_key = key;
            best = i;
        }
    }
    Some(best)
}

/// A source of the M* target model during a game: the classifier of the
/// opponent-modeling issue implements this. Predictions must be a pure
/// function of the features so that games stay reproducible.
pub trait OpponentModel: Send + Sync {
    /// The prediction before the target's first turn (the class with the
    /// largest share of the training samples).
    fn prior(&self) -> TargetKind;
    /// The prediction from the features after the target's latest turn.
    fn predict(&self, features: &Features) -> TargetKind;
}
