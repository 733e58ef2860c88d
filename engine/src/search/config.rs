//! The search settings: how far the search looks ahead ([`DepthLimit`] and
//! its code in table keys) and the settings of the player's decisions
//! ([`SearchConfig`]).

use serde::{Deserialize, Serialize};

use crate::worlds::{Belief, WorldCount};

/// How far the search looks ahead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DepthLimit {
    /// To the end of the game (the default).
    #[default]
    Unlimited,
    /// This many turns (plays and passes; draws are free), 1 to 254. A leaf's
    /// value is the score difference so far.
    Turns(u8),
}

impl DepthLimit {
    /// The depth as table keys and the searches carry it: [`UNLIMITED`], or
    /// the number of turns left.
    pub(super) fn code(self) -> u8 {
        match self {
            DepthLimit::Unlimited => UNLIMITED,
            DepthLimit::Turns(n) => n.clamp(1, UNLIMITED - 1),
        }
    }
}

/// The depth code of [`DepthLimit::Unlimited`].
pub(super) const UNLIMITED: u8 = u8::MAX;

/// `unlimited`, or a number of turns from 1 to 254; the error says what is
/// expected (the caller names the key or flag).
impl std::str::FromStr for DepthLimit {
    type Err = String;
    fn from_str(s: &str) -> Result<DepthLimit, String> {
        if s == "unlimited" {
            return Ok(DepthLimit::Unlimited);
        }
        match s.parse::<u8>() {
            Ok(n) if (1..UNLIMITED).contains(&n) => Ok(DepthLimit::Turns(n)),
            _ => Err(format!(
                "expected \"unlimited\" or a number of turns from 1 to {}",
                UNLIMITED - 1
            )),
        }
    }
}

/// Search settings for the player's decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SearchConfig {
    /// How many worlds a partial-observation decision values (default: every split).
    pub worlds: WorldCount,
    /// The weight of each world (default: uniform).
    pub belief: Belief,
    /// How far each search looks ahead (default: to the end of the game).
    pub depth: DepthLimit,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            worlds: WorldCount::All,
            belief: Belief::Uniform,
            depth: DepthLimit::Unlimited,
        }
    }
}

/// The remaining depth of a child a turn later (`depth` above 1).
#[inline]
pub(super) fn next_depth(depth: u8) -> u8 {
    if depth == UNLIMITED { UNLIMITED } else { depth - 1 }
}
