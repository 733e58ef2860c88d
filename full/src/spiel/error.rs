//! Why a game state refused an action, a deal, a history or a resample.

use crate::rules::Preset;

/// A step of a game state that cannot be taken; `Display` says why in
/// the words the Python package raises (`ValueError`) and the agent
/// protocol reports.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpielError {
    /// An action after the game's end.
    #[error("action {0}: the game is over")]
    Over(u32),
    /// A chance node's action that is not a tile it can give.
    #[error("action {0}: not a tile chance can give here")]
    NotChance(u32),
    /// A deal's action that is not a tile left to deal.
    #[error("action {0}: not a tile left to deal")]
    NotDealable(u32),
    /// A player's action that is not legal.
    #[error("action {0}: not legal here")]
    Illegal(u32),
    /// A chance node with no outcome (a bug in the caller's rules).
    #[error("no outcome at a chance node")]
    NoOutcome,
    /// Hands that are not a deal of the game.
    #[error("not a deal of {preset}: a hand is not {hand} tiles")]
    NotADeal { preset: Preset, hand: u8 },
    /// A resample before the deal is done.
    #[error("resample_from_infostate: the deal is not done")]
    NotDealt,
    /// No placement of the hidden tiles agrees with what was seen.
    #[error("no placement agrees with {0}")]
    NoPlacement(&'static str),
    /// No consistent past was found for so many placements.
    #[error("no past found for {0} placements")]
    NoPast(usize),
    /// A history's action that cannot be played where it stands.
    #[error("history: action {0} cannot be played here")]
    HistoryAction(u32),
    /// A history after which another seat acts.
    #[error("history: seat {0} is not the one to act after it")]
    HistorySeat(u8),
    /// A history whose counts cannot be: more draws than the boneyard held,
    /// a seat playing more tiles than it had, tiles that do not add up.
    #[error("{0}")]
    HistoryCounts(&'static str),
    /// A past whose deal or draws came out short (a bug).
    #[error("{0}")]
    Inconsistent(&'static str),
}
