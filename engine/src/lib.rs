//! The muggins search core: two-player All-Fives dominoes, the three fixed
//! targets, Expectimax and M* search under full and partial observation, the
//! opponent features, and one-game play.
//!
//! The crate is pure: it does no I/O, reads no clock to decide behaviour and
//! depends on no async runtime, RPC or columnar-format crate. Every random
//! draw comes from a ChaCha stream derived in [`seed`].

#![warn(missing_docs)]

mod board;
mod deal;
mod features;
mod game;
mod position;
mod rules;
mod search;
pub mod seed;
mod table;
mod targets;
mod tiles;
mod worlds;

pub use board::{Board, Loc};
pub use deal::Deal;
pub use features::{FeatureTracker, Features};
pub use game::{
    BAYES_FLOOR, Ending, GameConfig, GameError, GameRecord, InfoSource, Move, Observability, PlayerEngine, ReplayError,
    ReplayStep, Replayed, SearchedDecision, TABLE_9, TrainingGame, likelihoods, play_game, play_game_recorded, replay,
    replay_with, training_game,
};
pub use position::{Action, ActionList, Position, Seat, Step};
pub use rules::{Blocked, Lead, Rules, RulesConfig, RulesError};
pub use search::{Decision, DepthLimit, PlayerView, SearchConfig, Searcher, TIE_EPSILON};
pub use table::{DEFAULT_TABLE_CAP, Key, LocalTable, SharedTable, ValueStore};
pub use targets::{EngineKind, OpponentModel, TargetKind, myopic_choice, target_choice};
pub use tiles::{PipTable, TileSet, bit, bits, count_two, tile_name};
pub use worlds::{Belief, Unseen, World, WorldCount, Worlds};
